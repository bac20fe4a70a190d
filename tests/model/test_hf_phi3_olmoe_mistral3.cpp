// HF import of Phi-4 and Phi-4-mini (phi3), OLMoE (olmoe), Mistral Small 3.1 and
// Ministral 3 (mistral3, a multimodal wrapper of mistral / ministral3) and Devstral Small (mistral): the fields each carries, what the
// import assumes, refusals by pointer, and parameter totals against the checkpoints'
// safetensors totals (exact where the figure is a tensor count, not a rounded card figure).
#include <cmath>

#include "hf_test_support.hpp"

using namespace hf_test;

TEST_CASE("Phi-4 config.json: fused projections counted as separate ones, 14,659,507,200 parameters", "[hf]") {
  const Backbone b = hf("phi-4");
  CHECK(b.source == "HuggingFace config.json (model_type phi3)");
  CHECK(b.name == "microsoft/phi-4");
  CHECK(b.num_layers == 40);
  CHECK(b.hidden == 5120);
  CHECK(b.num_heads == 40);
  CHECK(b.num_kv_heads == 10);
  CHECK(b.head_dim == 128);  // hidden / heads, recorded
  CHECK(b.assumptions.count("head_dim") == 1);
  CHECK(b.rotary_dim == 0);  // Phi3Config's partial_rotary_factor 1.0, recorded
  CHECK(contains(b.assumptions.at("rotary_dim"), "no partial_rotary_factor; HuggingFace's phi3 default 1"));
  CHECK(contains(b.assumptions.at("attention"), "qkv_proj and gate_up_proj are fused"));
  CHECK(b.num_sliding_layers() == 0);  // sliding_window null
  CHECK_FALSE(b.attention_bias);
  CHECK_FALSE(b.qk_norm);
  CHECK(b.intermediate == 17920);
  CHECK(b.vocab_size == 100352);
  CHECK_FALSE(b.tie_embeddings);
  CHECK(b.rope_theta == 250000.0);
  CHECK(b.norm_eps == 1e-5);
  CHECK(b.max_context == 16384);
  CHECK(b.assumptions.count("rope_scaling") == 0);  // null

  const i64 D = 5120, V = 100352;
  const ParamCounts p = params_of(b);
  CHECK(p.total == 40 * (gqa_attention(D, 40, 10, 128, false) + swiglu(D, 17920) + 2 * D) + D + 2 * V * D);
  // The Hub's safetensors total for microsoft/phi-4 (huggingface.co/api/models/microsoft/phi-4,
  // "safetensors" total), as recorded in the public kvfit registry (debaditc/kvfit,
  // scripts/build_registry.py: "exact params from HF safetensors") and printed by a public
  // Unsloth fine-tuning log ("Trainable parameters = 14,659,507,200"). The model card rounds
  // to 14B. A tensor count: hdlab's count equals it exactly.
  CHECK(p.total == 14659507200);
  CHECK(within(p.total, 14659507200.0, 0.001));
}

TEST_CASE("Phi-4-mini config.json: partial RoPE 96 of 128, LongRoPE recorded, tied, 3,836,021,760", "[hf]") {
  const Backbone b = hf("phi-4-mini-instruct");
  CHECK(b.num_layers == 32);
  CHECK(b.num_heads == 24);
  CHECK(b.num_kv_heads == 8);
  CHECK(b.head_dim == 128);
  CHECK(b.rotary_dim == 96);  // partial_rotary_factor 0.75
  CHECK(b.rope_dims() == 96);
  CHECK(b.tie_embeddings);
  CHECK(b.vocab_size == 200064);
  CHECK(b.max_context == 131072);
  // sliding_window 262144 on every layer: wider than the native context, but a window all
  // the same (it binds for an HD stream interleaving n x 131072 positions).
  REQUIRE(b.layers.size() == 32);
  for (const auto& l : b.layers) CHECK(l == LayerAttention{AttentionKind::sliding, 262144});
  const std::string& rope = b.assumptions.at("rope_scaling");
  // cos/sin x sqrt(1 + ln(131072 / 4096) / ln(4096)) = 1.19024
  CHECK(contains(rope, "rope_type longrope, factor 32, original context 4096 tokens; short_factor for sequences up to "
                       "4096 positions, long_factor beyond; cos/sin scaled by 1.19024: the executor applies it"));
  CHECK(contains(b.assumptions.at("rotary_dim"), "96 of head_dim 128"));

  const i64 D = 3072, V = 200064;
  const ParamCounts p = params_of(b);
  CHECK(p.total == 32 * (gqa_attention(D, 24, 8, 128, false) + swiglu(D, 8192) + 2 * D) + D + V * D);
  // The Hub's safetensors total for microsoft/Phi-4-mini-instruct, as recorded in the same
  // public kvfit registry (debaditc/kvfit, scripts/build_registry.py); the model card says
  // 3.8B. A tensor count: exact.
  CHECK(p.total == 3836021760);
  CHECK(within(p.total, 3836021760.0, 0.001));
}

TEST_CASE("phi3 fields: LongRoPE lists follow the rotary dims, remote-code switches are refused", "[hf][bad-input]") {
  Json j = hf_json("phi-4-mini-instruct");
  j["partial_rotary_factor"] = 1.0;  // 64 pairs, but the file's lists have 48
  Caught e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/rope_scaling/short_factor");
  CHECK(e.reason == "must be a list of head_dim / 2 = 64 numbers");

  struct Row {
    const char* key;
    Json value;
  };
  const Row rows[] = {{"lm_head_bias", true}, {"mlp_bias", true}, {"full_attn_mod", 2}, {"interpolate_factor", 4}};
  for (const Row& row : rows) {
    INFO(row.key);
    j = hf_json("phi-4-mini-instruct");
    j[row.key] = row.value;
    e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == std::string("/") + row.key);
    CHECK(contains(e.reason, "unsupported"));
  }
  // attention_bias does not change Phi3's shapes (its qkv_proj has no bias): noted, not counted.
  j = hf_json("phi-4");
  j["attention_bias"] = true;
  const Backbone b = import_hf_config(j);
  CHECK_FALSE(b.attention_bias);
  CHECK(contains(b.assumptions.at("attention"), "attention_bias is not read"));
  CHECK(params_of(b).total == params_of(hf("phi-4")).total);
}

TEST_CASE("OLMoE-1B-7B config.json: 64 experts top-8, whole-projection QK-norm, 6,919,161,856", "[hf][moe]") {
  const Backbone b = hf("olmoe-1b-7b-0924");
  CHECK(b.source == "HuggingFace config.json (model_type olmoe)");
  CHECK(b.name == "OlmoeForCausalLM");
  CHECK(b.num_layers == 16);
  CHECK(b.hidden == 2048);
  CHECK(b.num_heads == 16);
  CHECK(b.num_kv_heads == 16);
  CHECK(b.head_dim == 128);
  CHECK(b.qk_norm);
  CHECK(b.qk_norm_whole_projection);  // q_norm [2048], k_norm [2048]
  CHECK_FALSE(b.post_sublayer_norms);  // pre-norm, unlike OLMo 2
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 64);
  CHECK(b.moe->top_k == 8);
  CHECK(b.moe->expert_intermediate == 1024);
  CHECK(b.moe->num_shared_experts == 0);
  CHECK(b.moe->first_dense_layers == 0);
  CHECK(b.moe->router == RouterKind::softmax);
  CHECK(b.intermediate == 0);
  CHECK(b.vocab_size == 50304);
  CHECK_FALSE(b.tie_embeddings);
  CHECK(b.max_context == 4096);
  CHECK(contains(b.assumptions.at("moe"), "norm_topk_prob false"));

  const i64 D = 2048, V = 50304;
  const i64 attn = gqa_attention(D, 16, 16, 128, false) + (D + D) + 2 * D;  // + q_norm, k_norm, 2 norms
  const ParamCounts p = params_of(b);
  CHECK(p.qk_norm == 16 * (2048 + 2048));
  CHECK(p.total == 16 * (attn + 64 * D + 64 * swiglu(D, 1024)) + D + 2 * V * D);
  // The Hub's safetensors total for allenai/OLMoE-1B-7B-0924 at revision 6d84c485, recorded
  // as safetensors_total_params in a public config manifest (WildPino/SiliconLLM,
  // benchmarks/donor_adaptation/configs/_manifest.json). A tensor count: exact.
  CHECK(p.total == 6919161856);
  CHECK(within(p.total, 6919161856.0, 0.001));
  // The OLMoE model card and paper: "1B active, 7B total"; 1.3B active with embeddings.
  CHECK(rounds_to(p.active_per_token + p.embedding(), 1.3e9, 1e8));
  CHECK(p.active_per_token == 16 * (attn + 64 * D + 8 * swiglu(D, 1024)) + D);
}

TEST_CASE("olmoe fields: clip_qkv noted, attention_bias counted, missing expert keys named", "[hf][moe][bad-input]") {
  Json j = hf_json("olmoe-1b-7b-0924");
  j["clip_qkv"] = 8.0;
  j["attention_bias"] = true;  // OlmoeAttention: q, k, v and o all take it
  j["norm_topk_prob"] = true;
  const Backbone b = import_hf_config(j);
  CHECK(contains(b.assumptions.at("attention"), "clip_qkv 8 clamps q, k and v"));
  CHECK(contains(b.assumptions.at("moe"), "renormalised"));
  CHECK((b.attention_bias && b.output_bias));
  // q, k, v (2048 each) and o (2048) biases per layer.
  CHECK(params_of(b).total - params_of(hf("olmoe-1b-7b-0924")).total == 16 * 4 * 2048);
  for (const char* key : {"num_experts", "num_experts_per_tok", "intermediate_size"}) {
    INFO(key);
    j = hf_json("olmoe-1b-7b-0924");
    j.erase(key);
    const Caught e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == std::string("/") + key);
    CHECK(e.reason == "is required");
  }
  j = hf_json("olmoe-1b-7b-0924");
  j["clip_qkv"] = "8";
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/clip_qkv");
}

namespace {

// The Pixtral vision tower and the Mistral 3 projector of a mistral3 config, counted from
// its vision_config by hand (transformers' PixtralVisionModel and Mistral3MultiModalProjector,
// no biases): a patch conv, ln_pre, per layer q/k/v/o + gated MLP + 2 RMSNorms; the projector's
// RMSNorm, patch merger (merge^2 x Dv -> Dv) and two linears Dv -> Dt -> Dt.
i64 pixtral_and_projector(const Json& vision, i64 text_hidden, i64 merge) {
  const auto at = [&](const char* key) { return vision.at(key).get<i64>(); };
  const i64 Dv = at("hidden_size"), F = at("intermediate_size"), L = at("num_hidden_layers");
  const i64 patch = at("patch_size"), channels = at("num_channels");
  const i64 tower = Dv * channels * patch * patch + Dv + L * (4 * Dv * Dv + swiglu(Dv, F) + 2 * Dv);
  const i64 projector = Dv + merge * merge * Dv * Dv + Dv * text_hidden + text_hidden * text_hidden;
  return tower + projector;
}

// A mistral3 checkpoint's count: the text model (L layers of 32 q / 8 KV heads of 128, a
// SwiGLU FFN of F, an untied vocabulary of 131072) is `text`; with the Pixtral tower and
// projector of its vision_config (`vision`) it is the published whole-checkpoint total.
void check_mistral3_total(const Json& j, const Backbone& b, i64 L, i64 D, i64 F, i64 text, i64 vision,
                          i64 published) {
  const i64 V = 131072;
  const ParamCounts p = params_of(b);
  CHECK(p.total == L * (gqa_attention(D, 32, 8, 128, false) + swiglu(D, F) + 2 * D) + D + 2 * V * D);
  CHECK(p.total == text);
  const i64 tower = pixtral_and_projector(j.at("vision_config"), D, j.at("spatial_merge_size").get<i64>());
  CHECK(tower == vision);
  CHECK(p.total + tower == published);
  CHECK(within(p.total + tower, static_cast<double>(published), 0.001));
}

}  // namespace

TEST_CASE("Mistral-Small-3.1 config.json (mistral3): the text model is imported, 23.57B + 0.44B vision", "[hf]") {
  const Json j = hf_json("mistral-small-3.1-24b-instruct-2503");
  const Backbone b = import_hf_config(j);
  CHECK(b.source == "HuggingFace config.json (model_type mistral3, text_config mistral)");
  CHECK(b.name == "Mistral3ForConditionalGeneration");
  CHECK(contains(b.assumptions.at("vision_tower"), "the Pixtral vision tower (vision_config) and the multimodal "
                                                   "projector are ignored"));
  CHECK(b.num_layers == 40);
  CHECK(b.hidden == 5120);
  CHECK(b.num_heads == 32);
  CHECK(b.num_kv_heads == 8);
  CHECK(b.head_dim == 128);  // explicit: not 5120 / 32
  CHECK(b.intermediate == 32768);
  CHECK(b.vocab_size == 131072);
  CHECK_FALSE(b.tie_embeddings);
  CHECK(b.num_sliding_layers() == 0);  // sliding_window null
  CHECK(b.rope_theta == 1e9);
  CHECK(b.max_context == 131072);
  CHECK(b.dtype == DType::bf16);
  CHECK(b.assumptions.count("dtype") == 0);  // torch_dtype on the wrapper

  // Published: 24,011,361,280 for the whole checkpoint (keras-hub's mistral3 presets,
  // "mistral_small_3.1_24b_instruct_2503_en" params; the Hub's safetensors total of the same
  // architecture, Mistral-Small-3.2-24B-Instruct-2506, in the kvfit registry). The text model
  // hdlab counts plus the vision tower and projector of vision_config give it exactly; the
  // card's "24B" is that figure rounded.
  check_mistral3_total(j, b, 40, 5120, 32768, 23572403200, 438958080, 24011361280);
}

TEST_CASE("Devstral-Small (model_type mistral) imports as it is: 23,572,403,200 parameters", "[hf]") {
  // Devstral-Small-2507 is a MistralForCausalLM with Mistral Small 3.1's text shapes: its
  // params.json (dim 5120, 40 layers, head_dim 128, hidden_dim 32768, 32 heads, 8 KV heads,
  // rope_theta 1e9, vocabulary 131072) matches the text_config above key for key, so that
  // text_config, as a standalone model_type mistral config, is Devstral's.
  Json text = hf_json("mistral-small-3.1-24b-instruct-2503").at("text_config");
  text["architectures"] = {"MistralForCausalLM"};
  const Backbone b = import_hf_config(text);
  CHECK(b.source == "HuggingFace config.json (model_type mistral)");
  CHECK(b.assumptions.count("vision_tower") == 0);
  CHECK(b.num_sliding_layers() == 0);
  // model.safetensors.index.json of mistralai/Devstral-Small-2507 (a public mirror,
  // fetchwiki/mistralai-Devstral-Small-2507): metadata total_parameters 23,572,403,200
  // (total_size 47,144,806,400 bytes in bf16). A tensor count: exact.
  CHECK(params_of(b).total == 23572403200);
  CHECK(within(params_of(b).total, 23572403200.0, 0.001));
}

TEST_CASE("Ministral-3-8B config.json (mistral3 wrapping ministral3): 8,489,553,920 + 428,472,320 vision", "[hf]") {
  const Json j = hf_json("ministral-3-8b-instruct-2512");
  const Backbone b = import_hf_config(j);
  CHECK(b.source == "HuggingFace config.json (model_type mistral3, text_config ministral3)");
  CHECK(b.name == "Mistral3ForConditionalGeneration");
  CHECK(b.num_layers == 34);
  CHECK(b.hidden == 4096);
  CHECK(b.num_heads == 32);
  CHECK(b.num_kv_heads == 8);
  CHECK(b.head_dim == 128);
  CHECK(b.intermediate == 14336);
  CHECK(b.vocab_size == 131072);
  CHECK_FALSE(b.tie_embeddings);  // absent: Ministral3Config's default False, recorded
  CHECK(contains(b.assumptions.at("tie_embeddings"), "HuggingFace's ministral3 default false"));
  CHECK_FALSE(b.attention_bias);
  CHECK(b.num_sliding_layers() == 0);  // sliding_window null
  CHECK(b.rope_theta == 1e6);          // inside rope_parameters (transformers v5)
  CHECK(b.max_context == 262144);
  CHECK(b.norm_eps == 1e-5);
  CHECK(contains(b.assumptions.at("rope_scaling"), "rope_type yarn, factor 16, original context 16384 tokens"));
  CHECK(contains(b.assumptions.at("rope_scaling"), "llama_4_scaling_beta 0.1: queries are scaled"));
  CHECK(contains(b.assumptions.at("dtype"), "quant_method \"fp8\""));  // on the wrapper

  // Published: 8,918,026,240, the Hub's safetensors total_parameters of
  // mistralai/Ministral-3-8B-Instruct-2512-BF16 (the same weights in bf16), as public
  // model inventories quote it (one with total_size exactly twice that). It includes the
  // Pixtral tower and projector, counted by hand from vision_config; the card's "8.4B
  // Language Model" is the text count rounded down.
  check_mistral3_total(j, b, 34, 4096, 14336, 8489553920, 428472320, 8918026240);
}

TEST_CASE("ministral3 defaults and refusals: Ministral3Config's values, recorded, bad rope keys named", "[hf]") {
  Json text = hf_json("ministral-3-8b-instruct-2512").at("text_config");
  for (const char* key : {"head_dim", "num_key_value_heads", "rms_norm_eps", "max_position_embeddings",
                          "rope_parameters"})
    text.erase(key);
  const Backbone b = import_hf_config(text);
  CHECK(b.source == "HuggingFace config.json (model_type ministral3)");
  CHECK(b.head_dim == 128);
  CHECK(b.num_kv_heads == 8);
  CHECK(b.norm_eps == 1e-5);
  CHECK(b.max_context == 262144);
  CHECK(b.rope_theta == 1e6);
  CHECK(contains(b.assumptions.at("rope_theta"), "HuggingFace's ministral3 default 1e+06"));
  CHECK(params_of(b).total == 8489553920);

  Json j = hf_json("ministral-3-8b-instruct-2512");
  j["text_config"]["rope_parameters"]["llama_4_scaling_beta"] = "0.1";
  Caught e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/text_config/rope_parameters/llama_4_scaling_beta");
  j = hf_json("ministral-3-8b-instruct-2512");
  j["text_config"]["rope_parameters"]["llama_4_scaling_bta"] = 0.1;  // misspelt: refused, not dropped
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/text_config/rope_parameters/llama_4_scaling_bta");
  j = hf_json("mistral-small-3.1-24b-instruct-2503");  // a mistral text model has no such key
  j["text_config"]["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"llama_4_scaling_beta", 0.1}};
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/text_config/rope_parameters/llama_4_scaling_beta");
}

TEST_CASE("mistral3 wrapper errors name the text_config field", "[hf][bad-input]") {
  Json j = hf_json("mistral-small-3.1-24b-instruct-2503");
  j["text_config"]["model_type"] = "llama";
  Caught e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/text_config/model_type");
  CHECK(e.reason == "must be \"mistral\" or \"ministral3\"");
  j.erase("text_config");
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/text_config");
  CHECK(e.reason == "is required for model_type mistral3");
  j = hf_json("mistral-small-3.1-24b-instruct-2503");
  j["text_config"].erase("model_type");  // Mistral3Config's default text model is mistral
  CHECK(import_hf_config(j).num_layers == 40);
  j["text_config"]["num_hidden_layers"] = 0;
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/text_config/num_hidden_layers");
  j = hf_json("mistral-small-3.1-24b-instruct-2503");
  j["architectures"] = {"Mistral3ForSequenceClassification"};
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/architectures/0");
}

TEST_CASE("olmo3: OLMo 2's blocks with layer_types, 3 sliding : 1 full by default, 7,298,011,136 for 7B", "[hf]") {
  // No public copy of allenai/Olmo-3-1025-7B's config.json was found, so none is bundled.
  // This config carries the 7B's architecture keys as public fixtures quote them (Olmo3 layer
  // pattern and YaRN test of an HF-config loader: 4096 hidden, 32 q / 32 kv heads,
  // rope_theta 500000, sliding_window 4096, yarn factor 8 over 8192; OLMo 3's dolma2
  // vocabulary of 100,278 and rms_norm_eps 1e-6 from OLMo 3 model contracts; 11008 FFN,
  // 65,536 positions from an OLMo 3 export contract). layer_types is left to Olmo3Config.
  const Json j = Json::parse(R"({
    "architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3", "hidden_size": 4096,
    "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 32, "vocab_size": 100278, "rms_norm_eps": 1e-06,
    "max_position_embeddings": 65536, "rope_theta": 500000, "sliding_window": 4096,
    "rope_scaling": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 8192,
                     "attention_factor": 1.2079441541679836, "beta_fast": 32.0, "beta_slow": 1.0},
    "tie_word_embeddings": false, "attention_bias": false, "torch_dtype": "bfloat16"})");
  const Backbone b = import_hf_config(j);
  CHECK(b.source == "HuggingFace config.json (model_type olmo3)");
  CHECK(b.post_sublayer_norms);
  CHECK(b.qk_norm_whole_projection);
  REQUIRE(b.layers.size() == 32);
  for (std::size_t l = 0; l < 32; ++l) {
    INFO("layer " << l);
    if ((l + 1) % 4 == 0) CHECK(b.layers[l].kind == AttentionKind::full);
    else CHECK(b.layers[l] == LayerAttention{AttentionKind::sliding, 4096});
  }
  CHECK(contains(b.assumptions.at("attention"), "no layer_types; HuggingFace's olmo3 default"));
  CHECK(contains(b.assumptions.at("rope_scaling"), "full-attention layers only"));

  const i64 D = 4096, V = 100278;
  const ParamCounts p = params_of(b);
  CHECK(p.total == 32 * (gqa_attention(D, 32, 32, 128, false) + 2 * D + swiglu(D, 11008) + 2 * D) + D + 2 * V * D);
  // OLMo 3 7B's parameter count as public training code logs it ("MFUCallback log:
  // num_params=7298011136 (7.30B)"; also a GGUF checker's expected tensor sum for it).
  CHECK(p.total == 7298011136);
  CHECK(within(p.total, 7298011136.0, 0.001));

  // An explicit layer_types list wins; one of the wrong length is named.
  Json listed = j;
  listed["layer_types"] = Json::array();
  for (int l = 0; l < 32; ++l) listed["layer_types"].push_back(l % 2 ? "full_attention" : "sliding_attention");
  CHECK(import_hf_config(listed).num_sliding_layers() == 16);
  listed["layer_types"].erase(0);
  const Caught e = config_error([&] { import_hf_config(listed); });
  CHECK(e.pointer == "/layer_types");
  CHECK(e.reason == "has 31 entries but num_hidden_layers is 32");
}
