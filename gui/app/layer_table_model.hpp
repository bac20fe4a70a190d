#pragma once
// The layer table: one row per layer of the effective backbone, over gui_core::LayerStrip.
// The attention column of an HD design is editable (full / local / intra); an edit goes
// to the design editor through `onKindEdited`, which re-parses the design.
#include <functional>

#include <QAbstractTableModel>
#include <QColor>
#include <QStyledItemDelegate>

#include "hdlab/gui_core/layer_strip.hpp"

class QAbstractItemView;

namespace hdlab::gui {

class Session;

// One colour per attention kind, shared by the strip, the table and the legend.
QColor kind_colour(gui_core::LayerAttentionKind k);

class LayerTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Layer, Attention, Window, Backbone, Ffn, KvFrom, Loop, GrownFrom, Stage, ColumnCount };

  explicit LayerTableModel(Session* session, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;

  std::function<void(int layer, model::HdLayerKind kind)> onKindEdited;
  const gui_core::LayerStrip& strip() const { return strip_; }

 public slots:
  void reload();

 private:
  Session* session_;
  gui_core::LayerStrip strip_;
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
