// The bf16 and fp16 peaks of a calibrated profile: measured by their own matrix products
// where the backend runs them (CUDA), not copied from the fp32 GEMM grid; the fp32 rate
// stands in, said so, where they were not measured (the CPU).
#include <catch2/catch.hpp>

#include "hdlab/calibration/fit.hpp"
#include "hdlab/calibration/microbench.hpp"
#include "hdlab/calibration/profile.hpp"
#include "hdlab/executor/backends.hpp"
#include "test_skip.hpp"

using namespace hdlab;
using namespace hdlab::calibration;
using model::OpKind;

namespace {

constexpr double kProductFlops = 2.0 * 1024 * 1024 * 1024;

Sample sample(BenchKind bench, std::vector<std::int64_t> shape, double flops, double bytes, double seconds) {
  Sample s;
  s.bench = bench;
  s.op = bench == BenchKind::vector ? OpKind::residual : OpKind::ffn_gate_up;
  s.name = std::string(to_string(bench)) + " sample";
  s.shape = std::move(shape);
  s.x = static_cast<double>(s.shape.empty() ? 1 : s.shape.back());
  s.flops = flops;
  s.bytes = bytes;
  s.seconds = seconds;
  return s;
}

// What a fit needs (a launch, a GEMM, the stream add), plus bf16 and fp16 products of the
// same size at 4 and 5 times the fp32 rate when `low_precision`.
std::vector<Sample> samples(bool low_precision) {
  const double stream = 64.0 * (1 << 20);
  std::vector<Sample> out = {
      sample(BenchKind::launch, {1, 16}, 16, 192, 1e-6),
      sample(BenchKind::gemm, {1024, 1024, 1024}, kProductFlops, 12.0 * (1 << 20), 0.02),
      sample(BenchKind::vector, {16384, 1024}, stream / 12, stream, 0.002),
  };
  if (low_precision) {
    out.push_back(sample(BenchKind::gemm_bf16, {1024, 1024, 1024}, kProductFlops, 6.0 * (1 << 20), 0.005));
    out.push_back(sample(BenchKind::gemm_fp16, {1024, 1024, 1024}, kProductFlops, 6.0 * (1 << 20), 0.004));
  }
  return out;
}

simulator::HardwareProfile profile_of(const std::vector<Sample>& s, const FitResult& fit) {
  CalibrationRun run;
  run.backend = "cuda";
  run.device = "test device";
  run.plan = "test";
  return make_profile("test", fit, s, MachineFacts{}, run);
}

}  // namespace

TEST_CASE("bf16 and fp16 products give the profile's bf16 and fp16 peaks", "[microbench][fit]") {
  const std::vector<Sample> s = samples(true);
  const FitResult fit = fit_samples(s);
  // Rates over the time less one launch, as the fp32 peak.
  CHECK(fit.peak_flop_per_s == Approx(kProductFlops / (0.02 - 1e-6)).epsilon(1e-12));
  CHECK(fit.peak_bf16_flop_per_s == Approx(kProductFlops / (0.005 - 1e-6)).epsilon(1e-12));
  CHECK(fit.peak_fp16_flop_per_s == Approx(kProductFlops / (0.004 - 1e-6)).epsilon(1e-12));
  // They are those peaks, not samples the fp32 roofline is judged on.
  CHECK(fit.residuals.size() == 3);
  const simulator::HardwareProfile h = profile_of(s, fit);
  CHECK(h.peak_fp32_tflop_per_s == Approx(fit.peak_flop_per_s * 1e-12));
  CHECK(h.peak_bf16_tflop_per_s == Approx(fit.peak_bf16_flop_per_s * 1e-12));
  CHECK(h.peak_fp16_tflop_per_s == Approx(fit.peak_fp16_flop_per_s * 1e-12));
  for (const char* field : {"peak_bf16_tflop_per_s", "peak_fp16_tflop_per_s"}) {
    INFO(field);
    CHECK(h.assumptions.count(field) == 0);
    REQUIRE(h.sources.count(field) == 1);
    CHECK_THAT(h.sources.at(field), Catch::Matchers::Contains("matrix-product rate"));
  }
  CHECK(h.measured.at("gemm_bf16_peak_gflop_per_s").get<double>() == Approx(fit.peak_bf16_flop_per_s * 1e-9));
  // The samples keep their kind through the profile's JSON.
  CHECK(sample_from_json(to_json(s[3]), "/samples/3").bench == BenchKind::gemm_bf16);
  CHECK(sample_from_json(to_json(s[4]), "/samples/4").bench == BenchKind::gemm_fp16);
}

TEST_CASE("without bf16 and fp16 products the fp32 peak stands in, as an assumption", "[microbench][fit]") {
  const std::vector<Sample> s = samples(false);
  const FitResult fit = fit_samples(s);
  CHECK(fit.peak_bf16_flop_per_s == 0);
  CHECK(fit.peak_fp16_flop_per_s == 0);
  const simulator::HardwareProfile h = profile_of(s, fit);
  CHECK(h.peak_bf16_tflop_per_s == h.peak_fp32_tflop_per_s);
  CHECK(h.peak_fp16_tflop_per_s == h.peak_fp32_tflop_per_s);
  CHECK_THAT(h.assumptions.at("peak_bf16_tflop_per_s"), Catch::Matchers::Contains("no bf16 product was measured"));
  CHECK(h.sources.count("peak_bf16_tflop_per_s") == 0);
  // The CPU backend has neither precision: its plan measures none.
  auto cpu = executor::make_cpu_backend(executor::CpuOptions{1, "generic"});
  BenchPlan plan;
  plan.matrix_rates = {{64, 64, 64}};
  CHECK(run_matrix_rate_benchmarks(*cpu, plan).empty());
}

TEST_CASE("cuda: bf16 and fp16 matrix rates are measured apart from the fp32 GEMMs", "[cuda][microbench]") {
  const executor::CudaProbe probe = executor::probe_cuda();
  if (probe.devices == 0) hdlab::testing::skip_test("no usable CUDA device (" + probe.reason + ")");
  const auto be = executor::make_cuda_backend(probe.usable.front().ordinal);
  BenchPlan plan;
  plan.name = "test";
  plan.gemm = {{2048, 2048, 2048}};
  plan.matrix_rates = {{2048, 2048, 2048}};
  plan.vector = {{OpKind::residual, 16384, 1024}};
  plan.min_seconds = 0.01;
  plan.min_runs = 5;
  const std::vector<Sample> measured = run_benchmarks(*be, plan);
  int bf16 = 0, fp16 = 0;
  for (const Sample& s : measured) {
    bf16 += s.bench == BenchKind::gemm_bf16;
    fp16 += s.bench == BenchKind::gemm_fp16;
  }
  CHECK(bf16 == 1);
  CHECK(fp16 == 1);
  const FitResult fit = fit_samples(measured);
  const simulator::HardwareProfile h = profile_of(measured, fit);
  INFO("fp32 " << h.peak_fp32_tflop_per_s << ", bf16 " << h.peak_bf16_tflop_per_s << ", fp16 "
               << h.peak_fp16_tflop_per_s << " TFLOP/s");
  CHECK(fit.peak_bf16_flop_per_s > 0);
  CHECK(fit.peak_fp16_flop_per_s > 0);
  CHECK(h.peak_bf16_tflop_per_s == Approx(fit.peak_bf16_flop_per_s * 1e-12));
  CHECK(h.peak_fp16_tflop_per_s == Approx(fit.peak_fp16_flop_per_s * 1e-12));
  // Tensor cores (every sm_80+ device) run bf16 and fp16 products several times faster
  // than fp32 ones of the same size.
  CHECK(h.peak_bf16_tflop_per_s > h.peak_fp32_tflop_per_s);
  CHECK(h.peak_fp16_tflop_per_s > h.peak_fp32_tflop_per_s);
}
