#include "hdlab/gui_core/view_settings.hpp"

#include <algorithm>

#include "hdlab/gui_core/mask_picture.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::gui_core {

const std::vector<std::string>& view_tabs() {
  static const std::vector<std::string> tabs = {"costs",      "masks",      "layers",  "trade-offs",
                                                    "pipeline",   "validation", "serving", "compare"};
  return tabs;
}

namespace {

std::string one_of(model::ObjectReader& r, const char* key, const std::string& dflt,
                   const std::vector<std::string>& names) {
  const std::string v = r.string(key, dflt);
  if (std::find(names.begin(), names.end(), v) != names.end()) return v;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  model::fail(r.at(key), "must be one of " + list + ", got \"" + v + "\"");
}

}  // namespace

ViewSettings parse_view_settings(const nlohmann::json& j, const std::string& pointer) {
  model::ObjectReader r(j, pointer);
  ViewSettings v;
  v.tab = one_of(r, "tab", v.tab, view_tabs());
  v.layer = r.integer("layer", v.layer, 0, model::Limits::max_layers * model::Limits::max_growth_factor);
  if (auto m = r.optional_object("mask")) {
    v.mask.tokens = m->integer("tokens", v.mask.tokens, 0, max_picture_positions);
    v.mask.layout = one_of(*m, "layout", v.mask.layout, {"auto", "interleaved", "stream_major", "phd_split"});
    v.mask.tile_q = m->integer("tile_q", v.mask.tile_q, 0, 4096);  // the view's spin box range [positions]
    v.mask.tile_k = m->integer("tile_k", v.mask.tile_k, 0, 4096);
    v.mask.tiles = m->boolean("tiles", v.mask.tiles);
    m->finish();
  }
  if (auto p = r.optional_object("presets")) {
    v.model_preset = p->string("model", "");
    v.design_preset = p->string("design", "");
    v.hardware_preset = p->string("hardware", "");
    p->finish();
  }
  r.finish();
  return v;
}

nlohmann::json to_json(const ViewSettings& v) {
  return {{"tab", v.tab},
          {"layer", v.layer},
          {"mask",
           {{"tokens", v.mask.tokens},
            {"layout", v.mask.layout},
            {"tile_q", v.mask.tile_q},
            {"tile_k", v.mask.tile_k},
            {"tiles", v.mask.tiles}}},
          {"presets", {{"model", v.model_preset}, {"design", v.design_preset}, {"hardware", v.hardware_preset}}}};
}

}  // namespace hdlab::gui_core
