// The microbenchmark driver: a plan measured in rounds gives one sample per shape.
#include <catch2/catch.hpp>

#include <set>

#include "hdlab/calibration/microbench.hpp"
#include "hdlab/executor/backends.hpp"

using namespace hdlab;
using namespace hdlab::calibration;

TEST_CASE("a plan measured in two rounds keeps one sample per shape, the faster round's", "[microbench]") {
  executor::CpuOptions co;
  co.threads = 1;
  auto backend = executor::make_cpu_backend(co);
  BenchPlan plan;
  plan.name = "test";
  plan.gemm = {{4, 64, 64}};
  plan.vector = {{model::OpKind::attn_norm, 4, 256}};
  plan.min_seconds = 1e-4;
  plan.min_runs = 3;
  plan.rounds = 2;
  plan.rotate_bytes = std::size_t{1} << 20;
  std::vector<std::pair<std::string, double>> reported;
  int last_total = 0;
  const std::vector<Sample> samples = run_benchmarks(*backend, plan, [&](const Sample& s, int done, int total) {
    CHECK(done == static_cast<int>(reported.size()) + 1);
    reported.push_back({s.name, s.seconds});
    last_total = total;
  });
  // 5 launch shapes, one GEMM, one vector op; each measured in both rounds.
  REQUIRE(samples.size() == 7);
  CHECK(reported.size() == 14);
  CHECK(last_total == 14);
  std::set<std::string> names;
  for (const Sample& s : samples) {
    names.insert(s.name);
    CHECK(s.seconds > 0);
    // The kept sample is the least time any round measured for that shape.
    double least = 1e300;
    for (const auto& [name, seconds] : reported)
      if (name == s.name) least = std::min(least, seconds);
    CHECK(s.seconds == least);
  }
  CHECK(names.size() == samples.size());
  CHECK(samples[5].bench == BenchKind::gemm);
  CHECK(samples[6].bench == BenchKind::vector);
}
