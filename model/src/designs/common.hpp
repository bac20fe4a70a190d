#pragma once
// What the design modules share: the backbone's own schedule, attention and caches, which
// every design that keeps one position per token (baseline, VWN, looped) answers with,
// and small helpers for reading design blocks.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hdlab/model/design.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::model::designs::common {

// Editor page fields (interface.hpp's FormField), the kind's members set and the rest
// left at their defaults.
inline FormField integer_field(std::string key, std::string label, double min, double max, double start,
                               std::string tooltip, std::string unit = {}) {
  FormField f;
  f.key = std::move(key);
  f.label = std::move(label);
  f.kind = FormField::Kind::integer;
  f.min = min;
  f.max = max;
  f.start = start;
  f.tooltip = std::move(tooltip);
  f.unit = std::move(unit);
  return f;
}

// A flag's `caption` is the text beside its check box.
inline FormField flag_field(std::string key, std::string label, bool start, std::string tooltip,
                            std::string caption = {}) {
  FormField f;
  f.unit = std::move(caption);
  f.key = std::move(key);
  f.label = std::move(label);
  f.kind = FormField::Kind::flag;
  f.start = start ? 1 : 0;
  f.tooltip = std::move(tooltip);
  return f;
}

inline FormField choice_field(std::string key, std::string label, std::vector<FormChoice> choices,
                              std::string start, std::string tooltip) {
  FormField f;
  f.key = std::move(key);
  f.label = std::move(label);
  f.kind = FormField::Kind::choice;
  f.choices = std::move(choices);
  f.start_choice = std::move(start);
  f.tooltip = std::move(tooltip);
  return f;
}

// Each layer once, its cache the layer's own.
inline std::vector<LayerRun> straight_runs(std::int64_t num_layers) {
  std::vector<LayerRun> runs;
  for (std::int64_t l = 0; l < num_layers; ++l) runs.push_back(LayerRun{l, 0, l, false, true, false});
  return runs;
}

inline LayerAttentionRole backbone_role(const Backbone& b, std::int64_t layer) {
  const LayerAttention& att = b.layers[static_cast<std::size_t>(layer)];
  LayerAttentionRole role;
  role.base_kind = att.kind;
  role.base_window = att.kind == AttentionKind::sliding ? att.window : att.kind == AttentionKind::chunked ? att.chunk : 0;
  return role;
}

// Tokens before the current one that a chunked layer still sees after c tokens: those of
// the current chunk, c mod chunk (base_window holds the chunk).
inline double chunk_offset(const LayerAttentionRole& layer, double c) {
  const auto C = static_cast<double>(layer.base_window);
  return c - std::floor(c / C) * C;
}

// Decode-step attention of a layer with one copy per token: its query sees the cache
// (within the backbone's window) and itself.
inline DecodeAttention decode_one_copy(const LayerAttentionRole& layer, double c) {
  const double keys = layer.base_kind == AttentionKind::sliding ? std::min(c + 1, static_cast<double>(layer.base_window))
                      : layer.base_kind == AttentionKind::chunked ? chunk_offset(layer, c) + 1
                                                                   : c + 1;
  DecodeAttention w;
  w.rows_q = w.rows_kv = 1;
  w.pairs_exact = w.pairs_executed = w.kv_read = keys;
  w.kv_written = 1;
  return w;
}

// Entries a one-copy cache keeps after c tokens: all, a sliding layer's window - 1, or a
// chunked layer's tokens of the current chunk.
inline double kv_entries_one_copy(const LayerAttentionRole& layer, double c) {
  if (layer.base_kind == AttentionKind::chunked) return chunk_offset(layer, c);
  return layer.base_kind == AttentionKind::sliding ? std::min(c, static_cast<double>(layer.base_window - 1)) : c;
}

// A size knob's offered values plus the design's own, ascending, each once.
inline std::vector<double> with_current(std::vector<double> values, double current) {
  values.push_back(current);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

inline std::string num(std::int64_t v) { return std::to_string(v); }

// Hyper-connection designs (VWN, mHC) wrap each layer's two sublayers; a layer with one
// (a mixer-only or FFN-only layer, Nemotron-H's blocks) is refused at the design's block.
inline void refuse_single_sublayers(const Backbone& b, const ObjectReader& r, const char* design) {
  for (std::int64_t l = 0; l < b.num_layers; ++l)
    if (b.has_mixer(l) != b.has_ffn(l))
      fail(r.pointer(), std::string(design) + " wraps a mixer and an FFN per layer with its hyper-connections; layer " +
                            num(l) + " has only " + (b.has_mixer(l) ? "a mixer" : "an FFN") +
                            " (a single-sublayer backbone): not modelled");
}

// Notes a key a design block left out and the value taken (Design::defaults); defined in
// registry.cpp, also used for the growth block (design_io.cpp).
void note_default(DesignDefaults& defaults, const ObjectReader& r, const char* key, const std::string& value);

}  // namespace hdlab::model::designs::common
