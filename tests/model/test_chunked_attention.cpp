// Chunked local attention (Llama 4) and the other 2025 attention variants in the model:
// the chunked mask against brute force (pairs and tiles), HD's stream-shared chunking and
// the refusals (PHD, HD intra/local on chunked layers), decode work and cache sizes
// against the masks, and the backbone fields' JSON I/O and errors by pointer.
#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <string>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/designs/interface.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/model/schedule.hpp"

using namespace hdlab::model;

namespace {

MaskSpec chunked(std::int64_t tokens, std::int64_t copies, std::int64_t chunk) {
  MaskSpec m;
  m.kind = MaskSpec::Kind::causal;
  m.tokens = tokens;
  m.copies = copies;
  m.chunk = chunk;
  return m;
}

bool same(const TileCount& a, const TileCount& b) {
  return a.visible == b.visible && a.full == b.full && a.total == b.total && a.executed_pairs == b.executed_pairs;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// 6 layers: 3 chunked (chunk 4) + 1 full NoPE, repeated; MoE on every second layer.
const char* kChunkedBackbone = R"({
  "name": "tiny-llama4", "num_layers": 4, "hidden_size": 64, "num_heads": 4, "num_kv_heads": 2,
  "intermediate_size": 96, "vocab_size": 128,
  "moe": {"num_experts": 4, "top_k": 1, "expert_intermediate_size": 32, "num_shared_experts": 1,
          "router": "sigmoid", "layer_step": 2},
  "attention": {"layers": ["chunked", "chunked", "chunked", "full"], "chunk_size": 4, "nope_layers": [3]}
})";

Config config_of(const char* backbone, const char* design) {
  return parse_config(Json{{"backbone", Json::parse(backbone)}, {"design", Json::parse(design)}});
}

}  // namespace

TEST_CASE("chunked masks: the predicate on a hand-drawn grid", "[mask][chunked]") {
  // 7 tokens, chunks of 3: rows 0..2, 3..5, 6 each causal inside their chunk.
  const std::vector<std::uint8_t> g = materialize(chunked(7, 1, 3), Layout::interleaved);
  const char* want[] = {"#......", "##.....", "###....", "...#...", "...##..", "...###.", "......#"};
  for (std::int64_t r = 0; r < 7; ++r) {
    std::string row;
    for (std::int64_t c = 0; c < 7; ++c) row += g[static_cast<std::size_t>(r * 7 + c)] ? '#' : '.';
    CHECK(row == want[r]);
  }
  // HD, 2 streams: token 2 (positions 4, 5) opens a new chunk of 2 tokens.
  const MaskSpec hd = chunked(3, 2, 2);
  CHECK(visible(hd, 3, 0));   // token 1 stream 1 sees token 0 stream 0: same chunk
  CHECK(!visible(hd, 4, 3));  // token 2 does not see token 1
  CHECK(visible(hd, 5, 4));
}

TEST_CASE("chunked masks: pairs and tiles equal brute force on random masks", "[mask][chunked]") {
  std::mt19937_64 rng(15);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  for (int i = 0; i < 600; ++i) {
    const std::int64_t copies = i % 3 == 0 ? 1 : pick(1, 5);
    const MaskSpec m = chunked(pick(1, 90), copies, pick(1, 40));
    INFO("L=" << m.tokens << " copies=" << m.copies << " chunk=" << m.chunk);
    CHECK(visible_pairs(m) == visible_pairs_brute(m));
    const std::int64_t Bq = pick(1, 70), Bk = pick(1, 70);
    INFO("tile " << Bq << "x" << Bk);
    CHECK(same(visible_tiles(m, Layout::interleaved, Bq, Bk), visible_tiles_brute(m, Layout::interleaved, Bq, Bk)));
    if (copies == 1)  // every layout is the logical order
      CHECK(same(visible_tiles(m, Layout::stream_major, Bq, Bk), visible_tiles_brute(m, Layout::stream_major, Bq, Bk)));
  }
  // A chunk longer than the sequence is the causal mask.
  MaskSpec causal = chunked(50, 2, 0);
  CHECK(visible_pairs(chunked(50, 2, 64)) == visible_pairs(causal));
  CHECK(same(visible_tiles(chunked(50, 2, 64), Layout::interleaved, 16, 16),
             visible_tiles(causal, Layout::interleaved, 16, 16)));
  // Long sequences: 131072 tokens in chunks of 8192 = 16 triangles of 8192.
  CHECK(visible_pairs(chunked(131072, 1, 8192)) == 16 * (8192LL * 8193 / 2));
  const TileCount t = visible_tiles(chunked(131072, 1, 8192), Layout::interleaved, 128, 128);
  CHECK(t.visible == 16 * (64 * 65 / 2));  // chunks align with the tiles: 16 triangles of 64 blocks
  CHECK(t.full == 16 * (64 * 63 / 2));
}

TEST_CASE("chunked masks: refusals name the field", "[mask][chunked]") {
  MaskSpec m = chunked(10, 1, 4);
  m.kind = MaskSpec::Kind::intra;
  CHECK(error_of([&] { validate(m); }) ==
        "/mask/chunk: chunked local attention applies to a causal mask with every row a query, got intra");
  CHECK(error_of([&] { visible_tiles(chunked(10, 2, 4), Layout::stream_major, 4, 4); }) ==
        "/mask/layout: chunked masks with several copies per token are counted in interleaved order only, got "
        "stream_major");
}

TEST_CASE("designs on chunked layers: HD stream-shared chunking, PHD refused", "[mask][chunked][hd]") {
  const Config base = config_of(kChunkedBackbone, R"({"baseline": {}})");
  CHECK(layer_mask(base, 0, 10).chunk == 4);
  CHECK(layer_mask(base, 3, 10).chunk == 0);
  // HD: chunked layers run "full" within the chunk, every stream of the chunk's tokens.
  const Config hd = config_of(kChunkedBackbone, R"({"hd": {"n": 2}})");
  const MaskSpec m = layer_mask(hd, 1, 10);
  CHECK(m.kind == MaskSpec::Kind::causal);
  CHECK(m.chunk == 4);
  CHECK(m.copies == 2);
  CHECK(visible_pairs(m) == 2 * (8 * 9 / 2) + 4 * 5 / 2);  // chunks of 8 positions: 8, 8, 4
  // A rule object maps chunked layers to full too; the rest follows the rule.
  const Config rule = config_of(kChunkedBackbone, R"({"hd": {"n": 2, "layers": {"rest": "intra"}}})");
  CHECK(layer_mask(rule, 0, 10).kind == MaskSpec::Kind::causal);
  CHECK(layer_mask(rule, 3, 10).kind == MaskSpec::Kind::intra);
  CHECK(best_layout(rule, 64, 16, 16) == Layout::interleaved);
  CHECK(error_of([] { config_of(kChunkedBackbone, R"({"hd": {"n": 2, "layers": ["intra", "full", "full", "intra"]}})"); }) ==
        "/design/hd/layers/0: layer 0 is a chunked backbone layer: HD runs it \"full\" within its chunk (every "
        "stream of the chunk's tokens); intra is not modelled");
  CHECK(error_of([] { config_of(kChunkedBackbone, R"({"phd": {"K": 2}})"); }) ==
        "/design/phd: PHD on a backbone with chunked attention layers (3 of them) is not modelled: the PHD mask has "
        "no chunk boundary");
}

TEST_CASE("chunked layers: decode work and cache entries follow the mask", "[chunked][decode]") {
  for (const char* design : {R"({"baseline": {}})", R"({"hd": {"n": 3}})"}) {
    const Config c = config_of(kChunkedBackbone, design);
    const LayerAttentionRole role = layer_role(c.design.method, c.effective, 0);
    const std::int64_t n = copies_per_token(c.design.method);
    for (std::int64_t ctx = 0; ctx < 13; ++ctx) {
      INFO(design << " context " << ctx);
      // The decode step of token ctx: its rows of the mask over ctx + 1 tokens.
      const MaskSpec m = layer_mask(c, 0, ctx + 1);
      std::int64_t pairs = 0, keys_seen = 0;
      for (std::int64_t q = ctx * n; q < (ctx + 1) * n; ++q)
        for (std::int64_t k = 0; k <= q; ++k) pairs += visible(m, q, k) ? 1 : 0;
      for (std::int64_t k = 0; k < ctx * n; ++k) keys_seen += visible(m, (ctx + 1) * n - 1, k) ? 1 : 0;
      const DecodeAttention w = decode_attention(c.design.method, role, static_cast<double>(ctx), Layout::interleaved, false);
      CHECK(w.pairs_exact == static_cast<double>(pairs));
      CHECK(w.kv_read == static_cast<double>(keys_seen + n));
      CHECK(kv_entries(c.design.method, role, static_cast<double>(ctx)) == static_cast<double>(keys_seen));
    }
  }
}

TEST_CASE("attention variants: JSON round trip, parameters and errors by pointer", "[config][chunked]") {
  const Backbone b = parse_backbone(Json::parse(kChunkedBackbone));
  CHECK(b.layers[0].kind == AttentionKind::chunked);
  CHECK(b.layers[0].chunk == 4);
  CHECK(b.layers[3].nope);
  CHECK(b.num_chunked_layers() == 3);
  CHECK_FALSE(b.is_moe_layer(0));
  CHECK(b.is_moe_layer(1));
  CHECK(b.is_moe_layer(3));
  CHECK(parse_backbone(to_json(b)) == b);
  const ParamCounts p = count_params(make_config(b, Design{}));
  const std::int64_t D = 64;
  CHECK(p.dense_ffn == 2 * 3 * D * 96);
  CHECK(p.routed_experts == 2 * 4 * 3 * D * 32);
  CHECK(p.shared_experts == 2 * 3 * D * 32);
  CHECK(p.router == 2 * 4 * D);

  Json sinks = Json::parse(kChunkedBackbone);
  sinks["attention_sinks"] = true;
  sinks["moe"]["router_bias"] = true;
  sinks["moe"]["expert_bias"] = true;
  const ParamCounts q = count_params(make_config(parse_backbone(sinks), Design{}));
  CHECK(q.attention - p.attention == 4 * 4);       // H sink logits per layer
  CHECK(q.router - p.router == 2 * 4);             // E per MoE layer
  CHECK(q.routed_experts - p.routed_experts == 2 * 4 * (2 * 32 + D));

  auto bad = [](const std::function<void(Json&)>& edit) {
    Json j = Json::parse(kChunkedBackbone);
    edit(j);
    return error_of([&] { parse_backbone(j); });
  };
  CHECK(bad([](Json& j) { j["attention"].erase("chunk_size"); }) ==
        "/backbone/attention/chunk_size: is required (>= 1) when a layer is chunked");
  CHECK(bad([](Json& j) { j["attention"]["layers"] = "full"; }) ==
        "/backbone/attention/chunk_size: is set but no layer is chunked");
  CHECK(bad([](Json& j) { j["attention"]["nope_layers"] = {3, 3}; }) ==
        "/backbone/attention/nope_layers/1: layer 3 is already listed");
  CHECK(bad([](Json& j) { j["attention"]["nope_layers"] = {4}; }) ==
        "/backbone/attention/nope_layers/0: must be <= 3, got 4");
  CHECK(bad([](Json& j) { j["moe"]["layer_step"] = 5; }) == "/backbone/moe/layer_step: must be <= 4, got 5");
  CHECK(bad([](Json& j) { j.erase("intermediate_size"); }) == "/backbone/intermediate_size: is required");
  CHECK(bad([](Json& j) { j["moe"]["swiglu_alpha"] = 1.7; }) ==
        "/backbone/moe/swiglu_alpha: is set but swiglu_limit is 0 (plain SwiGLU has no alpha)");
  CHECK(bad([](Json& j) { j["attention_sinks"] = 1; }).find("/backbone/attention_sinks") == 0);
}

TEST_CASE("layer program: sink, router and expert bias, clamped SwiGLU and NoPE costs", "[layer_program][chunked]") {
  Json j = Json::parse(kChunkedBackbone);
  j["attention_sinks"] = true;
  j["moe"]["router_bias"] = true;
  j["moe"]["expert_bias"] = true;
  j["moe"]["swiglu_limit"] = 7.0;
  const Backbone b = parse_backbone(j);
  const Backbone plain = parse_backbone(Json::parse(kChunkedBackbone));
  const OpDims s = op_dims(b, Method{}), p = op_dims(plain, Method{});
  LayerWork w;
  w.seqs = 1;
  w.rows_q = w.rows_kv = 10;
  w.pairs_exact = w.pairs_executed = 40;
  OpNodes with{}, without{};
  const double N = 10, D = 64, E = 4, F = 32, H = 4;
  // Layer 1: chunked, MoE.
  layer_ops(s, layer_features(b, 1), w, true, with);
  layer_ops(p, layer_features(plain, 1), w, true, without);
  const auto diff = [&](OpKind k) { return node(with, k).cost.flops - node(without, k).cost.flops; };
  CHECK(node(with, OpKind::attention).params == H);  // the sinks: read, their softmax work uncounted
  CHECK(node(with, OpKind::attention).cost.weight_bytes == H * 2);
  CHECK(diff(OpKind::attention) == 0);
  CHECK(diff(OpKind::router) == N * E);  // a bias add per logit
  CHECK(node(with, OpKind::router).params - node(without, OpKind::router).params == E);
  // top-1 token copies: biases 2F + D each, the clamped activation 10 FLOPs per element instead of 5
  CHECK(diff(OpKind::experts) == N * (2 * F + D) + N * 5 * F);
  CHECK(node(with, OpKind::experts).params - node(without, OpKind::experts).params == E * (2 * F + D));
  CHECK(node(with, OpKind::rope).cost.flops > 0);
  // Layer 3: NoPE (no rotary op), MoE; layer 0: dense.
  layer_ops(s, layer_features(b, 3), w, true, with);
  CHECK(node(with, OpKind::rope).cost.flops == 0);
  CHECK(node(with, OpKind::experts).cost.flops > 0);
  layer_ops(s, layer_features(b, 0), w, true, with);
  CHECK(node(with, OpKind::experts).cost.flops == 0);
  CHECK(node(with, OpKind::ffn_gate_up).cost.flops == 2 * N * D * 2 * 96);
}
