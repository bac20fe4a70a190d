#pragma once
// The launcher of mHC's coefficients kernel (mhc_op.cu), with plain arguments, for its
// registration (mhc_op_cuda.cpp): h [tokens, n, D], phi [n*D, n^2+2n] of e; bias
// [n^2+2n], scale [3], alpha [tokens, n, 1+n], beta [tokens, 1, n] f32; tokens >= 1.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "../../cuda/cuda_kernels.hpp"

namespace hdlab::executor::cuda {

void launch_mhc_coefficients(Elem e, const void* h, const void* phi, const float* bias, const float* scale,
                             std::int64_t iters, float eps, float* alpha, float* beta, std::int64_t tokens,
                             std::int64_t n, std::int64_t D, cudaStream_t stream);

}  // namespace hdlab::executor::cuda
