#pragma once
// The layer-layout strip: one cell per layer coloured by the attention the design runs
// there, MoE layers marked, KV-mirror pairs as arcs, the loop block bracketed with its
// iteration count, pipeline stages as bands. Click selects a layer (the mask view
// follows); right-click on an HD design sets the layer's kind.
#include <QWidget>

class QPainter;

#include "hdlab/gui_core/layer_strip.hpp"

namespace hdlab::gui {

class Session;

class LayerStripWidget : public QWidget {
  Q_OBJECT
 public:
  explicit LayerStripWidget(Session* session, QWidget* parent = nullptr);
  QSize sizeHint() const override { return {800, 150}; }
  QSize minimumSizeHint() const override { return {200, 150}; }
  const gui_core::LayerStrip& strip() const { return strip_; }
  // The layer under x (widget coordinates), or -1.
  int layerAt(double x) const;

 public slots:
  void reload();

 signals:
  void kindRequested(int layer, hdlab::model::HdLayerKind kind);

 protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void contextMenuEvent(QContextMenuEvent* e) override;
  bool event(QEvent* e) override;

 private:
  struct Geometry {
    double left, cell;  // x of layer 0, width per layer
    double stage_top, loop_top, cells_top, cells_height, labels_top, arcs_top, arcs_depth;
  };
  Geometry geometry() const;
  void paintStages(QPainter& p, const Geometry& g) const;
  void paintLoop(QPainter& p, const Geometry& g) const;
  void paintCells(QPainter& p, const Geometry& g) const;
  void paintMirrorArcs(QPainter& p, const Geometry& g) const;
  void paintLegend(QPainter& p) const;

  Session* session_;
  gui_core::LayerStrip strip_;
};

}  // namespace hdlab::gui
