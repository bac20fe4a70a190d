// Sweep speed end to end: a 1,000,000-point sweep (bench/sweep-1m.json: 10 designs of
// Qwen3-8B on H100 x 5 scenario axes of 10 values) loaded, evaluated on 2 threads,
// journaled, and written as results.csv + results.json + table.txt. Target: under 60 s
// on 2 cores. Then the same folder again: a resume that finds every row in the journal.
//
// Wall time depends on what else runs on the machine, so CPU time (user + system, all
// threads) is printed too: on a dedicated machine, wall ~= CPU / threads.
//
// usage: bench_sweep [--threads N] [--sweep FILE] [--dir DIR] [--format both|csv|json] [--keep]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

#include "hdlab/model/error.hpp"
#include "hdlab/simulator/sweep.hpp"

using namespace hdlab;
namespace fs = std::filesystem;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Timed {
  double wall_s = 0;
  double cpu_s = 0;
  simulator::SweepSummary summary;
};

Timed timed_run(const std::string& sweep_path, const std::string& dir, const simulator::SweepOptions& o) {
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  const simulator::SweepSpec spec = simulator::load_sweep(sweep_path);
  Timed t;
  t.summary = simulator::run_sweep(spec, dir, o).summary;
  t.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.cpu_s = cpu_seconds() - cpu0;
  return t;
}

double file_mb(const fs::path& p) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  return ec ? 0.0 : static_cast<double>(size) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  std::string sweep_path = std::string(HDLAB_SOURCE_DIR) + "/bench/sweep-1m.json";
  std::string dir = (fs::temp_directory_path() / ("hdlab_bench_sweep_" + std::to_string(::getpid()))).string();
  simulator::SweepOptions o;
  o.threads = 2;
  o.fresh = true;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--threads" && has_value) o.threads = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--sweep" && has_value) sweep_path = argv[++i];
    else if (a == "--dir" && has_value) dir = argv[++i];
    else if (a == "--format" && has_value) {
      const std::string f = argv[++i];
      o.write_csv = f != "json";
      o.write_json = f != "csv";
    } else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: bench_sweep [--threads N] [--sweep FILE] [--dir DIR] [--format both|csv|json] [--keep]\n");
      return 2;
    }
  }
  try {
    const Timed first = timed_run(sweep_path, dir, o);
    const auto& s = first.summary;
    std::printf("sweep %s: %llu points (%llu evaluated, %llu failed) on %u threads, outputs in %s\n", s.name.c_str(),
                static_cast<unsigned long long>(s.points), static_cast<unsigned long long>(s.evaluated),
                static_cast<unsigned long long>(s.failed), s.threads, dir.c_str());
    std::printf("end to end (load, evaluate, journal, results.csv/json, table): %.2f s wall, %.2f s CPU\n",
                first.wall_s, first.cpu_s);
    std::printf("  %.0f points/s wall; %.1f us CPU per point; target 1,000,000 points < 60 s on 2 cores: %s\n",
                static_cast<double>(s.evaluated) / first.wall_s,
                1e6 * first.cpu_s / static_cast<double>(std::max<std::uint64_t>(1, s.evaluated)),
                first.wall_s < 60 ? "met" : "MISSED (see CPU time if the machine was shared)");
    std::printf("  files: journal.tsv %.0f MB, results.csv %.0f MB, results.json %.0f MB\n",
                file_mb(fs::path(dir) / "journal.tsv"), file_mb(fs::path(dir) / "results.csv"),
                file_mb(fs::path(dir) / "results.json"));

    o.fresh = false;
    const Timed again = timed_run(sweep_path, dir, o);
    std::printf("resume of the finished sweep (%llu rows read back from the journal, %llu evaluated): %.2f s wall, "
                "%.2f s CPU\n",
                static_cast<unsigned long long>(again.summary.resumed),
                static_cast<unsigned long long>(again.summary.evaluated), again.wall_s, again.cpu_s);
    if (!keep) fs::remove_all(dir);
    return 0;
  } catch (const model::ConfigError& e) {
    std::fprintf(stderr, "bench_sweep: %s\n", e.what());
    return 2;
  }
}
