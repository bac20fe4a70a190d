#include "chart_panel.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/export.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::gui {
namespace {

// A chart view that re-fits the chart's labels (fewer ticks, legend to the side) to every
// size it is given, so Qt Charts never has to elide them.
class FittedChartView : public QChartView {
 public:
  using QChartView::QChartView;

 protected:
  void resizeEvent(QResizeEvent* e) override {
    QChartView::resizeEvent(e);
    if (chart()) charts::fit_labels(*chart());
  }
};

}  // namespace

ChartPanel::ChartPanel(const QString& file_stem, QWidget* parent) : QWidget(parent), stem_(file_stem) {
  // The Export button sits in a narrow column beside the chart, never over it, and takes
  // no height from it.
  auto* h = new QHBoxLayout(this);
  h->setContentsMargins(0, 0, 0, 0);
  h->setSpacing(2);
  view_ = new FittedChartView();
  view_->setRenderHint(QPainter::Antialiasing);
  // Below this the plot area gets too short for a vertical axis title ("GB per sequence")
  // and too narrow for a legend row; the views around scroll instead.
  view_->setMinimumSize(kMinimumChartSize);
  h->addWidget(view_, 1);
  auto* column = new QVBoxLayout();
  auto* save = new QToolButton();
  save->setText(tr("Export..."));
  save->setIcon(style()->standardIcon(QStyle::SP_DialogSaveButton));
  save->setToolButtonStyle(Qt::ToolButtonIconOnly);
  save->setAutoRaise(true);
  save->setToolTip(tr("Export this chart as PNG or SVG at the size shown"));
  save->setAccessibleName(tr("Export chart"));
  column->addWidget(save);
  column->addStretch(1);
  h->addLayout(column);
  connect(save, &QToolButton::clicked, this, &ChartPanel::exportDialog);
}

void ChartPanel::setChart(std::unique_ptr<QChart> chart) {
  QChart* old = view_->chart();
  view_->setChart(chart.release());
  // setChart leaves the old chart to us; QChartView creates a default one at first.
  delete old;
  charts::fit_labels(*view_->chart());
}

QString ChartPanel::exportTo(const QString& path, QSize size) const {
  if (!size.isValid()) size = view_->size();
  try {
    hdlab::charts::save_chart(*view_->chart(), path.toStdString(), size);
    return {};
  } catch (const model::ConfigError& e) {
    return QString::fromStdString(e.what());
  }
}

void ChartPanel::exportDialog() {
  const QString filters = tr("PNG image (*.png);;SVG drawing (*.svg)");
  QString chosen;
  QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), stem_ + ".png", filters, &chosen);
  if (path.isEmpty()) return;
  if (!path.endsWith(".png", Qt::CaseInsensitive) && !path.endsWith(".svg", Qt::CaseInsensitive))
    path += chosen.contains("svg") ? ".svg" : ".png";
  exportAndReport(path);
}

QString ChartPanel::exportAndReport(const QString& path) {
  const QString error = exportTo(path);
  emit statusMessage(error.isEmpty() ? tr("Wrote %1").arg(path) : tr("Export failed: %1").arg(error));
  return error;
}

}  // namespace hdlab::gui
