#include "hdlab/gui_core/layer_strip.hpp"

#include <algorithm>

#include "hdlab/gui_core/units.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::gui_core {

const char* to_string(LayerAttentionKind k) {
  switch (k) {
    case LayerAttentionKind::full: return "full";
    case LayerAttentionKind::sliding: return "sliding";
    case LayerAttentionKind::local: return "local";
    case LayerAttentionKind::intra: return "intra";
    case LayerAttentionKind::phd: return "phd";
  }
  return "?";
}

namespace {

// The attention a layer runs: HD picks per layer, PHD applies its mask everywhere,
// every other method keeps the backbone's kind.
void set_attention(const model::Config& c, const model::DesignFeatures& f, LayerStripCell& cell) {
  const auto& bl = c.effective.layers[static_cast<std::size_t>(cell.layer)];
  cell.backbone = bl.kind;
  cell.backbone_window = bl.kind == model::AttentionKind::sliding ? bl.window : 0;
  const model::MaskSpec mask = model::layer_mask(c, cell.layer, 1);
  if (f.streams) {
    switch (model::layer_role(c.design.method, c.effective, cell.layer).stream_kind) {
      case model::HdLayerKind::full: cell.attention = LayerAttentionKind::full; break;
      case model::HdLayerKind::intra: cell.attention = LayerAttentionKind::intra; break;
      case model::HdLayerKind::local:
        cell.attention = LayerAttentionKind::local;
        cell.window = mask.window;  // expanded positions
        break;
    }
    cell.final_copy_only = mask.final_copy_queries_only;
  } else if (mask.kind == model::MaskSpec::Kind::phd) {
    cell.attention = LayerAttentionKind::phd;
  } else {
    cell.attention = bl.kind == model::AttentionKind::sliding ? LayerAttentionKind::sliding : LayerAttentionKind::full;
    cell.window = cell.backbone_window;
  }
}

}  // namespace

LayerStrip layer_strip(const model::Config& c, const std::vector<std::int64_t>& layer_stage) {
  const std::int64_t L = c.effective.num_layers;
  if (!layer_stage.empty() && static_cast<std::int64_t>(layer_stage.size()) != L)
    throw model::ConfigError("/pipeline", "stage list has " + std::to_string(layer_stage.size()) +
                                              " entries for " + std::to_string(L) + " layers");
  LayerStrip s;
  s.method = model::method_name(c.design.method);
  s.copies = model::copies_per_token(c.design.method);
  const model::DesignFeatures f = model::design_features(c.design.method);
  s.loop_iterations = f.loop_iterations;
  std::vector<std::int64_t> sources;
  if (c.design.growth && c.design.growth->depth_factor > 1)
    sources = model::grown_layer_sources(c.base.num_layers, *c.design.growth);
  for (std::int64_t l = 0; l < L; ++l) {
    LayerStripCell cell;
    cell.layer = l;
    set_attention(c, f, cell);
    cell.moe = c.effective.is_moe_layer(l);
    cell.mirror_source = c.effective.mirror_source(l);
    if (cell.mirror_source >= 0) s.mirror_pairs.emplace_back(cell.mirror_source, l);
    cell.loop = model::layer_schedule(c.design.method, l).role;
    if (!sources.empty()) cell.grown_from = sources[static_cast<std::size_t>(l)];
    if (!layer_stage.empty()) {
      cell.stage = layer_stage[static_cast<std::size_t>(l)];
      s.stages = std::max(s.stages, cell.stage + 1);
    }
    s.layers.push_back(cell);
  }
  return s;
}

std::string describe(const LayerStripCell& cell, std::int64_t copies) {
  std::string out = "layer " + std::to_string(cell.layer) + ": ";
  switch (cell.attention) {
    case LayerAttentionKind::full: out += copies > 1 ? "HD full (all streams)" : "full causal"; break;
    case LayerAttentionKind::sliding:
      out += "sliding window of " + format_count(cell.window) + " tokens";
      break;
    case LayerAttentionKind::local:
      out += "HD local (window " + format_count(cell.window) + " expanded positions)";
      break;
    case LayerAttentionKind::intra: out += "HD intra-stream (each stream sees itself)"; break;
    case LayerAttentionKind::phd: out += "PHD mask"; break;
  }
  if (cell.attention != LayerAttentionKind::sliding)
    out += cell.backbone == model::AttentionKind::sliding
               ? "; backbone: sliding " + format_count(cell.backbone_window) + " tokens"
               : "; backbone: full";
  out += cell.moe ? "; MoE FFN" : "; dense FFN";
  if (cell.mirror_source >= 0) out += "; K/V from layer " + std::to_string(cell.mirror_source) + "'s input";
  if (cell.final_copy_only) out += " (final stream's queries only)";
  if (cell.loop != LoopRole::none) out += std::string("; ") + to_string(cell.loop);
  if (cell.grown_from >= 0) out += "; grown from base layer " + std::to_string(cell.grown_from);
  if (cell.stage >= 0) out += "; pipeline stage " + std::to_string(cell.stage);
  return out;
}

}  // namespace hdlab::gui_core
