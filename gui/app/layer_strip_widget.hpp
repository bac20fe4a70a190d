#pragma once
// The layer-layout strip: one cell per layer coloured by the attention the design runs
// there, MoE layers marked, KV-mirror pairs as arcs, the loop block bracketed with its
// iteration count, pipeline stages as bands, and over the cells a bar per layer of one
// cost (time, FLOPs, KV cache or memory, gui_core::LayerCosts) in one phase, scaled to the
// largest layer's. Click selects a layer (the mask view follows); right-click sets an HD
// layer's kind or picks what the bars show.
#include <optional>

#include <QRectF>
#include <QWidget>

class QPainter;

#include "hdlab/gui_core/layer_costs.hpp"
#include "hdlab/gui_core/layer_strip.hpp"

namespace hdlab::gui {

class Session;

class LayerStripWidget : public QWidget {
  Q_OBJECT
 public:
  explicit LayerStripWidget(Session* session, QWidget* parent = nullptr);
  static constexpr int strip_height = 176;
  QSize sizeHint() const override { return {800, strip_height}; }
  QSize minimumSizeHint() const override { return {200, strip_height}; }
  const gui_core::LayerStrip& strip() const { return strip_; }
  // The layer under x (widget coordinates), or -1.
  int layerAt(double x) const;

  // Costs from the last evaluation; bars show one quantity of one phase (none: no bars).
  void setCosts(const gui_core::LayerCosts& costs);
  void clearCosts();
  std::optional<gui_core::LayerQuantity> barQuantity() const { return bar_quantity_; }
  gui_core::CostPhase barPhase() const { return bar_phase_; }
  // The bar drawn for `layer` (widget coordinates); empty when there is none.
  QRectF barRect(int layer) const;

 public slots:
  void reload();
  void setBarQuantity(std::optional<hdlab::gui_core::LayerQuantity> q);
  void setBarPhase(hdlab::gui_core::CostPhase phase);

 signals:
  void kindRequested(int layer, hdlab::model::HdLayerKind kind);
  void barsChanged();

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void contextMenuEvent(QContextMenuEvent* e) override;
  bool event(QEvent* e) override;

 private:
  struct Geometry {
    double left, cell;  // x of layer 0, width per layer
    double stage_top, loop_top, bars_top, bars_height, cells_top, cells_height, labels_top, arcs_top, arcs_depth;
  };
  // The costs the bars show: null when none match the strip's layers.
  const gui_core::PhaseLayerCosts* barCosts() const;
  QString costLine(int layer) const;
  Geometry geometry() const;
  void paintStages(QPainter& p, const Geometry& g) const;
  void paintLoop(QPainter& p, const Geometry& g) const;
  void paintCells(QPainter& p, const Geometry& g) const;
  void paintBars(QPainter& p, const Geometry& g) const;
  void paintMirrorArcs(QPainter& p, const Geometry& g) const;
  void paintLegend(QPainter& p) const;

  Session* session_;
  gui_core::LayerStrip strip_;
  std::optional<gui_core::LayerCosts> costs_;
  std::optional<gui_core::LayerQuantity> bar_quantity_ = gui_core::LayerQuantity::time;
  gui_core::CostPhase bar_phase_ = gui_core::CostPhase::decode;
};

}  // namespace hdlab::gui
