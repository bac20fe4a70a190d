// The CUDA backend's linear-attention kernels (Gated DeltaNet and Mamba-2; Backend's
// causal_conv1d, gated_delta_rule, gated_rms_norm, mamba2_ssd) and the sigmoid gate.
// Storage f32 or bf16, arithmetic f32, the element-wise formulas shared with the CPU and
// the references (src/activation_math.hpp). Written to be obviously right rather than fast:
//  - the conv: one thread per channel walking the rows in order with its last K-1 inputs;
//  - the gated delta rule: the recurrent form for prefill and decode alike (the chunked
//    form gives the same numbers up to rounding), one block per value head, one thread per
//    column j of the state S [dk, dv], which it keeps in f32 for the whole call and writes
//    back (in the cache's type) at the end;
//  - the SSD scan likewise recurrent, one block per head, its state in shared memory.
#include <cuda_bf16.h>

#include <cstdint>

#include "../src/activation_math.hpp"
#include "cuda_check.hpp"
#include "cuda_kernels.hpp"
#include "cuda_launch.cuh"
#include "cuda_scalar.cuh"

namespace hdlab::executor::cuda {

namespace {

__device__ bool writes_row(const std::int32_t* writes, std::int64_t r) { return writes == nullptr || writes[r] != 0; }

template <class T>
__global__ void causal_conv1d_kernel(const T* x, const T* w, const float* bias, T* state, T* out,
                                     const std::int32_t* writes, std::int64_t rows, std::int64_t C, std::int64_t K) {
  HDLAB_GRID_STRIDE(c, C) {
    float ring[kMaxConvTaps - 1];
    for (std::int64_t j = 0; j + 1 < K; ++j) ring[j] = to_float(state[j * C + c]);
    std::int64_t oldest = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float xr = to_float(x[r * C + c]);
      float sum = bias ? bias[c] : 0.0f;
      for (std::int64_t j = 0; j + 1 < K; ++j) sum += to_float(w[c * K + j]) * ring[(oldest + j) % (K - 1)];
      sum += to_float(w[c * K + K - 1]) * xr;
      out[r * C + c] = from_float<T>(detail::silu(sum));
      if (K > 1 && writes_row(writes, r)) {
        ring[oldest] = xr;
        oldest = (oldest + 1) % (K - 1);
      }
    }
    for (std::int64_t j = 0; j + 1 < K; ++j) state[j * C + c] = from_float<T>(ring[(oldest + j) % (K - 1)]);
  }
}

// Block h: value head h (q/k head h / (hv / hk)); thread j < dv: column j of S.
template <class T>
__global__ void gated_delta_rule_kernel(GdnLaunch a) {
  extern __shared__ float smem[];
  float* q = smem;                    // [dk] normalised and scaled
  float* k = q + a.dk;                // [dk] normalised
  float* partial = k + a.dk;          // [blockDim]
  __shared__ float gates[2];          // decay exp(g), beta
  const T* qkv = static_cast<const T*>(a.qkv);
  const T* ba = static_cast<const T*>(a.ba);
  T* state = static_cast<T*>(a.state);
  T* out = static_cast<T*>(a.out);
  const std::int64_t h = blockIdx.x, kh = h / (a.hv / a.hk), j = threadIdx.x, C = 2 * a.hk * a.dk + a.hv * a.dv;
  const bool col = j < a.dv;
  float S[kMaxGdnKeyDim];
  for (std::int64_t i = 0; i < a.dk; ++i) S[i] = col ? to_float(state[(h * a.dk + i) * a.dv + j]) : 0.0f;
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const T* row = qkv + r * C;
    float qq = 0, kk = 0;
    for (std::int64_t i = threadIdx.x; i < a.dk; i += blockDim.x) {
      q[i] = to_float(row[kh * a.dk + i]);
      k[i] = to_float(row[a.hk * a.dk + kh * a.dk + i]);
      qq += q[i] * q[i];
      kk += k[i] * k[i];
    }
    const float q_scale = rsqrtf(block_sum(qq, partial) + 1e-6f) * rsqrtf(static_cast<float>(a.dk));
    const float k_scale = rsqrtf(block_sum(kk, partial) + 1e-6f);
    if (threadIdx.x == 0) {
      float g, beta;
      detail::gdn_gates(to_float(ba[r * 2 * a.hv + a.hv + h]), to_float(ba[r * 2 * a.hv + h]), a.a_log[h], a.dt_bias[h],
                        writes_row(a.writes, r), g, beta);
      gates[0] = expf(g);
      gates[1] = beta;
    }
    __syncthreads();
    if (col) {
      const float decay = gates[0], beta = gates[1];
      float kv = 0;
      for (std::int64_t i = 0; i < a.dk; ++i) {
        S[i] *= decay;
        kv += S[i] * k[i] * k_scale;
      }
      const float delta = beta * (to_float(row[2 * a.hk * a.dk + h * a.dv + j]) - kv);
      float o = 0;
      for (std::int64_t i = 0; i < a.dk; ++i) {
        S[i] += k[i] * k_scale * delta;
        o += S[i] * q[i] * q_scale;
      }
      out[(r * a.hv + h) * a.dv + j] = from_float<T>(o);
    }
    __syncthreads();  // q, k and the gates are rewritten for the next row
  }
  if (col)
    for (std::int64_t i = 0; i < a.dk; ++i) state[(h * a.dk + i) * a.dv + j] = from_float<T>(S[i]);
}

// One block per (row, group of `group` channels): x / rms(x) * w * silu(gate), or with
// gate_first (Mamba-2) u / rms(u) * w with u = x * silu(gate).
template <class T>
__global__ void gated_rms_norm_kernel(const T* x, const T* gate, const float* w, T* out, std::int64_t dim,
                                      std::int64_t group, bool gate_first, float eps) {
  __shared__ float partial[kBlock];
  const std::int64_t groups = dim / group, w0 = (blockIdx.x % groups) * group;
  const std::int64_t base = (blockIdx.x / groups) * dim + w0;
  auto value = [&](std::int64_t d) {  // the normed input: x, or x gated first
    const float v = to_float(x[base + d]);
    return gate_first ? v * detail::silu(to_float(gate[base + d])) : v;
  };
  float sq = 0.0f;
  for (std::int64_t d = threadIdx.x; d < group; d += blockDim.x) sq += value(d) * value(d);
  const float inv = rsqrtf(block_sum(sq, partial) / static_cast<float>(group) + eps);
  for (std::int64_t d = threadIdx.x; d < group; d += blockDim.x) {
    const float g = gate_first ? 1.0f : detail::silu(to_float(gate[base + d]));
    out[base + d] = from_float<T>(value(d) * inv * w[w0 + d] * g);
  }
}

// Block h: head h (B, C of group h / (H / G)); its state S [P, N] in shared memory (f32)
// for the whole call, written back in the cache's type at the end. Per row: the step and
// decay (thread 0) and the row's x, B and C staged; threads update S element by element;
// each warp forms outputs y[p] = S[p] . C + D x[p] for its rows p.
template <class T>
__global__ void mamba2_ssd_kernel(Mamba2Launch a) {
  extern __shared__ float smem[];
  const std::int64_t P = a.head_dim, N = a.state_size, PN = P * N, H = a.heads, G = a.groups;
  float* S = smem;     // [P, N]
  float* xs = S + PN;  // [P]
  float* bs = xs + P;  // [N]
  float* cs = bs + N;  // [N]
  __shared__ float coef[2];  // step, decay
  const T* xbc = static_cast<const T*>(a.xbc);
  const T* dt = static_cast<const T*>(a.dt);
  T* state = static_cast<T*>(a.state);
  T* y = static_cast<T*>(a.y);
  const std::int64_t h = blockIdx.x, g = h / (H / G), C = H * P + 2 * G * N;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (std::int64_t e = threadIdx.x; e < PN; e += blockDim.x) S[e] = to_float(state[h * PN + e]);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const T* row = xbc + r * C;
    for (std::int64_t i = threadIdx.x; i < P; i += blockDim.x) xs[i] = to_float(row[h * P + i]);
    for (std::int64_t i = threadIdx.x; i < N; i += blockDim.x) {
      bs[i] = to_float(row[H * P + g * N + i]);
      cs[i] = to_float(row[H * P + G * N + g * N + i]);
    }
    if (threadIdx.x == 0) detail::mamba2_step(to_float(dt[r * H + h]), a.dt_bias[h], a.a_log[h], coef[0], coef[1]);
    __syncthreads();
    for (std::int64_t e = threadIdx.x; e < PN; e += blockDim.x) S[e] = coef[1] * S[e] + coef[0] * xs[e / N] * bs[e % N];
    __syncthreads();
    for (std::int64_t p = warp; p < P; p += warps) {
      float acc = 0.0f;
      for (std::int64_t n = lane; n < N; n += 32) acc += S[p * N + n] * cs[n];
      for (int off = 16; off > 0; off /= 2) acc += __shfl_down_sync(0xffffffffu, acc, off);
      if (lane == 0) y[(r * H + h) * P + p] = from_float<T>(acc + a.d[h] * xs[p]);
    }
    __syncthreads();  // x, B, C and the coefficients are rewritten for the next row
  }
  for (std::int64_t e = threadIdx.x; e < PN; e += blockDim.x) state[h * PN + e] = from_float<T>(S[e]);
}

template <class T>
__global__ void sigmoid_gate_kernel(const T* x, const T* gate, T* out, std::int64_t rows, std::int64_t width,
                                    std::int64_t gate_cols) {
  HDLAB_GRID_STRIDE(i, rows * width) {
    const std::int64_t r = i / width, c = i % width;
    out[i] = from_float<T>(to_float(x[i]) * detail::sigmoid(to_float(gate[r * gate_cols + (gate_cols == 1 ? 0 : c)])));
  }
}

}  // namespace

void launch_causal_conv1d(Elem e, const void* x, const void* weight, const float* bias, void* state, void* out,
                          const std::int32_t* writes, std::int64_t rows, std::int64_t channels, std::int64_t taps,
                          cudaStream_t stream) {
  HDLAB_DISPATCH(e, causal_conv1d_kernel<T><<<blocks_for(channels), kBlock, 0, stream>>>(
                               static_cast<const T*>(x), static_cast<const T*>(weight), bias, static_cast<T*>(state),
                               static_cast<T*>(out), writes, rows, channels, taps));
}

void launch_gated_delta_rule(const GdnLaunch& a, cudaStream_t stream) {
  // Threads: the dv columns rounded up to whole warps (a power of two for block_sum).
  unsigned threads = 32;
  while (threads < a.dv) threads *= 2;
  const std::size_t shared = static_cast<std::size_t>(2 * a.dk + threads) * sizeof(float);
  HDLAB_DISPATCH(a.elem,
                        gated_delta_rule_kernel<T><<<static_cast<unsigned>(a.hv), threads, shared, stream>>>(a));
}

void launch_gated_rms_norm(Elem e, const void* x, const void* gate, const float* weight, void* out, std::int64_t rows,
                           std::int64_t dim, std::int64_t group, bool gate_first, float eps, cudaStream_t stream) {
  HDLAB_DISPATCH(e, gated_rms_norm_kernel<T><<<static_cast<unsigned>(rows * (dim / group)), kBlock, 0, stream>>>(
                               static_cast<const T*>(x), static_cast<const T*>(gate), weight, static_cast<T*>(out), dim,
                               group, gate_first, eps));
}

void launch_mamba2_ssd(const Mamba2Launch& a, cudaStream_t stream) {
  const std::size_t shared =
      static_cast<std::size_t>(a.head_dim * a.state_size + a.head_dim + 2 * a.state_size) * sizeof(float);
  HDLAB_DISPATCH(a.elem, mamba2_ssd_kernel<T><<<static_cast<unsigned>(a.heads), kBlock, shared, stream>>>(a));
}

void launch_sigmoid_gate(Elem e, const void* x, const void* gate, void* out, std::int64_t rows, std::int64_t width,
                         std::int64_t gate_cols, cudaStream_t stream) {
  HDLAB_DISPATCH(e, sigmoid_gate_kernel<T><<<blocks_for(rows * width), kBlock, 0, stream>>>(
                               static_cast<const T*>(x), static_cast<const T*>(gate), static_cast<T*>(out), rows, width,
                               gate_cols));
}

}  // namespace hdlab::executor::cuda
