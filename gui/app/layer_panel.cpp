#include "layer_panel.hpp"

#include "flow_layout.hpp"

#include <algorithm>
#include <optional>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableView>
#include <QVBoxLayout>

#include "hdlab/gui_core/hd_rule.hpp"
#include "layer_strip_widget.hpp"
#include "layer_table_model.hpp"

namespace hdlab::gui {
namespace {

constexpr std::pair<const char*, model::HdLayerKind> hd_kinds[] = {
    {"full", model::HdLayerKind::full}, {"local", model::HdLayerKind::local}, {"intra", model::HdLayerKind::intra}};

QString ms(double seconds) {
  return QString::fromStdString(gui_core::format_value(seconds, gui_core::LayerQuantity::time));
}
QString gflop(double flops) {
  return QString::fromStdString(gui_core::format_value(flops, gui_core::LayerQuantity::flops));
}

}  // namespace

LayerPanel::LayerPanel(Session* session, LayerTableModel* model, LayerStripWidget* strip, QWidget* parent)
    : QWidget(parent), session_(session), model_(model), strip_(strip) {
  view_ = new QTableView();
  view_->setModel(model_);
  view_->setItemDelegateForColumn(LayerTableModel::Attention, new LayerKindDelegate(view_));
  view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(view_->fontMetrics().height() + 8);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  view_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                         QAbstractItemView::SelectedClicked);
  view_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(view_, &QWidget::customContextMenuRequested, this, &LayerPanel::showContextMenu);
  summary_ = new QLabel();
  summary_->setObjectName("layerCostSummary");
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(0, 4, 0, 0);
  v->addWidget(controls());
  v->addWidget(summary_);
  v->addWidget(view_, 1);
  // The kind controls apply to HD designs only; the table's rows follow the design.
  connect(model_, &QAbstractItemModel::modelReset, this, &LayerPanel::syncKindControls);
  connect(model_, &QAbstractItemModel::dataChanged, this, &LayerPanel::syncKindControls);
  connect(strip_, &LayerStripWidget::barsChanged, this, &LayerPanel::syncBarControls);
  syncKindControls();
  syncBarControls();
  updateSummary();
}

QWidget* LayerPanel::controls() {
  auto* row = new QWidget();
  // Wraps onto more lines in a narrow window rather than widening it (1024 px wide must fit).
  auto* h = new FlowLayout(row);
  h->setContentsMargins(4, 0, 4, 0);
  phase_ = new QComboBox();
  phase_->setObjectName("layerCostPhase");
  phase_->setToolTip(tr("The pass the cost columns and the strip's bars are for"));
  for (int i = 0; i < gui_core::cost_phase_count; ++i)
    phase_->addItem(tr(gui_core::to_string(static_cast<gui_core::CostPhase>(i))), i);
  bars_ = new QComboBox();
  bars_->setObjectName("layerBarQuantity");
  bars_->setToolTip(tr("What the bars over the layer strip show, each layer's scaled to the largest"));
  for (int q = 0; q < gui_core::layer_quantity_count; ++q) {
    const auto quantity = static_cast<gui_core::LayerQuantity>(q);
    bars_->addItem(tr("%1 [%2]").arg(tr(gui_core::to_string(quantity)), gui_core::display_unit(quantity).unit), q);
  }
  bars_->addItem(tr("nothing"), -1);
  kind_ = new QComboBox();
  kind_->setObjectName("layerKindChoice");
  for (const auto& [name, kind] : hd_kinds) kind_->addItem(name, static_cast<int>(kind));
  set_kind_ = new QPushButton(tr("Set kind of selected layers"));
  set_kind_->setObjectName("setSelectedKinds");
  set_kind_->setToolTip(tr("Gives every selected row (Shift / Ctrl + click) the HD kind on the left, as one edit"));
  h->addWidget(new QLabel(tr("Costs for:")));
  h->addWidget(phase_);
  h->addWidget(new QLabel(tr("Strip bars:")));
  h->addWidget(bars_);
  h->addWidget(kind_);
  h->addWidget(set_kind_);
  connect(phase_, &QComboBox::currentIndexChanged, this, [this] {
    const auto phase = static_cast<gui_core::CostPhase>(phase_->currentData().toInt());
    model_->setPhase(phase);
    strip_->setBarPhase(phase);
    updateSummary();
  });
  connect(bars_, &QComboBox::currentIndexChanged, this, [this] {
    const int q = bars_->currentData().toInt();
    strip_->setBarQuantity(q < 0 ? std::nullopt : std::optional(static_cast<gui_core::LayerQuantity>(q)));
  });
  connect(set_kind_, &QPushButton::clicked, this,
          [this] { setSelectedKind(static_cast<model::HdLayerKind>(kind_->currentData().toInt())); });
  return row;
}

QList<int> LayerPanel::selectedLayers() const {
  QList<int> layers;
  for (const QModelIndex& i : view_->selectionModel()->selectedRows()) layers << i.row();
  std::sort(layers.begin(), layers.end());
  return layers;
}

void LayerPanel::setSelectedKind(model::HdLayerKind kind) {
  const QList<int> layers = selectedLayers();
  if (!layers.isEmpty() && gui_core::edits_layer_kinds(model_->strip().method)) emit kindsRequested(layers, kind);
}

void LayerPanel::showContextMenu(const QPoint& pos) {
  const QList<int> layers = selectedLayers();
  if (layers.isEmpty() || !gui_core::edits_layer_kinds(model_->strip().method)) return;
  QMenu menu(this);
  for (const auto& [name, kind] : hd_kinds) {
    QAction* a = menu.addAction(tr("Set %n selected layer(s) to %1", "", static_cast<int>(layers.size())).arg(name));
    connect(a, &QAction::triggered, this, [this, k = kind] { setSelectedKind(k); });
  }
  menu.exec(view_->viewport()->mapToGlobal(pos));
}

void LayerPanel::syncKindControls() {
  const bool hd = gui_core::edits_layer_kinds(model_->strip().method);
  kind_->setEnabled(hd);
  set_kind_->setEnabled(hd);
}

void LayerPanel::syncBarControls() {
  // The strip's context menu may have changed what the bars show, and for which phase.
  const QSignalBlocker block_phase(phase_), block_bars(bars_);
  phase_->setCurrentIndex(phase_->findData(static_cast<int>(strip_->barPhase())));
  model_->setPhase(strip_->barPhase());
  const auto q = strip_->barQuantity();
  bars_->setCurrentIndex(bars_->findData(q ? static_cast<int>(*q) : -1));
  updateSummary();
}

void LayerPanel::setCosts(const gui_core::LayerCosts& costs) {
  costs_ = costs;
  model_->setCosts(costs);
  strip_->setCosts(costs);
  updateSummary();
}

void LayerPanel::clearCosts() {
  costs_.reset();
  model_->clearCosts();
  strip_->clearCosts();
  updateSummary();
}

QString LayerPanel::summary() const { return summary_->text(); }

void LayerPanel::updateSummary() {
  if (!costs_ || costs_->layer_count() != model_->strip().layers.size()) {
    summary_->setText(tr("Per-layer costs appear after the evaluation."));
    return;
  }
  const gui_core::PhaseLayerCosts& p = costs_->at(model_->phase());
  double flops = 0;
  for (const auto& c : p.layers) flops += c.flops;
  summary_->setText(
      tr("%1: the layers' ops take %2 of the pass's %3 of op time on one device (the ops outside the layers %4; "
         "collectives %5 more, not split by layer); the layers' FLOPs %6 of %7.")
          .arg(tr(gui_core::to_string(p.phase)), ms(p.layers_seconds), ms(p.pass_seconds),
               ms(p.pass_seconds - p.layers_seconds), ms(p.comm_seconds), gflop(flops), gflop(p.pass_flops)));
}

}  // namespace hdlab::gui
