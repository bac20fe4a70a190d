#pragma once
// mHC in the executor (the design: model/src/designs/mhc.cpp). Its one op of its own is
// the per-token coefficients of its two hyper-connections, from the n-stream state
// through a projection, sigmoids and a Sinkhorn projection onto doubly-stochastic
// matrices: a module op (module_op.hpp) whose check, reference, CPU kernel and cases are
// in executor/src/designs/mhc_op.cpp, its CUDA kernel in mhc_op.cu (registered by
// mhc_op_cuda.cpp). Its answers to the executor's design registry (weights per layer,
// the mixing of each connection) are at the end. The width and depth connections that
// use the coefficients are VWN's ghc_width / ghc_depth with m = 1.
#include <cstdint>
#include <vector>

#include "hdlab/executor/backend.hpp"
#include "hdlab/executor/op_cases.hpp"
#include "hdlab/executor/reference.hpp"
#include "hdlab/executor/weights.hpp"

namespace hdlab::executor {

// Of the n-stream state h [T, n, D]:
//   g[t] = (h[t] as one row of n*D) phi / sqrt(mean(h[t]^2) + eps)       [c = n + n + n^2]
//   alpha[t, i, 0]     = sigmoid(scale[0] g[0:n][i] + bias[0:n][i])        H_pre
//   beta[t, 0, j]      = 2 sigmoid(scale[1] g[n:2n][j] + bias[n:2n][j])    H_post
//   alpha[t, i, 1 + j] = H_res[j, i],  H_res = Sinkhorn_iters(exp(scale[2] g[2n:] + bias[2n:]))
// (H_res row-major [n, n]; each iteration divides rows, then columns, by their sums):
// the width/depth coefficients of ghc_width / ghc_depth with m = 1. phi [n*D, c] in h's
// type, bias [c], scale [3], alpha [T, n, 1+n], beta [T, 1, n] f32; iterations >= 1.
// The call's tensors: h, phi, bias, scale, alpha, beta; its scalars: iterations, eps.
inline constexpr const char* kMhcCoefficientsOp = "mhc_dynamic";  // the op's name (and CUDA kernel's key)
const ModuleOp& mhc_coefficients_op();
void mhc_coefficients(Backend& backend, const Tensor& h, const Tensor& phi, const Tensor& bias, const Tensor& scale,
                      std::int64_t sinkhorn_iters, float eps, const Tensor& alpha, const Tensor& beta);

// The op in double precision: alpha [T, n, 1+n] (H_pre, H_res^T), beta [T, 1, n] (H_post).
GhcCoefficients mhc_coefficients_reference(DoubleSpan h, std::int64_t tokens, std::int64_t n, std::int64_t D,
                                           DoubleSpan phi, DoubleSpan bias, DoubleSpan scale,
                                           std::int64_t sinkhorn_iters, double eps);

// A case of the op (random h, phi, bias and scale from the seed), costed as the layer
// program costs one of mHC's connections.
OpCase mhc_coefficients_case(std::int64_t tokens, std::int64_t n, std::int64_t D, std::int64_t iters,
                             ScalarType type, std::uint64_t seed);
// The cases the correctness table runs (op_cases_table.cpp).
std::vector<OpCase> mhc_op_cases(ScalarType type);

namespace designs {
// Each layer's two hyper-connections ("attn." and "ffn." after `prefix`): phi [n*D, c]
// ([in, out]: pre | post | res columns, res row-major), biases [c] and scales (pre,
// post, res), c = n^2 + 2n.
void add_layer_weights(const model::MhcDesign& d, const model::Backbone& b, const std::string& prefix,
                       std::vector<WeightSpec>& out);
// The coefficients of one connection: mhc_coefficients on its weights.
void mixing(const model::MhcDesign& d, Backend& backend, const DesignTensors& layer, bool attention, const Tensor& h,
            float eps, const Tensor& alpha, const Tensor& beta);
}  // namespace designs

}  // namespace hdlab::executor
