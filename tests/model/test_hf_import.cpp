// HuggingFace config.json import: every bundled public config yields the published
// architecture and parameter totals; defaults HF applies are applied and recorded; what
// hdlab cannot express is refused with a ConfigError naming the field.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/hf_import.hpp"
#include "hdlab/model/params.hpp"

using namespace hdlab::model;
using i64 = std::int64_t;

namespace {

std::string hf_dir() { return std::string(HDLAB_SOURCE_DIR) + "/profiles/models/hf"; }

Json hf_json(const std::string& name) { return read_json_file(hf_dir() + "/" + name + ".config.json"); }

Backbone hf(const std::string& name) { return import_hf_config(hf_json(name)); }

ParamCounts params_of(const Backbone& b) { return count_params(make_config(b, Design{})); }

// The ConfigError `f` throws (pointer and reason); fails the test when none is thrown.
struct Caught {
  std::string pointer, reason;
};
template <class F>
Caught config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return {e.pointer(), e.reason()};
  }
  FAIL("no ConfigError thrown");
  return {};
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Published figures are given to a few significant digits: `value` rounds to `published`
// at `unit` resolution (e.g. 8.19B at 0.01B).
bool rounds_to(i64 value, double published, double unit) {
  return std::llround(static_cast<double>(value) / unit) == std::llround(published / unit);
}

bool within(i64 value, double published, double rel) {
  return std::abs(static_cast<double>(value) - published) <= rel * published;
}

// Hand formulas for a standard GQA + SwiGLU decoder (methods.md section 0), one layer.
i64 gqa_attention(i64 D, i64 H, i64 G, i64 hd, bool qkv_bias) {
  return D * H * hd + 2 * D * G * hd + H * hd * D + (qkv_bias ? H * hd + 2 * G * hd : 0);
}
i64 swiglu(i64 D, i64 F) { return 3 * D * F; }

}  // namespace

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
                        "deepseek_v2", "deepseek_v3", "kimi_k2", "qwen3_next"})
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

TEST_CASE("HF defaults are applied per model_type and recorded as assumptions", "[hf]") {
  SECTION("llama: MHA, hidden / heads, rope 10000, eps 1e-6, untied, bf16 assumed") {
    const Backbone b = import_hf_config(Json::parse(R"({
      "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 100})"));
    CHECK(b.num_kv_heads == 4);
    CHECK(b.head_dim == 16);
    CHECK(b.rope_theta == 10000.0);
    CHECK(b.norm_eps == 1e-6);
    CHECK_FALSE(b.tie_embeddings);
    CHECK(b.max_context == 2048);
    CHECK(b.dtype == DType::bf16);
    CHECK(b.name == "llama");
    for (const char* field : {"num_kv_heads", "head_dim", "rope_theta", "norm_eps", "tie_embeddings", "max_context",
                              "dtype"})
      CHECK(b.assumptions.count(field) == 1);
    CHECK(contains(b.assumptions.at("dtype"), "bf16"));
  }
  SECTION("mistral: absent num_key_value_heads is 8, explicit null is MHA; absent window is 4096") {
    Json j = Json::parse(R"({
      "model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 16,
      "intermediate_size": 128, "vocab_size": 100, "torch_dtype": "float16"})");
    const Backbone b = import_hf_config(j);
    CHECK(b.num_kv_heads == 8);
    CHECK(b.dtype == DType::bf16);  // the working precision; the checkpoint's fp16 is reported
    CHECK(contains(b.assumptions.at("dtype"), "stored as float16"));
    CHECK(b.num_sliding_layers() == 2);
    CHECK(b.layers[0].window == 4096);
    CHECK(b.assumptions.count("attention") == 1);
    j["num_key_value_heads"] = nullptr;
    j["sliding_window"] = nullptr;
    const Backbone mha = import_hf_config(j);
    CHECK(mha.num_kv_heads == 16);
    CHECK(mha.num_sliding_layers() == 0);
  }
  SECTION("gemma2: tied and 4096 window when absent") {
    const Backbone b = import_hf_config(Json::parse(R"({
      "model_type": "gemma2", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
      "intermediate_size": 128, "vocab_size": 100})"));
    CHECK(b.tie_embeddings);
    CHECK(b.head_dim == 256);  // Gemma2Config default, not hidden / heads
    CHECK(b.num_kv_heads == 4);
    CHECK(b.layers[0] == LayerAttention{AttentionKind::sliding, 4096});
    CHECK(b.layers[1].kind == AttentionKind::full);
  }
  SECTION("rope_theta from transformers v5 rope_parameters") {
    const Backbone b = import_hf_config(Json::parse(R"({
      "model_type": "qwen3", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128, "vocab_size": 100,
      "rope_parameters": {"rope_theta": 1000000, "rope_type": "default"}, "dtype": "bfloat16"})"));
    CHECK(b.rope_theta == 1e6);
    CHECK(b.assumptions.count("rope_theta") == 0);
    CHECK(b.assumptions.count("dtype") == 0);
  }
  SECTION("deepseek_v3: absent q_lora_rank takes HF's 1536, explicit null projects queries directly") {
    Json j = hf_json("deepseek-v3");
    j.erase("q_lora_rank");
    Backbone b = import_hf_config(j);
    CHECK(b.mla->q_lora_rank == 1536);
    CHECK(contains(b.assumptions.at("mla"), "q_lora_rank"));
    CHECK(contains(b.assumptions.at("mla"), "approximated"));  // both notes kept
    j["q_lora_rank"] = nullptr;
    b = import_hf_config(j);
    CHECK(b.mla->q_lora_rank == 0);
  }
  SECTION("keys hdlab does not use are accepted") {
    Json j = hf_json("qwen3-8b");
    j["some_future_key"] = {{"anything", 1}};
    CHECK(import_hf_config(j) == hf("qwen3-8b"));
  }
}

TEST_CASE("layer_types is honoured for any model_type - Qwen's max_window_layers rule", "[hf]") {
  SECTION("generic layer_types") {
    Json j = hf_json("llama-3.1-8b");
    j["num_hidden_layers"] = 4;
    j["layer_types"] = {"sliding_attention", "full_attention", "full_attention", "sliding_attention"};
    j["sliding_window"] = 128;
    const Backbone b = import_hf_config(j);
    CHECK(b.layers[0] == LayerAttention{AttentionKind::sliding, 128});
    CHECK(b.layers[1] == LayerAttention{AttentionKind::full, 0});
    CHECK(b.layers[2] == LayerAttention{AttentionKind::full, 0});
    CHECK(b.layers[3] == LayerAttention{AttentionKind::sliding, 128});
  }
  SECTION("Qwen: layers from max_window_layers on slide when use_sliding_window") {
    Json j = hf_json("qwen2.5-7b");
    j["use_sliding_window"] = true;
    j["max_window_layers"] = 20;
    j["sliding_window"] = 4096;
    const Backbone b = import_hf_config(j);
    CHECK(b.num_sliding_layers() == 8);
    CHECK(b.layers[19].kind == AttentionKind::full);
    CHECK(b.layers[20] == LayerAttention{AttentionKind::sliding, 4096});
  }
  SECTION("unsupported layer types and wrong lengths are errors") {
    Json j = hf_json("llama-3.1-8b");
    j["num_hidden_layers"] = 2;
    j["layer_types"] = {"full_attention", "chunked_attention"};
    Caught e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == "/layer_types/1");
    CHECK(contains(e.reason, "unsupported"));
    j["layer_types"] = {"full_attention"};
    e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == "/layer_types");
  }
}

TEST_CASE("bad HF configs give ConfigErrors at the right place", "[hf][errors]") {
  SECTION("missing num_hidden_layers") {
    Json j = hf_json("qwen3-8b");
    j.erase("num_hidden_layers");
    const Caught e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == "/num_hidden_layers");
    CHECK(e.reason == "is required");
    const Caught prefixed = config_error([&] { import_hf_config(j, "/model"); });
    CHECK(prefixed.pointer == "/model/num_hidden_layers");
  }
  SECTION("null counts as missing for a required key") {
    Json j = hf_json("qwen3-8b");
    j["vocab_size"] = nullptr;
    CHECK(config_error([&] { import_hf_config(j); }).pointer == "/vocab_size");
  }
  SECTION("wrong type") {
    Json j = hf_json("qwen3-8b");
    j["hidden_size"] = "4096";
    const Caught e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == "/hidden_size");
    CHECK(contains(e.reason, "must be an integer"));
  }
  SECTION("unknown model_type") {
    Json j = hf_json("qwen3-8b");
    j["model_type"] = "gpt2";
    const Caught e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == "/model_type");
    CHECK(contains(e.reason, "unsupported model_type \"gpt2\""));
  }
  SECTION("architectures without model_type") {
    const Caught e = config_error([&] { import_hf_config(Json::parse(R"({"architectures": ["X"]})")); });
    CHECK(e.pointer == "/model_type");
    CHECK(e.reason == "is required");
  }
  SECTION("qwen3_moe: dense layers after MoE layers are unsupported") {
    Json j = hf_json("qwen3-30b-a3b");
    j["mlp_only_layers"] = {5};
    Caught e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == "/mlp_only_layers");
    CHECK(contains(e.reason, "unsupported"));
    j["mlp_only_layers"] = Json::array();
    j["decoder_sparse_step"] = 2;
    e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == "/decoder_sparse_step");
    CHECK(contains(e.reason, "unsupported"));
  }
  SECTION("qwen3_moe: a leading dense block is first_dense_layers with the dense intermediate_size") {
    Json j = hf_json("qwen3-30b-a3b");
    j["mlp_only_layers"] = {0, 1};
    const Backbone b = import_hf_config(j);
    CHECK(b.moe->first_dense_layers == 2);
    CHECK(b.intermediate == 6144);
  }
  SECTION("deepseek_v3: MoE every other layer is unsupported") {
    Json j = hf_json("deepseek-v3");
    j["moe_layer_freq"] = 2;
    CHECK(config_error([&] { import_hf_config(j); }).pointer == "/moe_layer_freq");
  }
  SECTION("llama's biases are counted: attention_bias on q, k, v and o; mlp_bias on the FFN's three") {
    Json j = hf_json("llama-3.1-8b");
    const std::int64_t plain = params_of(import_hf_config(j)).total;
    j["attention_bias"] = true;
    const Backbone a = import_hf_config(j);
    CHECK((a.attention_bias && a.output_bias && !a.mlp_bias));
    // 32 layers x (q 4096 + k 1024 + v 1024 + o 4096)
    CHECK(params_of(a).total - plain == 32 * 10240);
    j["attention_bias"] = false;
    j["mlp_bias"] = true;
    const Backbone m = import_hf_config(j);
    CHECK((!m.attention_bias && !m.output_bias && m.mlp_bias));
    // 32 layers x (gate 14336 + up 14336 + down 4096)
    CHECK(params_of(m).total - plain == 32 * 32768);
  }
  SECTION("gemma3 without text_config, or with a broken one") {
    Json j = hf_json("gemma-3-4b-it");
    Json text = j["text_config"];
    j.erase("text_config");
    CHECK(config_error([&] { import_hf_config(j); }).pointer == "/text_config");
    text.erase("hidden_size");
    j["text_config"] = text;
    const Caught e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == "/text_config/hidden_size");
    CHECK(e.reason == "is required");
  }
  SECTION("unsupported dtype") {
    Json j = hf_json("qwen3-8b");
    j["torch_dtype"] = "int4";
    CHECK(config_error([&] { import_hf_config(j); }).pointer == "/torch_dtype");
  }
  SECTION("the imported backbone is validated") {
    Json j = hf_json("qwen3-8b");
    j["num_key_value_heads"] = 5;  // 32 query heads cannot be grouped into 5
    CHECK(config_error([&] { import_hf_config(j); }).pointer == "/num_key_value_heads");
    j["num_key_value_heads"] = 8;
    j["max_position_embeddings"] = -1;
    CHECK(config_error([&] { import_hf_config(j); }).pointer == "/max_position_embeddings");
    // Checks only validate() makes (top-k above the expert count) apply to imports too.
    Json moe = hf_json("qwen3-30b-a3b");
    moe["num_experts_per_tok"] = 200;
    CHECK(config_error([&] { import_hf_config(moe); }).pointer == "/moe/top_k");
  }
}

TEST_CASE("HF rope_scaling is checked as transformers checks it - a valid one is noted", "[bad-input][hf]") {
  struct Row {
    const char* rope_scaling;
    const char* pointer;
    const char* reason;
  };
  const Row rows[] = {
      {R"({"rope_type": "yarnn", "factor": 4})", "/rope_scaling/rope_type",
       "unknown RoPE scaling type \"yarnn\" (known: default, linear, dynamic, yarn, longrope, llama3)"},
      {R"({"factor": 8})", "/rope_scaling/rope_type",
       "is required (one of default, linear, dynamic, yarn, longrope, llama3)"},
      {R"({"rope_type": "linear"})", "/rope_scaling/factor", "is required for rope_type linear"},
      {R"({"rope_type": "linear", "factor": 0.5})", "/rope_scaling/factor", "must be >= 1.0, got 0.5"},
      {R"({"rope_type": "dynamic", "factor": "8"})", "/rope_scaling/factor", "must be a number, got string \"8\""},
      {R"({"rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 1,
           "original_max_position_embeddings": 8192})",
       "/rope_scaling/high_freq_factor", "must be greater than low_freq_factor (4)"},
      {R"({"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4})",
       "/rope_scaling/original_max_position_embeddings", "is required for rope_type llama3"},
      {R"({"rope_type": "yarn", "factor": 4, "beta_fats": 32})", "/rope_scaling/beta_fats",
       "unknown key (did you mean \"beta_fast\"?)"},
      {R"({"rope_type": "yarn", "factor": 4, "beta_fast": 1, "beta_slow": 32})", "/rope_scaling/beta_fast",
       "must be >= beta_slow (32)"},
      {R"({"type": "yarn", "rope_type": "linear", "factor": 2})", "/rope_scaling/type",
       "disagrees with rope_type (\"yarn\" vs \"linear\")"},
      {R"({"rope_type": "longrope", "short_factor": [1, 1], "long_factor": [1, 1]})", "/rope_scaling/short_factor",
       "must be a list of head_dim / 2 = 64 numbers"},
      {"8", "/rope_scaling", "must be an object, got integer"},
  };
  for (const Row& row : rows) {
    INFO(row.rope_scaling);
    Json j = hf_json("qwen3-8b");
    j["rope_scaling"] = Json::parse(row.rope_scaling);
    const Caught e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == row.pointer);
    CHECK(e.reason == row.reason);
  }
  // Valid scalings load, with a note saying what they change (and that costs do not).
  CHECK(contains(hf("llama-3.1-8b").assumptions.at("rope_scaling"),
                 "rope_type llama3, factor 8, original context 8192 tokens: rescales the rotary frequencies only"));
  CHECK(contains(hf("deepseek-v3").assumptions.at("rope_scaling"), "rope_type yarn, factor 40"));
  CHECK(hf("qwen3-8b").assumptions.count("rope_scaling") == 0);  // null: none
}

TEST_CASE("HF dtype: the checkpoint's is reported, bf16 is modelled unless the user sets another",
          "[bad-input][hf]") {
  Json j = hf_json("qwen3-8b");
  j["dtype"] = "float32";  // transformers v5's key, disagreeing with v4's torch_dtype
  Caught e = config_error([&] { import_hf_config(j); });
  CHECK(e.pointer == "/dtype");
  CHECK(e.reason == "\"float32\" disagrees with /torch_dtype (\"bfloat16\"): which one is the checkpoint's?");
  Json gemma = hf_json("gemma-3-4b-it");
  gemma["text_config"]["torch_dtype"] = "float16";
  e = config_error([&] { import_hf_config(gemma); });
  CHECK(e.pointer == "/torch_dtype");
  CHECK(e.reason == "\"bfloat16\" disagrees with /text_config/torch_dtype (\"float16\"): which one is the checkpoint's?");

  // A float32 checkpoint (Gemma 2 base configs) is modelled in bf16, and says so.
  j.erase("dtype");
  j["torch_dtype"] = "float32";
  const Backbone b = import_hf_config(j);
  CHECK(b.dtype == DType::bf16);
  CHECK(b.assumptions.at("dtype") ==
        "the checkpoint is stored as float32; the run is modelled in bf16, hdlab's working precision for HuggingFace "
        "configs (set \"dtype\" beside \"hf_config\" in a config document to model another)");
  // The user's choice: "dtype" beside "hf_config".
  const Backbone fp32 = load_backbone(Json{{"hf_config", j}, {"dtype", "fp32"}});
  CHECK(fp32.dtype == DType::fp32);
  CHECK(fp32.assumptions.count("dtype") == 0);
  e = config_error([&] { load_backbone(Json{{"hf_config", j}, {"dtype", "float32"}}); });
  CHECK(e.pointer == "/dtype");
  CHECK(e.reason == "must be one of bf16, fp16, fp32, fp8, got \"float32\"");
}

TEST_CASE("HF architectures with a classification head are refused, not counted with an LM head",
          "[bad-input][hf]") {
  for (const char* arch : {"Qwen3ForSequenceClassification", "LlamaForTokenClassification", "Qwen3Model"}) {
    INFO(arch);
    Json j = hf_json("qwen3-8b");
    j["architectures"] = {arch};
    j["num_labels"] = 3;
    const Caught e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == "/architectures/0");
    CHECK(contains(e.reason, std::string("\"") + arch + "\" is unsupported: "));
    CHECK(contains(e.reason, "use the *ForCausalLM config of the same backbone"));
    if (contains(arch, "Classification")) CHECK(contains(e.reason, "num_labels x hidden classifier"));
  }
  Json mm = hf_json("gemma-3-4b-it");
  mm["architectures"] = {"Gemma3ForSequenceClassification"};
  CHECK(config_error([&] { import_hf_config(mm); }).pointer == "/architectures/0");
}
