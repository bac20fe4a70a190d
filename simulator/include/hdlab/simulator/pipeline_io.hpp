#pragma once
// Pipeline options from JSON (the CLI, sweeps and the GUI share one format), results to
// JSON, the sweep columns, and a text Gantt chart.
//
// Options object (every key checked; unknown keys are ConfigErrors at their pointer):
//   {"pp": 4,                      pipeline devices p (required)
//    "microbatches": 16,           micro-batches m per optimizer step (required)
//    "schedule": "1f1b",           "gpipe" | "1f1b" | "zb-h1" | "interleaved" | "interleaved:<v>"
//    "virtual_stages": 2,          v for interleaved (default: the ":v" suffix, else 2)
//    "group": 0,                   micro-batches per priority group; 0: the schedule's default
//    "partition": "balanced"}      "balanced" | "uniform" | [layers per chunk, in model order]
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/simulator/pipeline.hpp"

namespace hdlab::simulator {

// "gpipe", "1f1b", "zb-h1", "interleaved", "interleaved:4". virtual_stages is 0 when the
// text names none. ConfigError at `pointer` otherwise.
struct ScheduleSpec {
  ScheduleKind kind = ScheduleKind::one_f_one_b;
  std::int64_t virtual_stages = 0;
};
ScheduleSpec parse_schedule(const std::string& text, const std::string& pointer);
// "gpipe", "1f1b", "zb-h1", "interleaved:2".
std::string schedule_label(const PipelineOptions& o);

PipelineOptions parse_pipeline_options(const nlohmann::json& j, const std::string& pointer = "/pipeline");
nlohmann::json to_json(const PipelineOptions& o);
nlohmann::json to_json(const PipelineMetrics& m);
// Options, partition, path, devices and metrics; with `timeline`, every task as
// {"device", "microbatch", "pass": "forward"|"backward"|"weight", "step", "start_s", "end_s"}
// ("weight": ZB-H1's W, the backward's weight-gradient part; its "backward" is then B)
// ("step" indexes "path", which names the chunk, layers and loop iterations).
nlohmann::json to_json(const PipelineResult& r, bool timeline);

// Sweep columns (names carry units, as evaluate.hpp's) and one row of values.
std::vector<std::string> pipeline_metric_columns();
void pipeline_metric_row(const PipelineMetrics& m, std::vector<double>& row);

// One row per device, time left to right over `width` columns: a forward of micro-batch
// i prints as the letter 'a' + i % 26, its backward as the capital, ZB-H1's W as the digit
// '0' + i % 10, idle time as '.'.
// Empty when some device has more tasks than columns (the chart would drop tasks).
std::string pipeline_gantt(const PipelineResult& r, int width);

}  // namespace hdlab::simulator
