#pragma once
// Virtual Width Networks (methods.md section 3): residual stream D' = (n/m) D as n slots
// of D/m, mixed around each sublayer by generalized hyper-connections (GHC). Module:
// designs/vwn.cpp.
#include "hdlab/model/designs/forward.hpp"

namespace hdlab::model {

enum class VwnEmbedding { full, projected };
const char* to_string(VwnEmbedding e);

struct VwnDesign {
  static constexpr const char* key = "vwn";
  std::int64_t m = 1;
  std::int64_t n = 1;
  bool dynamic = true;  // dynamic (input-dependent) GHC coefficients
  VwnEmbedding embedding = VwnEmbedding::full;
  bool mtp = false;
  bool operator==(const VwnDesign&) const = default;
  double ratio() const { return static_cast<double>(n) / static_cast<double>(m); }
};

namespace designs {
void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, VwnDesign& out);
Json block_json(const VwnDesign& d);
void describe(const VwnDesign& d, std::ostream& s);
std::string short_label(const VwnDesign& d);
std::string label_detail(const VwnDesign& d);
DesignFeatures features(const VwnDesign& d);
LayerSchedule layer_schedule(const VwnDesign& d, std::int64_t layer);
std::vector<LayerRun> layer_runs(const VwnDesign& d, std::int64_t num_layers);
LayerAttentionRole layer_role(const VwnDesign& d, const Backbone& b, std::int64_t layer);
void shape_mask(const VwnDesign& d, const Backbone& b, std::int64_t layer, MaskSpec& m);
Layout default_layout(const VwnDesign& d);
void add_params(const VwnDesign& d, const Backbone& b, ParamCounts& p);
std::optional<std::int64_t> prefill_tail(const VwnDesign& d, std::int64_t tokens);
DecodeAttention decode_attention(const VwnDesign& d, const LayerAttentionRole& layer, double context,
                                 Layout layout, bool final_only_decode);
double kv_entries(const VwnDesign& d, const LayerAttentionRole& layer, double context);
std::optional<SizeKnob> size_knob(const VwnDesign& d);
void set_size(VwnDesign& d, double x);
std::vector<std::string> conformance_examples(const VwnDesign& d);
DesignForm form(const VwnDesign& d);  // the editor page
std::vector<std::string> derived_fields(const VwnDesign& d, const Backbone& b);
}  // namespace designs

}  // namespace hdlab::model
