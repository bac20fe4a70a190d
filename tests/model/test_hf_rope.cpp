// HF RoPE scaling read into the Backbone: each bundled config with a scaling fills
// RopeScaling with its numbers, and the note says the executor applies it.
#include "hf_test_support.hpp"

#include "hdlab/model/rope.hpp"

using namespace hf_test;

TEST_CASE("HF rope_scaling fills the backbone's RoPE scaling, type by type", "[hf][rope]") {
  using K = RopeScalingKind;
  // DeepSeek-V2-Lite (v5 rope_parameters): YaRN 40 over 4096, mscale 0.707 both; the MLA
  // softmax scale gains (0.0707 ln 40 + 1)^2.
  const Backbone ds = hf("deepseek-v2-lite-chat");
  CHECK(ds.rope_scaling.kind == K::yarn);
  CHECK(ds.rope_scaling.factor == 40);
  CHECK(ds.rope_scaling.original_context == 4096);
  CHECK(ds.rope_scaling.mscale == 0.707);
  CHECK(ds.rope_scaling.mscale_all_dim == 0.707);
  CHECK(ds.rope_scaling.beta_fast == 32);
  CHECK(ds.rope_scaling.beta_slow == 1);
  CHECK(ds.rope_scaling.truncate);
  const RotaryFrequencies f = rotary_frequencies(ds, ds.rope_theta, 0);
  CHECK(f.inv_freq.size() == 32);  // qk_rope_head_dim 64
  CHECK(f.cos_sin_factor == 1);    // mscale / mscale_all_dim
  const double m = 0.1 * 0.707 * std::log(40.0) + 1;
  CHECK(f.softmax_factor == Approx(m * m).epsilon(1e-12));
  CHECK(contains(ds.assumptions.at("rope_scaling"), "MLA softmax scale multiplied by 1.58963"));
  CHECK(contains(ds.assumptions.at("rope_scaling"), "the executor applies it"));
  // Llama 3.1: llama3 bands.
  const Backbone llama = hf("llama-3.1-8b");
  CHECK(llama.rope_scaling.kind == K::llama3);
  CHECK(llama.rope_scaling.factor == 8);
  CHECK(llama.rope_scaling.original_context == 8192);
  CHECK(llama.rope_scaling.low_freq_factor == 1);
  CHECK(llama.rope_scaling.high_freq_factor == 4);
  CHECK_FALSE(llama.rope_scaling.full_attention_only);
  // gpt-oss: YaRN 32 untruncated, no mscale keys.
  const Backbone oss = hf("gpt-oss-20b");
  CHECK(oss.rope_scaling.kind == K::yarn);
  CHECK(oss.rope_scaling.factor == 32);
  CHECK_FALSE(oss.rope_scaling.truncate);
  CHECK(oss.rope_scaling.mscale == 0);
  // Phi-4-mini: LongRoPE over 48 pairs (partial RoPE 96 dims), the original context from the
  // top-level original_max_position_embeddings and factor 131072 / 4096 = 32.
  const Backbone phi = hf("phi-4-mini-instruct");
  CHECK(phi.rope_scaling.kind == K::longrope);
  CHECK(phi.rope_scaling.short_factor.size() == 48);
  CHECK(phi.rope_scaling.long_factor.size() == 48);
  CHECK(phi.rope_scaling.short_factor == hf_json("phi-4-mini-instruct")["rope_scaling"]["short_factor"]
                                             .get<std::vector<double>>());
  CHECK(phi.rope_scaling.original_context == 4096);
  CHECK(phi.rope_scaling.factor == 32);
  // Gemma 3 4B: linear 8 on its global layers only; Qwen3-8B: none.
  const Backbone gemma = hf("gemma-3-4b-it");
  CHECK(gemma.rope_scaling.kind == K::linear);
  CHECK(gemma.rope_scaling.factor == 8);
  CHECK(gemma.rope_scaling.full_attention_only);
  CHECK(hf("qwen3-8b").rope_scaling == RopeScaling{});
  // Every one survives the backbone JSON round trip.
  for (const Backbone* b : {&ds, &llama, &oss, &phi, &gemma}) {
    INFO(b->name);
    CHECK(parse_backbone(to_json(*b)).rope_scaling == b->rope_scaling);
  }
}

TEST_CASE("HF rope_scaling: transformers' readings of absent and zero keys", "[hf][rope]") {
  Json j = hf_json("qwen3-8b");
  // beta_fast / beta_slow of 0 are transformers' defaults (its `or`); a zero attention
  // factor would erase the rotation: refused.
  j["rope_scaling"] = Json::parse(R"({"rope_type": "yarn", "factor": 4, "beta_fast": 0, "beta_slow": 0,
                                      "original_max_position_embeddings": 32768})");
  Backbone b = import_hf_config(j);
  CHECK(b.rope_scaling.beta_fast == 32);
  CHECK(b.rope_scaling.beta_slow == 1);
  CHECK(b.rope_scaling.original_context == 32768);
  j["rope_scaling"] = Json::parse(R"({"rope_type": "yarn", "factor": 4, "attention_factor": 0})");
  const Caught e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/rope_scaling/attention_factor");
  CHECK(e.reason == "must be > 0");
  // "default" is plain RoPE.
  j["rope_scaling"] = Json::parse(R"({"rope_type": "default"})");
  CHECK(import_hf_config(j).rope_scaling == RopeScaling{});
  // dynamic: the factor; its base grows past max_position_embeddings (40960).
  j["rope_scaling"] = Json::parse(R"({"rope_type": "dynamic", "factor": 2})");
  b = import_hf_config(j);
  CHECK(b.rope_scaling.kind == RopeScalingKind::dynamic);
  CHECK(b.rope_scaling.factor == 2);
  const RotaryFrequencies below = rotary_frequencies(b, b.rope_theta, 40960);
  CHECK(below.inv_freq == plain_inv_freq(b.rope_theta, 128));
  CHECK(rotary_frequencies(b, b.rope_theta, 40961).inv_freq[1] < below.inv_freq[1]);
}
