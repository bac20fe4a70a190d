// Mamba-2 layers and single-sublayer blocks in the backbone, and the HF import of
// Nemotron-H (model_type nemotron_h): the fields, their JSON round trip and refusals by
// pointer, and the parameter totals against published figures.
#include "hf_test_support.hpp"

using namespace hf_test;

namespace {

// One Nemotron-H mamba mixer (NemotronHMamba2Mixer): in_proj [2 I + 2 G N + H, D], conv1d
// [I + 2 G N, 1, k] and its bias, dt_bias, A_log, D [H], the gated norm [I], out_proj [D, I].
i64 mamba(i64 D, i64 H, i64 P, i64 G, i64 N, i64 k) {
  const i64 I = H * P, conv = I + 2 * G * N;
  return D * (2 * I + 2 * G * N + H) + conv * (k + 1) + 3 * H + I + I * D;
}

// A Nemotron-H model's count: each block one sublayer plus its RMSNorm; embeddings, an
// untied head and the final norm.
i64 nemotron(i64 D, i64 V, i64 mambas, i64 attentions, i64 mlps, i64 mixer, i64 H, i64 G, i64 hd, i64 F) {
  const i64 attn = D * H * hd + 2 * D * G * hd + H * hd * D;
  return 2 * V * D + mambas * (mixer + D) + attentions * (attn + D) + mlps * (2 * D * F + D) + D;
}

Json small_nemotron() {
  return Json{{"name", "tiny-nemotron"},
              {"num_layers", 4},
              {"hidden_size", 64},
              {"num_heads", 4},
              {"num_kv_heads", 2},
              {"head_dim", 16},
              {"intermediate_size", 128},
              {"vocab_size", 100},
              {"mlp", "relu2"},
              {"positions", "none"},
              {"layer_types", {"mamba2", "none", "attention", "none"}},
              {"ffn_types", {"none", "dense", "none", "dense"}},
              {"mamba2",
               {{"num_heads", 8},
                {"head_dim", 16},
                {"n_groups", 2},
                {"state_size", 32},
                {"conv_kernel", 4},
                {"chunk_size", 64},
                {"conv_bias", true}}}};
}

}  // namespace

TEST_CASE("Nemotron-H-8B-Base-8K config.json: 24 mamba, 4 attention, 24 MLP blocks, 8,100,852,736",
          "[hf][mamba2]") {
  const Backbone b = hf("nemotron-h-8b-base-8k");
  CHECK(b.source == "HuggingFace config.json (model_type nemotron_h)");
  CHECK(b.name == "NemotronHForCausalLM");
  CHECK(b.num_layers == 52);
  CHECK(b.hidden == 4096);
  CHECK(b.num_heads == 32);
  CHECK(b.num_kv_heads == 8);
  CHECK(b.head_dim == 128);  // attention_head_dim
  CHECK(b.positions == PositionKind::none);
  CHECK(b.mlp == MlpKind::relu2);
  CHECK(b.intermediate == 21504);
  CHECK_FALSE(b.qk_norm);
  CHECK(b.num_mixer_layers(MixerKind::mamba2) == 24);
  CHECK(b.num_mixer_layers(MixerKind::attention) == 4);
  CHECK(b.num_mixer_layers(MixerKind::none) == 24);
  CHECK(b.num_single_sublayer_layers() == 52);
  const std::string pattern = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-";
  for (std::int64_t l = 0; l < 52; ++l) {
    INFO(l);
    const char c = pattern[static_cast<std::size_t>(l)];
    CHECK(b.mixer(l) == (c == 'M' ? MixerKind::mamba2 : c == '*' ? MixerKind::attention : MixerKind::none));
    CHECK(b.has_ffn(l) == (c == '-'));
    CHECK(b.layer_norms(l) == 1);
  }
  REQUIRE(b.mamba.has_value());
  CHECK(b.mamba->num_heads == 128);
  CHECK(b.mamba->head_dim == 64);
  CHECK(b.mamba->n_groups == 8);
  CHECK(b.mamba->state_size == 128);
  CHECK(b.mamba->conv_kernel == 4);
  CHECK(b.mamba->chunk_size == 128);
  CHECK(b.mamba->conv_bias);
  CHECK(b.mamba->state_elements() == 128 * 64 * 128);
  CHECK(b.mamba->conv_state_elements() == (8192 + 2 * 8 * 128) * 3);
  CHECK(b.vocab_size == 131072);
  CHECK_FALSE(b.tie_embeddings);
  CHECK(b.norm_eps == 1e-5);
  CHECK(b.max_context == 8192);
  CHECK(contains(b.assumptions.at("positions"), "no RoPE"));
  CHECK(contains(b.assumptions.at("mamba2"), "expand 2 is not used"));

  const i64 D = 4096;
  const i64 mixer = mamba(D, 128, 64, 8, 128, 4);
  CHECK(mixer == 76021760 + 51200 + 384 + 8192 + 33554432);  // in_proj 18560 x 4096, conv, A/dt/D, norm, out_proj
  const ParamCounts p = params_of(b);
  CHECK(p.linear_attention == 24 * mixer);
  CHECK(p.attention == 4 * (2 * D * D + 2 * D * 1024));
  CHECK(p.dense_ffn == 24 * 2 * D * 21504);
  CHECK(p.norms == 52 * D + D);
  CHECK(p.total == nemotron(D, 131072, 24, 4, 24, mixer, 32, 8, 128, 21504));
  // Published: 8,100,852,736, the named_parameters() inventory of the loaded HF checkpoint
  // in a public "Nemotron-H-8B-Base-8K Architecture Analysis Summary" (search-index file id
  // 1020265066: in_proj 18560 x 4096, conv1d, A_log / D / dt_bias of 128, the gated norm of
  // 8192, out_proj, 53 norms, untied 131072 x 4096 embedding and head); a second public
  // table of exact counts for the "Authoritative Base-8K architecture" (file id 69403597461)
  // gives the same. The model card says 8B. Exact here; the issue asks for 0.1%.
  CHECK(p.total == 8100852736);
  CHECK(within(p.total, 8100852736.0, 0.001));
  CHECK(p.active_per_token == p.total - 2 * 131072 * D);
}

TEST_CASE("NVIDIA-Nemotron-Nano-9B-v2: 27 mamba, 4 attention, 25 MLP blocks, 8,888,227,328", "[hf][mamba2]") {
  const Backbone b = hf("nvidia-nemotron-nano-9b-v2");
  CHECK(b.num_layers == 56);
  CHECK(b.hidden == 4480);
  CHECK(b.head_dim == 128);
  CHECK(b.num_mixer_layers(MixerKind::mamba2) == 27);
  CHECK(b.num_mixer_layers(MixerKind::attention) == 4);
  CHECK(b.num_mixer_layers(MixerKind::none) == 25);
  REQUIRE(b.mamba.has_value());
  CHECK(b.mamba->num_heads == 128);
  CHECK(b.mamba->head_dim == 80);
  CHECK(b.mamba->state_size == 128);
  CHECK(b.mamba->n_groups == 8);
  // the trimmed file leaves these to NemotronHConfig's defaults, recorded
  CHECK(b.mamba->chunk_size == 256);
  CHECK(b.mamba->conv_bias);
  CHECK(contains(b.assumptions.at("mamba2"), "chunk_size"));
  CHECK(contains(b.assumptions.at("mamba2"), "use_conv_bias"));
  const i64 D = 4480;
  const ParamCounts p = params_of(b);
  CHECK(p.total == nemotron(D, 131072, 27, 4, 25, mamba(D, 128, 80, 8, 128, 4), 40, 8, 128, 15680));
  // Published: 8,888,227,328, the Hub's safetensors total for nvidia/NVIDIA-Nemotron-Nano-9B-v2
  // as recorded in the public kvfit registry (debaditc/kvfit scripts/build_registry.py,
  // "exact params from HF safetensors"); the card says 9B. Exact here.
  CHECK(p.total == 8888227328);
}

TEST_CASE("Nemotron-H import: bad patterns and missing state sizes named by pointer", "[hf][mamba2][errors]") {
  Json j = hf_json("nemotron-h-8b-base-8k");
  j["hybrid_override_pattern"] = "M-M-M-M*-M-";
  Caught e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/hybrid_override_pattern");
  CHECK(contains(e.reason, "11 characters but num_hidden_layers is 52"));

  j = hf_json("nemotron-h-8b-base-8k");
  std::string pattern = j["hybrid_override_pattern"];
  pattern[3] = 'X';
  j["hybrid_override_pattern"] = pattern;
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/hybrid_override_pattern");
  CHECK(contains(e.reason, "character 3 is an unknown block 'X'"));

  pattern[3] = 'E';
  j["hybrid_override_pattern"] = pattern;
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/hybrid_override_pattern");
  CHECK(contains(e.reason, "character 3 is a MoE block"));

  j = hf_json("nemotron-h-8b-base-8k");
  j.erase("ssm_state_size");  // a mamba layer with no state size
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/ssm_state_size");
  CHECK(contains(e.reason, "required"));

  j = hf_json("nemotron-h-8b-base-8k");
  j.erase("mamba_head_dim");
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/mamba_head_dim");

  j = hf_json("nemotron-h-8b-base-8k");
  j.erase("hybrid_override_pattern");
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/hybrid_override_pattern");

  j = hf_json("nemotron-h-8b-base-8k");
  j["mamba_num_groups"] = 4;  // the other spelling, disagreeing
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/mamba_num_groups");

  j = hf_json("nemotron-h-8b-base-8k");
  j["mlp_hidden_act"] = "silu";
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/mlp_hidden_act");

  j = hf_json("nemotron-h-8b-base-8k");
  j["use_bias"] = true;
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/use_bias");

  j = hf_json("nemotron-h-8b-base-8k");
  j["n_groups"] = 3;
  CHECK(config_error([&] { import_hf_config(j); }).pointer == "/n_groups");

  // layers_block_type, the other spelling of the pattern
  j = hf_json("nemotron-h-8b-base-8k");
  Json list = Json::array();
  for (char c : std::string(j["hybrid_override_pattern"]))
    list.push_back(c == 'M' ? "mamba" : c == '*' ? "attention" : "mlp");
  j.erase("hybrid_override_pattern");
  j["layers_block_type"] = list;
  CHECK(params_of(import_hf_config(j)).total == 8100852736);
  list[5] = "moe";
  j["layers_block_type"] = list;
  e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/layers_block_type/5");
}

TEST_CASE("backbone mamba2 and ffn_types: JSON round trip and exact counts", "[mamba2]") {
  const Backbone b = parse_backbone(small_nemotron());
  CHECK(b.num_linear_layers() == 1);
  CHECK(b.is_linear_layer(0));
  CHECK_FALSE(b.is_linear_layer(1));  // no mixer is not a linear mixer
  CHECK(b.ffn(0) == FfnKind::none);
  CHECK(b.ffn(1) == FfnKind::dense);
  CHECK(parse_backbone(to_json(b)) == b);
  const ParamCounts p = params_of(b);
  const i64 D = 64;
  CHECK(p.linear_attention == mamba(D, 8, 16, 2, 32, 4));
  CHECK(p.attention == D * 4 * 16 + 2 * D * 2 * 16 + 4 * 16 * D);
  CHECK(p.dense_ffn == 2 * 2 * D * 128);
  CHECK(p.norms == 4 * D + D);
  // without a conv bias, the conv's channels fewer parameters
  Json j = small_nemotron();
  j["mamba2"]["conv_bias"] = false;
  CHECK(params_of(parse_backbone(j)).linear_attention == p.linear_attention - (8 * 16 + 2 * 2 * 32));
  // depth growth (interposition) repeats each layer's mixer and FFN with it
  const Config grown = parse_config(Json{{"backbone", small_nemotron()},
                                         {"design", {{"growth", {{"depth_factor", 2}, {"depth_mode", "interpose"}}}}}});
  REQUIRE(grown.effective.num_layers == 8);
  for (std::int64_t l = 0; l < 8; ++l) {
    INFO(l);
    CHECK(grown.effective.mixer(l) == b.mixer(l / 2));
    CHECK(grown.effective.ffn(l) == b.ffn(l / 2));
  }
  CHECK(count_params(grown).linear_attention == 2 * p.linear_attention);
  // ffn_types that restate the moe rules are dropped (the canonical form)
  j = small_nemotron();
  j["ffn_types"] = {"dense", "dense", "dense", "dense"};
  j["layer_types"] = {"mamba2", "attention", "attention", "attention"};
  CHECK(parse_backbone(j).ffns.empty());
}

TEST_CASE("backbone mamba2: missing sizes and inconsistent sublayers named by pointer", "[mamba2][errors]") {
  Json j = small_nemotron();
  j.erase("mamba2");
  Caught e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/mamba2");
  CHECK(contains(e.reason, "layer 0 is mamba2 and needs its sizes"));

  j = small_nemotron();
  j["mamba2"].erase("state_size");  // a mamba layer with no state size
  CHECK(config_error([&] { parse_backbone(j); }).pointer == "/backbone/mamba2/state_size");

  j = small_nemotron();
  j["mamba2"]["n_groups"] = 3;
  CHECK(config_error([&] { parse_backbone(j); }).pointer == "/backbone/mamba2/n_groups");

  j = small_nemotron();
  j["layer_types"] = {"attention", "none", "attention", "none"};
  e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/mamba2");
  CHECK(contains(e.reason, "no layer in layer_types is mamba2"));

  j = small_nemotron();
  j["ffn_types"] = {"none", "dense", "none"};
  e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/ffn_types");
  CHECK(contains(e.reason, "3 entries but the backbone has 4 layers"));

  j = small_nemotron();
  j["ffn_types"] = {"none", "none", "none", "dense"};  // layer 1: no mixer and no FFN
  e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/layer_types");
  CHECK(contains(e.reason, "layer 1 has neither"));

  j = small_nemotron();
  j["ffn_types"] = {"none", "moe", "none", "dense"};
  e = config_error([&] { parse_backbone(j); });
  CHECK(e.pointer == "/backbone/ffn_types");
  CHECK(contains(e.reason, "no moe settings"));

  j = small_nemotron();
  j["ffn_types"] = {"none", "sparse", "none", "dense"};
  CHECK(config_error([&] { parse_backbone(j); }).pointer == "/backbone/ffn_types/1");
}

TEST_CASE("the Nemotron-H-8B profile agrees with its HF config.json", "[profiles][mamba2]") {
  const Config c = parse_config(read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/models/nemotron-h-8b.json"));
  Backbone profile = c.base, imported = hf("nemotron-h-8b-base-8k");
  for (Backbone* b : {&profile, &imported}) {  // what the two say in words may differ
    b->name.clear();
    b->source.clear();
    b->assumptions.clear();
  }
  CHECK(profile == imported);
  CHECK(params_of(c.base).total == 8100852736);
}
