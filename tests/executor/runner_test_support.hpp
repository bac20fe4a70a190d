#pragma once
// Small models and helpers for the runner tests: tiny backbones (a few layers of width 32)
// so the whole test runs in seconds, also under the sanitizers.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "hdlab/executor/backends.hpp"
#include "hdlab/executor/runner.hpp"
#include "hdlab/executor/weights.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::executor::testing {

// Dense: 3 layers, D 32, 4 query / 2 kv heads of 8, SwiGLU 48, vocabulary 61 (padded to 64).
inline model::Backbone tiny_dense(std::int64_t layers = 3) {
  model::Backbone b;
  b.name = "tiny-dense";
  b.num_layers = layers;
  b.hidden = 32;
  b.num_heads = 4;
  b.num_kv_heads = 2;
  b.head_dim = 8;
  b.intermediate = 48;
  b.vocab_size = 61;
  b.vocab_pad_multiple = 8;
  b.layers.assign(static_cast<std::size_t>(layers), model::LayerAttention{});
  b.rope_theta = 10000.0;
  b.norm_eps = 1e-6;
  b.dtype = model::DType::fp32;
  return b;
}

// MoE: 8 experts of 16, top-2, one shared expert of 24, router kind as given.
inline model::Backbone tiny_moe(model::RouterKind router = model::RouterKind::softmax, std::int64_t layers = 2) {
  model::Backbone b = tiny_dense(layers);
  b.name = "tiny-moe";
  b.intermediate = 0;
  model::MoeConfig m;
  m.num_experts = 8;
  m.top_k = 2;
  m.expert_intermediate = 16;
  m.num_shared_experts = 1;
  m.shared_expert_intermediate = 24;
  m.router = router;
  b.moe = m;
  return b;
}

// Llama 4 / gpt-oss attention variants on tiny_moe: 4 layers, attention sinks, layers 0-2
// chunked local attention over `chunk` tokens, layer 3 full without RoPE (NoPE), MoE on
// every second layer (layer_step 2) with a dense FFN of 48 elsewhere.
inline model::Backbone tiny_attn_variants(std::int64_t chunk = 37) {
  model::Backbone b = tiny_moe(model::RouterKind::sigmoid, 4);
  b.name = "tiny-attn-variants";
  b.intermediate = 48;
  b.moe->layer_step = 2;
  b.attention_sinks = true;
  for (std::size_t l = 0; l < 3; ++l) {
    b.layers[l].kind = model::AttentionKind::chunked;
    b.layers[l].chunk = chunk;
  }
  b.layers[3].nope = true;
  return b;
}

// Qwen3-Next-shaped hybrid on tiny_moe (or tiny_dense): 4 layers, Gated DeltaNet in layers
// 0 and 2 (2 q/k heads of 8 shared by 4 value heads of 6, conv of 4 taps), gated
// attention with QK-norm and partial RoPE (the first 4 of 8 dims) in layers 1 and 3, MoE
// with a sigmoid-gated shared expert.
inline model::Backbone tiny_hybrid(bool moe = true) {
  model::Backbone b = moe ? tiny_moe(model::RouterKind::softmax, 4) : tiny_dense(4);
  b.name = "tiny-hybrid";
  using model::MixerKind;
  b.mixers = {MixerKind::gated_deltanet, MixerKind::attention, MixerKind::gated_deltanet, MixerKind::attention};
  b.gdn = model::GatedDeltaNetConfig{2, 4, 8, 6, 4};
  b.attention_output_gate = true;
  b.qk_norm = true;
  b.rotary_dim = 4;
  if (moe) b.moe->shared_expert_gate = true;
  return b;
}

// Nemotron-H-shaped (tiny_dense's width): 5 single-sublayer layers M - M * -, Mamba-2
// mixers of 4 heads of 8 (2 B/C groups of state 8, a 4-tap conv with bias, chunks of 16
// tokens), an attention mixer without positions, squared-ReLU MLPs of 48.
inline model::Backbone tiny_nemotron_h() {
  model::Backbone b = tiny_dense(5);
  b.name = "tiny-nemotron-h";
  using model::FfnKind;
  using model::MixerKind;
  b.mixers = {MixerKind::mamba2, MixerKind::none, MixerKind::mamba2, MixerKind::attention, MixerKind::none};
  b.ffns = {FfnKind::none, FfnKind::dense, FfnKind::none, FfnKind::none, FfnKind::dense};
  b.mamba = model::Mamba2Config{4, 8, 2, 8, 4, 16, true};
  b.mlp = model::MlpKind::relu2;
  b.positions = model::PositionKind::none;
  return b;
}

// `layers` Mamba-2 layers and nothing else: tiny_nemotron_h's mixer, each layer with its
// relu2 MLP (two sublayers) unless `single`.
inline model::Backbone tiny_mamba(std::int64_t layers = 1, bool single = false) {
  model::Backbone b = tiny_nemotron_h();
  b.name = "tiny-mamba";
  b.num_layers = layers;
  b.layers.assign(static_cast<std::size_t>(layers), model::LayerAttention{});
  b.mixers.assign(static_cast<std::size_t>(layers), model::MixerKind::mamba2);
  b.ffns.assign(static_cast<std::size_t>(layers), single ? model::FfnKind::none : model::FfnKind::dense);
  return b;
}

// gpt-oss's expert FFN on an MoE backbone: router and expert biases, the clamped SwiGLU
// (limit `limit`, alpha 1.702), no shared expert; q/k/v/o biases and sinks.
inline model::Backbone with_gpt_oss_experts(model::Backbone b, double limit = 7.0) {
  b.moe->num_shared_experts = 0;
  b.moe->shared_expert_intermediate = b.moe->expert_intermediate;
  b.moe->router_bias = b.moe->expert_bias = true;
  b.moe->swiglu_limit = limit;
  b.moe->swiglu_alpha = 1.702;
  b.attention_bias = b.output_bias = b.attention_sinks = true;
  return b;
}

// Multi-head latent attention on tiny_dense (DeepSeek-V2-Lite's MLA, scaled down): 4
// heads scoring 6 nope + 4 rope dims, values of 8, a latent of 12 plus the 4-dim rope key
// cached per token; q_lora > 0: queries through a low-rank q_a / q_b.
inline model::Backbone tiny_mla(std::int64_t layers = 3, std::int64_t q_lora = 0) {
  model::Backbone b = tiny_dense(layers);
  b.name = "tiny-mla";
  b.num_kv_heads = b.num_heads;
  b.mla = model::MlaConfig{q_lora, 12, 6, 4, 8};
  b.head_dim = 10;
  return b;
}

// Biases on the dense FFN's projections (Llama's mlp_bias; relu2: up and down).
inline model::Backbone with_mlp_bias(model::Backbone b) {
  b.mlp_bias = true;
  return b;
}

// `layers` Gated DeltaNet layers and nothing else (dense FFN): no positions anywhere.
inline model::Backbone tiny_linear(std::int64_t layers = 1) {
  model::Backbone b = tiny_dense(layers);
  b.name = "tiny-linear";
  b.mixers.assign(static_cast<std::size_t>(layers), model::MixerKind::gated_deltanet);
  b.gdn = model::GatedDeltaNetConfig{2, 4, 8, 6, 4};
  return b;
}

// A backbone's weights with stream `stream`'s HD table as its only embedding (names of
// every other tensor are shared, so RandomWeights gives both models the same values).
class TableOfStream : public WeightSource {
 public:
  TableOfStream(std::uint64_t seed, std::int64_t stream) : random_(seed), stream_(stream) {}
  std::vector<float> values(const WeightSpec& spec) override {
    if (spec.name != "model.embed_tokens.weight" || stream_ == 0) return random_.values(spec);
    WeightSpec s = spec;
    s.name = "hdlab.hd.embed_tokens." + std::to_string(stream_) + ".weight";
    return random_.values(s);
  }

 private:
  RandomWeights random_;
  std::int64_t stream_;
};

// The field the runner's weight specs refuse `b` by ("accepted": none).
inline std::string refused_at(const model::Backbone& b) {
  try {
    weight_specs(b, model::BaselineDesign{});
  } catch (const model::ConfigError& e) {
    const std::string what = e.what();
    return what.substr(0, what.find(':'));
  }
  return "accepted";
}

// Elements of every weight spec of `c` (what the parameter count must equal).
inline std::int64_t spec_elements(const model::Config& c) {
  std::int64_t n = 0;
  for (const WeightSpec& s : weight_specs(c)) n += element_count(s.shape);
  return n;
}

inline model::Config make(const model::Backbone& b, const std::string& design_json) {
  const model::Design d = model::parse_design(model::Json::parse(design_json), b, "/design");
  return model::make_config(b, d);
}

inline std::vector<std::int32_t> tokens(std::int64_t n, std::uint32_t seed = 7, std::int64_t vocab = 61) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(n));
  std::uint32_t s = seed;
  for (auto& x : t) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<std::int32_t>((s >> 8) % static_cast<std::uint32_t>(vocab));
  }
  return t;
}

struct Model {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Runner> runner;
};

inline Model build(const model::Config& c, WeightSource& source, RunOptions o = {}) {
  Model m;
  m.backend = make_cpu_backend(CpuOptions{1, "auto"});
  ModelWeights w = upload_weights(*m.backend, c, source, o.dtype);
  m.runner = std::make_unique<Runner>(*m.backend, c, std::move(w), o);
  return m;
}

inline Model build(const model::Config& c, std::uint64_t seed = 1, RunOptions o = {}, RandomInit init = {}) {
  RandomWeights source(seed, init);
  return build(c, source, o);
}

// Maximum |a - b| over the elements, relative to the largest |b| (at least 1).
inline double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0, scale = 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(std::isfinite(a[i]));
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return worst / scale;
}

inline std::vector<float> rows_of(const std::vector<float>& m, std::int64_t cols, std::int64_t first, std::int64_t n) {
  return std::vector<float>(m.begin() + first * cols, m.begin() + (first + n) * cols);
}

// Logits of the whole sequence by prefill of `prompt` tokens and decode steps for the
// rest, one row per token from the prompt's last on: [L - prompt + 1, V].
inline std::vector<float> decoded_logits(Model& m, const std::vector<std::int32_t>& t, std::int64_t prompt) {
  std::vector<float> out;
  ForwardResult r = m.runner->prefill(std::span(t.data(), static_cast<std::size_t>(prompt)),
                                      static_cast<std::int64_t>(t.size()));
  auto add = [&](const Tensor& logits) {
    const auto v = m.backend->download_f32(logits);
    out.insert(out.end(), v.begin(), v.end());
  };
  add(r.logits);
  for (std::size_t i = static_cast<std::size_t>(prompt); i < t.size(); ++i) add(m.runner->decode_step(t[i]).logits);
  return out;
}

inline std::vector<float> train_logits(Model& m, const std::vector<std::int32_t>& t) {
  return m.backend->download_f32(m.runner->train_forward(t).logits);
}

// Every HD table is the backbone's own: a stream then differs from another only by where
// its rows sit in the expanded sequence.
class SameTables : public WeightSource {
 public:
  explicit SameTables(std::uint64_t seed) : random_(seed) {}
  std::vector<float> values(const WeightSpec& spec) override {
    if (spec.name.rfind("hdlab.hd.embed_tokens.", 0) != 0) return random_.values(spec);
    WeightSpec s = spec;
    s.name = "model.embed_tokens.weight";
    return random_.values(s);
  }

 private:
  RandomWeights random_;
};

// The residual state after layer `layer` of a training forward, [rows, D], physical order.
inline std::vector<float> hidden_after(Model& m, const std::vector<std::int32_t>& t, std::int64_t layer,
                                       std::vector<std::int64_t>* positions = nullptr) {
  std::vector<float> out;
  m.runner->set_hidden_observer([&](const HiddenState& h) {
    if (h.layer != layer) return;
    out = m.backend->download_f32(h.x);
    if (positions) positions->assign(h.positions.begin(), h.positions.end());
  });
  (void)m.runner->train_forward(t);
  m.runner->set_hidden_observer({});
  return out;
}

// Every phase of `c` (24 tokens; decode: then 6 steps) allocates at most what
// estimate_memory says, its weights and KV caches included.
inline void check_memory_estimate(const model::Config& c, const std::string& what) {
  for (Phase phase : {Phase::train_forward, Phase::prefill, Phase::decode}) {
    const RunShape shape{phase, 24, phase == Phase::decode ? 6 : 0};
    const MemoryEstimate est = estimate_memory(c, shape, {});
    Model m = build(c);
    const auto t = tokens(30);
    if (phase == Phase::train_forward) {
      m.runner->train_forward(std::span(t.data(), 24), t[24]);
    } else {
      m.runner->prefill(std::span(t.data(), 24), 24 + shape.decode_steps);
      for (std::int64_t s = 0; s < shape.decode_steps; ++s) m.runner->decode_step(t[static_cast<std::size_t>(24 + s)]);
    }
    INFO(what << " " << to_string(phase));
    CHECK(m.backend->memory().peak_bytes <= est.total());
    CHECK(est.weights == m.runner->weights().bytes);
    if (phase != Phase::train_forward) CHECK(m.runner->kv_bytes() <= est.kv_cache);
  }
}

// Relative tolerance for two f32 computations of the same function in different
// association orders (different row counts per GEMM, tile order, layouts): a few ulps
// amplified through a few layers.
inline constexpr double kSameFunction = 2e-5;

// Decode from a prompt of `prompt` tokens must reproduce the training forward's logits
// of every token from the prompt's last on.
inline void check_decode_matches_train(const model::Config& c, std::int64_t L, std::int64_t prompt, RunOptions o = {}) {
  Model m = build(c, 3, o);
  const auto t = tokens(L);
  const auto full = train_logits(m, t);
  const auto dec = decoded_logits(m, t, prompt);
  const std::int64_t V = c.effective.padded_vocab();
  INFO(model::describe(c.design) << " layout " << model::to_string(m.runner->layout()));
  CHECK(rel_diff(dec, rows_of(full, V, prompt - 1, L - prompt + 1)) < kSameFunction);
}

}  // namespace hdlab::executor::testing
