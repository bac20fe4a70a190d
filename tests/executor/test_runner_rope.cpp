// Scaled RoPE in the runner (model::rotary_frequencies through Backend::rope): a cached
// decode still equals the full forward under every scaling type (MLA's YaRN with its
// softmax factor included), the scaling changes the function, and a full-attention-only
// scaling leaves sliding layers on plain RoPE. The MLA layer against DeepSeek's own
// interleaved definition: test_runner_hf_layers.cpp.
#include "runner_test_support.hpp"

namespace hdlab::executor::testing {

namespace {

using K = model::RopeScalingKind;

// Scalings that bind at the tests' 14 tokens: contexts of 8 positions.
model::RopeScaling scaling(K kind) {
  model::RopeScaling s;
  s.kind = kind;
  s.factor = 4;
  if (kind == K::yarn || kind == K::llama3 || kind == K::longrope) s.original_context = 8;
  if (kind == K::yarn) s.mscale_all_dim = 1;  // MLA: softmax x (0.1 ln 4 + 1)^2
  if (kind == K::llama3) {
    s.low_freq_factor = 1;
    s.high_freq_factor = 4;
  }
  if (kind == K::longrope) {
    s.short_factor = {1.0, 1.5, 2.0, 2.5};  // tiny_dense rotates 8 dims: 4 pairs
    s.long_factor = {1.0, 3.0, 5.0, 7.0};
  }
  return s;
}

model::Backbone scaled(model::Backbone b, K kind) {
  b.rope_scaling = scaling(kind);
  b.max_context = 8;
  if (b.mla && kind == K::longrope) {  // MLA rotates qk_rope_head_dim = 4: 2 pairs
    b.rope_scaling.short_factor.resize(2);
    b.rope_scaling.long_factor.resize(2);
  }
  return b;
}

}  // namespace

TEST_CASE("scaled RoPE: decode equals the full forward, and the scaling changes the function", "[runner][rope]") {
  for (K kind : {K::linear, K::dynamic, K::yarn, K::llama3, K::longrope}) {
    INFO(model::to_string(kind));
    for (const model::Backbone& plain : {tiny_dense(), tiny_mla()}) {
      INFO(plain.name);
      const model::Backbone b = scaled(plain, kind);
      check_decode_matches_train(make(b, "{}"), 14, 5);
      check_decode_matches_train(make(b, R"({"hd": {"n": 2, "layers": "full"}})"), 14, 5);
      Model with = build(make(b, "{}"), 3), without = build(make(plain, "{}"), 3);
      const auto t = tokens(14);
      CHECK(rel_diff(train_logits(with, t), train_logits(without, t)) > 1e-4);
    }
  }
}

TEST_CASE("scaled RoPE: dynamic and LongRoPE are plain within their context", "[runner][rope]") {
  // Sequences of at most 8 tokens (max_context and the original context): dynamic keeps
  // the base; LongRoPE takes short_factor, so set to ones (and an attention factor of 1)
  // it is plain RoPE. Same weights, same logits.
  const model::Backbone plain = tiny_dense();
  model::Backbone dyn = scaled(plain, K::dynamic), lr = scaled(plain, K::longrope);
  lr.rope_scaling.short_factor.assign(4, 1.0);
  lr.rope_scaling.attention_factor = 1;
  const auto t = tokens(8);
  Model p = build(make(plain, "{}"), 4), d = build(make(dyn, "{}"), 4), l = build(make(lr, "{}"), 4);
  const auto want = train_logits(p, t);
  CHECK(train_logits(d, t) == want);
  CHECK(train_logits(l, t) == want);
  // One token more and both rotate differently.
  const auto t9 = tokens(9);
  const auto want9 = train_logits(p, t9);
  CHECK(rel_diff(train_logits(d, t9), want9) > 1e-5);
  CHECK(rel_diff(train_logits(l, t9), want9) > 1e-5);
}

TEST_CASE("scaled RoPE on full-attention layers only: sliding layers rotate plainly", "[runner][rope]") {
  // Every layer sliding: a full-attention-only scaling changes nothing (OLMo 3's and Gemma 3's
  // rule); on a mix it changes the function, and decode still equals the full forward.
  model::Backbone sliding = tiny_dense();
  for (auto& l : sliding.layers) l = model::LayerAttention{model::AttentionKind::sliding, 6};
  model::Backbone only_full = scaled(sliding, K::yarn);
  only_full.rope_scaling.full_attention_only = true;
  const auto t = tokens(14);
  Model p = build(make(sliding, "{}"), 5), s = build(make(only_full, "{}"), 5);
  CHECK(train_logits(s, t) == train_logits(p, t));
  model::Backbone mixed = only_full;
  mixed.layers[1] = model::LayerAttention{};
  model::Backbone mixed_plain = sliding;
  mixed_plain.layers[1] = model::LayerAttention{};
  Model m = build(make(mixed, "{}"), 5), mp = build(make(mixed_plain, "{}"), 5);
  CHECK(rel_diff(train_logits(m, t), train_logits(mp, t)) > 1e-4);
  check_decode_matches_train(make(mixed, "{}"), 14, 5);
}

}  // namespace hdlab::executor::testing
