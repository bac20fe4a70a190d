#pragma once
// What the CUDA attention kernel needs of a device, computed alike by the CUDA backend
// (before each launch, against the device's own limit) and by anyone asking ahead (the
// tests on any machine). Plain arithmetic, no CUDA headers, C++17: the .cu files include it.
#include <cstddef>
#include <cstdint>

namespace hdlab::executor {

// The kernel's block: one query tile of kCudaAttentionRows rows x one head, against key
// tiles of kCudaAttentionKeys keys (the executor's kTileQ x kTileK tiles).
inline constexpr std::int64_t kCudaAttentionRows = 64;
inline constexpr std::int64_t kCudaAttentionKeys = 64;
// Head dims held in registers: 8 lanes per query row, 32 dims per lane.
inline constexpr std::int64_t kCudaAttentionMaxHeadDim = 256;

// Dynamic shared memory of one block, bytes: the key tile [keys, qk_dim], the value tile
// [keys, v_dim] and the scores [rows, keys + 1] (a padded pitch against bank conflicts),
// all f32. Equal dims: head dim 64: 49,408; 128: 82,176; 256: 147,712 (144.25 KiB); MLA's
// 192 / 128 (DeepSeek's qk_nope + qk_rope and v_head_dim): 98,560.
constexpr std::size_t cuda_attention_shared_bytes(std::int64_t qk_dim, std::int64_t v_dim) {
  const auto dk = static_cast<std::size_t>(qk_dim < 0 ? 0 : qk_dim), dv = static_cast<std::size_t>(v_dim < 0 ? 0 : v_dim);
  const auto keys = static_cast<std::size_t>(kCudaAttentionKeys), rows = static_cast<std::size_t>(kCudaAttentionRows);
  return (keys * (dk + dv) + rows * (keys + 1)) * sizeof(float);
}
constexpr std::size_t cuda_attention_shared_bytes(std::int64_t head_dim) {
  return cuda_attention_shared_bytes(head_dim, head_dim);
}

// The largest head dim a block fits in `shared_per_block` bytes (the device's opt-in
// limit, cudaDevAttrMaxSharedMemoryPerBlockOptin), capped at kCudaAttentionMaxHeadDim;
// 0 when not even head dim 1 fits. sm_80 (163 KiB) and sm_90 (227 KiB): 256; sm_86, sm_89
// and sm_120 (99 KiB): 165.
constexpr std::int64_t cuda_attention_max_head_dim(std::size_t shared_per_block) {
  const std::size_t fixed = cuda_attention_shared_bytes(0);
  if (shared_per_block < cuda_attention_shared_bytes(1)) return 0;
  const std::size_t per_dim = 2 * static_cast<std::size_t>(kCudaAttentionKeys) * sizeof(float);
  const auto fits = static_cast<std::int64_t>((shared_per_block - fixed) / per_dim);
  return fits < kCudaAttentionMaxHeadDim ? fits : kCudaAttentionMaxHeadDim;
}

// Whether the fused kernel takes q/k rows of qk_dim and values of v_dim on a device allowing
// `shared_per_block` bytes; past it the backend composes attention of other ops
// (Backend::attention_in_parts). DeepSeek's absorbed decode (576 / 512) never fits.
constexpr bool cuda_attention_fused(std::int64_t qk_dim, std::int64_t v_dim, std::size_t shared_per_block) {
  return (qk_dim > v_dim ? qk_dim : v_dim) <= kCudaAttentionMaxHeadDim &&
         cuda_attention_shared_bytes(qk_dim, v_dim) <= shared_per_block;
}

}  // namespace hdlab::executor
