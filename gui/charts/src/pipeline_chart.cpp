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
  char warning[200];
  std::snprintf(warning, sizeof warning, "Does not fit: device %lld needs %.1f GB of %.1f GB",
                static_cast<long long>(fit.device), fit.current.need_bytes / 1e9, fit.capacity_bytes / 1e9);
  g.warning = warning;
  // Short enough for a chart title: the layouts only (the view's summary gives their needs).
  std::vector<std::string> changes;
  if (fit.smaller_batch) changes.push_back("micro-batch " + std::to_string(fit.smaller_batch->batch));
  if (fit.more_devices)
    changes.push_back("tp " + std::to_string(fit.more_devices->tp) + " x pp " + std::to_string(fit.more_devices->pp));
  if (changes.empty()) g.warning += "; no smaller micro-batch, tp or pp fits";
  else g.warning += "; fits at " + changes.front() + (changes.size() > 1 ? " or " + changes.back() : "");
  return g;
}

}  // namespace hdlab::charts
