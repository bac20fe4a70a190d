// The Virtual Width Networks module (methods.md section 3): an over-width residual of n
// slots of D/m, mixed around each sublayer by generalized hyper-connections (GHC).
#include <cmath>
#include <ostream>

#include "common.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"

namespace hdlab::model {

const char* to_string(VwnEmbedding e) { return e == VwnEmbedding::full ? "full" : "projected"; }

}  // namespace hdlab::model

namespace hdlab::model::designs {

namespace {

using common::num;

// One generalized hyper-connection (two per layer: around attention and FFN). Static
// routing A: n x (m+n), B: m x n. Dynamic: W_a (D/m) x (m+n), W_b (D/m) x m, the per-slot
// RMSNorm weight (D/m, shared by the n slots) and the two scalar scales S_a, S_b.
std::int64_t ghc_params(const VwnDesign& v, std::int64_t D) {
  const std::int64_t m = v.m, n = v.n, slot = D / v.m;
  std::int64_t p = n * (m + n) + m * n;
  if (v.dynamic) p += slot * (m + n) + slot * m + slot + 2;
  return p;
}

}  // namespace

void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, VwnDesign& v) {
  common::refuse_single_sublayers(b, r, "VWN");
  common::note_default(defaults, r, "dynamic", "true");
  common::note_default(defaults, r, "embedding", "full");
  common::note_default(defaults, r, "mtp", "false");
  v.m = r.integer("m", std::nullopt, 1, Limits::max_width_slots);
  v.n = r.integer("n", std::nullopt, 1, Limits::max_width_slots);
  if (v.n < v.m) fail(r.at("n"), "must be >= m (" + num(v.m) + "): the virtual width D*n/m cannot be narrower than D");
  if (b.hidden % v.m != 0)
    fail(r.at("m"), "hidden size " + num(b.hidden) + " is not divisible by m = " + num(v.m));
  v.dynamic = r.boolean("dynamic", true);
  v.embedding = r.choice<VwnEmbedding>("embedding", {{"full", VwnEmbedding::full}, {"projected", VwnEmbedding::projected}},
                                       VwnEmbedding::full);
  v.mtp = r.boolean("mtp", false);
  if (v.embedding == VwnEmbedding::full && b.positions == PositionKind::learned)
    fail(r.at("embedding"), "\"full\" (an over-width table) has no place for the backbone's learned D-wide position "
                            "table; use \"projected\"");
  r.finish();
}

Json block_json(const VwnDesign& v) {
  return {{"m", v.m}, {"n", v.n}, {"dynamic", v.dynamic}, {"embedding", to_string(v.embedding)}, {"mtp", v.mtp}};
}

void describe(const VwnDesign& v, std::ostream& s) {
  s << "vwn m=" << v.m << " n=" << v.n << " (r=" << v.ratio() << ", " << (v.dynamic ? "dynamic" : "static")
    << (v.mtp ? ", mtp" : "") << ")";
}

std::string short_label(const VwnDesign& v) { return "VWN n/m=" + num(v.n) + "/" + num(v.m); }
std::string label_detail(const VwnDesign&) { return ""; }

DesignFeatures features(const VwnDesign& v) {
  DesignFeatures f;
  f.wide_residual = true;
  f.width_m = v.m;
  f.width_n = v.n;
  f.dynamic_mixing = v.dynamic;
  f.projected_embedding = v.embedding == VwnEmbedding::projected;
  f.mtp = v.mtp;
  return f;
}

LayerSchedule layer_schedule(const VwnDesign&, std::int64_t) { return {}; }
std::vector<LayerRun> layer_runs(const VwnDesign&, std::int64_t num_layers) { return common::straight_runs(num_layers); }
LayerAttentionRole layer_role(const VwnDesign&, const Backbone& b, std::int64_t layer) {
  return common::backbone_role(b, layer);
}
void shape_mask(const VwnDesign&, const Backbone&, std::int64_t, MaskSpec&) {}
Layout default_layout(const VwnDesign&) { return Layout::interleaved; }

void add_params(const VwnDesign& v, const Backbone& b, ParamCounts& p) {
  const std::int64_t D = b.hidden, wide = D * v.n / v.m;  // D' = (n/m) D, D divisible by m
  if (v.embedding == VwnEmbedding::full) {
    p.embedding_input = b.padded_input_vocab() * wide;  // replaces the D-wide table
  } else {
    p.adapters += D * wide;  // D -> D' projection of the normal table
  }
  p.ghc += 2 * b.num_layers * ghc_params(v, D);
  p.norms += 2 * wide;     // GroupNorm before the reduce: an affine weight and bias per channel
  p.adapters += wide * D;  // reduce D' -> D
  if (v.mtp) {
    const std::int64_t slot = D / v.m;
    p.mtp += 2 * slot * slot;  // one linear 2D/m -> D/m shared across the n blocks
  }
}

std::optional<std::int64_t> prefill_tail(const VwnDesign&, std::int64_t) { return std::nullopt; }
DecodeAttention decode_attention(const VwnDesign&, const LayerAttentionRole& layer, double context, Layout, bool) {
  return common::decode_one_copy(layer, context);
}
double kv_entries(const VwnDesign&, const LayerAttentionRole& layer, double context) {
  return common::kv_entries_one_copy(layer, context);
}

std::optional<SizeKnob> size_knob(const VwnDesign& v) {
  std::vector<double> xs;
  for (double x : {1.0, 1.5, 2.0, 3.0, 4.0, 8.0})
    if (std::fmod(x * static_cast<double>(v.m), 1.0) == 0.0) xs.push_back(x);
  return SizeKnob{"n/m", "VWN width ratio n/m (m = " + num(v.m) + ")", common::with_current(xs, v.ratio()), v.ratio()};
}

void set_size(VwnDesign& v, double x) {
  const double n = x * static_cast<double>(v.m);
  if (std::fmod(n, 1.0) != 0.0)
    throw ConfigError("/design/vwn/n", "n/m = " + std::to_string(x) + " needs a whole n for m = " + num(v.m));
  v.n = static_cast<std::int64_t>(n);
}

std::vector<std::string> conformance_examples(const VwnDesign&) {
  return {R"({"vwn": {"m": 2, "n": 4}})", R"({"vwn": {"m": 2, "n": 3, "dynamic": false}})",
          R"({"vwn": {"m": 2, "n": 4, "embedding": "projected", "mtp": true}})"};
}

DesignForm form(const VwnDesign&) {
  using common::choice_field, common::flag_field, common::integer_field;
  DesignForm f;
  f.title = "Virtual Width Network (VWN)";
  f.fields = {
      integer_field("m", "m", 1, 4096, 2, "Slots the D-wide sublayer input is made of (D/m each); must divide D"),
      integer_field("n", "n", 1, 4096, 3, "Slots of the wide residual stream: D' = (n/m) D"),
      flag_field("dynamic", "dynamic", true, "Input-dependent GHC coefficients", "input-dependent GHC coefficients"),
      choice_field("embedding", "embedding", {{"full", "full V x D' table"}, {"projected", "D -> D' projection"}},
                   "full", "Over-width input embedding"),
      flag_field("mtp", "MTP", false, "Multi-token prediction head", "multi-token prediction head")};
  return f;
}

std::vector<std::string> derived_fields(const VwnDesign&, const Backbone&) { return {}; }

}  // namespace hdlab::model::designs
