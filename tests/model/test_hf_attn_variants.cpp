// HF import of the 2025 attention variants: gpt-oss (model_type gpt_oss: attention sinks,
// alternating sliding/full layers, q/k/v/o biases, biased MoE with a clamped SwiGLU) and
// their parameter totals against the published figures; refusals by pointer.
#include "hf_test_support.hpp"

using namespace hf_test;

namespace {

// One gpt-oss layer (transformers' GptOssDecoderLayer): q/k/v/o with biases, sinks [H],
// router [E, D] + bias [E], experts gate_up [E, D, 2F] + [E, 2F], down [E, F, D] + [E, D],
// two RMSNorms of D.
i64 gpt_oss_layer(i64 D, i64 H, i64 G, i64 hd, i64 E, i64 F) {
  const i64 attn = D * H * hd + 2 * D * G * hd + H * hd * D + H * hd + 2 * G * hd + D + H;
  const i64 experts = E * (D * 2 * F + 2 * F + F * D + D);
  return attn + E * D + E + experts + 2 * D;
}

}  // namespace

TEST_CASE("gpt-oss-20b config.json: sinks, sliding/full alternation, biased MoE, 20.91B", "[hf][moe][gpt_oss]") {
  const Backbone b = hf("gpt-oss-20b");
  CHECK(b.source == "HuggingFace config.json (model_type gpt_oss)");
  CHECK(b.name == "GptOssForCausalLM");
  CHECK(b.num_layers == 24);
  CHECK(b.hidden == 2880);
  CHECK(b.num_heads == 64);
  CHECK(b.num_kv_heads == 8);
  CHECK(b.head_dim == 64);
  CHECK(b.attention_bias);
  CHECK(b.output_bias);
  CHECK(b.attention_sinks);
  CHECK(b.sink_params() == 64);
  CHECK_FALSE(b.qk_norm);
  REQUIRE(b.layers.size() == 24);
  for (std::size_t l = 0; l < 24; ++l) {
    INFO("layer " << l);
    CHECK(b.layers[l].kind == (l % 2 == 0 ? AttentionKind::sliding : AttentionKind::full));
    CHECK(b.layers[l].window == (l % 2 == 0 ? 128 : 0));
  }
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 32);
  CHECK(b.moe->top_k == 4);
  CHECK(b.moe->expert_intermediate == 2880);
  CHECK(b.moe->num_shared_experts == 0);
  CHECK(b.moe->first_dense_layers == 0);
  CHECK(b.moe->layer_step == 1);
  CHECK(b.moe->router_bias);
  CHECK(b.moe->expert_bias);
  CHECK(b.moe->swiglu_limit == 7.0);
  CHECK(b.moe->swiglu_alpha == 1.702);
  CHECK(b.intermediate == 0);
  CHECK(b.vocab_size == 201088);
  CHECK_FALSE(b.tie_embeddings);
  CHECK(b.rope_theta == 150000.0);
  CHECK(b.norm_eps == 1e-5);
  CHECK(b.max_context == 131072);
  CHECK(contains(b.assumptions.at("dtype"), "mxfp4"));
  CHECK(contains(b.assumptions.at("moe"), "alpha 1.702"));

  const i64 D = 2880, V = 201088;
  const ParamCounts p = params_of(b);
  CHECK(p.total == 24 * gpt_oss_layer(D, 64, 8, 64, 32, 2880) + D + 2 * V * D);
  CHECK(p.total == 20914757184);
  // The gpt-oss model card (OpenAI, "gpt-oss-120b & gpt-oss-20b Model Card", Aug 2025,
  // arXiv:2508.10925, table 1): gpt-oss-20b 20.91B total, 3.61B active per token, the
  // unembedding counted as active.
  CHECK(within(p.total, 20.91e9, 0.001));
  CHECK(within(p.active_per_token + V * D, 3.61e9, 0.001));
}

TEST_CASE("gpt-oss-120b config.json: 36 layers of 128 experts, 116.83B", "[hf][moe][gpt_oss]") {
  const Backbone b = hf("gpt-oss-120b");
  CHECK(b.num_layers == 36);
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 128);
  CHECK(b.num_sliding_layers() == 18);
  const i64 D = 2880, V = 201088;
  const ParamCounts p = params_of(b);
  CHECK(p.total == 36 * gpt_oss_layer(D, 64, 8, 64, 128, 2880) + D + 2 * V * D);
  CHECK(p.total == 116829156672);
  // The same model card, table 1: 116.83B total, 5.13B active; its breakdown: MLP 114.71B,
  // attention 0.96B, embedding + unembedding 1.16B.
  CHECK(within(p.total, 116.83e9, 0.001));
  CHECK(within(p.active_per_token + V * D, 5.13e9, 0.001));
  CHECK(within(p.router + p.routed_experts, 114.71e9, 0.001));
  CHECK(within(p.attention, 0.96e9, 0.01));
  CHECK(within(p.embedding(), 1.16e9, 0.01));
}

TEST_CASE("gpt_oss imports refuse what they cannot model, by pointer", "[hf][gpt_oss][errors]") {
  Json j = hf_json("gpt-oss-20b");
  j["experts_per_token"] = 2;
  Caught e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/experts_per_token");
  CHECK(contains(e.reason, "num_experts_per_tok"));

  j = hf_json("gpt-oss-20b");
  j["layer_types"].erase(j["layer_types"].size() - 1);
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/layer_types");
  CHECK(contains(e.reason, "23 entries"));

  j = hf_json("gpt-oss-20b");
  j["swiglu_limit"] = 0;
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/swiglu_limit");

  // Without layer_types: GptOssConfig's default alternation, recorded.
  j = hf_json("gpt-oss-20b");
  j.erase("layer_types");
  const Backbone b = import_hf_config(j);
  CHECK(b.layers == hf("gpt-oss-20b").layers);
  CHECK(contains(b.assumptions.at("attention"), "even layers sliding"));
}

TEST_CASE("gpt-oss backbone round-trips through hdlab's JSON", "[hf][gpt_oss][roundtrip]") {
  const Backbone b = hf("gpt-oss-20b");
  const Backbone again = parse_backbone(to_json(b));
  CHECK(again == b);
  const Json j = to_json(b);
  CHECK(j["attention_sinks"] == true);
  CHECK(j["moe"]["router_bias"] == true);
  CHECK(j["moe"]["expert_bias"] == true);
  CHECK(j["moe"]["swiglu_limit"] == 7.0);
}

TEST_CASE("Llama-4-Scout config.json: chunked RoPE layers, NoPE global layers, shared expert, 108.64B", "[hf][moe][llama4]") {
  const Backbone b = hf("llama-4-scout-17b-16e");
  CHECK(b.source == "HuggingFace config.json (model_type llama4, text_config llama4_text)");
  CHECK(b.name == "Llama4ForConditionalGeneration");
  CHECK(b.num_layers == 48);
  CHECK(b.hidden == 5120);
  CHECK(b.num_heads == 40);
  CHECK(b.num_kv_heads == 8);
  CHECK(b.head_dim == 128);
  CHECK_FALSE(b.attention_bias);
  CHECK_FALSE(b.output_bias);
  CHECK_FALSE(b.attention_sinks);
  CHECK_FALSE(b.qk_norm);  // an L2 norm without weights: recorded, no parameters
  CHECK(contains(b.assumptions.at("qk_norm"), "no weight"));
  CHECK(contains(b.assumptions.at("attention"), "attn_temperature_tuning"));
  CHECK(contains(b.assumptions.at("vision_tower"), "vision_config"));
  for (std::size_t l = 0; l < 48; ++l) {
    INFO("layer " << l);
    const bool global = l % 4 == 3;  // no_rope_layers: 1, 1, 1, 0 repeated
    CHECK(b.layers[l].nope == global);
    CHECK(b.layers[l].kind == (global ? AttentionKind::full : AttentionKind::chunked));
    CHECK(b.layers[l].chunk == (global ? 0 : 8192));
  }
  CHECK(b.num_chunked_layers() == 36);
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 16);
  CHECK(b.moe->top_k == 1);
  CHECK(b.moe->expert_intermediate == 8192);
  CHECK(b.moe->num_shared_experts == 1);
  CHECK(b.moe->shared_expert_intermediate == 8192);
  CHECK(b.moe->router == RouterKind::sigmoid);
  CHECK(b.moe->layer_step == 1);
  CHECK(b.intermediate == 0);  // intermediate_size_mlp unused: every layer is MoE
  CHECK(b.vocab_size == 202048);
  CHECK(b.rope_theta == 500000.0);
  CHECK(b.max_context == 262144);

  const i64 D = 5120, V = 202048;
  const i64 attn = D * 40 * 128 + 2 * D * 8 * 128 + 40 * 128 * D;
  const i64 layer = attn + 16 * D + 16 * swiglu(D, 8192) + swiglu(D, 8192) + 2 * D;
  const ParamCounts p = params_of(b);
  CHECK(p.total == 48 * layer + D + 2 * V * D);
  CHECK(p.total == 107769861120);
  // The published 109B ("17B active, 109B total", Meta's Llama 4 model card and the
  // Llama-4-Scout-17B-16E model page) is the multimodal checkpoint: it adds the vision
  // encoder (34 layers of width 1408: q/k/v/o and fc1/fc2 with biases, two LayerNorms) with
  // its patch, class and position embeddings, the pixel-shuffle adapter and the projector
  // to the text model. Shapes from the file's vision_config; the figure is rounded to the
  // billion, so it is matched to its rounding (0.5%), not to 0.1%.
  const i64 W = 1408, Fv = 5632;
  const i64 vision_layer = 4 * (W * W + W) + (W * Fv + Fv) + (Fv * W + W) + 2 * 2 * W;
  const i64 vision = 34 * vision_layer + W /*class*/ + (24 * 24 + 1) * W /*positions*/ + 3 * 14 * 14 * W /*patches*/ +
                     2 * 2 * W /*pre, post norms*/ + 4 * W * 4096 + 4096 * 4096 /*adapter*/ + 4096 * D /*projector*/;
  CHECK(vision == 871932416);
  CHECK(within(p.total + vision, 109e9, 0.005));
}

TEST_CASE("Llama 4 imports refuse what they cannot model, by pointer", "[hf][llama4][errors]") {
  Json j = hf_json("llama-4-scout-17b-16e");
  j["text_config"]["moe_layers"] = {0, 2};
  Caught e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/text_config/moe_layers");
  CHECK(contains(e.reason, "periodic"));

  j = hf_json("llama-4-scout-17b-16e");
  j["text_config"]["no_rope_layers"].erase(0);
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/text_config/no_rope_layers");
  CHECK(contains(e.reason, "47 entries"));

  // Maverick's interleave: every second layer MoE, the others dense of intermediate_size_mlp.
  j = hf_json("llama-4-scout-17b-16e");
  j["text_config"]["interleave_moe_layer_step"] = 2;
  j["text_config"].erase("moe_layers");
  const Backbone b = import_hf_config(j);
  CHECK(b.moe->layer_step == 2);
  CHECK(b.intermediate == 16384);
  CHECK_FALSE(b.is_moe_layer(0));
  CHECK(b.is_moe_layer(1));
  CHECK(params_of(b).dense_ffn == 24 * swiglu(5120, 16384));
}

TEST_CASE("the bundled gpt-oss-20b and llama-4-scout profiles are the imported configs", "[hf][profiles]") {
  for (const auto& [profile, config] : {std::pair<const char*, const char*>{"gpt-oss-20b", "gpt-oss-20b"},
                                        std::pair<const char*, const char*>{"llama-4-scout", "llama-4-scout-17b-16e"}}) {
    INFO(profile);
    const Backbone p = load_backbone(read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/models/" + profile + ".json"));
    Backbone h = hf(config);
    h.name = p.name;
    h.source = p.source;
    h.assumptions = p.assumptions;
    CHECK(p == h);
    CHECK(params_of(p).total == params_of(hf(config)).total);
  }
}
