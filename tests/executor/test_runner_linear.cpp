// The runner on today's backbones: Gated DeltaNet linear-attention layers (Qwen3-Next) in
// every phase and under HD and PHD (executor/README.md "Linear attention under the
// designs"), HD's states on Mamba-2 layers too (Nemotron-H, "Mamba-2 and single-sublayer
// blocks"), the gated attention output and the gated shared expert, and gpt-oss's expert
// FFN (router and expert biases, the clamped SwiGLU) with its output bias.
// Tolerances: kSameFunction (2e-5 of the largest logit) for one function computed in two
// association orders (cached decode against the full forward, layouts); exact (0) where
// the ops are the same; 1e-3 the least a change of function must move the logits.
#include "runner_test_support.hpp"

namespace hdlab::executor::testing {

namespace {

RunOptions layout(model::Layout l) {
  RunOptions o;
  o.layout = l;
  return o;
}

// The two hybrids HD's linear-layer semantics are checked on: Qwen3-Next-shaped (Gated
// DeltaNet, partial RoPE) and Nemotron-H-shaped (Mamba-2, single sublayers, no positions).
std::vector<model::Backbone> hybrids() { return {tiny_hybrid(), tiny_nemotron_h()}; }

// An HD layer-kind list for `b`: intra, full, full, intra, full, ... (JSON).
std::string mixed_kinds(const model::Backbone& b, const char* first = "intra", const char* second = "full") {
  std::string out = "[";
  for (std::int64_t l = 0; l < b.num_layers; ++l)
    out += std::string(l ? ", " : "") + "\"" + (l % 3 == 0 ? first : second) + "\"";
  return out + "]";
}

}  // namespace

TEST_CASE("a Gated DeltaNet layer's cached decode equals its full forward", "[runner][linear]") {
  // One linear layer over 140 tokens: a prefill of 70 in chunks of 64 (a partial chunk),
  // then 70 steps carrying the recurrent state and the conv history.
  check_decode_matches_train(make(tiny_linear(1), "{}"), 140, 70);
  // The hybrid: linear layers between gated attention layers, MoE with a gated shared expert.
  check_decode_matches_train(make(tiny_hybrid(), "{}"), 17, 6);
  check_decode_matches_train(make(tiny_hybrid(false), "{}"), 17, 1);
}

TEST_CASE("HD n=1 equals the baseline on a hybrid backbone", "[runner][linear][mamba2][hd]") {
  for (const model::Backbone& b : hybrids()) {
    Model base = build(make(b, "{}"));
    const auto t = tokens(13);
    for (const std::string& kinds : {std::string("\"full\""), std::string("\"intra\""), mixed_kinds(b)}) {
      INFO(b.name << " " << kinds);
      Model hd = build(make(b, R"({"hd": {"n": 1, "layers": )" + kinds + "}}"));
      CHECK(rel_diff(train_logits(hd, t), train_logits(base, t)) == 0.0);
      CHECK(rel_diff(decoded_logits(hd, t, 5), decoded_logits(base, t, 5)) == 0.0);
    }
  }
}

TEST_CASE("HD on a hybrid: decode equals the full forward, stream-major equals interleaved",
          "[runner][linear][mamba2][hd]") {
  for (const model::Backbone& b : hybrids())
    for (const std::string& design :
         {std::string(R"({"hd": {"n": 2, "layers": "full"}})"), std::string(R"({"hd": {"n": 3, "layers": "intra"}})"),
          R"({"hd": {"n": 2, "layers": )" + mixed_kinds(b) + R"(, "rope": "token_index"}})",
          R"({"hd": {"n": 3, "layers": )" + mixed_kinds(b, "full", "intra") + "}}"}) {
      INFO(b.name << " " << design);
      const model::Config c = make(b, design);
      Model inter = build(c, 9, layout(model::Layout::interleaved)),
            major = build(c, 9, layout(model::Layout::stream_major));
      const auto t = tokens(15);
      CHECK(rel_diff(train_logits(major, t), train_logits(inter, t)) < kSameFunction);
      check_decode_matches_train(c, 15, 6, layout(model::Layout::interleaved));
      check_decode_matches_train(c, 15, 6, layout(model::Layout::stream_major));
    }
}

TEST_CASE("a linear layer as a KV-mirror source: decode equals the full forward", "[runner][linear][hd]") {
  // Layer 3 (attention) takes its K/V from layer 0's input, layer 0 being Gated DeltaNet;
  // under HD's KV mirror only the final stream runs from layer 3 on.
  model::Backbone b = tiny_hybrid();
  b.kv_mirror_layers = 1;
  check_decode_matches_train(make(b, "{}"), 13, 5);
  for (model::Layout l : {model::Layout::interleaved, model::Layout::stream_major})
    check_decode_matches_train(make(b, R"({"hd": {"n": 2, "layers": ["intra", "full", "full", "full"], "kv_mirror": true}})"),
                               13, 5, layout(l));
}

TEST_CASE("HD intra-stream linear layers keep n independent states", "[runner][linear][mamba2][hd]") {
  // Every layer intra, token-index RoPE: the final stream is the baseline run on its own
  // with table E_{n-1}, the linear layers included (one state per stream).
  for (const model::Backbone& b : hybrids())
    for (model::Layout l : {model::Layout::interleaved, model::Layout::stream_major}) {
      INFO(b.name << " " << model::to_string(l));
      const model::Config hd = make(b, R"({"hd": {"n": 3, "layers": "intra", "rope": "token_index"}})");
      const auto t = tokens(12);
      Model h = build(hd, 5, layout(l));
      TableOfStream final_table(5, 2);
      Model base = build(make(b, "{}"), final_table);
      CHECK(rel_diff(train_logits(h, t), train_logits(base, t)) < kSameFunction);
      CHECK(rel_diff(decoded_logits(h, t, 4), decoded_logits(base, t, 4)) < kSameFunction);
    }
}

TEST_CASE("HD cross-stream linear layers run one state over the interleaved sequence",
          "[runner][linear][mamba2][hd]") {
  // Linear layers only (Gated DeltaNet, Mamba-2; no positions anywhere) and one table for
  // every stream: HD n=2 with full layers over tokens a b c is the baseline over a a b b c
  // c, its final stream the baseline's odd positions; intra layers are not that.
  for (const model::Backbone& b : {tiny_linear(2), tiny_mamba(2)}) {
    INFO(b.name);
    const auto t = tokens(9);
    std::vector<std::int32_t> doubled;
    for (auto x : t) doubled.insert(doubled.end(), {x, x});
    RandomWeights random(4);
    Model base = build(make(b, "{}"), random);
    const auto base_logits = train_logits(base, doubled);
    std::vector<float> odd;
    for (std::size_t i = 1; i < doubled.size(); i += 2) {
      const auto row = rows_of(base_logits, b.padded_vocab(), static_cast<std::int64_t>(i), 1);
      odd.insert(odd.end(), row.begin(), row.end());
    }
    SameTables same(4), same_again(4);
    Model full = build(make(b, R"({"hd": {"n": 2, "layers": "full"}})"), same);
    Model intra = build(make(b, R"({"hd": {"n": 2, "layers": "intra"}})"), same_again);
    CHECK(rel_diff(train_logits(full, t), odd) < kSameFunction);
    CHECK(rel_diff(train_logits(intra, t), odd) > 1e-3);
  }
}

TEST_CASE("PHD on linear layers: origins leave the states to the origins, all_copies write them",
          "[runner][linear][phd]") {
  // Linear layers only: under "origins" the origin rows compute exactly what the baseline
  // computes (hidden copies read the states, never write them); under "all_copies" they
  // do not.
  const model::Backbone b = tiny_linear(2);
  const auto t = tokens(10);
  Model base = build(make(b, "{}"), 6);
  const auto want = hidden_after(base, t, 1);
  const std::int64_t D = b.hidden;
  for (const char* state : {"origins", "all_copies"}) {
    INFO(state);
    Model phd = build(make(b, std::string(R"({"phd": {"K": 3, "linear_state": ")") + state + "\"}}"), 6);
    std::vector<std::int64_t> pos;
    const auto got = hidden_after(phd, t, 1, &pos);
    std::vector<float> origins(want.size());
    for (std::size_t r = 0; r < pos.size(); ++r)
      if (pos[r] % 3 == 0)
        std::copy_n(got.begin() + static_cast<std::ptrdiff_t>(r) * D, D, origins.begin() + pos[r] / 3 * D);
    if (std::string(state) == "origins") CHECK(rel_diff(origins, want) < kSameFunction);
    else CHECK(rel_diff(origins, want) > 1e-3);
  }
}

TEST_CASE("PHD on a hybrid: decode equals the full forward, every variant, layout and linear_state",
          "[runner][linear][phd]") {
  const model::Backbone b = tiny_hybrid();
  for (const char* state : {"origins", "all_copies"})
    for (const char* variant :
         {R"("K": 3)", R"("K": 2, "variant": "swa", "W": 3)", R"("K": 3, "variant": "cswa", "W": 2, "C": 4)"}) {
      const model::Config c =
          make(b, std::string(R"({"phd": {)") + variant + R"(, "linear_state": ")" + state + "\"}}");
      check_decode_matches_train(c, 13, 6, layout(model::Layout::phd_split));
      check_decode_matches_train(c, 13, 6, layout(model::Layout::interleaved));
    }
  // all_copies: the prefill computes every copy of every token; origins: plain PHD's tail
  Model all = build(make(b, R"({"phd": {"K": 3, "linear_state": "all_copies"}})"));
  Model origins = build(make(b, R"({"phd": {"K": 3}})"));
  const auto t = tokens(9);
  all.runner->prefill(t, 10);
  origins.runner->prefill(t, 10);
  CHECK(all.runner->last_profile().rows == 27);
  CHECK(origins.runner->last_profile().rows == 9 + 2);
}

TEST_CASE("growth of a hybrid: grown layers keep their source's mixer, width growth at alpha 0 is the base",
          "[runner][linear][growth]") {
  const model::Backbone b = tiny_hybrid();
  const auto t = tokens(11);
  RandomWeights base_weights(7);
  Model base = build(make(b, "{}"), base_weights);
  const auto base_logits = train_logits(base, t);
  const model::Config wide = make(b, R"({"growth": {"width_factor": 2}})");
  GrownWeights widened(wide, base_weights, 5, true);
  Model w = build(wide, widened);
  CHECK(rel_diff(train_logits(w, t), base_logits) < kSameFunction);
  for (const char* mode : {"interpose", "stack"}) {
    INFO(mode);
    const model::Config deep = make(b, std::string(R"({"growth": {"depth_factor": 2, "depth_mode": ")") + mode + "\"}}");
    const std::vector<std::int64_t> src = model::grown_layer_sources(b.num_layers, *deep.design.growth);
    for (std::int64_t l = 0; l < deep.effective.num_layers; ++l)
      CHECK(deep.effective.mixer(l) == b.mixer(src[static_cast<std::size_t>(l)]));
    GrownWeights deepened(deep, base_weights, 5, true);
    Model d = build(deep, deepened);
    CHECK(std::isfinite(train_logits(d, t)[0]));
    check_decode_matches_train(deep, 11, 4);
  }
}

namespace {

// Weights of a gated model built from an ungated one's (same seed): each head's gate rows
// of q_proj zero (sigmoid 0.5 on every attention output) and o_proj doubled; the shared
// expert's gate zero (0.5) and its down_proj doubled. The gated model then computes what
// the ungated one does, up to float rounding - if the runner reads q_proj's per-head
// [query | gate] rows as HF stores them.
class GatesAtHalf : public WeightSource {
 public:
  GatesAtHalf(std::uint64_t seed, std::int64_t heads, std::int64_t hd) : random_(seed), heads_(heads), hd_(hd) {}
  std::vector<float> values(const WeightSpec& spec) override {
    const std::string& n = spec.name;
    auto ends = [&](const std::string& s) {
      return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
    };
    if (ends("self_attn.q_proj.weight")) {
      WeightSpec base = spec;
      base.shape[0] /= 2;
      const std::vector<float> q = random_.values(base);
      const std::int64_t D = spec.shape[1];
      std::vector<float> out(static_cast<std::size_t>(spec.shape[0] * D), 0.0f);
      for (std::int64_t h = 0; h < heads_; ++h)
        std::copy_n(q.begin() + h * hd_ * D, hd_ * D, out.begin() + 2 * h * hd_ * D);
      return out;
    }
    if (ends("shared_expert_gate.weight")) return std::vector<float>(static_cast<std::size_t>(spec.shape[1]), 0.0f);
    std::vector<float> v = random_.values(spec);
    if (ends("o_proj.weight") || ends("shared_experts.0.down_proj.weight"))
      for (auto& x : v) x *= 2;
    return v;
  }

 private:
  RandomWeights random_;
  std::int64_t heads_, hd_;
};

}  // namespace

TEST_CASE("the gated attention output and the gated shared expert read HF's layouts", "[runner][linear]") {
  model::Backbone gated = tiny_moe(model::RouterKind::softmax, 2);
  gated.attention_output_gate = true;
  gated.moe->shared_expert_gate = true;
  model::Backbone plain = tiny_moe(model::RouterKind::softmax, 2);
  GatesAtHalf half(8, gated.num_heads, gated.head_dim);
  RandomWeights random(8);
  Model g = build(make(gated, "{}"), half), p = build(make(plain, "{}"), random);
  const auto t = tokens(11);
  CHECK(rel_diff(train_logits(g, t), train_logits(p, t)) < kSameFunction);
  // a live gate changes the function
  Model live = build(make(gated, "{}"), 8);
  CHECK(rel_diff(train_logits(live, t), train_logits(p, t)) > 1e-3);
}

}  // namespace hdlab::executor::testing
