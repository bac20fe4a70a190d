#include "layer_strip_widget.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <QContextMenuEvent>
#include <QHelpEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include "hdlab/gui_core/hd_rule.hpp"
#include "layer_table_model.hpp"
#include "session.hpp"

namespace hdlab::gui {

namespace {
QColor bar_colour() { return QColor(0x3A, 0x3A, 0x4A); }
QColor stale_bar_colour() { return QColor(0xB8, 0xB8, 0xB8); }
}  // namespace

LayerStripWidget::LayerStripWidget(Session* session, QWidget* parent) : QWidget(parent), session_(session) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setFixedHeight(strip_height);
  setToolTip(tr("Layer layout; click a layer to show its mask, right-click to change an HD layer's kind or what the "
                "bars over the layers show"));
  connect(session_, &Session::configChanged, this, &LayerStripWidget::reload);
  connect(session_, &Session::stagesChanged, this, &LayerStripWidget::reload);
  connect(session_, &Session::layerSelected, this, qOverload<>(&QWidget::update));
  connect(session_, &Session::inputErrorsChanged, this, qOverload<>(&QWidget::update));  // stale bars grey out
  reload();
}

void LayerStripWidget::reload() {
  strip_ = session_->hasConfig() ? gui_core::layer_strip(session_->config(), session_->layerStages())
                                 : gui_core::LayerStrip{};
  update();
}

void LayerStripWidget::setCosts(const gui_core::LayerCosts& costs) {
  costs_ = costs;
  update();
}

void LayerStripWidget::clearCosts() {
  costs_.reset();
  update();
}

void LayerStripWidget::setBarQuantity(std::optional<gui_core::LayerQuantity> q) {
  if (q == bar_quantity_) return;
  bar_quantity_ = q;
  update();
  emit barsChanged();
}

void LayerStripWidget::setBarPhase(gui_core::CostPhase phase) {
  if (phase == bar_phase_) return;
  bar_phase_ = phase;
  update();
  emit barsChanged();
}

const gui_core::PhaseLayerCosts* LayerStripWidget::barCosts() const {
  // A result for another layer count (the design changed and its result is on its way) is not drawn.
  if (!costs_ || strip_.layers.empty() || costs_->layer_count() != strip_.layers.size()) return nullptr;
  return &costs_->at(bar_phase_);
}

QRectF LayerStripWidget::barRect(int layer) const {
  const gui_core::PhaseLayerCosts* costs = barCosts();
  if (!costs || !bar_quantity_ || layer < 0 || layer >= static_cast<int>(costs->layers.size())) return {};
  double top = 0;
  for (const auto& c : costs->layers) top = std::max(top, gui_core::value(c, *bar_quantity_));
  const double v = gui_core::value(costs->layers[static_cast<std::size_t>(layer)], *bar_quantity_);
  if (top <= 0 || v <= 0) return {};
  const Geometry g = geometry();
  const double h = g.bars_height * v / top;  // linear: a bar twice as tall costs twice as much
  const double bottom = g.bars_top + g.bars_height;
  const double inset = g.cell > 4 ? g.cell * 0.15 : 0;
  return QRectF(g.left + layer * g.cell + inset, bottom - h, std::max(1.0, g.cell - 2 * inset), h);
}

QString LayerStripWidget::costLine(int layer) const {
  if (!costs_ || costs_->layer_count() != strip_.layers.size()) return {};
  const gui_core::LayerCost& c = costs_->at(bar_phase_).layers[static_cast<std::size_t>(layer)];
  auto f = [](double v, gui_core::LayerQuantity q) { return QString::fromStdString(gui_core::format_value(v, q)); };
  return tr("%1: %2, %3 on one device%4; KV cache %5 per sequence; memory %6 per device")
      .arg(tr(gui_core::to_string(bar_phase_)), f(c.flops, gui_core::LayerQuantity::flops),
           f(c.seconds, gui_core::LayerQuantity::time),
           c.passes != 1 ? tr(" (%1 runs per pass)").arg(c.passes) : QString(),
           f(c.kv_bytes_per_seq, gui_core::LayerQuantity::kv_bytes),
           f(c.memory_bytes, gui_core::LayerQuantity::memory));
}

LayerStripWidget::Geometry LayerStripWidget::geometry() const {
  Geometry g{};
  g.left = 8;
  const double n = std::max<double>(1, static_cast<double>(strip_.layers.size()));
  g.cell = (width() - 16) / n;
  g.stage_top = 2;
  g.loop_top = 18;
  g.bars_top = 34;
  g.bars_height = 24;
  g.cells_top = 60;
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

void LayerStripWidget::paintBars(QPainter& p, const Geometry& g) const {
  const gui_core::PhaseLayerCosts* costs = barCosts();
  if (!costs || !bar_quantity_) return;
  // While the typed scenario is not valid the bars are the last valid one's: grey.
  const bool stale = !session_->inputError(Session::Input::scenario).isEmpty();
  p.setPen(QPen(QColor(0xBB, 0xBB, 0xBB), 1));
  p.drawLine(QPointF(g.left, g.bars_top + g.bars_height), QPointF(width() - 8, g.bars_top + g.bars_height));
  for (int l = 0; l < static_cast<int>(costs->layers.size()); ++l) {
    const QRectF bar = barRect(l);
    if (!bar.isEmpty()) p.fillRect(bar, stale ? stale_bar_colour() : bar_colour());
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
  if (const gui_core::PhaseLayerCosts* costs = barCosts(); costs && bar_quantity_) {
    double top = 0;
    for (const auto& c : costs->layers) top = std::max(top, gui_core::value(c, *bar_quantity_));
    const bool stale = !session_->inputError(Session::Input::scenario).isEmpty();
    p.fillRect(QRectF(8, y + 2, 12, 10), stale ? stale_bar_colour() : bar_colour());
    p.setPen(Qt::black);
    const QString key = tr("bars: %1 %2 per layer, tallest %3%4")
                            .arg(tr(gui_core::to_string(bar_phase_)), tr(gui_core::to_string(*bar_quantity_)),
                                 QString::fromStdString(gui_core::format_value(top, *bar_quantity_)),
                                 stale ? tr(" (stale: the last valid scenario's)") : QString());
    p.drawText(QPointF(23, y + 11), key);
  }
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
  paintBars(p, g);
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
  QMenu menu(this);
  if (l >= 0 && gui_core::edits_layer_kinds(strip_.method)) {
    const std::pair<const char*, model::HdLayerKind> kinds[] = {
        {"full", model::HdLayerKind::full}, {"local", model::HdLayerKind::local}, {"intra", model::HdLayerKind::intra}};
    for (const auto& [name, kind] : kinds) {
      QAction* a = menu.addAction(tr("Layer %1: %2").arg(l).arg(name));
      connect(a, &QAction::triggered, this, [this, l, k = kind] { emit kindRequested(l, k); });
    }
    menu.addSeparator();
  }
  QMenu* bars = menu.addMenu(tr("Bars show"));
  for (int q = 0; q < gui_core::layer_quantity_count; ++q) {
    const auto quantity = static_cast<gui_core::LayerQuantity>(q);
    QAction* a = bars->addAction(tr(gui_core::to_string(quantity)));
    a->setCheckable(true);
    a->setChecked(bar_quantity_ == quantity);
    connect(a, &QAction::triggered, this, [this, quantity] { setBarQuantity(quantity); });
  }
  QAction* none = bars->addAction(tr("nothing"));
  connect(none, &QAction::triggered, this, [this] { setBarQuantity(std::nullopt); });
  QMenu* phases = menu.addMenu(tr("Bars for"));
  for (int i = 0; i < gui_core::cost_phase_count; ++i) {
    const auto phase = static_cast<gui_core::CostPhase>(i);
    QAction* a = phases->addAction(tr(gui_core::to_string(phase)));
    a->setCheckable(true);
    a->setChecked(bar_phase_ == phase);
    connect(a, &QAction::triggered, this, [this, phase] { setBarPhase(phase); });
  }
  menu.exec(e->globalPos());
}

bool LayerStripWidget::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const int l = layerAt(help->pos().x());
    if (l >= 0) {
      const auto& cell = strip_.layers[static_cast<std::size_t>(l)];
      QString text = QString::fromStdString(gui_core::describe(cell, strip_.copies));
      const QString costs = costLine(l);
      if (!costs.isEmpty()) text += "\n" + costs;
      QToolTip::showText(help->globalPos(), text, this);
    }
    else
      QToolTip::showText(help->globalPos(), toolTip(), this);
    return true;
  }
  return QWidget::event(e);
}

}  // namespace hdlab::gui
