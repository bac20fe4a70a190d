#pragma once
// The Layers tab: the layer table (kinds, layout and each layer's cost in one phase), a
// line saying how the layers' costs add up to the pass's, and the controls over them:
// the phase the costs are for, what the strip's bars show, and the HD kind to give every
// selected row at once (also from the table's context menu). The table selects rows in
// extended mode (Shift / Ctrl + click); one "set kind" is one design change.
#include <optional>

#include <QList>
#include <QWidget>

#include "hdlab/gui_core/layer_costs.hpp"
#include "hdlab/model/design.hpp"

class QComboBox;
class QLabel;
class QPushButton;
class QTableView;

namespace hdlab::gui {

class LayerStripWidget;
class LayerTableModel;
class Session;

class LayerPanel : public QWidget {
  Q_OBJECT
 public:
  LayerPanel(Session* session, LayerTableModel* model, LayerStripWidget* strip, QWidget* parent = nullptr);

  QTableView* view() const { return view_; }
  QComboBox* phaseBox() const { return phase_; }
  QComboBox* barsBox() const { return bars_; }
  QComboBox* kindBox() const { return kind_; }
  QPushButton* setKindButton() const { return set_kind_; }
  QString summary() const;
  // The layers of the selected rows, ascending.
  QList<int> selectedLayers() const;

 public slots:
  // Results of an evaluation (the window's background job) for the table and the strip.
  void setCosts(const hdlab::gui_core::LayerCosts& costs);
  void clearCosts();
  // Asks for `kind` on every selected layer (one request).
  void setSelectedKind(hdlab::model::HdLayerKind kind);

 signals:
  void kindsRequested(const QList<int>& layers, hdlab::model::HdLayerKind kind);

 private:
  QWidget* controls();
  void showContextMenu(const QPoint& pos);
  void syncKindControls();
  void syncBarControls();
  void updateSummary();

  Session* session_;
  LayerTableModel* model_;
  LayerStripWidget* strip_;
  QTableView* view_;
  QComboBox* phase_ = nullptr;
  QComboBox* bars_ = nullptr;
  QComboBox* kind_ = nullptr;
  QPushButton* set_kind_ = nullptr;
  QLabel* summary_;
  std::optional<gui_core::LayerCosts> costs_;
};

}  // namespace hdlab::gui
