#pragma once
// Device-side conversions between the storage types the CUDA backend holds (f32, bf16;
// f16 for matrix-product operands) and the f32 every kernel computes in.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace hdlab::executor::cuda {

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline float to_float(__half x) { return __half2float(x); }
template <class T>
__device__ inline T from_float(float x);
template <>
__device__ inline float from_float<float>(float x) { return x; }
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <>
__device__ inline __half from_float<__half>(float x) { return __float2half(x); }

}  // namespace hdlab::executor::cuda
