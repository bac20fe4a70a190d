// HF import of the DeepSeek family beyond DeepSeek-V3: Kimi-K2 (a DeepseekV3ForCausalLM
// under model_type kimi_k2) and DeepSeek-V2-Lite (MLA without q_lora). Parameter totals
// are checked exactly against hand formulas and within 0.1% of the published figure.
#include "hf_test_support.hpp"

using namespace hf_test;

TEST_CASE("Kimi-K2-Instruct config.json: kimi_k2 imports as DeepSeek-V3 shapes, 1.026T / 32B", "[hf][moe][mla]") {
  const Backbone b = hf("kimi-k2-instruct");
  CHECK(b.source == "HuggingFace config.json (model_type kimi_k2)");
  CHECK(b.name == "DeepseekV3ForCausalLM");  // no _name_or_path: the architecture names it
  REQUIRE(b.mla.has_value());
  CHECK(*b.mla == MlaConfig{1536, 512, 128, 64, 128});
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 384);
  CHECK(b.moe->top_k == 8);
  CHECK(b.moe->expert_intermediate == 2048);
  CHECK(b.moe->num_shared_experts == 1);
  CHECK(b.moe->first_dense_layers == 1);
  CHECK(b.moe->router == RouterKind::sigmoid);
  CHECK(b.intermediate == 18432);
  CHECK(b.num_layers == 61);
  CHECK(b.num_heads == 64);
  CHECK(b.vocab_size == 163840);
  CHECK(b.rope_theta == 50000.0);
  CHECK(b.max_context == 131072);
  CHECK(b.assumptions.count("mtp") == 0);  // num_nextn_predict_layers 0
  CHECK(contains(b.assumptions.at("moe"), "e_score_correction_bias"));
  CHECK_FALSE(contains(b.assumptions.at("moe"), "group-limited"));  // n_group 1: no groups
  CHECK(contains(b.assumptions.at("rope_scaling"), "rope_type yarn, factor 32"));
  for (const char* field : {"num_kv_heads", "max_context", "norm_eps", "rope_theta", "tie_embeddings"})
    CHECK(b.assumptions.count(field) == 0);  // all stated by the file

  const i64 D = 7168, V = 163840;
  const i64 attn = mla_params(D, 64, 1536, 512, 128, 64, 128) + 2 * D;
  const i64 dense_layer = attn + swiglu(D, 18432);
  const i64 moe_layer = attn + 384 * D + 384 * swiglu(D, 2048) + swiglu(D, 2048);
  const ParamCounts p = params_of(b);
  CHECK(p.total == dense_layer + 60 * moe_layer + D + 2 * V * D);
  // The released checkpoint's tensor inventory (Kimi-K2-Instruct, 61 safetensors files):
  // 1,026,470,731,056 numbers, of which 62,521,648 are fp8 block scales (weight_scale_inv),
  // RoPE inv_freq buffers and the routers' e_score_correction_bias, none of them weights
  // hdlab counts. The model card rounds this to "1T total parameters".
  CHECK(p.total == 1026470731056 - 62521648);
  CHECK(within(p.total, 1026470731056.0, 0.001));
  // Model card: 32B activated parameters (all attention, the dense layer, 8 routed + 1
  // shared expert per MoE layer, and the output head); published to 2 digits, so 2%.
  CHECK(within(p.active_per_token + p.embedding_output, 32e9, 0.02));
}

TEST_CASE("DeepSeek-V2-Lite config.json: MLA without q_lora, 2 shared experts, 15.7B / 2.4B", "[hf][moe][mla]") {
  const Backbone b = hf("deepseek-v2-lite-chat");
  CHECK(b.source == "HuggingFace config.json (model_type deepseek_v2)");
  REQUIRE(b.mla.has_value());
  CHECK(b.mla->q_lora_rank == 0);  // q_lora_rank null: q_proj straight from D
  CHECK(b.mla->kv_lora_rank == 512);
  CHECK(b.head_dim == 192);  // qk_nope + qk_rope; the v5 re-save's head_dim 64 is not read
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 64);
  CHECK(b.moe->top_k == 6);
  CHECK(b.moe->expert_intermediate == 1408);
  CHECK(b.moe->num_shared_experts == 2);
  CHECK(b.moe->shared_expert_intermediate == 1408);
  CHECK(b.moe->first_dense_layers == 1);
  CHECK(b.moe->router == RouterKind::softmax);
  CHECK(b.intermediate == 10944);
  CHECK(b.num_layers == 27);
  CHECK(b.vocab_size == 102400);
  CHECK(b.rope_theta == 10000.0);  // from rope_parameters (transformers v5)
  CHECK(b.max_context == 163840);
  CHECK(b.assumptions.count("dtype") == 0);  // "dtype": "bfloat16"
  CHECK(contains(b.assumptions.at("mla"), "q_proj, no q_lora"));
  CHECK(b.assumptions.count("moe") == 0);  // greedy top-k: no router bias; n_group 1: no groups

  const i64 D = 2048, V = 102400;
  const i64 attn = mla_params(D, 16, 0, 512, 128, 64, 128) + 2 * D;
  const i64 dense_layer = attn + swiglu(D, 10944);
  const i64 moe_layer = attn + 64 * D + 64 * swiglu(D, 1408) + 2 * swiglu(D, 1408);
  const ParamCounts p = params_of(b);
  CHECK(p.total == dense_layer + 26 * moe_layer + D + 2 * V * D);
  // The released checkpoint's tensor inventory (DeepSeek-V2-Lite-Chat, 4 safetensors files,
  // all bf16 weights): 15,706,484,224, shown as 15.7B on the model card.
  CHECK(p.total == 15706484224);
  CHECK(within(p.total, 15.7e9, 0.001));
  // Model card / DeepSeek-V2 paper: 2.4B activated (with the output head); 2 digits, so 3%.
  CHECK(within(p.active_per_token + p.embedding_output, 2.4e9, 0.03));
}

TEST_CASE("DeepSeek-family defaults follow the configuration class and are recorded", "[hf][moe][mla]") {
  SECTION("deepseek_v2: no shared experts, no dense block, softmax router when absent") {
    Json j = hf_json("deepseek-v2-lite-chat");
    for (const char* key : {"n_shared_experts", "first_k_dense_replace", "scoring_func"}) j.erase(key);
    const Backbone b = import_hf_config(j);
    CHECK(b.moe->num_shared_experts == 0);
    CHECK(b.moe->first_dense_layers == 0);
    CHECK(b.intermediate == 0);  // every layer MoE
    CHECK(b.moe->router == RouterKind::softmax);
    for (const char* key : {"n_shared_experts", "first_k_dense_replace", "scoring_func"})
      CHECK(contains(b.assumptions.at("moe"), std::string("config.json has no ") + key + "; HuggingFace's deepseek_v2"));
  }
  SECTION("kimi_k2 takes DeepseekV3Config's defaults and says so") {
    Json j = hf_json("kimi-k2-instruct");
    j.erase("first_k_dense_replace");
    j.erase("n_group");
    j.erase("topk_group");
    const Backbone b = import_hf_config(j);
    CHECK(b.moe->first_dense_layers == 3);
    CHECK(contains(b.assumptions.at("moe"), "config.json has no first_k_dense_replace; HuggingFace's deepseek_v3 "
                                            "default 3 used"));
    // DeepseekV3Config's n_group 8 / topk_group 4: group-limited routing, noted.
    CHECK(contains(b.assumptions.at("moe"), "group-limited routing (n_group 8, topk_group 4)"));
    // Layers 1 and 2 trade their router and 384 + 1 experts for the dense 18432-wide FFN.
    const i64 D = 7168;
    const i64 moe_ffn = 384 * D + 385 * swiglu(D, 2048), dense_ffn = swiglu(D, 18432);
    CHECK(params_of(hf("kimi-k2-instruct")).total - params_of(b).total == 2 * (moe_ffn - dense_ffn));
  }
}

TEST_CASE("DeepSeek-family fields hdlab cannot model are refused by pointer", "[hf][errors][mla]") {
  struct Row {
    const char* file;
    const char* key;
    Json value;
    const char* pointer;
    const char* reason;
  };
  const Row rows[] = {
      {"kimi-k2-instruct", "attention_bias", true, "/attention_bias",
       "true is unsupported for multi-head latent attention (its q_a, kv_a and o biases are not modelled)"},
      {"deepseek-v2-lite-chat", "mlp_bias", true, "/mlp_bias",
       "true is unsupported: FFN biases of an MoE backbone are not modelled"},
      {"kimi-k2-instruct", "n_group", 5, "/n_group",
       "384 routed experts (n_routed_experts) cannot be split into 5 equal groups"},
      {"kimi-k2-instruct", "topk_group", 2, "/topk_group", "must be <= n_group (1), got 2"},
      {"kimi-k2-instruct", "n_group", 96, "/num_experts_per_tok",
       "8 experts per token cannot be chosen from topk_group 1 groups of 4 experts"},
      {"deepseek-v2-lite-chat", "topk_method", "sparse_sinkhorn", "/topk_method",
       "unsupported topk_method \"sparse_sinkhorn\" (noaux_tc, greedy, group_limited_greedy)"},
      {"kimi-k2-instruct", "moe_layer_freq", 2, "/moe_layer_freq",
       "values other than 1 are unsupported: hdlab models dense FFN layers only as a leading block "
       "(first_dense_layers)"},
      {"deepseek-v2-lite-chat", "kv_lora_rank", nullptr, "/kv_lora_rank", "is required"},
  };
  for (const Row& row : rows) {
    INFO(row.file << " " << row.key << " = " << row.value.dump());
    Json j = hf_json(row.file);
    j[row.key] = row.value;
    const Caught e = config_error([&] { import_hf_config(j); });
    CHECK(e.pointer == row.pointer);
    CHECK(e.reason == row.reason);
  }
  // Inside a config document the pointer names the embedded file.
  Json doc = {{"hf_config", hf_json("kimi-k2-instruct")}};
  doc["hf_config"]["attention_bias"] = true;
  CHECK(config_error([&] { parse_config(doc); }).pointer == "/hf_config/attention_bias");
}
