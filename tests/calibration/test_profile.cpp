// A calibrated profile: parses back exactly, records the machine and the run, and the
// bundled calibrated profile is a valid, calibrated profile.
#include <catch2/catch.hpp>

#include "hdlab/calibration/profile.hpp"
#include "hdlab/calibration/validation.hpp"
#include "hdlab/model/config_io.hpp"

using namespace hdlab;
using namespace hdlab::calibration;

namespace {

std::vector<Sample> samples() {
  // A minimal measured set: the smallest op, a few GEMMs, a stream add, a gather.
  std::vector<Sample> s;
  auto add = [&](BenchKind b, model::OpKind op, std::vector<std::int64_t> shape, double x, double flops, double bytes,
                 double seconds) {
    Sample v;
    v.bench = b;
    v.op = op;
    v.name = "sample " + std::to_string(s.size());
    v.shape = std::move(shape);
    v.x = x;
    v.flops = flops;
    v.bytes = bytes;
    v.seconds = seconds;
    v.runs = 9;
    s.push_back(v);
  };
  add(BenchKind::launch, model::OpKind::residual, {1, 16}, 192, 16, 192, 1e-7);
  add(BenchKind::gemm, model::OpKind::ffn_gate_up, {1, 512, 512}, 1, 524288, 1.05e6, 5e-5);
  add(BenchKind::gemm, model::OpKind::ffn_gate_up, {512, 512, 512}, 512, 2.7e8, 3.1e6, 1e-3);
  add(BenchKind::vector, model::OpKind::residual, {16384, 1024}, 2e8, 1.7e7, 2e8, 4e-3);
  add(BenchKind::memory, model::OpKind::embedding, {16, 512}, 65600, 0, 65600, 3e-6);
  return s;
}

}  // namespace

TEST_CASE("a calibrated profile round-trips through parse_hardware_profile", "[profile]") {
  MachineFacts m;
  parse_cpuinfo("processor\t: 0\nmodel name\t: Test CPU @ 2.0GHz\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f\n\n"
                "processor\t: 1\nmodel name\t: Test CPU @ 2.0GHz\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f\n",
                m);
  CHECK(m.cpu_model == "Test CPU @ 2.0GHz");
  CHECK(m.cpu_cores == 2);
  CHECK(m.cpu_flags == "sse4_2 avx avx2 fma avx512f");
  m.memory_bytes = 8e9;
  m.l2_cache_bytes = parse_cache_size("2048K\n");
  CHECK(m.l2_cache_bytes == 2048.0 * 1024);
  CHECK(parse_cache_size("32M") == 32.0 * 1024 * 1024);
  CHECK(parse_cache_size("") == 0);
  CalibrationRun run;
  run.backend = "cpu";
  run.device = "cpu: 2 threads";
  run.threads = 2;
  run.plan = "quick";
  run.measured_utc = run.fitted_utc = "2025-01-01T00:00:00Z";
  const std::vector<Sample> s = samples();
  const FitResult fit = fit_samples(s);
  const simulator::HardwareProfile h = make_profile("test cpu", fit, s, m, run);
  CHECK(h.kind == simulator::DeviceKind::cpu);
  CHECK(h.memory_gb == 8);
  CHECK(h.l2_cache_mb == Approx(2.097152));
  CHECK_FALSE(h.nvlink_bandwidth_gb_per_s.has_value());
  CHECK(h.peak_fp32_tflop_per_s == Approx(2.7e8 / (1e-3 - 1e-7) * 1e-12));
  const nlohmann::json j = simulator::to_json(h);
  CHECK(simulator::parse_hardware_profile(j) == h);
  CHECK(simulator::parse_hardware_profile(nlohmann::json::parse(j.dump())) == simulator::parse_hardware_profile(j));
  CHECK(j["calibration"]["machine"]["cpu_model"] == "Test CPU @ 2.0GHz");
  CHECK(j["calibration"]["run"]["measured_utc"] == "2025-01-01T00:00:00Z");
  CHECK(j["calibration"]["residuals"]["summary"]["all"]["samples"] == 5);
  // The samples come back out of the profile as they went in.
  const std::vector<Sample> back = calibration_samples(h);
  REQUIRE(back.size() == s.size());
  CHECK(back[2].shape == s[2].shape);
  CHECK(back[2].seconds == s[2].seconds);
}

TEST_CASE("the bundled calibrated CPU profile is valid and calibrated", "[profile][profiles]") {
  const auto h = simulator::parse_hardware_profile(
      model::read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/hardware/cpu-xeon-2c.json"));
  CHECK(h.kind == simulator::DeviceKind::cpu);
  CHECK(h.has_curves());
  CHECK_FALSE(calibration_samples(h).empty());
  CHECK(h.calibration["machine"]["cpu_cores"].get<int>() >= 1);
  CHECK_FALSE(h.calibration["run"]["measured_utc"].get<std::string>().empty());
  // Its fit explains its own samples (a refit on them gives the same curves).
  const FitResult refit = fit_samples(calibration_samples(h));
  CHECK(refit.peak_flop_per_s == Approx(h.peak_fp32_tflop_per_s * 1e12).epsilon(1e-9));
}
