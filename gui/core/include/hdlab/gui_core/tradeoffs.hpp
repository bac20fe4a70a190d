#pragma once
// The trade-off curves the GUI charts, computed without Qt by evaluating the design and
// its baseline over small grids: cost against the design's size (HD n, PHD K, VWN n/m,
// looped iterations), decode throughput against batch and context, KV memory against
// context. Each grid point is one simulator::evaluate call; a progress callback reports
// every point and can stop the work (the GUI runs this off the UI thread).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/gui_core/layer_costs.hpp"
#include "hdlab/model/design.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/fit.hpp"

namespace hdlab::gui_core {

// The baseline a design is charted against: the base backbone with no method and no
// growth, i.e. the model one starts from.
model::Config baseline_config(const model::Config& c);

// A label short enough for a chart legend: "HD n=4", "PHD-cswa K=3", "VWN n/m=3/2",
// "looped x4", "baseline"; " grown" appended when growth applies.
std::string short_label(const model::Design& d);

// The size knob of a design's method and the values charted along it.
struct SizeAxis {
  std::string symbol;  // "n", "K", "n/m", "iterations"
  std::string title;   // axis title with what it counts, e.g. "HD streams n"
  std::vector<double> values;
};
// Empty for the baseline (growth-only designs included): there is no size to vary.
std::optional<SizeAxis> size_axis(const model::Config& c);
// The design with its size set to x: HD n (a local window keeps its span in tokens,
// window/n, when it divides), PHD K, VWN n = x*m, looped iterations. ConfigError when x
// is not a valid size (VWN x*m not an integer).
model::Design with_size(const model::Design& d, double x);

struct TradeoffGrid {
  std::vector<std::int64_t> batches;   // decode batch, sequences
  std::vector<std::int64_t> contexts;  // tokens in the KV cache per sequence
};
// Powers of two: batch 1..1024, context 512..max(native context, scenario contexts),
// plus the scenario's own batch and context.
TradeoffGrid default_grid(const model::Config& c, const simulator::Scenario& s);

// One size of the method, every cost relative to the baseline at the same scenario.
struct SizePoint {
  double x = 0;
  double train_step_ratio = 0;
  double prefill_ratio = 0;
  double decode_step_ratio = 0;
  double kv_bytes_ratio = 0;
  double params_ratio = 0;
  std::string error;  // non-empty: this size is not a valid design (ratios unset)
};

// A design and its baseline at one grid point.
struct CurvePoint {
  double x = 0;
  double design = 0;
  double baseline = 0;
  bool design_fits = true;    // the batch's KV cache at this context fits next to the weights
  bool baseline_fits = true;
};

struct Tradeoffs {
  simulator::Metrics design;    // at the scenario
  simulator::Metrics baseline;  // at the scenario
  // Whether each phase's memory fits the device at the scenario, and what would fit.
  simulator::MemoryFit design_fit, baseline_fit;
  LayerCosts layers;            // the design's per-layer costs at the scenario
  std::optional<SizeAxis> axis;
  std::vector<SizePoint> by_size;
  std::vector<CurvePoint> decode_vs_batch;    // tokens/s at the scenario's decode context
  std::vector<CurvePoint> decode_vs_context;  // tokens/s at the scenario's decode batch
  std::vector<CurvePoint> kv_vs_context;      // KV bytes per sequence
  bool cancelled = false;                     // stopped by the callback; curves partial
};

// Called after each evaluation with (done, total); return false to stop.
using ProgressFn = std::function<bool(int done, int total)>;

// ConfigError when the scenario does not fit the design at all (check_scenario).
Tradeoffs compute_tradeoffs(const model::Config& c, const simulator::HardwareProfile& hw,
                            const simulator::Scenario& s, const TradeoffGrid& grid,
                            const ProgressFn& progress = {});

}  // namespace hdlab::gui_core
