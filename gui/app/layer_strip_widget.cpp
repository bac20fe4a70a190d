#include "layer_strip_widget.hpp"

#include <set>

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include "layer_table_model.hpp"
#include "session.hpp"

namespace hdlab::gui {

LayerStripWidget::LayerStripWidget(Session* session, QWidget* parent) : QWidget(parent), session_(session) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setFixedHeight(150);
  setToolTip(tr("Layer layout; click a layer to show its mask, right-click to change an HD layer's kind"));
  connect(session_, &Session::configChanged, this, &LayerStripWidget::reload);
  connect(session_, &Session::stagesChanged, this, &LayerStripWidget::reload);
  connect(session_, &Session::layerSelected, this, qOverload<>(&QWidget::update));
  reload();
}

void LayerStripWidget::reload() {
  strip_ = session_->hasConfig() ? gui_core::layer_strip(session_->config(), session_->layerStages())
                                 : gui_core::LayerStrip{};
  update();
}

LayerStripWidget::Geometry LayerStripWidget::geometry() const {
  Geometry g{};
  g.left = 8;
  const double n = std::max<double>(1, static_cast<double>(strip_.layers.size()));
  g.cell = (width() - 16) / n;
  g.stage_top = 2;
  g.loop_top = 18;
  g.cells_top = 36;
  g.cells_height = 30;
  g.labels_top = g.cells_top + g.cells_height + 1;
  g.arcs_top = g.labels_top + 13;
  g.arcs_depth = height() - 20 - g.arcs_top;  // the legend keeps the bottom 20 pixels
  return g;
}

int LayerStripWidget::layerAt(double x) const {
  const Geometry g = geometry();
  const int l = static_cast<int>((x - g.left) / g.cell);
  return (x >= g.left && l >= 0 && l < static_cast<int>(strip_.layers.size())) ? l : -1;
}

void LayerStripWidget::paintStages(QPainter& p, const Geometry& g) const {
  if (strip_.stages <= 0) return;
  std::size_t i = 0;
  while (i < strip_.layers.size()) {
    std::size_t j = i;
    while (j < strip_.layers.size() && strip_.layers[j].stage == strip_.layers[i].stage) ++j;
    const QRectF band(g.left + static_cast<double>(i) * g.cell, g.stage_top, static_cast<double>(j - i) * g.cell, 14);
    p.fillRect(band.adjusted(1, 0, -1, 0), strip_.layers[i].stage % 2 ? QColor(0xDD, 0xDD, 0xDD) : QColor(0xC4, 0xC4, 0xC4));
    p.setPen(Qt::black);
    p.drawText(band, Qt::AlignCenter, tr("stage %1").arg(strip_.layers[i].stage));
    i = j;
  }
}

void LayerStripWidget::paintLoop(QPainter& p, const Geometry& g) const {
  std::size_t i = 0;
  while (i < strip_.layers.size()) {
    std::size_t j = i;
    while (j < strip_.layers.size() && strip_.layers[j].loop == strip_.layers[i].loop) ++j;
    const gui_core::LoopRole role = strip_.layers[i].loop;
    if (role != gui_core::LoopRole::none) {
      const QRectF r(g.left + static_cast<double>(i) * g.cell + 1, g.loop_top, static_cast<double>(j - i) * g.cell - 2, 14);
      const bool rec = role == gui_core::LoopRole::recurrent;
      p.setPen(QPen(rec ? QColor(0xD5, 0x5E, 0x00) : QColor(0x66, 0x66, 0x66), rec ? 2 : 1));
      p.drawLine(r.bottomLeft(), r.topLeft());
      p.drawLine(r.topLeft(), r.topRight());
      p.drawLine(r.topRight(), r.bottomRight());
      const QString text = rec ? tr("recurrent x%1").arg(strip_.loop_iterations) : QString(gui_core::to_string(role));
      p.drawText(r.adjusted(0, 2, 0, 0), Qt::AlignCenter, text);
    }
    i = j;
  }
}

void LayerStripWidget::paintCells(QPainter& p, const Geometry& g) const {
  const int selected = session_->selectedLayer();
  // Label every k-th layer so numbers never overlap.
  const int every = std::max(1, static_cast<int>(std::ceil(22.0 / std::max(g.cell, 1.0))));
  for (const auto& c : strip_.layers) {
    const double x = g.left + static_cast<double>(c.layer) * g.cell;
    const QRectF cell(x + 0.5, g.cells_top, std::max(1.0, g.cell - 1.0), g.cells_height);
    p.fillRect(cell, kind_colour(c.attention));
    if (c.final_copy_only) p.fillRect(cell, QBrush(QColor(255, 255, 255, 150), Qt::BDiagPattern));
    if (c.moe) p.fillRect(QRectF(cell.left(), cell.bottom() - 5, cell.width(), 5), QColor(0x22, 0x22, 0x22));
    if (c.layer % every == 0) {
      p.setPen(Qt::black);
      p.drawText(QRectF(x - 10, g.labels_top, g.cell + 20, 12), Qt::AlignCenter, QString::number(c.layer));
    }
  }
  if (selected >= 0 && selected < static_cast<int>(strip_.layers.size())) {
    p.setPen(QPen(Qt::black, 2.5));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(g.left + selected * g.cell, g.cells_top - 2, g.cell, g.cells_height + 4));
  }
}

void LayerStripWidget::paintMirrorArcs(QPainter& p, const Geometry& g) const {
  if (strip_.mirror_pairs.empty()) return;
  const double span = static_cast<double>(strip_.layers.size());
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(QColor(0x77, 0x77, 0x77), 1.0));
  p.setBrush(Qt::NoBrush);
  for (const auto& [src, dst] : strip_.mirror_pairs) {
    const double x0 = g.left + (static_cast<double>(src) + 0.5) * g.cell;
    const double x1 = g.left + (static_cast<double>(dst) + 0.5) * g.cell;
    // Nested U shapes: wider pairs hang lower; a cubic's apex sits at 3/4 of its control depth.
    const double depth = (4 + (g.arcs_depth - 4) * static_cast<double>(dst - src) / span) * 4.0 / 3.0;
    QPainterPath path(QPointF(x0, g.arcs_top));
    path.cubicTo(QPointF(x0, g.arcs_top + depth), QPointF(x1, g.arcs_top + depth), QPointF(x1, g.arcs_top));
    p.drawPath(path);
  }
}

void LayerStripWidget::paintLegend(QPainter& p) const {
  std::set<gui_core::LayerAttentionKind> kinds;
  bool moe = false, mirror = false;
  for (const auto& c : strip_.layers) {
    kinds.insert(c.attention);
    moe = moe || c.moe;
    mirror = mirror || c.final_copy_only;
  }
  double x = width() - 8;
  const double y = height() - 16;
  auto item = [&](const QColor& colour, const QString& text, Qt::BrushStyle style = Qt::SolidPattern) {
    const double w = p.fontMetrics().horizontalAdvance(text) + 22;
    x -= w;
    p.fillRect(QRectF(x, y + 2, 12, 10), QBrush(colour, style));
    p.setPen(Qt::black);
    p.drawText(QPointF(x + 15, y + 11), text);
  };
  if (!strip_.mirror_pairs.empty()) item(QColor(0x55, 0x55, 0x55), tr("arcs: K/V mirror"), Qt::Dense6Pattern);
  if (mirror) item(QColor(0x88, 0x88, 0x88), tr("final stream only"), Qt::BDiagPattern);
  if (moe) item(QColor(0x22, 0x22, 0x22), tr("MoE FFN (bar)"));
  for (auto it = kinds.rbegin(); it != kinds.rend(); ++it) item(kind_colour(*it), gui_core::to_string(*it));
}

void LayerStripWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (strip_.layers.empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("No design loaded"));
    return;
  }
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  p.setFont(small);
  const Geometry g = geometry();
  paintStages(p, g);
  paintLoop(p, g);
  paintCells(p, g);
  paintMirrorArcs(p, g);
  paintLegend(p);
}

void LayerStripWidget::mousePressEvent(QMouseEvent* e) {
  const int l = layerAt(e->position().x());
  if (l >= 0 && e->button() == Qt::LeftButton) session_->setSelectedLayer(l);
  QWidget::mousePressEvent(e);
}

void LayerStripWidget::contextMenuEvent(QContextMenuEvent* e) {
  const int l = layerAt(e->pos().x());
  if (l < 0 || strip_.method != "hd") return;
  QMenu menu(this);
  menu.setTitle(tr("Layer %1").arg(l));
  const std::pair<const char*, model::HdLayerKind> kinds[] = {
      {"full", model::HdLayerKind::full}, {"local", model::HdLayerKind::local}, {"intra", model::HdLayerKind::intra}};
  for (const auto& [name, kind] : kinds) {
    QAction* a = menu.addAction(tr("Layer %1: %2").arg(l).arg(name));
    connect(a, &QAction::triggered, this, [this, l, k = kind] { emit kindRequested(l, k); });
  }
  menu.exec(e->globalPos());
}

bool LayerStripWidget::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const int l = layerAt(help->pos().x());
    if (l >= 0)
      QToolTip::showText(help->globalPos(),
                         QString::fromStdString(gui_core::describe(strip_.layers[static_cast<std::size_t>(l)], strip_.copies)),
                         this);
    else
      QToolTip::showText(help->globalPos(), toolTip(), this);
    return true;
  }
  return QWidget::event(e);
}

}  // namespace hdlab::gui
