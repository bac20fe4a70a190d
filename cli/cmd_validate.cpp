// (hdlab validate --published: cmd_validate_published.cpp.)
// hdlab validate VALIDATION.json -o OUT/ [--hw H] [--backend cpu|cuda] [--threads N]
//                [--max-median-error X] [--allow-overlap]
// Runs every case of a validation file (designs x sizes x phases, calibration/validation.hpp)
// on the executor, predicts each with the simulator on a calibrated profile, and reports
// per case predicted vs measured time and memory, the median and max relative errors,
// Spearman's rank correlation over all cases and across the designs of each group, and
// the error per op class. Writes OUT/validation.json (everything), OUT/validation.csv,
// OUT/points.json (the GUI's validation view loads it) and OUT/validation.png (log-log
// scatter, one colour per design; needs a build with Qt).
// Cases must be held out from the profile's calibration (no GEMM or attention shape the
// calibration measured); one that is not is refused (exit 2) unless --allow-overlap.
// Exit 3 when --max-median-error is given and the median |time error| exceeds it.
//
// hdlab validate --kerneldb DIR --hw PROFILE [--device NAME] -o OUT/ [--worst N]
//                [--max-median-error X]
// Kernel-level validation instead: the profile's kernel models predict every row of the
// measured GPU kernel tables DIR/NAME/*.csv[.gz] (calibration/kerneldb.hpp), and the rows
// held out of the fit are compared per op class and precision. Writes OUT/kernels.json
// (the statistics and worst rows), OUT/kernels.csv (every row) and OUT/<class>.png (one
// log-log scatter of the held-out rows per op class; needs a build with Qt). A bad table
// is exit 2 naming its file, line and column; exit 3 when the median |error| over all
// held-out rows exceeds --max-median-error.
// With --gdn, the gdn_perf table alone instead: each Gated DeltaNet kernel row predicted
// from the layer program's costs on the profile's roofline (calibration/gdn_validation.hpp),
// every row compared (nothing is fitted to them); the same outputs. With --mamba2, the
// mamba2_perf table's causal conv1d rows likewise (model::mamba2_conv_cost).
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "hdlab/calibration/gdn_validation.hpp"
#include "hdlab/calibration/kernel_validation.hpp"
#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/calibration/validation.hpp"
#include "hdlab/executor/backends.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/files.hpp"
#include "validate_published.hpp"
#include "verbs.hpp"

#ifdef HDLAB_HAVE_CHARTS
#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/export.hpp"
#endif

namespace hdlab::cli {

namespace {

using namespace hdlab::calibration;
namespace fs = std::filesystem;

struct ValidateCli {
  std::string file, output, hardware, backend;
  int threads = -1;
  double max_median_error = -1;
  bool allow_overlap = false;
  // --kerneldb: kernel-level validation against measured GPU kernel tables.
  std::string kerneldb, device;
  int worst = 10;
  bool gdn = false;     // --gdn: the gdn_perf table only
  bool mamba2 = false;  // --mamba2: the mamba2_perf table only
  // --published: published measurements of real systems (validate_published.hpp).
  std::string published, hw_dir;
  double max_signed_error = -1;
};

double load_average() {
  std::ifstream in("/proc/loadavg");
  double v = 0;
  in >> v;
  return v;
}

// --hw, else the file's "hardware": a path relative to the file, or a bundled name.
simulator::HardwareProfile resolve_hardware(const ValidateCli& o, const ValidationSpec& spec) {
  if (!o.hardware.empty()) return load_hardware(o.hardware);
  if (spec.hardware.empty()) throw model::ConfigError("/hardware", "no profile to predict with: give --hw or \"hardware\"");
  const fs::path relative = fs::path(o.file).parent_path() / spec.hardware;
  std::error_code ec;
  return load_hardware(fs::is_regular_file(relative, ec) ? relative.string() : spec.hardware, o.file + ":/hardware");
}

std::unique_ptr<executor::Backend> open_backend(const std::string& name, int threads) {
  if (name == "cpu") return executor::make_cpu_backend(executor::CpuOptions{threads, "auto"});
  const executor::CudaProbe probe = executor::probe_cuda();
  if (probe.devices == 0) throw model::ConfigError("--backend", "cuda: no CUDA device (" + probe.reason + ")");
  try {
    return executor::make_cuda_backend(0);
  } catch (const executor::BackendError& e) {
    throw model::ConfigError("--backend", std::string("cuda: no usable CUDA device (") + e.what() + ")");
  }
}

// Refuses (or with --allow-overlap, lists) cases that share a shape with the calibration.
std::vector<std::vector<std::string>> check_held_out(const ValidateCli& o, const ValidationSpec& spec,
                                                     const simulator::HardwareProfile& hw) {
  const std::vector<Sample> samples = calibration_samples(hw);
  if (samples.empty())
    std::cerr << "hdlab: warning: " << hw.name << " records no calibration samples: held-out cases not checked\n";
  std::vector<std::vector<std::string>> out;
  for (const ValidationCase& c : spec.cases) {
    out.push_back(overlaps(c, samples));
    if (out.back().empty()) continue;
    if (!o.allow_overlap)
      throw model::ConfigError(c.pointer, "case \"" + c.label + "\" is not held out: " + out.back().front() +
                                              " (validation needs sizes the calibration did not measure; "
                                              "--allow-overlap runs it anyway)");
    std::cerr << "hdlab: warning: " << c.label << " is not held out: " << out.back().front() << "\n";
  }
  return out;
}

void print_case(const CaseResult& r, std::size_t i, std::size_t n) {
  std::cout << fmt::format("[{:>2}/{}] {:<44} {:>10.3f} {:>10.3f} {:>+7.1f}% {:>9.2f} {:>+6.2f}%\n", i, n, r.spec.label,
                           r.measured.seconds * 1e3, r.predicted.seconds * 1e3, 100 * r.time_error(),
                           r.measured.peak_bytes / (1 << 20), 100 * r.memory_error());
}

void print_summary(const ValidationReport& r) {
  std::cout << fmt::format("\ntime:   median |error| {:.1f}%, max {:.1f}% (median signed {:+.1f}%) over {} cases\n",
                           100 * r.time.median_abs, 100 * r.time.max_abs, 100 * r.time.median_signed, r.time.count);
  std::cout << fmt::format("rank:   Spearman {:.3f} over all cases; across designs: mean {:.3f}, min {:.3f} over {} groups\n",
                           r.spearman_all, r.spearman_designs_mean, r.spearman_designs_min, r.groups.size());
  std::cout << fmt::format("memory: median |error| {:.2f}%, max {:.2f}% (predicted vs measured peak)\n",
                           100 * r.memory.median_abs, 100 * r.memory.max_abs);
  std::cout << "by op class (cases where the class is >= 2% of the time; share = mean share of the measured time):\n";
  for (const auto& [k, share] : r.measured_share) {
    const auto it = r.by_op_class.find(k);
    if (it == r.by_op_class.end()) std::cout << fmt::format("  {:<10} share {:>5.1f}%\n", k, 100 * share);
    else
      std::cout << fmt::format("  {:<10} share {:>5.1f}%   median |error| {:>5.1f}%  max {:>6.1f}%  median signed {:>+6.1f}%\n",
                               k, 100 * share, 100 * it->second.median_abs, 100 * it->second.max_abs,
                               100 * it->second.median_signed);
  }
  std::cout << "by design:\n";
  for (const auto& [k, s] : r.by_design)
    std::cout << fmt::format("  {:<20} median |error| {:>5.1f}%  max {:>5.1f}%\n", k, 100 * s.median_abs, 100 * s.max_abs);
}

void write_outputs(const ValidationReport& r, nlohmann::json meta, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw model::ConfigError("-o", "cannot create " + dir + ": " + ec.message());
  nlohmann::json report = to_json(r);
  report["run"] = std::move(meta);
  model::write_file_atomic(dir + "/validation.json", report.dump(2) + "\n");
  model::write_file_atomic(dir + "/validation.csv", to_csv(r));
  model::write_file_atomic(dir + "/points.json", points_json(r).dump(2) + "\n");
#ifdef HDLAB_HAVE_CHARTS
  std::vector<gui_core::ValidationPoint> points;
  for (const CaseResult& c : r.cases) points.push_back({c.spec.design, c.spec.label, c.predicted.seconds, c.measured.seconds});
  hdlab::charts::OffscreenApplication app;
  hdlab::charts::write_chart(hdlab::charts::validation_scatter(points, "hdlab validate: predicted vs measured time"),
                             dir + "/validation.png", 1200, 800);
  std::cout << "wrote " << dir << "/{validation.json, validation.csv, points.json, validation.png}\n";
#else
  std::cout << "wrote " << dir << "/{validation.json, validation.csv, points.json}; the PNG scatter needs a build "
               "with Qt (HDLAB_GUI=ON)\n";
#endif
}

// Every case predicted, and measured spec.rounds times, keeping its fastest round; the
// table's rows print as the last round measures them (earlier rounds show progress on a
// terminal).
std::vector<CaseResult> run_cases(executor::Backend& backend, const ValidationSpec& spec,
                                  const simulator::HardwareProfile& hw,
                                  const std::vector<std::vector<std::string>>& held_out) {
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  std::vector<CaseResult> results(spec.cases.size());
  for (std::size_t i = 0; i < spec.cases.size(); ++i) {
    results[i].spec = spec.cases[i];
    results[i].overlaps = held_out[i];
    results[i].predicted = predict_case(results[i].spec, hw, spec);
  }
  for (int round = 1; round <= spec.rounds; ++round) {
    const bool last = round == spec.rounds;
    if (spec.rounds > 1)
      std::cout << fmt::format("round {} of {}{}\n", round, spec.rounds, last ? " (each case keeps its fastest round)" : "");
    if (last)
      std::cout << fmt::format("{:<52} {:>10} {:>10} {:>8} {:>9} {:>7}\n", "case", "meas [ms]", "pred [ms]", "time",
                               "peak[MiB]", "memory");
    for (std::size_t i = 0; i < spec.cases.size(); ++i) {
      CaseResult& r = results[i];
      const CaseMeasurement m = measure_case(backend, r.spec, spec);
      if (round == 1 || m.seconds < r.measured.seconds) r.measured = m;
      if (last) print_case(r, i + 1, spec.cases.size());
      else if (terminal) std::cerr << fmt::format("\r[{:>2}/{}] {:<60.60}", i + 1, spec.cases.size(), r.spec.label) << std::flush;
    }
    if (!last && terminal) std::cerr << "\n";
  }
  return results;
}

int validate(const ValidateCli& o) {
  if (o.output.empty()) throw model::ConfigError("-o", "give the folder to write the report to");
  check_output_folder("-o", o.output);  // before the cases run, not after
  ValidationSpec spec = parse_validation(model::read_json_file(o.file), fs::path(o.file).parent_path().string());
  if (!o.backend.empty()) spec.backend = o.backend;
  if (o.threads >= 0) spec.threads = o.threads;
  else if (spec.threads > max_threads())
    throw model::ConfigError(o.file + ":/threads", "must be at most " + std::to_string(max_threads()) +
                                                      " (4 per core), got " + std::to_string(spec.threads));
  const simulator::HardwareProfile hw = resolve_hardware(o, spec);
  const auto held_out = check_held_out(o, spec, hw);
  auto backend = open_backend(spec.backend, spec.threads);
  const int calibrated_threads = hw.calibration.is_object() ? hw.calibration.value("run", nlohmann::json::object()).value("threads", 0) : 0;
  const int threads = spec.backend == "cpu" ? (spec.threads > 0 ? spec.threads : static_cast<int>(std::thread::hardware_concurrency())) : 0;
  if (spec.backend == "cpu" && calibrated_threads > 0 && calibrated_threads != threads)
    std::cerr << fmt::format("hdlab: warning: {} was calibrated with {} threads, this run uses {}\n", hw.name,
                             calibrated_threads, threads);
  std::cout << fmt::format("hdlab validate: {} cases on {} ({}), predicted with {}\n", spec.cases.size(), backend->name(),
                           backend->description(), hw.name);
  const double load_start = load_average();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<CaseResult> results = run_cases(*backend, spec, hw, held_out);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ValidationReport report = summarize(std::move(results));
  print_summary(report);
  const nlohmann::json meta = {{"validation_file", o.file},       {"description", spec.description},
                               {"hardware", hw.name},             {"backend", backend->name()},
                               {"device", backend->description()}, {"threads", threads},
                               {"warmup", spec.warmup},           {"repeats", spec.repeats},
                               {"rounds", spec.rounds},
                               {"elapsed_s", elapsed},
                               {"load_average_1min", {{"start", load_start}, {"end", load_average()}}}};
  std::cout << fmt::format("{:.0f} s, load average {:.2f} -> {:.2f}\n", elapsed, load_start, load_average());
  write_outputs(report, meta, o.output);
  if (o.max_median_error >= 0 && report.time.median_abs > o.max_median_error) {
    std::cerr << fmt::format("hdlab: validate FAILED: median |time error| {:.1f}% exceeds --max-median-error {:.1f}%\n",
                             100 * report.time.median_abs, 100 * o.max_median_error);
    return exit_check_failed;
  }
  return exit_ok;
}


// ---- validate --kerneldb: kernel-level validation against measured GPU kernels ----

void print_kernel_table(const KernelValidation& v) {
  std::cout << fmt::format("held-out rows per op class and precision (|error| = |predicted / measured - 1|):\n"
                           "{:<36} {:<14} {:>6} {:>8} {:>8} {:>9} {:>8}\n",
                           "class", "precision", "rows", "median", "p90", "max", "signed");
  auto row = [](const KernelClassStats& s) {
    std::cout << fmt::format("{:<36} {:<14} {:>6} {:>7.1f}% {:>7.1f}% {:>8.1f}% {:>+7.1f}%\n", s.op_class, s.precision,
                             s.rows, 100 * s.median_abs_error, 100 * s.p90_abs_error, 100 * s.max_abs_error,
                             100 * s.median_signed_error);
  };
  for (const KernelClassStats& s : v.classes) row(s);
  row(v.all);
}

#ifdef HDLAB_HAVE_CHARTS
// A class's file name: "all_reduce (custom)" -> "all_reduce_custom" (no spaces or
// brackets for a shell to trip over). Only the PNG scatters are named by it.
std::string file_stem(const std::string& op_class) {
  std::string out;
  for (char c : op_class) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    if (keep) out += c;
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}
#endif

// OUT/kernels.json, OUT/kernels.csv and a scatter of the held-out rows per op class
// (one colour per precision), OUT/<file_stem(class)>.png.
void write_kernel_outputs(const KernelValidation& v, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw model::ConfigError("-o", "cannot create " + dir + ": " + ec.message());
  model::write_file_atomic(dir + "/kernels.json", to_json(v).dump(2) + "\n");
  model::write_file_atomic(dir + "/kernels.csv", kernel_cases_csv(v));
  std::vector<std::string> classes;
  for (const KernelClassStats& s : v.classes)
    if (classes.empty() || classes.back() != s.op_class) classes.push_back(s.op_class);
#ifdef HDLAB_HAVE_CHARTS
  hdlab::charts::OffscreenApplication app;
  for (const std::string& op_class : classes) {
    std::vector<gui_core::ValidationPoint> points;
    for (const KernelCase& c : v.cases)
      if (c.held_out && c.op_class == op_class) points.push_back({c.precision, c.label, c.predicted_s, c.measured_s});
    hdlab::charts::write_chart(hdlab::charts::validation_scatter(points, "hdlab validate --kerneldb: " + v.device + " " +
                                                                             op_class + ", held-out rows, " + v.profile),
                               dir + "/" + file_stem(op_class) + ".png", 1200, 800);
  }
  std::string pngs;
  for (const std::string& c : classes) pngs += (pngs.empty() ? "" : ", ") + file_stem(c) + ".png";
  std::cout << "wrote " << dir << "/{kernels.json, kernels.csv, " << pngs << "}\n";
#else
  std::cout << "wrote " << dir << "/{kernels.json, kernels.csv}; the PNG scatters per op class need a build with Qt "
               "(HDLAB_GUI=ON)\n";
#endif
}

// Without --device: the kerneldb folder the profile's kernel models were fitted on
// (kernel_models.fit.data.device, which hdlab calibrate --from-kerneldb records), when
// `kerneldb` holds it. A derived profile was fitted on no device of its own: --device
// names the one it is held against.
std::string fitted_device(const simulator::HardwareProfile& hw, const std::string& kerneldb) {
  const std::string hint = " (h100_sxm, a100_sxm, b200_sxm for the bundled profiles/kerneldb)";
  const nlohmann::json* data = nullptr;
  if (hw.kernel_models && hw.kernel_models->fit.contains("data")) data = &hw.kernel_models->fit.at("data");
  if (!data || !data->contains("device") || !data->at("device").is_string())
    throw model::ConfigError("--device", "give the device folder of " + kerneldb + " to validate against" + hint + ": " +
                                             hw.name + " was not fitted on one (" +
                                             (hw.kernel_models ? "its kernel models are derived" : "no kernel models") +
                                             ")");
  const std::string device = data->at("device").get<std::string>();
  if (!fs::is_directory(fs::path(kerneldb) / device))
    throw model::ConfigError("--device", hw.name + " was fitted on kerneldb device \"" + device + "\", which " +
                                             kerneldb + " does not hold: give the device folder to validate against" +
                                             hint);
  std::cout << "no --device: validating against " << device << ", the kerneldb device " << hw.name
            << " was fitted on\n";
  return device;
}

int validate_kerneldb(const ValidateCli& o) {
  if (o.output.empty()) throw model::ConfigError("-o", "give the folder to write the report to");
  if (o.hardware.empty()) throw model::ConfigError("--hw", "give the profile whose kernel models predict the kerneldb rows");
  const simulator::HardwareProfile hw = load_hardware(o.hardware);
  const std::string device = o.device.empty() ? fitted_device(hw, o.kerneldb) : o.device;
  const auto t0 = std::chrono::steady_clock::now();
  const KernelDb db = read_kerneldb(o.kerneldb, device);
  const double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << fmt::format("hdlab validate --kerneldb: {} ({}): {} gemm, {} prefill and {} decode attention, {} collective, "
                           "{} moe rows read in {:.1f} s; predicted with {}\n",
                           db.device, db.device_name, db.gemm.size(), db.context_attention.size(),
                           db.generation_attention.size(), db.collectives.size(), db.moe.size(), read_s, hw.name);
  KernelValidation v = summarize_kernel_cases(o.gdn      ? predict_gdn(db, hw)
                                              : o.mamba2 ? predict_mamba2(db, hw)
                                                         : predict_kerneldb(db, hw),
                                              o.worst);
  v.device = db.device;
  v.profile = hw.name;
  print_kernel_table(v);
  write_kernel_outputs(v, o.output);
  if (o.max_median_error >= 0 && v.all.median_abs_error > o.max_median_error) {
    std::cerr << fmt::format("hdlab: validate FAILED: median |kernel time error| {:.1f}% over {} held-out rows exceeds "
                             "--max-median-error {:.1f}%\n",
                             100 * v.all.median_abs_error, v.all.rows, 100 * o.max_median_error);
    return exit_check_failed;
  }
  return exit_ok;
}

}  // namespace

// A share of error: 0.5 is 50%.
const CLI::Validator share_limit(
    [](std::string& text) -> std::string {
      double v = 0;
      if (CLI::detail::lexical_cast(text, v) && v >= 0) return "";
      return "must be a share >= 0 (0.5: 50%), got " + shown(text);
    },
    "SHARE");

Verb add_validate(CLI::App& app) {
  auto* sub = app.add_subcommand("validate", "Run held-out designs on the executor and compare with the simulator's predictions");
  auto o = std::make_shared<ValidateCli>();
  auto* file = sub->add_option("file", o->file, "validation file (JSON), e.g. profiles/validation/cpu.json")
                   ->check(non_empty());
  sub->add_option("-o,--output", o->output, "folder for validation.json, validation.csv, points.json, validation.png "
                  "(with --kerneldb: kernels.json, kernels.csv, CLASS.png; with --published: published.json, published.csv, SOURCE.png)")
      ->check(non_empty());
  auto* hw = sub->add_option("--hw", o->hardware, "profile to predict with (default: the file's \"hardware\")")->check(non_empty());
  auto* backend = sub->add_option("--backend", o->backend, "cpu | cuda (default: the file's \"backend\")")
                      ->check(CLI::IsMember({"cpu", "cuda"}));
  auto* threads = sub->add_option("--threads", o->threads, "cpu threads, 0 = all (default: the file's \"threads\")")
                      ->check(thread_count());
  sub->add_option("--max-median-error", o->max_median_error,
                  "exit 3 when the median |relative time error| exceeds this (e.g. 0.5)")
      ->check(share_limit);
  auto* overlap = sub->add_flag("--allow-overlap", o->allow_overlap, "run cases that share a shape with the calibration (warns)");
  auto* kernels = sub->add_option_group("kerneldb", "Kernel-level validation against measured GPU kernels (instead of a file)");
  auto* kerneldb = kernels->add_option("--kerneldb", o->kerneldb, "folder of kerneldb device folders, e.g. profiles/kerneldb")
      ->check(CLI::ExistingDirectory)
      ->excludes(file)
      ->excludes(overlap)
      ->excludes(backend)
      ->excludes(threads);
  kernels->add_option("--device", o->device, "kerneldb device folder, e.g. h100_sxm (default: the one --hw was fitted on)")->needs("--kerneldb");
  auto* gdn = kernels->add_flag("--gdn", o->gdn, "validate the Gated DeltaNet kernels (gdn_perf) against the layer "
                                "program's costs on the roofline, instead of the kernel models")
      ->needs("--kerneldb");
  kernels->add_flag("--mamba2", o->mamba2, "validate the Mamba-2 conv kernels (mamba2_perf) against the layer "
                    "program's costs on the roofline, instead of the kernel models")
      ->needs("--kerneldb")
      ->excludes(gdn);
  kernels->add_option("--worst", o->worst, "worst rows kept per op class and precision in kernels.json")
      ->check(CLI::Range(0, 1000))
      ->needs("--kerneldb");
  auto* published = sub->add_option_group("published", "Published measurements of real GPU systems (instead of a file)");
  published->add_option("--published", o->published, "a published-source file or a folder of them, e.g. profiles/validation/published")
      ->check(CLI::ExistingPath)
      ->excludes(file)
      ->excludes(overlap)
      ->excludes(backend)
      ->excludes(threads)
      ->excludes(kerneldb)
      ->excludes(hw);
  published->add_option("--hw-dir", o->hw_dir, "look the files' device profiles up in this folder (NAME.json) instead "
                        "of the bundled ones, e.g. profiles/hardware/datasheet")
      ->check(CLI::ExistingDirectory)
      ->needs("--published");
  published->add_option("--max-signed-error", o->max_signed_error,
                        "exit 3 when a source's |signed median error| of a metric exceeds this (e.g. 0.1)")
      ->check(share_limit)
      ->needs("--published");
  return {sub, [o] {
            try {
              if (!o->published.empty())
                return validate_published({o->published, o->output, o->hw_dir, o->max_median_error, o->max_signed_error});
              if (!o->kerneldb.empty()) return validate_kerneldb(*o);
              if (o->file.empty()) throw model::ConfigError("file", "give a validation file, --kerneldb DIR or --published PATH");
              return validate(*o);
            } catch (const executor::OutOfMemoryError& e) {
              std::cerr << "hdlab: error: a case was refused before allocating: " << e.what() << "\n";
              return exit_bad_input;
            }
          }};
}

}  // namespace hdlab::cli
