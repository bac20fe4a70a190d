#include "hdlab/model/backbone.hpp"

namespace hdlab::model {

int dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::bf16: return 2;
    case DType::fp16: return 2;
    case DType::fp32: return 4;
    case DType::fp8: return 1;
  }
  return 2;
}

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp32: return "fp32";
    case DType::fp8: return "fp8";
  }
  return "?";
}

const char* to_string(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::full: return "full";
    case AttentionKind::sliding: return "sliding";
    case AttentionKind::chunked: return "chunked";
  }
  return "?";
}

const char* to_string(NormKind kind) { return kind == NormKind::rmsnorm ? "rmsnorm" : "layernorm"; }

const char* to_string(MlpKind kind) {
  switch (kind) {
    case MlpKind::swiglu: return "swiglu";
    case MlpKind::gelu: return "gelu";
    case MlpKind::relu2: return "relu2";
  }
  return "?";
}

const char* to_string(PositionKind kind) {
  switch (kind) {
    case PositionKind::rope: return "rope";
    case PositionKind::learned: return "learned";
    case PositionKind::alibi: return "alibi";
    case PositionKind::none: return "none";
  }
  return "?";
}

const char* to_string(RouterKind kind) { return kind == RouterKind::softmax ? "softmax" : "sigmoid"; }

namespace {
std::int64_t padded(std::int64_t rows, std::int64_t multiple) {
  const std::int64_t m = multiple < 1 ? 1 : multiple;
  return (rows + m - 1) / m * m;
}
}  // namespace

std::int64_t Backbone::padded_vocab() const { return padded(vocab_size, vocab_pad_multiple); }

std::int64_t Backbone::padded_input_vocab() const {
  return padded(input_vocab_size > 0 ? input_vocab_size : vocab_size, vocab_pad_multiple);
}

std::int64_t Backbone::dense_ffn_params() const {
  const std::int64_t D = hidden, F = intermediate;
  if (mlp != MlpKind::swiglu) return 2 * D * F + (mlp_bias ? F + D : 0);  // up and down, no gate
  return 3 * D * F + (mlp_bias ? 2 * F + D : 0);
}

std::int64_t Backbone::qk_norm_params() const {
  if (!qk_norm || mla) return 0;
  return qk_norm_whole_projection ? (num_heads + num_kv_heads) * head_dim : 2 * head_dim;
}

bool Backbone::is_moe_layer(std::int64_t l) const {
  if (!ffns.empty()) return ffn(l) == FfnKind::moe;
  if (!moe.has_value() || l < moe->first_dense_layers) return false;
  return moe->layer_step <= 1 || (l + 1) % moe->layer_step == 0;
}

FfnKind Backbone::ffn(std::int64_t l) const {
  if (!ffns.empty() && l >= 0 && l < static_cast<std::int64_t>(ffns.size())) return ffns[static_cast<std::size_t>(l)];
  if (!ffns.empty()) return FfnKind::none;  // outside the listed layers
  return is_moe_layer(l) ? FfnKind::moe : FfnKind::dense;
}

bool Backbone::any_dense_ffn() const {
  if (!ffns.empty()) {
    for (FfnKind k : ffns)
      if (k == FfnKind::dense) return true;
    return false;
  }
  return !moe || moe->first_dense_layers > 0 || moe->layer_step > 1;
}

std::int64_t Backbone::expert_params() const {
  if (!moe) return 0;
  const std::int64_t D = hidden, F = moe->expert_intermediate;
  return 3 * D * F + (moe->expert_bias ? 2 * F + D : 0);
}

std::int64_t Backbone::num_chunked_layers() const {
  std::int64_t count = 0;
  for (const auto& a : layers) count += a.kind == AttentionKind::chunked ? 1 : 0;
  return count;
}

std::int64_t Backbone::mirror_source(std::int64_t l) const {
  // U-shaped pairs: layer num_layers-1-x mirrors layer x for x < kv_mirror_layers.
  if (l < num_layers - kv_mirror_layers) return -1;
  return num_layers - 1 - l;
}

std::int64_t Backbone::num_sliding_layers() const {
  std::int64_t count = 0;
  for (const auto& a : layers) count += a.kind == AttentionKind::sliding ? 1 : 0;
  return count;
}

AttentionShape attention_shape(const Backbone& b) {
  AttentionShape s;
  const std::int64_t D = b.hidden, H = b.num_heads;
  if (b.mla) {
    // MLA: queries (optionally through a low-rank q_a -> q_b with its RMSNorm), a joint
    // low-rank KV projection kv_a (latent + shared RoPE key) with its RMSNorm, kv_b up to
    // per-head keys and values, and the output projection. Cost approximation: the cache
    // keeps the latent and the RoPE key per token (absorbed-weight inference); a training
    // forward or prefill head scores with qk_nope + qk_rope dims and sums v_head_dim
    // values, a decode head scores the cached latents (kv_lora + qk_rope dims) and sums
    // latent values (layer_ops.cpp; the executor runs both, executor/src/runner_mla.cpp).
    const MlaConfig& m = *b.mla;
    const std::int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    s.qk_head_dim = qk;
    s.v_head_dim = m.v_head_dim;
    s.kv_cache_per_token = m.kv_lora_rank + m.qk_rope_head_dim;
    std::int64_t q = m.q_lora_rank > 0 ? D * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * H * qk : D * H * qk;
    std::int64_t kv = D * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank +
                      m.kv_lora_rank * H * (m.qk_nope_head_dim + m.v_head_dim);
    s.projection_params = q + kv + H * m.v_head_dim * D + (b.output_bias ? D : 0);
    return s;
  }
  const std::int64_t G = b.num_kv_heads, hd = b.head_dim;
  s.qk_head_dim = hd;
  s.v_head_dim = hd;
  s.kv_cache_per_token = 2 * G * hd;
  s.projection_params = D * H * hd + 2 * D * G * hd + H * hd * D;
  if (b.attention_output_gate) s.projection_params += D * H * hd;  // q_proj's gate half
  if (b.attention_bias) s.projection_params += H * hd * (b.attention_output_gate ? 2 : 1) + 2 * G * hd;
  if (b.output_bias) s.projection_params += D;
  return s;
}

}  // namespace hdlab::model
