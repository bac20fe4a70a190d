// hdlab validate --published PATH -o OUT/ [--hw-dir DIR] [--max-median-error X]
//                [--max-signed-error X]
// Predicts every case of the published-source files (PATH: one file, or a folder whose
// *.json files are read in name order) with the cost model and compares it with what the
// source measured. Prints each case and, per source and metric, the median, max and
// signed median error and Spearman's rho of the values and of the efficiencies (MFU).
// Writes OUT/published.json (sources, assumptions, cases, statistics), OUT/published.csv
// and OUT/<source>.png (log-log scatter per source; needs a build with Qt).
// Exit 3 when --max-median-error is exceeded by the median |error| over every case, or
// --max-signed-error by the |signed median| of any source's metric.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "hdlab/calibration/published.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/files.hpp"
#include "hdlab/model/json_reader.hpp"
#include "validate_published.hpp"

#ifdef HDLAB_HAVE_CHARTS
#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/export.hpp"
#endif

namespace hdlab::cli {

namespace {

using namespace hdlab::calibration;
namespace fs = std::filesystem;

std::vector<std::string> source_files(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.path().extension() == ".json" && e.is_regular_file(ec)) files.push_back(e.path().string());
  if (ec) throw model::ConfigError("--published", "cannot list " + path + ": " + ec.message());
  if (files.empty()) throw model::ConfigError("--published", path + " holds no *.json published-source files");
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<PublishedSource> read_sources(const std::string& path) {
  std::vector<PublishedSource> sources;
  std::set<std::string> ids;
  for (const std::string& f : source_files(path)) {
    try {
      sources.push_back(parse_published(model::read_json_file(f), f, fs::path(f).parent_path().string()));
    } catch (const model::ConfigError& e) {
      // A pointer alone cannot say which of several files it is in.
      throw model::ConfigError(f + ":" + e.pointer(), e.reason());
    }
    if (!ids.insert(sources.back().id).second)
      throw model::ConfigError(f + ":/source/id", "\"" + sources.back().id + "\" is the id of an earlier file's source");
  }
  return sources;
}

ProfileFor load_profiles(const std::vector<PublishedSource>& sources, const std::string& hw_dir) {
  ProfileFor out;
  for (const PublishedSource& s : sources)
    for (const auto& [device, name] : s.devices) {
      const std::string where = s.file + ":" + model::pointer_join("/devices", device);
      out.emplace(std::pair{s.id, device},
                  hw_dir.empty() ? load_hardware(name, where) : load_hardware(hw_dir + "/" + name + ".json", where));
    }
  return out;
}

// A value with its unit: latencies in ms, iteration times to 10 ms, rates whole.
std::string shown_value(double v, PublishedMetric m) {
  switch (m) {
    case PublishedMetric::first_token_latency_s: return fmt::format("{:.1f} ms", 1e3 * v);
    case PublishedMetric::train_iteration_s: return fmt::format("{:.2f} s", v);
    case PublishedMetric::output_tokens_per_s_per_gpu: return fmt::format("{:.0f} tok/s", v);
    case PublishedMetric::train_tflops_per_gpu: return fmt::format("{:.0f} TFLOP/s", v);
  }
  return fmt::format("{}", v);
}

// An inference batch whose requests hdlab's KV cache cannot hold all at once.
bool kv_unheld(const PublishedResult& x) {
  return x.predicted.kv_fitting_requests > 0 && x.predicted.kv_fitting_requests < x.spec.batch;
}

// What hdlab's memory model says the setup could not hold, or "".
std::string memory_flag(const PublishedResult& x) {
  const PublishedPrediction& p = x.predicted;
  if (kv_unheld(x))
    return fmt::format(" [KV cache holds {} of {}]", p.kv_fitting_requests, x.spec.batch);
  if (p.memory_exceeded())
    return fmt::format(" [needs {:.0f} of {:.0f} GB]", p.train_memory_bytes / 1e9, p.device_memory_bytes / 1e9);
  return "";
}

void print_report(const PublishedReport& r) {
  std::cout << fmt::format("{:<24} {:<34} {:>13} {:>13} {:>8}  {}\n", "source", "case", "published", "predicted", "error",
                           "profile");
  bool unheld = false, exceeded = false;
  for (const PublishedResult& x : r.results) {
    unheld = unheld || kv_unheld(x);
    exceeded = exceeded || x.predicted.memory_exceeded();
    std::cout << fmt::format("{:<24} {:<34} {:>13} {:>13} {:>+7.1f}%  {}{}\n", x.source, x.spec.id,
                             shown_value(x.spec.published, x.spec.metric), shown_value(x.predicted.value, x.spec.metric),
                             100 * x.error(), x.profile, memory_flag(x));
  }
  std::cout << "\nerror = predicted / published - 1 (a rate: + is too fast; a time: + is too slow)\n";
  if (unheld)
    std::cout << "[KV cache holds k of b]: hdlab's memory model holds only k of the batch's b requests at once; the "
                 "batch is costed whole, as the source ran it\n";
  if (exceeded)
    std::cout << "[needs m of c GB]: hdlab's memory model puts the training setup at m GB on its fullest device, more "
                 "than its c GB; the step is costed as stated\n";
  std::cout << fmt::format("{:<24} {:<28} {:>5} {:>8} {:>8} {:>8} {:>9} {:>9}\n", "source", "metric", "cases", "median",
                           "max", "signed", "rho(val)", "rho(MFU)");
  for (const PublishedGroup& g : r.groups)
    std::cout << fmt::format("{:<24} {:<28} {:>5} {:>7.1f}% {:>7.1f}% {:>+7.1f}% {:>9.3f} {:>9.3f}\n", g.source,
                             to_string(g.metric), g.error.count, 100 * g.error.median_abs, 100 * g.error.max_abs,
                             100 * g.error.median_signed, g.spearman_value, g.spearman_mfu);
  // No signed median over every case: a rate's + and a time's + point opposite ways.
  std::cout << fmt::format("{:<24} {:<28} {:>5} {:>7.1f}% {:>7.1f}%\n", "all", "", r.all.count, 100 * r.all.median_abs,
                           100 * r.all.max_abs);
}

void write_outputs(const PublishedReport& r, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw model::ConfigError("-o", "cannot create " + dir + ": " + ec.message());
  model::write_file_atomic(dir + "/published.json", to_json(r).dump(2) + "\n");
  model::write_file_atomic(dir + "/published.csv", to_csv(r));
#ifdef HDLAB_HAVE_CHARTS
  hdlab::charts::OffscreenApplication app;
  std::string pngs;
  for (const PublishedSource& s : r.sources) {
    std::vector<gui_core::ValidationPoint> points;
    for (const PublishedResult& x : r.results)
      if (x.source == s.id)
        points.push_back({fmt::format("{} [{}]", to_string(x.spec.metric), unit_of(x.spec.metric)), x.spec.id,
                          x.predicted.value, x.spec.published});
    // Each series keeps its own unit (the legend names it): the axes are that unit.
    hdlab::charts::ScatterChart chart = hdlab::charts::validation_scatter(points, "published " + s.id);
    chart.x.title = "published (unit of the series)";
    chart.y.title = "predicted (unit of the series)";
    hdlab::charts::write_chart(chart, dir + "/" + s.id + ".png", 1200, 800);
    pngs += ", " + s.id + ".png";
  }
  std::cout << "wrote " << dir << "/{published.json, published.csv" << pngs << "}\n";
#else
  std::cout << "wrote " << dir << "/{published.json, published.csv}; the PNG scatters need a build with Qt (HDLAB_GUI=ON)\n";
#endif
}

}  // namespace

int validate_published(const PublishedCli& o) {
  if (o.output.empty()) throw model::ConfigError("-o", "give the folder to write the report to");
  check_output_folder("-o", o.output);
  std::vector<PublishedSource> sources = read_sources(o.path);
  const ProfileFor profiles = load_profiles(sources, o.hw_dir);
  const PublishedReport r = predict_sources(std::move(sources), profiles);
  print_report(r);
  write_outputs(r, o.output);
  int rc = exit_ok;
  if (o.max_median_error >= 0 && r.all.median_abs > o.max_median_error) {
    std::cerr << fmt::format("hdlab: validate FAILED: median |error| {:.1f}% over {} published cases exceeds "
                             "--max-median-error {:.1f}%\n",
                             100 * r.all.median_abs, r.all.count, 100 * o.max_median_error);
    rc = exit_check_failed;
  }
  for (const PublishedGroup& g : r.groups)
    if (o.max_signed_error >= 0 && std::abs(g.error.median_signed) > o.max_signed_error) {
      std::cerr << fmt::format("hdlab: validate FAILED: {} {}: signed median error {:+.1f}% exceeds --max-signed-error "
                               "{:.1f}%\n",
                               g.source, to_string(g.metric), 100 * g.error.median_signed, 100 * o.max_signed_error);
      rc = exit_check_failed;
    }
  return rc;
}

}  // namespace hdlab::cli
