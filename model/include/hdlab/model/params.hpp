#pragma once
// Parameter counts for every design (methods.md section 6 conventions). Counts are exact
// integers; "active" excludes embeddings, as published MoE figures do.
#include <cstdint>

#include "hdlab/model/design.hpp"

namespace hdlab::model {

struct ParamCounts {
  std::int64_t embedding_input = 0;   // all input tables (HD: n tables; VWN: over-width)
  std::int64_t embedding_output = 0;  // LM head; 0 when tied to the input table
  std::int64_t attention = 0;         // q, k, v, o projections (+ biases)
  // linear-attention mixers (Gated DeltaNet, Mamba-2: projections, conv, A, dt, D, norm)
  std::int64_t linear_attention = 0;
  std::int64_t qk_norm = 0;
  std::int64_t norms = 0;             // per-layer RMSNorms, final norm, VWN GroupNorm
  std::int64_t router = 0;
  std::int64_t routed_experts = 0;
  std::int64_t shared_experts = 0;
  std::int64_t dense_ffn = 0;
  std::int64_t ghc = 0;               // VWN generalized hyper-connections
  std::int64_t adapters = 0;          // looped injection 2D->D, VWN embedding projection and reduce
  std::int64_t mtp = 0;

  std::int64_t total = 0;             // everything above
  std::int64_t embedding() const { return embedding_input + embedding_output; }
  std::int64_t non_embedding() const { return total - embedding(); }
  // Parameters a single token touches once, embeddings excluded (routed experts:
  // top_k of num_experts; looped blocks counted once).
  std::int64_t active_per_token = 0;
};

ParamCounts count_params(const Config& c);

}  // namespace hdlab::model
