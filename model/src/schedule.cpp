#include "hdlab/model/schedule.hpp"

#include <algorithm>

#include "hdlab/model/layer_program.hpp"

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

std::int64_t kv_positions_per_sequence(const Config& c, std::int64_t max_tokens) {
  std::int64_t positions = 0;
  for (std::int64_t l = 0; l < c.effective.num_layers; ++l)
    if (c.effective.is_attention_layer(l))  // a linear layer keeps a state instead, an FFN-only layer nothing
      positions += layer_schedule(c.design.method, l).kv_caches * kv_cache_positions(layer_mask(c, l, 1), max_tokens);
  return positions;
}

std::int64_t linear_state_elements_per_sequence(const Config& c) {
  const Backbone& b = c.effective;
  std::int64_t elements = 0;
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    if (!b.is_linear_layer(l)) continue;
    const auto states = static_cast<std::int64_t>(recurrent_states(c.design.method, layer_role(c.design.method, b, l)));
    const std::int64_t per_state = b.mixer(l) == MixerKind::mamba2
                                       ? b.mamba->state_elements() + b.mamba->conv_state_elements()
                                       : b.gdn->state_elements() + b.gdn->conv_state_elements();
    elements += layer_schedule(c.design.method, l).kv_caches * states * per_state;
  }
  return elements;
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
