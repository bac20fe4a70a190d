// The fit on synthetic measurements: samples timed by the simulator's roofline on a known
// profile are fitted back, and the fit must recover that profile's rates and curves.
#include <catch2/catch.hpp>

#include "hdlab/calibration/fit.hpp"
#include "hdlab/simulator/roofline.hpp"

using namespace hdlab;
using namespace hdlab::calibration;
using model::OpKind;
using simulator::EfficiencyClass;
using simulator::EfficiencyCurve;

namespace {

// The machine the samples come from: 200 GFLOP/s, 50 GB/s, 0.5 us per call.
simulator::HardwareProfile truth() {
  simulator::HardwareProfile h;
  h.name = "synthetic";
  h.kind = simulator::DeviceKind::cpu;
  h.peak_fp32_tflop_per_s = h.peak_bf16_tflop_per_s = h.peak_fp16_tflop_per_s = 0.2;
  h.memory_bandwidth_gb_per_s = 50;
  h.kernel_launch_overhead_us = 0.5;
  h.efficiency.fill(1.0);
  h.curves[static_cast<int>(EfficiencyClass::gemm)] = {{1, 16, 256, 1024}, {0.2, 0.4, 0.8, 1.0}};
  h.curves[static_cast<int>(EfficiencyClass::attention)] = {{1, 128, 1024}, {0.05, 0.3, 0.5}};
  h.curves[static_cast<int>(EfficiencyClass::memory)] = {{4096, 1e6}, {0.1, 0.3}};
  h.class_memory_curves[static_cast<int>(EfficiencyClass::gemm)] = {{262144, 4.2e6}, {0.5, 0.2}};
  h.class_memory_curves[static_cast<int>(EfficiencyClass::vector)] = {{1}, {1.0}};
  h.class_memory_curves[static_cast<int>(EfficiencyClass::attention)] = {{1}, {1.0}};
  h.op_curves[static_cast<int>(OpKind::attn_norm)] = {{4096, 1e6}, {0.01, 0.02}};
  h.op_curves[static_cast<int>(OpKind::residual)] = {{4096, 1e6}, {0.02, 0.05}};
  return h;
}

Sample timed(Sample s, const simulator::HardwareProfile& h) {
  const simulator::Roofline rl = simulator::make_roofline(h, model::DType::fp32, simulator::Sharding{});
  simulator::OpRow row;
  row.cost.flops = s.flops;
  row.cost.act_bytes_in = s.bytes;
  row.calls = 1;
  OpKind kind = s.op;
  if (s.bench == BenchKind::gemm) {
    kind = OpKind::ffn_gate_up;
    row.rows = static_cast<double>(s.shape[0]);
    row.weight_dim_min = static_cast<double>(std::min(s.shape[1], s.shape[2]));
  } else if (s.bench == BenchKind::attention) {
    kind = OpKind::attention;
    row.rows = s.x;
  } else if (s.bench == BenchKind::memory) {
    kind = OpKind::embedding;
  }
  s.seconds = simulator::op_time(kind, row, rl, nullptr).seconds;
  return s;
}

std::vector<Sample> synthetic(const simulator::HardwareProfile& h) {
  std::vector<Sample> out;
  auto add = [&](BenchKind b, OpKind op, std::vector<std::int64_t> shape, double x, double flops, double bytes) {
    Sample s;
    s.bench = b;
    s.op = op;
    s.name = to_string(b) + std::string(" ") + std::to_string(out.size());
    s.shape = std::move(shape);
    s.x = x;
    s.flops = flops;
    s.bytes = bytes;
    out.push_back(timed(s, h));
  };
  add(BenchKind::launch, OpKind::residual, {1, 16}, 192, 16, 192);
  for (std::int64_t nk : {256, 1024})
    for (std::int64_t m : {1, 16, 256, 1024}) {
      const double n = static_cast<double>(nk), md = static_cast<double>(m);
      add(BenchKind::gemm, OpKind::ffn_gate_up, {m, nk, nk}, static_cast<double>(std::min(m, nk)), 2 * md * n * n,
          4 * (n * n + 2 * md * n));
    }
  for (double rows : {1.0, 128.0, 1024.0}) add(BenchKind::attention, OpKind::attention, {}, rows, 4e6 * rows, 1e5);
  for (double bytes : {4096.0, 1e6}) {
    add(BenchKind::memory, OpKind::embedding, {}, bytes, 0, bytes);
    add(BenchKind::vector, OpKind::attn_norm, {}, bytes, bytes, bytes);  // 1 FLOP per byte: compute bound
    add(BenchKind::vector, OpKind::residual, {}, bytes, bytes / 12, bytes);
  }
  // The stream: an add over 64 MiB, bound by the bandwidth itself.
  add(BenchKind::vector, OpKind::residual, {}, 64.0 * (1 << 20), 64.0 * (1 << 20) / 12, 64.0 * (1 << 20));
  return out;
}

}  // namespace

TEST_CASE("the fit recovers the rates and curves synthetic samples were timed with", "[fit]") {
  const simulator::HardwareProfile h = truth();
  const FitResult f = fit_samples(synthetic(h));
  CHECK(f.peak_flop_per_s == Approx(200e9).epsilon(0.01));   // the best GEMM runs at efficiency 1
  CHECK(f.bandwidth_bytes_per_s == Approx(50e9).epsilon(0.01));
  CHECK(f.launch_s == Approx(0.5e-6).epsilon(0.02));         // the smallest op is almost all launch
  const EfficiencyCurve& gemm = f.curves.at("gemm");
  // From M = 16 the compute efficiency is the truth's. At M = 1 every product is memory
  // bound, so the data only bound it: the curve keeps the best any M = 1 sample implies,
  // which the memory term then covers (the residuals below show it does).
  for (double m : {16.0, 256.0, 1024.0}) CHECK(gemm.at(m) == Approx(h.curves[0].at(m)).epsilon(0.02));
  CHECK(gemm.at(1) > 0);
  CHECK(gemm.at(1) <= h.curves[0].at(1));
  const EfficiencyCurve& gmem = f.curves.at("gemm_memory");
  for (double b : {4.0 * (256 * 256 + 2 * 256), 4.0 * (1024 * 1024 + 2 * 1024)})
    CHECK(gmem.at(b) == Approx(h.class_memory_curves[0].at(b)).epsilon(0.02));
  for (double rows : {1.0, 128.0, 1024.0})
    CHECK(f.curves.at("attention").at(rows) == Approx(h.curves[1].at(rows)).epsilon(0.02));
  for (double b : {4096.0, 1e6}) {
    CHECK(f.curves.at("memory").at(b) == Approx(h.curves[3].at(b)).epsilon(0.02));
    CHECK(f.curves.at("attn_norm").at(b) == Approx(h.op_curves[static_cast<int>(OpKind::attn_norm)].at(b)).epsilon(0.02));
  }
  // Every sample is predicted back (the launch sample: its 0.5 us plus a few ns of work).
  CHECK(f.summary.at("all").max_abs_error < 0.03);
}

TEST_CASE("apply_fit writes curves under the ops one kernel times", "[fit]") {
  const FitResult f = fit_samples(synthetic(truth()));
  simulator::HardwareProfile p;
  p.efficiency.fill(1.0);
  apply_fit(f, p);
  // The executor runs every RMSNorm with one kernel: one fitted curve serves all of them.
  for (OpKind k : {OpKind::attn_norm, OpKind::ffn_norm, OpKind::qk_norm, OpKind::final_norm, OpKind::ghc_norm})
    CHECK(p.op_curves[static_cast<int>(k)] == f.curves.at("attn_norm"));
  CHECK(p.op_curves[static_cast<int>(OpKind::rope)].empty());
  CHECK(p.peak_fp32_tflop_per_s == Approx(0.2).epsilon(0.01));
  CHECK(p.class_memory_curves[static_cast<int>(EfficiencyClass::gemm)] == f.curves.at("gemm_memory"));
}

TEST_CASE("GEMM efficiency is made non-decreasing in M", "[fit]") {
  simulator::HardwareProfile h = truth();
  std::vector<Sample> s = synthetic(h);
  // A busy machine spoils the M = 256 products: 30% slower than the truth.
  for (Sample& x : s)
    if (x.bench == BenchKind::gemm && x.shape[0] == 256) x.seconds *= 1.3;
  const EfficiencyCurve gemm = fit_samples(s).curves.at("gemm");  // a copy: the fit is a temporary
  for (std::size_t i = 1; i < gemm.efficiency.size(); ++i) CHECK(gemm.efficiency[i] >= gemm.efficiency[i - 1]);
}

TEST_CASE("a fit refuses samples that lack what it needs", "[fit]") {
  std::vector<Sample> s = synthetic(truth());
  std::vector<Sample> no_gemm;
  for (const Sample& x : s)
    if (x.bench != BenchKind::gemm) no_gemm.push_back(x);
  CHECK_THROWS_WITH(fit_samples(no_gemm), "calibration samples: no GEMM sample");
  CHECK_THROWS_WITH(fit_samples({}), "calibration samples: no launch sample (smallest ops)");
}
