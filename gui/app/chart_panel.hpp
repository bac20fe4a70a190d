#pragma once
// A chart with its export button beside it: PNG and SVG at the size shown (or any size
// through exportTo). Every chart in the app sits in one of these; its labels are fitted
// to the size shown (charts::fit_labels), so none is elided.
#include <memory>

#include <QWidget>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>

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

 public slots:
  void exportDialog();

 signals:
  void statusMessage(const QString& text);

 private:
  QString stem_;
  QChartView* view_;
};

}  // namespace hdlab::gui
