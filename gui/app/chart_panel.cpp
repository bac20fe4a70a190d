#include "chart_panel.hpp"

#include <cmath>

#include <QFileDialog>
#include <QHBoxLayout>
#include <QMouseEvent>
#include <QStyle>
#include <QToolButton>
#include <QToolTip>
#include <QWheelEvent>
#include <QVBoxLayout>

#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/export.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::gui {
namespace {

// A chart view that re-fits the chart's labels (fewer ticks, legend to the side) to every
// size it is given, so Qt Charts never has to elide them, and turns the mouse into the
// panel's read-out, zoom and pan.
class InteractiveChartView : public QChartView {
 public:
  explicit InteractiveChartView(ChartPanel* panel) : panel_(panel) {
    // Moves without a button pressed reach the view too: they drive the read-out.
    viewport()->setMouseTracking(true);
    // Left drag draws the zoom rectangle (QChartView zooms into it on release).
    setRubberBand(QChartView::RectangleRubberBand);
  }

 protected:
  void resizeEvent(QResizeEvent* e) override {
    QChartView::resizeEvent(e);
    if (chart()) charts::fit_labels(*chart());
  }

  void mousePressEvent(QMouseEvent* e) override {
    const bool pan = e->button() == Qt::MiddleButton ||
                     (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier));
    if (!pan) return QChartView::mousePressEvent(e);
    panning_ = e->button();
    last_ = e->position();
    setCursor(Qt::ClosedHandCursor);
    e->accept();
  }

  void mouseMoveEvent(QMouseEvent* e) override {
    if (panning_ != Qt::NoButton) {
      panel_->panBy(e->position() - last_);
      last_ = e->position();
      e->accept();
      return;
    }
    QChartView::mouseMoveEvent(e);
    if (e->buttons() != Qt::NoButton) return;  // drawing a zoom rectangle
    const QString text = panel_->readOutAt(e->position());
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(e->globalPosition().toPoint(), text, this);
  }

  void mouseReleaseEvent(QMouseEvent* e) override {
    if (panning_ != Qt::NoButton && e->button() == panning_) {
      panning_ = Qt::NoButton;
      unsetCursor();
      e->accept();
      return;
    }
    // QChartView would zoom out by 2 on a right click, which no sequence of zooms undoes
    // exactly; here it goes back to the chart as built.
    if (e->button() == Qt::RightButton) {
      panel_->resetZoom();
      e->accept();
      return;
    }
    QChartView::mouseReleaseEvent(e);
    panel_->rangesChanged();
  }

  void mouseDoubleClickEvent(QMouseEvent* e) override {
    if (e->button() != Qt::LeftButton) return QChartView::mouseDoubleClickEvent(e);
    panel_->resetZoom();
    e->accept();
  }

  void wheelEvent(QWheelEvent* e) override {
    // One notch (120) zooms by 1.25 about the mouse; up zooms in.
    const double notches = e->angleDelta().y() / 120.0;
    if (notches == 0) return QChartView::wheelEvent(e);
    panel_->zoomAt(e->position(), std::pow(1.25, notches));
    e->accept();
  }

  void leaveEvent(QEvent* e) override {
    QToolTip::hideText();
    QChartView::leaveEvent(e);
  }

 private:
  ChartPanel* panel_;
  Qt::MouseButton panning_ = Qt::NoButton;
  QPointF last_;
};

// From the view's pixels to the chart item's (where QChart maps values).
QPointF to_chart(const QChartView& view, QPointF view_pos) {
  return view.chart()->mapFromScene(view.mapToScene(view_pos.toPoint()));
}

}  // namespace

ChartPanel::ChartPanel(const QString& file_stem, QWidget* parent) : QWidget(parent), stem_(file_stem) {
  // The Export button sits in a narrow column beside the chart, never over it, and takes
  // no height from it.
  auto* h = new QHBoxLayout(this);
  h->setContentsMargins(0, 0, 0, 0);
  h->setSpacing(2);
  view_ = new InteractiveChartView(this);
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
  auto* reset = new QToolButton();
  reset->setIcon(style()->standardIcon(QStyle::SP_BrowserReload));
  reset->setAutoRaise(true);
  reset->setToolTip(tr("Reset zoom. Drag a rectangle or turn the wheel to zoom, Shift+drag or middle-drag to "
                       "pan, double-click or right-click to reset; click a legend entry to hide or show it"));
  reset->setAccessibleName(tr("Reset zoom"));
  column->addWidget(reset);
  column->addStretch(1);
  h->addLayout(column);
  connect(save, &QToolButton::clicked, this, &ChartPanel::exportDialog);
  connect(reset, &QToolButton::clicked, this, &ChartPanel::resetZoom);
}

void ChartPanel::setChart(std::unique_ptr<QChart> chart) {
  QChart* old = view_->chart();
  view_->setChart(chart.release());
  // setChart leaves the old chart to us; QChartView creates a default one at first.
  delete old;
  read_out_.clear();
  charts::fit_labels(*view_->chart());
  built_ranges_ = charts::axis_ranges(*view_->chart());
  charts::enable_legend_toggling(*view_->chart());
}

QString ChartPanel::readOutAt(QPointF view_pos) {
  read_out_ = charts::read_out(*view_->chart(), to_chart(*view_, view_pos));
  return read_out_;
}

void ChartPanel::zoomAt(QPointF view_pos, double factor) {
  charts::zoom_about(*view_->chart(), to_chart(*view_, view_pos), factor);
  rangesChanged();
}

void ChartPanel::panBy(QPointF delta) {
  // The view stops at the edges of the chart as built: a step that would cross one is undone.
  const std::vector<charts::AxisRange> before = charts::axis_ranges(*view_->chart());
  charts::pan_by(*view_->chart(), delta);
  if (charts::wider_than(charts::axis_ranges(*view_->chart()), built_ranges_))
    charts::restore_axis_ranges(*view_->chart(), before, false);
  charts::round_zoomed_ticks(*view_->chart(), built_ranges_);
  charts::fit_labels(*view_->chart());
}

void ChartPanel::resetZoom() {
  charts::restore_axis_ranges(*view_->chart(), built_ranges_);
  charts::round_zoomed_ticks(*view_->chart(), built_ranges_);
  charts::fit_labels(*view_->chart());
}

bool ChartPanel::isZoomed() const {
  const std::vector<charts::AxisRange> now = charts::axis_ranges(*view_->chart());
  if (now.size() != built_ranges_.size()) return true;
  for (std::size_t i = 0; i < now.size(); ++i)
    if (now[i].axis != built_ranges_[i].axis || now[i].min != built_ranges_[i].min ||
        now[i].max != built_ranges_[i].max)
      return true;
  return false;
}

void ChartPanel::rangesChanged() {
  // Past the built view there is nothing more to see, and a log axis would head for 0.
  if (charts::wider_than(charts::axis_ranges(*view_->chart()), built_ranges_)) return resetZoom();
  charts::round_zoomed_ticks(*view_->chart(), built_ranges_);
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
