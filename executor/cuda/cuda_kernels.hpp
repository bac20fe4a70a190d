#pragma once
// Launchers of the CUDA backend's own kernels, with plain arguments (device pointers,
// extents), so cuda_backend.cpp (host C++ built by the C++ compiler) and the .cu files
// share nothing but this header. Each launcher checks its launch.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "hdlab/executor/cuda_limits.hpp"

namespace hdlab::executor::cuda {

// Storage of float tensors (f32, bf16) and of matrix-product operands (all three);
// arithmetic is f32.
enum class Elem { f32, bf16, f16 };

// Where a kernel reports bad data (an id out of range, a token whose router scores are
// NaN): the lowest offending item, kNoFault when none. The backend sets it to kNoFault
// (all bytes 0xff) before such a kernel and reads it right after, as the CPU backend
// checks before it returns.
inline constexpr unsigned kNoFault = 0xffffffffu;

// The TilePlan on the device (see attention_mask.hpp): classes [q_tiles, k_tiles] as
// bytes (0 skip, 1 full, 2 partial), partial_index [q_tiles, k_tiles], bits [partials, 64].
struct DeviceTilePlan {
  const std::uint8_t* classes = nullptr;
  const std::int32_t* partial_index = nullptr;
  const std::uint64_t* bits = nullptr;
  std::int64_t q_tiles = 0, k_tiles = 0;
};

struct AttentionLaunch {
  Elem elem = Elem::f32;
  const void* q = nullptr;  // [Lq, H, hd]
  const void* k = nullptr;  // [Lk, G, hd]
  const void* v = nullptr;  // [Lk, G, v_row_dim]: each value the first v_head_dim of its row
  void* out = nullptr;      // [Lq, H, v_head_dim]
  std::int64_t query_rows = 0, key_rows = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t v_head_dim = 0, v_row_dim = 0;
  float scale = 1.0f;
  const float* sinks = nullptr;  // [H] sink logits (f32), or null: none
  DeviceTilePlan plan;
};
// Head dims (q/k and v) up to kCudaAttentionMaxHeadDim whose cuda_attention_shared_bytes
// the device allows (the backend checks both before the launch).
void launch_attention(const AttentionLaunch& a, cudaStream_t stream);

// Backend::attention_softmax in place on scores [heads, rows, keys] (f32): row i is plan
// row row0 + i, column j plan key key0 + j.
struct SoftmaxLaunch {
  float* scores = nullptr;
  std::int64_t heads = 0, rows = 0, keys = 0, row0 = 0, key0 = 0;
  float scale = 1.0f;
  const float* sinks = nullptr;  // [heads], or null: none
  DeviceTilePlan plan;
};
void launch_attention_softmax(const SoftmaxLaunch& a, cudaStream_t stream);

// dst_b[r, c] = src_b[r, c] (Backend::copy_strided), element offsets and strides as given.
struct StridedLaunch {
  std::int64_t offset = 0, row_stride = 0, batch_stride = 0;
};
void launch_copy_strided(Elem e, const void* src, StridedLaunch s, void* dst, StridedLaunch d, std::int64_t batch,
                         std::int64_t rows, std::int64_t cols, cudaStream_t stream);

void launch_convert(Elem from, const void* src, Elem to, void* dst, std::int64_t n, cudaStream_t stream);
void launch_rms_norm(Elem e, const void* x, const float* weight, void* out, std::int64_t rows, std::int64_t dim,
                     float eps, cudaStream_t stream);
void launch_group_norm(Elem e, const void* x, std::int64_t group_size, const float* weight, const float* bias,
                       void* out, std::int64_t rows, std::int64_t width, float eps, cudaStream_t stream);
// The first rotary_dim dims of each head rotate (partial RoPE); inv_freq: rotary_dim/2
// radians per position (model::rotary_frequencies), computed on the host in double;
// cos and sin multiplied by cos_sin_factor.
inline constexpr std::int64_t kMaxRopeHalfDim = 128;
void launch_rope(Elem e, void* x, const std::int32_t* positions, std::int64_t tokens, std::int64_t heads,
                 std::int64_t head_dim, std::int64_t rotary_dim, const double* inv_freq_host, float cos_sin_factor,
                 cudaStream_t stream);
void launch_relu2(Elem e, const void* x, void* out, std::int64_t n, cudaStream_t stream);
// limit > 0: gpt-oss's clamped SwiGLU with slope alpha (Backend::swiglu).
void launch_swiglu(Elem e, const void* gate_up, void* out, std::int64_t tokens, std::int64_t ffn, float limit,
                   float alpha, cudaStream_t stream);
void launch_add(Elem e, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t stream);
// fault: the lowest token with fewer than k experts whose score is a number.
inline constexpr std::int64_t kMaxRoutedExperts = 1024;
void launch_topk_routing(Elem e, const void* logits, std::int64_t tokens, std::int64_t experts, std::int64_t k,
                         bool sigmoid, bool normalize, std::int32_t* ids, float* weights, unsigned* fault,
                         cudaStream_t stream);
// fault: the lowest i whose ids[i] is outside [0, table_rows) (its row is not written).
void launch_gather_rows(Elem e, const void* table, std::int64_t table_rows, std::int64_t width,
                        const std::int32_t* ids, std::int64_t n, void* out, std::int64_t first, std::int64_t stride,
                        unsigned* fault, cudaStream_t stream);
// fault: the lowest i whose ids[i] is outside [0, out_rows) (nothing added for it).
void launch_scatter_add_rows(Elem e, const void* src, const std::int32_t* ids, const float* weights, std::int64_t n,
                             std::int64_t width, void* out, std::int64_t out_rows, unsigned* fault,
                             cudaStream_t stream);
void launch_ghc_dynamic(Elem e, const void* hn, const void* w_dyn, const float* scale, const float* static_a,
                        const float* static_b, float* alpha, float* beta, std::int64_t tokens, std::int64_t n,
                        std::int64_t s, std::int64_t m, cudaStream_t stream);
void launch_ghc_width(Elem e, const void* h, const float* alpha, bool alpha_per_token, void* x, void* carry,
                      std::int64_t tokens, std::int64_t n, std::int64_t s, std::int64_t m, cudaStream_t stream);
void launch_ghc_depth(Elem e, const void* z, const float* beta, bool beta_per_token, const void* carry, void* out,
                      std::int64_t tokens, std::int64_t m, std::int64_t s, std::int64_t n, cudaStream_t stream);

// ---- linear attention (cuda_linear.cu; Backend::causal_conv1d etc.) ----------------------
// The conv's taps and the gated delta rule's key dim the kernels hold per thread (the
// backend refuses larger ones); value dims up to 1024 (a thread per state column).
inline constexpr std::int64_t kMaxConvTaps = 64;
inline constexpr std::int64_t kMaxGdnKeyDim = 256;
inline constexpr std::int64_t kMaxGdnValueDim = 1024;
// x, out [rows, channels], weight [channels, taps] of e; bias f32 [channels] or null;
// state [taps-1, channels] of e; writes i32 [rows] or null (all write).
void launch_causal_conv1d(Elem e, const void* x, const void* weight, const float* bias, void* state, void* out,
                          const std::int32_t* writes, std::int64_t rows, std::int64_t channels, std::int64_t taps,
                          cudaStream_t stream);
struct GdnLaunch {
  Elem elem = Elem::f32;
  const void* qkv = nullptr;  // [rows, 2 hk dk + hv dv]
  const void* ba = nullptr;   // [rows, 2 hv]
  const float* a_log = nullptr;
  const float* dt_bias = nullptr;
  void* state = nullptr;  // [hv, dk, dv], read and written
  void* out = nullptr;    // [rows, hv, dv]
  const std::int32_t* writes = nullptr;
  std::int64_t rows = 0, hk = 0, hv = 0, dk = 0, dv = 0;
};
void launch_gated_delta_rule(const GdnLaunch& a, cudaStream_t stream);
// Rows of dim in groups of `group` channels; gate_first: Mamba-2's form (Backend::gated_rms_norm).
void launch_gated_rms_norm(Elem e, const void* x, const void* gate, const float* weight, void* out, std::int64_t rows,
                           std::int64_t dim, std::int64_t group, bool gate_first, float eps, cudaStream_t stream);
// Mamba-2's SSD scan (Backend::mamba2_ssd): a block per head keeps its state [P, N] in
// shared memory with the row's x, B and C (P N + P + 2 N floats, at most 48 KiB).
inline constexpr std::int64_t kMaxMamba2SharedFloats = 12288;
struct Mamba2Launch {
  Elem elem = Elem::f32;
  const void* xbc = nullptr;  // [rows, H P + 2 G N]
  const void* dt = nullptr;   // [rows, H]
  const float* a_log = nullptr;
  const float* dt_bias = nullptr;
  const float* d = nullptr;
  void* state = nullptr;  // [H, P, N], read and written
  void* y = nullptr;      // [rows, H, P]
  std::int64_t rows = 0, heads = 0, head_dim = 0, groups = 0, state_size = 0;
};
void launch_mamba2_ssd(const Mamba2Launch& a, cudaStream_t stream);
void launch_sigmoid_gate(Elem e, const void* x, const void* gate, void* out, std::int64_t rows, std::int64_t width,
                         std::int64_t gate_cols, cudaStream_t stream);

// Matrix-product operands and their check (any Elem): dst[i] = value rounded to e;
// *mismatches (zeroed by the caller) += the elements of x that are not value rounded to e.
void launch_fill(Elem e, void* dst, std::int64_t n, float value, cudaStream_t stream);
void launch_count_mismatches(Elem e, const void* x, std::int64_t n, float value, unsigned long long* mismatches,
                             cudaStream_t stream);

}  // namespace hdlab::executor::cuda
