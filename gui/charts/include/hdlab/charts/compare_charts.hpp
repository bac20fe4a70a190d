#pragma once
// Pinned designs overlaid on the trade-off charts and the pipeline Gantts (no Qt here).
// On the throughput and KV charts a pin is one more curve in a colour of its own (palette
// 2, 3, 5, 6; solid where its KV fits, dashed where not, as the current design's); on the
// cost-vs-size chart, whose colours are the metrics, a pin draws the same five metrics in a
// line style of its own (dash-dot, dotted, ...) with one grey legend key naming it. A pin
// whose method has another size axis (HD n against PHD K) cannot share that chart's x axis
// and is left off it.
#include <string>
#include <vector>

#include "hdlab/charts/chart_data.hpp"
#include "hdlab/charts/tradeoff_charts.hpp"
#include "hdlab/gui_core/compare.hpp"

namespace hdlab::charts {

struct PinOverlay {
  std::string label;                // legend entry
  const gui_core::Tradeoffs* result;  // the pin's evaluation; not owned
};

// The palette index and the cost chart's line style of the i-th pin.
int pin_colour(int i);
LineStyle pin_style(int i);

// Adds every pin to `charts` (built from `current` by tradeoff_charts); returns the labels
// of the pins left off the cost-vs-size chart because their size axis differs.
std::vector<std::string> overlay_pins(TradeoffCharts& charts, const gui_core::Tradeoffs& current,
                                      const std::vector<PinOverlay>& pins);

// The Gantts of runs shown one under another: each runs its time axis to `time_end_s`
// (gui_core::shared_time_end of them all) and `label` prefixes the title.
GanttChart pinned_gantt_chart(const simulator::PipelineResult& r, const std::string& label, double time_end_s);

}  // namespace hdlab::charts
