#pragma once
// The SSD scan of a Mamba-2 layer (backbone.hpp's Mamba2Config; executor/README.md "Mamba-2
// and single-sublayer blocks"), after its conv: two forms of one recurrence.
//
// Per head h (its B, C group h / (H / G)), token t, with dt_t = softplus(dt_t' + dt_bias_h)
// and the scalar decay a_t = exp(-exp(A_log_h) dt_t):
//   S_t = a_t S_{t-1} + dt_t x_t B_t^T        [P, N]
//   y_t = S_t C_t + D_h x_t                    [P]
// Shapes: x [T, H, P], B and C [T, G, N], dt (before its bias and softplus) [T, H],
// dt_bias, A_log and D [H], state [H, P, N] (read as S_0, written as S_T), y [T, H, P].
//
// - mamba2_ssd_reference: the recurrence token by token, in double (the reference the other
//   form is tested against, and the decode step);
// - mamba2_ssd_chunked: the chunked (SSD) form in float, `chunk` tokens at a time: in a
//   chunk with cumulative log decays L (L_i = sum_{j<=i} log a_j),
//   y_i = exp(L_i) S_0 C_i + sum_{j<=i} (C_i . B_j) exp(L_i - L_j) dt_j x_j + D x_i and
//   S = exp(L_last) S_0 + sum_j exp(L_last - L_j) dt_j x_j B_j^T: the same numbers as the
//   recurrence up to rounding, as matrix products per chunk.
#include <cstdint>
#include <span>

namespace hdlab::executor {

struct Mamba2Shape {
  std::int64_t tokens = 0, heads = 0, head_dim = 0, groups = 0, state = 0;
};

// The per-head parameters of the scan.
template <class F>
struct Mamba2Params {
  std::span<const F> dt_bias, a_log, d;  // [H] each
};

void mamba2_ssd_reference(std::span<const double> x, std::span<const double> B, std::span<const double> C,
                          std::span<const double> dt, const Mamba2Params<double>& p, const Mamba2Shape& s,
                          std::span<double> state, std::span<double> y);

void mamba2_ssd_chunked(std::span<const float> x, std::span<const float> B, std::span<const float> C,
                        std::span<const float> dt, const Mamba2Params<float>& p, const Mamba2Shape& s,
                        std::int64_t chunk, std::span<float> state, std::span<float> y);
// The same for heads [h0, h1) only (their state and outputs; the others untouched): heads
// are independent, so the CPU backend runs ranges of them in parallel. A chunk of one
// token is the recurrence (the decode step).
void mamba2_ssd_chunked_heads(std::span<const float> x, std::span<const float> B, std::span<const float> C,
                              std::span<const float> dt, const Mamba2Params<float>& p, const Mamba2Shape& s,
                              std::int64_t chunk, std::int64_t h0, std::int64_t h1, std::span<float> state,
                              std::span<float> y);

}  // namespace hdlab::executor
