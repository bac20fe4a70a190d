// Reading speed of the kerneldb tables: every table of the three bundled devices
// (profiles/kerneldb/{h100_sxm,a100_sxm,b200_sxm}, gzip-compressed; about 650,000 rows),
// read with read_kerneldb on one thread, best of a few rounds. The project's target is
// the fit of all three devices under 60 s on 2 cores with reading included; reading's
// own share is held to 5 s here (one core). Prints rows, seconds and rows/s per device.
//
// usage: bench_kerneldb [KERNELDB_DIR] [ROUNDS]   (default profiles/kerneldb of the
// source tree, 3 rounds)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/model/error.hpp"

using namespace hdlab::calibration;

namespace {

std::size_t row_count(const KernelDb& db) {
  return db.gemm.size() + db.context_attention.size() + db.generation_attention.size() + db.collectives.size() +
         db.moe.size();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : std::string(HDLAB_SOURCE_DIR) + "/profiles/kerneldb";
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  const std::vector<std::string> devices = {"h100_sxm", "a100_sxm", "b200_sxm"};
  constexpr double target_s = 5.0;
  std::printf("bench_kerneldb: %s, best of %d rounds, one thread\n", dir.c_str(), rounds);
  std::printf("%-10s %10s %10s %12s\n", "device", "rows", "time [s]", "rows/s");
  double total_s = 0;
  std::size_t total_rows = 0;
  try {
    for (const std::string& device : devices) {
      double best = 1e300;
      std::size_t rows = 0;
      for (int r = 0; r < rounds; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const KernelDb db = read_kerneldb(dir, device);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        rows = row_count(db);
      }
      std::printf("%-10s %10zu %10.3f %12.0f\n", device.c_str(), rows, best, static_cast<double>(rows) / best);
      total_s += best;
      total_rows += rows;
    }
  } catch (const hdlab::model::ConfigError& e) {
    std::fprintf(stderr, "bench_kerneldb: %s\n", e.what());
    return 2;
  }
  std::printf("%-10s %10zu %10.3f %12.0f\n", "all three", total_rows, total_s, static_cast<double>(total_rows) / total_s);
  std::printf("target: all three read in under %.0f s on one thread: %s\n", target_s, total_s < target_s ? "met" : "NOT met");
  return 0;
}
