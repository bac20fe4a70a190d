// Double references of the linear-attention ops (Backend::causal_conv1d,
// gated_delta_rule, gated_rms_norm, mamba2_ssd, sigmoid_gate): loops that read like
// backend.hpp's formulas. The recurrences themselves are gated_delta_rule_reference
// (gated_delta_rule.cpp) and mamba2_ssd_reference (mamba2_ssd.cpp).
#include <cmath>
#include <deque>
#include <stdexcept>
#include <string>

#include "activation_math.hpp"
#include "hdlab/executor/reference.hpp"

namespace hdlab::executor {

namespace {

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

bool row_writes(std::span<const std::int32_t> writes, std::int64_t r) { return writes.empty() || writes[at(r)] != 0; }

}  // namespace

Doubles causal_conv1d_reference(DoubleSpan x, std::int64_t rows, std::int64_t channels, DoubleSpan weight,
                                std::int64_t kernel, DoubleSpan bias, Doubles& state,
                                std::span<const std::int32_t> writes) {
  if (x.size() != at(rows * channels) || weight.size() != at(channels * kernel) ||
      state.size() != at((kernel - 1) * channels))
    throw std::invalid_argument("causal_conv1d_reference: sizes do not match the shape");
  Doubles out(x.size());
  // The history as a queue of input rows, oldest first: the state's, then each written row.
  std::deque<Doubles> history;
  for (std::int64_t j = 0; j < kernel - 1; ++j)
    history.emplace_back(state.begin() + j * channels, state.begin() + (j + 1) * channels);
  for (std::int64_t r = 0; r < rows; ++r) {
    const Doubles row(x.begin() + r * channels, x.begin() + (r + 1) * channels);
    for (std::int64_t c = 0; c < channels; ++c) {
      double sum = bias.empty() ? 0.0 : bias[at(c)];
      for (std::int64_t j = 0; j < kernel - 1; ++j) sum += weight[at(c * kernel + j)] * history[at(j)][at(c)];
      sum += weight[at(c * kernel + kernel - 1)] * row[at(c)];
      out[at(r * channels + c)] = detail::silu(sum);
    }
    if (row_writes(writes, r) && kernel > 1) {
      history.pop_front();
      history.push_back(row);
    }
  }
  for (std::int64_t j = 0; j < kernel - 1; ++j)
    std::copy(history[at(j)].begin(), history[at(j)].end(), state.begin() + j * channels);
  return out;
}

Doubles gated_delta_rule_op_reference(DoubleSpan qkv, DoubleSpan ba, DoubleSpan a_log, DoubleSpan dt_bias,
                                      const GdnShape& s, Doubles& state, std::span<const std::int32_t> writes) {
  const std::int64_t R = s.tokens, qk = s.hk * s.dk, C = 2 * qk + s.hv * s.dv;
  if (qkv.size() != at(R * C) || ba.size() != at(R * 2 * s.hv) || a_log.size() != at(s.hv) ||
      dt_bias.size() != at(s.hv))
    throw std::invalid_argument("gated_delta_rule_op_reference: sizes do not match the shape");
  // Split the packed rows into q [R, hk, dk], k, v [R, hv, dv] and the gates [R, hv].
  Doubles q, k, v, g(at(R * s.hv)), beta(at(R * s.hv));
  for (std::int64_t r = 0; r < R; ++r) {
    const double* row = qkv.data() + r * C;
    q.insert(q.end(), row, row + qk);
    k.insert(k.end(), row + qk, row + 2 * qk);
    v.insert(v.end(), row + 2 * qk, row + C);
    for (std::int64_t h = 0; h < s.hv; ++h) {
      const double b = ba[at(r * 2 * s.hv + h)], a = ba[at(r * 2 * s.hv + s.hv + h)];
      detail::gdn_gates<double>(a, b, a_log[at(h)], dt_bias[at(h)], row_writes(writes, r), g[at(r * s.hv + h)],
                                beta[at(r * s.hv + h)]);
    }
  }
  Doubles out(at(R * s.hv * s.dv));
  gated_delta_rule_reference(q, k, v, g, beta, s, state, out);
  return out;
}

Doubles gated_rms_norm_reference(DoubleSpan x, DoubleSpan gate, DoubleSpan weight, std::int64_t rows,
                                 std::int64_t dim, double eps, GatedNormForm form) {
  const std::int64_t group = form.group > 0 ? form.group : dim;
  Doubles u(x.begin(), x.end()), out(at(rows * dim));
  if (form.gate_before_norm)
    for (std::size_t i = 0; i < u.size(); ++i) u[i] *= detail::silu(gate[i]);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t g0 = 0; g0 < dim; g0 += group) {
      double sq = 0;
      for (std::int64_t d = g0; d < g0 + group; ++d) sq += u[at(r * dim + d)] * u[at(r * dim + d)];
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(group) + eps);
      for (std::int64_t d = g0; d < g0 + group; ++d) {
        const std::size_t i = at(r * dim + d);
        out[i] = u[i] * inv * weight[at(d)] * (form.gate_before_norm ? 1.0 : detail::silu(gate[i]));
      }
    }
  return out;
}

Doubles mamba2_ssd_op_reference(DoubleSpan xbc, DoubleSpan dt, DoubleSpan a_log, DoubleSpan dt_bias, DoubleSpan d,
                                const Mamba2Shape& s, Doubles& state) {
  const std::int64_t R = s.tokens, I = s.heads * s.head_dim, GN = s.groups * s.state, C = I + 2 * GN;
  if (xbc.size() != at(R * C) || dt.size() != at(R * s.heads))
    throw std::invalid_argument("mamba2_ssd_op_reference: sizes do not match the shape");
  // Split the packed rows into x [R, H, P], B and C [R, G, N].
  Doubles x, B, Cm;
  for (std::int64_t r = 0; r < R; ++r) {
    const double* row = xbc.data() + r * C;
    x.insert(x.end(), row, row + I);
    B.insert(B.end(), row + I, row + I + GN);
    Cm.insert(Cm.end(), row + I + GN, row + C);
  }
  Doubles y(x.size());
  mamba2_ssd_reference(x, B, Cm, dt, Mamba2Params<double>{dt_bias, a_log, d}, s, state, y);
  return y;
}

Doubles sigmoid_gate_reference(DoubleSpan x, DoubleSpan gate, std::int64_t rows, std::int64_t width,
                               std::int64_t gate_cols) {
  Doubles out(at(rows * width));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < width; ++c)
      out[at(r * width + c)] =
          x[at(r * width + c)] * detail::sigmoid(gate[at(r * gate_cols + (gate_cols == 1 ? 0 : c))]);
  return out;
}

}  // namespace hdlab::executor
