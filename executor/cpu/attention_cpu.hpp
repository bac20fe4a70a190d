#pragma once
// The CPU attention kernel's parts: the problem as plain pointers, and one function per
// instruction set that runs one (query tile, head) work item. The item loop, the K
// transposition and the threads live in cpu_attention.cpp.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hdlab/executor/attention_mask.hpp"

namespace hdlab::executor::cpu {

struct AttentionProblem {
  const float* q = nullptr;  // [Lq, H, hd]
  const float* k = nullptr;  // [Lk, G, hd]
  const float* v = nullptr;  // [Lk, G, v_row_dim]: each value the first v_head_dim of its row
  float* out = nullptr;      // [Lq, H, v_head_dim]
  std::int64_t query_rows = 0, key_rows = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t v_head_dim = 0, v_row_dim = 0;
  float scale = 1.0f;
  const float* sinks = nullptr;  // [H] sink logits, or null: none
  // The TilePlan as flat arrays (see TilePlan::classes/partial_index/bits): the kernels,
  // built with their own instruction-set flags, call no inline code from other headers.
  const TileClass* tile_classes = nullptr;     // [q_tiles, k_tiles]
  const std::int32_t* partial_index = nullptr;  // [q_tiles, k_tiles]
  const std::uint64_t* partial_bits = nullptr;  // [partials, kTileQ]
  std::int64_t k_tiles = 0;
};

// Floats of scratch one work item needs: Q tile (head_dim), O accumulator (v_head_dim),
// scores, max and sum for each of the `group` query heads of a kv head, one transposed key
// tile, and (decode) the queries across vector lanes: at most 16 rows in lane groups of up to 16.
inline std::size_t attend_scratch_floats(std::int64_t head_dim, std::int64_t v_head_dim, std::int64_t group) {
  return static_cast<std::size_t>(group * (kTileQ * (head_dim + v_head_dim) + 2 * kTileQ) + kTileQ * kTileK +
                                  head_dim * kTileK + 32 * head_dim);
}

// Online softmax over every visible key tile of query tile `q_tile` for the query heads
// of kv head `kv_head`.
using AttendTileFn = void (*)(const AttentionProblem& p, std::int64_t q_tile, std::int64_t kv_head, float* scratch);

void attend_tile_generic(const AttentionProblem& p, std::int64_t q_tile, std::int64_t kv_head, float* scratch);
#if defined(HDLAB_CPU_AVX2)
void attend_tile_avx2(const AttentionProblem& p, std::int64_t q_tile, std::int64_t kv_head, float* scratch);
#endif
#if defined(HDLAB_CPU_AVX512)
void attend_tile_avx512(const AttentionProblem& p, std::int64_t q_tile, std::int64_t kv_head, float* scratch);
#endif

// Instruction sets this build and this CPU run, best first ("avx512", "avx2", "generic").
std::vector<std::string> isas_available();
// The kernel for one of them; null when this build or CPU lacks it.
AttendTileFn attend_tile_for(const std::string& isa);

}  // namespace hdlab::executor::cpu
