// The Parallel Hidden Decoding module (methods.md section 2): K copies per token, one PHD
// mask for every layer (plain, swa or cswa), partial prefill of the hidden copies.
#include <cmath>
#include <ostream>

#include "common.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"

namespace hdlab::model {

const char* to_string(PhdVariant v) {
  switch (v) {
    case PhdVariant::plain: return "plain";
    case PhdVariant::swa: return "swa";
    case PhdVariant::cswa: return "cswa";
  }
  return "?";
}

const char* to_string(PhdLinearState s) { return s == PhdLinearState::origins ? "origins" : "all_copies"; }

}  // namespace hdlab::model

namespace hdlab::model::designs {

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// Hidden keys of earlier tokens a hidden copy may see after c tokens: SWA all earlier
// hidden tokens, CSWA those of the same chunk, plain none.
double hidden_available(const PhdDesign& p, double c) {
  switch (p.variant) {
    case PhdVariant::plain: return 0;
    case PhdVariant::swa: return c * d(p.K - 1);
    case PhdVariant::cswa: return d(static_cast<std::int64_t>(c) % p.C) * d(p.K - 1);
  }
  return 0;
}

// "linear_state": whether hidden copies write linear-attention layers' states (phd.hpp's
// PhdLinearState); read only on a backbone that has such layers.
std::optional<PhdLinearState> parse_linear_state(ObjectReader& r, const Backbone& b, DesignDefaults& defaults) {
  if (b.num_linear_layers() == 0) {
    if (r.find("linear_state"))
      fail(r.at("linear_state"), "is only used on a backbone with linear_attention layers (this one has none)");
    return std::nullopt;
  }
  common::note_default(defaults, r, "linear_state", "origins");
  return r.choice<PhdLinearState>("linear_state",
                                  {{"origins", PhdLinearState::origins}, {"all_copies", PhdLinearState::all_copies}},
                                  PhdLinearState::origins);
}

}  // namespace

void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, PhdDesign& p) {
  // Hidden copies on a Mamba-2 layer (do they update its state?) are not modelled yet:
  // refused rather than costed as attention. Gated DeltaNet layers take linear_state.
  if (const std::int64_t mamba = b.num_mixer_layers(MixerKind::mamba2); mamba > 0)
    fail(r.pointer(), "is unsupported on a backbone with mamba2 layers (" + common::num(mamba) +
                          "): PHD's hidden copies on a Mamba-2 state are not modelled yet");
  // The PHD rule is one mask for every layer; a chunk boundary would cut the origins a
  // hidden copy must see (its own token's and every earlier one), so it is refused.
  if (b.num_chunked_layers() > 0)
    fail(r.pointer(), "PHD on a backbone with chunked attention layers (" + common::num(b.num_chunked_layers()) +
                          " of them) is not modelled: the PHD mask has no chunk boundary");
  common::note_default(defaults, r, "variant", "plain");
  p.K = r.integer("K", std::nullopt, 1, Limits::max_copies);
  p.variant = r.choice<PhdVariant>(
      "variant", {{"plain", PhdVariant::plain}, {"swa", PhdVariant::swa}, {"cswa", PhdVariant::cswa}}, PhdVariant::plain);
  const bool windowed = p.variant != PhdVariant::plain;
  if (windowed) p.W = r.integer("W", std::nullopt, 1, Limits::max_window);
  else if (r.find("W")) fail(r.at("W"), "is only used by the swa and cswa variants");
  if (p.variant == PhdVariant::cswa) p.C = r.integer("C", std::nullopt, 1, Limits::max_window);
  else if (r.find("C")) fail(r.at("C"), "is only used by the cswa variant");
  p.linear_state = parse_linear_state(r, b, defaults);
  r.finish();
}

Json block_json(const PhdDesign& p) {
  Json o = {{"K", p.K}, {"variant", to_string(p.variant)}};
  if (p.variant != PhdVariant::plain) o["W"] = p.W;
  if (p.variant == PhdVariant::cswa) o["C"] = p.C;
  if (p.linear_state) o["linear_state"] = to_string(*p.linear_state);
  return o;
}

void describe(const PhdDesign& phd, std::ostream& s) {
  s << "phd";
  if (phd.variant != PhdVariant::plain) s << "-" << to_string(phd.variant);
  s << " K=" << phd.K;
  if (phd.variant != PhdVariant::plain) s << " W=" << phd.W;
  if (phd.variant == PhdVariant::cswa) s << " C=" << phd.C;
  if (phd.linear_state) s << " linear_state=" << to_string(*phd.linear_state);
}

std::string short_label(const PhdDesign& p) {
  return std::string("PHD-") + to_string(p.variant) + " K=" + common::num(p.K);
}
std::string label_detail(const PhdDesign&) { return ""; }

DesignFeatures features(const PhdDesign& p) {
  DesignFeatures f;
  f.copies = p.K;
  f.hidden_copies = true;
  f.hidden_copies_read_only = p.linear_state == PhdLinearState::origins;
  return f;
}

LayerSchedule layer_schedule(const PhdDesign&, std::int64_t) { return {}; }
std::vector<LayerRun> layer_runs(const PhdDesign&, std::int64_t num_layers) { return common::straight_runs(num_layers); }
LayerAttentionRole layer_role(const PhdDesign&, const Backbone& b, std::int64_t layer) {
  return common::backbone_role(b, layer);
}

void shape_mask(const PhdDesign& phd, const Backbone&, std::int64_t, MaskSpec& m) {
  // methods.md defines one PHD rule for every layer; a backbone's sliding windows are
  // not combined with it.
  const std::int64_t tokens = m.tokens;
  m = MaskSpec{};
  m.kind = MaskSpec::Kind::phd;
  m.tokens = tokens;
  m.copies = phd.K;
  m.phd_variant = phd.variant;
  m.phd_W = phd.W;
  m.phd_C = phd.C;
}

// [origins | hidden copies by rank]: the layout the PHD masks were designed for.
Layout default_layout(const PhdDesign&) { return Layout::phd_split; }
void add_params(const PhdDesign&, const Backbone&, ParamCounts&) {}

std::optional<std::int64_t> prefill_tail(const PhdDesign& p, std::int64_t L) {
  // SWA's hidden copies see every earlier hidden token: all are computed. So are they when
  // every copy writes the linear layers' states (linear_state all_copies).
  if (p.variant == PhdVariant::swa || p.K == 1 || p.linear_state == PhdLinearState::all_copies) return std::nullopt;
  return p.variant == PhdVariant::plain ? 1 : L - (L - 1) / p.C * p.C;
}

DecodeAttention decode_attention(const PhdDesign& p, const LayerAttentionRole&, double c, Layout, bool) {
  const double K = d(p.K), W = d(p.W), avail = hidden_available(p, c);
  DecodeAttention w;
  w.rows_q = w.rows_kv = K;
  w.pairs_exact = c + 1;  // the origin: earlier origins and itself
  for (double j = 1; j < K; ++j) {
    // earlier origins, own copies 0..j, earlier tokens' hidden keys within W ranks (the
    // own token's j-1 earlier hidden copies already count among its copies)
    const double windowed = p.variant == PhdVariant::plain ? 0 : std::min(std::max(W - (j - 1), 0.0), avail);
    w.pairs_exact += c + j + 1 + windowed;
  }
  w.kv_read = c + K + (p.variant == PhdVariant::plain ? 0 : std::min(W, avail));
  w.pairs_executed = K * w.kv_read;
  // Every copy's K/V is written next to the cache: the hidden copies attend to each
  // other within the step. What stays is kv_entries' (plain: the origin alone); the rest
  // is dropped after the step (a scratch region, or a ring buffer's slots reused).
  w.kv_written = K;
  return w;
}

// The origins plus the hidden keys the next token's copies can still see: the last W
// of those available (CSWA: in the next token's chunk), as decode_attention reads them.
double kv_entries(const PhdDesign& p, const LayerAttentionRole&, double c) {
  return c + std::min(d(p.W), hidden_available(p, c));
}

std::optional<SizeKnob> size_knob(const PhdDesign& p) {
  return SizeKnob{"K", "PHD copies K", common::with_current({1, 2, 3, 4, 5, 8}, d(p.K)), d(p.K)};
}

void set_size(PhdDesign& p, double x) { p.K = static_cast<std::int64_t>(std::llround(x)); }

std::vector<std::string> conformance_examples(const PhdDesign&) {
  return {R"({"phd": {"K": 3}})", R"({"phd": {"K": 2, "variant": "swa", "W": 3}})",
          R"({"phd": {"K": 3, "variant": "cswa", "W": 2, "C": 3}})"};
}

DesignForm form(const PhdDesign&) {
  using common::choice_field, common::integer_field;
  DesignForm f;
  f.title = "Parallel Hidden Decoding (PHD)";
  f.fields.push_back(integer_field("K", "copies K", 1, 4096, 3,
                                   "Copies per token K: the origin plus K-1 hidden decoding tokens"));
  f.fields.push_back(choice_field("variant", "variant",
                                  {{"plain", "plain"}, {"swa", "SWA (hidden window)"}, {"cswa", "CSWA (chunked)"}},
                                  "cswa",
                                  "plain: hidden copies see origins and their own token; SWA adds the W previous "
                                  "hidden tokens; CSWA only within chunks of C tokens"));
  f.fields.push_back(
      integer_field("W", "window W", 1, 2147483647, 16, "Hidden-token window W (swa, cswa)", " hidden tokens"));
  f.fields.back().when_key = "variant";
  f.fields.back().when_values = {"swa", "cswa"};
  f.fields.push_back(integer_field("C", "chunk C", 1, 2147483647, 32, "Chunk C (cswa)", " tokens"));
  f.fields.back().when_key = "variant";
  f.fields.back().when_values = {"cswa"};
  return f;
}

std::vector<std::string> derived_fields(const PhdDesign&, const Backbone&) { return {}; }

}  // namespace hdlab::model::designs
