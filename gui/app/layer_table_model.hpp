#pragma once
// The layer table: one row per layer of the effective backbone, over gui_core::LayerStrip,
// with each layer's cost from the last evaluation (gui_core::LayerCosts) for one phase.
// The attention column of an HD design is editable (full / local / intra); an edit goes
// to the design editor through `onKindEdited`, which re-parses the design.
#include <functional>
#include <optional>

#include <QAbstractTableModel>
#include <QColor>
#include <QStyledItemDelegate>

#include "hdlab/gui_core/layer_costs.hpp"
#include "hdlab/gui_core/layer_strip.hpp"

class QAbstractItemView;

namespace hdlab::gui {

class Session;

// One colour per attention kind, shared by the strip, the table and the legend.
QColor kind_colour(gui_core::LayerAttentionKind k);

class LayerTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Layer, Attention, Window, Backbone, Ffn, KvFrom, Loop, GrownFrom, Stage, Flops, Time, KvBytes, Memory,
                ColumnCount };
  // The cost column showing a quantity, and back (-1 / nullopt for other columns).
  static int columnOf(gui_core::LayerQuantity q);

  explicit LayerTableModel(Session* session, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;

  std::function<void(int layer, model::HdLayerKind kind)> onKindEdited;
  const gui_core::LayerStrip& strip() const { return strip_; }
  // The cost columns show `costs` for the phase chosen; their raw values (FLOP, s, B)
  // are under Qt::UserRole. Costs for another layer count than the table's are not shown.
  void setCosts(const gui_core::LayerCosts& costs);
  void clearCosts();
  void setPhase(gui_core::CostPhase phase);
  gui_core::CostPhase phase() const { return phase_; }
  // The cost of `layer` in the chosen phase; null when there is none.
  const gui_core::LayerCost* cost(int layer) const;

 public slots:
  void reload();

 private:
  QVariant costData(const gui_core::LayerCost& c, int column, int role) const;
  void costsChanged();

  Session* session_;
  gui_core::LayerStrip strip_;
  std::optional<gui_core::LayerCosts> costs_;
  gui_core::CostPhase phase_ = gui_core::CostPhase::decode;
};

// A combo box editor for the attention column (full / local / intra); a choice from it
// applies at once and closes the editor.
class LayerKindDelegate : public QStyledItemDelegate {
  Q_OBJECT
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem&, const QModelIndex&) const override;
  void setEditorData(QWidget* editor, const QModelIndex& index) const override;
  void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override;
};

// Keeps the view's current row and the session's selected layer the same, both ways.
// Without it a model reset leaves no current row, and the view's next focus-in (opening
// the tab) makes row 0 current and so selects layer 0.
void follow_selected_layer(QAbstractItemView* view, Session* session);

}  // namespace hdlab::gui
