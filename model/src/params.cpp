#include "hdlab/model/params.hpp"

namespace hdlab::model {

ParamCounts count_params(const Config& c) {
  const Backbone& b = c.effective;
  const std::int64_t D = b.hidden, V = b.padded_vocab(), V_in = b.padded_input_vocab();
  ParamCounts p;

  // Embeddings: input tables are lookups; the head is a D x V matrix unless tied.
  // A learned position table (GPT) is one more input table (shared by HD's streams);
  // designs add theirs in add_method_params.
  p.embedding_input = V_in * D + b.position_rows() * D;
  p.embedding_output = b.tie_embeddings ? 0 : V * D;

  const AttentionShape att = attention_shape(b);
  std::int64_t active_ffn = 0;
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    switch (b.mixer(l)) {
      case MixerKind::attention:
        p.attention += att.projection_params + b.sink_params();
        p.qk_norm += b.qk_norm_params();
        break;
      case MixerKind::gated_deltanet: p.linear_attention += b.gdn->params(D); break;  // no QK-norm
      case MixerKind::mamba2: p.linear_attention += b.mamba->params(D); break;
      case MixerKind::none: break;  // an FFN-only layer
    }
    p.norms += b.layer_norms(l) * b.norm_params();  // its sublayers' norms (Gemma: pre and post each)
    switch (b.ffn(l)) {
      case FfnKind::moe: {
        const MoeConfig& m = *b.moe;
        p.router += m.num_experts * D + (m.router_bias ? m.num_experts : 0);
        p.routed_experts += m.num_experts * b.expert_params();
        p.shared_experts += m.num_shared_experts * 3 * D * m.shared_expert_intermediate;
        if (m.shared_expert_gate) p.shared_experts += D;  // its sigmoid gate, D -> 1
        active_ffn += m.top_k * b.expert_params();
        break;
      }
      case FfnKind::dense: p.dense_ffn += b.dense_ffn_params(); break;
      case FfnKind::none: break;  // a mixer-only layer
    }
  }
  p.norms += b.norm_params();  // final norm

  add_method_params(c.design.method, b, p);  // input tables, GHC, adapters, MTP

  p.total = p.embedding_input + p.embedding_output + p.attention + p.linear_attention + p.qk_norm + p.norms + p.router + p.routed_experts +
            p.shared_experts + p.dense_ffn + p.ghc + p.adapters + p.mtp;
  p.active_per_token = p.attention + p.linear_attention + p.qk_norm + p.norms + p.router + active_ffn + p.shared_experts + p.dense_ffn +
                       p.ghc + p.adapters + p.mtp;
  return p;
}

}  // namespace hdlab::model
