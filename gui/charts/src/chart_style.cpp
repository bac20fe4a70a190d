#include "chart_style.hpp"

#include <cmath>

#include <QFont>
#include <QtCharts/QLegend>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include "hdlab/charts/charts.hpp"

namespace hdlab::charts {

QColor palette(int index) {
  // Okabe & Ito (2008): distinguishable under the common colour-vision deficiencies.
  static const QColor colours[] = {QColor(0x00, 0x72, 0xB2), QColor(0xE6, 0x9F, 0x00), QColor(0x00, 0x9E, 0x73),
                                   QColor(0xCC, 0x79, 0xA7), QColor(0x56, 0xB4, 0xE9), QColor(0xD5, 0x5E, 0x00),
                                   QColor(0xB8, 0xA9, 0x00), QColor(0x44, 0x44, 0x44)};
  constexpr int n = static_cast<int>(sizeof colours / sizeof colours[0]);
  return colours[((index % n) + n) % n];
}

namespace detail {

void Range::add(double v, bool log) {
  if (!std::isfinite(v) || (log && v <= 0)) return;
  lo = std::min(lo, v);
  hi = std::max(hi, v);
}

bool drawable(const XY& p, const Axis& x, const Axis& y) {
  if (!std::isfinite(p.x) || !std::isfinite(p.y)) return false;
  if (x.log_base > 0 && p.x <= 0) return false;
  if (y.log_base > 0 && p.y <= 0) return false;
  return true;
}

QChart* new_chart(const std::string& title) {
  auto* chart = new QChart();
  chart->setTitle(QString::fromStdString(title));
  QFont f = chart->titleFont();
  f.setPointSizeF(f.pointSizeF() * 1.15);
  f.setBold(true);
  chart->setTitleFont(f);
  chart->legend()->setAlignment(Qt::AlignBottom);
  QFont legend = chart->legend()->font();
  legend.setPointSizeF(legend.pointSizeF() * 0.9);
  chart->legend()->setFont(legend);
  chart->setAnimationOptions(QChart::NoAnimation);  // exports must not catch a half-drawn frame
  chart->setBackgroundRoundness(0);
  return chart;
}

QAbstractAxis* make_axis(const Axis& spec, Range range) {
  const QString title = QString::fromStdString(spec.title);
  if (range.empty()) range = spec.log_base > 0 ? Range{1, 10} : Range{0, 1};
  if (spec.log_base > 0) {
    auto* axis = new QLogValueAxis();
    axis->setBase(spec.log_base);
    // Whole powers of the base at both ends give tick labels at 1, 2, 4... or 1, 10, 100.
    const double b = spec.log_base;
    double lo = std::pow(b, std::floor(std::log(range.lo) / std::log(b) + 1e-9));
    double hi = std::pow(b, std::ceil(std::log(range.hi) / std::log(b) - 1e-9));
    if (hi <= lo) hi = lo * b;
    axis->setRange(lo, hi);
    axis->setLabelFormat("%g");
    axis->setMinorTickCount(b == 10 ? 8 : 0);
    axis->setTitleText(title);
    return axis;
  }
  auto* axis = new QValueAxis();
  double lo = range.lo, hi = range.hi;
  if (hi == lo) {
    lo -= std::max(1.0, std::fabs(lo) * 0.1);
    hi += std::max(1.0, std::fabs(hi) * 0.1);
  }
  // Ratios and times start at 0 when the data is all positive: the eye reads heights.
  if (lo > 0 && lo < 0.5 * hi) lo = 0;
  axis->setRange(lo, hi);
  axis->applyNiceNumbers();
  axis->setLabelFormat("%g");
  axis->setTitleText(title);
  return axis;
}

}  // namespace detail
}  // namespace hdlab::charts
