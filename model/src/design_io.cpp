// JSON in and out for designs: the name, growth and its checks; the method's block is
// read and written by its module (designs/), through the registry.
#include "hdlab/model/config_io.hpp"

#include "designs/common.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::model {

namespace {

using designs::common::note_default;
using designs::common::num;
// Keys a design leaves out: pointer -> the value taken (Design::defaults).
using Defaults = DesignDefaults;

GrowthDesign parse_growth(ObjectReader r, const Backbone& base, Defaults& defaults) {
  note_default(defaults, r, "depth_factor", "1");
  note_default(defaults, r, "depth_mode", "interpose");
  note_default(defaults, r, "width_factor", "1");
  note_default(defaults, r, "noise_alpha", "0");
  GrowthDesign g;
  g.depth_factor = r.integer("depth_factor", 1, 1, Limits::max_growth_factor);
  g.depth_mode = r.choice<DepthMode>("depth_mode", {{"interpose", DepthMode::interpose}, {"stack", DepthMode::stack}},
                                     DepthMode::interpose);
  g.width_factor = r.integer("width_factor", 1, 1, Limits::max_growth_factor);
  g.noise_alpha = r.number("noise_alpha", 0.0, 0.0, 10.0);
  r.finish();
  if (base.num_layers * g.depth_factor > Limits::max_layers)
    fail(r.at("depth_factor"), "grows " + num(base.num_layers) + " layers past the limit of " + num(Limits::max_layers));
  if (g.depth_factor > 1 && g.depth_mode == DepthMode::stack) {
    if (base.kv_mirror_layers > 0)
      fail(r.at("depth_mode"), "stacking would break the backbone's U-shaped KV-mirror pairs; use interpose");
    if (base.moe && base.moe->first_dense_layers > 0)
      fail(r.at("depth_mode"), "stacking would put the leading dense layers mid-stack; use interpose");
  }
  if (g.depth_factor > 1 && base.moe && base.moe->layer_step > 1)
    fail(r.at("depth_factor"), "depth growth of interleaved MoE/dense layers (moe/layer_step " +
                                   num(base.moe->layer_step) + ") is not modelled");
  if (g.width_factor > 1) {
    if (!base.moe) fail(r.at("width_factor"), "width growth needs an MoE backbone (this one has a dense FFN)");
    if (base.moe->num_experts * g.width_factor > Limits::max_experts)
      fail(r.at("width_factor"), "grows " + num(base.moe->num_experts) + " experts past the limit of " +
                                     num(Limits::max_experts));
  }
  return g;
}

}  // namespace

Design parse_design(const Json& j, const Backbone& base, const std::string& pointer) {
  ObjectReader r(j, pointer);
  Design d;
  d.name = r.string("name", "");
  if (auto g = r.optional_object("growth")) d.growth = parse_growth(*g, base, d.defaults);
  const Backbone b = d.growth ? grow(base, *d.growth) : base;
  d.method = parse_method(r, b, d.defaults);
  r.finish();
  return d;
}

Json to_json(const Design& d) {
  Json j = Json::object();
  if (!d.name.empty()) j["name"] = d.name;
  method_to_json(d.method, j);
  if (d.growth) {
    const auto& g = *d.growth;
    j["growth"] = {{"depth_factor", g.depth_factor}, {"depth_mode", to_string(g.depth_mode)},
                   {"width_factor", g.width_factor}, {"noise_alpha", g.noise_alpha}};
  }
  return j;
}

}  // namespace hdlab::model
