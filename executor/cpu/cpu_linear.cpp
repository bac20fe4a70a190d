// The CPU backend's linear-attention ops (Gated DeltaNet, Mamba-2): the causal conv, the
// gated delta rule (gated_delta_rule.cpp's chunked form, value heads in parallel), the SSD
// scan (mamba2_ssd.cpp's chunked form, heads in parallel), the gated RMSNorm in both
// forms, and the sigmoid gate of gated attention outputs and shared experts. f32.
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "../src/activation_math.hpp"
#include "cpu_backend.hpp"
#include "hdlab/executor/gated_delta_rule.hpp"
#include "hdlab/executor/mamba2_ssd.hpp"

namespace hdlab::executor::cpu {

namespace {

bool writes_row(const std::int32_t* writes, std::int64_t r) { return writes == nullptr || writes[r] != 0; }

}  // namespace

void CpuBackend::causal_conv1d_impl(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& state,
                                    const Tensor& out, const Tensor& writes) {
  const std::int64_t rows = x.dim(0), C = x.dim(1), K = weight.dim(1);
  const float* xs = x.data_as<const float>();
  const float* w = weight.data_as<const float>();
  const float* b = bias.defined() ? bias.data_as<const float>() : nullptr;
  float* st = K > 1 ? state.data_as<float>() : nullptr;
  const std::int32_t* wr = writes.defined() ? writes.data_as<const std::int32_t>() : nullptr;
  float* o = out.data_as<float>();
  // Channels are independent: each keeps its K-1 latest written inputs in a small ring.
  parallel_for(C, 2.0 * static_cast<double>(rows * K), [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> ring(static_cast<std::size_t>(K > 1 ? K - 1 : 1));
    for (std::int64_t c = begin; c < end; ++c) {
      for (std::int64_t j = 0; j + 1 < K; ++j) ring[static_cast<std::size_t>(j)] = st[j * C + c];
      std::int64_t oldest = 0;  // ring index of the oldest input
      const float* wc = w + c * K;
      for (std::int64_t r = 0; r < rows; ++r) {
        const float xr = xs[r * C + c];
        float sum = b ? b[c] : 0.0f;
        for (std::int64_t j = 0; j + 1 < K; ++j) sum += wc[j] * ring[static_cast<std::size_t>((oldest + j) % (K - 1))];
        sum += wc[K - 1] * xr;
        o[r * C + c] = detail::silu(sum);
        if (K > 1 && writes_row(wr, r)) {  // the newest input replaces the oldest
          ring[static_cast<std::size_t>(oldest)] = xr;
          oldest = (oldest + 1) % (K - 1);
        }
      }
      for (std::int64_t j = 0; j + 1 < K; ++j) st[j * C + c] = ring[static_cast<std::size_t>((oldest + j) % (K - 1))];
    }
  });
}

void CpuBackend::gated_delta_rule_impl(const Tensor& qkv, const Tensor& ba, const Tensor& a_log,
                                       const Tensor& dt_bias, const Tensor& state, const Tensor& out,
                                       std::int64_t chunk, const Tensor& writes) {
  const std::int64_t R = qkv.dim(0), C = qkv.dim(1), hv = state.dim(0), dk = state.dim(1), dv = state.dim(2);
  const std::int64_t hk = (C - hv * dv) / (2 * dk), qk = hk * dk;
  const float* x = qkv.data_as<const float>();
  const float* gates = ba.data_as<const float>();
  const float* al = a_log.data_as<const float>();
  const float* dt = dt_bias.data_as<const float>();
  const std::int32_t* wr = writes.defined() ? writes.data_as<const std::int32_t>() : nullptr;
  std::vector<float> g(static_cast<std::size_t>(R * hv)), beta(g.size());
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t h = 0; h < hv; ++h) {
      const auto i = static_cast<std::size_t>(r * hv + h);
      detail::gdn_gates(gates[r * 2 * hv + hv + h], gates[r * 2 * hv + h], al[h], dt[h], writes_row(wr, r), g[i],
                        beta[i]);
    }
  const GdnRows rows{x, x + qk, x + 2 * qk, C, C, g.data(), beta.data()};
  const GdnShape s{R, hk, hv, dk, dv};
  // Token by token is the chunked form with chunks of one row (the same recurrence).
  const std::int64_t c = chunk > 0 ? chunk : 1;
  float* st = state.data_as<float>();
  float* o = out.data_as<float>();
  parallel_for(hv, 8.0 * static_cast<double>(R * dk * dv + R * c * (dk + dv)), [&](std::int64_t h0, std::int64_t h1) {
    gated_delta_rule_chunked_heads(rows, s, c, h0, h1, st, o);
  });
}

void CpuBackend::gated_rms_norm_impl(const Tensor& x, const Tensor& gate, const Tensor& weight, float eps,
                                     const Tensor& out, GatedNormForm form) {
  const std::int64_t rows = x.matrix_rows(), dim = x.matrix_cols(), group = form.group, groups = dim / group;
  const float* xs = x.data_as<const float>();
  const float* gs = gate.data_as<const float>();
  const float* w = weight.data_as<const float>();
  float* o = out.data_as<float>();
  parallel_for(rows * groups, 9.0 * static_cast<double>(group), [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> u(static_cast<std::size_t>(group));
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t base = (item / groups) * dim + (item % groups) * group, w0 = (item % groups) * group;
      double sq = 0;  // in double, as rms_norm
      for (std::int64_t d = 0; d < group; ++d) {
        const float v = form.gate_before_norm ? xs[base + d] * detail::silu(gs[base + d]) : xs[base + d];
        u[static_cast<std::size_t>(d)] = v;
        sq += static_cast<double>(v) * v;
      }
      const auto inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(group) + eps));
      for (std::int64_t d = 0; d < group; ++d)
        o[base + d] = u[static_cast<std::size_t>(d)] * inv * w[w0 + d] *
                      (form.gate_before_norm ? 1.0f : detail::silu(gs[base + d]));
    }
  });
}

// The chunked scan (mamba2_ssd.cpp) on x, B and C unpacked from the conv's rows, heads in
// parallel; a decode step is the chunked form with chunks of one row.
void CpuBackend::mamba2_ssd_impl(const Tensor& xbc, const Tensor& dt, const Tensor& a_log, const Tensor& dt_bias,
                                 const Tensor& d, const Tensor& state, const Tensor& y, std::int64_t chunk) {
  const std::int64_t R = xbc.dim(0), C = xbc.dim(1), H = state.dim(0), P = state.dim(1), N = state.dim(2);
  const std::int64_t I = H * P, GN = (C - I) / 2;
  const Mamba2Shape s{R, H, P, GN / N, N};
  const float* rows = xbc.data_as<const float>();
  std::vector<float> x(static_cast<std::size_t>(R * I)), B(static_cast<std::size_t>(R * GN)), Cm(B.size());
  for (std::int64_t r = 0; r < R; ++r) {
    std::copy_n(rows + r * C, I, x.begin() + r * I);
    std::copy_n(rows + r * C + I, GN, B.begin() + r * GN);
    std::copy_n(rows + r * C + I + GN, GN, Cm.begin() + r * GN);
  }
  const auto span_of = [](const Tensor& t) {
    return std::span<const float>(t.data_as<const float>(), static_cast<std::size_t>(t.numel()));
  };
  const Mamba2Params<float> p{span_of(dt_bias), span_of(a_log), span_of(d)};
  const std::span<float> st(state.data_as<float>(), static_cast<std::size_t>(state.numel()));
  const std::span<float> out(y.data_as<float>(), static_cast<std::size_t>(y.numel()));
  const std::int64_t c = chunk > 0 ? chunk : 1;
  parallel_for(H, 4.0 * static_cast<double>(R * P * N + R * c * (N + P)), [&](std::int64_t h0, std::int64_t h1) {
    mamba2_ssd_chunked_heads(x, B, Cm, span_of(dt), p, s, c, h0, h1, st, out);
  });
}

void CpuBackend::sigmoid_gate_impl(const Tensor& x, const Tensor& gate, const Tensor& out) {
  const std::int64_t rows = x.matrix_rows(), width = x.matrix_cols(), gate_cols = gate.matrix_cols();
  const float* xs = x.data_as<const float>();
  const float* gs = gate.data_as<const float>();
  float* o = out.data_as<float>();
  parallel_for(rows, 5.0 * static_cast<double>(width), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      for (std::int64_t c = 0; c < width; ++c)
        o[r * width + c] = xs[r * width + c] * detail::sigmoid(gs[r * gate_cols + (gate_cols == 1 ? 0 : c)]);
  });
}

}  // namespace hdlab::executor::cpu
