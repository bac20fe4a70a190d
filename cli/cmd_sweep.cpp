// hdlab sweep SWEEP.json -o DIR: a grid of cost-model runs (format: simulator/sweep.hpp).
// Prints the sweep's table and a summary; writes results.csv, results.json, table.txt
// and summary.json to DIR. A sweep killed and started again with the same DIR resumes
// from its journal. A progress bar goes to stderr when stderr is a terminal.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <vector>

#include <unistd.h>

#include "hdlab/simulator/sweep.hpp"
#include "verbs.hpp"

namespace hdlab::cli {

namespace {

struct SweepCliOptions {
  std::string sweep_path;
  std::string output_dir;
  unsigned threads = 0;
  bool fresh = false;
  bool force = false;
  bool json = false;
  std::string format = "both";
  std::size_t max_rows = 60;
  long test_point_delay_us = 0;
};

// Identifies this build: a hash (FNV-1a 64) of the running executable. A sweep folder
// whose rows another build computed is not resumed (the cost model may have changed).
std::string engine_identity() {
  std::ifstream exe("/proc/self/exe", std::ios::binary);
  std::uint64_t h = 0xcbf29ce484222325ull;
  std::vector<char> buf(1 << 20);
  while (exe) {
    exe.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    for (std::streamsize i = 0; i < exe.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[static_cast<std::size_t>(i)]);
      h *= 0x100000001b3ull;
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("hdlab executable ") + hex;
}

// "[########------------]  40.0%  4000/10000 points  1234 points/s  ETA 5 s"
void draw_progress(const simulator::SweepProgress& p) {
  constexpr int width = 30;
  const double fraction = p.total ? static_cast<double>(p.done) / static_cast<double>(p.total) : 1.0;
  const int filled = static_cast<int>(fraction * width);
  const double rate = p.elapsed_s > 0 ? static_cast<double>(p.done - p.resumed) / p.elapsed_s : 0.0;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(width, '-');
  char eta[32] = "";
  if (rate > 0 && p.done < p.total) std::snprintf(eta, sizeof eta, "  ETA %.0f s", static_cast<double>(p.total - p.done) / rate);
  std::fprintf(stderr, "\r[%s] %5.1f%%  %llu/%llu points  %.0f points/s%s\033[K", bar.c_str(), 100 * fraction,
               static_cast<unsigned long long>(p.done), static_cast<unsigned long long>(p.total), rate, eta);
  std::fflush(stderr);
}

int run_sweep_verb(const SweepCliOptions& o) {
  check_output_folder("-o", o.output_dir);
  const simulator::SweepSpec spec = simulator::load_sweep(o.sweep_path);
  simulator::SweepOptions run;
  run.threads = o.threads;
  run.fresh = o.fresh;
  run.force = o.force;
  run.write_csv = o.format != "json";
  run.write_json = o.format != "csv";
  run.point_delay = std::chrono::microseconds(o.test_point_delay_us);
  run.engine = engine_identity();
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  if (terminal) run.on_progress = draw_progress;
  const simulator::SweepOutcome out = simulator::run_sweep(spec, o.output_dir, run);
  if (terminal) std::fputs("\n", stderr);
  const simulator::SweepSummary& s = out.summary;
  if (o.json) {
    std::cout << simulator::to_json(s).dump(2) << "\n";
  } else {
    if (!spec.description.empty()) std::cout << spec.description << "\n\n";
    std::cout << simulator::format_table(spec, out.results, o.max_rows) << "\n"
              << simulator::describe(s, spec, out.results);
  }
  // A sweep where nothing succeeded is almost always a bad base document: say so.
  if (s.failed > 0 && s.failed == s.points - s.excluded) {
    std::cerr << "hdlab: error: every point of the sweep failed; the first: point " << out.results.errors[0].first
              << " (" << spec.describe_point(out.results.errors[0].first) << "): " << out.results.errors[0].second
              << "\n";
    return exit_bad_input;
  }
  return exit_ok;
}

}  // namespace

Verb add_sweep(CLI::App& app) {
  auto* sub = app.add_subcommand("sweep", "Run a grid of cost-model evaluations from a sweep file (CSV + JSON out, resumable)");
  auto o = std::make_shared<SweepCliOptions>();
  sub->add_option("sweep", o->sweep_path, "Sweep file (JSON): base document, axes, exclusions, columns")
      ->required()
      ->check(non_empty());
  sub->add_option("-o,--output", o->output_dir, "Output folder (created; an interrupted sweep resumes from it)")
      ->required()
      ->check(non_empty());
  sub->add_option("-j,--threads", o->threads, "Worker threads (default: every core)")->check(thread_count());
  sub->add_flag("--fresh", o->fresh, "Discard the folder's earlier sweep (journal and outputs) and start over");
  sub->add_flag("--force", o->force,
                "Write into a non-empty folder that holds no sweep (files of the sweep's names are replaced)");
  auto* json_flag = sub->add_flag("--json", o->json, "Print the summary as JSON instead of the table");
  sub->add_option("--format", o->format, "Result files to write: both, csv or json")
      ->check(CLI::IsMember({"both", "csv", "json"}))
      ->capture_default_str();
  sub->add_option("--max-rows", o->max_rows, "Rows of the printed table (all rows are in results.csv)")
      ->capture_default_str()
      ->check(int_range(0, 1'000'000, "results.csv has every row"))
      ->excludes(json_flag);
  // Tests only (hidden): each point sleeps this long so that a kill lands mid-sweep.
  sub->add_option("--test-point-delay-us", o->test_point_delay_us)->group("")->check(CLI::Range(0L, 10'000'000L));
  return {sub, [o] { return run_sweep_verb(*o); }};
}

}  // namespace hdlab::cli
