#pragma once
// The gated delta rule of a Gated DeltaNet layer (backbone.hpp's GatedDeltaNetConfig;
// executor/README.md "Linear attention"), after its conv: two forms of one recurrence.
//
// Per value head h (its q/k head h / (hv / hk)), token t, with q and k L2-normalised
// (x / sqrt(sum x^2 + 1e-6)) and q scaled by 1 / sqrt(dk):
//   S_t = exp(g_t) S_{t-1} + beta_t k_t (v_t - exp(g_t) S_{t-1}^T k_t)^T     [dk, dv]
//   o_t = S_t^T q_t                                                           [dv]
// Shapes: q, k [T, hk, dk], v [T, hv, dv], g (log decay, <= 0) and beta [T, hv],
// state [hv, dk, dv] (read as S_0, written as S_T), out [T, hv, dv].
//
// - gated_delta_rule_reference: the recurrence token by token, in double (the reference the
//   other form is tested against, and the decode step);
// - gated_delta_rule_chunked: the chunked (WY) form in float, `chunk` tokens at a time: in
//   a chunk with cumulative log decays G, A[i][j] = beta_i (k_i . k_j) exp(G_i - G_j)
//   (j < i), (I + A) U = beta v - (beta exp(G) k) S_0 solved by forward substitution,
//   o_i = exp(G_i) S_0^T q_i + sum_{j<=i} (q_i . k_j) exp(G_i - G_j) u_j and
//   S = exp(G_last) S_0 + sum_j exp(G_last - G_j) k_j u_j^T: the same numbers as the
//   recurrence up to rounding, in matrix products.
#include <cstdint>
#include <span>

namespace hdlab::executor {

struct GdnShape {
  std::int64_t tokens = 0, hk = 0, hv = 0, dk = 0, dv = 0;
};

void gated_delta_rule_reference(std::span<const double> q, std::span<const double> k, std::span<const double> v,
                                std::span<const double> g, std::span<const double> beta, const GdnShape& s,
                                std::span<double> state, std::span<double> out);

void gated_delta_rule_chunked(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                              std::span<const float> g, std::span<const float> beta, const GdnShape& s,
                              std::int64_t chunk, std::span<float> state, std::span<float> out);

// The chunked form over strided rows, value heads [h0, h1) only (the CPU backend runs head
// ranges in parallel; heads are independent): row t of q head kh at q + t*qk_stride +
// kh*dk, of k likewise, of v head h at v + t*v_stride + h*dv; g, beta [T, hv]; state
// [hv, dk, dv] and out [T, hv, dv] contiguous. Shapes are the caller's to check.
struct GdnRows {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  std::int64_t qk_stride = 0, v_stride = 0;
  const float* g = nullptr;
  const float* beta = nullptr;
};
void gated_delta_rule_chunked_heads(const GdnRows& in, const GdnShape& s, std::int64_t chunk, std::int64_t h0,
                                    std::int64_t h1, float* state, float* out);

}  // namespace hdlab::executor
