// The Mamba-2 SSD scan, recurrent (double reference) and chunked (float, CPU); see
// mamba2_ssd.hpp for the equations and shapes.
#include "hdlab/executor/mamba2_ssd.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "activation_math.hpp"

namespace hdlab::executor {

namespace {

using i64 = std::int64_t;
std::size_t at(i64 i) { return static_cast<std::size_t>(i); }

template <class F>
void check(const Mamba2Shape& s, std::size_t x, std::size_t B, std::size_t C, std::size_t dt,
           const Mamba2Params<F>& p, std::size_t state, std::size_t y) {
  const auto T = at(s.tokens);
  if (s.heads < 1 || s.head_dim < 1 || s.groups < 1 || s.state < 1 || s.tokens < 0 || s.heads % s.groups != 0)
    throw std::invalid_argument("mamba2_ssd: bad shape (heads must be a multiple of groups)");
  const auto H = at(s.heads);
  if (x != T * H * at(s.head_dim) || B != T * at(s.groups * s.state) || C != B || dt != T * H ||
      p.dt_bias.size() != H || p.a_log.size() != H || p.d.size() != H || state != H * at(s.head_dim * s.state) ||
      y != x)
    throw std::invalid_argument("mamba2_ssd: a tensor's size does not match the shape");
}

}  // namespace

void mamba2_ssd_reference(std::span<const double> x, std::span<const double> B, std::span<const double> C,
                          std::span<const double> dt, const Mamba2Params<double>& p, const Mamba2Shape& s,
                          std::span<double> state, std::span<double> y) {
  check(s, x.size(), B.size(), C.size(), dt.size(), p, state.size(), y.size());
  const i64 H = s.heads, P = s.head_dim, N = s.state, G = s.groups, per_group = H / G;
  for (i64 t = 0; t < s.tokens; ++t) {
    for (i64 h = 0; h < H; ++h) {
      const i64 g = h / per_group;
      double step = 0, a = 0;
      detail::mamba2_step(dt[at(t * H + h)], p.dt_bias[at(h)], p.a_log[at(h)], step, a);
      const double* b = &B[at((t * G + g) * N)];
      const double* c = &C[at((t * G + g) * N)];
      const double* xt = &x[at((t * H + h) * P)];
      double* S = &state[at(h * P * N)];
      for (i64 i = 0; i < P; ++i) {
        double out = 0;
        for (i64 n = 0; n < N; ++n) {
          S[i * N + n] = a * S[i * N + n] + step * xt[i] * b[n];
          out += S[i * N + n] * c[n];
        }
        y[at((t * H + h) * P + i)] = out + p.d[at(h)] * xt[i];
      }
    }
  }
}

namespace {

// One head's chunked scan over every token (see mamba2_ssd.hpp): per chunk the decay-masked
// C B^T, the outputs from the entering state and from the chunk's own tokens, then the
// state handed on. Scratch: cb [chunk^2], L and step [chunk], s_new [P N].
struct ChunkScratch {
  std::vector<float> cb, L, step, s_new;
};

void chunked_head(std::span<const float> x, std::span<const float> B, std::span<const float> C,
                  std::span<const float> dt, const Mamba2Params<float>& p, const Mamba2Shape& s, i64 chunk, i64 h,
                  float* S, std::span<float> y, ChunkScratch& w) {
  const i64 H = s.heads, P = s.head_dim, N = s.state, G = s.groups, g = h / (H / G);
  const float A = -std::exp(p.a_log[at(h)]);
  for (i64 t0 = 0; t0 < s.tokens; t0 += chunk) {
    const i64 Q = std::min(chunk, s.tokens - t0);
    float run = 0;  // cumulative log decay L_i within the chunk
    for (i64 i = 0; i < Q; ++i) {
      w.step[at(i)] = detail::softplus(dt[at((t0 + i) * H + h)] + p.dt_bias[at(h)]);
      run += A * w.step[at(i)];
      w.L[at(i)] = run;
    }
    for (i64 i = 0; i < Q; ++i)  // C B^T of the chunk, masked by the decay from j to i
      for (i64 j = 0; j <= i; ++j) {
        float dot = 0;
        for (i64 n = 0; n < N; ++n) dot += C[at(((t0 + i) * G + g) * N + n)] * B[at(((t0 + j) * G + g) * N + n)];
        w.cb[at(i * chunk + j)] = dot * std::exp(w.L[at(i)] - w.L[at(j)]) * w.step[at(j)];
      }
    for (i64 i = 0; i < Q; ++i) {
      const float* c = &C[at(((t0 + i) * G + g) * N)];
      const float decay = std::exp(w.L[at(i)]);
      for (i64 q = 0; q < P; ++q) {
        float out = 0;
        for (i64 n = 0; n < N; ++n) out += S[q * N + n] * c[n];
        out *= decay;  // from the state entering the chunk
        for (i64 j = 0; j <= i; ++j) out += w.cb[at(i * chunk + j)] * x[at(((t0 + j) * H + h) * P + q)];
        y[at(((t0 + i) * H + h) * P + q)] = out + p.d[at(h)] * x[at(((t0 + i) * H + h) * P + q)];
      }
    }
    // The state leaving the chunk: the entering one decayed over the chunk, plus each
    // token's write decayed from it to the chunk's end (its weight formed once, in `step`).
    const float last = w.L[at(Q - 1)], carried = std::exp(last);
    for (i64 j = 0; j < Q; ++j) w.step[at(j)] *= std::exp(last - w.L[at(j)]);
    for (i64 q = 0; q < P; ++q)
      for (i64 n = 0; n < N; ++n) {
        float v = carried * S[q * N + n];
        for (i64 j = 0; j < Q; ++j)
          v += w.step[at(j)] * x[at(((t0 + j) * H + h) * P + q)] * B[at(((t0 + j) * G + g) * N + n)];
        w.s_new[at(q * N + n)] = v;
      }
    std::copy(w.s_new.begin(), w.s_new.end(), S);
  }
}

}  // namespace

void mamba2_ssd_chunked_heads(std::span<const float> x, std::span<const float> B, std::span<const float> C,
                              std::span<const float> dt, const Mamba2Params<float>& p, const Mamba2Shape& s,
                              std::int64_t chunk, std::int64_t h0, std::int64_t h1, std::span<float> state,
                              std::span<float> y) {
  check(s, x.size(), B.size(), C.size(), dt.size(), p, state.size(), y.size());
  if (chunk < 1) throw std::invalid_argument("mamba2_ssd_chunked: chunk must be >= 1");
  if (h0 < 0 || h1 > s.heads || h0 > h1) throw std::invalid_argument("mamba2_ssd_chunked: heads outside [0, H)");
  ChunkScratch w{std::vector<float>(at(chunk * chunk)), std::vector<float>(at(chunk)), std::vector<float>(at(chunk)),
                 std::vector<float>(at(s.head_dim * s.state))};
  for (i64 h = h0; h < h1; ++h) chunked_head(x, B, C, dt, p, s, chunk, h, &state[at(h * s.head_dim * s.state)], y, w);
}

void mamba2_ssd_chunked(std::span<const float> x, std::span<const float> B, std::span<const float> C,
                        std::span<const float> dt, const Mamba2Params<float>& p, const Mamba2Shape& s,
                        std::int64_t chunk, std::span<float> state, std::span<float> y) {
  mamba2_ssd_chunked_heads(x, B, C, dt, p, s, chunk, 0, s.heads, state, y);
}

}  // namespace hdlab::executor
