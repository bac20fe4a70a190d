#include "hdlab/model/design.hpp"

#include <sstream>

namespace hdlab::model {

const char* to_string(HdLayerKind kind) {
  switch (kind) {
    case HdLayerKind::full: return "full";
    case HdLayerKind::local: return "local";
    case HdLayerKind::intra: return "intra";
  }
  return "?";
}

const char* to_string(RopeConvention c) { return c == RopeConvention::expanded ? "expanded" : "token_index"; }

const char* to_string(PhdVariant v) {
  switch (v) {
    case PhdVariant::plain: return "plain";
    case PhdVariant::swa: return "swa";
    case PhdVariant::cswa: return "cswa";
  }
  return "?";
}

const char* to_string(VwnEmbedding e) { return e == VwnEmbedding::full ? "full" : "projected"; }
const char* to_string(LoopKv k) { return k == LoopKv::per_iteration ? "per_iteration" : "shared"; }
const char* to_string(DepthMode m) { return m == DepthMode::interpose ? "interpose" : "stack"; }

const char* method_name(const Method& m) {
  static constexpr const char* names[] = {"baseline", "hd", "phd", "vwn", "looped"};
  return names[m.index()];
}

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

namespace {

// One overload per design, no catch-all: a design added to Method without a label here
// does not compile.
struct DescribeMethod {
  std::ostringstream& s;
  void operator()(const BaselineDesign&) const { s << "baseline"; }
  void operator()(const HdDesign& hd) const {
    std::int64_t counts[3] = {0, 0, 0};
    for (auto k : hd.layer_kinds) counts[static_cast<int>(k)]++;
    s << "hd n=" << hd.n << " (" << counts[2] << " intra, " << counts[1] << " local, " << counts[0] << " full";
    if (counts[1] > 0) s << ", window " << hd.window;
    s << ")";
    if (hd.kv_mirror) s << " kv-mirror";
  }
  void operator()(const PhdDesign& phd) const {
    s << "phd";
    if (phd.variant != PhdVariant::plain) s << "-" << to_string(phd.variant);
    s << " K=" << phd.K;
    if (phd.variant != PhdVariant::plain) s << " W=" << phd.W;
    if (phd.variant == PhdVariant::cswa) s << " C=" << phd.C;
  }
  void operator()(const VwnDesign& v) const {
    s << "vwn m=" << v.m << " n=" << v.n << " (r=" << v.ratio() << ", " << (v.dynamic ? "dynamic" : "static")
      << (v.mtp ? ", mtp" : "") << ")";
  }
  void operator()(const LoopedDesign& l) const {
    s << "looped " << l.prelude << "+" << l.recurrent << "x" << l.iterations << "+" << l.coda << " (kv "
      << to_string(l.kv) << (l.input_injection ? ", injection" : "") << ")";
  }
};

}  // namespace

std::string describe(const Design& d) {
  std::ostringstream s;
  std::visit(DescribeMethod{s}, d.method);
  if (d.growth && (d.growth->depth_factor > 1 || d.growth->width_factor > 1)) {
    s << " + growth";
    if (d.growth->depth_factor > 1) s << " depth x" << d.growth->depth_factor << " " << to_string(d.growth->depth_mode);
    if (d.growth->width_factor > 1) s << " width x" << d.growth->width_factor;
  }
  return s.str();
}

}  // namespace hdlab::model
