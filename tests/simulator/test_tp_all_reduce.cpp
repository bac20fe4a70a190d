// The scenario's parallel.tp_all_reduce (evaluate.hpp): on a fitted profile an inference
// pass's tensor-parallel all-reduce is the faster of NCCL's and TensorRT-LLM's one-node
// custom kernel ("auto"), or NCCL's only ("library", an engine built without the custom
// one). Checked by hand against the fitted regimes on Llama-2 70B, tp = 4, a 128-token
// prefill: two all-reduces per layer of 128 rows x 8192 fp16 values (2 MiB each).
#include <catch2/catch.hpp>

#include <string>

#include "fixtures.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/simulator/cost_model.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/kernel_models.hpp"

using namespace hdlab;
using namespace hdlab::simulator;

namespace {

HardwareProfile h100() {
  return parse_hardware_profile(model::read_json_file(fixtures::source_path("profiles/hardware/h100-sxm.json")));
}

PassComm prefill_comm(const HardwareProfile& hw, const std::string& all_reduce) {
  const model::Config c =
      model::parse_config(model::read_json_file(fixtures::source_path("profiles/models/llama2-70b-fp16.json")));
  const Scenario s = parse_scenario(model::Json::parse(R"({"parallel": {"tp": 4, "tp_all_reduce": ")" + all_reduce +
                                                       R"("}, "prefill": {"tokens": 128, "batch": 1}})"));
  CostContext ctx;
  make_context(c, hw, s, ctx);
  PassCost pass;
  InferenceResult r;
  cost_prefill(ctx, pass, r);
  return r.comm;
}

}  // namespace

TEST_CASE("the scenario's parallel.tp_all_reduce: NCCL only, or the faster of NCCL and the custom kernel",
          "[scenario][collectives]") {
  const HardwareProfile hw = h100();
  REQUIRE(hw.kernel_models);
  const KernelModels& km = *hw.kernel_models;
  const double bytes = 128.0 * 8192 * 2, calls = 2 * 80;
  const double nccl = collective_seconds(regimes_for(km.collectives[static_cast<std::size_t>(Collective::all_reduce)], 4),
                                         Collective::all_reduce, bytes, 4);
  const double custom = collective_seconds(regimes_for(km.custom_all_reduce, 4), Collective::all_reduce, bytes, 4);
  // The bundled H100 fit: at 2 MiB the one-shot kernel is the faster, so the switch matters.
  REQUIRE(custom < nccl);
  CHECK(prefill_comm(hw, "library").tp_s == Approx(calls * nccl).epsilon(1e-12));
  CHECK(prefill_comm(hw, "auto").tp_s == Approx(calls * custom).epsilon(1e-12));

  // The JSON form: written when tp > 1, refused (by pointer) where nothing is all-reduced
  // and for an unknown value.
  const Scenario lib = parse_scenario(model::Json::parse(R"({"parallel": {"tp": 2, "tp_all_reduce": "library"}})"));
  CHECK(to_json(lib)["parallel"]["tp_all_reduce"] == "library");
  CHECK(parse_scenario(to_json(lib)) == lib);
  CHECK_FALSE(to_json(Scenario{})["parallel"].contains("tp_all_reduce"));
  for (const char* bad : {R"({"parallel": {"tp_all_reduce": "library"}})",
                          R"({"parallel": {"tp": 2, "tp_all_reduce": "nvls"}})"}) {
    INFO(bad);
    try {
      parse_scenario(model::Json::parse(bad));
      FAIL("no ConfigError");
    } catch (const model::ConfigError& e) {
      CHECK(e.pointer() == "/scenario/parallel/tp_all_reduce");
    }
  }
}
