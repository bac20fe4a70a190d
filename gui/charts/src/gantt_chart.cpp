#include <algorithm>
#include <map>
#include <tuple>

#include <QPen>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include "chart_style.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/interact.hpp"

namespace hdlab::charts {
namespace {

struct TimeUnit {
  double scale;
  const char* name;
};
// The unit that keeps the axis labels short for a makespan in seconds.
TimeUnit time_unit(double makespan_s) {
  if (makespan_s < 1e-3) return {1e6, "us"};
  if (makespan_s < 1.0) return {1e3, "ms"};
  return {1.0, "s"};
}

// All bars of one (row, category, shade) as one area: the upper line steps up at each
// bar's start and down at its end, so the gaps between bars have zero height.
QAreaSeries* bar_area(const std::vector<const GanttBar*>& bars, double y0, double y1, double scale) {
  auto* upper = new QLineSeries();
  auto* lower = new QLineSeries();
  for (const GanttBar* b : bars) {
    upper->append(b->start_s * scale, y0);
    upper->append(b->start_s * scale, y1);
    upper->append(b->end_s * scale, y1);
    upper->append(b->end_s * scale, y0);
  }
  lower->append(bars.front()->start_s * scale, y0);
  lower->append(bars.back()->end_s * scale, y0);
  return new QAreaSeries(upper, lower);
}

// What the read-out shows for a bar: its device, its label (micro-batch), its category
// (pass), and start and duration in the time axis' unit.
QString bar_text(const GanttChart& spec, const GanttBar& b, const TimeUnit& unit) {
  QStringList lines;
  lines << QString::fromStdString(spec.rows[static_cast<std::size_t>(b.row)]);
  if (!b.label.empty()) lines << QString::fromStdString(b.label);
  if (b.category >= 0 && b.category < static_cast<int>(spec.categories.size()))
    lines << QString::fromStdString(spec.categories[static_cast<std::size_t>(b.category)]);
  lines << QString("start: %1 %2").arg(read_out_number(b.start_s * unit.scale), unit.name);
  lines << QString("duration: %1 %2").arg(read_out_number((b.end_s - b.start_s) * unit.scale), unit.name);
  lines.removeAll(QString());
  return lines.join('\n');
}

// The bars of an area in data coordinates (time in the axis' unit, row band in y) and
// their read-outs, for interact.hpp.
void set_hover(QAreaSeries& area, const GanttChart& spec, const std::vector<const GanttBar*>& bars, double y0,
               double y1, const TimeUnit& unit) {
  QVariantList rects;
  QStringList texts;
  for (const GanttBar* b : bars) {
    rects << QRectF(b->start_s * unit.scale, y0, (b->end_s - b->start_s) * unit.scale, y1 - y0);
    texts << bar_text(spec, *b, unit);
  }
  area.setProperty(detail::kHoverBars, rects);
  area.setProperty(detail::kHoverLabels, texts);
}

}  // namespace

std::unique_ptr<QChart> build_gantt_chart(const GanttChart& spec) {
  std::unique_ptr<QChart> chart(detail::new_chart(spec.title));
  if (!spec.warning.empty()) {
    // The title as it was with the warning after it, all in red.
    chart->setTitle(QString::fromStdString(spec.title + " - " + spec.warning));
    chart->setTitleBrush(QColor(0xB0, 0x00, 0x20));
  }
  const int rows = static_cast<int>(spec.rows.size());
  double makespan = 0;
  for (const auto& b : spec.bars) makespan = std::max(makespan, b.end_s);
  makespan = std::max(makespan, spec.time_end_s);  // a shared axis may run past this run's end
  const TimeUnit unit = time_unit(makespan > 0 ? makespan : 1.0);

  auto* x = new QValueAxis();
  x->setRange(0, makespan > 0 ? makespan * unit.scale : 1.0);
  x->applyNiceNumbers();
  x->setLabelFormat("%g");
  x->setTitleText(QString("time (%1)").arg(unit.name));
  auto* y = new QCategoryAxis();
  y->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
  y->setRange(0, std::max(rows, 1));
  // Category boundaries go bottom-up; rows are listed top-down.
  for (int r = rows - 1; r >= 0; --r) y->append(QString::fromStdString(spec.rows[static_cast<std::size_t>(r)]), rows - r);
  y->setGridLineVisible(false);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);

  std::map<std::tuple<int, int, int>, std::vector<const GanttBar*>> groups;
  for (const auto& b : spec.bars)
    if (b.row >= 0 && b.row < rows && b.end_s > b.start_s) groups[{b.row, b.category, b.shade & 1}].push_back(&b);
  std::vector<bool> in_legend(spec.categories.size(), false);
  for (auto& [key, bars] : groups) {
    const auto [row, category, shade] = key;
    std::sort(bars.begin(), bars.end(), [](const GanttBar* a, const GanttBar* b) { return a->start_s < b->start_s; });
    const double y0 = rows - 1 - row + 0.12, y1 = rows - 1 - row + 0.88;
    QAreaSeries* area = bar_area(bars, y0, y1, unit.scale);
    set_hover(*area, spec, bars, y0, y1, unit);
    const bool named = category >= 0 && category < static_cast<int>(spec.categories.size());
    area->setName(named ? QString::fromStdString(spec.categories[static_cast<std::size_t>(category)]) : QString());
    const QColor c = palette(category);
    area->setBrush(shade ? c.lighter(135) : c);
    area->setPen(Qt::NoPen);  // a pen would also trace the zero-height gaps
    chart->addSeries(area);
    area->attachAxis(x);
    area->attachAxis(y);
    // One legend entry per category.
    const bool first = named && !in_legend[static_cast<std::size_t>(category)];
    if (named) in_legend[static_cast<std::size_t>(category)] = true;
    if (!first)
      for (QLegendMarker* m : chart->legend()->markers(area)) m->setVisible(false);
  }
  return chart;
}

}  // namespace hdlab::charts
