// Parameter counts computed by hand for small configs, and the published HD embedding
// figures for Qwen3-8B.
#include <catch2/catch.hpp>

#include <cmath>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/params.hpp"

using namespace hdlab::model;

namespace {

// 2 layers, D 8, 2 query heads / 1 KV head of 4, SwiGLU F 16, vocabulary 10, QK-norm.
// Per layer: q 8*2*4 = 64, k = v = 8*1*4 = 32, o 64 -> 192; QK-norm 2*4 = 8; norms 2*8 = 16;
// FFN 3*8*16 = 384. Layers 2*600 = 1200, final norm 8, input and output tables 80 each.
Json tiny_dense() {
  return Json::parse(R"({"num_layers": 2, "hidden_size": 8, "num_heads": 2, "num_kv_heads": 1, "head_dim": 4,
                        "qk_norm": true, "intermediate_size": 16, "vocab_size": 10})");
}

// 3 layers, D 8, 2 x 2 heads of 4, tied; layer 0 dense F 16, layers 1-2 MoE: 4 experts of
// F_e 6, top-2, one shared expert of 10.
Json tiny_moe() {
  return Json::parse(R"({"num_layers": 3, "hidden_size": 8, "num_heads": 2, "num_kv_heads": 2, "head_dim": 4,
                        "intermediate_size": 16, "vocab_size": 10, "tie_embeddings": true,
                        "moe": {"num_experts": 4, "top_k": 2, "expert_intermediate_size": 6,
                                "num_shared_experts": 1, "shared_expert_intermediate_size": 10,
                                "first_dense_layers": 1}})");
}

ParamCounts params_of(const Json& backbone, const char* design) {
  return count_params(parse_config(Json{{"backbone", backbone}, {"design", Json::parse(design)}}));
}

}  // namespace

TEST_CASE("dense baseline counted by hand", "[params]") {
  ParamCounts p = params_of(tiny_dense(), "{}");
  CHECK(p.attention == 2 * 192);
  CHECK(p.qk_norm == 2 * 8);
  CHECK(p.norms == 2 * 16 + 8);
  CHECK(p.dense_ffn == 2 * 384);
  CHECK(p.embedding_input == 80);
  CHECK(p.embedding_output == 80);
  CHECK(p.router == 0);
  CHECK(p.total == 1368);
  CHECK(p.non_embedding() == 1208);
  CHECK(p.active_per_token == 1208);
}

TEST_CASE("MoE with a leading dense layer, shared expert and tied head", "[params][moe]") {
  ParamCounts p = params_of(tiny_moe(), "{}");
  CHECK(p.attention == 3 * 256);
  CHECK(p.norms == 3 * 16 + 8);
  CHECK(p.dense_ffn == 384);
  CHECK(p.router == 2 * 4 * 8);
  CHECK(p.routed_experts == 2 * 4 * 3 * 8 * 6);
  CHECK(p.shared_experts == 2 * 3 * 8 * 10);
  CHECK(p.embedding_output == 0);
  CHECK(p.total == 2984);
  // Active: everything but the 2 idle experts of 4 in each MoE layer, embeddings excluded.
  CHECK(p.active_per_token == 768 + 56 + 384 + 64 + 2 * (2 * 3 * 8 * 6) + 480);
}

TEST_CASE("HD adds n-1 input tables and nothing else", "[params][hd]") {
  ParamCounts base = params_of(tiny_dense(), "{}");
  ParamCounts hd = params_of(tiny_dense(), R"({"hd": {"n": 3}})");
  CHECK(hd.embedding_input == 3 * 80);
  CHECK(hd.total == base.total + 2 * 80);
  CHECK(hd.active_per_token == base.active_per_token);
}

TEST_CASE("VWN: over-width embedding, GHC, GroupNorm, reduce, MTP", "[params][vwn]") {
  // m 2, n 3, D 8: slots of 4, D' = 12. One GHC: static 3*5 + 2*3 = 21; dynamic 4*5 + 4*2 +
  // 4 (norm) + 2 (scales) = 34. Two GHCs per layer, 2 layers.
  ParamCounts p = params_of(tiny_dense(), R"({"vwn": {"m": 2, "n": 3}})");
  CHECK(p.ghc == 4 * 55);
  CHECK(p.embedding_input == 10 * 12);
  CHECK(p.norms == 2 * 16 + 8 + 2 * 12);  // GroupNorm: weight and bias per channel of D'
  CHECK(p.adapters == 12 * 8);
  CHECK(p.total == 1368 - 80 + 120 + 220 + 24 + 96);

  ParamCounts s = params_of(tiny_dense(), R"({"vwn": {"m": 2, "n": 3, "dynamic": false}})");
  CHECK(s.ghc == 4 * 21);

  ParamCounts proj = params_of(tiny_dense(), R"({"vwn": {"m": 2, "n": 3, "embedding": "projected", "mtp": true}})");
  CHECK(proj.embedding_input == 80);
  CHECK(proj.adapters == 8 * 12 + 12 * 8);
  CHECK(proj.mtp == 2 * 4 * 4);
  CHECK(proj.total == 1368 + 220 + 24 + 192 + 32);
}

TEST_CASE("looped: weights shared across iterations, plus the injection adapter", "[params][looped]") {
  ParamCounts base = params_of(tiny_dense(), "{}");
  ParamCounts plain = params_of(tiny_dense(), R"({"looped": {"iterations": 4}})");
  CHECK(plain.total == base.total);
  ParamCounts inj = params_of(tiny_dense(), R"({"looped": {"prelude": 1, "recurrent": 1, "iterations": 4,
                                                           "input_injection": true}})");
  CHECK(inj.adapters == 2 * 8 * 8);
  CHECK(inj.total == base.total + 128);
}

TEST_CASE("growth: depth and width multiply layers, experts and top-k", "[params][growth]") {
  ParamCounts p = params_of(tiny_moe(), R"({"growth": {"depth_factor": 2, "width_factor": 2}})");
  // 6 layers (2 dense in front), 8 experts top-4 in the 4 MoE layers.
  CHECK(p.attention == 6 * 256);
  CHECK(p.dense_ffn == 2 * 384);
  CHECK(p.router == 4 * 8 * 8);
  CHECK(p.routed_experts == 4 * 8 * 3 * 8 * 6);
  CHECK(p.shared_experts == 4 * 240);
  CHECK(p.total == 80 + 1536 + 104 + 768 + 256 + 4608 + 960);
  CHECK(p.active_per_token == 1536 + 104 + 768 + 256 + 4 * (4 * 3 * 8 * 6) + 960);
}

TEST_CASE("Qwen3-8B embeddings under HD: 1.2B -> 1.9B / 3.1B / 5.6B", "[params][hd][published]") {
  // Architecture facts of Qwen3-8B's public config.json.
  const Json qwen3_8b = Json::parse(R"({"name": "Qwen3-8B", "num_layers": 36, "hidden_size": 4096,
      "num_heads": 32, "num_kv_heads": 8, "head_dim": 128, "qk_norm": true, "intermediate_size": 12288,
      "vocab_size": 151936, "rope_theta": 1000000})");
  auto billions = [](std::int64_t v) { return std::round(static_cast<double>(v) / 1e8) / 10.0; };
  const std::int64_t table = std::int64_t{151936} * 4096;
  ParamCounts base = params_of(qwen3_8b, "{}");
  CHECK(base.embedding() == 2 * table);
  CHECK(billions(base.embedding()) == 1.2);
  const std::pair<int, double> published[] = {{2, 1.9}, {4, 3.1}, {8, 5.6}};
  for (auto [n, figure] : published) {
    ParamCounts hd = params_of(qwen3_8b, (R"({"hd": {"n": )" + std::to_string(n) + "}}").c_str());
    CHECK(hd.embedding() == (n + 1) * table);
    CHECK(billions(hd.embedding()) == figure);
  }
  // The whole model: 8.19B with embeddings (the model card's 8.2B), 6.95B without.
  CHECK(base.total == 8190735360);
  CHECK(billions(base.non_embedding()) == 6.9);
}

TEST_CASE("a separate input vocabulary sizes the input tables, the head keeps vocab_size", "[params][vocab]") {
  Json big_input = tiny_dense();
  big_input["input_vocab_size"] = 1000;
  ParamCounts p = params_of(big_input, "{}");
  CHECK(p.embedding_input == 1000 * 8);
  CHECK(p.embedding_output == 10 * 8);
  CHECK(p.total == 1368 - 80 + 8000);
  CHECK(p.active_per_token == 1208);  // lookups are not active parameters
  // HD: every stream's table has the input rows; VWN's over-width table too.
  CHECK(params_of(big_input, R"({"hd": {"n": 3}})").embedding_input == 3 * 8000);
  CHECK(params_of(big_input, R"({"vwn": {"m": 2, "n": 3}})").embedding_input == 1000 * 12);
  // Padding applies to both tables.
  big_input["vocab_pad_multiple"] = 64;
  p = params_of(big_input, "{}");
  CHECK(p.embedding_input == 1024 * 8);
  CHECK(p.embedding_output == 64 * 8);

  // One vocabulary however it is written; the JSON always states the input rows.
  Json same = tiny_dense();
  same["input_vocab_size"] = 10;
  CHECK(parse_backbone(same).input_vocab_size == 0);
  CHECK(parse_backbone(same).padded_input_vocab() == 10);
  const Backbone b = parse_backbone(big_input);
  CHECK(to_json(b)["input_vocab_size"] == 1000);
  CHECK(to_json(parse_backbone(tiny_dense()))["input_vocab_size"] == 10);
  CHECK(parse_backbone(to_json(b)) == b);

  // A tied head is the input table: the two cannot differ.
  Json tied = big_input;
  tied["tie_embeddings"] = true;
  try {
    parse_backbone(tied);
    FAIL("a tied head with its own vocabulary was accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "/backbone/input_vocab_size: must equal vocab_size (10) with tie_embeddings: a tied "
                                   "head is the input table, got 1000");
  }
}
