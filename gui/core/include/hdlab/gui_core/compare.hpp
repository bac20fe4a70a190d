#pragma once
// Compare mode without Qt: designs (with their hardware, scenario and pipeline) pinned as
// references, evaluated by the same core calls as the design being edited
// (compute_tradeoffs, simulate_pipeline), and the side-by-side table of their metrics with
// ratios. The GUI keeps a PinList, evaluates pins off the UI thread with evaluate_pin and
// overlays the results on its charts (charts/compare_charts.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/gui_core/tradeoffs.hpp"
#include "hdlab/model/design.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/pipeline.hpp"

namespace hdlab::gui_core {

// What is pinned: everything that decides the numbers, copied at the time of pinning.
struct Pin {
  std::string label;  // legend and column label, e.g. "Qwen3-8B + HD n=4 on H100"
  model::Config config;
  simulator::HardwareProfile hardware;
  simulator::Scenario scenario;
  TradeoffGrid grid;  // the trade-off grid (default_grid of its config and scenario)
  std::optional<simulator::PipelineOptions> pipeline;  // none: no pipeline run to show
};

// "Qwen3-8B + HD n=4 on H100": backbone, short_label of the design, hardware; an HD design
// whose layers are not all full names its mix: "HD n=4 (30 intra, 6 full)".
std::string pin_label(const std::string& backbone, const model::Design& design, const std::string& hardware);

// "pin 3": how charts and table headers name a pin (full labels do not fit a legend); the
// id is PinList's, stable while the pin lives.
std::string pin_key(int id);

// What a pin evaluates to.
struct PinResult {
  Tradeoffs tradeoffs;
  std::optional<simulator::PipelineResult> pipeline;  // when the pin has pipeline options
};

// compute_tradeoffs and simulate_pipeline of the pin's own inputs; ConfigError as theirs.
PinResult evaluate_pin(const Pin& pin, const ProgressFn& progress = {});

// The pins in the order pinned, each with a stable id and its result once evaluated.
class PinList {
 public:
  static constexpr int kMaxPins = 4;  // more columns and overlays stop being readable

  struct Entry {
    int id = 0;
    Pin pin;
    std::optional<PinResult> result;
  };

  // The new pin's id. ConfigError at "/pins" when kMaxPins are pinned already.
  int add(Pin pin);
  // False when no pin has this id.
  bool remove(int id);
  void clear() { entries_.clear(); }
  // False when the pin was removed meanwhile (the result is dropped).
  bool set_result(int id, PinResult result);

  const std::vector<Entry>& entries() const { return entries_; }
  int size() const { return static_cast<int>(entries_.size()); }
  bool full() const { return size() >= kMaxPins; }
  // The pins still waiting for their result.
  std::vector<Entry> pending() const;

 private:
  std::vector<Entry> entries_;
  int next_id_ = 1;
};

// One row of the compare table: a metric in its unit, the current design's value, each
// pin's value and the ratio pin / current (NaN where current is 0 or a value is missing).
struct CompareRow {
  std::string name;  // simulator metric name, or "pipeline_makespan_s" (the pipeline's makespan)
  std::string unit;  // metric_unit's: "s", "B", "tokens/s", ...
  double current = 0;
  std::vector<double> pins;
  std::vector<double> ratios;  // pin / current, per pin
};

// pin / current; NaN when current is 0 or either is NaN.
double compare_ratio(double pin, double current);

// Every scalar metric (simulator::Metric order), then the pipeline step's makespan when the
// current design or a pin has a pipeline run (NaN for those without).
std::vector<CompareRow> compare_rows(const simulator::Metrics& current,
                                     const std::optional<simulator::PipelineResult>& current_pipeline,
                                     const std::vector<PinResult>& pins);

// The end of the time axis every Gantt shares: the longest makespan among the runs (s);
// 0 when there is none.
double shared_time_end(const std::vector<const simulator::PipelineResult*>& runs);

}  // namespace hdlab::gui_core
