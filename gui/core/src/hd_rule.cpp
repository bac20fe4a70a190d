#include "hdlab/gui_core/hd_rule.hpp"

#include <algorithm>

namespace hdlab::gui_core {

bool edits_layer_kinds(const std::string& key) {
  const std::vector<std::string> keys = model::design_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end() && model::design_form(key).layer_kinds;
}

namespace {

std::optional<model::HdLayerKind> kind_named(const model::Json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  if (s == "full") return model::HdLayerKind::full;
  if (s == "local") return model::HdLayerKind::local;
  if (s == "intra") return model::HdLayerKind::intra;
  return std::nullopt;
}

}  // namespace

std::vector<model::HdLayerKind> apply_rule(const HdRule& rule, const model::Backbone& b) {
  // The order config_io's rule parser uses: full_every wins over the sliding mapping,
  // which wins over "rest".
  std::vector<model::HdLayerKind> kinds;
  kinds.reserve(b.layers.size());
  for (std::size_t l = 0; l < b.layers.size(); ++l) {
    if (rule.full_every > 0 && (l + 1) % static_cast<std::size_t>(rule.full_every) == 0)
      kinds.push_back(model::HdLayerKind::full);
    else if (b.layers[l].kind == model::AttentionKind::sliding)
      kinds.push_back(rule.sliding);
    else
      kinds.push_back(rule.rest);
  }
  return kinds;
}

std::optional<HdRule> rule_from_layers_json(const model::Json* layers) {
  if (!layers) return HdRule{};
  if (const auto k = kind_named(*layers)) return HdRule{*k, 0, *k};
  if (!layers->is_object() || layers->contains("full_layers")) return std::nullopt;
  HdRule rule{model::HdLayerKind::local, 0, model::HdLayerKind::intra};
  if (const auto it = layers->find("sliding"); it != layers->end())
    if (const auto k = kind_named(*it)) rule.sliding = *k;
  if (const auto it = layers->find("rest"); it != layers->end())
    if (const auto k = kind_named(*it)) rule.rest = *k;
  if (const auto it = layers->find("full_every"); it != layers->end() && it->is_number_integer())
    rule.full_every = it->get<std::int64_t>();
  return rule;
}

std::optional<HdRule> fit_rule(const std::vector<model::HdLayerKind>& kinds, const model::Backbone& b) {
  if (kinds.size() != b.layers.size()) return std::nullopt;
  using K = model::HdLayerKind;
  // 9 kind pairs x (L + 1) periods, each checked in O(L): ~35,000 steps at 61 layers.
  for (std::int64_t every = 0; every <= b.num_layers; ++every)
    for (K sliding : {K::local, K::full, K::intra})
      for (K rest : {K::full, K::intra, K::local}) {
        const HdRule rule{sliding, every, rest};
        if (apply_rule(rule, b) == kinds) return rule;
      }
  return std::nullopt;
}

}  // namespace hdlab::gui_core
