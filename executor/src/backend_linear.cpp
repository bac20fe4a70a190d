// The argument checks of the linear-attention ops (Gated DeltaNet, Mamba-2) and the
// sigmoid gate, before a backend sees them.
#include <initializer_list>

#include "backend_checks.hpp"

namespace hdlab::executor {

using namespace checks;

namespace {

// `writes`: empty, or i32 [rows] (values are the backend's to read: 0 or not).
void require_writes(const Tensor& writes, std::int64_t rows, const char* op) {
  if (!writes.defined()) return;
  require_type(writes, ScalarType::i32, op, "writes");
  require_shape(writes, {rows}, op, "writes");
}

// A recurrence's packed rows `in` [R, H w + 2 G g] for its state [H, ., .] (Gated
// DeltaNet: qkv with w = dv, g = dk, G the q/k heads; Mamba-2: xbc with w = P, g = N, G the
// B/C groups; w and g are state dims `w_dim` and `g_dim`), its per-head f32 parameters
// [H], and its stepped inputs `gates` [R, gate_cols] and output `out` [R, H, w] of `in`'s
// type, none of them overlapping. Returns G, checked to share the H heads evenly.
std::int64_t check_recurrence(const char* op, const Tensor& in, const Tensor& state, int w_dim, int g_dim,
                              const Tensor& gates, std::int64_t gate_cols, std::initializer_list<const Tensor*> params,
                              const Tensor& out, std::int64_t chunk) {
  require(state.rank() == 3 && in.rank() == 2, op, "packed rows [R, C] and a state of 3 dims expected, got " +
                                                       shape_of(in) + " and state " + shape_of(state));
  const std::int64_t rows = in.dim(0), H = state.dim(0), w = state.dim(w_dim), g = state.dim(g_dim);
  const std::int64_t rest = in.dim(1) - H * w;
  require(H > 0 && w > 0 && g > 0 && rest > 0 && rest % (2 * g) == 0, op,
          "the rows' " + std::to_string(in.dim(1)) + " columns are not heads x " + std::to_string(w) + " + 2 x " +
              "groups x " + std::to_string(g) + " for state " + shape_of(state));
  const std::int64_t G = rest / (2 * g);
  require(H % G == 0, op, std::to_string(H) + " heads cannot share " + std::to_string(G) + " groups");
  for (const Tensor* t : {&gates, &state, &out})
    require(t->type() == in.type(), op, "the gate inputs, the state and the output must have the rows' type");
  require_shape(gates, {rows, gate_cols}, op, "the gate inputs");
  for (const Tensor* t : params) {
    require_type(*t, ScalarType::f32, op, "the per-head parameters");
    require_shape(*t, {H}, op, "the per-head parameters");
  }
  require_shape(out, {rows, H, w}, op, "out");
  require(chunk >= 0, op, "chunk must be >= 0 (0: row by row)");
  require(!out.overlaps(in) && !out.overlaps(gates) && !out.overlaps(state) && !state.overlaps(in) &&
              !state.overlaps(gates),
          op, "out, state and the inputs overlap");
  return G;
}

}  // namespace

void Backend::causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& state,
                            const Tensor& out, const Tensor& writes) {
  for (const Tensor* t : {&x, &weight, &out}) check_owned(*t, "causal_conv1d");
  require_float(x, "causal_conv1d", "x");
  check_supported(BackendOp::causal_conv1d, x.type());
  require(x.rank() == 2 && weight.rank() == 2, "causal_conv1d", "x [R, C] and weight [C, K] expected, got x " +
                                                                    shape_of(x) + ", weight " + shape_of(weight));
  const std::int64_t rows = x.dim(0), C = x.dim(1), K = weight.dim(1);
  require(weight.type() == x.type() && weight.dim(0) == C && K >= 1, "causal_conv1d",
          "weight must be [C, K] of x's type with C = " + std::to_string(C) + ", is " + shape_of(weight));
  require(out.type() == x.type() && out.shape() == x.shape(), "causal_conv1d", "out must match x");
  require(!out.overlaps(x), "causal_conv1d", "out overlaps x");
  if (bias.defined()) {
    check_owned(bias, "causal_conv1d");
    require_type(bias, ScalarType::f32, "causal_conv1d", "bias");
    require_shape(bias, {C}, "causal_conv1d", "bias");
  }
  if (K > 1) {
    check_owned(state, "causal_conv1d");
    require(state.type() == x.type(), "causal_conv1d", "state must have x's type");
    require_shape(state, {K - 1, C}, "causal_conv1d", "state");
    require(!state.overlaps(x) && !state.overlaps(out), "causal_conv1d", "state overlaps x or out");
  }
  if (writes.defined()) check_owned(writes, "causal_conv1d");
  require_writes(writes, rows, "causal_conv1d");
  if (rows) causal_conv1d_impl(x, weight, bias, state, out, writes);
}

void Backend::gated_delta_rule(const Tensor& qkv, const Tensor& ba, const Tensor& a_log, const Tensor& dt_bias,
                               const Tensor& state, const Tensor& out, std::int64_t chunk, const Tensor& writes) {
  const char* op = "gated_delta_rule";
  for (const Tensor* t : {&qkv, &ba, &a_log, &dt_bias, &state, &out}) check_owned(*t, op);
  require_float(qkv, op, "qkv");
  check_supported(BackendOp::gated_delta_rule, qkv.type());
  const std::int64_t hv = state.rank() == 3 ? state.dim(0) : 0;
  (void)check_recurrence(op, qkv, state, 2, 1, ba, 2 * hv, {&a_log, &dt_bias}, out, chunk);
  if (writes.defined()) check_owned(writes, op);
  require_writes(writes, qkv.dim(0), op);
  if (qkv.dim(0)) gated_delta_rule_impl(qkv, ba, a_log, dt_bias, state, out, chunk, writes);
}

void Backend::gated_rms_norm(const Tensor& x, const Tensor& gate, const Tensor& weight, float eps, const Tensor& out,
                             GatedNormForm form) {
  for (const Tensor* t : {&x, &gate, &weight, &out}) check_owned(*t, "gated_rms_norm");
  require_float(x, "gated_rms_norm", "x");
  check_supported(BackendOp::gated_rms_norm, x.type());
  require(gate.type() == x.type() && out.type() == x.type(), "gated_rms_norm", "gate and out must have x's type");
  require(gate.matrix_rows() == x.matrix_rows() && gate.matrix_cols() == x.matrix_cols() &&
              out.shape() == x.shape(),
          "gated_rms_norm", "gate and out must be x's [R, dim], got x " + shape_of(x) + ", gate " + shape_of(gate));
  require_type(weight, ScalarType::f32, "gated_rms_norm", "weight");
  require_shape(weight, {x.matrix_cols()}, "gated_rms_norm", "weight");
  require(form.group >= 0 && (form.group == 0 || x.matrix_cols() % form.group == 0), "gated_rms_norm",
          "groups of " + std::to_string(form.group) + " channels do not divide the row's " +
              std::to_string(x.matrix_cols()));
  require((out.same_view(x) || !out.overlaps(x)) && !out.overlaps(gate), "gated_rms_norm",
          "out must be x or apart from it, and apart from gate");
  if (form.group == 0) form.group = x.matrix_cols();
  if (x.numel()) gated_rms_norm_impl(x, gate, weight, eps, out, form);
}

void Backend::sigmoid_gate(const Tensor& x, const Tensor& gate, const Tensor& out) {
  for (const Tensor* t : {&x, &gate, &out}) check_owned(*t, "sigmoid_gate");
  require_float(x, "sigmoid_gate", "x");
  check_supported(BackendOp::sigmoid_gate, x.type());
  require(gate.type() == x.type() && out.type() == x.type(), "sigmoid_gate", "gate and out must have x's type");
  require(out.shape() == x.shape(), "sigmoid_gate", "out must match x");
  require(gate.matrix_rows() == x.matrix_rows() && (gate.matrix_cols() == x.matrix_cols() || gate.matrix_cols() == 1),
          "sigmoid_gate", "gate must be [R, W] or [R, 1] for x " + shape_of(x) + ", is " + shape_of(gate));
  require((out.same_view(x) || !out.overlaps(x)) && !out.overlaps(gate), "sigmoid_gate",
          "out must be x or apart from it, and apart from gate");
  if (x.numel()) sigmoid_gate_impl(x, gate, out);
}

void Backend::mamba2_ssd(const Tensor& xbc, const Tensor& dt, const Tensor& a_log, const Tensor& dt_bias,
                         const Tensor& d, const Tensor& state, const Tensor& y, std::int64_t chunk) {
  const char* op = "mamba2_ssd";
  for (const Tensor* t : {&xbc, &dt, &a_log, &dt_bias, &d, &state, &y}) check_owned(*t, op);
  require_float(xbc, op, "xbc");
  check_supported(BackendOp::mamba2_ssd, xbc.type());
  const std::int64_t H = state.rank() == 3 ? state.dim(0) : 0;
  (void)check_recurrence(op, xbc, state, 1, 2, dt, H, {&a_log, &dt_bias, &d}, y, chunk);
  if (xbc.dim(0)) mamba2_ssd_impl(xbc, dt, a_log, dt_bias, d, state, y, chunk);
}

}  // namespace hdlab::executor
