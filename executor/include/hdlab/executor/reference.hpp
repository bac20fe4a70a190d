#pragma once
// The plain reference of every executor op: double precision, loops that read like the
// formulas in backend.hpp, the attention mask dense (model::visible on every pair).
// Both backends are tested against these; nothing here is tuned for speed.
//
// All arrays are row-major and hold the shapes named in backend.hpp.
#include <cstdint>
#include <span>
#include <vector>

#include "hdlab/executor/attention_mask.hpp"
#include "hdlab/executor/backend.hpp"
#include "hdlab/executor/gated_delta_rule.hpp"
#include "hdlab/executor/mamba2_ssd.hpp"

namespace hdlab::executor {

using Doubles = std::vector<double>;
using DoubleSpan = std::span<const double>;

// op(A) [M, K] x op(B) [K, N]; c_in [M, N] is read only when beta != 0.
Doubles gemm_reference(DoubleSpan a, bool trans_a, DoubleSpan b, bool trans_b, std::int64_t m, std::int64_t n,
                       std::int64_t k, double alpha, double beta, DoubleSpan c_in);

// q [Lq, H, hd], k [Lk, G, hd], v [Lk, G, dw] -> [Lq, H, dv]: each value the first dv of
// its v row (v_head_dim 0: dv = hd; v_row_dim 0: dw = dv); sinks [H] or empty (none).
Doubles attention_reference(DoubleSpan q, DoubleSpan k, DoubleSpan v, std::int64_t heads, std::int64_t kv_heads,
                            std::int64_t head_dim, const AttentionMask& mask, double scale, DoubleSpan sinks = {},
                            std::int64_t v_head_dim = 0, std::int64_t v_row_dim = 0);

// Backend::attention_softmax on scores [H, rows, keys]: row i is the mask's query row
// row0 + i, column j its key key0 + j; sinks [H] or empty.
Doubles attention_softmax_reference(DoubleSpan scores, std::int64_t heads, std::int64_t rows, std::int64_t keys,
                                    const AttentionMask& mask, std::int64_t row0, std::int64_t key0, double scale,
                                    DoubleSpan sinks = {});

// Backend::gemm_batched on c_in (its elements outside the C_b kept): returns all of c.
Doubles gemm_batched_reference(DoubleSpan a, StridedBatch av, bool trans_a, DoubleSpan b, StridedBatch bv, bool trans_b,
                               DoubleSpan c_in, StridedBatch cv, std::int64_t batch, std::int64_t m, std::int64_t n,
                               std::int64_t k);
// Backend::copy_strided onto dst_in: returns all of dst.
Doubles copy_strided_reference(DoubleSpan src, StridedBatch sv, DoubleSpan dst_in, StridedBatch dv,
                               std::int64_t batch, std::int64_t rows, std::int64_t cols);

// x [rows, dim], weight [dim].
Doubles rms_norm_reference(DoubleSpan x, DoubleSpan weight, std::int64_t rows, std::int64_t dim, double eps);

// x [rows, groups * group_size], weight and bias [groups * group_size].
Doubles group_norm_reference(DoubleSpan x, DoubleSpan weight, DoubleSpan bias, std::int64_t rows,
                             std::int64_t width, std::int64_t group_size, double eps);

// x [T, heads, hd], positions [T]; the first 2 inv_freq.size() dims rotate, pair (j, j + r/2)
// by positions[t] inv_freq[j], cos and sin times cos_sin_factor (Backend::rope).
Doubles rope_reference(DoubleSpan x, std::span<const std::int32_t> positions, std::int64_t heads,
                       std::int64_t head_dim, std::span<const double> inv_freq, double cos_sin_factor = 1.0);

// max(x, 0)^2 element by element.
Doubles relu2_reference(DoubleSpan x);

// gate_up [T, 2F] -> [T, F]; clamp.limit > 0: gpt-oss's clamped SwiGLU.
Doubles swiglu_reference(DoubleSpan gate_up, std::int64_t tokens, std::int64_t ffn, SwigluClamp clamp = {});

Doubles add_reference(DoubleSpan a, DoubleSpan b);

struct Routing {
  std::vector<std::int32_t> expert_ids;  // [T, k], best first
  Doubles weights;                       // [T, k]
};
// logits [T, E].
Routing topk_routing_reference(DoubleSpan logits, std::int64_t tokens, std::int64_t experts, std::int64_t k,
                               model::RouterKind score, bool normalize);

// out [*, width] is updated in place: row map.first + i*map.stride = table[ids[i]].
void gather_rows_reference(DoubleSpan table, std::int64_t width, std::span<const std::int32_t> ids, RowMap map,
                           Doubles& out);

// out [*, width] += weights[i] * src[i] at row ids[i].
void scatter_add_rows_reference(DoubleSpan src, std::int64_t width, std::span<const std::int32_t> ids,
                                DoubleSpan weights, Doubles& out);

struct GhcCoefficients {
  Doubles alpha;  // [T, n, m+n]
  Doubles beta;   // [T, m, n]
};
// hn [T, n, s], w_dyn [s, 2m+n], scale [2m+n], static_a [n, m+n], static_b [m, n].
GhcCoefficients ghc_dynamic_reference(DoubleSpan hn, std::int64_t tokens, std::int64_t n, std::int64_t s,
                                      std::int64_t m, DoubleSpan w_dyn, DoubleSpan scale, DoubleSpan static_a,
                                      DoubleSpan static_b);

struct GhcWidthOut {
  Doubles x;      // [T, m, s]
  Doubles carry;  // [T, n, s]
};
// h [T, n, s], alpha [T or 1, n, m+n] (alpha_tokens says which).
GhcWidthOut ghc_width_reference(DoubleSpan h, std::int64_t tokens, std::int64_t n, std::int64_t s, std::int64_t m,
                                DoubleSpan alpha, std::int64_t alpha_tokens);

// z [T, m, s], beta [T or 1, m, n], carry [T, n, s] -> [T, n, s].
Doubles ghc_depth_reference(DoubleSpan z, std::int64_t tokens, std::int64_t m, std::int64_t s, std::int64_t n,
                            DoubleSpan beta, std::int64_t beta_tokens, DoubleSpan carry);

// ---- linear attention (reference_linear.cpp) -------------------------------------------
// x [R, C], weight [C, K], bias [C] or empty; state [K-1, C] read and updated in place;
// writes [R] (0: the row reads the history and is not added to it) or empty: all write.
Doubles causal_conv1d_reference(DoubleSpan x, std::int64_t rows, std::int64_t channels, DoubleSpan weight,
                                std::int64_t kernel, DoubleSpan bias, Doubles& state,
                                std::span<const std::int32_t> writes = {});

// Backend::gated_delta_rule: qkv [R, 2 hk dk + hv dv], ba [R, 2 hv], a_log and dt_bias
// [hv]; state [hv, dk, dv] read and updated in place; returns out [R, hv, dv]. s.tokens = R.
Doubles gated_delta_rule_op_reference(DoubleSpan qkv, DoubleSpan ba, DoubleSpan a_log, DoubleSpan dt_bias,
                                      const GdnShape& s, Doubles& state, std::span<const std::int32_t> writes = {});

// x, gate [rows, dim], weight [dim]; groups of form.group (0: the row), gated before or
// after the norm as form says (Backend::gated_rms_norm).
Doubles gated_rms_norm_reference(DoubleSpan x, DoubleSpan gate, DoubleSpan weight, std::int64_t rows,
                                 std::int64_t dim, double eps, GatedNormForm form = {});

// Backend::mamba2_ssd: xbc [R, H P + 2 G N], dt [R, H], a_log, dt_bias, d [H]; state
// [H, P, N] read and updated in place; returns y [R, H, P]. s.tokens = R. The recurrence
// itself is mamba2_ssd_reference (mamba2_ssd.hpp).
Doubles mamba2_ssd_op_reference(DoubleSpan xbc, DoubleSpan dt, DoubleSpan a_log, DoubleSpan dt_bias, DoubleSpan d,
                                const Mamba2Shape& s, Doubles& state);

// x [rows, width], gate [rows, gate_cols] with gate_cols = width or 1.
Doubles sigmoid_gate_reference(DoubleSpan x, DoubleSpan gate, std::int64_t rows, std::int64_t width,
                               std::int64_t gate_cols);

}  // namespace hdlab::executor
