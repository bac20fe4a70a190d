#include "hdlab/charts/pipeline_chart.hpp"

#include <cstdio>
#include <vector>

#include "hdlab/simulator/pipeline_io.hpp"

namespace hdlab::charts {

GanttChart pipeline_gantt_chart(const simulator::PipelineResult& r) {
  GanttChart g;
  const simulator::PipelineMetrics& m = r.metrics;
  char title[200];
  std::snprintf(title, sizeof title, "%s, %lld stages, %lld micro-batches: makespan %.4g s, bubble %.1f %%",
                simulator::schedule_label(r.options).c_str(), static_cast<long long>(r.options.stages),
                static_cast<long long>(r.options.microbatches), m.makespan_s, m.bubble_fraction * 100);
  g.title = title;
  for (std::int64_t d = 0; d < r.options.stages; ++d) g.rows.push_back("device " + std::to_string(d));
  g.categories = {"forward", "backward", "weight gradient (W)"};  // W: ZB-H1's tasks split off the backward
  g.bars.reserve(r.tasks.size());
  for (const simulator::PipelineTask& t : r.tasks)
    g.bars.push_back({t.device, t.start_s, t.end_s, t.weight ? 2 : t.backward ? 1 : 0, t.microbatch % 2,
                      "micro-batch " + std::to_string(t.microbatch)});
  return g;
}

GanttChart pipeline_gantt_chart(const simulator::PipelineResult& r, const simulator::PhaseFit& fit) {
  GanttChart g = pipeline_gantt_chart(r);
  if (fit.fits()) return g;
  // Two words, so the title stays within two lines in a narrow window (a third would leave
  // the plot too little height); the view's red line above the chart gives the device, its
  // needs and the smallest layout that fits.
  g.warning = "does not fit";
  return g;
}

}  // namespace hdlab::charts
