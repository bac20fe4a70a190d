#pragma once
// What the small kernels' files share: the block size, the grid for n items, the
// grid-stride loop, and the dispatch over the tensor storage types (cuda_ops.cu,
// cuda_linear.cu).
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
