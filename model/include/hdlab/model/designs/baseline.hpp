#pragma once
// The baseline: the backbone as it is (methods.md section 0). Module: designs/baseline.cpp.
#include "hdlab/model/designs/forward.hpp"

namespace hdlab::model {

struct BaselineDesign {
  static constexpr const char* key = "baseline";
  bool operator==(const BaselineDesign&) const = default;
};

namespace designs {
void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, BaselineDesign& out);
Json block_json(const BaselineDesign& d);
void describe(const BaselineDesign& d, std::ostream& s);
std::string short_label(const BaselineDesign& d);
std::string label_detail(const BaselineDesign& d);
DesignFeatures features(const BaselineDesign& d);
LayerSchedule layer_schedule(const BaselineDesign& d, std::int64_t layer);
std::vector<LayerRun> layer_runs(const BaselineDesign& d, std::int64_t num_layers);
LayerAttentionRole layer_role(const BaselineDesign& d, const Backbone& b, std::int64_t layer);
void shape_mask(const BaselineDesign& d, const Backbone& b, std::int64_t layer, MaskSpec& m);
Layout default_layout(const BaselineDesign& d);
void add_params(const BaselineDesign& d, const Backbone& b, ParamCounts& p);
std::optional<std::int64_t> prefill_tail(const BaselineDesign& d, std::int64_t tokens);
DecodeAttention decode_attention(const BaselineDesign& d, const LayerAttentionRole& layer, double context,
                                 Layout layout, bool final_only_decode);
double kv_entries(const BaselineDesign& d, const LayerAttentionRole& layer, double context);
std::optional<SizeKnob> size_knob(const BaselineDesign& d);
void set_size(BaselineDesign& d, double x);
std::vector<std::string> conformance_examples(const BaselineDesign& d);
DesignForm form(const BaselineDesign& d);  // the editor page
std::vector<std::string> derived_fields(const BaselineDesign& d, const Backbone& b);
}  // namespace designs

}  // namespace hdlab::model
