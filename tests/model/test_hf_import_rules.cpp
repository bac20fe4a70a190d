// HuggingFace config.json import rules: the defaults HF applies per model_type (each
// recorded as an assumption), layer_types, RoPE scaling and dtype checks, and what hdlab
// cannot express refused with a ConfigError naming the field.
#include <cstdint>
#include <string>

#include "hf_test_support.hpp"

using namespace hf_test;

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

TEST_CASE("HF model families: unsupported layer layouts refused at their key, dense blocks and biases imported",
          "[hf][errors]") {
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
                 "rope_type llama3, factor 8, original context 8192 tokens: the executor applies it to the rotary "
                 "frequencies (no parameters, no FLOPs"));
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
