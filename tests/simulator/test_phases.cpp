// Phases worked out by hand on tiny configs: decode KV traffic per design and layer kind,
// PHD prefill per variant, KV-cache sizes, training activations per recompute policy.
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/simulator/memory.hpp"
#include "hdlab/simulator/phases.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using model::OpKind;

namespace {

struct Model {
  model::Config config;
  ModelShape shape;
  LayerPlan plan;
  std::unique_ptr<PassCost> pass = std::make_unique<PassCost>();
  explicit Model(const model::Json& backbone, const std::string& design = "{}")
      : config(fixtures::config(backbone, design)),
        shape(model_shape(config.effective, config.design.method)),
        plan(plan_layers(config.effective, config.design.method)) {}
  // The group whose representative is `layer` (its first layer).
  const LayerGroupCost& group_of(std::int64_t layer) const {
    for (int g = 0; g < pass->count; ++g)
      if (pass->groups[static_cast<std::size_t>(g)].plan.first_layer == layer)
        return pass->groups[static_cast<std::size_t>(g)];
    FAIL("no group starts at layer " << layer);
    return pass->groups[0];
  }
};

// Entry size of the tiny backbones: K and V of one KV head of 4, 2 bytes each.
constexpr double kEntryBytes = 2 * 1 * 4 * 2;

}  // namespace

TEST_CASE("baseline decode step, by hand", "[phases][decode]") {
  Model m(fixtures::tiny_dense());
  decode_pass(m.config.design.method, m.shape, m.plan, 2, 5, PassOptions{}, *m.pass);
  const LayerGroupCost& g = m.pass->groups[0];
  // 2 sequences, context 5: each query reads 6 entries (5 cached + its own)
  CHECK(g.work.pairs_exact == 6);
  CHECK(row(g.ops, OpKind::attention).cost.kv_bytes_read == 2 * 6 * kEntryBytes);
  CHECK(row(g.ops, OpKind::attention).cost.kv_bytes_written == 2 * 1 * kEntryBytes);
  CHECK(row(g.ops, OpKind::attention).cost.flops == 4 * 4 * 2 * 6 * 2);
  CHECK(row(g.ops, OpKind::qkv_proj).cost.weight_bytes == (64 + 64) * 2);  // read once for the batch
  CHECK(row(m.pass->outside, OpKind::lm_head).cost.flops == 2 * 2 * 8 * 10);  // one logit row per sequence
}

TEST_CASE("HD decode: n query rows, KV reads per layer kind", "[phases][decode][hd]") {
  // n = 2, context 5 tokens = 10 cached positions; this step appends positions 10 and 11.
  Model m(fixtures::tiny_sliding(), R"({"hd": {"n": 2, "layers": ["intra", "full", "local", "intra"], "window": 4}})");
  for (model::Layout layout : {model::Layout::interleaved, model::Layout::stream_major}) {
    PassOptions o;
    o.layout = layout;
    decode_pass(m.config.design.method, m.shape, m.plan, 1, 5, o, *m.pass);
    const LayerGroupCost& intra = m.group_of(0);
    const LayerGroupCost& full = m.group_of(1);
    const LayerGroupCost& local = m.group_of(2);
    CHECK(full.work.rows_q == 2);
    CHECK(full.work.pairs_exact == 11 + 12);  // stream k's query at t = 10 + k sees t + 1 keys
    CHECK(full.work.kv_read == 12);           // all entries once, shared by the two rows
    CHECK(full.work.pairs_executed == 2 * 12);
    CHECK(intra.work.pairs_exact == 2 * 6);   // each stream: its own 5 + 1 entries
    CHECK(intra.work.kv_read == 12);          // all entries once in total
    CHECK(intra.work.pairs_executed == (layout == model::Layout::stream_major ? 12 : 2 * 12));
    CHECK(local.work.pairs_exact == 4 + 4);   // window 4 over expanded positions
    CHECK(local.work.kv_read == 5);           // positions 7..11
    CHECK(row(full.ops, OpKind::attention).cost.kv_bytes_written == 2 * kEntryBytes);
  }
  // KV cache: n entries per token in full/intra layers; in local ones the w - 1 = 3
  // positions the next token's rows still see (with its own they make the 5 read above).
  CHECK(kv_cache_bytes_per_seq(m.config.design.method, m.shape, m.plan, 5) == (10 + 10 + 3 + 10) * kEntryBytes);
}

TEST_CASE("HD with KV mirror: mirrored layers query the final stream only", "[phases][hd][mirror]") {
  Model m(fixtures::tiny_moe(), R"({"hd": {"n": 4}})");  // layer 3 mirrors layer 0
  PassOptions final_only;
  final_only.mirror_final_only_decode = true;  // an engine with a kernel for the uneven step
  decode_pass(m.config.design.method, m.shape, m.plan, 1, 3, final_only, *m.pass);
  const LayerGroupCost& mirrored = m.group_of(3);
  CHECK(mirrored.plan.sig.final_queries_only);
  CHECK(mirrored.work.rows_q == 1);
  CHECK(mirrored.work.rows_kv == 4);
  CHECK(mirrored.work.pairs_exact == 4 * 3 + 4);  // the final stream's query sees all 16 positions
  // Without it (the default) the mirrored layer decodes all 4 rows like the others:
  // stream k at position 12 + k sees 13 + k keys.
  decode_pass(m.config.design.method, m.shape, m.plan, 1, 3, PassOptions{}, *m.pass);
  CHECK(m.group_of(3).work.rows_q == 4);
  CHECK(m.group_of(3).work.rows_kv == 4);
  CHECK(m.group_of(3).work.pairs_exact == 13 + 14 + 15 + 16);
  // training: FFN on L rows only, K/V projected on all n L positions
  train_forward_pass(m.config, m.shape, m.plan, 1, 5, PassOptions{}, *m.pass);
  const LayerGroupCost& t = m.group_of(3);
  CHECK(t.work.rows_q == 5);
  CHECK(t.work.rows_kv == 20);
  CHECK(row(t.ops, OpKind::qkv_proj).cost.flops == 2 * (5 * 64 + 20 * 64));
  CHECK(row(t.ops, OpKind::shared_experts).cost.flops == 5 * (2 * 3 * 8 * 10 + 5 * 10));
  // the saving: fewer activations kept than running every stream there
  Model full(fixtures::tiny_moe(), R"({"hd": {"n": 4, "kv_mirror": false}})");
  train_forward_pass(full.config, full.shape, full.plan, 1, 5, PassOptions{}, *full.pass);
  CHECK(saved_activation_bytes(*m.pass, m.shape, Recompute::selective, 1) <
        saved_activation_bytes(*full.pass, full.shape, Recompute::selective, 1));
}

TEST_CASE("PHD decode and KV per variant", "[phases][decode][phd]") {
  // K 3, context 5 tokens. Plain: origin sees 6 keys, copies 1 and 2 see 5 origins + 2, 3 own copies.
  Model plain(fixtures::tiny_dense(), R"({"phd": {"K": 3}})");
  decode_pass(plain.config.design.method, plain.shape, plain.plan, 1, 5, PassOptions{}, *plain.pass);
  CHECK(plain.pass->groups[0].work.pairs_exact == 6 + 7 + 8);
  CHECK(plain.pass->groups[0].work.kv_read == 5 + 3);
  // SWA W 2: copy 1 also sees the 2 hidden keys of token 4, copy 2 the last one of them
  Model swa(fixtures::tiny_dense(), R"({"phd": {"K": 3, "variant": "swa", "W": 2}})");
  decode_pass(swa.config.design.method, swa.shape, swa.plan, 1, 5, PassOptions{}, *swa.pass);
  CHECK(swa.pass->groups[0].work.pairs_exact == 6 + 7 + 8 + 2 + 1);
  CHECK(swa.pass->groups[0].work.kv_read == 5 + 3 + 2);
  // CSWA C 5: token 5 starts a chunk, so no earlier hidden keys
  Model cswa(fixtures::tiny_dense(), R"({"phd": {"K": 3, "variant": "cswa", "W": 2, "C": 5}})");
  decode_pass(cswa.config.design.method, cswa.shape, cswa.plan, 1, 5, PassOptions{}, *cswa.pass);
  CHECK(cswa.pass->groups[0].work.pairs_exact == 6 + 7 + 8);
  // Every variant writes the K/V of all 3 copies: the hidden copies attend to each other.
  for (const Model* m : {&plain, &swa, &cswa}) {
    CHECK(m->pass->groups[0].work.kv_written == 3);
    CHECK(row(m->pass->groups[0].ops, OpKind::attention).cost.kv_bytes_written == 3 * kEntryBytes);
  }

  Model base(fixtures::tiny_dense());
  const auto kv = [](const Model& m, std::int64_t c) {
    return kv_cache_bytes_per_seq(m.config.design.method, m.shape, m.plan, c);
  };
  CHECK(kv(plain, 1000) == kv(base, 1000));  // plain keeps the vanilla cache
  CHECK(kv(swa, 1000) == kv(base, 1000) + 2 * 2 * kEntryBytes);  // + W hidden keys, both layers
  // CSWA keeps the hidden keys of the tokens already in the next token's chunk, at most W:
  // none at a chunk boundary, then 2 per token, capped at W = 8.
  Model chunked(fixtures::tiny_dense(), R"({"phd": {"K": 3, "variant": "cswa", "W": 8, "C": 5}})");
  CHECK(kv(chunked, 1000) == kv(base, 1000));
  CHECK(kv(chunked, 1001) == kv(base, 1001) + 2 * 2 * kEntryBytes);
  CHECK(kv(chunked, 1003) == kv(base, 1003) + 2 * 6 * kEntryBytes);
  CHECK(kv(chunked, 1004) == kv(base, 1004) + 2 * 8 * kEntryBytes);
  CHECK(kv(chunked, 1005) == kv(base, 1005));
  // ... which is what a decode step reads besides the origins and the step's own copies.
  decode_pass(chunked.config.design.method, chunked.shape, chunked.plan, 1, 1003, PassOptions{}, *chunked.pass);
  CHECK(chunked.pass->groups[0].work.kv_read == 1003 + 6 + 3);
}

TEST_CASE("PHD prefill per variant, against the mask predicate", "[phases][prefill][phd]") {
  const std::int64_t L = 7;
  for (const char* design : {R"({"phd": {"K": 3}})", R"({"phd": {"K": 3, "variant": "swa", "W": 2}})",
                             R"({"phd": {"K": 3, "variant": "cswa", "W": 2, "C": 3}})"}) {
    INFO(design);
    Model m(fixtures::tiny_dense(), design);
    const auto& phd = std::get<model::PhdDesign>(m.config.design.method);
    prefill_pass(m.config, m.shape, m.plan, 1, L, PassOptions{}, *m.pass);
    // Which rows run: plain the origins and the last token's copies; SWA everything;
    // CSWA the origins and the copies of the last chunk's tokens (token 6 alone here).
    const std::int64_t first_hidden_token =
        phd.variant == model::PhdVariant::plain ? L - 1 : phd.variant == model::PhdVariant::swa ? 0 : 6;
    const model::MaskSpec mask = model::layer_mask(m.config, 0, L);
    double rows = 0, pairs = 0;
    for (std::int64_t q = 0; q < L * 3; ++q) {
      const std::int64_t token = q / 3, copy = q % 3;
      if (copy > 0 && token < first_hidden_token) continue;
      rows += 1;
      for (std::int64_t k = 0; k < L * 3; ++k) pairs += model::visible(mask, q, k) ? 1 : 0;
    }
    const LayerGroupCost& g = m.pass->groups[0];
    CHECK(g.work.rows_q == rows);
    CHECK(g.work.pairs_exact == pairs);
    CHECK(g.work.pairs_executed >= pairs);
    CHECK(row(m.pass->outside, OpKind::lm_head).rows == 1);  // logits for the last position only
    // The cache keeps the 7 origins and (SWA, CSWA) the W = 2 hidden keys token 7's copies
    // see: SWA token 6's, CSWA too (token 6 is in token 7's chunk, 6..8).
    CHECK(g.work.kv_written == (phd.variant == model::PhdVariant::plain ? 7 : 7 + 2));
  }
}

TEST_CASE("PHD partial prefill: executed pairs over the computed rows only", "[phases][prefill][phd]") {
  // Plain, L 150, K 3 in [origins | hidden] order with 64 x 64 tiles: 152 rows, causal
  // over them (the last token's copies see every origin and their own earlier copies),
  // so blocks of 64, 64, 24 rows meet 1, 2, 3 key blocks: 64 * 64 + 64 * 128 + 24 * 152.
  Model m(fixtures::tiny_dense(), R"({"phd": {"K": 3}})");
  PassOptions o;
  o.layout = model::Layout::phd_split;
  o.tile_q = o.tile_k = 64;
  prefill_pass(m.config, m.shape, m.plan, 1, 150, o, *m.pass);
  const LayerGroupCost& g = m.pass->groups[0];
  CHECK(g.work.rows_q == 152);
  CHECK(g.work.pairs_exact == 152 * 153 / 2);
  CHECK(g.work.pairs_executed == 64 * 64 + 64 * 128 + 24 * 152);
}

TEST_CASE("sliding-window caches keep w - 1 entries - decode reads w", "[phases][kv]") {
  // tiny_sliding: layers 0, 2 sliding (window 3), 1, 3 full.
  Model m(fixtures::tiny_sliding());
  CHECK(kv_cache_bytes_per_seq(m.config.design.method, m.shape, m.plan, 10) == (2 + 10 + 2 + 10) * kEntryBytes);
  CHECK(kv_cache_bytes_per_seq(m.config.design.method, m.shape, m.plan, 1) == (1 + 1 + 1 + 1) * kEntryBytes);
  decode_pass(m.config.design.method, m.shape, m.plan, 1, 10, PassOptions{}, *m.pass);
  CHECK(m.group_of(0).work.kv_read == 3);  // the 2 kept and the step's own
  CHECK(m.group_of(1).work.kv_read == 11);
  // A prefill writes what the cache keeps: 2 entries in sliding layers, all 10 in full ones.
  prefill_pass(m.config, m.shape, m.plan, 1, 10, PassOptions{}, *m.pass);
  CHECK(m.group_of(0).work.kv_written == 2);
  CHECK(m.group_of(1).work.kv_written == 10);
  CHECK(m.pass->total().kv_bytes_written == (2 + 10 + 2 + 10) * kEntryBytes);
}

TEST_CASE("looped decode: sequential passes, per-iteration or shared KV", "[phases][looped]") {
  Model per(fixtures::tiny_sliding(), R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 3}})");
  Model shared(fixtures::tiny_sliding(),
               R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 3, "kv": "shared"}})");
  Model base(fixtures::tiny_sliding());
  for (Model* m : {&per, &shared, &base}) decode_pass(m->config.design.method, m->shape, m->plan, 1, 10, PassOptions{}, *m->pass);
  // 1 + 3 * 2 + 1 = 8 layer passes, each reading its weights again
  const double layer_weights = (64 + 64 + 64 + 3 * 8 * 16 + 2 * 8) * 2;
  CHECK(per.pass->total().weight_bytes - row(per.pass->outside, OpKind::lm_head).cost.weight_bytes -
            row(per.pass->outside, OpKind::final_norm).cost.weight_bytes -
            row(per.pass->outside, OpKind::embedding).cost.weight_bytes ==
        8 * layer_weights);
  CHECK(per.pass->total().kv_bytes_read == shared.pass->total().kv_bytes_read);  // same reads per pass
  // cache: layers 0, 2 sliding (window 3: 2 kept), 1, 3 full; recurrent layers 1, 2
  const auto kv = [](const Model& m) { return kv_cache_bytes_per_seq(m.config.design.method, m.shape, m.plan, 10); };
  CHECK(kv(per) == (2 + 3 * 10 + 3 * 2 + 10) * kEntryBytes);
  CHECK(kv(shared) == (2 + 10 + 2 + 10) * kEntryBytes);
  CHECK(kv(shared) == kv(base));
  // A prefill writes each cache once: per iteration 3 times, shared once (by the last iteration).
  for (Model* m : {&per, &shared}) prefill_pass(m->config, m->shape, m->plan, 1, 10, PassOptions{}, *m->pass);
  CHECK(per.pass->total().kv_bytes_written == kv(per));
  CHECK(shared.pass->total().kv_bytes_written == kv(shared));
}

TEST_CASE("training activations per recompute policy, by hand", "[phases][memory]") {
  Model m(fixtures::tiny_dense());
  PassOptions o;
  o.tile_q = o.tile_k = 128;
  train_forward_pass(m.config, m.shape, m.plan, 1, 4, o, *m.pass);
  // Kept per layer (elements, 4 rows): norm in 32, qkv in 32, qk-norm in 48, RoPE in 48,
  // attention in q 32 + k,v 32, o_proj in 32, FFN norm in 32, gate/up in 32, SiLU in 128,
  // down in 64, attention out 32 -> 544 elements, 1088 bytes.
  const double layer = 544 * 2;
  const double outside = (32 + 32 + 4 * 10) * 2;  // final norm in, head in, logits
  CHECK(saved_activation_bytes(*m.pass, m.shape, Recompute::selective, 1) == 2 * layer + outside);
  // A fused (flash) kernel never writes the probabilities: none keeps what selective keeps.
  CHECK(saved_activation_bytes(*m.pass, m.shape, Recompute::none, 1) == 2 * layer + outside);
  // Unfused attention writes them and none keeps them: H 2 x 16 pairs (4 x 4 scores) x 2 bytes.
  PassOptions unfused = o;
  unfused.unfused = true;
  Model u(fixtures::tiny_dense());
  train_forward_pass(u.config, u.shape, u.plan, 1, 4, unfused, *u.pass);
  CHECK(saved_activation_bytes(*u.pass, u.shape, Recompute::none, 1) -
            saved_activation_bytes(*u.pass, u.shape, Recompute::selective, 1) == 2 * (2 * 16 * 2));
  // full keeps each layer's input [4, 8] plus one layer's set while it is recomputed
  CHECK(saved_activation_bytes(*m.pass, m.shape, Recompute::full, 1) == 2 * 4 * 8 * 2 + layer + outside);

  // VWN adds 2 e eta (n/m) D per token and layer (the published 4 eta (n/m) D at bf16).
  Model v(fixtures::tiny_dense(), R"({"vwn": {"m": 2, "n": 4}})");
  train_forward_pass(v.config, v.shape, v.plan, 1, 4, o, *v.pass);
  const double extra = saved_activation_bytes(*v.pass, v.shape, Recompute::selective, 1) -
                       saved_activation_bytes(*v.pass, v.shape, Recompute::selective, 0);
  CHECK(extra == 2 * 4 * (4 * 2.0 * 8));  // 2 layers x 4 tokens x 4 eta r D bytes
}

TEST_CASE("training state memory with ZeRO sharding, by hand", "[phases][memory]") {
  Model m(fixtures::tiny_dense());
  train_forward_pass(m.config, m.shape, m.plan, 1, 4, PassOptions{}, *m.pass);
  const model::ParamCounts p = model::count_params(m.config);
  REQUIRE(p.total == 1368);
  Scenario s;
  s.parallel.dp = 4;
  TrainMemory mem = train_memory(p, m.shape, *m.pass, s);
  CHECK(mem.weight_bytes == 1368 * 2);
  CHECK(mem.grad_bytes == 1368 * 2);
  CHECK(mem.optimizer_bytes == 1368 * 12);
  s.train.sharding = OptimizerSharding::optimizer;
  CHECK(train_memory(p, m.shape, *m.pass, s).optimizer_bytes == 1368 * 12 / 4.0);
  CHECK(train_memory(p, m.shape, *m.pass, s).grad_bytes == 1368 * 2);
  s.train.sharding = OptimizerSharding::weights;
  mem = train_memory(p, m.shape, *m.pass, s);
  CHECK(mem.weight_bytes == 1368 * 2 / 4.0);
  CHECK(mem.grad_bytes == 1368 * 2 / 4.0);
  s.parallel.tp = 2;  // activations split over tp ranks too
  CHECK(train_memory(p, m.shape, *m.pass, s).activation_bytes ==
        saved_activation_bytes(*m.pass, m.shape, Recompute::selective, 1) / 2);
}

TEST_CASE("sequence parallelism splits the residual stream over the tp ranks, by hand", "[phases][memory][sp]") {
  Model m(fixtures::tiny_dense());
  train_forward_pass(m.config, m.shape, m.plan, 1, 4, PassOptions{}, *m.pass);
  const model::ParamCounts p = model::count_params(m.config);
  // Residual-stream inputs kept (bytes): per layer the two norms' [4, 8] inputs, 2 x 64;
  // two layers, and the final norm's input: 320. Full recomputation: each layer's input
  // (64) twice, one layer's norm inputs (128) while it reruns, the final norm's input.
  CHECK(residual_stream_activation_bytes(*m.pass, m.shape, Recompute::selective) == 320);
  CHECK(residual_stream_activation_bytes(*m.pass, m.shape, Recompute::full) == 2 * 64 + 128 + 64);
  Scenario s = parse_scenario(model::Json::parse(R"({"parallel": {"tp": 2, "sequence_parallel": false}})"));
  const double saved = saved_activation_bytes(*m.pass, m.shape, Recompute::selective, 1);
  // Without: each of the 2 ranks keeps its half of the rest and the whole 320.
  CHECK(train_memory(p, m.shape, *m.pass, s).activation_bytes == (saved - 320) / 2 + 320);
  s.parallel.sequence_parallel = true;
  CHECK(train_memory(p, m.shape, *m.pass, s).activation_bytes == saved / 2);

  // Time: a norm's rows split over tp with it, whole on every rank without; a projection
  // splits its weight either way.
  const OpRow& norm = row(m.pass->groups[0].ops, OpKind::attn_norm);
  const OpRow& qkv = row(m.pass->groups[0].ops, OpKind::qkv_proj);
  const Sharding with{2, 1, 1, true}, without{2, 1, 1, false};
  CHECK(device_cost(OpKind::attn_norm, norm, with).act_bytes_in == norm.cost.act_bytes_in / 2);
  CHECK(device_cost(OpKind::attn_norm, norm, without).act_bytes_in == norm.cost.act_bytes_in);
  CHECK(device_cost(OpKind::attn_norm, norm, without).flops == norm.cost.flops);
  CHECK(device_cost(OpKind::qkv_proj, qkv, without).flops == qkv.cost.flops / 2);

  // At tp = 1 there is nothing to split: asking for it is refused, and the JSON leaves it out.
  CHECK(fixtures::error_of([] { parse_scenario(model::Json::parse(R"({"parallel": {"sequence_parallel": true}})")); }) ==
        "/scenario/parallel/sequence_parallel: needs tp > 1: with one tensor-parallel rank there is nothing to split");
  CHECK_FALSE(to_json(Scenario{})["parallel"].contains("sequence_parallel"));
  CHECK(to_json(s)["parallel"]["sequence_parallel"] == true);
  s.parallel.sequence_parallel = false;
  CHECK(parse_scenario(to_json(s)) == s);
}

TEST_CASE("baseline and HD prefill, by hand", "[phases][prefill]") {
  // tiny_dense, one prompt of 4 tokens: the training forward's layers (5904 FLOPs each,
  // see test_ops) but logits for the last position only, and the cache written.
  Model m(fixtures::tiny_dense());
  PassOptions exact;
  exact.count_executed = false;
  prefill_pass(m.config, m.shape, m.plan, 1, 4, exact, *m.pass);
  CHECK(m.pass->total().flops == 2 * 5904 + 4 * 8 + 2 * 8 * 10);
  CHECK(m.pass->total().kv_bytes_written == 2 * 4 * kEntryBytes);
  // HD n = 2 on the same prompt: 8 positions per layer, causal over them (36 pairs),
  // both tables looked up, still one logit row.
  Model hd(fixtures::tiny_dense(), R"({"hd": {"n": 2}})");
  prefill_pass(hd.config, hd.shape, hd.plan, 1, 4, exact, *hd.pass);
  const LayerGroupCost& g = hd.pass->groups[0];
  CHECK(g.work.rows_q == 8);
  CHECK(g.work.pairs_exact == 8 * 9 / 2);
  CHECK(row(g.ops, OpKind::attention).cost.flops == 4 * 4 * 2 * 36);
  CHECK(row(hd.pass->outside, OpKind::embedding).cost.act_bytes_out == 8 * 8 * 2);
  CHECK(row(hd.pass->outside, OpKind::lm_head).cost.flops == 2 * 8 * 10);
  CHECK(hd.pass->total().kv_bytes_written == 2 * 8 * kEntryBytes);
}
