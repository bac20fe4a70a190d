// The baseline module: the backbone unchanged.
#include <ostream>

#include "common.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"

namespace hdlab::model::designs {

void parse(ObjectReader r, const Backbone&, DesignDefaults&, BaselineDesign&) { r.finish(); }
Json block_json(const BaselineDesign&) { return Json::object(); }
void describe(const BaselineDesign&, std::ostream& s) { s << "baseline"; }
std::string short_label(const BaselineDesign&) { return "baseline"; }
std::string label_detail(const BaselineDesign&) { return ""; }
DesignFeatures features(const BaselineDesign&) { return {}; }
LayerSchedule layer_schedule(const BaselineDesign&, std::int64_t) { return {}; }
std::vector<LayerRun> layer_runs(const BaselineDesign&, std::int64_t num_layers) {
  return common::straight_runs(num_layers);
}
LayerAttentionRole layer_role(const BaselineDesign&, const Backbone& b, std::int64_t layer) {
  return common::backbone_role(b, layer);
}
void shape_mask(const BaselineDesign&, const Backbone&, std::int64_t, MaskSpec&) {}
Layout default_layout(const BaselineDesign&) { return Layout::interleaved; }
void add_params(const BaselineDesign&, const Backbone&, ParamCounts&) {}
std::optional<std::int64_t> prefill_tail(const BaselineDesign&, std::int64_t) { return std::nullopt; }
DecodeAttention decode_attention(const BaselineDesign&, const LayerAttentionRole& layer, double context, Layout,
                                 bool) {
  return common::decode_one_copy(layer, context);
}
double kv_entries(const BaselineDesign&, const LayerAttentionRole& layer, double context) {
  return common::kv_entries_one_copy(layer, context);
}
std::optional<SizeKnob> size_knob(const BaselineDesign&) { return std::nullopt; }
void set_size(BaselineDesign&, double) {}
std::vector<std::string> conformance_examples(const BaselineDesign&) { return {R"({"baseline": {}})"}; }

DesignForm form(const BaselineDesign&) {
  DesignForm f;
  f.title = "Baseline";
  f.about = "The backbone as it is: no extra computation per token. Growth (below) may still turn it into a bigger "
            "model.";
  return f;
}

std::vector<std::string> derived_fields(const BaselineDesign&, const Backbone&) { return {}; }

}  // namespace hdlab::model::designs
