// The CUDA attention kernel: the same tile walk as the CPU kernel, written for clarity.
//
// One block = one query tile (kTileQ = 64 rows) x one query head; 8 lanes per row
// (512 threads). Lane l of a row owns head dims d = l, l+8, l+16, ... (its q over the
// q/k dims and its output accumulator over the value dims live in registers; MLA's value
// dims differ from its q/k dims). Per visible key tile (plan: skip / full /
// partial) the block stages K and V in shared memory as f32, each row computes its 64
// scores (dot products reduced across its 8 lanes), masks them by the plan's bits, folds
// the tile's max into its running max and sum (one rescale per tile) and accumulates P V.
// CUDA cores only, no tensor cores: this kernel is the reference design, not the fastest.
// Past its head dims, attention is composed of cuBLAS products and the masked softmax
// kernel at the end of this file (Backend::attention_in_parts).
#include <cuda_bf16.h>

#include <cstdint>

#include "cuda_check.hpp"
#include "cuda_kernels.hpp"
#include "cuda_scalar.cuh"

namespace hdlab::executor::cuda {

namespace {

constexpr int kRows = static_cast<int>(kCudaAttentionRows);  // = kTileQ
constexpr int kKeys = static_cast<int>(kCudaAttentionKeys);  // = kTileK
constexpr int kLanes = 8;                                    // lanes per query row
constexpr int kThreads = kRows * kLanes;
constexpr int kDimsPerLane = static_cast<int>(kCudaAttentionMaxHeadDim) / kLanes;
constexpr int kScorePitch = kKeys + 1;  // padded rows: rows of one warp hit different banks
// The layout below is the one cuda_attention_shared_bytes (cuda_limits.hpp) counts.
static_assert(cuda_attention_shared_bytes(1, 2) == (3 * kKeys + kRows * kScorePitch) * sizeof(float),
              "shared memory layout and its budget differ");

// Sum over the 8 lanes of one row (lanes of a row are consecutive in the warp).
__device__ inline float row_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 4);
  x += __shfl_xor_sync(0xffffffffu, x, 2);
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x;
}

// Stages the key and value tiles of KV head g, keys c0 .. c0 + cols (zeros past the last
// key), as floats: [kKeys, hd] and [kKeys, dv] (the first dv of value rows of dw). The
// whole block takes part.
template <class T>
__device__ inline void stage_tiles(const T* k, const T* v, std::int64_t kv_heads, std::int64_t g, int hd, int dv,
                                   int dw, std::int64_t c0, int cols, float* k_tile, float* v_tile) {
  for (int e = threadIdx.x; e < kKeys * hd; e += kThreads) {
    const int c = e / hd, d = e % hd;
    k_tile[e] = c < cols ? to_float(k[((c0 + c) * kv_heads + g) * hd + d]) : 0.0f;
  }
  for (int e = threadIdx.x; e < kKeys * dv; e += kThreads) {
    const int c = e / dv, d = e % dv;
    v_tile[e] = c < cols ? to_float(v[((c0 + c) * kv_heads + g) * dw + d]) : 0.0f;
  }
}

// Folds one tile's scores (this row's, masked ones -inf) into the row's running softmax:
// rescales the running sum and output to the new maximum, then adds exp(score - max) and
// its share of each value row. tile_max > -inf.
__device__ inline void fold_tile(const float* row_scores, const float* v_tile, int cols, int dv, int lane,
                                 float tile_max, float& run_max, float& run_sum, float (&o_reg)[kDimsPerLane]) {
  const float new_max = fmaxf(run_max, tile_max);
  const float correction = __expf(run_max - new_max);  // 0 when run_max is -inf
  run_sum *= correction;
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) o_reg[i] *= correction;
  for (int c = 0; c < cols; ++c) {
    const float p = __expf(row_scores[c] - new_max);  // masked: exp(-inf) = 0
    run_sum += p;
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) {
      const int d = lane + kLanes * i;
      if (d < dv) o_reg[i] += p * v_tile[c * dv + d];
    }
  }
  run_max = new_max;
}

template <class T>
__global__ void __launch_bounds__(kThreads) attention_kernel(AttentionLaunch a) {
  extern __shared__ float smem[];
  const int hd = static_cast<int>(a.head_dim), dv = static_cast<int>(a.v_head_dim);
  const int dw = static_cast<int>(a.v_row_dim);
  float* k_tile = smem;                        // [kKeys, hd]
  float* v_tile = k_tile + kKeys * hd;         // [kKeys, dv]
  float* scores = v_tile + kKeys * dv;         // [kRows, kScorePitch]

  const std::int64_t qt = blockIdx.x, h = blockIdx.y;
  const std::int64_t g = h / (a.heads / a.kv_heads);
  const int row = threadIdx.x / kLanes, lane = threadIdx.x % kLanes;
  const std::int64_t q_row = qt * kRows + row;
  const bool row_valid = q_row < a.query_rows;
  const T* q = static_cast<const T*>(a.q);
  const T* k = static_cast<const T*>(a.k);
  const T* v = static_cast<const T*>(a.v);

  float q_reg[kDimsPerLane], o_reg[kDimsPerLane];
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) {
    const int d = lane + kLanes * i;
    q_reg[i] = row_valid && d < hd ? to_float(q[(q_row * a.heads + h) * hd + d]) * a.scale : 0.0f;
    o_reg[i] = 0.0f;
  }
  float run_max = -INFINITY, run_sum = 0.0f;

  for (std::int64_t kt = 0; kt < a.plan.k_tiles; ++kt) {
    const std::int64_t at = qt * a.plan.k_tiles + kt;
    const std::uint8_t cls = a.plan.classes[at];  // the same for the whole block
    if (cls == 0) continue;
    const std::int64_t c0 = kt * kKeys;
    const int cols = static_cast<int>(min(static_cast<std::int64_t>(kKeys), a.key_rows - c0));
    stage_tiles(k, v, a.kv_heads, g, hd, dv, dw, c0, cols, k_tile, v_tile);
    __syncthreads();

    std::uint64_t word = cols == kKeys ? ~std::uint64_t{0} : (std::uint64_t{1} << cols) - 1;
    if (cls == 2 && row_valid) word = a.plan.bits[static_cast<std::int64_t>(a.plan.partial_index[at]) * kRows + row];
    float tile_max = -INFINITY;
    for (int c = 0; c < kKeys; ++c) {
      float dot = 0.0f;
#pragma unroll
      for (int i = 0; i < kDimsPerLane; ++i) {
        const int d = lane + kLanes * i;
        if (d < hd) dot += q_reg[i] * k_tile[c * hd + d];
      }
      dot = row_sum(dot);
      const float s = (word >> c) & 1u ? dot : -INFINITY;
      tile_max = fmaxf(tile_max, s);
      if (lane == 0) scores[row * kScorePitch + c] = s;
    }
    __syncwarp();
    if (tile_max > -INFINITY)  // uniform across the row's lanes
      fold_tile(scores + row * kScorePitch, v_tile, cols, dv, lane, tile_max, run_max, run_sum, o_reg);
    __syncthreads();  // before the next tile overwrites k_tile, v_tile
  }

  if (!row_valid) return;
  // A sink logit joins the denominator; a row that saw no key stays zero.
  const float sink = a.sinks != nullptr && run_sum > 0.0f ? __expf(a.sinks[h] - run_max) : 0.0f;
  const float inv = run_sum > 0.0f ? 1.0f / (run_sum + sink) : 0.0f;
  T* out = static_cast<T*>(a.out);
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) {
    const int d = lane + kLanes * i;
    if (d < dv) out[(q_row * a.heads + h) * dv + d] = from_float<T>(o_reg[i] * inv);
  }
}

template <class T>
void launch_typed(const AttentionLaunch& a, cudaStream_t stream) {
  const std::size_t smem = cuda_attention_shared_bytes(a.head_dim, a.v_head_dim);
  // Above 48 KiB of dynamic shared memory a kernel must opt in, up to the device's
  // cudaDevAttrMaxSharedMemoryPerBlockOptin (the backend checked the need against it).
  HDLAB_CUDA_CHECK(cudaFuncSetAttribute(attention_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
  const dim3 grid(static_cast<unsigned>(a.plan.q_tiles), static_cast<unsigned>(a.heads));
  attention_kernel<T><<<grid, kThreads, smem, stream>>>(a);
  HDLAB_CUDA_CHECK(cudaGetLastError());
}

// ---- the masked softmax of attention composed of other ops (Backend::attention_in_parts) ----

constexpr int kSoftmaxThreads = 256;

// Whether plan row r sees key c (TilePlan::visible on the device copy).
__device__ inline bool plan_sees(const DeviceTilePlan& p, std::int64_t r, std::int64_t c) {
  const std::int64_t at = (r / kRows) * p.k_tiles + c / kKeys;
  const std::uint8_t cls = p.classes[at];
  if (cls != 2) return cls == 1;
  return (p.bits[static_cast<std::int64_t>(p.partial_index[at]) * kRows + r % kRows] >> (c % kKeys)) & 1u;
}

struct MaxOf {
  __device__ float operator()(float x, float y) const { return fmaxf(x, y); }
};
struct SumOf {
  __device__ float operator()(float x, float y) const { return x + y; }
};

// One value per thread folded over the block; every thread gets the result.
template <class Op>
__device__ inline float block_reduce(float x, Op op, float* partial) {
  for (int o = 16; o > 0; o >>= 1) x = op(x, __shfl_xor_sync(0xffffffffu, x, o));
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = x;
  __syncthreads();
  x = partial[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) x = op(x, partial[w]);
  __syncthreads();  // before the next reduction writes `partial`
  return x;
}

// One block per (row, head): the row's visible scaled scores, their maximum, the
// exponentials and their sum (with the head's sink), then the quotients. Each thread keeps
// to the same columns throughout, so the passes need no barrier between them.
__global__ void __launch_bounds__(kSoftmaxThreads) attention_softmax_kernel(SoftmaxLaunch a) {
  __shared__ float partial[kSoftmaxThreads / 32];
  const std::int64_t i = blockIdx.x, h = blockIdx.y, r = a.row0 + i;
  float* s = a.scores + (h * a.rows + i) * a.keys;
  float row_max = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < a.keys; j += kSoftmaxThreads) {
    s[j] = plan_sees(a.plan, r, a.key0 + j) ? a.scale * s[j] : -INFINITY;
    row_max = fmaxf(row_max, s[j]);
  }
  row_max = block_reduce(row_max, MaxOf{}, partial);
  if (row_max == -INFINITY) {  // no visible key: zeros (the same branch for the whole block)
    for (std::int64_t j = threadIdx.x; j < a.keys; j += kSoftmaxThreads) s[j] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (std::int64_t j = threadIdx.x; j < a.keys; j += kSoftmaxThreads) sum += s[j] = expf(s[j] - row_max);
  sum = block_reduce(sum, SumOf{}, partial);
  if (a.sinks != nullptr) sum += expf(a.sinks[h] - row_max);
  const float inv = 1.0f / sum;
  for (std::int64_t j = threadIdx.x; j < a.keys; j += kSoftmaxThreads) s[j] *= inv;
}

}  // namespace

void launch_attention_softmax(const SoftmaxLaunch& a, cudaStream_t stream) {
  if (a.rows == 0 || a.heads == 0 || a.keys == 0) return;
  const dim3 grid(static_cast<unsigned>(a.rows), static_cast<unsigned>(a.heads));
  attention_softmax_kernel<<<grid, kSoftmaxThreads, 0, stream>>>(a);
  HDLAB_CUDA_CHECK(cudaGetLastError());
}

void launch_attention(const AttentionLaunch& a, cudaStream_t stream) {
  if (a.plan.q_tiles == 0 || a.heads == 0) return;
  if (a.elem == Elem::f32)
    launch_typed<float>(a, stream);
  else
    launch_typed<__nv_bfloat16>(a, stream);
}

}  // namespace hdlab::executor::cuda
