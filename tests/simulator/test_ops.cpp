// Op tables: hand-computed FLOPs and bytes of a tiny layer, weights against model/'s
// parameter counts, attention FLOPs against model/'s pair counts, VWN's published GHC
// formulas, expected experts hit.
#include <catch2/catch.hpp>

#include <cmath>

#include "fixtures.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/simulator/memory.hpp"
#include "hdlab/simulator/phases.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using model::OpKind;

namespace {

PassOptions exact_options() {
  PassOptions o;
  o.count_executed = false;
  return o;
}

const OpRow& op(const LayerGroupCost& g, OpKind k) { return row(g.ops, k); }

// Resident parameters of every op of a pass: layer ops once per distinct layer.
double params_in(const PassCost& p) {
  double total = 0;
  for (const OpRow& r : p.outside) total += r.params;
  for (int g = 0; g < p.count; ++g) {
    const LayerGroupCost& lg = p.groups[static_cast<std::size_t>(g)];
    for (const OpRow& r : lg.ops) total += lg.plan.instances * r.params;
  }
  return total;
}

struct Built {
  model::Config config;
  ModelShape shape;
  LayerPlan plan;
  std::unique_ptr<PassCost> pass = std::make_unique<PassCost>();
};

Built train_pass(const model::Json& backbone, const std::string& design, double seqs, std::int64_t tokens,
                 const PassOptions& o = exact_options()) {
  Built b{fixtures::config(backbone, design), {}, {}};
  b.shape = model_shape(b.config.effective, b.config.design.method);
  b.plan = plan_layers(b.config.effective, b.config.design.method);
  train_forward_pass(b.config, b.shape, b.plan, seqs, tokens, o, *b.pass);
  return b;
}

}  // namespace

TEST_CASE("a tiny dense layer's forward, op by op, by hand", "[ops]") {
  // One sequence of 4 tokens; D 8, H 2, G 1, hd 4, F 16, V 10, bf16 (2 bytes).
  Built b = train_pass(fixtures::tiny_dense(), "{}", 1, 4);
  REQUIRE(b.pass->count == 1);  // both layers alike
  const LayerGroupCost& g = b.pass->groups[0];
  CHECK(g.plan.passes == 2);
  const double N = 4;
  CHECK(op(g, OpKind::attn_norm).cost.flops == 4 * 8 * N);
  CHECK(op(g, OpKind::qkv_proj).cost.flops == 2 * N * (8 * 2 * 4 + 2 * 8 * 1 * 4));
  CHECK(op(g, OpKind::qk_norm).cost.flops == 4 * N * (2 * 4 + 1 * 4));
  CHECK(op(g, OpKind::rope).cost.flops == 3 * N * (2 * 4 + 1 * 4));
  CHECK(op(g, OpKind::attention).cost.flops == 4 * 4 * 2 * (4 * 5 / 2));  // causal: 10 pairs
  CHECK(op(g, OpKind::o_proj).cost.flops == 2 * N * 8 * 8);
  CHECK(op(g, OpKind::ffn_gate_up).cost.flops == 2 * N * 8 * 32);
  CHECK(op(g, OpKind::ffn_act).cost.flops == 5 * N * 16);
  CHECK(op(g, OpKind::ffn_down).cost.flops == 2 * N * 16 * 8);
  CHECK(op(g, OpKind::residual).cost.flops == 2 * N * 8);
  // bytes: q/k/v out [4, 8 + 8] * 2 B; down reads [4, 16] and its 16 x 8 weights
  CHECK(op(g, OpKind::qkv_proj).cost.act_bytes_out == 4 * 16 * 2);
  CHECK(op(g, OpKind::ffn_down).cost.act_bytes_in == 4 * 16 * 2);
  CHECK(op(g, OpKind::ffn_down).cost.weight_bytes == 16 * 8 * 2);
  CHECK(op(g, OpKind::attention).cost.kv_bytes_read == 0);  // training reads K/V as activations
  const double layer = 128 + 1024 + 192 + 144 + 320 + 512 + 128 + 2048 + 320 + 1024 + 64;
  CHECK(table_total(g.ops).flops == layer);
  const double outside = 4 * 8 * N + 2 * N * 8 * 10;  // final norm, head
  CHECK(b.pass->total().flops == 2 * layer + outside);
  CHECK(row(b.pass->outside, OpKind::embedding).cost.flops == 0);
}

TEST_CASE("resident weights equal model/'s parameter counts", "[ops][params]") {
  const char* designs[] = {"{}",
                           R"({"hd": {"n": 4}})",
                           R"({"phd": {"K": 3, "variant": "cswa", "W": 2, "C": 3}})",
                           R"({"vwn": {"m": 2, "n": 3}})",
                           R"({"vwn": {"m": 2, "n": 6, "embedding": "projected", "mtp": true}})",
                           R"({"vwn": {"m": 2, "n": 2, "dynamic": false}})",
                           R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 3,
                                          "input_injection": true}})",
                           R"({"growth": {"depth_factor": 2, "width_factor": 2}})"};
  for (const auto& backbone : {fixtures::tiny_moe(), fixtures::tiny_sliding()}) {
    for (const char* d : designs) {
      if (std::string(d).find("looped") != std::string::npos && backbone.contains("kv_mirror_layers")) continue;
      if (std::string(d).find("growth") != std::string::npos && !backbone.contains("moe")) continue;
      INFO(backbone["name"] << " " << d);
      Built b = train_pass(backbone, d, 1, 6);
      const model::ParamCounts p = model::count_params(b.config);
      CHECK(params_in(*b.pass) == static_cast<double>(p.total));
    }
  }
  // Dense ops read every weight they own once per pass (2 bytes each).
  Built b = train_pass(fixtures::tiny_dense(), "{}", 1, 4);
  const model::ParamCounts p = model::count_params(b.config);
  const double read = b.pass->total().weight_bytes - row(b.pass->outside, OpKind::embedding).cost.weight_bytes;
  CHECK(read == 2.0 * static_cast<double>(p.total - p.embedding_input));
}

TEST_CASE("a separate input vocabulary: the lookup's table has its rows, the head keeps vocab_size", "[ops][vocab]") {
  model::Json big_input = fixtures::tiny_dense();
  big_input["input_vocab_size"] = 1000;
  for (const char* d : {"{}", R"({"hd": {"n": 2}})", R"({"vwn": {"m": 2, "n": 3, "mtp": true}})"}) {
    INFO(d);
    Built b = train_pass(big_input, d, 1, 4);
    CHECK(params_in(*b.pass) == static_cast<double>(model::count_params(b.config).total));
  }
  Built big = train_pass(big_input, "{}", 1, 4), base = train_pass(fixtures::tiny_dense(), "{}", 1, 4);
  const OpRow& emb = row(big.pass->outside, OpKind::embedding);
  CHECK(emb.params == 1000 * 8);
  const OpRow& base_emb = row(base.pass->outside, OpKind::embedding);
  CHECK(emb.cost.weight_bytes == base_emb.cost.weight_bytes);  // 4 rows read either way
  CHECK(emb.cost.weight_bytes == 4 * 8 * 2);
  const OpRow& head = row(big.pass->outside, OpKind::lm_head);
  CHECK(head.params == 10 * 8);
  CHECK(head.cost.flops == 2 * 4 * 8 * 10);
}

TEST_CASE("attention FLOPs are 4 hd H per visible pair, both counts from model/", "[ops][attention]") {
  PassOptions o;
  o.layout = model::Layout::stream_major;
  o.tile_q = o.tile_k = 4;
  const std::int64_t L = 7;
  Built b = train_pass(fixtures::tiny_sliding(),
                       R"({"hd": {"n": 3, "layers": ["intra", "full", "local", "intra"], "window": 5}})", 2, L, o);
  for (int gi = 0; gi < b.pass->count; ++gi) {
    const LayerGroupCost& g = b.pass->groups[static_cast<std::size_t>(gi)];
    const model::MaskSpec m = model::layer_mask(b.config, g.plan.first_layer, L);
    const double exact = static_cast<double>(model::visible_pairs(m));
    const double executed = static_cast<double>(model::visible_tiles(m, o.layout, 4, 4).executed_pairs);
    INFO("layer " << g.plan.first_layer);
    CHECK(g.work.pairs_exact == exact);
    CHECK(g.work.pairs_executed == executed);
    CHECK(op(g, OpKind::attention).cost.flops == 4 * 4 * 2 * 2 * executed);  // 4 hd H, 2 sequences
  }
  CHECK(b.pass->attention_pairs_exact() ==
        2 * (2 * 3 * (7 * 8 / 2.0) + 21 * 22 / 2.0 + static_cast<double>(model::visible_pairs(
                                                           model::layer_mask(b.config, 2, L)))));
}

TEST_CASE("VWN GHC FLOPs per token match the published formulas", "[ops][vwn]") {
  for (auto [m, n] : {std::pair{2, 3}, std::pair{8, 16}, std::pair{4, 32}}) {
    model::Json backbone = fixtures::tiny_dense();
    backbone["hidden_size"] = 64;
    backbone["num_heads"] = 4;
    backbone["head_dim"] = 16;
    const std::string design = R"({"vwn": {"m": )" + std::to_string(m) + R"(, "n": )" + std::to_string(n) + "}}";
    Built b = train_pass(backbone, design, 1, 1);  // one token
    const LayerGroupCost& g = b.pass->groups[0];
    const double D = 64, r = static_cast<double>(n) / m;
    INFO("m " << m << " n " << n);
    // two GHCs per layer (around attention and FFN)
    CHECK(op(g, OpKind::ghc_norm).cost.flops == 2 * 4 * r * D);
    CHECK(op(g, OpKind::ghc_dynamic).cost.flops == 2 * 2 * (2 * m + n) * r * D);
    CHECK(op(g, OpKind::ghc_width).cost.flops == 2 * 2 * (m + n) * r * D);
    CHECK(op(g, OpKind::ghc_depth).cost.flops == 2 * 2 * n * D);
    CHECK(op(g, OpKind::residual).cost.flops == 0);  // the depth connection carries the residual
  }
  // Static m = n: A and B are trained parameters, so the width and depth connections run
  // although they start as the identity; without dynamics no norm or coefficients.
  Built b = train_pass(fixtures::tiny_dense(), R"({"vwn": {"m": 2, "n": 2, "dynamic": false}})", 1, 1);
  const LayerGroupCost& g = b.pass->groups[0];
  CHECK(op(g, OpKind::ghc_width).cost.flops == 2 * 2 * (2 + 2) * 8);
  CHECK(op(g, OpKind::ghc_depth).cost.flops == 2 * 2 * 2 * 8);
  CHECK(op(g, OpKind::ghc_norm).cost.flops == 0);
  CHECK(op(g, OpKind::ghc_dynamic).cost.flops == 0);
  CHECK(op(g, OpKind::residual).cost.flops == 0);
}

TEST_CASE("VWN MTP: the mixing linear and a second output path, in training only", "[ops][vwn][mtp]") {
  // tiny_dense (D 8, V 10), m 2, n 4: slots of 4, D' = 16; 2 sequences of 3 tokens.
  for (const char* embedding : {"full", "projected"}) {
    INFO(embedding);
    const std::string design =
        std::string(R"({"vwn": {"m": 2, "n": 4, "mtp": true, "embedding": ")") + embedding + R"("}})";
    Built b = train_pass(fixtures::tiny_dense(), design, 2, 3);
    const OpRow& mtp = row(b.pass->outside, OpKind::mtp);
    const double N = 6, D = 8, wide = 16, s = 4, V = 10;
    const double projection = std::string(embedding) == "projected" ? 2 * N * D * wide : 0;
    // mixing [N, n, 2s] -> [N, n, s]; GroupNorm + reduce D' -> D; final norm; head
    CHECK(mtp.cost.flops ==
          projection + 2 * N * 4 * 2 * s * s + (2 * N * wide * D + 4 * N * wide) + 4 * N * D + 2 * N * D * V);
    // the same output path as the main one, on the same rows
    CHECK(mtp.cost.flops - projection - 2 * N * 4 * 2 * s * s ==
          row(b.pass->outside, OpKind::vwn_reduce).cost.flops + row(b.pass->outside, OpKind::final_norm).cost.flops +
              row(b.pass->outside, OpKind::lm_head).cost.flops);
    CHECK(mtp.params == 2 * s * s);
    CHECK(mtp.rows == N);
    // Memory: every input of the path and its logits are kept for the auxiliary loss.
    const std::string no_mtp = std::string(R"({"vwn": {"m": 2, "n": 4, "embedding": ")") + embedding + R"("}})";
    Built plain = train_pass(fixtures::tiny_dense(), no_mtp, 2, 3);
    CHECK(saved_activation_bytes(*b.pass, b.shape, Recompute::selective, 1) -
              saved_activation_bytes(*plain.pass, plain.shape, Recompute::selective, 1) ==
          mtp.cost.act_bytes_in + N * V * 2);
    // Prefill and decode run no MTP: resident weights only.
    prefill_pass(b.config, b.shape, b.plan, 2, 3, exact_options(), *b.pass);
    CHECK(row(b.pass->outside, OpKind::mtp).cost.flops == 0);
    CHECK(row(b.pass->outside, OpKind::mtp).calls == 0);
    CHECK(row(b.pass->outside, OpKind::mtp).params == 2 * s * s);
    decode_pass(b.config.design.method, b.shape, b.plan, 2, 3, exact_options(), *b.pass);
    CHECK(row(b.pass->outside, OpKind::mtp).cost.flops == 0);
  }
}

TEST_CASE("expected experts hit under balanced top-k routing", "[ops][moe]") {
  // tiny_moe: E 4, top-2, expert 3 * 8 * 6 weights. Decode of b sequences: b tokens.
  Built b{fixtures::config(fixtures::tiny_moe(), "{}"), {}, {}};
  b.shape = model_shape(b.config.effective, b.config.design.method);
  b.plan = plan_layers(b.config.effective, b.config.design.method);
  for (double batch : {1.0, 3.0, 50.0}) {
    decode_pass(b.config.design.method, b.shape, b.plan, batch, 10, PassOptions{}, *b.pass);
    const double hit = 4 * (1 - std::pow(1 - 2.0 / 4, batch));
    for (int gi = 0; gi < b.pass->count; ++gi) {
      const LayerGroupCost& g = b.pass->groups[static_cast<std::size_t>(gi)];
      if (!g.plan.sig.moe) continue;
      CHECK(op(g, OpKind::experts).cost.weight_bytes == Approx(hit * 3 * 8 * 6 * 2).epsilon(1e-12));
      CHECK(op(g, OpKind::experts).cost.flops == batch * 2 * (2 * 3 * 8 * 6 + 5 * 6));
      CHECK(op(g, OpKind::experts).rows == batch * 2 / 4);  // expected tokens per expert
      CHECK(op(g, OpKind::shared_experts).cost.weight_bytes == 3 * 8 * 10 * 2);
    }
  }
}
