// The MoE layer's own costs (kernel_models.hpp's MoeLayerKernel): by hand, inside the
// MoE composition (moe_seconds) and inside the cost model's routed-experts op
// (kernel_op_time), sharded as the cost model shards the layer's tokens; the JSON form;
// "more tokens never take less time" on the bundled fitted H100; and the cost model's MoE
// op against the composition kerneldb's MoE rows validate (moe_seconds).
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "fixtures.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/simulator/kernel_models.hpp"
#include "hdlab/simulator/op_table.hpp"
#include "hdlab/simulator/roofline.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using model::DType;

namespace {

HardwareProfile h100() {
  return parse_hardware_profile(model::read_json_file(fixtures::source_path("profiles/hardware/h100-sxm.json")));
}

// Qwen3-30B-A3B's routed experts: D 2048, 128 experts of 768, top-8.
MoeShape qwen3_moe(double layer_tokens, double ep = 1) {
  MoeShape s;
  s.layer_tokens = layer_tokens;
  s.tokens = layer_tokens * 8 / ep;
  s.experts_hit = 128 / ep;
  s.hidden = 2048;
  s.inter = 768;
  return s;
}

}  // namespace

TEST_CASE("moe layer kernel: a latency plus the routed tokens' rows at the token rate", "[kernel-models][moe]") {
  const MoeLayerKernel m{20, 1000};  // 20 us, 1000 GB/s
  CHECK(moe_layer_seconds(m, 1e6) == Approx(21e-6).epsilon(1e-12));  // 20 us + 1 MB / 1 TB/s
  CHECK(moe_layer_seconds(m, 0) == 0);                                // no tokens: no layer

  // Inside the composition: the composition's time plus the layer's, for tokens x D x 2 B.
  const HardwareProfile hw = h100();
  REQUIRE(hw.kernel_models);
  const KernelModels& km = *hw.kernel_models;
  const GemmKernel& g = km.gemm.at(DType::bf16);
  const MoeShape s = qwen3_moe(512);
  const double composed = moe_seconds(g, km.vector, km.sms, s);
  CHECK(moe_seconds(g, km.vector, km.sms, s, &m) == Approx(composed + 20e-6 + 512 * 2048 * 2 / 1e12).epsilon(1e-12));
}

TEST_CASE("moe layer kernel: the routed-experts op pays it once per layer, for the tokens one device routes",
          "[kernel-models][moe][kernel-op-time]") {
  const HardwareProfile fitted = h100();
  REQUIRE(fitted.kernel_models);
  REQUIRE(fitted.kernel_models->moe_layer.count(DType::bf16) == 1);
  HardwareProfile plain = fitted;
  plain.kernel_models->moe_layer.clear();

  // The experts op of 4096 tokens through 128 experts, top-8 (rows: copies per expert).
  ModelShape shape;
  shape.D = 2048;
  shape.E = 128;
  shape.top_k = 8;
  shape.Fe = 768;
  shape.H = 32;
  shape.G = 4;
  shape.qk_head_dim = shape.v_head_dim = 128;
  const double N = 4096;
  OpRow r;
  r.calls = 5;
  r.rows = N * 8 / 128;
  r.gemms[0] = OpGemm{r.rows, 2 * 768, 2048, 128, GemmSplit::column};
  r.gemms[1] = OpGemm{r.rows, 2048, 768, 128, GemmSplit::row};
  r.inner_vector_bytes = 1e7;
  r.inner_vector_calls = 3;

  const MoeLayerKernel& m = fitted.kernel_models->moe_layer.at(DType::bf16);
  for (double ep : {1.0, 4.0}) {
    INFO("ep " << ep << ", tp 2");
    const Sharding sh{2, ep, 2};
    const Roofline with = make_roofline(fitted, DType::bf16, sh, &shape);
    const Roofline without = make_roofline(plain, DType::bf16, sh, &shape);
    REQUIRE(with.moe_layer == &m);
    REQUIRE(without.moe_layer == nullptr);
    // Each expert-parallel rank routes its N / ep tokens; the tensor-parallel ranks all of them.
    const double layer = moe_layer_seconds(m, N / ep * 2048 * 2);
    const OpTime a = kernel_op_time(model::OpKind::experts, r, with, nullptr);
    const OpTime b = kernel_op_time(model::OpKind::experts, r, without, nullptr);
    CHECK(a.seconds == Approx(b.seconds + layer).epsilon(1e-12));
    CHECK(a.memory_s == Approx(b.memory_s + layer).epsilon(1e-12));
    CHECK(a.backward_s == Approx(b.backward_s + 2 * layer).epsilon(1e-12));  // element-wise: twice backward
    // Only the routed experts route: a dense FFN op of the same products is untouched.
    CHECK(kernel_op_time(model::OpKind::ffn_gate_up, r, with, nullptr).seconds ==
          kernel_op_time(model::OpKind::ffn_gate_up, r, without, nullptr).seconds);
  }
}

TEST_CASE("moe layer kernel: JSON round trip, and bad values named by pointer", "[kernel-models][moe][json]") {
  const HardwareProfile hw = h100();
  REQUIRE(hw.kernel_models);
  KernelModels km = *hw.kernel_models;
  km.moe_layer[DType::fp16] = MoeLayerKernel{12.5, 900};
  const model::Json j = to_json(km);
  CHECK(j["moe_layer"]["fp16"]["latency_us"] == 12.5);
  CHECK(j["moe_layer"]["fp16"]["token_gb_per_s"] == 900);
  CHECK(parse_kernel_models(j, "/kernel_models") == km);
  // A profile without the block (an older fit, or a device without balanced MoE rows) has none.
  model::Json none = j;
  none.erase("moe_layer");
  CHECK(parse_kernel_models(none, "/kernel_models").moe_layer.empty());

  auto error = [&](const std::function<void(model::Json&)>& edit) -> std::string {
    model::Json bad = j;
    edit(bad["moe_layer"]);
    try {
      parse_kernel_models(bad, "/kernel_models");
    } catch (const model::ConfigError& e) {
      return e.what();
    }
    return "accepted";
  };
  const std::string at = "/kernel_models/moe_layer";
  CHECK(error([](model::Json& m) { m["fp16"]["token_gb_per_s"] = 0; }) == at + "/fp16/token_gb_per_s: must be > 0");
  CHECK(error([](model::Json& m) { m["fp16"]["latency_us"] = -1; }).rfind(at + "/fp16/latency_us: ", 0) == 0);
  CHECK(error([](model::Json& m) { m["fp16"].erase("latency_us"); }).rfind(at + "/fp16/latency_us: ", 0) == 0);
  CHECK(error([](model::Json& m) { m["fp16"]["overlap"] = 4; }) == at + "/fp16/overlap: unknown key");
  CHECK(error([](model::Json& m) { m["int4"] = m["fp16"]; }).rfind(at + "/int4: unknown precision", 0) == 0);
}

TEST_CASE("moe layer kernel: an MoE layer on the fitted H100 never takes less time for more tokens",
          "[kernel-models][moe][monotonic]") {
  const HardwareProfile hw = h100();
  REQUIRE(hw.kernel_models);
  const KernelModels& km = *hw.kernel_models;
  for (const auto& [d, m] : km.moe_layer) {
    const GemmKernel& g = km.gemm.at(d);
    for (double ep : {1.0, 8.0}) {
      double previous = 0;
      for (double t = 1; t <= 65536; t *= 2) {
        INFO(model::to_string(d) << " ep " << ep << " tokens " << t);
        const double now = moe_seconds(g, km.vector, km.sms, qwen3_moe(t, ep), &m);
        CHECK(now >= previous);
        previous = now;
      }
    }
  }
}

TEST_CASE("moe layer kernel: the cost model's routed-experts op times what the validated composition times",
          "[kernel-models][moe][kernel-op-time]") {
  // Qwen3-30B-A3B's MoE layer (D 2048, 128 experts of 768, top-8, SwiGLU). moe_seconds is
  // what `hdlab validate --kerneldb` checks against moe_perf; the cost model builds the
  // same layer from the layer program's experts node. They must agree at every tp x ep,
  // with the cost model's reading of expert parallelism: each rank routes its own N / ep
  // tokens (kerneldb's collector gives every rank all of them instead).
  const model::Backbone b = model::load_backbone(model::Json::parse(R"({"name": "moe-30b", "num_layers": 2,
      "hidden_size": 2048, "num_heads": 32, "num_kv_heads": 4, "head_dim": 128, "intermediate_size": 6144,
      "vocab_size": 1000, "moe": {"num_experts": 128, "top_k": 8, "expert_intermediate_size": 768}})"));
  const model::Config c = model::make_config(b, model::parse_design(model::Json::parse("{}"), b));
  const ModelShape shape = model_shape(c.effective, c.design.method);
  const HardwareProfile hw = h100();
  REQUIRE(hw.kernel_models);
  const KernelModels& km = *hw.kernel_models;
  for (double n : {1.0, 64.0, 4096.0}) {
    model::LayerWork w;  // one row per sequence (a decode step of n sequences)
    w.seqs = n;
    w.rows_q = w.rows_kv = 1;
    model::OpNodes t{};
    model::layer_ops(shape, model::layer_features(c.effective, 0), w, true, t);
    const model::OpNode& ex = model::node(t, model::OpKind::experts);
    REQUIRE(ex.gemms[0].groups > 0);
    for (const auto& [tp, ep] : {std::pair{1.0, 1.0}, std::pair{1.0, 8.0}, std::pair{4.0, 1.0}, std::pair{2.0, 4.0}}) {
      INFO(n << " tokens, tp " << tp << " ep " << ep);
      const Roofline rl = make_roofline(hw, DType::bf16, Sharding{tp, ep, std::min(tp, 4.0)}, &shape);
      MoeShape s;
      s.tokens = n * 8 / ep;
      s.layer_tokens = n / ep;
      s.experts_hit = ex.gemms[0].groups / ep;
      s.hidden = 2048;
      s.inter = 768 / tp;
      const double composed = moe_seconds(km.gemm.at(DType::bf16), km.vector, km.sms, s, rl.moe_layer);
      const OpTime op = kernel_op_time(model::OpKind::experts, ex, rl, &w, Timing::forward);
      CHECK(op.seconds == Approx(composed).epsilon(1e-12));
    }
  }
}
