#include "hdlab/gui_core/tradeoffs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::gui_core {
namespace {

using simulator::Metric;

double ratio(double design, double baseline) {
  return baseline != 0 ? design / baseline : std::numeric_limits<double>::quiet_NaN();
}

// Powers of two in [lo, hi] plus `extra` (when > 0), sorted, no duplicates.
std::vector<std::int64_t> powers_of_two_with(std::int64_t lo, std::int64_t hi, std::int64_t extra) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = lo; x <= hi; x *= 2) v.push_back(x);
  if (extra > 0) v.push_back(extra);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// Counts evaluations and asks the callback whether to go on.
struct Progress {
  const ProgressFn& fn;
  int total = 0;
  int done = 0;
  bool step() { return !fn || fn(++done, total); }
};

// Grid points only need the scalar metrics: the serving matrix shrinks to its first cell
// (check_scenario wants at least one).
simulator::Scenario without_serving(simulator::Scenario s) {
  // Keep the first entry of each (erase, not resize: GCC 12 warns that a resize might grow).
  if (s.serving.batches.size() > 1) s.serving.batches.erase(s.serving.batches.begin() + 1, s.serving.batches.end());
  if (s.serving.input_lengths.size() > 1)
    s.serving.input_lengths.erase(s.serving.input_lengths.begin() + 1, s.serving.input_lengths.end());
  return s;
}

SizePoint size_point(const model::Config& c, const simulator::HardwareProfile& hw, const simulator::Scenario& s,
                     const simulator::Metrics& baseline, double x) {
  SizePoint p;
  p.x = x;
  try {
    const model::Config cx = model::make_config(c.base, with_size(c.design, x));
    const simulator::Metrics m = simulator::evaluate(cx, hw, s);
    p.train_step_ratio = ratio(m[Metric::train_step_s], baseline[Metric::train_step_s]);
    p.prefill_ratio = ratio(m[Metric::prefill_s], baseline[Metric::prefill_s]);
    p.decode_step_ratio = ratio(m[Metric::decode_step_s], baseline[Metric::decode_step_s]);
    p.kv_bytes_ratio = ratio(m[Metric::kv_bytes_per_seq], baseline[Metric::kv_bytes_per_seq]);
    p.params_ratio = ratio(m[Metric::params_total], baseline[Metric::params_total]);
  } catch (const model::ConfigError& e) {
    p.error = e.what();
  }
  return p;
}

// Decode at (batch, context) for the design and the baseline; kv.context follows the
// decode context so max_batch_seqs says whether this batch's cache fits.
bool decode_point(const model::Config& c, const model::Config& base, const simulator::HardwareProfile& hw,
                  simulator::Scenario s, std::int64_t batch, std::int64_t context, CurvePoint& tokens,
                  CurvePoint& kv) {
  s.decode.batch = batch;
  s.decode.context = context;
  s.kv.context = context;
  try {
    const simulator::Metrics d = simulator::evaluate(c, hw, s);
    const simulator::Metrics b = simulator::evaluate(base, hw, s);
    tokens.design = d[Metric::decode_tokens_per_s];
    tokens.baseline = b[Metric::decode_tokens_per_s];
    tokens.design_fits = static_cast<double>(batch) <= d[Metric::max_batch_seqs];
    tokens.baseline_fits = static_cast<double>(batch) <= b[Metric::max_batch_seqs];
    kv.design = d[Metric::kv_bytes_per_seq];
    kv.baseline = b[Metric::kv_bytes_per_seq];
    kv.design_fits = d[Metric::max_batch_seqs] >= 1;
    kv.baseline_fits = b[Metric::max_batch_seqs] >= 1;
    return true;
  } catch (const model::ConfigError&) {
    return false;  // a point the scenario cannot run is left out of the curve
  }
}

}  // namespace

std::string short_label(const model::Design& d) {
  std::string s = model::method_label(d.method);
  if (d.growth) s += " grown";
  return s;
}

model::Config baseline_config(const model::Config& c) { return model::make_config(c.base, model::Design{}); }

std::optional<SizeAxis> size_axis(const model::Config& c) {
  const std::optional<model::SizeKnob> knob = model::size_knob(c.design.method);
  if (!knob) return std::nullopt;
  return SizeAxis{knob->key, knob->label, knob->candidates};
}

model::Design with_size(const model::Design& d, double x) {
  model::Design out = d;
  out.method = model::with_size(d.method, x);
  out.name.clear();  // the label described the old size
  return out;
}

TradeoffGrid default_grid(const model::Config& c, const simulator::Scenario& s) {
  TradeoffGrid g;
  g.batches = powers_of_two_with(1, 1024, s.decode.batch);
  const std::int64_t top =
      std::min<std::int64_t>(std::int64_t{1} << 20, std::max({c.base.max_context, s.decode.context, std::int64_t{4096}}));
  g.contexts = powers_of_two_with(512, top, s.decode.context);
  return g;
}

Tradeoffs compute_tradeoffs(const model::Config& c, const simulator::HardwareProfile& hw,
                            const simulator::Scenario& scenario, const TradeoffGrid& grid,
                            const ProgressFn& progress) {
  Tradeoffs t;
  const model::Config base = baseline_config(c);
  t.design = simulator::evaluate(c, hw, scenario);  // a scenario error stops here, whole
  t.baseline = simulator::evaluate(base, hw, scenario);
  t.design_fit = simulator::memory_fit(c, hw, scenario);
  t.baseline_fit = simulator::memory_fit(base, hw, scenario);
  t.layers = layer_costs(c, hw, scenario);
  const simulator::Scenario s = without_serving(scenario);
  t.axis = size_axis(c);
  const int sizes = t.axis ? static_cast<int>(t.axis->values.size()) : 0;
  Progress p{progress, 1 + sizes + static_cast<int>(grid.batches.size() + grid.contexts.size())};
  if (!p.step()) return t.cancelled = true, t;
  for (int i = 0; i < sizes; ++i) {
    t.by_size.push_back(size_point(c, hw, s, t.baseline, t.axis->values[static_cast<std::size_t>(i)]));
    if (!p.step()) return t.cancelled = true, t;
  }
  for (std::int64_t b : grid.batches) {
    CurvePoint tokens{static_cast<double>(b)}, kv;
    if (decode_point(c, base, hw, s, b, s.decode.context, tokens, kv)) t.decode_vs_batch.push_back(tokens);
    if (!p.step()) return t.cancelled = true, t;
  }
  for (std::int64_t ctx : grid.contexts) {
    CurvePoint tokens{static_cast<double>(ctx)}, kv{static_cast<double>(ctx)};
    if (decode_point(c, base, hw, s, s.decode.batch, ctx, tokens, kv)) {
      t.decode_vs_context.push_back(tokens);
      t.kv_vs_context.push_back(kv);
    }
    if (!p.step()) return t.cancelled = true, t;
  }
  return t;
}

}  // namespace hdlab::gui_core
