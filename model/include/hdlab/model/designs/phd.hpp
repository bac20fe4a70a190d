#pragma once
// Parallel Hidden Decoding (methods.md section 2): token i, copy j at t = i*K + j; copy 0
// is the origin, copies 1..K-1 hidden copies that see earlier origins, their own token's
// copies and (swa, cswa) a window of earlier hidden copies. Module: designs/phd.cpp.
#include "hdlab/model/designs/forward.hpp"

namespace hdlab::model {

enum class PhdVariant { plain, swa, cswa };
const char* to_string(PhdVariant v);

// What the hidden copies do to a linear-attention layer's recurrent state and conv history
// (executor/README.md "Linear attention"): `origins`: only origins write them; a hidden
// copy (i, j) reads the state and history origin i left (origin i included) and changes
// neither (so a prefill may skip earlier tokens' copies, as plain PHD's does); `all_copies`:
// every position writes them in logical order t = i*K + j, as a cross-stream HD layer (so a
// prefill computes every copy of every token).
enum class PhdLinearState { origins, all_copies };
const char* to_string(PhdLinearState s);

struct PhdDesign {
  static constexpr const char* key = "phd";
  std::int64_t K = 1;
  PhdVariant variant = PhdVariant::plain;
  std::int64_t W = 0;  // hidden-token window (swa, cswa)
  std::int64_t C = 0;  // chunk in tokens (cswa)
  // Set iff the backbone has linear-attention layers ("linear_state", default origins).
  std::optional<PhdLinearState> linear_state;
  bool operator==(const PhdDesign&) const = default;
};

namespace designs {
void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, PhdDesign& out);
Json block_json(const PhdDesign& d);
void describe(const PhdDesign& d, std::ostream& s);
std::string short_label(const PhdDesign& d);
std::string label_detail(const PhdDesign& d);
DesignFeatures features(const PhdDesign& d);
LayerSchedule layer_schedule(const PhdDesign& d, std::int64_t layer);
std::vector<LayerRun> layer_runs(const PhdDesign& d, std::int64_t num_layers);
LayerAttentionRole layer_role(const PhdDesign& d, const Backbone& b, std::int64_t layer);
void shape_mask(const PhdDesign& d, const Backbone& b, std::int64_t layer, MaskSpec& m);
Layout default_layout(const PhdDesign& d);
void add_params(const PhdDesign& d, const Backbone& b, ParamCounts& p);
std::optional<std::int64_t> prefill_tail(const PhdDesign& d, std::int64_t tokens);
DecodeAttention decode_attention(const PhdDesign& d, const LayerAttentionRole& layer, double context,
                                 Layout layout, bool final_only_decode);
double kv_entries(const PhdDesign& d, const LayerAttentionRole& layer, double context);
std::optional<SizeKnob> size_knob(const PhdDesign& d);
void set_size(PhdDesign& d, double x);
std::vector<std::string> conformance_examples(const PhdDesign& d);
DesignForm form(const PhdDesign& d);  // the editor page
std::vector<std::string> derived_fields(const PhdDesign& d, const Backbone& b);
}  // namespace designs

}  // namespace hdlab::model
