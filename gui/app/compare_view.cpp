#include "compare_view.hpp"

#include <cmath>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "hdlab/gui_core/metric_info.hpp"
#include "hdlab/gui_core/units.hpp"

namespace hdlab::gui {
namespace {

QString text(const std::string& s) { return QString::fromStdString(s); }

// A value in the row's unit: the metric's own format, or seconds for the pipeline row.
QString format_value(const gui_core::CompareRow& row, double v) {
  if (std::isnan(v)) return QStringLiteral("-");
  if (const auto m = simulator::metric_from_name(row.name)) return text(gui_core::format_metric(*m, v));
  return text(gui_core::format_seconds(v));
}

// The row's name in words, as the Costs tab shows it; its tooltip keeps the CLI/CSV column.
QString row_label(const gui_core::CompareRow& row) {
  if (const auto m = simulator::metric_from_name(row.name))
    if (const gui_core::MetricInfo* info = gui_core::find_metric_info(*m)) return QString(info->label);
  if (row.name == "pipeline_makespan_s") return QObject::tr("Pipeline makespan (Pipeline tab)");
  return text(row.name);
}

QString row_tooltip(const gui_core::CompareRow& row) {
  if (const auto m = simulator::metric_from_name(row.name)) return text(gui_core::metric_tooltip(*m));
  return QObject::tr("Column: %1").arg(text(row.name));
}

}  // namespace

Comparison::Comparison(QObject* parent) : QObject(parent), job_(this) {
  job_.on_result = [this](const Results& results) {
    QStringList errors;
    for (const Outcome& o : results) {
      if (o.result) pins_.set_result(o.id, *o.result);
      else if (!o.error.isEmpty()) {
        pins_.remove(o.id);
        errors << o.error;
      }
    }
    emit changed();
    if (!errors.isEmpty()) emit failed(tr("Pin not evaluated: %1").arg(errors.join("; ")));
  };
  job_.on_error = [this](const model::ConfigError& e) { emit failed(text(e.what())); };
}

Comparison::~Comparison() { job_.cancel(); }

std::vector<const gui_core::PinList::Entry*> Comparison::evaluated() const {
  std::vector<const gui_core::PinList::Entry*> out;
  for (const auto& e : pins_.entries())
    if (e.result) out.push_back(&e);
  return out;
}

int Comparison::pin(gui_core::Pin pin, QString* error) {
  int id = -1;
  try {
    id = pins_.add(std::move(pin));
  } catch (const model::ConfigError& e) {
    if (error) *error = text(e.what());
    return -1;
  }
  emit changed();
  evaluatePending();
  return id;
}

void Comparison::remove(int id) {
  if (!pins_.remove(id)) return;
  emit changed();
}

void Comparison::clear() {
  job_.cancel();
  pins_.clear();
  emit changed();
}

void Comparison::evaluatePending() {
  // Copies travel to the worker; a newer start (another pin) cancels this one and takes
  // over every pin still pending, so none is lost.
  const std::vector<gui_core::PinList::Entry> pending = pins_.pending();
  if (pending.empty()) return;
  job_.start([pending](const gui_core::ProgressFn& progress) {
    Results out;
    for (const auto& e : pending) {
      Outcome o{e.id, std::nullopt, {}};
      try {
        o.result = gui_core::evaluate_pin(e.pin, progress);
      } catch (const model::ConfigError& err) {
        o.error = QString::fromStdString(e.pin.label + ": " + err.what());
      }
      out.push_back(std::move(o));
    }
    return out;
  });
}

void Comparison::waitForEvaluation() {
  job_.wait();
  QCoreApplication::processEvents();  // delivers the finished signal
}

void CompareModel::setRows(std::vector<gui_core::CompareRow> rows, QStringList pin_keys, QStringList pin_labels) {
  beginResetModel();
  rows_ = std::move(rows);
  keys_ = std::move(pin_keys);
  labels_ = std::move(pin_labels);
  endResetModel();
}

int CompareModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(rows_.size()); }
int CompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() || rows_.empty() ? 0 : FirstPin + 2 * static_cast<int>(keys_.size());
}

QVariant CompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole)) return {};
  if (section == Name) return tr("metric");
  if (section == Unit) return tr("unit");
  if (section == Current) return tr("current design");
  const int pin = (section - FirstPin) / 2;
  if (section < FirstPin || pin >= keys_.size()) return {};
  const QString& label = labels_.value(pin);
  if (section == valueColumn(pin)) return role == Qt::ToolTipRole ? label : keys_[pin];
  return role == Qt::ToolTipRole ? tr("%1 divided by the current design's value").arg(label)
                                 : tr("%1 / current").arg(keys_[pin]);
}

QVariant CompareModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
  const gui_core::CompareRow& row = rows_[static_cast<std::size_t>(index.row())];
  const int c = index.column();
  const auto pin = static_cast<std::size_t>((c - FirstPin) / 2);
  const bool ratio = c >= FirstPin && (c - FirstPin) % 2 == 1;
  const double v = c == Current ? row.current : c < FirstPin ? std::nan("") : ratio ? row.ratios[pin] : row.pins[pin];
  if (role == Qt::UserRole) return c == Name || c == Unit ? QVariant() : QVariant(v);
  if (role == Qt::TextAlignmentRole && c != Name && c != Unit) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && c == Name) return row_tooltip(row);
  if (role != Qt::DisplayRole) return {};
  if (c == Name) return row_label(row);
  if (c == Unit) return text(row.unit);
  if (ratio) return std::isfinite(v) ? text(gui_core::format_ratio(v)) : QStringLiteral("-");
  return format_value(row, v);
}

CompareView::CompareView(Comparison* comparison, QWidget* parent) : QWidget(parent), comparison_(comparison) {
  auto* v = new QVBoxLayout(this);
  note_ = new QLabel();
  note_->setWordWrap(true);
  v->addWidget(note_);
  auto* h = new QHBoxLayout();
  list_ = new QListWidget();
  list_->setMaximumHeight(4 * list_->fontMetrics().height() + 16);  // kMaxPins rows
  list_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  h->addWidget(list_, 1);
  auto* buttons = new QVBoxLayout();
  pin_ = new QPushButton(tr("Pin current design"));
  pin_->setToolTip(tr("Keep the current design, hardware, scenario and pipeline as a reference (Ctrl+P)"));
  remove_ = new QPushButton(tr("Remove pin"));
  remove_->setToolTip(tr("Remove the selected pins and their overlays"));
  buttons->addWidget(pin_);
  buttons->addWidget(remove_);
  buttons->addStretch(1);
  h->addLayout(buttons);
  v->addLayout(h);
  model_ = new CompareModel(this);
  table_ = new QTableView();
  table_->setModel(model_);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
  table_->setAlternatingRowColors(true);
  v->addWidget(table_, 1);
  connect(pin_, &QPushButton::clicked, this, &CompareView::pinRequested);
  connect(remove_, &QPushButton::clicked, this, [this] {
    for (QListWidgetItem* item : list_->selectedItems()) comparison_->remove(item->data(Qt::UserRole).toInt());
  });
  connect(comparison_, &Comparison::changed, this, &CompareView::refresh);
  refresh();
}

void CompareView::setCurrent(const std::optional<simulator::Metrics>& metrics,
                             const std::optional<simulator::PipelineResult>& pipeline) {
  current_ = metrics;
  current_pipeline_ = pipeline;
  refresh();
}

void CompareView::refresh() {
  list_->clear();
  for (const auto& e : comparison_->pins().entries()) {
    auto* item = new QListWidgetItem(text(gui_core::pin_key(e.id) + ": " + e.pin.label) +
                                     (e.result ? QString() : tr(" (evaluating...)")));
    item->setData(Qt::UserRole, e.id);
    list_->addItem(item);
  }
  pin_->setEnabled(!comparison_->pins().full());
  remove_->setEnabled(comparison_->pins().size() > 0);
  std::vector<gui_core::PinResult> results;
  QStringList keys, labels;
  for (const auto* e : comparison_->evaluated()) {
    results.push_back(*e->result);
    keys << text(gui_core::pin_key(e->id));
    labels << text(e->pin.label);
  }
  if (current_) model_->setRows(gui_core::compare_rows(*current_, current_pipeline_, results), keys, labels);
  else model_->setRows({}, {}, {});
  note_->setText(comparison_->pins().size() == 0
                     ? tr("Pin the current design (Compare > Pin current design, Ctrl+P) to keep it as a reference: its curves "
                          "join every trade-off chart, its Gantt the pipeline tab on a shared time axis, and its "
                          "numbers this table. Up to %1 pins.")
                           .arg(gui_core::PinList::kMaxPins)
                     : tr("Ratios are pin / current design: above 1x the pin has more of that metric. "
                          "Each pin keeps the hardware, scenario and pipeline it was pinned with."));
}

}  // namespace hdlab::gui
