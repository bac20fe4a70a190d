#include "hdlab/executor/reference.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "activation_math.hpp"

namespace hdlab::executor {

namespace {
std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }
}  // namespace

Doubles gemm_reference(DoubleSpan a, bool trans_a, DoubleSpan b, bool trans_b, std::int64_t m, std::int64_t n,
                       std::int64_t k, double alpha, double beta, DoubleSpan c_in) {
  Doubles c(at(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double av = trans_a ? a[at(p * m + i)] : a[at(i * k + p)];
        const double bv = trans_b ? b[at(j * k + p)] : b[at(p * n + j)];
        sum += av * bv;
      }
      c[at(i * n + j)] = alpha * sum + (beta != 0 ? beta * c_in[at(i * n + j)] : 0.0);
    }
  return c;
}

Doubles attention_reference(DoubleSpan q, DoubleSpan k, DoubleSpan v, std::int64_t heads, std::int64_t kv_heads,
                            std::int64_t head_dim, const AttentionMask& mask, double scale, DoubleSpan sinks,
                            std::int64_t v_head_dim, std::int64_t v_row_dim) {
  const std::int64_t lq = mask.query_rows(), lk = mask.key_rows(), group = heads / kv_heads;
  const std::int64_t dv = v_head_dim > 0 ? v_head_dim : head_dim, dw = v_row_dim > 0 ? v_row_dim : dv;
  Doubles out(at(lq * heads * dv), 0.0);
  Doubles score(at(lk));
  for (std::int64_t r = 0; r < lq; ++r)
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t g = h / group;
      const double* qr = &q[at((r * heads + h) * head_dim)];
      double max_score = -INFINITY;
      for (std::int64_t c = 0; c < lk; ++c) {
        if (!mask.visible(r, c)) {
          score[at(c)] = -INFINITY;
          continue;
        }
        const double* kc = &k[at((c * kv_heads + g) * head_dim)];
        double dot = 0;
        for (std::int64_t d = 0; d < head_dim; ++d) dot += qr[d] * kc[d];
        score[at(c)] = scale * dot;
        max_score = std::max(max_score, score[at(c)]);
      }
      if (max_score == -INFINITY) continue;  // no visible key: zeros
      // A sink logit (per query head) adds to the denominator only: it has no value.
      double denom = sinks.empty() ? 0.0 : std::exp(sinks[at(h)] - max_score);
      for (std::int64_t c = 0; c < lk; ++c) denom += std::exp(score[at(c)] - max_score);
      double* o = &out[at((r * heads + h) * dv)];
      for (std::int64_t c = 0; c < lk; ++c) {
        if (score[at(c)] == -INFINITY) continue;
        const double p = std::exp(score[at(c)] - max_score) / denom;
        const double* vc = &v[at((c * kv_heads + g) * dw)];
        for (std::int64_t d = 0; d < dv; ++d) o[d] += p * vc[d];
      }
    }
  return out;
}

Doubles attention_softmax_reference(DoubleSpan scores, std::int64_t heads, std::int64_t rows, std::int64_t keys,
                                    const AttentionMask& mask, std::int64_t row0, std::int64_t key0, double scale,
                                    DoubleSpan sinks) {
  Doubles out(at(heads * rows * keys), 0.0);
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < rows; ++i) {
      const double* s = &scores[at((h * rows + i) * keys)];
      double* p = &out[at((h * rows + i) * keys)];
      double max_score = -INFINITY;
      for (std::int64_t j = 0; j < keys; ++j)
        if (mask.visible(row0 + i, key0 + j)) max_score = std::max(max_score, scale * s[j]);
      if (max_score == -INFINITY) continue;  // no visible key: zeros
      double denom = sinks.empty() ? 0.0 : std::exp(sinks[at(h)] - max_score);
      for (std::int64_t j = 0; j < keys; ++j)
        if (mask.visible(row0 + i, key0 + j)) denom += std::exp(scale * s[j] - max_score);
      for (std::int64_t j = 0; j < keys; ++j)
        if (mask.visible(row0 + i, key0 + j)) p[j] = std::exp(scale * s[j] - max_score) / denom;
    }
  return out;
}

namespace {
// Element (r, c) of batch matrix b under view s.
std::size_t element(StridedBatch s, std::int64_t b, std::int64_t r, std::int64_t c) {
  return at(s.offset + b * s.batch_stride + r * s.row_stride + c);
}
}  // namespace

Doubles gemm_batched_reference(DoubleSpan a, StridedBatch av, bool trans_a, DoubleSpan b, StridedBatch bv, bool trans_b,
                               DoubleSpan c_in, StridedBatch cv, std::int64_t batch, std::int64_t m, std::int64_t n,
                               std::int64_t k) {
  Doubles c(c_in.begin(), c_in.end());
  for (std::int64_t g = 0; g < batch; ++g)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (std::int64_t p = 0; p < k; ++p)
          sum += a[trans_a ? element(av, g, p, i) : element(av, g, i, p)] *
                 b[trans_b ? element(bv, g, j, p) : element(bv, g, p, j)];
        c[element(cv, g, i, j)] = sum;
      }
  return c;
}

Doubles copy_strided_reference(DoubleSpan src, StridedBatch sv, DoubleSpan dst_in, StridedBatch dv,
                               std::int64_t batch, std::int64_t rows, std::int64_t cols) {
  Doubles dst(dst_in.begin(), dst_in.end());
  for (std::int64_t g = 0; g < batch; ++g)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) dst[element(dv, g, r, c)] = src[element(sv, g, r, c)];
  return dst;
}

Doubles rms_norm_reference(DoubleSpan x, DoubleSpan weight, std::int64_t rows, std::int64_t dim, double eps) {
  Doubles out(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    double sq = 0;
    for (std::int64_t d = 0; d < dim; ++d) sq += x[at(r * dim + d)] * x[at(r * dim + d)];
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(dim) + eps);
    for (std::int64_t d = 0; d < dim; ++d) out[at(r * dim + d)] = x[at(r * dim + d)] * inv * weight[at(d)];
  }
  return out;
}

Doubles group_norm_reference(DoubleSpan x, DoubleSpan weight, DoubleSpan bias, std::int64_t rows,
                             std::int64_t width, std::int64_t group_size, double eps) {
  Doubles out(x.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t g0 = 0; g0 < width; g0 += group_size) {
      const double* xs = &x[at(r * width + g0)];
      double mean = 0, var = 0;
      for (std::int64_t i = 0; i < group_size; ++i) mean += xs[i];
      mean /= static_cast<double>(group_size);
      for (std::int64_t i = 0; i < group_size; ++i) var += (xs[i] - mean) * (xs[i] - mean);
      var /= static_cast<double>(group_size);
      for (std::int64_t i = 0; i < group_size; ++i)
        out[at(r * width + g0 + i)] = (xs[i] - mean) / std::sqrt(var + eps) * weight[at(g0 + i)] + bias[at(g0 + i)];
    }
  return out;
}

Doubles rope_reference(DoubleSpan x, std::span<const std::int32_t> positions, std::int64_t heads,
                       std::int64_t head_dim, std::span<const double> inv_freq, double cos_sin_factor) {
  Doubles out(x.begin(), x.end());
  const auto half = static_cast<std::int64_t>(inv_freq.size());
  for (std::size_t t = 0; t < positions.size(); ++t)
    for (std::int64_t h = 0; h < heads; ++h) {
      double* row = &out[at((static_cast<std::int64_t>(t) * heads + h) * head_dim)];
      for (std::int64_t j = 0; j < half; ++j) {
        const double angle = positions[t] * inv_freq[at(j)];
        const double c = std::cos(angle) * cos_sin_factor, s = std::sin(angle) * cos_sin_factor;
        const double x1 = row[j], x2 = row[j + half];
        row[j] = x1 * c - x2 * s;
        row[j + half] = x2 * c + x1 * s;
      }
    }
  return out;
}

Doubles relu2_reference(DoubleSpan x) {
  Doubles out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] > 0 ? x[i] * x[i] : 0.0;
  return out;
}

Doubles swiglu_reference(DoubleSpan gate_up, std::int64_t tokens, std::int64_t ffn, SwigluClamp clamp) {
  Doubles out(at(tokens * ffn));
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t f = 0; f < ffn; ++f) {
      const double g = gate_up[at(t * 2 * ffn + f)], u = gate_up[at(t * 2 * ffn + ffn + f)];
      out[at(t * ffn + f)] = detail::swiglu_element<double>(g, u, clamp.limit, clamp.alpha);
    }
  return out;
}

Doubles add_reference(DoubleSpan a, DoubleSpan b) {
  Doubles out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
  return out;
}

Routing topk_routing_reference(DoubleSpan logits, std::int64_t tokens, std::int64_t experts, std::int64_t k,
                               model::RouterKind score, bool normalize) {
  Routing out{std::vector<std::int32_t>(at(tokens * k)), Doubles(at(tokens * k))};
  std::vector<std::int32_t> order(at(experts));
  Doubles prob(at(experts));
  for (std::int64_t t = 0; t < tokens; ++t) {
    const double* row = &logits[at(t * experts)];
    if (score == model::RouterKind::softmax) {
      const double mx = *std::max_element(row, row + experts);
      double sum = 0;
      for (std::int64_t e = 0; e < experts; ++e) sum += prob[at(e)] = std::exp(row[e] - mx);
      for (auto& p : prob) p /= sum;
    } else {
      for (std::int64_t e = 0; e < experts; ++e) prob[at(e)] = 1.0 / (1.0 + std::exp(-row[e]));
    }
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return prob[at(a)] > prob[at(b)]; });
    double kept = 0;
    for (std::int64_t j = 0; j < k; ++j) kept += prob[at(order[at(j)])];
    for (std::int64_t j = 0; j < k; ++j) {
      out.expert_ids[at(t * k + j)] = order[at(j)];
      out.weights[at(t * k + j)] = prob[at(order[at(j)])] / (normalize ? kept : 1.0);
    }
  }
  return out;
}

void gather_rows_reference(DoubleSpan table, std::int64_t width, std::span<const std::int32_t> ids, RowMap map,
                           Doubles& out) {
  const std::int64_t rows = static_cast<std::int64_t>(table.size()) / width;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= rows) throw BackendError("gather_rows_reference: id " + std::to_string(ids[i]) + " out of range");
    const std::int64_t dst = map.first + static_cast<std::int64_t>(i) * map.stride;
    std::copy_n(&table[at(ids[i] * width)], width, &out[at(dst * width)]);
  }
}

void scatter_add_rows_reference(DoubleSpan src, std::int64_t width, std::span<const std::int32_t> ids,
                                DoubleSpan weights, Doubles& out) {
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::int64_t d = 0; d < width; ++d)
      out[at(ids[i] * width + d)] += weights[i] * src[i * static_cast<std::size_t>(width) + at(d)];
}

GhcCoefficients ghc_dynamic_reference(DoubleSpan hn, std::int64_t tokens, std::int64_t n, std::int64_t s,
                                      std::int64_t m, DoubleSpan w_dyn, DoubleSpan scale, DoubleSpan static_a,
                                      DoubleSpan static_b) {
  const std::int64_t cols = 2 * m + n;
  const double tau = std::sqrt(static_cast<double>(s));
  GhcCoefficients out{Doubles(at(tokens * n * (m + n))), Doubles(at(tokens * m * n))};
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < cols; ++c) {
        double proj = 0;  // (hn[t] W)[i, c]
        for (std::int64_t d = 0; d < s; ++d) proj += hn[at((t * n + i) * s + d)] * w_dyn[at(d * cols + c)];
        const double dyn = scale[at(c)] * std::tanh(proj / tau);
        if (c < m + n) {
          out.alpha[at((t * n + i) * (m + n) + c)] = dyn + static_a[at(i * (m + n) + c)];
        } else {
          const std::int64_t j = c - (m + n);  // beta is transposed: beta[t, j, i]
          out.beta[at((t * m + j) * n + i)] = dyn + static_b[at(j * n + i)];
        }
      }
  return out;
}

GhcWidthOut ghc_width_reference(DoubleSpan h, std::int64_t tokens, std::int64_t n, std::int64_t s, std::int64_t m,
                                DoubleSpan alpha, std::int64_t alpha_tokens) {
  GhcWidthOut out{Doubles(at(tokens * m * s), 0.0), Doubles(at(tokens * n * s), 0.0)};
  for (std::int64_t t = 0; t < tokens; ++t) {
    const double* a = &alpha[at((alpha_tokens == 1 ? 0 : t) * n * (m + n))];
    for (std::int64_t j = 0; j < m + n; ++j)
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t d = 0; d < s; ++d) {
          const double contrib = a[i * (m + n) + j] * h[at((t * n + i) * s + d)];
          if (j < m)
            out.x[at((t * m + j) * s + d)] += contrib;
          else
            out.carry[at((t * n + (j - m)) * s + d)] += contrib;
        }
  }
  return out;
}

Doubles ghc_depth_reference(DoubleSpan z, std::int64_t tokens, std::int64_t m, std::int64_t s, std::int64_t n,
                            DoubleSpan beta, std::int64_t beta_tokens, DoubleSpan carry) {
  Doubles out(carry.begin(), carry.end());
  for (std::int64_t t = 0; t < tokens; ++t) {
    const double* b = &beta[at((beta_tokens == 1 ? 0 : t) * m * n)];
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t d = 0; d < s; ++d) out[at((t * n + j) * s + d)] += b[i * n + j] * z[at((t * m + i) * s + d)];
  }
  return out;
}

}  // namespace hdlab::executor
