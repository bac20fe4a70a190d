// Memory of a run estimated from the config alone, so a run that would not fit is
// refused before anything is allocated (needed and available bytes in the error).
#include <algorithm>

#include "hdlab/model/mask.hpp"
#include "hdlab/model/schedule.hpp"
#include "runner_internal.hpp"

namespace hdlab::executor {

namespace {

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(std::max<std::int64_t>(v, 0)); }

// Workspace elements per computed row (upper bound over the buffers a layer uses at once).
std::int64_t row_elements(const model::Config& c) {
  const model::Backbone& b = c.effective;
  const std::int64_t D = b.hidden, q = b.num_heads * b.head_dim, kv = b.num_kv_heads * b.head_dim;
  std::int64_t wide = D, ghc = 0;
  if (const model::DesignFeatures f = model::design_features(c.design.method); f.wide_residual) {
    const std::int64_t m = f.width_m, n = f.width_n;
    wide = f.residual_width(D);
    ghc = 2 * wide + D + n * (m + n) + m * n;  // hn, carry, x, alpha, beta
  }
  std::int64_t ffn = 3 * b.intermediate;  // gate_up + act
  if (b.moe) {
    const auto& m = *b.moe;
    ffn = std::max(ffn, m.num_experts + 2 * m.top_k + 2 * m.top_k +  // logits, ids + weights, grouped ids + weights
                            3 * m.expert_intermediate + 2 * D +        // expert x, gate_up, act, out
                            3 * m.shared_expert_intermediate);
  }
  const std::int64_t positions = 8;  // i32 positions, ids, kept rows
  std::int64_t mixers = 2 * q + 2 * kv + (b.attention_output_gate ? q : 0);  // q, k, v, attn (, gate)
  if (b.mla) {  // runner_mla.cpp: q (or its latent), latent, rope key, entries, kv_b's output, keys, attn;
                // decode: absorbed queries and latent outputs
    const model::MlaConfig& m = *b.mla;
    const std::int64_t H = b.num_heads, qk = m.qk_nope_head_dim + m.qk_rope_head_dim, kvl = m.kv_lora_rank;
    mixers = H * qk + m.q_lora_rank + 2 * (kvl + m.qk_rope_head_dim) + H * (m.v_head_dim + m.qk_nope_head_dim) +
             H * qk + H * m.v_head_dim + H * (2 * kvl + m.qk_rope_head_dim);
  }
  // runner_linear.cpp, buffers both mixers share: permuted input and output, the conv's
  // input and output, the gate, the step or gate inputs, the recurrence's output, row ids
  std::int64_t linear = 0;
  if (b.gdn) {
    const model::GatedDeltaNetConfig& g = *b.gdn;
    linear = 2 * D + 2 * g.conv_channels() + 2 * g.v_width() + 2 * g.num_value_heads + 3;
  }
  if (b.mamba) {
    const model::Mamba2Config& m = *b.mamba;
    linear = std::max(linear, 2 * D + 2 * m.conv_channels() + 2 * m.inner() + m.num_heads + 3);
  }
  mixers += linear;
  const std::int64_t shared_gate = b.moe && b.moe->shared_expert_gate ? D + 1 : 0;
  return 3 * wide + D /*normed*/ + D /*embed tmp*/ + mixers + D /*sub_out*/ + ffn + shared_gate + ghc + positions +
         D * b.kv_mirror_layers;
}

}  // namespace

MemoryEstimate estimate_memory(const model::Config& c, const RunShape& shape, const RunOptions& o) {
  MemoryEstimate e;
  const std::size_t bytes = scalar_bytes(o.dtype);
  e.weights = device_weight_bytes(c, o.dtype);
  const std::int64_t copies = model::copies_per_token(c.design.method), L = std::max<std::int64_t>(shape.tokens, 1);
  const model::Backbone& b = c.effective;
  if (shape.phase != Phase::train_forward) {
    const std::int64_t max_tokens = L + std::max<std::int64_t>(shape.decode_steps, 0);
    e.kv_cache = sz(model::kv_positions_per_sequence(c, max_tokens)) * sz(model::attention_shape(b).kv_cache_per_token) *
                     bytes +
                 sz(model::linear_state_elements_per_sequence(c)) * bytes;
  }
  // The largest call: a training forward or prefill of all c*L positions (the decode
  // phase prefills its context first), a decode step of c rows.
  const std::int64_t rows = copies * L;
  std::int64_t logit_rows = shape.phase == Phase::train_forward ? L : 1;
  const model::DesignFeatures f = model::design_features(c.design.method);
  if (f.mtp && shape.phase == Phase::train_forward) logit_rows *= 2;  // MTP logits and its wide inputs
  const std::int64_t wide = f.residual_width(b.hidden);
  const std::int64_t output = logit_rows * (b.padded_vocab() + 3 * wide + 2 * b.hidden);
  // A training pass's linear layers run from workspace states: the largest layer's.
  const std::int64_t train_states =
      shape.phase == Phase::train_forward ? model::linear_state_elements_per_sequence(c) : 0;
  // Workspace buffers grow with 25% headroom.
  e.activations = (sz(rows * row_elements(c)) + sz(output) + sz(train_states)) * bytes * 5 / 4;
  return e;
}

void require_run_fits(const Backend& backend, const model::Config& c, const RunShape& shape, const RunOptions& o) {
  backend.require_fits(estimate_memory(c, shape, o).total());
}

}  // namespace hdlab::executor
