#include "kernel_shapes.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <utility>

#include "hdlab/model/mask.hpp"

namespace hdlab::calibration::detail {

std::optional<model::DType> model_dtype(const std::string& name) {
  if (name == "bfloat16") return model::DType::bf16;
  if (name == "float16" || name == "half") return model::DType::fp16;
  if (name == "fp8") return model::DType::fp8;
  if (name == "float32") return model::DType::fp32;
  return std::nullopt;
}

double element_bytes(const std::string& name) {
  const auto size = precision_size(name);
  return size ? size->activation_bytes : 2;
}

simulator::GemmShape gemm_shape(const GemmRow& r) { return {r.m, r.n, r.k}; }

namespace {

// Executed pairs of one sequence's mask at 128 x 128 tiles. The tables repeat a few dozen
// (length, window) pairs thousands of times: computed once each.
double executed_pairs(double tokens, double window) {
  static std::mutex mutex;
  static std::map<std::pair<double, double>, double> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(tokens, window);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  model::MaskSpec m;
  m.tokens = static_cast<std::int64_t>(tokens);
  if (window > 0 && window < tokens) {
    m.kind = model::MaskSpec::Kind::sliding;
    m.window = static_cast<std::int64_t>(window);
  }
  const double pairs = static_cast<double>(model::visible_tiles(m, model::Layout::interleaved, 128, 128).executed_pairs);
  cache.emplace(key, pairs);
  return pairs;
}

}  // namespace

simulator::PrefillAttentionShape prefill_shape(const AttentionRow& r) {
  simulator::PrefillAttentionShape s;
  s.seqs = r.batch;
  s.heads = r.heads;
  s.kv_heads = r.kv_heads;
  s.head_dim = r.head_dim;
  s.rows = r.isl;
  s.pairs = executed_pairs(r.isl, r.window);
  s.longest_row_keys = r.window > 0 ? std::min(r.window, r.isl) : r.isl;
  s.kv_positions = r.isl;
  s.element_bytes = element_bytes(r.attn_dtype);
  s.kv_bytes = element_bytes(r.kv_dtype);
  return s;
}

simulator::DecodeAttentionShape decode_shape(const AttentionRow& r) {
  simulator::DecodeAttentionShape s;
  s.seqs = r.batch;
  s.heads = r.heads;
  s.kv_heads = r.kv_heads;
  s.head_dim = r.head_dim;
  s.query_rows = 1;
  s.context = r.isl + r.step;
  s.keys = r.window > 0 ? std::min(r.window, s.context) : s.context;
  s.kv_bytes = element_bytes(r.kv_dtype);
  s.element_bytes = element_bytes(r.attn_dtype);
  return s;
}

bool reads_cache_above_dram(const AttentionRow& r, double memory_gb_per_s, double l2_cache_mb) {
  const simulator::DecodeAttentionShape s = decode_shape(r);
  const double cache_bytes = s.seqs * s.keys * s.kv_heads * s.head_dim * 2 * s.kv_bytes;
  return cache_bytes > l2_cache_mb * 1e6 && cache_bytes > r.seconds * memory_gb_per_s * 1e9;
}

bool reads_cache_above_dram(const AttentionRow& r, const simulator::HardwareProfile& device) {
  return reads_cache_above_dram(r, device.memory_bandwidth_gb_per_s, device.l2_cache_mb.value_or(0));
}

std::optional<simulator::Collective> collective_of(const std::string& op) {
  if (op == "all_reduce") return simulator::Collective::all_reduce;
  if (op == "all_gather") return simulator::Collective::all_gather;
  if (op == "reduce_scatter") return simulator::Collective::reduce_scatter;
  if (op == "alltoall" || op == "all_to_all") return simulator::Collective::all_to_all;
  return std::nullopt;
}

simulator::MoeShape moe_shape(const MoeRow& r) {
  simulator::MoeShape s;
  // The collector gives every expert-parallel rank all the tokens (each rank routes them all,
  // keeping the copies bound for its experts).
  s.layer_tokens = r.tokens;
  const double local = r.experts / r.ep;
  if (const auto alpha = power_law_alpha(r.distribution)) {
    const RankLoad load = power_law_rank_load(r.tokens, r.experts, r.topk, r.ep, *alpha);
    s.tokens = load.copies;
    s.experts_hit = std::clamp(load.experts_hit, 1.0, local);
  } else {
    s.tokens = r.tokens * r.topk / r.ep;
    // Experts of this rank that at least one of the tokens picks: each expert is missed by a
    // token with probability 1 - k/E.
    const double miss = r.topk >= r.experts ? 0 : std::exp(r.tokens * std::log1p(-r.topk / r.experts));
    s.experts_hit = std::max(1.0, local * (1 - miss));
  }
  s.hidden = r.hidden;
  s.inter = r.inter / r.tp;
  s.gated = r.kernel != "moe_torch_flow_nongated";
  s.element_bytes = element_bytes(r.dtype);
  return s;
}

}  // namespace hdlab::calibration::detail
