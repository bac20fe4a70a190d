#include "hdlab/charts/compare_charts.hpp"

#include "hdlab/charts/pipeline_chart.hpp"

namespace hdlab::charts {
namespace {

// The cost chart's metrics as tradeoff_charts draws them: name, colour (= position), value.
struct CostColumn {
  const char* name;
  double gui_core::SizePoint::*field;
};
constexpr CostColumn kCostColumns[] = {{"train step", &gui_core::SizePoint::train_step_ratio},
                                       {"prefill", &gui_core::SizePoint::prefill_ratio},
                                       {"decode step", &gui_core::SizePoint::decode_step_ratio},
                                       {"KV per seq", &gui_core::SizePoint::kv_bytes_ratio},
                                       {"params", &gui_core::SizePoint::params_ratio}};
constexpr int kKeyColour = 7;  // dark grey: a legend key for a style, not a metric

// A curve in one colour, solid where it fits and dashed (no legend entry) where it does not,
// joined at the last fitting point, as tradeoff_charts draws the current design.
void add_pin_curve(LineChart& chart, const std::vector<gui_core::CurvePoint>& points, const std::string& name,
                   int colour, double scale) {
  LineSeries ok{name, {}, LineStyle::solid, true, colour};
  LineSeries over{name + " (no fit)", {}, LineStyle::dashed, true, colour, false};
  for (const auto& p : points) {
    const XY xy{p.x, p.design * scale};
    if (p.design_fits) {
      ok.points.push_back(xy);
    } else {
      if (over.points.empty() && !ok.points.empty()) over.points.push_back(ok.points.back());
      over.points.push_back(xy);
    }
  }
  // An empty solid series still names the pin in the legend when nothing of it fits.
  chart.series.push_back(ok);
  if (!over.points.empty()) chart.series.push_back(over);
}

bool add_pin_costs(LineChart& chart, const gui_core::Tradeoffs& current, const gui_core::Tradeoffs& pin,
                   const std::string& label, int i) {
  if (!current.axis || !pin.axis || current.axis->symbol != pin.axis->symbol) return false;
  const LineStyle style = pin_style(i);
  for (int c = 0; c < 5; ++c) {
    LineSeries s{label + ": " + kCostColumns[c].name, {}, style, false, c, false};
    for (const auto& p : pin.by_size)
      if (p.error.empty()) s.points.push_back({p.x, p.*(kCostColumns[c].field)});
    chart.series.push_back(std::move(s));
  }
  chart.series.push_back({label, {}, style, false, kKeyColour});
  return true;
}

// The legend's key for dashed parts, when a pin brought the first ones (tradeoff_charts adds
// it for the current design's own).
void ensure_dash_key(LineChart& chart) {
  bool dashed = false;
  for (const auto& s : chart.series) {
    if (s.in_legend && s.style == LineStyle::dashed && s.points.empty()) return;  // the key is there
    dashed = dashed || (!s.in_legend && s.style == LineStyle::dashed);
  }
  if (dashed) chart.series.push_back({"dashed: KV does not fit", {}, LineStyle::dashed, false, kKeyColour});
}

}  // namespace

int pin_colour(int i) {
  static constexpr int colours[] = {2, 3, 5, 6};  // 0 and 1 are the design and its baseline
  return colours[i % 4];
}

LineStyle pin_style(int i) {
  static constexpr LineStyle styles[] = {LineStyle::dash_dot, LineStyle::dotted, LineStyle::dash_dot_dot,
                                         LineStyle::dashed};
  return styles[i % 4];
}

std::vector<std::string> overlay_pins(TradeoffCharts& charts, const gui_core::Tradeoffs& current,
                                      const std::vector<PinOverlay>& pins) {
  std::vector<std::string> left_off;
  for (int i = 0; i < static_cast<int>(pins.size()); ++i) {
    const PinOverlay& p = pins[static_cast<std::size_t>(i)];
    if (!add_pin_costs(charts.cost_vs_size, current, *p.result, p.label, i)) left_off.push_back(p.label);
    add_pin_curve(charts.decode_vs_batch, p.result->decode_vs_batch, p.label, pin_colour(i), 1.0);
    add_pin_curve(charts.decode_vs_context, p.result->decode_vs_context, p.label, pin_colour(i), 1.0);
    add_pin_curve(charts.kv_vs_context, p.result->kv_vs_context, p.label, pin_colour(i), 1e-9);
  }
  for (LineChart* c : {&charts.decode_vs_batch, &charts.decode_vs_context, &charts.kv_vs_context}) ensure_dash_key(*c);
  return left_off;
}

GanttChart pinned_gantt_chart(const simulator::PipelineResult& r, const std::string& label, double time_end_s) {
  GanttChart g = pipeline_gantt_chart(r);
  g.title = label + ": " + g.title;
  g.time_end_s = time_end_s;
  return g;
}

}  // namespace hdlab::charts
