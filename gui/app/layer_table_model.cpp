#include "layer_table_model.hpp"

#include <QAbstractItemView>
#include <QComboBox>

#include "hdlab/gui_core/hd_rule.hpp"
#include "hdlab/gui_core/units.hpp"
#include "session.hpp"

namespace hdlab::gui {
namespace {

std::optional<model::HdLayerKind> hd_kind(const QString& s) {
  if (s == "full") return model::HdLayerKind::full;
  if (s == "local") return model::HdLayerKind::local;
  if (s == "intra") return model::HdLayerKind::intra;
  return std::nullopt;
}

// The quantity a cost column shows.
std::optional<gui_core::LayerQuantity> quantity_of(int column) {
  switch (column) {
    case LayerTableModel::Flops: return gui_core::LayerQuantity::flops;
    case LayerTableModel::Time: return gui_core::LayerQuantity::time;
    case LayerTableModel::KvBytes: return gui_core::LayerQuantity::kv_bytes;
    case LayerTableModel::Memory: return gui_core::LayerQuantity::memory;
    default: return std::nullopt;
  }
}

}  // namespace

QColor kind_colour(gui_core::LayerAttentionKind k) {
  switch (k) {
    case gui_core::LayerAttentionKind::full: return QColor(0x00, 0x72, 0xB2);
    case gui_core::LayerAttentionKind::sliding: return QColor(0x56, 0xB4, 0xE9);
    case gui_core::LayerAttentionKind::local: return QColor(0xE6, 0x9F, 0x00);
    case gui_core::LayerAttentionKind::intra: return QColor(0x00, 0x9E, 0x73);
    case gui_core::LayerAttentionKind::phd: return QColor(0xCC, 0x79, 0xA7);
  }
  return Qt::gray;
}

LayerTableModel::LayerTableModel(Session* session, QObject* parent) : QAbstractTableModel(parent), session_(session) {
  connect(session_, &Session::configChanged, this, &LayerTableModel::reload);
  connect(session_, &Session::stagesChanged, this, &LayerTableModel::reload);
  reload();
}

void LayerTableModel::reload() {
  gui_core::LayerStrip next = session_->hasConfig() ? gui_core::layer_strip(session_->config(), session_->layerStages())
                                                    : gui_core::LayerStrip{};
  // Same rows: new values in place. A reset would destroy an open kind editor while it
  // commits (its edit is what changed the config) and lose the current row.
  if (next.layers.size() == strip_.layers.size() && !strip_.layers.empty()) {
    strip_ = std::move(next);
    emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    return;
  }
  beginResetModel();
  strip_ = std::move(next);
  endResetModel();
}

int LayerTableModel::columnOf(gui_core::LayerQuantity q) {
  for (int c = Flops; c <= Memory; ++c)
    if (quantity_of(c) == q) return c;
  return -1;
}

void LayerTableModel::setCosts(const gui_core::LayerCosts& costs) {
  costs_ = costs;
  costsChanged();
}

void LayerTableModel::clearCosts() {
  costs_.reset();
  costsChanged();
}

void LayerTableModel::setPhase(gui_core::CostPhase phase) {
  if (phase == phase_) return;
  phase_ = phase;
  costsChanged();
}

void LayerTableModel::costsChanged() {
  if (rowCount() > 0) emit dataChanged(index(0, Flops), index(rowCount() - 1, Memory));
  emit headerDataChanged(Qt::Horizontal, Flops, Memory);
}

const gui_core::LayerCost* LayerTableModel::cost(int layer) const {
  // Costs of another design's layer count (a result still on its way) are not this table's.
  if (!costs_ || costs_->layer_count() != strip_.layers.size() || layer < 0 || layer >= rowCount()) return nullptr;
  return &costs_->at(phase_).layers[static_cast<std::size_t>(layer)];
}

int LayerTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(strip_.layers.size());
}
int LayerTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant LayerTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return {};
  static const char* names[] = {"layer", "attention", "window", "backbone", "FFN", "K/V from", "loop", "grown from",
                                "stage", "FLOPs [GFLOP]", "time [ms]", "KV cache [MB/seq]", "memory [MB/device]"};
  static const char* tips[] = {
      "Layer index in the effective (grown) backbone",
      "What the design runs here; HD layers: double-click to change full / local / intra",
      "Window span: the backbone's sliding-window layers in tokens, HD local layers in expanded positions",
      "The backbone's own attention (full, or sliding window in tokens)",
      "Dense SwiGLU or routed experts",
      "KV mirror: the early layer whose input feeds this layer's K/V",
      "Looped designs: prelude, recurrent block, coda",
      "Depth growth: the base layer this one was grown from",
      "Pipeline stage (device) from the last pipeline run",
      "FLOPs of the layer in one %1 (every run of it: a recurrent layer's iterations), the whole model replica, "
      "in GFLOP (1e9 FLOP)",
      "Time of the layer's ops in one %1 on one device, in ms (collectives and the ops outside the layers "
      "not included)",
      "KV cache the layer keeps per sequence at the decode context (%2 tokens), the devices of a replica "
      "together, in MB (1e6 bytes)",
      "Memory per device in inference: the layer's weights + the KV cache of the decode batch (%3 sequences) "
      "at the decode context, in MB (1e6 bytes)"};
  if (section < 0 || section >= ColumnCount) return {};
  if (role == Qt::DisplayRole) return tr(names[section]);
  if (role != Qt::ToolTipRole) return {};
  QString tip = tr(tips[section]);
  if (section == Flops || section == Time) tip = tip.arg(tr(gui_core::to_string(phase_)));
  if (section == KvBytes)
    tip = tip.arg(costs_ ? QString::fromStdString(gui_core::format_count(costs_->kv_context)) : QString("?"));
  if (section == Memory) tip = tip.arg(costs_ ? QString::number(costs_->kv_batch) : QString("?"));
  return tip;
}

QVariant LayerTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const gui_core::LayerStripCell& c = strip_.layers[static_cast<std::size_t>(index.row())];
  if (quantity_of(index.column())) {
    const gui_core::LayerCost* lc = cost(index.row());
    return lc ? costData(*lc, index.column(), role) : QVariant();
  }
  if (role == Qt::ToolTipRole) return QString::fromStdString(gui_core::describe(c, strip_.copies));
  if (role == Qt::BackgroundRole && index.column() == Attention) {
    // A pale tint of the strip's colour keeps the text readable.
    const QColor k = kind_colour(c.attention);
    return QColor((k.red() + 3 * 255) / 4, (k.green() + 3 * 255) / 4, (k.blue() + 3 * 255) / 4);
  }
  if (role == Qt::TextAlignmentRole && index.column() != Attention && index.column() != Backbone &&
      index.column() != Ffn && index.column() != Loop)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != Qt::EditRole) return {};
  auto optional_index = [](std::int64_t v) { return v >= 0 ? QVariant(static_cast<qlonglong>(v)) : QVariant(); };
  switch (index.column()) {
    case Layer: return static_cast<qlonglong>(c.layer);
    case Attention: return QString(gui_core::to_string(c.attention));
    case Window:
      if (c.window <= 0) return QVariant();
      return QString::fromStdString(gui_core::format_count(c.window)) +
             (c.attention == gui_core::LayerAttentionKind::local ? tr(" positions") : tr(" tokens"));
    case Backbone:
      return c.backbone == model::AttentionKind::sliding
                 ? tr("sliding %1 tokens").arg(QString::fromStdString(gui_core::format_count(c.backbone_window)))
                 : tr("full");
    case Ffn: return c.moe ? tr("MoE") : tr("dense");
    case KvFrom: return optional_index(c.mirror_source);
    case Loop:
      return c.loop == gui_core::LoopRole::recurrent ? tr("recurrent x%1").arg(strip_.loop_iterations)
                                                      : QString(gui_core::to_string(c.loop));
    case GrownFrom: return optional_index(c.grown_from);
    case Stage: return optional_index(c.stage);
    default: return {};
  }
}

QVariant LayerTableModel::costData(const gui_core::LayerCost& c, int column, int role) const {
  const gui_core::LayerQuantity q = *quantity_of(column);
  const double v = gui_core::value(c, q);
  switch (role) {
    case Qt::UserRole: return v;  // FLOP, s or B
    case Qt::TextAlignmentRole: return int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::DisplayRole: {
      const gui_core::DisplayUnit u = gui_core::display_unit(q);
      return QString("%L1").arg(v * u.scale, 0, 'f', u.decimals);
    }
    case Qt::ToolTipRole: {
      const QString runs = c.passes != 1 ? tr(" (%1 runs per pass)").arg(c.passes) : QString();
      return tr("Layer %1, %2%3: %4, %5 on one device; KV cache %6 per sequence at %7 tokens; memory %8 per device "
                "(weights %9 + the KV cache of %10 sequences)")
          .arg(c.layer)
          .arg(tr(gui_core::to_string(phase_)), runs,
               QString::fromStdString(gui_core::format_value(c.flops, gui_core::LayerQuantity::flops)),
               QString::fromStdString(gui_core::format_value(c.seconds, gui_core::LayerQuantity::time)),
               QString::fromStdString(gui_core::format_value(c.kv_bytes_per_seq, gui_core::LayerQuantity::kv_bytes)),
               QString::fromStdString(gui_core::format_count(costs_->kv_context)),
               QString::fromStdString(gui_core::format_value(c.memory_bytes, gui_core::LayerQuantity::memory)),
               QString::fromStdString(gui_core::format_value(c.weight_bytes, gui_core::LayerQuantity::memory)))
          .arg(costs_->kv_batch);
    }
    default: return {};
  }
}

Qt::ItemFlags LayerTableModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.isValid() && index.column() == Attention && gui_core::edits_layer_kinds(strip_.method)) f |= Qt::ItemIsEditable;
  return f;
}

bool LayerTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (role != Qt::EditRole || !(flags(index) & Qt::ItemIsEditable)) return false;
  const auto kind = hd_kind(value.toString().trimmed().toLower());
  if (!kind || !onKindEdited) return false;
  // The editor re-parses the design; the session's configChanged reloads this model.
  onKindEdited(index.row(), *kind);
  return true;
}

QWidget* LayerKindDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem&, const QModelIndex&) const {
  auto* box = new QComboBox(parent);
  box->addItems({"full", "local", "intra"});
  // `activated` is the user's choice (from the drop-down or the keys), not setEditorData's
  // programmatic change. The signals are the delegate's own; createEditor is const by
  // Qt's signature only.
  auto* self = const_cast<LayerKindDelegate*>(this);
  connect(box, &QComboBox::activated, self, [self, box] {
    emit self->commitData(box);
    emit self->closeEditor(box);
  });
  return box;
}

void LayerKindDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
  auto* box = static_cast<QComboBox*>(editor);
  box->setCurrentText(index.data(Qt::EditRole).toString());
}

void LayerKindDelegate::setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const {
  model->setData(index, static_cast<QComboBox*>(editor)->currentText(), Qt::EditRole);
}

void follow_selected_layer(QAbstractItemView* view, Session* session) {
  auto show = [view, session] {
    const int column = view->currentIndex().isValid() ? view->currentIndex().column() : 0;
    const QModelIndex i = view->model()->index(session->selectedLayer(), column);
    if (i.isValid() && i != view->currentIndex())
      view->selectionModel()->setCurrentIndex(i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  };
  QObject::connect(session, &Session::layerSelected, view, show);
  QObject::connect(view->model(), &QAbstractItemModel::modelReset, view, show);
  QObject::connect(view->selectionModel(), &QItemSelectionModel::currentRowChanged, session,
                   [session](const QModelIndex& i) {
                     if (i.isValid()) session->setSelectedLayer(i.row());
                   });
  show();
}

}  // namespace hdlab::gui
