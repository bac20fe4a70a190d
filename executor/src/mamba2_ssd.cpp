// The Mamba-2 SSD scan, recurrent (double reference) and chunked (float, CPU); see
// mamba2_ssd.hpp for the equations and shapes.
#include "hdlab/executor/mamba2_ssd.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

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

// softplus(v + bias), as the layer applies it to dt (linear above 20, as torch's softplus).
double softplus(double v) { return v > 20 ? v : std::log1p(std::exp(v)); }

}  // namespace

void mamba2_ssd_reference(std::span<const double> x, std::span<const double> B, std::span<const double> C,
                          std::span<const double> dt, const Mamba2Params<double>& p, const Mamba2Shape& s,
                          std::span<double> state, std::span<double> y) {
  check(s, x.size(), B.size(), C.size(), dt.size(), p, state.size(), y.size());
  const i64 H = s.heads, P = s.head_dim, N = s.state, G = s.groups, per_group = H / G;
  for (i64 t = 0; t < s.tokens; ++t) {
    for (i64 h = 0; h < H; ++h) {
      const i64 g = h / per_group;
      const double step = softplus(dt[at(t * H + h)] + p.dt_bias[at(h)]);
      const double a = std::exp(-std::exp(p.a_log[at(h)]) * step);
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

void mamba2_ssd_chunked(std::span<const float> x, std::span<const float> B, std::span<const float> C,
                        std::span<const float> dt, const Mamba2Params<float>& p, const Mamba2Shape& s,
                        std::int64_t chunk, std::span<float> state, std::span<float> y) {
  check(s, x.size(), B.size(), C.size(), dt.size(), p, state.size(), y.size());
  if (chunk < 1) throw std::invalid_argument("mamba2_ssd_chunked: chunk must be >= 1");
  const i64 H = s.heads, P = s.head_dim, N = s.state, G = s.groups, per_group = H / G;
  std::vector<float> cb(at(chunk * chunk)), L(at(chunk)), step(at(chunk)), s_new(at(P * N));
  for (i64 t0 = 0; t0 < s.tokens; t0 += chunk) {
    const i64 Q = std::min(chunk, s.tokens - t0);
    for (i64 h = 0; h < H; ++h) {
      const i64 g = h / per_group;
      const float A = -std::exp(p.a_log[at(h)]);
      float run = 0;  // cumulative log decay L_i within the chunk
      for (i64 i = 0; i < Q; ++i) {
        step[at(i)] = static_cast<float>(softplus(static_cast<double>(dt[at((t0 + i) * H + h)] + p.dt_bias[at(h)])));
        run += A * step[at(i)];
        L[at(i)] = run;
      }
      // C B^T of the chunk (shared by the group's heads; recomputed per head here)
      for (i64 i = 0; i < Q; ++i)
        for (i64 j = 0; j <= i; ++j) {
          float dot = 0;
          for (i64 n = 0; n < N; ++n) dot += C[at(((t0 + i) * G + g) * N + n)] * B[at(((t0 + j) * G + g) * N + n)];
          cb[at(i * chunk + j)] = dot * std::exp(L[at(i)] - L[at(j)]) * step[at(j)];
        }
      float* S = &state[at(h * P * N)];
      for (i64 i = 0; i < Q; ++i) {
        const float* c = &C[at(((t0 + i) * G + g) * N)];
        const float decay = std::exp(L[at(i)]);
        for (i64 q = 0; q < P; ++q) {
          float out = 0;
          for (i64 n = 0; n < N; ++n) out += S[q * N + n] * c[n];
          out *= decay;  // from the state entering the chunk
          for (i64 j = 0; j <= i; ++j) out += cb[at(i * chunk + j)] * x[at(((t0 + j) * H + h) * P + q)];
          y[at(((t0 + i) * H + h) * P + q)] = out + p.d[at(h)] * x[at(((t0 + i) * H + h) * P + q)];
        }
      }
      // the state leaving the chunk
      const float last = L[at(Q - 1)];
      for (i64 q = 0; q < P; ++q)
        for (i64 n = 0; n < N; ++n) {
          float v = std::exp(last) * S[q * N + n];
          for (i64 j = 0; j < Q; ++j)
            v += std::exp(last - L[at(j)]) * step[at(j)] * x[at(((t0 + j) * H + h) * P + q)] *
                 B[at(((t0 + j) * G + g) * N + n)];
          s_new[at(q * N + n)] = v;
        }
      std::copy(s_new.begin(), s_new.end(), S);
    }
  }
}

}  // namespace hdlab::executor
