#pragma once
// What the window shows beside the numbers: the tab, the selected layer, the mask view's
// picture settings and the presets the pickers show. Saved as a session's "gui" object
// (simulator/session_io.hpp; the CLI leaves it alone) and restored with it. Qt-free: the
// window maps these to its widgets.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hdlab::gui_core {

// 0 (tokens, tiles) and "auto" (layout): the view follows the cost model (the scenario's
// kernel tile and layout, two tiles a side of tokens) until the user picks a value.
struct MaskViewSettings {
  std::int64_t tokens = 0;      // tokens in the picture (positions = tokens x positions per token); 0: auto
  std::string layout = "auto";  // "auto": the cost model's; else interleaved | stream_major | phd_split
  std::int64_t tile_q = 0;      // tile rows in the picture [query positions]; 0: the scenario's
  std::int64_t tile_k = 0;      // tile columns in the picture [key positions]; 0: the scenario's
  bool tiles = true;            // the tile grid drawn
  bool operator==(const MaskViewSettings&) const = default;
};

struct ViewSettings {
  std::string tab = "costs";  // one of view_tabs()
  std::int64_t layer = 0;     // the selected layer (the window clamps it to the model's layers)
  MaskViewSettings mask;
  // The profile files the pickers show ("" when none). The session's backbone, design and
  // hardware are inline; these only put the pickers back on the preset that was loaded.
  std::string model_preset, design_preset, hardware_preset;
  bool operator==(const ViewSettings&) const = default;
};

// The tabs by name, in the window's order: costs, masks, layers, trade-offs, pipeline,
// validation, serving, compare.
const std::vector<std::string>& view_tabs();

// Every key optional (the defaults above); unknown keys and out-of-range values are
// ConfigErrors at their pointer (/gui/mask/tokens ...).
ViewSettings parse_view_settings(const nlohmann::json& j, const std::string& pointer = "/gui");
nlohmann::json to_json(const ViewSettings& v);

}  // namespace hdlab::gui_core
