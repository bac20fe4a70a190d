#include "hdlab/charts/serving_charts.hpp"

#include <utility>

namespace hdlab::charts {
namespace {

LineSeries cdf_series(const char* name, const simulator::Percentiles& p) {
  LineSeries s{name, {}, LineStyle::solid, false, -1};
  for (const auto& [value, fraction] : p.cdf) s.points.push_back({value, fraction});
  return s;
}

}  // namespace

LineChart latency_cdf_chart(const simulator::ServeResult& r) {
  LineChart c;
  c.title = "Latency distributions";
  c.x = {"latency (s)", 10};
  c.y = {"share of requests", 0};
  c.series = {cdf_series("TTFT", r.ttft_s), cdf_series("TPOT", r.tpot_s), cdf_series("E2E", r.e2e_s)};
  return c;
}

LineChart throughput_vs_load_chart(const std::vector<gui_core::LoadPoint>& load) {
  LineChart c;
  c.title = "Throughput vs offered load";
  c.x = {"offered load (requests/s)", 0};
  c.y = {"output (tokens/s)", 0};
  LineSeries served{"served", {}, LineStyle::solid, true, 0};
  LineSeries offered{"offered (rate x output)", {}, LineStyle::dashed, false, 7};
  for (const gui_core::LoadPoint& p : load) {
    served.points.push_back({p.offered_rate_per_s, p.result.output_tokens_per_s});
    // Every request of the sweep asks for the same outputs: mean output tokens x rate.
    const double mean_output = p.result.requests > 0 ? static_cast<double>(p.result.output_tokens) /
                                                           static_cast<double>(p.result.requests)
                                                     : 0;
    offered.points.push_back({p.offered_rate_per_s, p.offered_rate_per_s * mean_output});
  }
  c.series = {std::move(served), std::move(offered)};
  return c;
}

LineChart ttft_vs_load_chart(const std::vector<gui_core::LoadPoint>& load) {
  LineChart c;
  c.title = "Time to first token vs offered load";
  c.x = {"offered load (requests/s)", 0};
  c.y = {"TTFT (s)", 10};
  LineSeries p90{"p90 TTFT", {}, LineStyle::solid, true, 0};
  LineSeries p50{"p50 TTFT", {}, LineStyle::dashed, true, 1};
  for (const gui_core::LoadPoint& p : load) {
    p90.points.push_back({p.offered_rate_per_s, p.result.ttft_s.p90});
    p50.points.push_back({p.offered_rate_per_s, p.result.ttft_s.p50});
  }
  c.series = {std::move(p90), std::move(p50)};
  return c;
}

LineChart kv_over_time_chart(const simulator::ServeResult& r) {
  LineChart c;
  c.title = "KV cache over the run";
  c.x = {"time (s)", 0};
  c.y = {"KV cache (fraction)", 0};
  LineSeries used{"used", {}, LineStyle::solid, false, 0};
  LineSeries reserved{"reserved", {}, LineStyle::dashed, false, 1};
  for (const simulator::EngineSample& s : r.timeline) {
    used.points.push_back({s.time_s, s.kv_used_fraction});
    reserved.points.push_back({s.time_s, s.kv_reserved_fraction});
  }
  c.series = {std::move(used), std::move(reserved)};
  return c;
}

}  // namespace hdlab::charts
