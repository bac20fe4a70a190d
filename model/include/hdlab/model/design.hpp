#pragma once
// Designs that buy extra computation from a fixed backbone (methods.md sections 1-5), and
// the registry of design modules. A Design holds one method and an optional growth step
// that first turns the backbone into a bigger one.
//
// Each method is a module (designs/<name>.hpp, model/src/designs/<name>.cpp) that owns its
// JSON block, defaults, validation, label, schedule, masks, caches, parameters and size
// knob. Everything outside the modules asks the questions below, each answered by one
// std::visit over Method; the DesignModule concept makes a method added to Method without
// a complete module a compile error here, never a design silently run as the baseline.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "hdlab/model/backbone.hpp"
#include "hdlab/model/designs/baseline.hpp"
#include "hdlab/model/designs/hd.hpp"
#include "hdlab/model/designs/interface.hpp"
#include "hdlab/model/designs/looped.hpp"
#include "hdlab/model/designs/mhc.hpp"
#include "hdlab/model/designs/phd.hpp"
#include "hdlab/model/designs/vwn.hpp"

namespace hdlab::model {

// The registered methods; the first is the default (a design with no method given).
using Method = std::variant<BaselineDesign, HdDesign, PhdDesign, VwnDesign, LoopedDesign, MhcDesign>;

// Every module answers the questions listed by the DesignModule concept (designs/registry.cpp),
// checked for each alternative at compile time.

// ---- the registry's questions, one exhaustive dispatch each ---------------------------

// The method's JSON key and name: "baseline", "hd", "phd", "vwn", "looped", "mhc".
const char* method_name(const Method& m);
// Every registered method's key, in Method's order.
std::vector<std::string> design_keys();
// Design JSON documents ({"<key>": {...}}) each module offers for the conformance suite,
// for a backbone with at least 4 layers, hidden size divisible by 4 and a KV-mirror-free
// layout; in Method's order, grouped by key.
std::vector<std::pair<std::string, std::string>> conformance_examples();
// The editor page of the method registered under `key` (designs/interface.hpp); every key
// of design_keys() has one. An unknown key throws std::out_of_range.
DesignForm design_form(const std::string& key);

DesignFeatures design_features(const Method& m);
// A short label for charts: "HD n=4", "PHD-swa K=2", "VWN n/m=4/2", "looped x3", "baseline".
std::string method_label(const Method& m);
// What, beside method_label, tells apart designs of one method and size in a comparison
// ("30 intra, 6 full" of an HD design); "" when the label says it all.
std::string label_detail(const Method& m);
// Keys of the method's JSON block whose values are those its parser derives from backbone
// `b` when the key is left out (HD's window and RoPE theta): the editor shows them as not
// given (the field's min_text), so that they follow the next backbone or size.
std::vector<std::string> derived_fields(const Method& m, const Backbone& b);
// The method's part of describe(): "hd n=4 (20 intra, 10 local, 6 full)".
void describe_method(const Method& m, std::ostream& s);
// The knob that sizes the method; nullopt for the baseline. with_size sets it to x (HD
// keeps its local window's span in tokens); ConfigError naming the field when x does not fit.
std::optional<SizeKnob> size_knob(const Method& m);
Method with_size(const Method& m, double x);

// How a layer's attention looks under the method (the backbone's kind and window, the
// stream kind of HD layers, mirrored layers running the final stream only).
LayerAttentionRole layer_role(const Method& m, const Backbone& b, std::int64_t layer);
// A prefill of `tokens` tokens that computes the hidden copies of only its last tokens
// (PHD plain: the last token; CSWA: the last chunk's; methods.md section 2): how many.
// nullopt when every copy of every token is computed.
std::optional<std::int64_t> prefill_tail(const Method& m, std::int64_t tokens);
// One decode step's attention in a layer after `context` cached tokens.
DecodeAttention decode_attention(const Method& m, const LayerAttentionRole& layer, double context, Layout layout,
                                 bool final_only_decode);
// Cache entries a layer keeps after `context` tokens: what the next token can still see.
double kv_entries(const Method& m, const LayerAttentionRole& layer, double context);

// JSON of the method alone: {"<key>": {...}} is merged into `design`.
void method_to_json(const Method& m, Json& design);
// Reads the one method block a design object holds (or none: the baseline), checked
// against the (grown) backbone; a second method block is an error naming it.
Method parse_method(ObjectReader& r, const Backbone& b, DesignDefaults& defaults);
// The method's layer mask adjustments (after the backbone's own) and parameter additions.
void shape_layer_mask(const Method& m, const Backbone& b, std::int64_t layer, MaskSpec& mask);
void add_method_params(const Method& m, const Backbone& b, ParamCounts& p);
Layout default_layout(const Method& m);

// ---- growth and the whole design ------------------------------------------------------

// Growth of a trained MoE: depth by depth_factor, experts and top-k by width_factor.
enum class DepthMode { interpose, stack };
const char* to_string(DepthMode m);
struct GrowthDesign {
  std::int64_t depth_factor = 1;
  DepthMode depth_mode = DepthMode::interpose;
  std::int64_t width_factor = 1;
  double noise_alpha = 0.0;  // new experts = copies + N(0, (alpha * std(original))^2)
  bool operator==(const GrowthDesign&) const = default;
};

struct Design {
  std::string name;  // free label; derived from the method when empty
  Method method = BaselineDesign{};
  std::optional<GrowthDesign> growth;
  // Keys the design's JSON left out and the value taken for each, by JSON pointer
  // ("/design/hd/rope" -> "expanded (hdlab's default)"): `hdlab check` prints them.
  DesignDefaults defaults;
  // Designs are equal when they compute the same thing; how they were written (which
  // values came from defaults) does not count.
  bool operator==(const Design& o) const { return name == o.name && method == o.method && growth == o.growth; }
};

// A validated backbone + design. `effective` is the backbone after growth, the one
// the method applies to; everything downstream uses it.
struct Config {
  Backbone base;
  Design design;
  Backbone effective;
  bool operator==(const Config&) const = default;
};

// Applies growth to a backbone's configuration (layer count, experts, top-k).
Backbone grow(const Backbone& base, const GrowthDesign& g);
// For depth growth: which base layer each grown layer copies.
std::vector<std::int64_t> grown_layer_sources(std::int64_t base_layers, const GrowthDesign& g);

// A short human label: "hd n=4 (20 intra, 10 local, 6 full)".
std::string describe(const Design& d);

}  // namespace hdlab::model
