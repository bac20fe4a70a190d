// Fitting a chart's labels to the size it is drawn at (charts.hpp: fit_labels).
//
// Qt Charts gives a horizontal axis' tick label the axis width / tick count (less
// padding), an axis title the plot's side, a legend label its marker's share of the
// legend, and elides whatever is wider ("10...", "Qwen3-8B alo..."). So, before a chart
// is drawn at a size, thin the ticks until every label has that room with a margin, move
// a legend that would not fit in one row below the plot to a column on the right, and
// break titles and legend labels that are still too long onto more lines. The builders'
// choices (tick count, log base, legend side, texts) are kept as properties of the axis,
// legend, marker and chart, so a chart made larger again gets them back.
#include <algorithm>
#include <cmath>

#include <QCoreApplication>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QTextDocument>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include "hdlab/charts/charts.hpp"

namespace hdlab::charts {
namespace {

// Pixels kept free around each tick label: Qt pads a label by 4 px on each side before it
// elides, and labels that touch read as one number.
constexpr double kLabelMargin = 12;
// A legend entry beyond its text: the marker square, its gap and the gap to the next one.
constexpr double kMarkerExtra = 34;

const char* const kTicks = "hdlab_ticks";
const char* const kBase = "hdlab_log_base";
const char* const kMinor = "hdlab_minor_ticks";
const char* const kLegendSide = "hdlab_legend_side";
const char* const kLabel = "hdlab_label";
const char* const kTitle = "hdlab_title";

// The builder's value of a setting: stored on first use, read back after.
template <class T>
T original(QObject* o, const char* key, T current) {
  const QVariant v = o->property(key);
  if (v.isValid()) return v.value<T>();
  o->setProperty(key, QVariant::fromValue(current));
  return current;
}

double widest(const QFont& font, const QStringList& texts) {
  const QFontMetricsF m(font);
  double w = 0;
  for (const QString& t : texts) w = std::max(w, m.horizontalAdvance(t));
  return w;
}

// The room one label needs along its axis: its width across a horizontal axis, a line's
// height up a vertical one.
double need(const QAbstractAxis& axis, const QStringList& labels) {
  if (axis.orientation() == Qt::Vertical) return QFontMetricsF(axis.labelsFont()).height() + kLabelMargin;
  return widest(axis.labelsFont(), labels) + kLabelMargin;
}

QString label(const QString& format, double v) { return QString::asprintf(format.toLatin1().constData(), v); }

// Linear axis: keep every k-th tick of the builder's nice ones (k divides the steps, so
// the ticks stay on round values) for the smallest k whose labels fit.
void fit_value_axis(QValueAxis& axis, double length) {
  const int n0 = original(&axis, kTicks, axis.tickCount());
  const int steps = n0 - 1;
  for (int k = 1; k <= steps; ++k) {
    if (steps % k != 0) continue;
    const int n = steps / k + 1;
    QStringList labels;
    for (int i = 0; i < n; ++i) labels << label(axis.labelFormat(), axis.min() + (axis.max() - axis.min()) * i / (n - 1));
    if (need(axis, labels) * n <= length || n == 2) {
      axis.setTickCount(n);
      return;
    }
  }
}

// Log axis: ticks sit at the powers of the base, so a coarser base (2 -> 4 -> 8 ...,
// 10 -> 100 ...) thins them; the data and range stay the same.
void fit_log_axis(QLogValueAxis& axis, double length) {
  const double b0 = original(&axis, kBase, axis.base());
  const int minor0 = original(&axis, kMinor, axis.minorTickCount());
  for (int p = 1; p <= 16; ++p) {
    const double base = std::pow(b0, p);
    QStringList labels;
    for (double e = std::ceil(std::log(axis.min()) / std::log(base) - 1e-9);
         e <= std::floor(std::log(axis.max()) / std::log(base) + 1e-9); ++e)
      labels << label(axis.labelFormat(), std::pow(base, e));
    if (need(axis, labels) * std::max<qsizetype>(labels.size(), 1) <= length || labels.size() <= 2) {
      axis.setBase(base);
      axis.setMinorTickCount(p == 1 ? minor0 : 0);  // the 10..90 minor lines mean nothing on base 100
      return;
    }
  }
}

// Greedy word wrap of `text` to lines no wider than `width`, joined with <br> (Qt Charts
// draws titles and legend labels as HTML). A single word wider than the line stays whole.
QString wrapped(const QString& text, const QFont& font, double width) {
  if (text.contains("<br>")) {  // already HTML (a builder's own lines): wrap each line, keep its escapes
    QStringList out;
    for (const QString& line : text.split("<br>")) {
      QTextDocument doc;
      doc.setHtml(line);
      const QString plain = doc.toPlainText(), fitted = wrapped(plain, font, width);
      out << (fitted == plain ? plain.toHtmlEscaped() : fitted);
    }
    return out.join("<br>");
  }
  const QFontMetricsF m(font);
  if (m.horizontalAdvance(text) <= width) return text;
  QStringList lines;
  QString line;
  for (const QString& word : text.split(' ', Qt::SkipEmptyParts)) {
    const QString longer = line.isEmpty() ? word : line + ' ' + word;
    if (!line.isEmpty() && m.horizontalAdvance(longer) > width) {
      lines << line.toHtmlEscaped();
      line = word;
    } else {
      line = longer;
    }
  }
  lines << line.toHtmlEscaped();
  return lines.join("<br>");
}

double chart_room(const QChart& chart) {
  return chart.size().width() - chart.margins().left() - chart.margins().right() - 16;
}

// A title wider than the chart goes onto more lines (Qt would elide it).
void fit_title(QChart& chart) {
  const QString title = original(&chart, kTitle, chart.title());
  chart.setTitle(wrapped(title, chart.titleFont(), chart_room(chart)));
}

// Width of the legend's entries in one row.
double legend_row_width(QChart& chart) {
  const QFontMetricsF m(chart.legend()->font());
  double w = 0;
  for (QLegendMarker* marker : chart.legend()->markers())
    if (marker->isVisible()) w += m.horizontalAdvance(original(marker, kLabel, marker->label())) + kMarkerExtra;
  return w;
}

// Below the plot when one row fits the chart's width, else a column on the right. Qt
// gives a side legend at most 40 % of the chart's width (ChartLayout); labels longer than
// that go onto more lines.
bool fit_legend(QChart& chart) {
  QLegend& legend = *chart.legend();
  if (!legend.isVisible()) return false;
  const auto side = static_cast<Qt::Alignment>(original(&legend, kLegendSide, static_cast<int>(legend.alignment())));
  const double room = chart_room(chart);
  Qt::Alignment want = side;
  if (side == Qt::AlignBottom && legend_row_width(chart) > room) want = Qt::AlignRight;
  const double label_room = want == Qt::AlignRight ? 0.4 * room - kMarkerExtra - 8 : room;
  for (QLegendMarker* marker : legend.markers()) {
    const QString label = original(marker, kLabel, marker->label());
    const QString fitted = wrapped(label, legend.font(), label_room);
    if (marker->label() != fitted) marker->setLabel(fitted);
  }
  if (legend.alignment() == want) return false;
  legend.setAlignment(want);
  return true;
}

void relayout(QChart& chart) {
  if (chart.layout()) chart.layout()->activate();
  QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
}

}  // namespace

void fit_labels(QChart& chart) {
  // A legend moved to the side narrows the plot: fit it first, then the axes.
  fit_title(chart);
  fit_legend(chart);
  relayout(chart);
  for (int pass = 0; pass < 2; ++pass) {
    const QRectF plot = chart.plotArea();
    if (plot.width() <= 0 || plot.height() <= 0) return;
    for (QAbstractAxis* axis : chart.axes()) {
      const double length = axis->orientation() == Qt::Horizontal ? plot.width() : plot.height();
      if (auto* v = qobject_cast<QValueAxis*>(axis)) fit_value_axis(*v, length);
      else if (auto* l = qobject_cast<QLogValueAxis*>(axis)) fit_log_axis(*l, length);
    }
    relayout(chart);  // thinner labels may widen the plot: one more pass on the new size
  }
}

}  // namespace hdlab::charts
