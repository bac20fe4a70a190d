#include "hdlab/model/params.hpp"

namespace hdlab::model {

namespace {

// One VWN generalized hyper-connection (two per layer: around attention and FFN).
// Static routing A: n x (m+n), B: m x n. Dynamic: W_a (D/m) x (m+n), W_b (D/m) x m, the
// per-slot RMSNorm weight (D/m, shared by the n slots) and the two scalar scales S_a, S_b.
std::int64_t ghc_params(const VwnDesign& v, std::int64_t D) {
  const std::int64_t m = v.m, n = v.n, slot = D / v.m;
  std::int64_t p = n * (m + n) + m * n;
  if (v.dynamic) p += slot * (m + n) + slot * m + slot + 2;
  return p;
}

}  // namespace

ParamCounts count_params(const Config& c) {
  const Backbone& b = c.effective;
  const std::int64_t D = b.hidden, V = b.padded_vocab(), V_in = b.padded_input_vocab();
  ParamCounts p;

  // Embeddings: input tables are lookups; the head is a D x V matrix unless tied.
  std::int64_t input_tables = 1;
  if (const auto* hd = std::get_if<HdDesign>(&c.design.method)) input_tables = hd->n;
  // A learned position table (GPT) is one more input table, shared by every stream.
  p.embedding_input = input_tables * V_in * D + b.position_rows() * D;
  p.embedding_output = b.tie_embeddings ? 0 : V * D;

  const AttentionShape att = attention_shape(b);
  std::int64_t active_ffn = 0;
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    p.attention += att.projection_params;
    p.qk_norm += b.qk_norm_params();
    p.norms += b.norms_per_layer * b.norm_params();  // pre-attention and pre-FFN norm (Gemma: also post)
    if (b.is_moe_layer(l)) {
      const MoeConfig& m = *b.moe;
      p.router += m.num_experts * D;
      p.routed_experts += m.num_experts * 3 * D * m.expert_intermediate;
      p.shared_experts += m.num_shared_experts * 3 * D * m.shared_expert_intermediate;
      active_ffn += m.top_k * 3 * D * m.expert_intermediate;
    } else {
      p.dense_ffn += b.dense_ffn_params();
    }
  }
  p.norms += b.norm_params();  // final norm

  if (const auto* v = std::get_if<VwnDesign>(&c.design.method)) {
    const std::int64_t wide = D * v->n / v->m;  // D' = (n/m) D, D divisible by m
    if (v->embedding == VwnEmbedding::full) {
      p.embedding_input = V_in * wide;
    } else {
      p.adapters += D * wide;  // D -> D' projection of the normal table
    }
    p.ghc += 2 * b.num_layers * ghc_params(*v, D);
    p.norms += 2 * wide;     // GroupNorm before the reduce: an affine weight and bias per channel
    p.adapters += wide * D;  // reduce D' -> D
    if (v->mtp) {
      const std::int64_t slot = D / v->m;
      p.mtp += 2 * slot * slot;  // one linear 2D/m -> D/m shared across the n blocks
    }
  }
  if (const auto* l = std::get_if<LoopedDesign>(&c.design.method)) {
    if (l->input_injection) p.adapters += 2 * D * D;  // [h; e] (2D) -> D, shared by all iterations
  }

  p.total = p.embedding_input + p.embedding_output + p.attention + p.qk_norm + p.norms + p.router + p.routed_experts +
            p.shared_experts + p.dense_ffn + p.ghc + p.adapters + p.mtp;
  p.active_per_token = p.attention + p.qk_norm + p.norms + p.router + active_ffn + p.shared_experts + p.dense_ffn +
                       p.ghc + p.adapters + p.mtp;
  return p;
}

}  // namespace hdlab::model
