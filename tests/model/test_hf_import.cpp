// HuggingFace config.json import: every bundled public config yields the published
// architecture and parameter totals. (Defaults, refusals and RoPE / dtype checks:
// test_hf_import_rules.cpp.)
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "hf_test_support.hpp"

using namespace hf_test;

TEST_CASE("looks_like_hf_config recognises HF configs by model_type or architectures", "[hf]") {
  CHECK(looks_like_hf_config(Json::parse(R"({"model_type": "llama"})")));
  CHECK(looks_like_hf_config(Json::parse(R"({"architectures": ["LlamaForCausalLM"]})")));
  CHECK_FALSE(looks_like_hf_config(Json::parse(R"({"num_layers": 2, "hidden_size": 8})")));
  CHECK_FALSE(looks_like_hf_config(Json::parse(R"({"backbone": {}})")));
  CHECK_FALSE(looks_like_hf_config(Json::parse(R"(["model_type"])")));
  for (const auto& entry : std::filesystem::directory_iterator(hf_dir()))
    if (entry.path().extension() == ".json") CHECK(looks_like_hf_config(read_json_file(entry.path().string())));
}

TEST_CASE("Qwen3-8B config.json: published architecture and 8.19B parameters", "[hf]") {
  const Backbone b = hf("qwen3-8b");
  CHECK(b.source == "HuggingFace config.json (model_type qwen3)");
  CHECK(b.num_layers == 36);
  CHECK(b.hidden == 4096);
  CHECK(b.num_heads == 32);
  CHECK(b.num_kv_heads == 8);
  CHECK(b.head_dim == 128);
  CHECK(b.qk_norm);
  CHECK_FALSE(b.attention_bias);
  CHECK(b.intermediate == 12288);
  CHECK_FALSE(b.moe.has_value());
  CHECK_FALSE(b.mla.has_value());
  CHECK(b.vocab_size == 151936);
  CHECK(b.padded_vocab() == 151936);
  CHECK_FALSE(b.tie_embeddings);
  CHECK(b.num_sliding_layers() == 0);  // use_sliding_window false
  CHECK(b.norms_per_layer == 2);
  CHECK(b.rope_theta == 1e6);
  CHECK(b.norm_eps == 1e-6);
  CHECK(b.max_context == 40960);  // max_position_embeddings (the card's native context is 32k)
  CHECK(b.dtype == DType::bf16);
  CHECK(b.assumptions.empty());  // every value hdlab needs is in this config

  // 36 x (GQA + QK-norm + 2 norms + SwiGLU) + final norm + untied 151,936 x 4096 tables.
  const i64 D = 4096, V = 151936;
  const i64 layer = gqa_attention(D, 32, 8, 128, false) + 2 * 128 + 2 * D + swiglu(D, 12288);
  const i64 expected = 36 * layer + D + 2 * V * D;
  const ParamCounts p = params_of(b);
  CHECK(p.total == expected);
  CHECK(p.embedding() == 2 * V * D);
  CHECK(rounds_to(p.total, 8.19e9, 1e7));  // model card: 8.2B; 8.19B with embeddings
  CHECK(rounds_to(p.non_embedding(), 6.95e9, 1e7));  // model card: 6.95B non-embedding
}

TEST_CASE("Qwen3-8B under HD: embedding 1.2B -> 1.9B / 3.1B / 5.6B at n = 2 / 4 / 8", "[hf][hd]") {
  const Backbone b = hf("qwen3-8b");
  const i64 table = b.padded_vocab() * b.hidden;
  const std::vector<std::pair<i64, double>> published = {{1, 1.2e9}, {2, 1.9e9}, {4, 3.1e9}, {8, 5.6e9}};
  for (const auto& [n, figure] : published) {
    const Json design = {{"hd", {{"n", n}, {"layers", "full"}}}};
    const Config c = make_config(b, parse_design(design, b));
    const ParamCounts p = count_params(c);
    INFO("n = " << n);
    CHECK(p.embedding_input == n * table);   // n input tables
    CHECK(p.embedding_output == table);      // one untied head
    CHECK(rounds_to(p.embedding(), figure, 1e8));
    CHECK(p.non_embedding() == params_of(b).non_embedding());  // HD adds no layer weights
  }
}

TEST_CASE("Qwen3-30B-A3B config.json: 128 experts top-8, 30.5B total / 3.3B activated", "[hf][moe]") {
  const Backbone b = hf("qwen3-30b-a3b");
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 128);
  CHECK(b.moe->top_k == 8);
  CHECK(b.moe->expert_intermediate == 768);
  CHECK(b.moe->num_shared_experts == 0);
  CHECK(b.moe->first_dense_layers == 0);  // decoder_sparse_step 1, mlp_only_layers []
  CHECK(b.moe->router == RouterKind::softmax);
  CHECK(b.intermediate == 0);  // intermediate_size 6144 is unused when every layer is MoE
  CHECK(b.num_layers == 48);
  CHECK(b.hidden == 2048);
  CHECK(b.num_heads == 32);
  CHECK(b.num_kv_heads == 4);
  CHECK(b.head_dim == 128);  // explicit, not 2048 / 32
  CHECK(b.qk_norm);
  CHECK(b.vocab_size == 151936);

  const i64 D = 2048, V = 151936, E = 128, Fe = 768;
  const i64 attn = gqa_attention(D, 32, 4, 128, false) + 2 * 128 + 2 * D;
  const i64 expected = 48 * (attn + E * D + E * swiglu(D, Fe)) + D + 2 * V * D;
  const ParamCounts p = params_of(b);
  CHECK(p.total == expected);
  CHECK(p.active_per_token == 48 * (attn + E * D + 8 * swiglu(D, Fe)) + D);
  CHECK(rounds_to(p.total, 30.5e9, 1e8));                          // model card: 30.5B
  CHECK(rounds_to(p.non_embedding(), 29.9e9, 1e8));                  // model card: 29.9B non-embedding
  CHECK(within(p.active_per_token + p.embedding(), 3.3e9, 0.02));    // model card: 3.3B activated (3.35B)
}

TEST_CASE("Qwen2.5-7B config.json: q/k/v biases, 7.61B", "[hf]") {
  const Backbone b = hf("qwen2.5-7b");
  CHECK(b.attention_bias);
  CHECK(b.num_layers == 28);
  CHECK(b.hidden == 3584);
  CHECK(b.num_heads == 28);
  CHECK(b.num_kv_heads == 4);
  CHECK(b.head_dim == 128);
  CHECK(b.assumptions.count("head_dim") == 1);  // derived as hidden / heads, like HF
  CHECK_FALSE(b.qk_norm);
  CHECK(b.intermediate == 18944);
  CHECK(b.vocab_size == 152064);
  CHECK(b.num_sliding_layers() == 0);  // sliding_window is set but use_sliding_window is false
  const i64 D = 3584, V = 152064;
  const i64 expected = 28 * (gqa_attention(D, 28, 4, 128, true) + 2 * D + swiglu(D, 18944)) + D + 2 * V * D;
  CHECK(params_of(b).total == expected);
  CHECK(within(params_of(b).total, 7.61e9, 0.001));  // model card: 7.61B (7,615,616,512 exactly)
}

TEST_CASE("Llama-3.1-8B config.json: 8.03B", "[hf]") {
  const Backbone b = hf("llama-3.1-8b");
  CHECK(b.num_layers == 32);
  CHECK(b.hidden == 4096);
  CHECK(b.num_kv_heads == 8);
  CHECK(b.head_dim == 128);
  CHECK(b.intermediate == 14336);
  CHECK(b.vocab_size == 128256);
  CHECK(b.rope_theta == 500000.0);
  CHECK(b.norm_eps == 1e-5);
  CHECK(b.max_context == 131072);
  const i64 D = 4096, V = 128256;
  const i64 expected = 32 * (gqa_attention(D, 32, 8, 128, false) + 2 * D + swiglu(D, 14336)) + D + 2 * V * D;
  CHECK(params_of(b).total == expected);
  CHECK(rounds_to(params_of(b).total, 8.03e9, 1e7));
}

TEST_CASE("Mistral-7B-Instruct-v0.1 config.json: every layer slides over 4096", "[hf]") {
  const Backbone b = hf("mistral-7b-instruct-v0.1");
  REQUIRE(b.layers.size() == 32);
  for (const auto& l : b.layers) CHECK(l == LayerAttention{AttentionKind::sliding, 4096});
  CHECK(b.vocab_size == 32000);
  CHECK(rounds_to(params_of(b).total, 7.24e9, 1e7));
}

TEST_CASE("Mixtral-8x7B config.json: intermediate_size is the expert size, 46.7B / 12.9B", "[hf][moe]") {
  const Backbone b = hf("mixtral-8x7b");
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 8);
  CHECK(b.moe->top_k == 2);
  CHECK(b.moe->expert_intermediate == 14336);
  CHECK(b.intermediate == 0);
  CHECK(b.num_sliding_layers() == 0);  // sliding_window null
  CHECK(b.rope_theta == 1e6);
  const i64 D = 4096, V = 32000;
  const i64 attn = gqa_attention(D, 32, 8, 128, false) + 2 * D;
  const ParamCounts p = params_of(b);
  CHECK(p.total == 32 * (attn + 8 * D + 8 * swiglu(D, 14336)) + D + 2 * V * D);
  CHECK(p.active_per_token == 32 * (attn + 8 * D + 2 * swiglu(D, 14336)) + D);
  CHECK(rounds_to(p.total, 46.7e9, 1e8));                          // Mistral AI: 46.7B total
  CHECK(rounds_to(p.active_per_token + p.embedding(), 12.9e9, 1e8));  // 12.9B used per token
}

TEST_CASE("Gemma-2-9B config.json: even layers slide, 4 norms per layer, tied, 9.24B", "[hf][gemma]") {
  const Backbone b = hf("gemma-2-9b-it");
  REQUIRE(b.layers.size() == 42);
  for (std::size_t l = 0; l < b.layers.size(); ++l) {
    INFO("layer " << l);
    if (l % 2 == 0) CHECK(b.layers[l] == LayerAttention{AttentionKind::sliding, 4096});
    else CHECK(b.layers[l].kind == AttentionKind::full);
  }
  CHECK(b.norms_per_layer == 4);
  CHECK(b.tie_embeddings);
  CHECK(b.assumptions.count("tie_embeddings") == 1);  // Gemma2Config default, not in the file
  CHECK(contains(b.assumptions.at("intermediate_size"), "GeGLU"));
  CHECK(b.head_dim == 256);
  CHECK(b.num_heads == 16);
  CHECK(b.num_kv_heads == 8);
  CHECK_FALSE(b.qk_norm);
  const i64 D = 3584, V = 256000;
  const i64 expected = 42 * (gqa_attention(D, 16, 8, 256, false) + 4 * D + swiglu(D, 14336)) + D + V * D;
  CHECK(params_of(b).total == expected);
  CHECK(rounds_to(params_of(b).total, 9.24e9, 1e7));
}

TEST_CASE("Gemma-3-1B config.json: every 6th layer global, QK-norm, 1.0B", "[hf][gemma]") {
  const Backbone b = hf("gemma-3-1b-it");
  REQUIRE(b.layers.size() == 26);
  for (std::size_t l = 0; l < b.layers.size(); ++l) {
    INFO("layer " << l);
    if ((l + 1) % 6 == 0) CHECK(b.layers[l].kind == AttentionKind::full);
    else CHECK(b.layers[l] == LayerAttention{AttentionKind::sliding, 512});
  }
  CHECK(b.num_sliding_layers() == 22);
  CHECK(b.qk_norm);
  CHECK(b.norms_per_layer == 4);
  CHECK(b.num_kv_heads == 1);
  CHECK(b.rope_theta == 1e6);
  CHECK(contains(b.assumptions.at("rope_theta"), "10000"));  // the local layers' base
  const i64 D = 1152, V = 262144;
  const i64 expected =
      26 * (gqa_attention(D, 4, 1, 256, false) + 2 * 256 + 4 * D + swiglu(D, 6912)) + D + V * D;
  CHECK(params_of(b).total == expected);
  CHECK(rounds_to(params_of(b).total, 1.0e9, 1e8));
}

TEST_CASE("Gemma-3-4B multimodal config.json: text_config imported with Gemma3TextConfig defaults", "[hf][gemma]") {
  const Backbone b = hf("gemma-3-4b-it");
  CHECK(contains(b.source, "model_type gemma3"));
  CHECK(contains(b.assumptions.at("vision_tower"), "ignored"));
  CHECK(b.num_layers == 34);
  CHECK(b.hidden == 2560);
  CHECK(b.intermediate == 10240);
  // Not in the sparse text_config: HF's Gemma3TextConfig defaults, each recorded.
  CHECK(b.num_heads == 8);
  CHECK(b.num_kv_heads == 4);
  CHECK(b.head_dim == 256);
  CHECK(b.vocab_size == 262208);
  CHECK(b.tie_embeddings);
  CHECK(b.max_context == 131072);
  for (const char* field : {"num_heads", "num_kv_heads", "head_dim", "vocab_size", "tie_embeddings", "max_context"})
    CHECK(b.assumptions.count(field) == 1);
  CHECK(b.dtype == DType::bf16);  // torch_dtype outside text_config
  CHECK(b.assumptions.count("dtype") == 0);
  CHECK(b.num_sliding_layers() == 34 - 5);  // global at 5, 11, 17, 23, 29
  CHECK(b.layers[5].kind == AttentionKind::full);
  CHECK(b.layers[0] == LayerAttention{AttentionKind::sliding, 1024});
  // 3.88B language model; the published 4.3B adds the ~0.4B SigLIP tower.
  CHECK(rounds_to(params_of(b).total, 3.88e9, 1e7));
}

TEST_CASE("DeepSeek-V3 config.json: MLA ranks, MoE with sigmoid router, 671B / 37B", "[hf][moe][mla]") {
  const Backbone b = hf("deepseek-v3");
  REQUIRE(b.mla.has_value());
  CHECK(b.mla->q_lora_rank == 1536);
  CHECK(b.mla->kv_lora_rank == 512);
  CHECK(b.mla->qk_nope_head_dim == 128);
  CHECK(b.mla->qk_rope_head_dim == 64);
  CHECK(b.mla->v_head_dim == 128);
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 256);
  CHECK(b.moe->top_k == 8);
  CHECK(b.moe->expert_intermediate == 2048);
  CHECK(b.moe->num_shared_experts == 1);
  CHECK(b.moe->shared_expert_intermediate == 2048);
  CHECK(b.moe->first_dense_layers == 3);
  CHECK(b.moe->router == RouterKind::sigmoid);
  CHECK(b.intermediate == 18432);
  CHECK(b.num_layers == 61);
  CHECK(b.hidden == 7168);
  CHECK(b.num_heads == 128);
  CHECK(b.vocab_size == 129280);
  CHECK(b.max_context == 163840);
  CHECK(contains(b.assumptions.at("mtp"), "num_nextn_predict_layers = 1"));
  CHECK(contains(b.assumptions.at("mla"), "approximated"));
  CHECK(contains(b.assumptions.at("dtype"), "fp8"));  // quantization_config recorded

  // Main model (what the 671B figure counts; the MTP module's 14B are extra).
  const i64 D = 7168, H = 128, V = 129280, qr = 1536, kvr = 512, nope = 128, rope = 64, vd = 128;
  const i64 mla = D * qr + qr + qr * H * (nope + rope) + D * (kvr + rope) + kvr + kvr * H * (nope + vd) + H * vd * D;
  const i64 dense_layer = mla + 2 * D + swiglu(D, 18432);
  const i64 moe_layer = mla + 2 * D + 256 * D + 256 * swiglu(D, 2048) + swiglu(D, 2048);
  const i64 expected = 3 * dense_layer + 58 * moe_layer + D + 2 * V * D;
  const ParamCounts p = count_params(make_config(b, Design{}));
  CHECK(p.total == expected);
  CHECK(rounds_to(p.total, 671e9, 1e9));  // DeepSeek-V3 README: 671B main model
  // Activated: 36.6B including the 0.9B output head (the README's main-model figure), i.e. 37B.
  CHECK(rounds_to(p.active_per_token + p.embedding_output, 36.6e9, 1e8));
  CHECK(rounds_to(p.active_per_token + p.embedding_output, 37e9, 1e9));
}

TEST_CASE("every bundled HF config imports, names its source and round-trips through our format", "[hf]") {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(hf_dir()))
    if (entry.path().extension() == ".json") files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  std::ifstream sources_md(hf_dir() + "/SOURCES.md");
  std::stringstream sources;
  sources << sources_md.rdbuf();
  // The folder holds exactly the files SOURCES.md's table accounts for ("| NAME.json | ...").
  std::set<std::string> listed;
  const std::regex row(R"(\n\| ([^ |]+\.json) \|)");
  const std::string text = sources.str();
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator(); ++it)
    listed.insert((*it)[1].str());
  CHECK(std::set<std::string>(files.begin(), files.end()) == listed);
  REQUIRE_FALSE(files.empty());
  std::set<std::string> model_types;
  for (const auto& f : files) {
    INFO(f);
    const Json j = read_json_file(hf_dir() + "/" + f);
    model_types.insert(j.at("model_type").get<std::string>());
    const Backbone b = import_hf_config(j);
    CHECK(contains(b.source, "HuggingFace config.json (model_type " + j.at("model_type").get<std::string>()));
    CHECK(contains(sources.str(), f));  // every file says where it came from
    CHECK(parse_backbone(to_json(b)) == b);
    CHECK(load_backbone(j) == b);
  }
  // At least one file per supported model_type.
  for (const char* t : {"llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "mixtral", "gemma2", "gemma3", "gemma3_text",
                        "deepseek_v2", "deepseek_v3", "kimi_k2", "phi3", "olmoe", "mistral3", "qwen3_next"})
    CHECK(model_types.count(t) == 1);
}

TEST_CASE("an embedded hf_config in a config document goes through the importer", "[hf]") {
  Json doc = {{"hf_config", hf_json("qwen3-8b")}, {"design", {{"hd", {{"n", 2}, {"layers", "full"}}}}}};
  const Config c = parse_config(doc);
  CHECK(c.base == hf("qwen3-8b"));
  CHECK(std::get<HdDesign>(c.design.method).n == 2);
  doc["hf_config"].erase("num_hidden_layers");
  const Caught e = config_error([&] { parse_config(doc); });
  CHECK(e.pointer == "/hf_config/num_hidden_layers");
  CHECK(e.reason == "is required");
}
