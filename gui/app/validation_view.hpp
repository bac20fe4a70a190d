#pragma once
// The validation scatter: predicted against measured times, log-log, one colour per
// design, y = x and a +-20 % band. Fed by setPoints, or a file: `hdlab validate -o DIR`'s
// validation.json or points.json, `hdlab validate --published`'s published.json
// (gui_core::parse_validation_file; there one colour per metric, in its own unit), or
// `hdlab validate --kerneldb`'s kernels.json / kernels.csv (one colour per op class, the
// held-out kernel rows). Each point carries its case label in the chart spec.
#include <vector>

#include <QWidget>

#include "hdlab/charts/chart_data.hpp"
#include "hdlab/gui_core/validation_points.hpp"

class QLabel;

namespace hdlab::gui {

class ChartPanel;

class ValidationView : public QWidget {
  Q_OBJECT
 public:
  explicit ValidationView(QWidget* parent = nullptr);
  void setPoints(const std::vector<gui_core::ValidationPoint>& points, const QString& source);
  void setFile(const gui_core::ValidationFile& file, const QString& source);
  // false and the error shown when the file does not parse.
  bool loadFile(const QString& path);
  ChartPanel* panel() const { return panel_; }
  // The scatter shown, as plain data (groups' points with their labels).
  const charts::ScatterChart& spec() const { return spec_; }
  QString message() const;

 public slots:
  void openDialog();

 private:
  ChartPanel* panel_;
  QLabel* message_;
  charts::ScatterChart spec_;
};

}  // namespace hdlab::gui
