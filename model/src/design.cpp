#include "hdlab/model/design.hpp"

#include <sstream>

namespace hdlab::model {

const char* to_string(DepthMode m) { return m == DepthMode::interpose ? "interpose" : "stack"; }

std::vector<std::int64_t> grown_layer_sources(std::int64_t base_layers, const GrowthDesign& g) {
  // interpose: l0 l0 l1 l1 ... (each layer k times in place); stack: l0..ln-1 repeated k times.
  std::vector<std::int64_t> src;
  src.reserve(static_cast<std::size_t>(base_layers * g.depth_factor));
  for (std::int64_t i = 0; i < base_layers * g.depth_factor; ++i)
    src.push_back(g.depth_mode == DepthMode::interpose ? i / g.depth_factor : i % base_layers);
  return src;
}

Backbone grow(const Backbone& base, const GrowthDesign& g) {
  Backbone b = base;
  if (g.depth_factor > 1) {
    const auto src = grown_layer_sources(base.num_layers, g);
    b.layers.clear();
    for (std::int64_t s : src) b.layers.push_back(base.layers[static_cast<std::size_t>(s)]);
    b.mixers.clear();  // a grown layer keeps its source's token mixer (linear attention or attention)
    for (std::int64_t s = 0; s < static_cast<std::int64_t>(src.size()) && !base.mixers.empty(); ++s)
      b.mixers.push_back(base.mixer(src[static_cast<std::size_t>(s)]));
    b.num_layers = static_cast<std::int64_t>(src.size());
    // Interposition keeps the U-shaped mirror pairs and the leading dense block in place,
    // each k times longer (stacking with either is refused by validation).
    b.kv_mirror_layers = base.kv_mirror_layers * g.depth_factor;
    if (b.moe) b.moe->first_dense_layers = base.moe->first_dense_layers * g.depth_factor;
  }
  if (g.width_factor > 1 && b.moe) {
    b.moe->num_experts *= g.width_factor;
    b.moe->top_k *= g.width_factor;
  }
  if (g.depth_factor > 1 || g.width_factor > 1) {
    std::ostringstream name;
    name << base.name << " grown";
    if (g.depth_factor > 1) name << " depth x" << g.depth_factor << " (" << to_string(g.depth_mode) << ")";
    if (g.width_factor > 1) name << " width x" << g.width_factor;
    b.name = name.str();
  }
  return b;
}

std::string describe(const Design& d) {
  std::ostringstream s;
  describe_method(d.method, s);
  if (d.growth && (d.growth->depth_factor > 1 || d.growth->width_factor > 1)) {
    s << " + growth";
    if (d.growth->depth_factor > 1) s << " depth x" << d.growth->depth_factor << " " << to_string(d.growth->depth_mode);
    if (d.growth->width_factor > 1) s << " width x" << d.growth->width_factor;
  }
  return s.str();
}

}  // namespace hdlab::model
