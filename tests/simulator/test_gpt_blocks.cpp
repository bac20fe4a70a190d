// GPT-style blocks (LayerNorm with bias, GELU MLP, biases on every projection, learned
// positions) and unfused attention: op tables worked out by hand, weights against
// model/'s counts, the scores an unfused kernel writes, and the settings refused.
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/simulator/memory.hpp"
#include "hdlab/simulator/phases.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using model::OpKind;

namespace {

// 2 layers, D 8, 2 heads of 4 (MHA), GELU F 32, vocabulary 10, 16 learned positions,
// LayerNorm, biases on q/k/v, o and both MLP matrices, tied. Parameters per layer: norms
// 2 x 16; attention 4 x 64 weights + 24 + 8 biases = 288; MLP 256 + 32 + 256 + 8 = 552:
// 872. Final norm 16; token table 80 + position table 128. 2 x 872 + 16 + 208 = 1968.
model::Json tiny_gpt() {
  return model::Json::parse(R"({"name": "tiny-gpt", "num_layers": 2, "hidden_size": 8, "num_heads": 2,
                                "intermediate_size": 32, "vocab_size": 10, "tie_embeddings": true,
                                "norm": "layernorm", "mlp": "gelu", "positions": "learned", "max_context": 16,
                                "attention_bias": true, "output_bias": true, "mlp_bias": true})");
}

struct Pass {
  model::Config config;
  std::unique_ptr<PassCost> cost = std::make_unique<PassCost>();
};

Pass train(const model::Json& backbone, std::int64_t tokens, const PassOptions& o) {
  Pass p{fixtures::config(backbone, "{}")};
  const ModelShape s = model_shape(p.config.effective, p.config.design.method);
  train_forward_pass(p.config, s, plan_layers(p.config.effective, p.config.design.method), 1, tokens, o, *p.cost);
  return p;
}

PassOptions exact() {
  PassOptions o;
  o.count_executed = false;
  return o;
}

}  // namespace

TEST_CASE("a GPT-style layer op by op, by hand", "[ops][gpt]") {
  const Pass p = train(tiny_gpt(), 4, exact());
  CHECK(model::count_params(p.config).total == 1968);
  REQUIRE(p.cost->count == 1);
  const OpTable& t = p.cost->groups[0].ops;
  const double N = 4;
  CHECK(row(t, OpKind::attn_norm).cost.flops == 7 * N * 8);  // LayerNorm: 7 FLOPs per element
  CHECK(row(t, OpKind::attn_norm).params == 16);               // weight and bias
  CHECK(row(t, OpKind::qkv_proj).cost.flops == 2 * N * 3 * 64 + N * 24);
  CHECK(row(t, OpKind::rope).calls == 0);  // learned positions: no rotary op
  CHECK(row(t, OpKind::o_proj).cost.flops == 2 * N * 64 + N * 8);
  CHECK(row(t, OpKind::o_proj).params == 72);
  CHECK(row(t, OpKind::ffn_gate_up).cost.flops == 2 * N * 8 * 32 + N * 32);  // up D -> F, no gate
  CHECK(row(t, OpKind::ffn_gate_up).params == 288);
  CHECK(row(t, OpKind::ffn_act).cost.flops == 8 * N * 32);
  CHECK(row(t, OpKind::ffn_act).cost.act_bytes_in == N * 32 * 2);  // GELU reads F per row, not 2F
  CHECK(row(t, OpKind::ffn_down).cost.flops == 2 * N * 32 * 8 + N * 8);
  CHECK(row(t, OpKind::ffn_down).params == 264);
  // The position table: its rows resident, the rows of this pass read and added.
  const OpRow& emb = row(p.cost->outside, OpKind::embedding);
  CHECK(emb.params == 80 + 128);
  CHECK(emb.cost.flops == N * 8);
  CHECK(emb.cost.weight_bytes == (4 + 4) * 8 * 2);  // 4 token rows + 4 position rows, bf16
  CHECK(row(p.cost->outside, OpKind::final_norm).params == 16);
  double resident = 0;
  for (const OpRow& r : p.cost->outside) resident += r.params;
  for (const OpRow& r : t) resident += 2 * r.params;
  CHECK(resident == 1968);
}

TEST_CASE("GPT-2 small and the Megatron GPT-3 175B count as published", "[params][gpt][profiles]") {
  // openai-community/gpt2: 124,439,808 parameters (the figure HF reports for the model).
  const model::Config gpt2 = model::parse_config(
      model::read_json_file(fixtures::source_path("profiles/models/gpt2-small.json")));
  CHECK(model::count_params(gpt2).total == 124439808);
  // Megatron's 175B (96 layers, h 12288, vocabulary 51,200, 2,048 positions, tied):
  // 96 (12 h^2 + 13 h) + (51,200 + 2,048) h + 2 h (final LayerNorm).
  const model::Config g175 = model::parse_config(
      model::read_json_file(fixtures::source_path("profiles/models/megatron-gpt-175b.json")));
  const std::int64_t h = 12288;
  CHECK(model::count_params(g175).total == 96 * (12 * h * h + 13 * h) + (51200 + 2048) * h + 2 * h);
}

TEST_CASE("unfused attention writes every score, fused only the visible tiles", "[ops][attention][unfused]") {
  PassOptions fused;
  fused.tile_q = fused.tile_k = 4;
  PassOptions unfused = fused;
  unfused.unfused = true;
  const std::int64_t L = 12;
  const Pass f = train(fixtures::tiny_dense(), L, fused), u = train(fixtures::tiny_dense(), L, unfused);
  const LayerWork& fw = f.cost->groups[0].work;
  const LayerWork& uw = u.cost->groups[0].work;
  CHECK_FALSE(fw.scores_materialised);
  CHECK(fw.pairs_executed == 6 * 16);  // the 6 causal tiles of 4 x 4 on a 12 x 12 grid
  CHECK(uw.scores_materialised);
  CHECK(uw.pairs_executed == L * L);  // the mask is applied in the softmax: nothing skipped
  CHECK(uw.pairs_exact == fw.pairs_exact);
  // Scores [1, H 2, 12, 12] in bf16: Q K^T writes them, the softmax reads and writes, P V reads.
  const OpRow& att = row(u.cost->groups[0].ops, OpKind::attention);
  CHECK(att.inner_vector_bytes == 4 * 2 * L * L * 2);
  CHECK(att.gemms[0].groups == 2);  // one Q K^T per (sequence, head)
  CHECK((att.gemms[0].m == L && att.gemms[0].n == L && att.gemms[0].k == 4));
  CHECK((att.gemms[1].m == L && att.gemms[1].n == 4 && att.gemms[1].k == L));
  CHECK(row(f.cost->groups[0].ops, OpKind::attention).inner_vector_bytes == 0);

  // Without recomputation the probabilities are kept: every score of every head.
  const ModelShape s = model_shape(u.config.effective, u.config.design.method);
  const double kept_u = saved_activation_bytes(*u.cost, s, Recompute::none, 1);
  const double sel_u = saved_activation_bytes(*u.cost, s, Recompute::selective, 1);
  CHECK(kept_u - sel_u == 2 * (2 * L * L * 2));  // 2 layers x H 2 x L^2 x 2 bytes
}

TEST_CASE("unfused attention costs its score traffic on a device", "[evaluate][unfused]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();
  Scenario s = parse_scenario(model::Json::parse(R"({"train": {"seq_len": 256, "grad_accum": 1}})"));
  Metrics fused, unfused;
  evaluate(c, hw, s, fused);
  s.attention.kernel = AttentionKernel::unfused;
  evaluate(c, hw, s, unfused);
  CHECK(unfused[Metric::train_step_s] > fused[Metric::train_step_s]);
  CHECK(unfused[Metric::prefill_s] > fused[Metric::prefill_s]);
  CHECK(unfused[Metric::decode_step_s] == fused[Metric::decode_step_s]);  // decode reads the cache either way

  // The scenario key round-trips and a bad value is named.
  const Scenario parsed = parse_scenario(model::Json::parse(R"({"attention": {"kernel": "unfused"}})"));
  CHECK(parsed.attention.kernel == AttentionKernel::unfused);
  CHECK(parse_scenario(to_json(parsed)) == parsed);
  CHECK(fixtures::error_of([] { parse_scenario(model::Json::parse(R"({"attention": {"kernel": "flash"}})")); })
            .rfind("/scenario/attention/kernel: ", 0) == 0);
}

TEST_CASE("GPT-style settings that cannot be modelled are refused by pointer", "[bad-input][gpt]") {
  auto refused_at = [](model::Json backbone, const std::string& design = "{}") {
    const std::string e = fixtures::error_of([&] { fixtures::config(backbone, design); });
    return e.substr(0, e.find(':'));
  };
  model::Json moe = fixtures::tiny_moe();
  moe["mlp"] = "gelu";
  CHECK(refused_at(moe) == "/backbone/mlp");
  moe["mlp"] = "swiglu";
  moe["mlp_bias"] = true;
  CHECK(refused_at(moe) == "/backbone/mlp_bias");
  model::Json table = tiny_gpt();
  table.erase("max_context");
  CHECK(refused_at(table) == "/backbone/max_context");
  model::Json norm = tiny_gpt();
  norm["norm"] = "batchnorm";
  CHECK(refused_at(norm) == "/backbone/norm");
  CHECK(refused_at(tiny_gpt(), R"({"vwn": {"m": 2, "n": 4}})") == "/design/vwn/embedding");
  CHECK(refused_at(tiny_gpt(), R"({"vwn": {"m": 2, "n": 4, "embedding": "projected"}})").empty());
}
