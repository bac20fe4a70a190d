// Multi-head latent attention in the runner (runner_mla.cpp): weights under DeepSeek's
// names counted as the model counts them, the cache keeps the latent and the rope key per
// token (the cost and memory models' entry), the absorbed decode equals the expanded full
// forward (plain, HD, q_lora, the bundled profile), refusals by field. Its layer against
// HF's definition: test_runner_hf_layers.cpp; executed FLOPs: test_runner_flops.cpp.
#include "hdlab/model/params.hpp"
#include "runner_test_support.hpp"

namespace hdlab::executor::testing {

namespace {

model::Backbone bundled_tiny_mla() {
  return model::parse_config(model::read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/models/tiny-mla.json"))
      .base;
}

}  // namespace

TEST_CASE("MLA weights: DeepSeek's tensors, counted as the model counts them", "[runner][mla]") {
  const model::Config c = make(tiny_mla(), "{}");
  std::vector<std::string> attn;
  for (const WeightSpec& s : weight_specs(c))
    if (s.name.rfind("model.layers.0.self_attn.", 0) == 0) attn.push_back(s.name.substr(25) + " " + to_string(s.shape));
  CHECK(attn == std::vector<std::string>{"q_proj.weight [40, 32]", "kv_a_proj_with_mqa.weight [16, 32]",
                                         "kv_a_layernorm.weight [12]", "kv_b_proj.weight [56, 12]",
                                         "o_proj.weight [32, 32]"});
  for (const model::Config& k : {c, make(tiny_mla(3, 20), "{}"), make(bundled_tiny_mla(), "{}"),
                                 make(tiny_mla(), R"({"hd": {"n": 2, "layers": "full"}})")}) {
    INFO(k.effective.name << " q_lora " << k.effective.mla->q_lora_rank);
    CHECK(model::count_params(k).total == spec_elements(k));
  }
}

TEST_CASE("MLA: the absorbed decode over cached latents equals the expanded full forward", "[runner][mla]") {
  check_decode_matches_train(make(tiny_mla(), "{}"), 14, 5);
  check_decode_matches_train(make(tiny_mla(3, 20), "{}"), 14, 5);  // q_lora
  check_decode_matches_train(make(bundled_tiny_mla(), "{}"), 14, 5);  // MoE layers, 4 heads of 16 + 8
  check_decode_matches_train(make(tiny_mla(), R"({"hd": {"n": 2, "layers": "full"}})"), 14, 5);
  const char* mixed = R"({"hd": {"n": 2, "layers": ["full", "intra", "local", "full"], "window": 6}})";
  check_decode_matches_train(make(tiny_mla(4), mixed), 14, 5);
  model::Backbone sliding = tiny_mla();
  sliding.layers[1] = {model::AttentionKind::sliding, 4};
  check_decode_matches_train(make(sliding, "{}"), 14, 5);
}

TEST_CASE("MLA decode past the fused kernel's head dims (CUDA at DeepSeek's 576) equals the fused decode",
          "[runner][mla]") {
  // The bundled tiny MLA scores 16 + 8 dims in prefill and 32 + 8 in decode. A fused limit
  // of 24 dims runs prefill fused and the decode composed of other ops, as the CUDA
  // backend runs DeepSeek-V2 (192 / 128 fused, 576 / 512 past its 256).
  const model::Config c = make(bundled_tiny_mla(), "{}");
  const auto t = tokens(20);
  Model fused = build(c, 3);
  Model parts;
  parts.backend = make_cpu_backend(CpuOptions{1, "auto", 24});
  REQUIRE(parts.backend->fused_attention_fits(24, 16));
  REQUIRE_FALSE(parts.backend->fused_attention_fits(40, 32));
  RandomWeights source(3);
  parts.runner = std::make_unique<Runner>(*parts.backend, c, upload_weights(*parts.backend, c, source, ScalarType::f32),
                                          RunOptions{});
  CHECK(rel_diff(decoded_logits(parts, t, 14), decoded_logits(fused, t, 14)) < 1e-5);
}

TEST_CASE("MLA attention FLOPs: expanded per-head dims in prefill, latent dims in the absorbed decode",
          "[runner][mla][flops]") {
  Model m = build(make(tiny_mla(), "{}"), 2);
  const auto t = tokens(20);
  (void)m.runner->prefill(std::span(t.data(), 16), 20);
  const OpMeasure pre = m.runner->last_profile().op_total(model::OpKind::attention);
  CHECK(pre.flops == 2 * 4 * (10 + 8) * pre.pairs_executed);  // 2 H (nope + rope + v)
  (void)m.runner->decode_step(t[16]);
  const OpMeasure dec = m.runner->last_profile().op_total(model::OpKind::attention);
  CHECK(dec.pairs_exact == 3 * 17);
  CHECK(dec.flops == 2 * 4 * (2 * 12 + 4) * dec.pairs_executed);  // 2 H (2 kv_lora + rope)
}

TEST_CASE("MLA's cache keeps latent + rope key per entry, the size the memory model predicts", "[runner][mla][kv]") {
  const model::Config c = make(tiny_mla(), "{}");
  Model m = build(c, 2);
  const auto t = tokens(20);
  (void)m.runner->prefill(std::span(t.data(), 16), 20);
  // 3 layers x 20 positions x (12 latent + 4 rope) f32, the model's entry (not 4 heads x (10 + 8))
  CHECK(model::attention_shape(c.effective).kv_cache_per_token == 12 + 4);
  CHECK(m.runner->kv_bytes() == 3 * 20 * (12 + 4) * 4);
  CHECK(m.runner->kv_entries() == 3 * 16);
  RunShape shape;
  shape.phase = Phase::decode;
  shape.tokens = 16;
  shape.decode_steps = 4;
  CHECK(estimate_memory(c, shape, RunOptions{}).kv_cache == m.runner->kv_bytes());
}

TEST_CASE("MLA memory: the estimate bounds what a run allocates", "[runner][mla][memory]") {
  for (const char* design : {"{}", R"({"hd": {"n": 2, "layers": "full"}})", R"({"phd": {"K": 3}})"})
    for (const model::Backbone& b : {tiny_mla(), tiny_mla(3, 20), bundled_tiny_mla()})
      check_memory_estimate(make(b, design), std::string(design) + " " + b.name + " q_lora " +
                                                 std::to_string(b.mla->q_lora_rank));
}

TEST_CASE("MLA settings the runner does not execute are refused by field", "[runner][mla][bad-input]") {
  CHECK(refused_at(tiny_mla()) == "accepted");
  model::Backbone b = tiny_mla();
  b.attention_bias = true;
  CHECK(refused_at(b) == "/backbone/attention_bias");
  b = tiny_mla();
  b.attention_sinks = true;
  CHECK(refused_at(b) == "/backbone/attention_sinks");
  b = tiny_mla();
  b.positions = model::PositionKind::none;
  CHECK(refused_at(b) == "/backbone/positions");
  b = tiny_mla();
  b.output_bias = true;  // o_proj.bias: executed as for other attention
  CHECK(refused_at(b) == "accepted");
}

}  // namespace hdlab::executor::testing
