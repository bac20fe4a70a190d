#pragma once
// A chart with its export button beside it: PNG and SVG at the size shown (or any size
// through exportTo). Every chart in the app sits in one of these; its labels are fitted
// to the size shown (charts::fit_labels), so none is elided. Every chart is interactive
// here (charts/interact.hpp): hovering shows the read-out of the point or Gantt bar under
// the mouse as a tooltip; drag a rectangle or turn the wheel to zoom, Shift+drag or drag
// with the middle button to pan, double-click, right-click or the reset button to go
// back; clicking a legend entry hides or shows its series.
#include <memory>
#include <vector>

#include <QWidget>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>

#include "hdlab/charts/interact.hpp"

namespace hdlab::gui {

class ChartPanel : public QWidget {
  Q_OBJECT
 public:
  // The smallest chart view: room for a title, a one-row legend, both axes and a plot
  // tall enough for a vertical axis title.
  static constexpr QSize kMinimumChartSize{400, 300};

  // `file_stem` names exports ("decode-vs-batch").
  ChartPanel(const QString& file_stem, QWidget* parent = nullptr);

  // Takes the chart; the previous one is deleted.
  void setChart(std::unique_ptr<QChart> chart);
  QChart* chart() const { return view_->chart(); }
  QChartView* view() const { return view_; }
  QString fileStem() const { return stem_; }
  // Writes PNG or SVG by extension; returns the error text, empty on success.
  QString exportTo(const QString& path, QSize size = {}) const;
  // exportTo at the size shown, then statusMessage says what was written or why not (what
  // the Export button does after its file dialog); returns the error text.
  QString exportAndReport(const QString& path);

  // The read-out at `view_pos` (the view's viewport coordinates, as its mouse events give), what the hover tooltip shows;
  // empty away from any point or bar. Kept as readOut() until the next hover.
  QString readOutAt(QPointF view_pos);
  QString readOut() const { return read_out_; }
  // Zoom by `factor` (> 1 in) about `view_pos`, and pan with the content dragged by
  // `delta` pixels; neither goes out past the chart as built (that is a reset).
  void zoomAt(QPointF view_pos, double factor);
  void panBy(QPointF delta);
  // Puts every axis back to the range the chart was built with, exactly.
  void resetZoom();
  bool isZoomed() const;
  // After any change of the visible ranges: re-fit the tick labels, and snap back to the
  // built ranges when zoomed out past them.
  void rangesChanged();

 public slots:
  void exportDialog();

 signals:
  void statusMessage(const QString& text);

 private:
  QString stem_;
  QChartView* view_;
  std::vector<charts::AxisRange> built_ranges_;  // as setChart got them: what reset restores
  QString read_out_;
};

}  // namespace hdlab::gui
