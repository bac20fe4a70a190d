#pragma once
// Looped depth (methods.md section 4): prelude P layers, a recurrent block of R layers run
// K times, coda C layers. Module: designs/looped.cpp.
#include "hdlab/model/designs/forward.hpp"

namespace hdlab::model {

enum class LoopKv { per_iteration, shared };
const char* to_string(LoopKv k);

struct LoopedDesign {
  static constexpr const char* key = "looped";
  std::int64_t prelude = 0;
  std::int64_t recurrent = 0;
  std::int64_t coda = 0;
  std::int64_t iterations = 1;
  LoopKv kv = LoopKv::per_iteration;
  bool input_injection = false;  // 2D -> D adapter re-injects the embedding each iteration
  bool operator==(const LoopedDesign&) const = default;
  // Layer passes per token: P + K*R + C.
  std::int64_t layer_passes() const { return prelude + iterations * recurrent + coda; }
};

namespace designs {
void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, LoopedDesign& out);
Json block_json(const LoopedDesign& d);
void describe(const LoopedDesign& d, std::ostream& s);
std::string short_label(const LoopedDesign& d);
std::string label_detail(const LoopedDesign& d);
DesignFeatures features(const LoopedDesign& d);
LayerSchedule layer_schedule(const LoopedDesign& d, std::int64_t layer);
std::vector<LayerRun> layer_runs(const LoopedDesign& d, std::int64_t num_layers);
LayerAttentionRole layer_role(const LoopedDesign& d, const Backbone& b, std::int64_t layer);
void shape_mask(const LoopedDesign& d, const Backbone& b, std::int64_t layer, MaskSpec& m);
Layout default_layout(const LoopedDesign& d);
void add_params(const LoopedDesign& d, const Backbone& b, ParamCounts& p);
std::optional<std::int64_t> prefill_tail(const LoopedDesign& d, std::int64_t tokens);
DecodeAttention decode_attention(const LoopedDesign& d, const LayerAttentionRole& layer, double context,
                                 Layout layout, bool final_only_decode);
double kv_entries(const LoopedDesign& d, const LayerAttentionRole& layer, double context);
std::optional<SizeKnob> size_knob(const LoopedDesign& d);
void set_size(LoopedDesign& d, double x);
std::vector<std::string> conformance_examples(const LoopedDesign& d);
DesignForm form(const LoopedDesign& d);  // the editor page
std::vector<std::string> derived_fields(const LoopedDesign& d, const Backbone& b);
}  // namespace designs

}  // namespace hdlab::model
