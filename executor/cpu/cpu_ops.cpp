// The CPU backend's vector ops (norms, RoPE, SwiGLU, residual adds, routing, gathers, GHC).
// All f32, parallel over rows or tokens on the backend's pool.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "../src/activation_math.hpp"
#include "../src/op_errors.hpp"
#include "cpu_backend.hpp"

namespace hdlab::executor::cpu {

void CpuBackend::rms_norm_impl(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
  const std::int64_t rows = x.matrix_rows(), dim = x.matrix_cols();
  const float* xs = x.data_as<const float>();
  const float* w = weight.data_as<const float>();
  float* o = out.data_as<float>();
  parallel_for(rows, 4.0 * static_cast<double>(dim), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float* xr = xs + r * dim;
      double sq = 0;  // sum of squares in double: rows of 10^4+ elements
      for (std::int64_t d = 0; d < dim; ++d) sq += static_cast<double>(xr[d]) * xr[d];
      const auto inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(dim) + eps));
      for (std::int64_t d = 0; d < dim; ++d) o[r * dim + d] = xr[d] * inv * w[d];
    }
  });
}

void CpuBackend::group_norm_impl(const Tensor& x, std::int64_t group_size, const Tensor& weight, const Tensor& bias,
                                 float eps, const Tensor& out) {
  const std::int64_t rows = x.matrix_rows(), width = x.matrix_cols(), groups = width / group_size;
  const float* xs = x.data_as<const float>();
  const float* w = weight.data_as<const float>();
  const float* b = bias.data_as<const float>();
  float* o = out.data_as<float>();
  parallel_for(rows * groups, 8.0 * static_cast<double>(group_size), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t base = (item / groups) * width + (item % groups) * group_size, g0 = (item % groups) * group_size;
      double mean = 0, var = 0;  // two passes in double: groups are D = thousands of elements
      for (std::int64_t i = 0; i < group_size; ++i) mean += xs[base + i];
      mean /= static_cast<double>(group_size);
      for (std::int64_t i = 0; i < group_size; ++i) var += (xs[base + i] - mean) * (xs[base + i] - mean);
      const auto inv = static_cast<float>(1.0 / std::sqrt(var / static_cast<double>(group_size) + eps));
      const auto m = static_cast<float>(mean);
      for (std::int64_t i = 0; i < group_size; ++i) o[base + i] = (xs[base + i] - m) * inv * w[g0 + i] + b[g0 + i];
    }
  });
}

void CpuBackend::rope_impl(const Tensor& x, const Tensor& positions, std::span<const double> inv_freq,
                           double cos_sin_factor) {
  const auto half = static_cast<std::int64_t>(inv_freq.size()), rotary_dim = 2 * half;
  const std::int64_t tokens = x.dim(0), heads = x.dim(1), hd = x.dim(2);
  float* xs = x.data_as<float>();
  const std::int32_t* pos = positions.data_as<const std::int32_t>();
  parallel_for(tokens, 3.0 * static_cast<double>(heads * rotary_dim), [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> cos_t(static_cast<std::size_t>(half)), sin_t(static_cast<std::size_t>(half));
    for (std::int64_t t = begin; t < end; ++t) {
      for (std::int64_t j = 0; j < half; ++j) {
        // Angles reach 10^6 rad at long expanded contexts: reduce them in double first.
        const double angle = pos[t] * inv_freq[static_cast<std::size_t>(j)];
        const double reduced = angle - 2 * std::numbers::pi * std::nearbyint(angle / (2 * std::numbers::pi));
        cos_t[static_cast<std::size_t>(j)] = static_cast<float>(std::cos(reduced) * cos_sin_factor);
        sin_t[static_cast<std::size_t>(j)] = static_cast<float>(std::sin(reduced) * cos_sin_factor);
      }
      for (std::int64_t h = 0; h < heads; ++h) {
        float* row = xs + (t * heads + h) * hd;  // dims rotary_dim..hd-1 pass unchanged
        for (std::int64_t j = 0; j < half; ++j) {
          const float x1 = row[j], x2 = row[j + half];
          const float c = cos_t[static_cast<std::size_t>(j)], s = sin_t[static_cast<std::size_t>(j)];
          row[j] = x1 * c - x2 * s;
          row[j + half] = x2 * c + x1 * s;
        }
      }
    }
  });
}

void CpuBackend::relu2_impl(const Tensor& x, const Tensor& out) {
  const float* xs = x.data_as<const float>();
  float* o = out.data_as<float>();
  parallel_for(x.numel(), 2.0, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) o[i] = detail::relu2(xs[i]);
  });
}

void CpuBackend::swiglu_impl(const Tensor& gate_up, const Tensor& out, SwigluClamp clamp) {
  const std::int64_t tokens = out.matrix_rows(), ffn = out.matrix_cols();
  const float* gu = gate_up.data_as<const float>();
  float* o = out.data_as<float>();
  parallel_for(tokens, 4.0 * static_cast<double>(ffn), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const float* gate = gu + t * 2 * ffn;
      const float* up = gate + ffn;
      for (std::int64_t f = 0; f < ffn; ++f)
        o[t * ffn + f] = detail::swiglu_element(gate[f], up[f], clamp.limit, clamp.alpha);
    }
  });
}

void CpuBackend::add_impl(const Tensor& a, const Tensor& b, const Tensor& out) {
  const float* as = a.data_as<const float>();
  const float* bs = b.data_as<const float>();
  float* o = out.data_as<float>();
  parallel_for(out.numel(), 1.0, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) o[i] = as[i] + bs[i];
  });
}

void CpuBackend::topk_routing_impl(const Tensor& logits, std::int64_t k, model::RouterKind score, bool normalize,
                                   const Tensor& expert_ids, const Tensor& weights) {
  const std::int64_t tokens = logits.matrix_rows(), experts = logits.matrix_cols();
  const float* lg = logits.data_as<const float>();
  std::int32_t* ids = expert_ids.data_as<std::int32_t>();
  float* wt = weights.data_as<float>();
  parallel_for(tokens, 8.0 * static_cast<double>(experts), [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> prob(static_cast<std::size_t>(experts));
    for (std::int64_t t = begin; t < end; ++t) {
      const float* row = lg + t * experts;
      if (score == model::RouterKind::softmax) {
        const float mx = *std::max_element(row, row + experts);
        float sum = 0;
        for (std::int64_t e = 0; e < experts; ++e) sum += prob[static_cast<std::size_t>(e)] = std::exp(row[e] - mx);
        for (auto& p : prob) p /= sum;
      } else {
        for (std::int64_t e = 0; e < experts; ++e) prob[static_cast<std::size_t>(e)] = 1.0f / (1.0f + std::exp(-row[e]));
      }
      // k passes of arg-max (k is small); strict > keeps the lower id on ties.
      float kept = 0;
      for (std::int64_t j = 0; j < k; ++j) {
        std::int64_t best = -1;
        for (std::int64_t e = 0; e < experts; ++e) {
          const float p = prob[static_cast<std::size_t>(e)];
          if (p >= 0 && (best < 0 || p > prob[static_cast<std::size_t>(best)])) best = e;
        }
        if (best < 0) throw_nan_router_scores(t);
        ids[t * k + j] = static_cast<std::int32_t>(best);
        wt[t * k + j] = prob[static_cast<std::size_t>(best)];
        kept += prob[static_cast<std::size_t>(best)];
        prob[static_cast<std::size_t>(best)] = -1.0f;  // taken
      }
      if (normalize)
        for (std::int64_t j = 0; j < k; ++j) wt[t * k + j] /= kept;
    }
  });
}

void CpuBackend::gather_rows_impl(const Tensor& table, const Tensor& ids, const Tensor& out, RowMap map) {
  const std::int64_t rows = table.matrix_rows(), width = table.matrix_cols(), n = ids.numel();
  const float* tb = table.data_as<const float>();
  const std::int32_t* id = ids.data_as<const std::int32_t>();
  float* o = out.data_as<float>();
  for (std::int64_t i = 0; i < n; ++i)
    if (id[i] < 0 || id[i] >= rows) throw_row_id_out_of_range("gather_rows", id[i], rows);
  parallel_for(n, static_cast<double>(width), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      std::copy_n(tb + id[i] * width, width, o + (map.first + i * map.stride) * width);
  });
}

void CpuBackend::scatter_add_rows_impl(const Tensor& src, const Tensor& ids, const Tensor& weights,
                                       const Tensor& out) {
  const std::int64_t n = src.matrix_rows(), width = src.matrix_cols(), rows = out.matrix_rows();
  const float* s = src.data_as<const float>();
  const std::int32_t* id = ids.data_as<const std::int32_t>();
  const float* w = weights.data_as<const float>();
  float* o = out.data_as<float>();
  for (std::int64_t i = 0; i < n; ++i)
    if (id[i] < 0 || id[i] >= rows) throw_row_id_out_of_range("scatter_add_rows", id[i], rows);
  // Rows are distinct (one expert's tokens), so chunks never write the same row.
  parallel_for(n, 2.0 * static_cast<double>(width), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      for (std::int64_t d = 0; d < width; ++d) o[id[i] * width + d] += w[i] * s[i * width + d];
  });
}

void CpuBackend::ghc_dynamic_impl(const Tensor& hn, const Tensor& w_dyn, const Tensor& scale, const Tensor& static_a,
                                  const Tensor& static_b, const Tensor& alpha, const Tensor& beta) {
  const std::int64_t tokens = hn.dim(0), n = hn.dim(1), s = hn.dim(2), m = static_b.dim(0), cols = 2 * m + n;
  // proj [T*n, 2m+n] = hn [T*n, s] x W [s, 2m+n]: one GEMM for all tokens and slots.
  std::vector<float> proj(static_cast<std::size_t>(tokens * n * cols));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(tokens * n), static_cast<blasint>(cols),
              static_cast<blasint>(s), 1.0f, hn.data_as<const float>(), static_cast<blasint>(s),
              w_dyn.data_as<const float>(), static_cast<blasint>(cols), 0.0f, proj.data(), static_cast<blasint>(cols));
  const float inv_tau = 1.0f / std::sqrt(static_cast<float>(s));
  const float* sc = scale.data_as<const float>();
  const float* a0 = static_a.data_as<const float>();
  const float* b0 = static_b.data_as<const float>();
  float* al = alpha.data_as<float>();
  float* be = beta.data_as<float>();
  parallel_for(tokens, 4.0 * static_cast<double>(n * cols), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t)
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t c = 0; c < cols; ++c) {
          const float dyn = sc[c] * std::tanh(proj[static_cast<std::size_t>((t * n + i) * cols + c)] * inv_tau);
          if (c < m + n) {
            al[(t * n + i) * (m + n) + c] = dyn + a0[i * (m + n) + c];
          } else {
            const std::int64_t j = c - (m + n);
            be[(t * m + j) * n + i] = dyn + b0[j * n + i];
          }
        }
  });
}

void CpuBackend::ghc_width_impl(const Tensor& h, const Tensor& alpha, const Tensor& x, const Tensor& carry) {
  const std::int64_t tokens = h.dim(0), n = h.dim(1), s = h.dim(2), m = alpha.dim(2) - n;
  const bool per_token = alpha.dim(0) == tokens && tokens != 1;
  const float* hs = h.data_as<const float>();
  const float* al = alpha.data_as<const float>();
  float* xs = x.data_as<float>();
  float* cs = carry.data_as<float>();
  parallel_for(tokens, 2.0 * static_cast<double>((m + n) * n * s), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const float* a = al + (per_token ? t : 0) * n * (m + n);
      for (std::int64_t j = 0; j < m + n; ++j) {
        // Output slot j of [x | carry]: sum over the n input slots.
        float* dst = j < m ? xs + (t * m + j) * s : cs + (t * n + (j - m)) * s;
        std::fill(dst, dst + s, 0.0f);
        for (std::int64_t i = 0; i < n; ++i) {
          const float coeff = a[i * (m + n) + j];
          const float* src = hs + (t * n + i) * s;
          for (std::int64_t d = 0; d < s; ++d) dst[d] += coeff * src[d];
        }
      }
    }
  });
}

void CpuBackend::ghc_depth_impl(const Tensor& z, const Tensor& beta, const Tensor& carry, const Tensor& out) {
  const std::int64_t tokens = z.dim(0), m = z.dim(1), s = z.dim(2), n = carry.dim(1);
  const bool per_token = beta.dim(0) == tokens && tokens != 1;
  const float* zs = z.data_as<const float>();
  const float* be = beta.data_as<const float>();
  const float* cs = carry.data_as<const float>();
  float* o = out.data_as<float>();
  parallel_for(tokens, 2.0 * static_cast<double>(m * n * s), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const float* b = be + (per_token ? t : 0) * m * n;
      for (std::int64_t j = 0; j < n; ++j) {
        float* dst = o + (t * n + j) * s;
        const float* keep = cs + (t * n + j) * s;
        for (std::int64_t d = 0; d < s; ++d) dst[d] = keep[d];  // out may be carry: same element, read first
        for (std::int64_t i = 0; i < m; ++i) {
          const float coeff = b[i * n + j];
          const float* src = zs + (t * m + i) * s;
          for (std::int64_t d = 0; d < s; ++d) dst[d] += coeff * src[d];
        }
      }
    }
  });
}

}  // namespace hdlab::executor::cpu
