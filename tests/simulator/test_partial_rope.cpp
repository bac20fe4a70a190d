// Backbone fields of the 2025 HF families in the op table: partial RoPE (GLM-4.5,
// rotary_dim < head_dim) rotates fewer elements; a whole-projection QK-norm (OLMo 2)
// reads (H + G) hd weights instead of 2 hd. Worked out by hand on a tiny backbone.
#include <catch2/catch.hpp>

#include <memory>

#include "fixtures.hpp"
#include "hdlab/simulator/phases.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using model::OpKind;

namespace {

// 1 layer, D 16, 4 query heads and 2 KV heads of head_dim 8, with QK-norm.
std::string tiny(const std::string& extra) {
  return R"({"name": "tiny", "num_layers": 1, "hidden_size": 16, "num_heads": 4, "num_kv_heads": 2,
             "head_dim": 8, "intermediate_size": 32, "vocab_size": 10, "qk_norm": true)" +
         extra + "}";
}

OpTable layer_table(const std::string& backbone, std::int64_t tokens) {
  const model::Config c = fixtures::config(model::Json::parse(backbone), "{}");
  const ModelShape s = model_shape(c.effective, c.design.method);
  auto cost = std::make_unique<PassCost>();
  PassOptions o;
  o.count_executed = false;  // the model's costs, not a kernel's executed work
  train_forward_pass(c, s, plan_layers(c.effective, c.design.method), 1, tokens, o, *cost);
  REQUIRE(cost->count == 1);
  return cost->groups[0].ops;
}

}  // namespace

TEST_CASE("partial RoPE: the rope op rotates rotary_dim of each q and k head", "[ops][rope]") {
  const double N = 64;
  const OpTable full = layer_table(tiny(""), 64);
  const OpTable half = layer_table(tiny(R"(, "rotary_dim": 4)"), 64);
  // (H + G) heads x rotated dims per token, 3 FLOPs per rotated element.
  CHECK(row(full, OpKind::rope).cost.flops == 3 * N * (4 + 2) * 8);
  CHECK(row(half, OpKind::rope).cost.flops == 3 * N * (4 + 2) * 4);
  CHECK(row(half, OpKind::qkv_proj).cost.flops == row(full, OpKind::qkv_proj).cost.flops);
}

TEST_CASE("QK-norm over the whole projection reads (H + G) hd weights", "[ops][qk_norm]") {
  const OpTable head = layer_table(tiny(""), 64);
  const OpTable whole = layer_table(tiny(R"(, "qk_norm_scope": "projection")"), 64);
  CHECK(row(head, OpKind::qk_norm).params == 2 * 8);
  CHECK(row(whole, OpKind::qk_norm).params == (4 + 2) * 8);
  CHECK(row(whole, OpKind::qk_norm).cost.flops == row(head, OpKind::qk_norm).cost.flops);
}
