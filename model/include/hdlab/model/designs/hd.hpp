#pragma once
// Hidden Decoding (methods.md section 1): token i, stream k sits at expanded position
// t = i*n + k; each layer attends over all streams (full), a window of expanded
// positions (local) or its own stream only (intra). Module: designs/hd.cpp.
#include <vector>

#include "hdlab/model/designs/forward.hpp"

namespace hdlab::model {

enum class HdLayerKind { full, local, intra };
const char* to_string(HdLayerKind kind);
// Positions RoPE sees in intra layers: the expanded index t, or the token index i.
enum class RopeConvention { expanded, token_index };
const char* to_string(RopeConvention c);

struct HdDesign {
  static constexpr const char* key = "hd";
  std::int64_t n = 1;                    // streams per token
  std::vector<HdLayerKind> layer_kinds;  // one per (grown) backbone layer
  std::int64_t window = 0;               // local(w) window over expanded positions
  RopeConvention rope = RopeConvention::expanded;
  bool kv_mirror = false;   // mirrored layers run only the final stream
  double rope_theta = 0.0;  // RoPE base used under HD (0 in JSON means "the backbone's")
  bool operator==(const HdDesign&) const = default;
};

namespace designs {
void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, HdDesign& out);
Json block_json(const HdDesign& d);
void describe(const HdDesign& d, std::ostream& s);
std::string short_label(const HdDesign& d);
std::string label_detail(const HdDesign& d);
DesignFeatures features(const HdDesign& d);
LayerSchedule layer_schedule(const HdDesign& d, std::int64_t layer);
std::vector<LayerRun> layer_runs(const HdDesign& d, std::int64_t num_layers);
LayerAttentionRole layer_role(const HdDesign& d, const Backbone& b, std::int64_t layer);
void shape_mask(const HdDesign& d, const Backbone& b, std::int64_t layer, MaskSpec& m);
Layout default_layout(const HdDesign& d);
void add_params(const HdDesign& d, const Backbone& b, ParamCounts& p);
std::optional<std::int64_t> prefill_tail(const HdDesign& d, std::int64_t tokens);
DecodeAttention decode_attention(const HdDesign& d, const LayerAttentionRole& layer, double context,
                                 Layout layout, bool final_only_decode);
double kv_entries(const HdDesign& d, const LayerAttentionRole& layer, double context);
std::optional<SizeKnob> size_knob(const HdDesign& d);
void set_size(HdDesign& d, double x);
std::vector<std::string> conformance_examples(const HdDesign& d);
DesignForm form(const HdDesign& d);  // the editor page
std::vector<std::string> derived_fields(const HdDesign& d, const Backbone& b);
}  // namespace designs

}  // namespace hdlab::model
