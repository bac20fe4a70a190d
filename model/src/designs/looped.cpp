// The looped-depth module (methods.md section 4): prelude, a recurrent block run K times
// (its KV caches per iteration or shared), coda; optional input injection.
#include <cmath>
#include <ostream>

#include "common.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"

namespace hdlab::model {

const char* to_string(LoopKv k) { return k == LoopKv::per_iteration ? "per_iteration" : "shared"; }

}  // namespace hdlab::model

namespace hdlab::model::designs {

using common::num;

void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, LoopedDesign& l) {
  // A looped block re-entering linear-attention layers would carry (or reset) their states
  // across iterations: not modelled, so refused rather than costed as attention.
  if (b.num_linear_layers() > 0)
    fail(r.pointer(), "is unsupported on a backbone with linear-attention (linear_attention or mamba2) layers (" +
                          std::to_string(b.num_linear_layers()) + "): looping over recurrent states is not modelled");
  common::note_default(defaults, r, "prelude", "0");
  common::note_default(defaults, r, "coda", "0");
  common::note_default(defaults, r, "kv", "per_iteration");
  common::note_default(defaults, r, "input_injection", "false");
  l.prelude = r.integer("prelude", 0, 0, b.num_layers);
  l.coda = r.integer("coda", 0, 0, b.num_layers);
  l.recurrent = r.integer("recurrent", b.num_layers - l.prelude - l.coda, 1, b.num_layers);
  common::note_default(defaults, r, "recurrent", num(l.recurrent) + ": the layers between prelude and coda");
  if (l.prelude + l.recurrent + l.coda != b.num_layers)
    fail(r.pointer(), "prelude + recurrent + coda = " + num(l.prelude + l.recurrent + l.coda) +
                          " but the backbone has " + num(b.num_layers) + " layers");
  l.iterations = r.integer("iterations", std::nullopt, 1, Limits::max_iterations);
  l.kv = r.choice<LoopKv>("kv", {{"per_iteration", LoopKv::per_iteration}, {"shared", LoopKv::shared}},
                          LoopKv::per_iteration);
  l.input_injection = r.boolean("input_injection", false);
  if (b.kv_mirror_layers > 0)
    fail(r.pointer(), "looping a backbone with KV-mirror layers is not modelled (kv_mirror_layers = " +
                          num(b.kv_mirror_layers) + ")");
  r.finish();
}

Json block_json(const LoopedDesign& l) {
  return {{"prelude", l.prelude},       {"recurrent", l.recurrent}, {"coda", l.coda},
          {"iterations", l.iterations}, {"kv", to_string(l.kv)},    {"input_injection", l.input_injection}};
}

void describe(const LoopedDesign& l, std::ostream& s) {
  s << "looped " << l.prelude << "+" << l.recurrent << "x" << l.iterations << "+" << l.coda << " (kv "
    << to_string(l.kv) << (l.input_injection ? ", injection" : "") << ")";
}

std::string short_label(const LoopedDesign& l) { return "looped x" + num(l.iterations); }
std::string label_detail(const LoopedDesign&) { return ""; }

DesignFeatures features(const LoopedDesign& l) {
  DesignFeatures f;
  f.loop_iterations = l.iterations;
  f.input_injection = l.input_injection;
  f.decode_exact = l.kv == LoopKv::per_iteration || l.iterations == 1;
  return f;
}

// Prelude layers [0, P), the recurrent block [P, P+R) run K times, coda after.
LayerSchedule layer_schedule(const LoopedDesign& loop, std::int64_t layer) {
  if (layer < loop.prelude) return {LoopRole::prelude, 1, 1};
  if (layer >= loop.prelude + loop.recurrent) return {LoopRole::coda, 1, 1};
  return {LoopRole::recurrent, loop.iterations, loop.kv == LoopKv::per_iteration ? loop.iterations : 1};
}

std::vector<LayerRun> layer_runs(const LoopedDesign& loop, std::int64_t num_layers) {
  const std::int64_t P = loop.prelude, R = loop.recurrent, K = loop.iterations;
  const bool shared = loop.kv == LoopKv::shared;
  const std::int64_t sets = shared ? 1 : K;
  std::vector<LayerRun> runs;
  for (std::int64_t l = 0; l < P; ++l) runs.push_back(LayerRun{l, 0, l, false, true, false});
  for (std::int64_t it = 0; it < K; ++it)
    for (std::int64_t l = P; l < P + R; ++l)
      runs.push_back(LayerRun{l, it, P + (shared ? 0 : it) * R + (l - P), l == P && loop.input_injection,
                              !shared || it == K - 1, shared && it > 0});
  for (std::int64_t l = P + R; l < num_layers; ++l)
    runs.push_back(LayerRun{l, 0, P + sets * R + (l - P - R), false, true, false});
  return runs;
}

LayerAttentionRole layer_role(const LoopedDesign&, const Backbone& b, std::int64_t layer) {
  return common::backbone_role(b, layer);
}
// Each iteration attends like the backbone's layer.
void shape_mask(const LoopedDesign&, const Backbone&, std::int64_t, MaskSpec&) {}
Layout default_layout(const LoopedDesign&) { return Layout::interleaved; }

void add_params(const LoopedDesign& l, const Backbone& b, ParamCounts& p) {
  if (l.input_injection) p.adapters += 2 * b.hidden * b.hidden;  // [h; e] (2D) -> D, shared by all iterations
}

std::optional<std::int64_t> prefill_tail(const LoopedDesign&, std::int64_t) { return std::nullopt; }
DecodeAttention decode_attention(const LoopedDesign&, const LayerAttentionRole& layer, double context, Layout, bool) {
  return common::decode_one_copy(layer, context);
}
double kv_entries(const LoopedDesign&, const LayerAttentionRole& layer, double context) {
  return common::kv_entries_one_copy(layer, context);
}

std::optional<SizeKnob> size_knob(const LoopedDesign& l) {
  const auto k = static_cast<double>(l.iterations);
  return SizeKnob{"iterations", "loop iterations K", common::with_current({1, 2, 4, 8, 16, 32}, k), k};
}

void set_size(LoopedDesign& l, double x) { l.iterations = static_cast<std::int64_t>(std::llround(x)); }

std::vector<std::string> conformance_examples(const LoopedDesign&) {
  return {R"({"looped": {"prelude": 1, "coda": 1, "iterations": 3}})",
          R"({"looped": {"prelude": 1, "coda": 1, "iterations": 2, "kv": "shared", "input_injection": true}})"};
}

DesignForm form(const LoopedDesign&) {
  using common::choice_field, common::flag_field, common::integer_field;
  DesignForm f;
  f.title = "Looped (recurrent depth)";
  f.about = "prelude + recurrent + coda must equal the layers";
  f.layer_partition = {"prelude", "recurrent", "coda"};
  f.partition_rest = "recurrent";
  f.fields = {
      integer_field("prelude", "prelude P", 0, 4096, 0, "Layers run once before the loop", " layers"),
      integer_field("recurrent", "recurrent R", 1, 4096, 1, "Layers of the block applied K times", " layers"),
      integer_field("coda", "coda C", 0, 4096, 0, "Layers run once after the loop", " layers"),
      integer_field("iterations", "iterations K", 1, 4096, 4, "Times the recurrent block runs per token (K)"),
      choice_field("kv", "KV cache",
                   {{"per_iteration", "one per iteration"}, {"shared", "shared across iterations"}},
                   "per_iteration", "KV cache of the recurrent block: K*R layer slots, or R shared"),
      flag_field("input_injection", "injection", false, "Re-inject the embedding each iteration (2D -> D adapter)",
                 "re-inject the embedding each iteration (2D -> D adapter)")};
  return f;
}

std::vector<std::string> derived_fields(const LoopedDesign&, const Backbone&) { return {}; }

}  // namespace hdlab::model::designs
