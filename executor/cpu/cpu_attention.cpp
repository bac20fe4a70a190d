// Drives the CPU attention kernel: picks the instruction set, transposes K once per call
// for prefill shapes, and hands (query tile, head) work items to the pool.
#include <algorithm>
#include <string>

#include "cpu_backend.hpp"

namespace hdlab::executor::cpu {

namespace {

bool cpu_has(const char* isa) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (std::string(isa) == "avx512") return __builtin_cpu_supports("avx512f");
  if (std::string(isa) == "avx2") return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return std::string(isa) == "generic";
}

// K [Lk, G, hd] -> [G, hd, stride], zero past the last key, so a score tile reads kTileK
// contiguous keys per head dim. Parallel over (kv head, key tile).
void transpose_keys(ThreadPool& pool, const AttentionProblem& p, std::int64_t stride, float* kt) {
  const std::int64_t hd = p.head_dim, g_count = p.kv_heads, k_tiles = stride / kTileK;
  pool.parallel_for(g_count * k_tiles, 4, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t g = item / k_tiles, c0 = (item % k_tiles) * kTileK;
      for (std::int64_t d = 0; d < hd; ++d) {
        float* dst = kt + (g * hd + d) * stride + c0;
        for (std::int64_t c = 0; c < kTileK; ++c)
          dst[c] = c0 + c < p.key_rows ? p.k[((c0 + c) * g_count + g) * hd + d] : 0.0f;
      }
    }
  });
}

}  // namespace

std::vector<std::string> isas_available() {
  std::vector<std::string> out;
#if defined(HDLAB_CPU_AVX512)
  if (cpu_has("avx512")) out.emplace_back("avx512");
#endif
#if defined(HDLAB_CPU_AVX2)
  if (cpu_has("avx2")) out.emplace_back("avx2");
#endif
  out.emplace_back("generic");
  return out;
}

AttendTileFn attend_tile_for(const std::string& isa) {
#if defined(HDLAB_CPU_AVX512)
  if (isa == "avx512" && cpu_has("avx512")) return attend_tile_avx512;
#endif
#if defined(HDLAB_CPU_AVX2)
  if (isa == "avx2" && cpu_has("avx2")) return attend_tile_avx2;
#endif
  if (isa == "generic") return attend_tile_generic;
  return nullptr;
}

void run_attention(ThreadPool& pool, AttendTileFn attend_tile, AttentionProblem p, const TilePlan& plan,
                   std::vector<float>& k_transposed) {
  p.tile_classes = plan.classes().data();
  p.partial_index = plan.partial_index().data();
  p.partial_bits = plan.bits().data();
  p.k_tiles = plan.k_tiles();
  p.k_transposed = nullptr;
  // Transposing K pays off when several query tiles read each key tile (prefill); a
  // decode step's few rows read K in place rather than move the whole cache.
  if (plan.q_tiles() > 1) {
    p.kt_stride = plan.k_tiles() * kTileK;
    k_transposed.resize(static_cast<std::size_t>(p.kv_heads * p.head_dim * p.kt_stride));
    transpose_keys(pool, p, p.kt_stride, k_transposed.data());
    p.k_transposed = k_transposed.data();
  }
  const std::int64_t q_tiles = plan.q_tiles(), heads = p.heads;
  const std::size_t scratch_floats = attend_scratch_floats(p.head_dim);
  pool.parallel_for(q_tiles * heads, 1, [&](std::int64_t begin, std::int64_t end) {
    thread_local std::vector<float> scratch;
    if (scratch.size() < scratch_floats) scratch.resize(scratch_floats);
    for (std::int64_t item = begin; item < end; ++item) {
      // Last query tiles first: under causal masks they see the most keys.
      const std::int64_t qt = q_tiles - 1 - item / heads, h = item % heads;
      attend_tile(p, qt, h, scratch.data());
    }
  });
}

}  // namespace hdlab::executor::cpu
