#include "chart_panel.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QPushButton>
#include <QVBoxLayout>

#include "hdlab/charts/export.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::gui {

ChartPanel::ChartPanel(const QString& file_stem, QWidget* parent) : QWidget(parent), stem_(file_stem) {
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(0, 0, 0, 0);
  view_ = new QChartView();
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setMinimumSize(320, 240);
  v->addWidget(view_, 1);
  auto* row = new QHBoxLayout();
  row->addStretch(1);
  auto* save = new QPushButton(tr("Export..."));
  save->setToolTip(tr("Save this chart as PNG or SVG at the size shown"));
  row->addWidget(save);
  v->addLayout(row);
  connect(save, &QPushButton::clicked, this, &ChartPanel::exportDialog);
}

void ChartPanel::setChart(std::unique_ptr<QChart> chart) {
  QChart* old = view_->chart();
  view_->setChart(chart.release());
  // setChart leaves the old chart to us; QChartView creates a default one at first.
  delete old;
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
