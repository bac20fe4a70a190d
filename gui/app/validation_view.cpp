#include "validation_view.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "chart_panel.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/model/config_io.hpp"

namespace hdlab::gui {

ValidationView::ValidationView(QWidget* parent) : QWidget(parent) {
  auto* v = new QVBoxLayout(this);
  auto* row = new QHBoxLayout();
  auto* open = new QPushButton(tr("Open points..."));
  open->setToolTip(tr("A JSON file of {\"points\": [{\"design\", \"label\", \"predicted_s\", \"measured_s\"}]} "
                      "(Ctrl+Shift+V)"));
  message_ = new QLabel(tr("No validation points loaded. Predicted-vs-measured points come from `hdlab validate` "
                           "runs of the reference executor; open a points file to plot them."));
  message_->setWordWrap(true);
  row->addWidget(message_, 1);
  row->addWidget(open);
  v->addLayout(row);
  panel_ = new ChartPanel("validation");
  v->addWidget(panel_, 1);
  panel_->setChart(charts::build_scatter_chart(charts::validation_scatter({})));
  connect(open, &QPushButton::clicked, this, &ValidationView::openDialog);
}

QString ValidationView::message() const { return message_->text(); }

void ValidationView::setPoints(const std::vector<gui_core::ValidationPoint>& points, const QString& source) {
  panel_->setChart(charts::build_scatter_chart(charts::validation_scatter(points)));
  const gui_core::ValidationSummary s = gui_core::summarize(points);
  message_->setText(tr("%1: %2 points from %3 designs; median |predicted/measured - 1| = %4 %, worst %5 %, %6 % within "
                       "20 %.")
                        .arg(source)
                        .arg(s.points)
                        .arg(s.designs.size())
                        .arg(s.median_abs_error * 100, 0, 'f', 1)
                        .arg(s.max_abs_error * 100, 0, 'f', 1)
                        .arg(s.within_20_percent * 100, 0, 'f', 0));
}

bool ValidationView::loadFile(const QString& path) {
  try {
    setPoints(gui_core::parse_validation_points(model::read_json_file(path.toStdString())), path);
    return true;
  } catch (const model::ConfigError& e) {
    message_->setText(tr("<span style='color:#B00020'>%1</span>").arg(QString::fromStdString(e.what()).toHtmlEscaped()));
    return false;
  }
}

void ValidationView::openDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open validation points"), QString(),
                                                    tr("Points JSON (*.json);;All files (*)"));
  if (!path.isEmpty()) loadFile(path);
}

}  // namespace hdlab::gui
