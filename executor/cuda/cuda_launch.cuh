#pragma once
// What the small kernels' files share: the block size, the grid for n items, a block's
// sum, the grid-stride loop, and the dispatch over the tensor storage types (cuda_ops.cu,
// cuda_linear.cu, design modules' kernels).
#include <cuda_bf16.h>

#include <cstdint>

#include "cuda_check.hpp"
#include "cuda_kernels.hpp"

namespace hdlab::executor::cuda {

inline constexpr int kBlock = 256;

// Blocks for n independent items, capped; kernels stride over the rest.
inline unsigned blocks_for(std::int64_t n) {
  const std::int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 ? 65535 : b));
}

// The sum of every thread's `v` over the block (blockDim.x a power of two), through
// `partial` [blockDim.x] of shared memory: every thread gets it, and partial is free for
// the next sum.
__device__ inline float block_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();
  return total;
}

}  // namespace hdlab::executor::cuda

#define HDLAB_GRID_STRIDE(i, n) \
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

// Runs the statements with T = float or __nv_bfloat16 (the tensor types), then checks
// the launch.
#define HDLAB_DISPATCH(e, ...)          \
  do {                                  \
    if ((e) == Elem::f32) {             \
      using T = float;                  \
      __VA_ARGS__;                      \
    } else {                            \
      using T = __nv_bfloat16;          \
      __VA_ARGS__;                      \
    }                                   \
    HDLAB_CUDA_CHECK(cudaGetLastError()); \
  } while (0)
