#pragma once
// The HD layer rule the design editor's fields hold: a kind for the backbone's sliding
// layers, full attention on every k-th layer, a kind for the rest (config_io's rule
// object without "full_layers"). The editor shows the rule a loaded design was written
// with, or one fitted to its per-layer kinds, so that applying the rule to the same
// backbone gives back the same kinds and applying it to another backbone carries the
// design's intent over to that backbone's layer count.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/model/backbone.hpp"
#include "hdlab/model/design.hpp"
#include "hdlab/model/config_io.hpp"

namespace hdlab::gui_core {

// Whether the method registered under `key` has per-layer stream kinds the editor, the
// layer strip and the layer table edit (its DesignForm::layer_kinds; HD's, under its
// block's "layers" key); false for an unknown key.
bool edits_layer_kinds(const std::string& key);

struct HdRule {
  model::HdLayerKind sliding = model::HdLayerKind::local;  // the backbone's sliding-window layers
  std::int64_t full_every = 0;                             // layers l with (l+1) % k == 0 run full; 0 = none
  model::HdLayerKind rest = model::HdLayerKind::full;      // every other layer
  bool operator==(const HdRule&) const = default;
};

// One kind per layer of `b`, as config_io's rule parser gives them.
std::vector<model::HdLayerKind> apply_rule(const HdRule& rule, const model::Backbone& b);

// The rule a design's "hd"/"layers" value states, with config_io's defaults (absent:
// local in sliding layers, full elsewhere; a rule object: local, none, intra); nullopt
// for a per-layer list or a rule naming "full_layers", which the fields cannot hold.
// The value is assumed to have parsed.
std::optional<HdRule> rule_from_layers_json(const model::Json* layers);

// The rule that gives `kinds` on `b`, preferring no full_every, then the smallest; the
// sliding kind is "local" where the backbone has no sliding layer to decide it. nullopt
// when none does (kinds edited layer by layer).
std::optional<HdRule> fit_rule(const std::vector<model::HdLayerKind>& kinds, const model::Backbone& b);

}  // namespace hdlab::gui_core
