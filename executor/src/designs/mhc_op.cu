// mHC's coefficients op on CUDA (the op: hdlab/executor/designs/mhc_op.hpp): the kernel
// and its launcher, called by the registration in mhc_op_cuda.cpp. Part of the CUDA
// module.
#include <cuda_bf16.h>

#include <cstdint>

#include "../../cuda/cuda_launch.cuh"
#include "../../cuda/cuda_scalar.cuh"
#include "mhc_coefficients.hpp"
#include "mhc_op_cuda.hpp"

namespace hdlab::executor::cuda {

namespace {

// mHC coefficients: one block per token. The sum of squares and each of the c logits
// are block reductions over the token's n*D elements; thread 0 then runs the per-token
// step shared with the CPU kernel (mhc_coefficients.hpp). Shared memory: c logits, the [n, n]
// scratch (dynamic) and the reduction's partial sums.
template <class T>
__global__ void mhc_coefficients_kernel(const T* h, const T* phi, const float* bias, const float* scale,
                                        std::int64_t iters, float eps, float* alpha, float* beta, std::int64_t n,
                                        std::int64_t D) {
  extern __shared__ float logits[];  // [c], then [n * n]
  __shared__ float partial[kBlock];
  const std::int64_t wide = n * D, c = n * n + 2 * n, t = blockIdx.x;
  const T* ht = h + t * wide;
  float sq = 0.0f;
  for (std::int64_t d = threadIdx.x; d < wide; d += blockDim.x) sq += to_float(ht[d]) * to_float(ht[d]);
  const float inv = rsqrtf(block_sum(sq, partial) / static_cast<float>(wide) + eps);
  for (std::int64_t k = 0; k < c; ++k) {
    float dot = 0.0f;
    for (std::int64_t d = threadIdx.x; d < wide; d += blockDim.x) dot += to_float(ht[d]) * to_float(phi[d * c + k]);
    const float total = block_sum(dot, partial);
    if (threadIdx.x == 0) logits[k] = total * inv;
  }
  if (threadIdx.x == 0)
    detail::mhc_token_coefficients(logits, bias, scale, n, iters, logits + c, alpha + t * n * (1 + n), beta + t * n);
}

}  // namespace

void launch_mhc_coefficients(Elem e, const void* h, const void* phi, const float* bias, const float* scale,
                             std::int64_t iters, float eps, float* alpha, float* beta, std::int64_t tokens, std::int64_t n,
                             std::int64_t D, cudaStream_t stream) {
  const std::size_t shared = static_cast<std::size_t>(2 * n * n + 2 * n) * sizeof(float);
  HDLAB_DISPATCH(e, mhc_coefficients_kernel<T><<<static_cast<unsigned>(tokens), kBlock, shared, stream>>>(
                        static_cast<const T*>(h), static_cast<const T*>(phi), bias, scale, iters, eps, alpha, beta, n,
                        D));
}

}  // namespace hdlab::executor::cuda
