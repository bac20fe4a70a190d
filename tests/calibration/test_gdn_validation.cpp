// Gated DeltaNet kernels of kerneldb's gdn_perf predicted by the layer program's costs on
// the roofline (calibration/gdn_validation.hpp): every row predicted, classes by kernel and
// phase, and a decode row worked out by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "hdlab/calibration/gdn_validation.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/hardware.hpp"

using namespace hdlab;
using namespace hdlab::calibration;

namespace {

std::string source(const std::string& relative) { return std::string(HDLAB_SOURCE_DIR) + "/" + relative; }

}  // namespace

TEST_CASE("gdn_perf: every row predicted by the layer program's GDN costs on the roofline", "[kerneldb][gdn]") {
  const KernelDb db = read_kerneldb(source("profiles/kerneldb"), "h100_sxm");
  const simulator::HardwareProfile hw =
      simulator::parse_hardware_profile(model::read_json_file(source("profiles/hardware/h100-sxm.json")));
  const std::vector<KernelCase> cases = predict_gdn(db, hw);
  REQUIRE(cases.size() == db.gdn.size());
  int conv_decode = 0, rule_prefill = 0;
  for (const KernelCase& c : cases) {
    CHECK(std::isfinite(c.predicted_s));
    CHECK(c.predicted_s > 0);
    CHECK(c.held_out);
    conv_decode += c.op_class == "gdn_conv_decode";
    rule_prefill += c.op_class == "gdn_rule_prefill";
  }
  CHECK(conv_decode == 88);   // causal_conv1d_update rows
  CHECK(rule_prefill == 806);  // chunk_gated_delta_rule rows
  const KernelValidation v = summarize_kernel_cases(cases);
  CHECK(v.all.rows == 1796);
  CHECK(v.classes.size() == 4);

  // A decode step of the recurrence for batch 1024, 32 value heads of 128 x 128: the fp32
  // state read and written (2 x 1024 x 32 x 128 x 128 x 4 B) dominates; its roofline is
  // those bytes at the profile's memory rate plus one launch.
  const GdnRow* big = nullptr;
  for (const GdnRow& r : db.gdn)
    if (r.kernel == "fused_recurrent_gated_delta_rule" && r.batch == 1024 && r.v_heads == 32) big = &r;
  REQUIRE(big != nullptr);
  const double state = 2 * 1024.0 * 32 * 128 * 128 * 4;
  const double io = 1024.0 * (2 * 16 * 128 + 32 * 128 + 2 * 32 + 32 * 128) * 2;
  const double expected = (state + io) / (hw.memory_bandwidth_bytes_per_s() * hw.scalar_efficiency(
                                                                                 simulator::EfficiencyClass::memory)) +
                          hw.launch_overhead_s();
  const auto it = std::find_if(cases.begin(), cases.end(), [&](const KernelCase& c) {
    return c.source == "gdn_perf.csv:" + std::to_string(big->line);
  });
  REQUIRE(it != cases.end());
  if (!hw.has_curves()) CHECK(it->predicted_s == Approx(expected).epsilon(1e-9));
}
