#pragma once
// What the costs table says about each scalar metric (simulator::Metric): a label in
// words, the group it is shown under, the unit its value is shown in and a tooltip that
// says what it measures and how the simulator computes it. The metric's own name
// (metric_name, the CLI's and the CSV's column) stays in the tooltip, so a number seen
// in the GUI can be found in a sweep's output.
//
// Every metric has an entry; tests check that, so a metric added to the simulator
// without one fails them rather than showing up as a raw snake_case name.
#include <span>
#include <string>

#include "hdlab/simulator/evaluate.hpp"

namespace hdlab::gui_core {

// In the order the table shows them.
enum class MetricGroup { size, training, prefill, decode, memory, serving };
inline constexpr int metric_group_count = 6;

struct MetricInfo {
  simulator::Metric metric;
  MetricGroup group;
  const char* label;    // "Train step time"
  const char* unit;     // the unit the value is shown in, in words: "seconds", "bytes", ...
  const char* tooltip;  // what it measures and how it is computed (plain text)
};

// Every entry, grouped and in display order (group by group).
std::span<const MetricInfo> metric_infos();
// The entry of `m`; nullptr when it has none (a metric added without one).
const MetricInfo* find_metric_info(simulator::Metric m);

// "Training", "Decode", ...
const char* group_label(MetricGroup g);
// One line under the group's name: the scenario fields its metrics are computed at.
const char* group_tooltip(MetricGroup g);

// The tooltip of a metric's row: its description and the column name it has in the
// CLI and CSV output. For a metric without an entry: its name and that it has none.
std::string metric_tooltip(simulator::Metric m);

}  // namespace hdlab::gui_core
