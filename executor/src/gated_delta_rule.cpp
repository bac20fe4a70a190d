// The gated delta rule, recurrent (double reference) and chunked (float, CPU); see
// gated_delta_rule.hpp for the equations and shapes.
#include "hdlab/executor/gated_delta_rule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace hdlab::executor {

namespace {

using i64 = std::int64_t;
std::size_t at(i64 i) { return static_cast<std::size_t>(i); }

void check(const GdnShape& s, std::size_t q, std::size_t k, std::size_t v, std::size_t g, std::size_t beta,
           std::size_t state, std::size_t out) {
  const auto T = at(s.tokens);
  if (s.hk < 1 || s.hv < 1 || s.dk < 1 || s.dv < 1 || s.tokens < 0 || s.hv % s.hk != 0)
    throw std::invalid_argument("gated_delta_rule: bad shape (hv must be a multiple of hk)");
  if (q != T * at(s.hk * s.dk) || k != q || v != T * at(s.hv * s.dv) || g != T * at(s.hv) || beta != g ||
      state != at(s.hv * s.dk * s.dv) || out != v)
    throw std::invalid_argument("gated_delta_rule: a tensor's size does not match the shape");
}

// x / sqrt(sum x^2 + 1e-6) * scale, into `to`.
template <class F, class G>
void l2_normalise(const F* x, i64 n, double scale, G* to) {
  double sum = 0;
  for (i64 i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  const double r = scale / std::sqrt(sum + 1e-6);
  for (i64 i = 0; i < n; ++i) to[i] = static_cast<G>(static_cast<double>(x[i]) * r);
}

}  // namespace

void gated_delta_rule_reference(std::span<const double> q, std::span<const double> k, std::span<const double> v,
                                std::span<const double> g, std::span<const double> beta, const GdnShape& s,
                                std::span<double> state, std::span<double> out) {
  check(s, q.size(), k.size(), v.size(), g.size(), beta.size(), state.size(), out.size());
  const i64 dk = s.dk, dv = s.dv, group = s.hv / s.hk;
  std::vector<double> qn(at(dk)), kn(at(dk)), delta(at(dv));
  for (i64 t = 0; t < s.tokens; ++t) {
    for (i64 h = 0; h < s.hv; ++h) {
      const i64 kh = h / group;
      l2_normalise(&q[at((t * s.hk + kh) * dk)], dk, 1 / std::sqrt(static_cast<double>(dk)), qn.data());
      l2_normalise(&k[at((t * s.hk + kh) * dk)], dk, 1.0, kn.data());
      double* S = &state[at(h * dk * dv)];
      const double a = std::exp(g[at(t * s.hv + h)]), b = beta[at(t * s.hv + h)];
      for (i64 i = 0; i < dk * dv; ++i) S[i] *= a;
      for (i64 j = 0; j < dv; ++j) {  // delta = beta (v - S^T k)
        double kv = 0;
        for (i64 i = 0; i < dk; ++i) kv += S[i * dv + j] * kn[at(i)];
        delta[at(j)] = b * (v[at((t * s.hv + h) * dv + j)] - kv);
      }
      for (i64 i = 0; i < dk; ++i)
        for (i64 j = 0; j < dv; ++j) S[i * dv + j] += kn[at(i)] * delta[at(j)];
      for (i64 j = 0; j < dv; ++j) {
        double o = 0;
        for (i64 i = 0; i < dk; ++i) o += S[i * dv + j] * qn[at(i)];
        out[at((t * s.hv + h) * dv + j)] = o;
      }
    }
  }
}

namespace {

// One chunk [t0, t0 + c) of one value head: updates S [dk, dv] and writes the outputs.
struct ChunkHead {
  const GdnShape& s;
  i64 h, kh, t0, c;
};

// The chunk's inputs: q and k normalised (q scaled), the cumulative log decays G and the
// write strengths B, in double.
struct ChunkInputs {
  std::vector<double> Q, K, G, B;
};

ChunkInputs chunk_inputs(const ChunkHead& ch, const GdnRows& in) {
  const GdnShape& s = ch.s;
  const i64 dk = s.dk, c = ch.c;
  ChunkInputs x{std::vector<double>(at(c * dk)), std::vector<double>(at(c * dk)), std::vector<double>(at(c)),
                std::vector<double>(at(c))};
  double cum = 0;
  for (i64 i = 0; i < c; ++i) {
    const i64 t = ch.t0 + i;
    l2_normalise(in.q + t * in.qk_stride + ch.kh * dk, dk, 1 / std::sqrt(static_cast<double>(dk)), &x.Q[at(i * dk)]);
    l2_normalise(in.k + t * in.qk_stride + ch.kh * dk, dk, 1.0, &x.K[at(i * dk)]);
    cum += in.g[t * s.hv + ch.h];
    x.G[at(i)] = cum;
    x.B[at(i)] = in.beta[t * s.hv + ch.h];
  }
  return x;
}

// The state after the chunk: S = exp(G_last) S_0 + sum_j exp(G_last - G_j) k_j u_j^T.
void update_state(const ChunkInputs& x, const std::vector<double>& U, i64 c, i64 dk, i64 dv, float* S) {
  const double last = x.G[at(c - 1)], keep = std::exp(last);
  std::vector<double> Sn(at(dk * dv));
  for (i64 e = 0; e < dk * dv; ++e) Sn[at(e)] = keep * S[e];
  for (i64 j = 0; j < c; ++j) {
    const double decay = std::exp(last - x.G[at(j)]);
    for (i64 e = 0; e < dk; ++e) {
      const double kd = decay * x.K[at(j * dk + e)];
      for (i64 d = 0; d < dv; ++d) Sn[at(e * dv + d)] += kd * U[at(j * dv + d)];
    }
  }
  for (i64 e = 0; e < dk * dv; ++e) S[e] = static_cast<float>(Sn[at(e)]);
}

// One chunk of one value head (the WY form in gated_delta_rule.hpp): updates S [dk, dv]
// and writes the outputs. O(c^2 (dk + dv) + c dk dv).
void chunk_head(const ChunkHead& ch, const GdnRows& in, float* S, float* out) {
  const GdnShape& s = ch.s;
  const i64 dk = s.dk, dv = s.dv, c = ch.c;
  const ChunkInputs x = chunk_inputs(ch, in);
  const std::vector<double>&Q = x.Q, &K = x.K, &G = x.G, &B = x.B;
  auto dot = [&](const std::vector<double>& a, i64 i, const std::vector<double>& b, i64 j) {
    double r = 0;
    for (i64 d = 0; d < dk; ++d) r += a[at(i * dk + d)] * b[at(j * dk + d)];
    return r;
  };
  // W = beta exp(G) k, U = beta v; then (I + A) X = RHS row by row, A[i][j] = beta_i
  // (k_i . k_j) exp(G_i - G_j) for j < i; P[i][j] = (q_i . k_j) exp(G_i - G_j) for j <= i.
  std::vector<double> W(at(c * dk)), U(at(c * dv)), P(at(c * c));
  for (i64 i = 0; i < c; ++i) {
    const double e = B[at(i)] * std::exp(G[at(i)]);
    const float* vi = in.v + (ch.t0 + i) * in.v_stride + ch.h * dv;
    for (i64 d = 0; d < dk; ++d) W[at(i * dk + d)] = e * K[at(i * dk + d)];
    for (i64 d = 0; d < dv; ++d) U[at(i * dv + d)] = B[at(i)] * vi[d];
    for (i64 j = 0; j < i; ++j) {
      const double decay = std::exp(G[at(i)] - G[at(j)]), a = B[at(i)] * dot(K, i, K, j) * decay;
      P[at(i * c + j)] = dot(Q, i, K, j) * decay;
      for (i64 d = 0; d < dk; ++d) W[at(i * dk + d)] -= a * W[at(j * dk + d)];
      for (i64 d = 0; d < dv; ++d) U[at(i * dv + d)] -= a * U[at(j * dv + d)];
    }
    P[at(i * c + i)] = dot(Q, i, K, i);
  }
  // u = U - W S_0; o_i = exp(G_i) S_0^T q_i + sum_{j <= i} P[i][j] u_j
  std::vector<double> row(at(dv));
  for (i64 i = 0; i < c; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (i64 e = 0; e < dk; ++e) {
      const double w = W[at(i * dk + e)];
      for (i64 d = 0; d < dv; ++d) row[at(d)] += w * S[e * dv + d];
    }
    for (i64 d = 0; d < dv; ++d) U[at(i * dv + d)] -= row[at(d)];
  }
  for (i64 i = 0; i < c; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (i64 e = 0; e < dk; ++e) {
      const double q = Q[at(i * dk + e)];
      for (i64 d = 0; d < dv; ++d) row[at(d)] += q * S[e * dv + d];
    }
    const double gi = std::exp(G[at(i)]);
    for (i64 d = 0; d < dv; ++d) row[at(d)] *= gi;
    for (i64 j = 0; j <= i; ++j) {
      const double p = P[at(i * c + j)];
      for (i64 d = 0; d < dv; ++d) row[at(d)] += p * U[at(j * dv + d)];
    }
    for (i64 d = 0; d < dv; ++d) out[((ch.t0 + i) * s.hv + ch.h) * dv + d] = static_cast<float>(row[at(d)]);
  }
  update_state(x, U, c, dk, dv, S);
}

}  // namespace

void gated_delta_rule_chunked_heads(const GdnRows& in, const GdnShape& s, std::int64_t chunk, std::int64_t h0,
                                    std::int64_t h1, float* state, float* out) {
  const i64 group = s.hv / s.hk;
  for (i64 h = h0; h < h1; ++h)
    for (i64 t0 = 0; t0 < s.tokens; t0 += chunk)
      chunk_head(ChunkHead{s, h, h / group, t0, std::min(chunk, s.tokens - t0)}, in, state + h * s.dk * s.dv, out);
}

void gated_delta_rule_chunked(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                              std::span<const float> g, std::span<const float> beta, const GdnShape& s,
                              std::int64_t chunk, std::span<float> state, std::span<float> out) {
  check(s, q.size(), k.size(), v.size(), g.size(), beta.size(), state.size(), out.size());
  if (chunk < 1) throw std::invalid_argument("gated_delta_rule_chunked: chunk must be >= 1, got " + std::to_string(chunk));
  const GdnRows rows{q.data(), k.data(), v.data(), s.hk * s.dk, s.hv * s.dv, g.data(), beta.data()};
  gated_delta_rule_chunked_heads(rows, s, chunk, 0, s.hv, state.data(), out.data());
}

}  // namespace hdlab::executor
