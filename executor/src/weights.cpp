// Weight specs of every design, seeded random values, upload in the runner's layout, and
// saving to safetensors. Names and shapes are documented in weights.hpp.
#include "hdlab/executor/weights.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <set>

#include "hdlab/executor/designs/registry.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::executor {

using model::Backbone;
using model::ConfigError;

namespace {

// What the runner executes; other backbones are refused by name of the field.
void check_block(const Backbone& b) {
  if (b.norms_per_layer != 2 && b.norms_per_layer != 4)
    throw ConfigError("/backbone/norms_per_layer",
                      "the runner executes 2 (pre-norm) or 4 (pre- and post-norm) RMSNorms per layer, got " +
                          std::to_string(b.norms_per_layer));
  if (b.norms_per_layer == 4 && b.num_single_sublayer_layers() > 0)
    throw ConfigError("/backbone/norms_per_layer", "the runner executes single-sublayer layers (ffn_types or "
                                                   "layer_types none) behind one pre-norm: norms_per_layer 2");
  // The runner's block is Llama-style; the GPT-style settings are costed, not executed.
  if (b.norm != model::NormKind::rmsnorm)
    throw ConfigError("/backbone/norm", std::string("the runner executes rmsnorm, got ") + to_string(b.norm));
  if (b.mlp == model::MlpKind::gelu)
    throw ConfigError("/backbone/mlp", "the runner executes a swiglu or relu2 FFN, got gelu");
  if (b.positions != model::PositionKind::rope && b.positions != model::PositionKind::none)
    throw ConfigError("/backbone/positions",
                      std::string("the runner executes rope or none, got ") + to_string(b.positions));
  // Costed and counted, not executed: whole-projection QK-norm, post-norms.
  if (b.qk_norm_whole_projection)
    throw ConfigError("/backbone/qk_norm_scope", "the runner executes a per-head QK-norm (head), not \"projection\"");
  if (b.post_sublayer_norms)
    throw ConfigError("/backbone/norm_placement", "the runner executes pre-norm blocks, not \"post\"");
  if (b.padded_input_vocab() != b.padded_vocab())
    throw ConfigError("/backbone/input_vocab_size", "the runner reads token ids and writes logits over one vocabulary");
  if (b.positions == model::PositionKind::rope && b.rope_dims() % 2 != 0)
    throw ConfigError("/backbone/head_dim", "RoPE needs an even head dim, got " + std::to_string(b.head_dim));
}

// Multi-head latent attention runs as DeepSeek's (runner_mla.cpp); the attention extras
// of other families are not part of its block.
void check_mla(const Backbone& b) {
  if (!b.mla) return;
  const char* field = b.attention_bias     ? "/backbone/attention_bias"
                      : b.qk_norm          ? "/backbone/qk_norm"
                      : b.attention_sinks  ? "/backbone/attention_sinks"
                      : b.attention_output_gate ? "/backbone/attention_output_gate"
                                                : nullptr;
  if (field) throw ConfigError(field, "the runner does not execute it with multi-head latent attention (mla)");
  if (b.positions != model::PositionKind::rope)
    throw ConfigError("/backbone/positions", "multi-head latent attention needs rope (its qk_rope_head_dim part)");
  if (b.mla->qk_rope_head_dim % 2 != 0)
    throw ConfigError("/backbone/mla/qk_rope_head_dim", "RoPE needs an even number of dims, got " +
                                                            std::to_string(b.mla->qk_rope_head_dim));
  for (const auto& a : b.layers)
    if (a.nope) throw ConfigError("/backbone/layers", "NoPE layers are not executed with multi-head latent attention");
}

void check_executable(const Backbone& b, const model::Method& method) {
  check_mla(b);
  check_block(b);
  const model::DesignFeatures f = model::design_features(method);
  if (f.wide_residual && b.kv_mirror_layers > 0)
    throw ConfigError("/backbone/kv_mirror_layers",
                      "the runner does not execute a wide residual (VWN, mHC) on a KV-mirror backbone");
  if (f.wide_residual && !f.copied_embedding && b.tie_embeddings && !f.projected_embedding && f.width_n != f.width_m)
      throw ConfigError("/design/vwn/embedding",
                      "a full over-width embedding [V, D'] cannot be the tied head [V, D]; use \"projected\"");
}

// A SwiGLU FFN; `bias`: biases on its projections (gpt-oss's experts, a dense FFN's
// mlp_bias), after the weights (the upload fuses gate and up weights, then their biases,
// each pair in order). relu2: Nemotron-H's non-gated MLP, up_proj and down_proj only.
void add_ffn(std::vector<WeightSpec>& out, const std::string& p, std::int64_t D, std::int64_t F, double down_std,
             bool bias = false, bool relu2 = false) {
  const double in_std = 1.0 / std::sqrt(static_cast<double>(D));
  if (!relu2) out.push_back({p + "gate_proj.weight", {F, D}, WeightInit::normal, in_std});
  out.push_back({p + "up_proj.weight", {F, D}, WeightInit::normal, in_std});
  out.push_back({p + "down_proj.weight", {D, F}, WeightInit::normal, down_std});
  if (!bias) return;
  if (!relu2) out.push_back({p + "gate_proj.bias", {F}, WeightInit::normal, 0.02});
  out.push_back({p + "up_proj.bias", {F}, WeightInit::normal, 0.02});
  out.push_back({p + "down_proj.bias", {D}, WeightInit::normal, 0.02});
}

// A Mamba-2 mixer under Nemotron-H's names (NemotronHMamba2Mixer): in_proj rows [z I | x I |
// B G N | C G N | dt H], conv1d [I + 2 G N, 1, K] over [x | B | C] with a bias, per head
// dt_bias, A_log and D, the grouped gated norm's weight [I], out_proj. Init as
// transformers': A_log = log(1..H), D 1, dt_bias the softplus inverse of a step
// log-uniform in [0.001, 0.1], the norm's weight 1; projections N(0, 1/fan_in), out_proj
// a residual-branch output; the conv bias N(0, 0.02^2) (not zero, so that it counts).
void add_mamba2(std::vector<WeightSpec>& out, const std::string& p, const Backbone& b, double depth) {
  const model::Mamba2Config& m = *b.mamba;
  const std::int64_t D = b.hidden, H = m.num_heads, I = m.inner();
  out.push_back({p + "in_proj.weight", {m.in_proj_width(), D}, WeightInit::normal,
                 1.0 / std::sqrt(static_cast<double>(D))});
  out.push_back({p + "conv1d.weight", {m.conv_channels(), 1, m.conv_kernel}, WeightInit::normal,
                 1.0 / std::sqrt(static_cast<double>(m.conv_kernel))});
  if (m.conv_bias) out.push_back({p + "conv1d.bias", {m.conv_channels()}, WeightInit::normal, 0.02, true});
  out.push_back({p + "dt_bias", {H}, WeightInit::mamba2_dt_bias, 0, true});
  out.push_back({p + "A_log", {H}, WeightInit::mamba2_a_log, 0, true});
  out.push_back({p + "D", {H}, WeightInit::ones, 0, true});
  out.push_back({p + "norm.weight", {I}, WeightInit::ones, 0, true});
  out.push_back({p + "out_proj.weight", {D, I}, WeightInit::normal, 1.0 / std::sqrt(static_cast<double>(I) * depth)});
}

// A Gated DeltaNet mixer under HF's Qwen3-Next names (linear_attn.*), in HF's layouts:
// in_proj_qkvz rows grouped per key head [q dk | k dk | v r dv | z r dv] (r = hv / hk),
// in_proj_ba per key head [b r | a r], conv1d [channels, 1, K] over [q | k | v]. Init as
// transformers' Qwen3NextGatedDeltaNet: dt_bias 1, A_log = log U(0, 16), the gated
// norm's weight 1; projections N(0, 1/fan_in), out_proj a residual-branch output.
void add_linear_attention(std::vector<WeightSpec>& out, const std::string& p, const Backbone& b, double depth) {
  const model::GatedDeltaNetConfig& g = *b.gdn;
  const std::int64_t D = b.hidden, hv = g.num_value_heads;
  const double in_std = 1.0 / std::sqrt(static_cast<double>(D));
  out.push_back({p + "in_proj_qkvz.weight", {2 * g.qk_width() + 2 * g.v_width(), D}, WeightInit::normal, in_std});
  out.push_back({p + "in_proj_ba.weight", {2 * hv, D}, WeightInit::normal, in_std});
  out.push_back({p + "conv1d.weight", {g.conv_channels(), 1, g.conv_kernel}, WeightInit::normal,
                 1.0 / std::sqrt(static_cast<double>(g.conv_kernel))});
  out.push_back({p + "dt_bias", {hv}, WeightInit::ones, 0, true});
  out.push_back({p + "A_log", {hv}, WeightInit::log_uniform_16, 0, true});
  out.push_back({p + "norm.weight", {g.value_head_dim}, WeightInit::ones, 0, true});
  out.push_back({p + "out_proj.weight", {D, g.v_width()}, WeightInit::normal,
                 1.0 / std::sqrt(static_cast<double>(g.v_width()) * depth)});
}

// DeepSeek's multi-head latent attention under its HF names: q_proj [H*qk, D] (q_lora:
// q_a_proj [r_q, D], q_a_layernorm, q_b_proj [H*qk, r_q]), per head [nope | rope];
// kv_a_proj_with_mqa [r_kv + rope, D] rows [latent | shared rope key], kv_a_layernorm
// [r_kv], kv_b_proj [H*(nope + v), r_kv] per head [k nope | v], o_proj [D, H*v].
void add_mla_attention(std::vector<WeightSpec>& out, const std::string& p, const Backbone& b, double depth) {
  const model::MlaConfig& m = *b.mla;
  const std::int64_t D = b.hidden, H = b.num_heads, qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
  const auto std_of = [](std::int64_t fan_in) { return 1.0 / std::sqrt(static_cast<double>(fan_in)); };
  if (m.q_lora_rank > 0) {
    out.push_back({p + "q_a_proj.weight", {m.q_lora_rank, D}, WeightInit::normal, std_of(D)});
    out.push_back({p + "q_a_layernorm.weight", {m.q_lora_rank}, WeightInit::ones, 0, true});
    out.push_back({p + "q_b_proj.weight", {H * qk, m.q_lora_rank}, WeightInit::normal, std_of(m.q_lora_rank)});
  } else {
    out.push_back({p + "q_proj.weight", {H * qk, D}, WeightInit::normal, std_of(D)});
  }
  out.push_back({p + "kv_a_proj_with_mqa.weight", {m.kv_lora_rank + m.qk_rope_head_dim, D}, WeightInit::normal,
                 std_of(D)});
  out.push_back({p + "kv_a_layernorm.weight", {m.kv_lora_rank}, WeightInit::ones, 0, true});
  out.push_back({p + "kv_b_proj.weight", {H * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank},
                 WeightInit::normal, std_of(m.kv_lora_rank)});
  out.push_back({p + "o_proj.weight", {D, H * m.v_head_dim}, WeightInit::normal,
                 1.0 / std::sqrt(static_cast<double>(H * m.v_head_dim) * depth)});
  if (b.output_bias) out.push_back({p + "o_proj.bias", {D}, WeightInit::normal, 0.02});
}

// The attention mixer: q/k/v (+ biases), QK-norm, sinks, o_proj (+ bias). Gated output
// (Qwen3-Next): q_proj doubled, each head's rows [query hd | gate hd] as HF stores them.
void add_attention(std::vector<WeightSpec>& out, const std::string& p, const Backbone& b, double depth) {
  if (b.mla) return add_mla_attention(out, p, b, depth);
  const std::int64_t D = b.hidden, H = b.num_heads, G = b.num_kv_heads, hd = b.head_dim;
  const double in_std = 1.0 / std::sqrt(static_cast<double>(D));
  for (const char* name : {"q_proj", "k_proj", "v_proj"}) {
    const std::int64_t rows = (name[0] == 'q' ? H * (b.attention_output_gate ? 2 : 1) : G) * hd;
    out.push_back({p + name + ".weight", {rows, D}, WeightInit::normal, in_std});
    if (b.attention_bias) out.push_back({p + name + ".bias", {rows}, WeightInit::normal, 0.02});
  }
  if (b.qk_norm) {
    out.push_back({p + "q_norm.weight", {hd}, WeightInit::ones, 0, true});
    out.push_back({p + "k_norm.weight", {hd}, WeightInit::ones, 0, true});
  }
  // Sink logits of the order of the scores, so that they take a visible share.
  if (b.attention_sinks) out.push_back({p + "sinks", {H}, WeightInit::normal, 1.0, true});
  out.push_back(
      {p + "o_proj.weight", {D, H * hd}, WeightInit::normal, 1.0 / std::sqrt(static_cast<double>(H * hd) * depth)});
  if (b.output_bias) out.push_back({p + "o_proj.bias", {D}, WeightInit::normal, 0.02});
}

void add_ffn_of_layer(std::vector<WeightSpec>& out, const Backbone& b, std::int64_t l, const std::string& p,
                      double depth) {
  const std::int64_t D = b.hidden;
  const double in_std = 1.0 / std::sqrt(static_cast<double>(D));
  if (!b.is_moe_layer(l)) {
    add_ffn(out, p, D, b.intermediate, 1.0 / std::sqrt(static_cast<double>(b.intermediate) * depth), b.mlp_bias,
            b.mlp == model::MlpKind::relu2);
    return;
  }
  const model::MoeConfig& m = *b.moe;
  out.push_back({p + "gate.weight", {m.num_experts, D}, WeightInit::normal, in_std});
  // A router bias of the order of the logits' spread, so that it changes the picks.
  if (m.router_bias) out.push_back({p + "gate.bias", {m.num_experts}, WeightInit::normal, 0.5});
  const double down_e = 1.0 / std::sqrt(static_cast<double>(m.expert_intermediate) * depth);
  for (std::int64_t e = 0; e < m.num_experts; ++e)
    add_ffn(out, p + "experts." + std::to_string(e) + ".", D, m.expert_intermediate, down_e, m.expert_bias);
  const double down_s = 1.0 / std::sqrt(static_cast<double>(m.shared_expert_intermediate) * depth);
  for (std::int64_t s = 0; s < m.num_shared_experts; ++s)
    add_ffn(out, p + "shared_experts." + std::to_string(s) + ".", D, m.shared_expert_intermediate, down_s);
  // Qwen3-Next's sigmoid gate on the shared experts' output (HF: mlp.shared_expert_gate).
  if (m.shared_expert_gate) out.push_back({p + "shared_expert_gate.weight", {1, D}, WeightInit::normal, in_std});
}

void add_layer(std::vector<WeightSpec>& out, const Backbone& b, const model::Method& method, std::int64_t l) {
  const std::int64_t D = b.hidden;
  const double depth = 2.0 * static_cast<double>(b.num_layers);
  const LayerNames n = layer_names(b, l);
  for (const std::string* norm : {&n.mixer_norm, &n.mixer_post_norm})
    if (!norm->empty()) out.push_back({*norm, {D}, WeightInit::ones, 0, true});
  switch (b.mixer(l)) {
    case model::MixerKind::attention: add_attention(out, n.mixer, b, depth); break;
    case model::MixerKind::gated_deltanet: add_linear_attention(out, n.mixer, b, depth); break;
    case model::MixerKind::mamba2: add_mamba2(out, n.mixer, b, depth); break;
    case model::MixerKind::none: break;
  }
  for (const std::string* norm : {&n.ffn_norm, &n.ffn_post_norm})
    if (!norm->empty()) out.push_back({*norm, {D}, WeightInit::ones, 0, true});
  if (b.has_ffn(l)) add_ffn_of_layer(out, b, l, n.ffn, depth);
  add_design_layer_weights(method, b, design_tensor_prefix(n, method), out);
}

// Box-Muller over a splitmix64 stream: the same numbers on every platform.
struct NormalStream {
  std::uint64_t state;
  bool has_spare = false;
  double spare = 0;
  double uniform() {  // (0, 1]
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 1.0) * 0x1.0p-53;
  }
  double next() {
    if (has_spare) {
      has_spare = false;
      return spare;
    }
    const double r = std::sqrt(-2.0 * std::log(uniform())), a = 2.0 * std::numbers::pi * uniform();
    spare = r * std::sin(a);
    has_spare = true;
    return r * std::cos(a);
  }
};

}  // namespace

LayerNames layer_names(const Backbone& b, std::int64_t l) {
  LayerNames n;
  n.prefix = "model.layers." + std::to_string(l) + ".";
  const bool mixer = b.has_mixer(l), ffn = b.has_ffn(l);
  if (!mixer || !ffn) {  // Nemotron-H's block: one norm, one "mixer"
    (mixer ? n.mixer_norm : n.ffn_norm) = n.prefix + "norm.weight";
    n.mixer = n.ffn = n.prefix + "mixer.";
  } else {
    n.mixer_norm = n.prefix + "input_layernorm.weight";
    n.ffn = n.prefix + "mlp.";
    if (b.norms_per_layer == 4) {
      n.mixer_post_norm = n.prefix + "post_attention_layernorm.weight";
      n.ffn_norm = n.prefix + "pre_feedforward_layernorm.weight";
      n.ffn_post_norm = n.prefix + "post_feedforward_layernorm.weight";
    } else {
      n.ffn_norm = n.prefix + "post_attention_layernorm.weight";
    }
    n.mixer = n.prefix + "self_attn.";
  }
  if (b.mixer(l) == model::MixerKind::gated_deltanet) n.mixer = n.prefix + "linear_attn.";
  if (b.mixer(l) == model::MixerKind::mamba2) n.mixer = n.prefix + "mixer.";
  return n;
}

std::vector<float> normal_floats(std::size_t count, std::uint64_t seed, double std) {
  std::vector<float> out(count);
  NormalStream s{seed};
  for (auto& x : out) x = static_cast<float>(std * s.next());
  return out;
}

std::uint64_t tensor_seed(std::uint64_t seed, const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a of the name, then mixed with the seed
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  h ^= seed + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

std::vector<WeightSpec> weight_specs(const Backbone& b, const model::Method& method) {
  check_executable(b, method);
  const std::int64_t D = b.hidden, V = b.padded_vocab();
  std::vector<WeightSpec> out;
  const model::DesignFeatures f = model::design_features(method);
  const std::int64_t wide = f.residual_width(D);
  // A copied embedding (mHC) looks the backbone's D-wide table up for each slot.
  const bool wide_table = f.wide_residual && !f.projected_embedding && !f.copied_embedding;
  out.push_back({"model.embed_tokens.weight", {V, wide_table ? wide : D}, WeightInit::normal, 1.0});
  add_design_model_weights(method, b, WeightsAt::input, out);
  for (std::int64_t l = 0; l < b.num_layers; ++l) add_layer(out, b, method, l);
  add_design_model_weights(method, b, WeightsAt::output, out);
  out.push_back({"model.norm.weight", {D}, WeightInit::ones, 0, true});
  if (!b.tie_embeddings)
    out.push_back({"lm_head.weight", {V, D}, WeightInit::normal, 1.0 / std::sqrt(static_cast<double>(D))});
  return out;
}

std::vector<WeightSpec> weight_specs(const model::Config& c) { return weight_specs(c.effective, c.design.method); }

std::size_t weight_bytes(const std::vector<WeightSpec>& specs, ScalarType type) {
  std::size_t bytes = 0;
  for (const auto& s : specs)
    bytes += static_cast<std::size_t>(element_count(s.shape)) * (s.keep_f32 ? 4 : scalar_bytes(type));
  return bytes;
}

std::size_t device_weight_bytes(const model::Config& c, ScalarType type) {
  return weight_bytes(weight_specs(c), type) + design_extra_device_bytes(c.design.method, c.effective);
}

std::vector<float> RandomWeights::values(const WeightSpec& spec) {
  const std::size_t count = static_cast<std::size_t>(element_count(spec.shape));
  const std::uint64_t seed = tensor_seed(seed_, spec.name);
  switch (spec.init) {
    case WeightInit::normal: return normal_floats(count, seed, spec.std);
    case WeightInit::ones: return std::vector<float>(count, 1.0f);
    case WeightInit::zeros: return std::vector<float>(count, 0.0f);
    case WeightInit::ghc_static_a: {  // [n, m+n]: alpha[i, i] = 1 (i < m), alpha[i, m+i] = 1
      const std::int64_t n = spec.shape[0], cols = spec.shape[1], m = cols - n;
      std::vector<float> a(count, 0.0f);
      for (std::int64_t i = 0; i < n; ++i) {
        if (i < m) a[static_cast<std::size_t>(i * cols + i)] = 1.0f;
        a[static_cast<std::size_t>(i * cols + m + i)] = 1.0f;
      }
      return a;
    }
    case WeightInit::ghc_static_b: {  // [m, n]: B[i, j] = 1 iff i = j mod m
      const std::int64_t m = spec.shape[0], n = spec.shape[1];
      std::vector<float> b(count, 0.0f);
      for (std::int64_t j = 0; j < n; ++j) b[static_cast<std::size_t>((j % m) * n + j)] = 1.0f;
      return b;
    }
    case WeightInit::ghc_dynamic: return normal_floats(count, seed, init_.ghc_dynamic_std);
    case WeightInit::log_uniform_16: {  // log of U(0, 16], as Qwen3-Next's A_log
      NormalStream u{seed};
      std::vector<float> a(count);
      for (auto& x : a) x = static_cast<float>(std::log(16.0 * u.uniform()));
      return a;
    }
    case WeightInit::mamba2_a_log: {  // log(1), ..., log(H): NemotronHMamba2Mixer's A_log
      std::vector<float> a(count);
      for (std::size_t h = 0; h < count; ++h) a[h] = static_cast<float>(std::log(static_cast<double>(h + 1)));
      return a;
    }
    case WeightInit::mamba2_dt_bias: {  // softplus^-1 of a step log-uniform in [0.001, 0.1], floor 1e-4
      NormalStream u{seed};
      std::vector<float> a(count);
      for (auto& x : a) {
        const double step =
            std::max(1e-4, std::exp(std::log(0.001) + u.uniform() * (std::log(0.1) - std::log(0.001))));
        x = static_cast<float>(step + std::log(-std::expm1(-step)));
      }
      return a;
    }
    case WeightInit::injection: {  // [D, 2D] = [I/2 | I/2] + noise: W_h + W_e = I at zero noise
      const std::int64_t D = spec.shape[0];
      std::vector<float> w = normal_floats(count, seed, init_.injection_noise_std);
      for (std::int64_t r = 0; r < D; ++r) {
        w[static_cast<std::size_t>(r * 2 * D + r)] += 0.5f;
        w[static_cast<std::size_t>(r * 2 * D + D + r)] += 0.5f;
      }
      return w;
    }
  }
  return {};
}

std::vector<WeightSpec> stored_weight_specs(const model::Config& c) {
  return weight_specs(c.design.growth ? c.base : c.effective, c.design.method);
}

SafetensorsWeights::SafetensorsWeights(const std::string& path, const std::vector<WeightSpec>& expected)
    : reader_(path) {
  std::set<std::string> wanted;
  for (const auto& s : expected) wanted.insert(s.name);
  std::vector<std::string> extra;
  for (const auto& [name, entry] : reader_.entries())
    if (!wanted.count(name)) extra.push_back(name);
  if (!extra.empty()) {
    std::string written_for;
    const auto& meta = reader_.metadata();
    if (meta.count("model") && meta.count("design"))
      written_for = "; its metadata says " + meta.at("model") + ", " + meta.at("design");
    throw SafetensorsError(path + ": tensor \"" + extra.front() + "\" is not a weight of this model" +
                           (extra.size() > 1 ? " (nor are " + std::to_string(extra.size() - 1) + " more)" : "") +
                           ": the file was written for another model or design (another layer count, method or "
                           "size)" + written_for);
  }
  for (const auto& s : expected) reader_.require_float_tensor(s.name, s.shape);
}

void save_weights(const std::string& path, const model::Config& config, WeightSource& source, StDtype dtype) {
  const std::vector<WeightSpec> specs = weight_specs(config);
  std::map<std::string, const WeightSpec*> by_name;
  std::vector<SafetensorsTensorSpec> tensors;
  for (const auto& s : specs) {
    by_name[s.name] = &s;
    tensors.push_back({s.name, s.shape});
  }
  write_safetensors(
      path, tensors, [&](const SafetensorsTensorSpec& t) { return source.values(*by_name.at(t.name)); }, dtype,
      {{"format", "pt"}, {"producer", "hdlab"}, {"model", config.effective.name}, {"design", model::describe(config.design)}});
}

}  // namespace hdlab::executor
