// Executed FLOPs per op against the simulator's op tables, design by design and phase by
// phase, so a mismatch between what the cost model counts and what the runner runs
// shows up as a number; and the KV entries the runner keeps against the simulator's
// cache sizes. The executor itself never includes simulator code; this test links both.
#include <set>

#include "hdlab/simulator/op_table.hpp"
#include "hdlab/simulator/phases.hpp"
#include "runner_test_support.hpp"

namespace hdlab::executor::testing {

namespace {

using model::OpKind;

struct Compared {
  std::string worst;  // the first op whose FLOPs differ by more than 1e-9 relative
  std::map<OpKind, std::pair<double, double>> ops;  // executed, predicted
};

Compared compare(const model::Config& c, Phase phase, std::int64_t tokens, RunOptions o = {}) {
  Model m = build(c, 1, o);
  const auto t = testing::tokens(tokens + 2);
  simulator::PassOptions po;
  po.layout = m.runner->layout();
  po.tile_q = kTileQ;
  po.tile_k = kTileK;
  po.mirror_final_only_decode = true;  // the executor decodes HD's mirrored layers on the final stream
  const simulator::ModelShape shape = simulator::model_shape(c.effective, c.design.method);
  const simulator::LayerPlan plan = simulator::plan_layers(c.effective, c.design.method);
  auto pass = std::make_unique<simulator::PassCost>();
  if (phase == Phase::train_forward) {
    m.runner->train_forward(std::span(t.data(), static_cast<std::size_t>(tokens)), t[static_cast<std::size_t>(tokens)]);
    simulator::train_forward_pass(c, shape, plan, 1, tokens, po, *pass);
  } else if (phase == Phase::prefill) {
    m.runner->prefill(std::span(t.data(), static_cast<std::size_t>(tokens)), tokens + 1);
    simulator::prefill_pass(c, shape, plan, 1, tokens, po, *pass);
  } else {
    m.runner->prefill(std::span(t.data(), static_cast<std::size_t>(tokens)), tokens + 1);
    m.runner->decode_step(t[static_cast<std::size_t>(tokens)]);
    simulator::decode_pass(c.design.method, shape, plan, 1, tokens, po, *pass);
  }
  Compared out;
  const StepProfile& prof = m.runner->last_profile();
  for (int k = 0; k < model::op_kind_count; ++k) {
    const auto kind = static_cast<OpKind>(k);
    const double ran = prof.op_total(kind).flops, predicted = pass->op_total(kind).flops;
    out.ops[kind] = {ran, predicted};
    if (out.worst.empty() && std::abs(ran - predicted) > 1e-9 * std::max(1.0, std::abs(predicted)))
      out.worst = std::string(model::to_string(kind)) + ": executed " + std::to_string(ran) + ", simulator " +
                  std::to_string(predicted);
  }
  return out;
}

}  // namespace

namespace {


struct FlopsCase {
  model::Backbone b;
  const char* design;
  model::Layout layout;
};

// Every op's FLOPs in every phase, 150 tokens: whole tiles, partial tiles and, for HD,
// many tiles per stream.
void check_flops(const std::vector<FlopsCase>& cases) {
  for (const FlopsCase& k : cases) {
    const model::Config c = make(k.b, k.design);
    RunOptions o;
    o.layout = k.layout;
    for (Phase phase : {Phase::train_forward, Phase::prefill, Phase::decode}) {
      const Compared r = compare(c, phase, 150, o);
      INFO(k.design << " " << model::to_string(k.layout) << " " << to_string(phase) << ": " << r.worst);
      CHECK(r.worst.empty());
    }
  }
}

}  // namespace

TEST_CASE("executed FLOPs equal the simulator's op tables per op", "[runner][flops]") {
  model::Backbone mirror = tiny_dense(4);
  mirror.kv_mirror_layers = 1;
  mirror.layers[1] = {model::AttentionKind::sliding, 40};
  const model::Backbone moe = tiny_moe();
  const char* plain_phd = R"({"phd": {"K": 3}})";
  const char* cswa = R"({"phd": {"K": 3, "variant": "cswa", "W": 16, "C": 64}})";
  const std::vector<FlopsCase> cases = {
      {tiny_dense(), "{}", model::Layout::interleaved},
      {moe, "{}", model::Layout::interleaved},
      {mirror, R"({"hd": {"n": 3, "layers": ["full", "local", "intra", "intra"], "window": 90, "kv_mirror": true}})",
       model::Layout::interleaved},
      {mirror, R"({"hd": {"n": 3, "layers": ["full", "local", "intra", "intra"], "window": 90, "kv_mirror": true}})",
       model::Layout::stream_major},
      {moe, R"({"hd": {"n": 2, "layers": "intra", "rope": "token_index"}})", model::Layout::stream_major},
      {tiny_dense(), R"({"phd": {"K": 3, "variant": "swa", "W": 16}})", model::Layout::phd_split},
      {tiny_dense(), R"({"phd": {"K": 3, "variant": "swa", "W": 16}})", model::Layout::interleaved},
      // Partial prefills (plain: the last token's copies; CSWA: the last chunk's) in every
      // layout: the tiles over the computed rows, as the runner's plan runs them.
      {tiny_dense(), plain_phd, model::Layout::phd_split},
      {tiny_dense(), plain_phd, model::Layout::interleaved},
      {tiny_dense(), cswa, model::Layout::phd_split},
      {tiny_dense(), cswa, model::Layout::stream_major},
      {tiny_dense(), R"({"vwn": {"m": 2, "n": 3}})", model::Layout::interleaved},
      {tiny_dense(), R"({"vwn": {"m": 4, "n": 8, "dynamic": false, "embedding": "projected"}})", model::Layout::interleaved},
      // m = n static: the GHC width and depth run (A, B are trained); MTP's whole output
      // path in training, nothing of it in prefill and decode.
      {tiny_dense(), R"({"vwn": {"m": 2, "n": 2, "dynamic": false}})", model::Layout::interleaved},
      {tiny_dense(), R"({"vwn": {"m": 2, "n": 3, "mtp": true}})", model::Layout::interleaved},
      {tiny_dense(), R"({"vwn": {"m": 2, "n": 4, "mtp": true, "embedding": "projected"}})", model::Layout::interleaved},
      {moe, R"({"looped": {"prelude": 0, "recurrent": 1, "coda": 1, "iterations": 4, "input_injection": true}})",
       model::Layout::interleaved},
      {moe, R"({"growth": {"width_factor": 2, "depth_factor": 2}})", model::Layout::interleaved},
      // Sinks, chunked local attention across chunk boundaries, NoPE, interleaved MoE/dense.
      {tiny_attn_variants(), "{}", model::Layout::interleaved},
      {tiny_attn_variants(), R"({"hd": {"n": 2, "layers": {"rest": "intra"}}})", model::Layout::interleaved},
  };
  check_flops(cases);
}

TEST_CASE("executed FLOPs equal the simulator's on today's backbones", "[runner][flops][linear]") {
  // Gated DeltaNet layers (chunked prefill, recurrent decode, states per HD stream or one
  // over the expanded sequence), gated attention, the gated shared expert; PHD's hidden
  // copies reading or writing the states; gpt-oss's biased, clamped experts; dense FFN
  // biases (mlp_bias, SwiGLU and relu2).
  check_flops({
      {tiny_hybrid(), "{}", model::Layout::interleaved},
      {tiny_hybrid(), R"({"hd": {"n": 3, "layers": ["intra", "full", "full", "intra"]}})", model::Layout::interleaved},
      {tiny_hybrid(), R"({"hd": {"n": 2, "layers": ["full", "intra", "intra", "full"]}})", model::Layout::stream_major},
      {tiny_hybrid(), R"({"phd": {"K": 3}})", model::Layout::phd_split},
      {tiny_hybrid(), R"({"phd": {"K": 3, "variant": "cswa", "W": 16, "C": 64, "linear_state": "all_copies"}})",
       model::Layout::phd_split},
      {tiny_hybrid(), R"({"vwn": {"m": 2, "n": 3}})", model::Layout::interleaved},
      {with_gpt_oss_experts(tiny_moe()), "{}", model::Layout::interleaved},
      {with_mlp_bias(tiny_dense()), "{}", model::Layout::interleaved},
      {with_mlp_bias(tiny_dense()), R"({"hd": {"n": 2, "layers": "full"}})", model::Layout::interleaved},
      {with_mlp_bias(tiny_nemotron_h()), "{}", model::Layout::interleaved},
      // MLA: expanded prefill, absorbed decode over the cached latents; q_lora; HD
      {tiny_mla(), "{}", model::Layout::interleaved},
      {tiny_mla(3, 20), "{}", model::Layout::interleaved},
      {tiny_mla(), R"({"hd": {"n": 2, "layers": "full"}})", model::Layout::interleaved},
      {tiny_mla(), R"({"hd": {"n": 2, "layers": "intra"}})", model::Layout::stream_major},
      {tiny_hybrid(), R"({"growth": {"depth_factor": 2, "width_factor": 2}})", model::Layout::interleaved},
  });
}

TEST_CASE("executed FLOPs equal the simulator's on a Nemotron-H-shaped backbone", "[runner][flops][mamba2]") {
  // Mamba-2 mixers (chunked SSD prefill in chunks of 16, recurrent decode, states per HD
  // stream or one over the expanded sequence), mixer-only and FFN-only layers, the relu2
  // MLP, attention without positions.
  check_flops({
      {tiny_nemotron_h(), "{}", model::Layout::interleaved},
      {tiny_nemotron_h(), R"({"hd": {"n": 2, "layers": "full"}})", model::Layout::interleaved},
      {tiny_nemotron_h(), R"({"hd": {"n": 3, "layers": ["intra", "full", "full", "intra", "full"]}})",
       model::Layout::interleaved},
      {tiny_nemotron_h(), R"({"hd": {"n": 2, "layers": "intra"}})", model::Layout::stream_major},
      {tiny_mamba(2), "{}", model::Layout::interleaved},
  });
}

TEST_CASE("the formerly divergent ops, by hand", "[runner][flops]") {
  const model::Backbone b = tiny_dense();
  SECTION("VWN m = n static runs its GHC width and depth connections in both") {
    const Compared r = compare(make(b, R"({"vwn": {"m": 2, "n": 2, "dynamic": false}})"), Phase::train_forward, 64);
    const double L = 64, D = 32, layers = 3;
    CHECK(r.ops.at(OpKind::residual).first == 0);
    CHECK(r.ops.at(OpKind::residual).second == 0);
    // two GHCs per layer: width 2(m+n) D', depth 2 n D per row (D' = D)
    CHECK(r.ops.at(OpKind::ghc_width).first == layers * 2 * L * 2 * 4 * D);
    CHECK(r.ops.at(OpKind::ghc_width).second == r.ops.at(OpKind::ghc_width).first);
    CHECK(r.ops.at(OpKind::ghc_depth).second == layers * 2 * L * 2 * 2 * D);
  }
  SECTION("VWN MTP: the mixing linear and the MTP logits' output path in both") {
    const Compared r = compare(make(b, R"({"vwn": {"m": 2, "n": 3, "mtp": true}})"), Phase::train_forward, 64);
    const double L = 64, s = 16, n = 3, D = 32, wide = 48, V = 64;
    const double mtp = 2 * L * n * 2 * s * s + (2 * L * wide * D + 4 * L * wide) + 4 * L * D + 2 * L * D * V;
    CHECK(r.ops.at(OpKind::mtp).first == mtp);
    CHECK(r.ops.at(OpKind::mtp).second == mtp);
  }
  SECTION("PHD plain prefill of 150 tokens: 152 rows, causal over them, 64 x 64 tiles") {
    const Compared r = compare(make(b, R"({"phd": {"K": 3}})"), Phase::prefill, 150);
    const double executed = 64 * 64 + 64 * 128 + 24 * 152, per_pair = 4 * 8 * 4, layers = 3;
    CHECK(r.ops.at(OpKind::attention).first == layers * per_pair * executed);
    CHECK(r.ops.at(OpKind::attention).second == layers * per_pair * executed);
  }
}

TEST_CASE("the KV entries the runner keeps are the simulator's cache sizes", "[runner][kv]") {
  // After a prefill and after every decode step, the live entries over all caches equal
  // the simulator's kv_entries per layer times its caches: sliding windows keep w - 1,
  // PHD its origins plus the hidden keys still visible (CSWA across a chunk boundary),
  // looped caches per iteration or shared.
  model::Backbone sliding = tiny_dense(4);
  sliding.layers[1] = {model::AttentionKind::sliding, 40};
  model::Backbone mirror = sliding;
  mirror.kv_mirror_layers = 1;
  const char* designs[] = {
      "{}",
      R"({"hd": {"n": 3, "layers": ["full", "local", "intra", "intra"], "window": 50}})",
      R"({"phd": {"K": 3}})",
      R"({"phd": {"K": 3, "variant": "swa", "W": 16}})",
      R"({"phd": {"K": 3, "variant": "cswa", "W": 5, "C": 64}})",
      R"({"phd": {"K": 4, "variant": "cswa", "W": 16, "C": 64}})",
      R"({"vwn": {"m": 2, "n": 3}})",
      R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 3}})",
      R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 3, "kv": "shared"}})",
  };
  auto expected = [](const model::Config& c, std::int64_t context) {
    const simulator::LayerPlan plan = simulator::plan_layers(c.effective, c.design.method);
    double entries = 0;
    for (int g = 0; g < plan.count; ++g) {
      const simulator::LayerGroupPlan& gp = plan.groups[static_cast<std::size_t>(g)];
      entries += gp.kv_caches * model::kv_entries(c.design.method, gp.view, context);
    }
    return entries;
  };
  std::vector<model::Config> configs;
  for (const char* d : designs) configs.push_back(make(sliding, d));
  configs.push_back(make(mirror, R"({"hd": {"n": 2, "layers": ["full", "local", "intra", "intra"], "window": 7,
                                      "kv_mirror": true}})"));
  // Chunked layers keep the current chunk's entries (chunk 43: boundaries at 129 and inside the decode steps).
  configs.push_back(make(tiny_attn_variants(43), "{}"));
  configs.push_back(make(tiny_attn_variants(43), R"({"hd": {"n": 2}})"));
  for (const model::Config& c : configs) {
    INFO(model::to_json(c.design).dump());
    Model m = build(c);
    const auto t = tokens(131);
    const std::int64_t prompt = 126;  // decode steps cross the chunk boundary at 128
    m.runner->prefill(std::span(t.data(), static_cast<std::size_t>(prompt)), 131);
    CHECK(static_cast<double>(m.runner->kv_entries()) == expected(c, prompt));
    for (std::int64_t i = prompt; i < 131; ++i) {
      m.runner->decode_step(t[static_cast<std::size_t>(i)]);
      INFO("context " << i + 1);
      CHECK(static_cast<double>(m.runner->kv_entries()) == expected(c, i + 1));
    }
  }
}

}  // namespace hdlab::executor::testing

namespace hdlab::executor::testing {

TEST_CASE("the runner's layer program: a node list per layer run, the profile's FLOPs and the KV it keeps",
          "[runner][flops][program]") {
  // Looped, per-iteration KV: prelude 1, recurrent 2 x 3, coda 1 -> 8 runs, 8 caches.
  const model::Config c =
      make(tiny_dense(4), R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 3}})");
  Model m = build(c);
  const auto t = tokens(21);
  m.runner->prefill(std::span(t.data(), 20), 21);
  const model::PassProgram& p = m.runner->last_program();
  const std::vector<model::LayerRun> runs = model::layer_runs(c.design.method, c.effective.num_layers);
  REQUIRE(p.runs.size() == runs.size());
  REQUIRE(runs.size() == 8);
  const double entry_bytes = 2 * 2 * 8 * 4;  // K and V of 2 heads of 8, f32
  double kv_written = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    CHECK(p.runs[i].run.layer == runs[i].layer);
    CHECK(p.runs[i].run.iteration == runs[i].iteration);
    CHECK(p.runs[i].run.cache_slot == runs[i].cache_slot);
    kv_written += model::node(p.runs[i].ops, OpKind::attention).cost.kv_bytes_written;
  }
  // every prompt position of every cache, as the runner keeps them
  CHECK(m.runner->kv_entries() == 8 * 20);
  CHECK(kv_written == 8 * 20 * entry_bytes);
  const StepProfile& prof = m.runner->last_profile();
  for (int k = 0; k < model::op_kind_count; ++k) {
    const auto kind = static_cast<OpKind>(k);
    INFO(model::to_string(kind));
    CHECK(prof.op_total(kind).flops == p.op_total(kind).flops);
  }
  CHECK(p.op_total(OpKind::qkv_proj).flops == 8 * 2 * 20 * 32 * (32 + 2 * 16));

  // A decode step: one row per run, reading the 20 cached keys and its own.
  m.runner->decode_step(t[20]);
  const model::PassProgram& d = m.runner->last_program();
  REQUIRE(d.runs.size() == 8);
  for (const model::RunOps& r : d.runs) {
    const model::OpNode& att = model::node(r.ops, OpKind::attention);
    CHECK(att.cost.kv_bytes_read == 21 * entry_bytes);
    CHECK(att.cost.kv_bytes_written == entry_bytes);
    CHECK(att.cost.flops == 4 * 8 * 4 * 21);
  }
  CHECK(m.runner->last_profile().flops_total() == d.total().flops);
}

}  // namespace hdlab::executor::testing
