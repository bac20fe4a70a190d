// Linear-attention layers in the backbone (Gated DeltaNet) and the HF import of Qwen3-Next:
// the fields, their JSON round trip and refusals by pointer, and the parameter total
// against the checkpoint's published tensor count.
#include "hf_test_support.hpp"

using namespace hf_test;

namespace {

// One Gated DeltaNet mixer (transformers' Qwen3NextGatedDeltaNet): in_proj_qkvz, in_proj_ba,
// conv1d without bias, A_log and dt_bias, the gated RMSNorm's weight, out_proj.
i64 gdn(i64 D, i64 hk, i64 hv, i64 dk, i64 dv, i64 kernel) {
  return D * (2 * hk * dk + 2 * hv * dv) + D * 2 * hv + (2 * hk * dk + hv * dv) * kernel + 2 * hv + dv + hv * dv * D;
}

Json small_hybrid() {
  return Json{{"name", "tiny-hybrid"},
              {"num_layers", 4},
              {"hidden_size", 64},
              {"num_heads", 4},
              {"num_kv_heads", 2},
              {"head_dim", 16},
              {"intermediate_size", 128},
              {"vocab_size", 100},
              {"qk_norm", true},
              {"attention_output_gate", true},
              {"layer_types", {{"pattern", {"linear_attention", "linear_attention", "linear_attention", "attention"}}}},
              {"linear_attention",
               {{"kind", "gated_deltanet"},
                {"num_key_heads", 2},
                {"num_value_heads", 4},
                {"key_head_dim", 8},
                {"value_head_dim", 16},
                {"conv_kernel", 4}}}};
}

}  // namespace

TEST_CASE("Qwen3-Next-80B-A3B config.json: 36 Gated DeltaNet + 12 gated attention layers, 79,674,391,296",
          "[hf][moe][linear]") {
  const Backbone b = hf("qwen3-next-80b-a3b-instruct");
  CHECK(b.source == "HuggingFace config.json (model_type qwen3_next)");
  CHECK(b.name == "Qwen3NextForCausalLM");
  CHECK(b.num_layers == 48);
  CHECK(b.hidden == 2048);
  CHECK(b.num_heads == 16);
  CHECK(b.num_kv_heads == 2);
  CHECK(b.head_dim == 256);
  CHECK(b.rotary_dim == 64);  // partial_rotary_factor 0.25
  CHECK(b.qk_norm);
  CHECK(b.attention_output_gate);
  CHECK(b.num_linear_layers() == 36);
  for (std::int64_t l = 0; l < 48; ++l) {
    INFO(l);
    CHECK(b.is_linear_layer(l) == ((l + 1) % 4 != 0));  // full_attention_interval 4
  }
  REQUIRE(b.gdn.has_value());
  CHECK(b.gdn->num_key_heads == 16);
  CHECK(b.gdn->num_value_heads == 32);
  CHECK(b.gdn->key_head_dim == 128);
  CHECK(b.gdn->value_head_dim == 128);
  CHECK(b.gdn->conv_kernel == 4);
  CHECK(b.gdn->state_elements() == 32 * 128 * 128);
  CHECK(b.gdn->conv_state_elements() == (2 * 16 * 128 + 32 * 128) * 3);
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 512);
  CHECK(b.moe->top_k == 10);
  CHECK(b.moe->expert_intermediate == 512);
  CHECK(b.moe->num_shared_experts == 1);
  CHECK(b.moe->shared_expert_intermediate == 512);
  CHECK(b.moe->shared_expert_gate);
  CHECK(b.moe->first_dense_layers == 0);
  CHECK(b.intermediate == 0);
  CHECK(b.vocab_size == 151936);
  CHECK_FALSE(b.tie_embeddings);
  CHECK(b.rope_theta == 1e7);
  CHECK(b.max_context == 262144);
  CHECK(contains(b.assumptions.at("mtp"), "mtp.*"));
  CHECK(contains(b.assumptions.at("norm"), "zero-centred"));

  const i64 D = 2048, V = 151936;
  // Gated attention: q_proj doubled (query and gate), q_norm and k_norm of head_dim.
  const i64 attn = 2 * D * 16 * 256 + 2 * D * 2 * 256 + 16 * 256 * D + 2 * 256;
  const i64 lin = gdn(D, 16, 32, 128, 128, 4);
  const i64 moe = 512 * D + 512 * swiglu(D, 512) + swiglu(D, 512) + D;  // router, experts, shared + its gate
  const ParamCounts p = params_of(b);
  CHECK(lin == 33718464);
  CHECK(p.linear_attention == 36 * lin);
  CHECK(p.attention + p.qk_norm == 12 * attn);
  CHECK(p.total == 12 * attn + 36 * lin + 48 * (moe + 2 * D) + D + 2 * V * D);
  // Published: the safetensors index of Qwen/Qwen3-Coder-Next, the same architecture (its
  // config differs only in rope_theta), declares 79,674,391,296 BF16 parameters in 74,391
  // tensors; the Qwen3-Next-80B-A3B checkpoints' index totals 81,324,862,720, which adds
  // the 1,650,471,424 of its mtp.* module that transformers drops and hdlab does not model
  // (public reconciliations of both indexes found with the code search; the model card says
  // "80B total, 3B active"). Exact here; the issue asks for 0.1%.
  CHECK(p.total == 79674391296);
  CHECK(within(p.total + 1650471424, 81324862720.0, 0.001));
  // Active per token: every mixer, 10 routed + the shared expert and its gate; embeddings
  // excluded. The same public reconciliation gives 3,252,400,896 (the card's "A3B")
  // without the RMSNorms, which hdlab's active count includes (48 x 2 x D + D).
  CHECK(p.active_per_token == 3252400896 + 48 * 2 * D + D);
}

TEST_CASE("Qwen3-Next import: layer_types list, interval default and refusals by pointer", "[hf][linear][errors]") {
  Json j = hf_json("qwen3-next-80b-a3b-instruct");
  Json lt = Json::array();
  for (int l = 0; l < 48; ++l) lt.push_back(l % 2 ? "full_attention" : "linear_attention");
  j["layer_types"] = lt;
  CHECK(import_hf_config(j).num_linear_layers() == 24);

  lt.erase(lt.begin());
  j["layer_types"] = lt;
  Caught e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/layer_types");
  CHECK(contains(e.reason, "47 entries but num_hidden_layers is 48"));

  j = hf_json("qwen3-next-80b-a3b-instruct");
  j.erase("full_attention_interval");  // Qwen3NextConfig's default 4, recorded
  const Backbone b = import_hf_config(j);
  CHECK(b.num_linear_layers() == 36);
  CHECK(contains(b.assumptions.at("layer_types"), "full_attention_interval"));

  j = hf_json("qwen3-next-80b-a3b-instruct");
  j.erase("linear_key_head_dim");  // a linear layer with no state size
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/linear_key_head_dim");
  CHECK(contains(e.reason, "required"));

  j = hf_json("qwen3-next-80b-a3b-instruct");
  j["linear_num_value_heads"] = 24;
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/linear_num_value_heads");

  j = hf_json("qwen3-next-80b-a3b-instruct");
  j["decoder_sparse_step"] = 2;
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/decoder_sparse_step");
}

TEST_CASE("backbone layer_types and linear_attention: JSON round trip and exact counts", "[linear]") {
  const Backbone b = parse_backbone(small_hybrid());
  CHECK(b.num_linear_layers() == 3);
  CHECK(b.mixer(3) == MixerKind::attention);
  CHECK(b.mixer(0) == MixerKind::gated_deltanet);
  CHECK(parse_backbone(to_json(b)) == b);
  const ParamCounts p = params_of(b);
  const i64 D = 64;
  CHECK(p.linear_attention == 3 * gdn(D, 2, 4, 8, 16, 4));
  // The one attention layer: q doubled by the output gate, QK-norm of head_dim.
  CHECK(p.attention == 2 * D * 4 * 16 + 2 * D * 2 * 16 + 4 * 16 * D);
  CHECK(p.qk_norm == 2 * 16);

  // An attention-only backbone writes none of the new keys (profiles round-trip as before).
  Json plain = small_hybrid();
  plain.erase("layer_types");
  plain.erase("linear_attention");
  plain.erase("attention_output_gate");
  const Json out = to_json(parse_backbone(plain));
  CHECK_FALSE(out.contains("layer_types"));
  CHECK_FALSE(out.contains("linear_attention"));
  CHECK_FALSE(out.contains("attention_output_gate"));
}

TEST_CASE("backbone linear layers: bad layer_types and missing state sizes named by pointer", "[linear][errors]") {
  Json j = small_hybrid();
  j["layer_types"] = {"linear_attention", "attention", "attention"};
  Caught e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/layer_types");
  CHECK(contains(e.reason, "3 entries but the backbone has 4 layers"));

  j = small_hybrid();
  j.erase("linear_attention");
  e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/linear_attention");
  CHECK(contains(e.reason, "layer 0 is linear_attention and needs its state sizes"));

  j = small_hybrid();
  j["linear_attention"].erase("key_head_dim");
  e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/linear_attention/key_head_dim");

  j = small_hybrid();
  j["layer_types"] = "attention";
  e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/layer_types");

  j = small_hybrid();
  j["layer_types"] = {{"pattern", {"attention"}}};
  e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/linear_attention");
  CHECK(contains(e.reason, "no layer in layer_types is linear_attention"));

  j = small_hybrid();
  j["linear_attention"]["num_value_heads"] = 3;
  e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/linear_attention/num_value_heads");

  j = small_hybrid();
  j["layer_types"] = {{"pattern", {"mamba"}}};
  e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/layer_types/pattern/0");
}

TEST_CASE("the Qwen3-Next-80B-A3B profile agrees with its HF config.json", "[profiles][linear]") {
  const Config c = parse_config(read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/models/qwen3-next-80b-a3b.json"));
  Backbone profile = c.base, imported = hf("qwen3-next-80b-a3b-instruct");
  for (Backbone* b : {&profile, &imported}) {  // what the two say in words may differ
    b->name.clear();
    b->source.clear();
    b->assumptions.clear();
  }
  CHECK(profile == imported);
  CHECK(params_of(c.base).total == 79674391296);
}

TEST_CASE("Qwen3.5-0.8B config.json (qwen3_5 wrapper): 18 Gated DeltaNet + 6 gated attention layers, dense FFN",
          "[hf][linear]") {
  const Backbone b = hf("qwen3.5-0.8b");
  CHECK(b.source == "HuggingFace config.json (model_type qwen3_5, text_config qwen3_5_text)");
  CHECK(b.name == "Qwen3_5ForConditionalGeneration");
  CHECK(b.num_layers == 24);
  CHECK(b.hidden == 1024);
  CHECK(b.num_heads == 8);
  CHECK(b.num_kv_heads == 2);
  CHECK(b.head_dim == 256);
  CHECK(b.rotary_dim == 64);  // rope_parameters' partial_rotary_factor 0.25
  CHECK(b.qk_norm);
  CHECK(b.attention_output_gate);
  CHECK_FALSE(b.moe.has_value());
  CHECK(b.intermediate == 3584);
  CHECK(b.num_linear_layers() == 18);
  REQUIRE(b.gdn.has_value());
  CHECK(b.gdn->num_value_heads == 16);
  CHECK(b.tie_embeddings);
  CHECK(b.rope_theta == 1e7);
  CHECK(contains(b.assumptions.at("rope_scaling"), "mrope_section [11,11,10]"));
  CHECK(contains(b.assumptions.at("mtp"), "mtp_num_hidden_layers 1"));
  CHECK(contains(b.assumptions.at("vision_tower"), "qwen3_5"));

  const i64 D = 1024, V = 248320, F = 3584;
  const i64 attn = 2 * D * 8 * 256 + 2 * D * 2 * 256 + 8 * 256 * D + 2 * 256;
  const i64 full_layer = attn + swiglu(D, F) + 2 * D, linear_layer = gdn(D, 16, 16, 128, 128, 4) + swiglu(D, F) + 2 * D;
  const ParamCounts p = params_of(b);
  CHECK(p.total == 6 * full_layer + 18 * linear_layer + V * D + D);
  // Published: the checkpoint holds 873,438,784 parameters (Qwen/Qwen3.5-0.8B's safetensors
  // total, as the Hub API reports it and several public inventories quote it, e.g.
  // search-index file ids 62411536946 and 62623164394), of which 752,393,024 are
  // model.language_model.* (a public per-prefix reconciliation of the checkpoint's 488
  // tensors, file id 70706913754): exactly hdlab's count of the language model.
  CHECK(p.total == 752393024);
  // The rest, by hand from the config: the MTP module (two norms of D, fc 2D -> D, one
  // full-attention decoder layer, its final norm; embeddings shared) and the vision tower
  // (patch conv 3 x 2 x 16 x 16 -> 768 + bias, 2304 position rows, 12 blocks of two
  // LayerNorms, qkv and proj with biases and a GELU MLP 768 -> 3072 -> 768 with biases; the
  // merger's LayerNorm over 768 and its MLP 4 x 768 -> 3072 -> 1024 with biases).
  const i64 mtp = 2 * D + 2 * D * D + full_layer + D;
  const i64 h = 768, block = 2 * (2 * h) + (h * 3 * h + 3 * h) + (h * h + h) + (h * 3072 + 3072) + (3072 * h + h);
  const i64 vision = (3 * 2 * 16 * 16 * h + h) + 2304 * h + 12 * block + 2 * h + (4 * h * 4 * h + 4 * h) +
                     (4 * h * D + D);
  CHECK(mtp == 20452864);
  CHECK(vision == 100592896);
  CHECK(within(p.total + mtp + vision, 873438784.0, 0.001));
  CHECK(p.total + mtp + vision == 873438784);
}

TEST_CASE("Qwen3.5 import: qwen3_5_moe's text model takes Qwen3-Next's MoE, bad fields named by pointer",
          "[hf][linear][errors]") {
  // Qwen3.5's MoE language model: the 0.8B wrapper renamed, with Qwen3-Next's MoE keys.
  Json j = hf_json("qwen3.5-0.8b");
  j["model_type"] = "qwen3_5_moe";
  j["text_config"]["model_type"] = "qwen3_5_moe_text";
  j["text_config"]["num_experts"] = 8;
  j["text_config"]["num_experts_per_tok"] = 2;
  j["text_config"]["moe_intermediate_size"] = 512;
  j["text_config"]["shared_expert_intermediate_size"] = 512;
  const Backbone moe = import_hf_config(j);
  REQUIRE(moe.moe.has_value());
  CHECK(moe.moe->shared_expert_gate);
  CHECK(moe.num_linear_layers() == 18);

  j = hf_json("qwen3.5-0.8b");
  j["text_config"]["rope_parameters"]["partial_rotary_factor"] = 0.5;
  j["text_config"]["partial_rotary_factor"] = 0.25;
  Caught e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/text_config/rope_parameters/partial_rotary_factor");

  j = hf_json("qwen3.5-0.8b");
  j["text_config"]["layer_types"][3] = "sliding_attention";
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/text_config/layer_types/3");

  j = hf_json("qwen3.5-0.8b");
  j["text_config"].erase("linear_value_head_dim");
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/text_config/linear_value_head_dim");

  j = hf_json("qwen3.5-0.8b");
  j["text_config"]["model_type"] = "qwen3_next";
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/text_config/model_type");
}
