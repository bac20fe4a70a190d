#pragma once
// Element-wise formulas shared by the double references, the CPU backend and the CUDA
// kernels (one formula in one place): Gated DeltaNet's gates, Mamba-2's step and decay,
// gpt-oss's clamped SwiGLU, the squared ReLU, and the sigmoid they are built on. T is
// float (backends) or double (references).
#include <cmath>

#ifdef __CUDACC__
#define HDLAB_ACT_HOST_DEVICE __host__ __device__
#else
#define HDLAB_ACT_HOST_DEVICE
#endif

namespace hdlab::executor::detail {

// exp and log1p in the argument's precision, on the host and the device alike.
HDLAB_ACT_HOST_DEVICE inline float act_exp(float x) { return expf(x); }
HDLAB_ACT_HOST_DEVICE inline double act_exp(double x) { return ::exp(x); }
HDLAB_ACT_HOST_DEVICE inline float act_log1p(float x) { return log1pf(x); }
HDLAB_ACT_HOST_DEVICE inline double act_log1p(double x) { return ::log1p(x); }

template <class T>
HDLAB_ACT_HOST_DEVICE inline T sigmoid(T x) {
  return T(1) / (T(1) + act_exp(-x));
}

// SiLU(x) = x sigmoid(x).
template <class T>
HDLAB_ACT_HOST_DEVICE inline T silu(T x) {
  return x * sigmoid(x);
}

// softplus(x) = log(1 + exp(x)), written so that large x neither overflows nor loses
// digits (for x > 20, exp(-x) is below the last digit of x in float and double alike).
template <class T>
HDLAB_ACT_HOST_DEVICE inline T softplus(T x) {
  return x > T(20) ? x : act_log1p(act_exp(x));
}

// Gated DeltaNet's per-row, per-value-head gates from the projected a and b: the log
// decay g = -exp(A_log) softplus(a + dt_bias) (<= 0) and the write strength
// beta = sigmoid(b). A row that does not write the state gets g = 0 and beta = 0: the
// recurrence then leaves the state as it was (exp(0) S + 0) and the row only reads it.
template <class T>
HDLAB_ACT_HOST_DEVICE inline void gdn_gates(T a, T b, T a_log, T dt_bias, bool writes, T& g, T& beta) {
  g = writes ? -act_exp(a_log) * softplus(a + dt_bias) : T(0);
  beta = writes ? sigmoid(b) : T(0);
}

// Mamba-2's per-row, per-head discretisation of the raw step dt: step = softplus(dt +
// dt_bias) and the state's decay exp(-exp(A_log) step) (in (0, 1]).
template <class T>
HDLAB_ACT_HOST_DEVICE inline void mamba2_step(T dt, T dt_bias, T a_log, T& step, T& decay) {
  step = softplus(dt + dt_bias);
  decay = act_exp(-act_exp(a_log) * step);
}

// Nemotron-H's squared ReLU.
template <class T>
HDLAB_ACT_HOST_DEVICE inline T relu2(T x) {
  return x > T(0) ? x * x : T(0);
}

// One element of a SwiGLU: silu(gate) * up, or with limit > 0 gpt-oss's clamped form
// (transformers' GptOssExperts): the gate is clipped from above at limit and up to
// [-limit, limit]; the output is (up + 1) * gate * sigmoid(alpha * gate).
template <class T>
HDLAB_ACT_HOST_DEVICE inline T swiglu_element(T gate, T up, T limit, T alpha) {
  if (!(limit > T(0))) return silu(gate) * up;
  const T g = gate < limit ? gate : limit;
  const T u = up < -limit ? -limit : (up > limit ? limit : up);
  return (u + T(1)) * g * sigmoid(alpha * g);
}

}  // namespace hdlab::executor::detail
