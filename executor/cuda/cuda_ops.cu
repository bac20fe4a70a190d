// The CUDA backend's small kernels: conversions, norms, RoPE, SwiGLU, adds, routing,
// gathers/scatters, the VWN GHC ops, and the fill and check of matrix-product operands.
// Storage f32 or bf16 (f16 for those operands), arithmetic f32. They are written to be
// obviously right (one thread per output element or row, grid-stride loops); none of them
// is where a layer's time goes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "../src/activation_math.hpp"
#include "cuda_check.hpp"
#include "cuda_kernels.hpp"
#include "cuda_launch.cuh"
#include "cuda_scalar.cuh"

namespace hdlab::executor::cuda {

namespace {

template <class From, class To>
__global__ void convert_kernel(const From* src, To* dst, std::int64_t n) {
  HDLAB_GRID_STRIDE(i, n) dst[i] = from_float<To>(to_float(src[i]));
}

// One thread per element of the batch x rows x cols blocks.
template <class T>
__global__ void copy_strided_kernel(const T* src, StridedLaunch s, T* dst, StridedLaunch d, std::int64_t rows,
                                    std::int64_t cols, std::int64_t n) {
  HDLAB_GRID_STRIDE(i, n) {
    const std::int64_t c = i % cols, r = (i / cols) % rows, b = i / (cols * rows);
    dst[d.offset + b * d.batch_stride + r * d.row_stride + c] = src[s.offset + b * s.batch_stride + r * s.row_stride + c];
  }
}

// One block per row: sum of squares reduced in shared memory.
template <class T>
__global__ void rms_norm_kernel(const T* x, const float* w, T* out, std::int64_t dim, float eps) {
  __shared__ float partial[kBlock];
  const T* xr = x + blockIdx.x * dim;
  float sq = 0.0f;
  for (std::int64_t d = threadIdx.x; d < dim; d += blockDim.x) sq += to_float(xr[d]) * to_float(xr[d]);
  const float inv = rsqrtf(block_sum(sq, partial) / static_cast<float>(dim) + eps);
  for (std::int64_t d = threadIdx.x; d < dim; d += blockDim.x)
    out[blockIdx.x * dim + d] = from_float<T>(to_float(xr[d]) * inv * w[d]);
}

// One block per (row, group): mean, then variance about it (two passes, f32).
template <class T>
__global__ void group_norm_kernel(const T* x, std::int64_t group_size, const float* w, const float* b, T* out,
                                  std::int64_t width, float eps) {
  __shared__ float partial[kBlock];
  const std::int64_t groups = width / group_size;
  const std::int64_t base = (blockIdx.x / groups) * width + (blockIdx.x % groups) * group_size;
  const std::int64_t g0 = (blockIdx.x % groups) * group_size;
  float s = 0.0f;
  for (std::int64_t i = threadIdx.x; i < group_size; i += blockDim.x) s += to_float(x[base + i]);
  const float mean = block_sum(s, partial) / static_cast<float>(group_size);
  float sq = 0.0f;
  for (std::int64_t i = threadIdx.x; i < group_size; i += blockDim.x) {
    const float dev = to_float(x[base + i]) - mean;
    sq += dev * dev;
  }
  const float inv = rsqrtf(block_sum(sq, partial) / static_cast<float>(group_size) + eps);
  for (std::int64_t i = threadIdx.x; i < group_size; i += blockDim.x)
    out[base + i] = from_float<T>((to_float(x[base + i]) - mean) * inv * w[g0 + i] + b[g0 + i]);
}

struct RopeFreqs {
  double inv_freq[kMaxRopeHalfDim];
  float factor;  // on cos and sin
};

// One thread per (token, head, pair j) of the rotated dims; angles in double, reduced to
// [-pi, pi] first. Dims rotary..hd-1 are not touched.
template <class T>
__global__ void rope_kernel(T* x, const std::int32_t* pos, std::int64_t tokens, std::int64_t heads,
                            std::int64_t hd, std::int64_t rotary, RopeFreqs f) {
  const std::int64_t half = rotary / 2;
  HDLAB_GRID_STRIDE(i, tokens * heads * half) {
    const std::int64_t j = i % half, th = i / half, t = th / heads;
    const double angle = static_cast<double>(pos[t]) * f.inv_freq[j];
    const double two_pi = 6.283185307179586;
    const float reduced = static_cast<float>(angle - two_pi * rint(angle / two_pi));
    float s, c;
    sincosf(reduced, &s, &c);
    c *= f.factor;
    s *= f.factor;
    T* row = x + th * hd;
    const float x1 = to_float(row[j]), x2 = to_float(row[j + half]);
    row[j] = from_float<T>(x1 * c - x2 * s);
    row[j + half] = from_float<T>(x2 * c + x1 * s);
  }
}

template <class T>
__global__ void relu2_kernel(const T* x, T* out, std::int64_t n) {
  HDLAB_GRID_STRIDE(i, n) out[i] = from_float<T>(detail::relu2(to_float(x[i])));
}

template <class T>
__global__ void swiglu_kernel(const T* gu, T* out, std::int64_t tokens, std::int64_t ffn, float limit, float alpha) {
  HDLAB_GRID_STRIDE(i, tokens * ffn) {
    const std::int64_t t = i / ffn, f = i % ffn;
    const float g = to_float(gu[t * 2 * ffn + f]), u = to_float(gu[t * 2 * ffn + ffn + f]);
    out[i] = from_float<T>(detail::swiglu_element(g, u, limit, alpha));
  }
}

template <class T>
__global__ void add_kernel(const T* a, const T* b, T* out, std::int64_t n) {
  HDLAB_GRID_STRIDE(i, n) out[i] = from_float<T>(to_float(a[i]) + to_float(b[i]));
}

// One thread per token: scores, then k passes of arg-max (strict >: lower id on ties).
// A NaN score is never picked (NaN > x is false), as on the CPU; a token left with fewer
// than k experts whose score is a number reports itself in *fault.
template <class T>
__global__ void topk_kernel(const T* logits, std::int64_t tokens, std::int64_t experts, std::int64_t k, bool sigmoid,
                            bool normalize, std::int32_t* ids, float* weights, unsigned* fault) {
  HDLAB_GRID_STRIDE(t, tokens) {
    const T* row = logits + t * experts;
    float mx = -INFINITY, denom = 0.0f;
    if (!sigmoid) {
      // fmaxf skips a NaN logit, but the sum takes it in: every score becomes NaN, as
      // the CPU's softmax makes them.
      for (std::int64_t e = 0; e < experts; ++e) mx = fmaxf(mx, to_float(row[e]));
      for (std::int64_t e = 0; e < experts; ++e) denom += expf(to_float(row[e]) - mx);
    }
    std::uint32_t taken[kMaxRoutedExperts / 32] = {};
    float kept = 0.0f;
    for (std::int64_t j = 0; j < k; ++j) {
      std::int64_t best = -1;
      float best_p = -1.0f;
      for (std::int64_t e = 0; e < experts; ++e) {
        if (taken[e / 32] >> (e % 32) & 1u) continue;
        const float x = to_float(row[e]);
        const float p = sigmoid ? 1.0f / (1.0f + expf(-x)) : expf(x - mx) / denom;
        if (p > best_p) {
          best_p = p;
          best = e;
        }
      }
      if (best < 0) {  // only NaN scores left: the CPU backend throws for this token
        atomicMin(fault, static_cast<unsigned>(t));
        break;
      }
      taken[best / 32] |= 1u << (best % 32);
      ids[t * k + j] = static_cast<std::int32_t>(best);
      weights[t * k + j] = best_p;
      kept += best_p;
    }
    if (normalize)
      for (std::int64_t j = 0; j < k; ++j) weights[t * k + j] /= kept;
  }
}

template <class T>
__global__ void gather_kernel(const T* table, std::int64_t table_rows, std::int64_t width, const std::int32_t* ids,
                              std::int64_t n, T* out, std::int64_t first, std::int64_t stride, unsigned* fault) {
  HDLAB_GRID_STRIDE(i, n * width) {
    const std::int64_t r = i / width, d = i % width;
    const std::int32_t id = ids[r];
    if (id < 0 || id >= table_rows) {  // reported, as the CPU backend throws
      if (d == 0) atomicMin(fault, static_cast<unsigned>(r));
      continue;
    }
    out[(first + r * stride) * width + d] = table[id * width + d];
  }
}

template <class T>
__global__ void scatter_add_kernel(const T* src, const std::int32_t* ids, const float* w, std::int64_t n,
                                   std::int64_t width, T* out, std::int64_t out_rows, unsigned* fault) {
  HDLAB_GRID_STRIDE(i, n * width) {
    const std::int64_t r = i / width, d = i % width;
    const std::int32_t id = ids[r];  // distinct within a call: no two threads share an output
    if (id < 0 || id >= out_rows) {
      if (d == 0) atomicMin(fault, static_cast<unsigned>(r));
      continue;
    }
    T* dst = out + id * width + d;
    *dst = from_float<T>(to_float(*dst) + w[r] * to_float(src[i]));
  }
}

template <class T>
__global__ void fill_kernel(T* dst, std::int64_t n, float value) {
  HDLAB_GRID_STRIDE(i, n) dst[i] = from_float<T>(value);
}

template <class T>
__global__ void count_mismatches_kernel(const T* x, std::int64_t n, float value, unsigned long long* mismatches) {
  const float want = to_float(from_float<T>(value));
  unsigned long long bad = 0;
  HDLAB_GRID_STRIDE(i, n) bad += to_float(x[i]) != want;
  if (bad) atomicAdd(mismatches, bad);
}

// One thread per (token, slot i, column c) of [alpha | beta^T].
template <class T>
__global__ void ghc_dynamic_kernel(const T* hn, const T* w, const float* scale, const float* a0, const float* b0,
                                   float* alpha, float* beta, std::int64_t tokens, std::int64_t n, std::int64_t s,
                                   std::int64_t m) {
  const std::int64_t cols = 2 * m + n;
  const float inv_tau = rsqrtf(static_cast<float>(s));
  HDLAB_GRID_STRIDE(idx, tokens * n * cols) {
    const std::int64_t c = idx % cols, ti = idx / cols, i = ti % n, t = ti / n;
    float proj = 0.0f;
    for (std::int64_t d = 0; d < s; ++d) proj += to_float(hn[ti * s + d]) * to_float(w[d * cols + c]);
    const float dyn = scale[c] * tanhf(proj * inv_tau);
    if (c < m + n) {
      alpha[ti * (m + n) + c] = dyn + a0[i * (m + n) + c];
    } else {
      const std::int64_t j = c - (m + n);
      beta[(t * m + j) * n + i] = dyn + b0[j * n + i];
    }
  }
}

// One thread per output element of [x | carry]: slot j < m goes to x, the rest to carry.
template <class T>
__global__ void ghc_width_kernel(const T* h, const float* alpha, bool per_token, T* x, T* carry, std::int64_t tokens,
                                 std::int64_t n, std::int64_t s, std::int64_t m) {
  HDLAB_GRID_STRIDE(idx, tokens * (m + n) * s) {
    const std::int64_t d = idx % s, tj = idx / s, j = tj % (m + n), t = tj / (m + n);
    const float* a = alpha + (per_token ? t : 0) * n * (m + n);
    float acc = 0.0f;
    for (std::int64_t i = 0; i < n; ++i) acc += a[i * (m + n) + j] * to_float(h[(t * n + i) * s + d]);
    if (j < m)
      x[(t * m + j) * s + d] = from_float<T>(acc);
    else
      carry[(t * n + (j - m)) * s + d] = from_float<T>(acc);
  }
}

template <class T>
__global__ void ghc_depth_kernel(const T* z, const float* beta, bool per_token, const T* carry, T* out,
                                 std::int64_t tokens, std::int64_t m, std::int64_t s, std::int64_t n) {
  HDLAB_GRID_STRIDE(idx, tokens * n * s) {
    const std::int64_t d = idx % s, tj = idx / s, j = tj % n, t = tj / n;
    const float* b = beta + (per_token ? t : 0) * m * n;
    float acc = to_float(carry[idx]);  // out may be carry: each thread reads its element first
    for (std::int64_t i = 0; i < m; ++i) acc += b[i * n + j] * to_float(z[(t * m + i) * s + d]);
    out[idx] = from_float<T>(acc);
  }
}

}  // namespace

void launch_copy_strided(Elem e, const void* src, StridedLaunch s, void* dst, StridedLaunch d, std::int64_t batch,
                         std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  const std::int64_t n = batch * rows * cols;
  HDLAB_DISPATCH(e, copy_strided_kernel<T><<<blocks_for(n), kBlock, 0, stream>>>(static_cast<const T*>(src), s,
                                                                                 static_cast<T*>(dst), d, rows, cols, n));
}

void launch_convert(Elem from, const void* src, Elem to, void* dst, std::int64_t n, cudaStream_t stream) {
  const unsigned grid = blocks_for(n);
  if (from == Elem::f32 && to == Elem::bf16)
    convert_kernel<<<grid, kBlock, 0, stream>>>(static_cast<const float*>(src), static_cast<__nv_bfloat16*>(dst), n);
  else if (from == Elem::bf16 && to == Elem::f32)
    convert_kernel<<<grid, kBlock, 0, stream>>>(static_cast<const __nv_bfloat16*>(src), static_cast<float*>(dst), n);
  else if (from == Elem::f32)
    convert_kernel<<<grid, kBlock, 0, stream>>>(static_cast<const float*>(src), static_cast<float*>(dst), n);
  else
    convert_kernel<<<grid, kBlock, 0, stream>>>(static_cast<const __nv_bfloat16*>(src),
                                                static_cast<__nv_bfloat16*>(dst), n);
  HDLAB_CUDA_CHECK(cudaGetLastError());
}

void launch_rms_norm(Elem e, const void* x, const float* weight, void* out, std::int64_t rows, std::int64_t dim,
                     float eps, cudaStream_t stream) {
  HDLAB_DISPATCH(e, rms_norm_kernel<T><<<static_cast<unsigned>(rows), kBlock, 0, stream>>>(static_cast<const T*>(x), weight,
                                                                           static_cast<T*>(out), dim, eps));
}

void launch_group_norm(Elem e, const void* x, std::int64_t group_size, const float* weight, const float* bias,
                       void* out, std::int64_t rows, std::int64_t width, float eps, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(rows * (width / group_size));
  HDLAB_DISPATCH(e, group_norm_kernel<T><<<blocks, kBlock, 0, stream>>>(static_cast<const T*>(x), group_size, weight,
                                                                         bias, static_cast<T*>(out), width, eps));
}

void launch_rope(Elem e, void* x, const std::int32_t* positions, std::int64_t tokens, std::int64_t heads,
                 std::int64_t head_dim, std::int64_t rotary_dim, const double* inv_freq_host, float cos_sin_factor,
                 cudaStream_t stream) {
  RopeFreqs f{};
  for (std::int64_t j = 0; j < rotary_dim / 2; ++j) f.inv_freq[j] = inv_freq_host[j];
  f.factor = cos_sin_factor;
  HDLAB_DISPATCH(e, rope_kernel<T><<<blocks_for(tokens * heads * rotary_dim / 2), kBlock, 0, stream>>>(
                        static_cast<T*>(x), positions, tokens, heads, head_dim, rotary_dim, f));
}

void launch_relu2(Elem e, const void* x, void* out, std::int64_t n, cudaStream_t stream) {
  HDLAB_DISPATCH(e, relu2_kernel<T><<<blocks_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x),
                                                                         static_cast<T*>(out), n));
}

void launch_swiglu(Elem e, const void* gate_up, void* out, std::int64_t tokens, std::int64_t ffn, float limit,
                   float alpha, cudaStream_t stream) {
  HDLAB_DISPATCH(e, swiglu_kernel<T><<<blocks_for(tokens * ffn), kBlock, 0, stream>>>(
                        static_cast<const T*>(gate_up), static_cast<T*>(out), tokens, ffn, limit, alpha));
}

void launch_add(Elem e, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t stream) {
  HDLAB_DISPATCH(e, add_kernel<T><<<blocks_for(n), kBlock, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                         static_cast<T*>(out), n));
}

void launch_topk_routing(Elem e, const void* logits, std::int64_t tokens, std::int64_t experts, std::int64_t k,
                         bool sigmoid, bool normalize, std::int32_t* ids, float* weights, unsigned* fault,
                         cudaStream_t stream) {
  HDLAB_DISPATCH(e, topk_kernel<T><<<blocks_for(tokens), kBlock, 0, stream>>>(
                        static_cast<const T*>(logits), tokens, experts, k, sigmoid, normalize, ids, weights, fault));
}

void launch_gather_rows(Elem e, const void* table, std::int64_t table_rows, std::int64_t width,
                        const std::int32_t* ids, std::int64_t n, void* out, std::int64_t first, std::int64_t stride,
                        unsigned* fault, cudaStream_t stream) {
  HDLAB_DISPATCH(e, gather_kernel<T><<<blocks_for(n * width), kBlock, 0, stream>>>(
                        static_cast<const T*>(table), table_rows, width, ids, n, static_cast<T*>(out), first, stride,
                        fault));
}

void launch_scatter_add_rows(Elem e, const void* src, const std::int32_t* ids, const float* weights, std::int64_t n,
                             std::int64_t width, void* out, std::int64_t out_rows, unsigned* fault,
                             cudaStream_t stream) {
  HDLAB_DISPATCH(e, scatter_add_kernel<T><<<blocks_for(n * width), kBlock, 0, stream>>>(
                        static_cast<const T*>(src), ids, weights, n, width, static_cast<T*>(out), out_rows, fault));
}

void launch_ghc_dynamic(Elem e, const void* hn, const void* w_dyn, const float* scale, const float* static_a,
                        const float* static_b, float* alpha, float* beta, std::int64_t tokens, std::int64_t n,
                        std::int64_t s, std::int64_t m, cudaStream_t stream) {
  HDLAB_DISPATCH(e, ghc_dynamic_kernel<T><<<blocks_for(tokens * n * (2 * m + n)), kBlock, 0, stream>>>(
        static_cast<const T*>(hn), static_cast<const T*>(w_dyn), scale, static_a, static_b, alpha, beta, tokens, n, s,
        m));
}

void launch_ghc_width(Elem e, const void* h, const float* alpha, bool alpha_per_token, void* x, void* carry,
                      std::int64_t tokens, std::int64_t n, std::int64_t s, std::int64_t m, cudaStream_t stream) {
  HDLAB_DISPATCH(e, ghc_width_kernel<T><<<blocks_for(tokens * (m + n) * s), kBlock, 0, stream>>>(
        static_cast<const T*>(h), alpha, alpha_per_token, static_cast<T*>(x), static_cast<T*>(carry), tokens, n, s, m));
}

void launch_ghc_depth(Elem e, const void* z, const float* beta, bool beta_per_token, const void* carry, void* out,
                      std::int64_t tokens, std::int64_t m, std::int64_t s, std::int64_t n, cudaStream_t stream) {
  HDLAB_DISPATCH(e, ghc_depth_kernel<T><<<blocks_for(tokens * n * s), kBlock, 0, stream>>>(
        static_cast<const T*>(z), beta, beta_per_token, static_cast<const T*>(carry), static_cast<T*>(out), tokens, m,
        s, n));
}

// Runs the statements with T = the storage type of any Elem (f16 included), then checks
// the launch.
#define HDLAB_DISPATCH_ANY(e, ...)       \
  do {                                   \
    if ((e) == Elem::f16) {              \
      using T = __half;                  \
      __VA_ARGS__;                       \
      HDLAB_CUDA_CHECK(cudaGetLastError()); \
    } else {                             \
      HDLAB_DISPATCH(e, __VA_ARGS__);    \
    }                                    \
  } while (0)

void launch_fill(Elem e, void* dst, std::int64_t n, float value, cudaStream_t stream) {
  HDLAB_DISPATCH_ANY(e, fill_kernel<T><<<blocks_for(n), kBlock, 0, stream>>>(static_cast<T*>(dst), n, value));
}

void launch_count_mismatches(Elem e, const void* x, std::int64_t n, float value, unsigned long long* mismatches,
                             cudaStream_t stream) {
  HDLAB_DISPATCH_ANY(e, count_mismatches_kernel<T><<<blocks_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), n,
                                                                                         value, mismatches));
}

}  // namespace hdlab::executor::cuda
