#pragma once
// The Gantt chart of a simulated pipeline step (no Qt here): one row per device, a bar
// per task, forward and backward in two colours, neighbouring micro-batches in two
// shades; the title carries the schedule, makespan and bubble, and the warning when the
// busiest device's memory does not fit (simulator/fit.hpp).
#include <string>

#include "hdlab/charts/chart_data.hpp"
#include "hdlab/simulator/fit.hpp"
#include "hdlab/simulator/pipeline.hpp"

namespace hdlab::charts {

GanttChart pipeline_gantt_chart(const simulator::PipelineResult& r);
// With `fit` (pipeline_fit of that run), when it does not fit, the warning "Does not fit:
// device 0 needs 159.4 GB of 80.0 GB; fits at tp 2 x pp 4" (or "micro-batch 3 or tp 2 x pp 4").
GanttChart pipeline_gantt_chart(const simulator::PipelineResult& r, const simulator::PhaseFit& fit);

}  // namespace hdlab::charts
