#include "hdlab/charts/tradeoff_charts.hpp"

#include <cstdio>
#include <functional>

namespace hdlab::charts {
namespace {

using Value = std::function<double(const gui_core::CurvePoint&)>;
using Fits = std::function<bool(const gui_core::CurvePoint&)>;

// A curve as two series of one colour: solid where it fits, dashed where it does not;
// the dashed part starts at the last fitting point so the line stays continuous. The
// dashed part has no legend entry of its own: one grey dashed key (add_dash_key) says
// what dashes mean for every design, which keeps the legend to one row under the plot.
void add_curve(LineChart& chart, const std::vector<gui_core::CurvePoint>& points, const std::string& name, int colour,
               const Value& value, const Fits& fits, double scale) {
  LineSeries ok{name, {}, LineStyle::solid, true, colour};
  LineSeries over{name + " (no fit)", {}, LineStyle::dashed, true, colour, false};
  over.group = name;  // its legend entry is the solid part's
  const XY* last_ok = nullptr;
  for (const auto& p : points) {
    const XY xy{p.x, value(p) * scale};
    if (fits(p)) {
      ok.points.push_back(xy);
      last_ok = &ok.points.back();
    } else {
      if (over.points.empty() && last_ok) over.points.push_back(*last_ok);
      over.points.push_back(xy);
    }
  }
  if (!ok.points.empty()) chart.series.push_back(ok);
  if (!over.points.empty()) chart.series.push_back(over);
}

// The legend's key for the dashed parts, when a chart has any: a series with no points.
void add_dash_key(LineChart& chart) {
  for (const auto& s : chart.series)
    if (!s.in_legend && s.style == LineStyle::dashed) {
      chart.series.push_back({"dashed: KV does not fit", {}, LineStyle::dashed, false, 7});
      return;
    }
}

LineChart cost_chart(const gui_core::Tradeoffs& t) {
  LineChart c;
  c.title = "Cost vs " + (t.axis ? t.axis->symbol : std::string("size")) + ", relative to the baseline";
  c.x = {t.axis ? t.axis->title : std::string("size"), 2};
  c.y = {"x baseline", 2};
  c.references.push_back({"baseline", 1.0});
  if (!t.axis) return c;
  struct Column {
    const char* name;
    double gui_core::SizePoint::*field;
  };
  const Column columns[] = {{"train step", &gui_core::SizePoint::train_step_ratio},
                            {"prefill", &gui_core::SizePoint::prefill_ratio},
                            {"decode step", &gui_core::SizePoint::decode_step_ratio},
                            {"KV per seq", &gui_core::SizePoint::kv_bytes_ratio},
                            {"params", &gui_core::SizePoint::params_ratio}};
  for (int i = 0; i < 5; ++i) {
    LineSeries s{columns[i].name, {}, LineStyle::solid, true, i};
    for (const auto& p : t.by_size)
      if (p.error.empty()) s.points.push_back({p.x, p.*(columns[i].field)});
    c.series.push_back(std::move(s));
  }
  return c;
}

}  // namespace

TradeoffCharts tradeoff_charts(const gui_core::Tradeoffs& t, const std::string& design, const std::string& baseline,
                               double device_memory_bytes) {
  TradeoffCharts out;
  out.cost_vs_size = cost_chart(t);
  const Value tokens_design = [](const gui_core::CurvePoint& p) { return p.design; };
  const Value tokens_base = [](const gui_core::CurvePoint& p) { return p.baseline; };
  const Fits fits_design = [](const gui_core::CurvePoint& p) { return p.design_fits; };
  const Fits fits_base = [](const gui_core::CurvePoint& p) { return p.baseline_fits; };

  out.decode_vs_batch.title = "Decode throughput vs batch";
  out.decode_vs_batch.x = {"batch (sequences)", 2};
  out.decode_vs_batch.y = {"tokens/s", 10};
  add_curve(out.decode_vs_batch, t.decode_vs_batch, design, 0, tokens_design, fits_design, 1.0);
  add_curve(out.decode_vs_batch, t.decode_vs_batch, baseline, 1, tokens_base, fits_base, 1.0);
  add_dash_key(out.decode_vs_batch);

  out.decode_vs_context.title = "Decode throughput vs context";
  out.decode_vs_context.x = {"context (tokens in the KV cache)", 2};
  out.decode_vs_context.y = {"tokens/s", 10};
  add_curve(out.decode_vs_context, t.decode_vs_context, design, 0, tokens_design, fits_design, 1.0);
  add_curve(out.decode_vs_context, t.decode_vs_context, baseline, 1, tokens_base, fits_base, 1.0);
  add_dash_key(out.decode_vs_context);

  out.kv_vs_context.title = "KV cache per sequence vs context";
  out.kv_vs_context.x = {"context (tokens)", 2};
  out.kv_vs_context.y = {"GB per sequence", 10};
  add_curve(out.kv_vs_context, t.kv_vs_context, design, 0, tokens_design, fits_design, 1e-9);
  add_curve(out.kv_vs_context, t.kv_vs_context, baseline, 1, tokens_base, fits_base, 1e-9);
  add_dash_key(out.kv_vs_context);
  if (device_memory_bytes > 0) {
    char name[64];
    std::snprintf(name, sizeof name, "device memory (%.0f GB)", device_memory_bytes * 1e-9);
    out.kv_vs_context.references.push_back({name, device_memory_bytes * 1e-9});
  }
  return out;
}

}  // namespace hdlab::charts
