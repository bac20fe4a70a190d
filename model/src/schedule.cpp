#include "hdlab/model/schedule.hpp"

#include <algorithm>

namespace hdlab::model {

const char* to_string(LoopRole r) {
  switch (r) {
    case LoopRole::none: return "";
    case LoopRole::prelude: return "prelude";
    case LoopRole::recurrent: return "recurrent";
    case LoopRole::coda: return "coda";
  }
  return "?";
}

std::int64_t kv_cache_positions(const MaskSpec& m, std::int64_t max_tokens) {
  const std::int64_t all = max_tokens * m.copies;
  switch (m.kind) {
    case MaskSpec::Kind::causal:  // chunked: the current chunk's positions, compacted as a window's
      return m.chunk > 0 ? std::min(all, 2 * (m.chunk * m.copies + m.copies)) : all;
    case MaskSpec::Kind::intra: return all;
    case MaskSpec::Kind::sliding: return std::min(all, 2 * (m.window + m.copies));
    case MaskSpec::Kind::phd: return max_tokens + m.phd_W + m.copies;
  }
  return all;
}

std::optional<RecurrentBlock> recurrent_block(const Method& m, std::int64_t num_layers) {
  std::optional<RecurrentBlock> block;
  for (std::int64_t l = 0; l < num_layers; ++l) {
    const LayerSchedule s = layer_schedule(m, l);
    if (s.role != LoopRole::recurrent) continue;
    if (!block) block = RecurrentBlock{l, 0, s.passes};
    ++block->layers;
  }
  return block;
}

}  // namespace hdlab::model
