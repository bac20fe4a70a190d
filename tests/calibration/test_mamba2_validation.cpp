// Mamba-2 conv kernels of kerneldb's mamba2_perf predicted by the layer program's costs on
// the roofline (calibration/gdn_validation.hpp): every row predicted, classes by phase, a
// decode row worked out by hand, and a row naming another kernel refused.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "hdlab/calibration/gdn_validation.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/simulator/hardware.hpp"

using namespace hdlab;
using namespace hdlab::calibration;

namespace {

std::string source(const std::string& relative) { return std::string(HDLAB_SOURCE_DIR) + "/" + relative; }

}  // namespace

TEST_CASE("mamba2_perf: every conv row predicted by the layer program's Mamba-2 costs on the roofline",
          "[kerneldb][mamba2]") {
  const KernelDb db = read_kerneldb(source("profiles/kerneldb"), "h100_sxm");
  const simulator::HardwareProfile hw =
      simulator::parse_hardware_profile(model::read_json_file(source("profiles/hardware/h100-sxm.json")));
  const std::vector<KernelCase> cases = predict_mamba2(db, hw);
  REQUIRE(cases.size() == db.mamba2.size());
  int prefill = 0, decode = 0;
  for (const KernelCase& c : cases) {
    CHECK(std::isfinite(c.predicted_s));
    CHECK(c.predicted_s > 0);
    CHECK(c.held_out);
    prefill += c.op_class == "mamba2_conv_prefill";
    decode += c.op_class == "mamba2_conv_decode";
  }
  CHECK(prefill == 592);  // causal_conv1d_fn rows
  CHECK(decode == 66);    // causal_conv1d_update rows
  const KernelValidation v = summarize_kernel_cases(cases);
  CHECK(v.all.rows == 658);
  CHECK(v.classes.size() == 2);

  // One decode step of the conv for batch 1024 of Nemotron-H-56B's layer (256 heads of 64,
  // 8 groups of state 256: 16384 + 4096 = 20480 channels, 4 taps): x, B, C read and written
  // (bf16), the last 3 inputs of each channel read and written, the weights and biases
  // read; those bytes at the profile's memory rate plus one launch.
  const Mamba2Row* big = nullptr;
  for (const Mamba2Row& r : db.mamba2)
    if (r.kernel == "causal_conv1d_update" && r.batch == 1024 && r.heads == 256) big = &r;
  REQUIRE(big != nullptr);
  const double channels = 20480;
  const double bytes = 1024 * channels * 2 * 2 + 2 * 1024 * channels * 3 * 2 + channels * 5 * 2;
  const double memory = bytes / (hw.memory_bandwidth_bytes_per_s() *
                                 hw.scalar_efficiency(simulator::EfficiencyClass::memory));
  const auto it = std::find_if(cases.begin(), cases.end(), [&](const KernelCase& c) {
    return c.source == "mamba2_perf.csv:" + std::to_string(big->line);
  });
  REQUIRE(it != cases.end());
  if (!hw.has_curves()) CHECK(it->predicted_s == Approx(memory + hw.launch_overhead_s()).epsilon(1e-9));

  // A row of a kernel whose work this validation does not know is refused, not guessed.
  KernelDb other = db;
  other.mamba2.front().kernel = "mamba_chunk_scan_combined";
  CHECK_THROWS_AS(predict_mamba2(other, hw), model::ConfigError);
  other.mamba2.clear();
  CHECK_THROWS_AS(predict_mamba2(other, hw), model::ConfigError);
}
