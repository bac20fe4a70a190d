#pragma once
// The layer-layout strip and the layer table, computed without Qt: per layer of the
// effective (grown) backbone, the attention the design runs there, the FFN, the KV-mirror
// pairing, the loop role and the pipeline stage.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hdlab/model/design.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::gui_core {

using model::LoopRole;
using model::to_string;  // to_string(LoopRole), beside this header's own overloads

// What a layer's attention is under the design; one colour each in the strip.
enum class LayerAttentionKind {
  full,     // causal over every position (baseline full, HD full)
  sliding,  // the backbone's sliding window (baseline, VWN, looped)
  local,    // HD local(w) over expanded positions
  intra,    // HD intra-stream
  phd,      // PHD visibility (its variant)
};
const char* to_string(LayerAttentionKind k);

struct LayerStripCell {
  std::int64_t layer = 0;
  LayerAttentionKind attention = LayerAttentionKind::full;
  std::int64_t window = 0;           // positions the window spans (sliding: tokens, local: expanded); 0 = none
  model::AttentionKind backbone = model::AttentionKind::full;
  std::int64_t backbone_window = 0;  // tokens; 0 for full layers
  bool moe = false;                  // routed-expert FFN (false: dense SwiGLU)
  std::int64_t mirror_source = -1;   // KV-mirror: the early layer whose input feeds K/V
  bool final_copy_only = false;      // HD KV-mirror layers run only the final stream's queries
  LoopRole loop = LoopRole::none;
  std::int64_t grown_from = -1;      // depth growth: the base layer this layer copies
  std::int64_t stage = -1;           // pipeline device; -1 = no pipeline
};

struct LayerStrip {
  std::vector<LayerStripCell> layers;
  std::vector<std::pair<std::int64_t, std::int64_t>> mirror_pairs;  // (source, mirrored), source < mirrored
  std::int64_t loop_iterations = 1;
  std::int64_t stages = 0;  // 0 = no pipeline
  std::string method;       // "baseline", "hd", ...
  std::int64_t copies = 1;  // HD n / PHD K (1 otherwise)
};

// `layer_stage`: empty, or one stage per effective layer (e.g. a pipeline partition).
// ConfigError("/pipeline", ...) when its size does not match the layer count.
LayerStrip layer_strip(const model::Config& c, const std::vector<std::int64_t>& layer_stage = {});

// A one-line description for a tooltip or a table cell, e.g.
// "layer 7: HD local (window 16,384 positions); MoE FFN; K/V from layer 3's input".
std::string describe(const LayerStripCell& cell, std::int64_t copies);

}  // namespace hdlab::gui_core
