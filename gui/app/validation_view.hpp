#pragma once
// The validation scatter: predicted against measured times, log-log, one colour per
// design, y = x and a +-20 % band. Fed by setPoints, or a file: `hdlab validate -o DIR`'s
// validation.json or points.json, or `hdlab validate --published`'s published.json
// (gui_core::parse_validation_file; there one colour per metric, in its own unit).
#include <vector>

#include <QWidget>

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
  QString message() const;

 public slots:
  void openDialog();

 private:
  ChartPanel* panel_;
  QLabel* message_;
};

}  // namespace hdlab::gui
