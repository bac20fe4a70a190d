#pragma once
// The Gantt chart of a simulated pipeline step (no Qt here): one row per device, a bar
// per task, forward and backward in two colours, neighbouring micro-batches in two
// shades; the title carries the schedule, makespan and bubble.
#include <string>

#include "hdlab/charts/chart_data.hpp"
#include "hdlab/simulator/pipeline.hpp"

namespace hdlab::charts {

GanttChart pipeline_gantt_chart(const simulator::PipelineResult& r);

}  // namespace hdlab::charts
