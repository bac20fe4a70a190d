// How the projections run as products on a fitted GPU profile: q, k and v of the same rows
// as one product; a gated FFN's gate and up as one product of 2F, or as two of F where the
// scenario's ffn.gate_up says an engine launches them apart (TensorRT-LLM's Llama without
// --use_fused_mlp). FLOPs and weights are the same either way; only the kernel time moves.
#include <catch2/catch.hpp>

#include <string>

#include "fixtures.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/kernel_models.hpp"

using namespace hdlab;
using namespace hdlab::simulator;

namespace {

HardwareProfile h100() {
  return parse_hardware_profile(model::read_json_file(fixtures::source_path("profiles/hardware/h100-sxm.json")));
}

Metrics prefill_128(const model::Config& c, const HardwareProfile& hw, const char* gate_up) {
  const Scenario s = parse_scenario(model::Json::parse(std::string(R"({"prefill": {"tokens": 128, "batch": 1},
      "ffn": {"gate_up": ")") + gate_up + R"("}})"));
  return evaluate(c, hw, s);
}

}  // namespace

TEST_CASE("ffn.gate_up separate: two products of F in place of one of 2F, per layer", "[kernel-models][scenario]") {
  const HardwareProfile hw = h100();
  REQUIRE(hw.kernel_models);
  const KernelModels& km = *hw.kernel_models;
  const GemmKernel& g = km.gemm.at(model::DType::fp16);
  // Llama-2 7B in fp16: 32 layers, D 4096, F 11008; a 128-token prompt.
  const model::Config c =
      model::parse_config(model::read_json_file(fixtures::source_path("profiles/models/llama2-7b-fp16.json")));
  const Metrics fused = prefill_128(c, hw, "fused"), separate = prefill_128(c, hw, "separate");
  const double one = grouped_gemm_seconds(g, km.sms, {128, 2 * 11008, 4096}, 1);
  const double two = 2 * grouped_gemm_seconds(g, km.sms, {128, 11008, 4096}, 1);
  REQUIRE(two > one);  // at 128 rows two launches each pay the fixed costs
  CHECK(separate[Metric::prefill_s] - fused[Metric::prefill_s] == Approx(32 * (two - one)).epsilon(1e-9));
  CHECK(separate[Metric::prefill_flops] == fused[Metric::prefill_flops]);
  CHECK(separate[Metric::inference_weight_bytes] == fused[Metric::inference_weight_bytes]);
}

TEST_CASE("ffn.gate_up: parsed, written back, and a bad value named by its pointer", "[scenario]") {
  CHECK(to_json(Scenario{})["ffn"]["gate_up"] == "fused");
  const Scenario s = parse_scenario(model::Json::parse(R"({"ffn": {"gate_up": "separate"}})"));
  CHECK(s.ffn.gate_up == GateUp::separate);
  CHECK(parse_scenario(to_json(s)) == s);
  for (const char* bad : {R"({"ffn": {"gate_up": "split"}})", R"({"ffn": {"gate": "fused"}})"}) {
    INFO(bad);
    try {
      parse_scenario(model::Json::parse(bad));
      FAIL("no ConfigError");
    } catch (const model::ConfigError& e) {
      CHECK(e.pointer().rfind("/scenario/ffn/", 0) == 0);
    }
  }
}
