#pragma once
// Manifold-constrained hyper-connections (mHC; Xie et al., DeepSeek, arXiv:2512.24880, as
// used by DeepSeek-V4): the residual stream widened to n streams of width D, read, written
// and mixed around each sublayer by per-token coefficients, the stream mixing projected
// onto the doubly-stochastic matrices by Sinkhorn-Knopp iterations. Semantics in
// designs/mhc.cpp and the executor README; module: designs/mhc.cpp.
#include "hdlab/model/designs/forward.hpp"

namespace hdlab::model {

struct MhcDesign {
  static constexpr const char* key = "mhc";
  std::int64_t n = 4;                // residual streams (DeepSeek-V4: hc_mult = 4)
  std::int64_t sinkhorn_iters = 20;  // Sinkhorn-Knopp iterations (the paper's t_max = 20)
  bool operator==(const MhcDesign&) const = default;
};

namespace designs {
void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, MhcDesign& out);
Json block_json(const MhcDesign& d);
void describe(const MhcDesign& d, std::ostream& s);
std::string short_label(const MhcDesign& d);
std::string label_detail(const MhcDesign& d);
DesignFeatures features(const MhcDesign& d);
LayerSchedule layer_schedule(const MhcDesign& d, std::int64_t layer);
std::vector<LayerRun> layer_runs(const MhcDesign& d, std::int64_t num_layers);
LayerAttentionRole layer_role(const MhcDesign& d, const Backbone& b, std::int64_t layer);
void shape_mask(const MhcDesign& d, const Backbone& b, std::int64_t layer, MaskSpec& m);
Layout default_layout(const MhcDesign& d);
void add_params(const MhcDesign& d, const Backbone& b, ParamCounts& p);
std::optional<std::int64_t> prefill_tail(const MhcDesign& d, std::int64_t tokens);
DecodeAttention decode_attention(const MhcDesign& d, const LayerAttentionRole& layer, double context,
                                 Layout layout, bool final_only_decode);
double kv_entries(const MhcDesign& d, const LayerAttentionRole& layer, double context);
std::optional<SizeKnob> size_knob(const MhcDesign& d);
void set_size(MhcDesign& d, double x);
std::vector<std::string> conformance_examples(const MhcDesign& d);
DesignForm form(const MhcDesign& d);  // the editor page
std::vector<std::string> derived_fields(const MhcDesign& d, const Backbone& b);
// Parameters of one hyper-connection (two per layer) on a D-wide backbone: the projection
// of the flattened n*D state to the n + n + n^2 coefficient logits, their biases and the
// three scales (pre, post, res).
std::int64_t mhc_connection_params(const MhcDesign& d, std::int64_t D);
// Its coefficients' op node (OpKind::ghc_dynamic) over `rows` rows, both of a layer's
// hyper-connections: the design's module_mixing (layer_program.hpp design_mixing_ops).
void mixing_ops(const MhcDesign& d, const OpDims& s, double rows, OpNode& coefficients);
}  // namespace designs

}  // namespace hdlab::model
