// Drives the CPU attention kernel: picks the instruction set and hands (query tile,
// kv head) work items to the pool.
#include <algorithm>
#include <cmath>
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

void run_attention(ThreadPool& pool, AttendTileFn attend_tile, AttentionProblem p, const TilePlan& plan) {
  p.tile_classes = plan.classes().data();
  p.partial_index = plan.partial_index().data();
  p.partial_bits = plan.bits().data();
  p.k_tiles = plan.k_tiles();
  const std::int64_t q_tiles = plan.q_tiles(), kv_heads = p.kv_heads;
  const std::size_t scratch_floats = attend_scratch_floats(p.head_dim, p.v_head_dim, p.heads / p.kv_heads);
  // Work items: (query tile, kv head). A decode step has one query tile, so its
  // parallelism is the number of kv heads.
  pool.parallel_for(q_tiles * kv_heads, 1, [&](std::int64_t begin, std::int64_t end) {
    thread_local std::vector<float> scratch;
    if (scratch.size() < scratch_floats) scratch.resize(scratch_floats);
    for (std::int64_t item = begin; item < end; ++item) {
      // Last query tiles first: under causal masks they see the most keys.
      const std::int64_t qt = q_tiles - 1 - item / kv_heads, g = item % kv_heads;
      attend_tile(p, qt, g, scratch.data());
    }
  });
}

void CpuBackend::attention_softmax_impl(const Tensor& scores, const TilePlan& plan, std::int64_t row0,
                                        std::int64_t key0, float scale, const Tensor& sinks) {
  const std::int64_t rows = scores.dim(1), keys = scores.dim(2);
  float* base = scores.data_as<float>();
  const float* sink = sinks.defined() ? sinks.data_as<const float>() : nullptr;
  // Work items: (head, row); the row's scores in place.
  parallel_for(scores.dim(0) * rows, 3.0 * static_cast<double>(keys), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t item = begin; item < end; ++item) {
      float* s = base + item * keys;
      const std::int64_t r = row0 + item % rows;
      float max_score = -INFINITY;
      for (std::int64_t j = 0; j < keys; ++j) {
        s[j] = plan.visible(r, key0 + j) ? scale * s[j] : -INFINITY;
        max_score = std::max(max_score, s[j]);
      }
      if (max_score == -INFINITY) {  // no visible key: zeros
        std::fill(s, s + keys, 0.0f);
        continue;
      }
      float sum = sink ? std::exp(sink[item / rows] - max_score) : 0.0f;
      for (std::int64_t j = 0; j < keys; ++j) sum += s[j] = std::exp(s[j] - max_score);  // masked: exp(-inf) = 0
      for (std::int64_t j = 0; j < keys; ++j) s[j] /= sum;
    }
  });
}

bool CpuBackend::fused_attention_fits(std::int64_t qk_dim, std::int64_t v_dim) const {
  return fused_max_dims_ == 0 || std::max(qk_dim, v_dim) <= fused_max_dims_;
}

}  // namespace hdlab::executor::cpu
