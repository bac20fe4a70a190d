#include "metrics_model.hpp"

#include <cmath>

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QTableView>

#include "hdlab/gui_core/memory_fit.hpp"
#include "hdlab/gui_core/metric_info.hpp"
#include "hdlab/gui_core/units.hpp"

namespace hdlab::gui {
namespace {
QString text(const std::string& s) { return QString::fromStdString(s); }
const QColor kOverCapacity(0xB0, 0x00, 0x20);
const QColor kGroupBackground(0xE4, 0xE8, 0xEE);

using gui_core::MetricGroup;
using simulator::Metric;

// A row of the table: a group's header (no metric) or a metric.
struct RowEntry {
  std::optional<Metric> metric;
  int group;  // MetricGroup, or metric_group_count for metrics without an entry
};

const std::vector<RowEntry>& row_layout() {
  static const std::vector<RowEntry> rows = [] {
    std::vector<RowEntry> out;
    for (int g = 0; g < gui_core::metric_group_count; ++g) {
      out.push_back({std::nullopt, g});
      for (const gui_core::MetricInfo& i : gui_core::metric_infos())
        if (static_cast<int>(i.group) == g) out.push_back({i.metric, g});
    }
    // A metric without an entry (the tests require one for each) still shows, by name.
    std::vector<RowEntry> rest;
    for (int k = 0; k < simulator::metric_count; ++k)
      if (!gui_core::find_metric_info(static_cast<Metric>(k)))
        rest.push_back({static_cast<Metric>(k), gui_core::metric_group_count});
    if (!rest.empty()) out.push_back({std::nullopt, gui_core::metric_group_count});
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  }();
  return rows;
}

QString group_name(int g) {
  return g < gui_core::metric_group_count ? QString(gui_core::group_label(static_cast<MetricGroup>(g)))
                                          : QObject::tr("Other");
}

QString label(Metric m) {
  const gui_core::MetricInfo* i = gui_core::find_metric_info(m);
  return i ? QString(i->label) : QString(simulator::metric_name(m));
}

QString unit(Metric m) {
  const gui_core::MetricInfo* i = gui_core::find_metric_info(m);
  return i ? QString(i->unit) : QString(simulator::metric_unit(m));
}

}  // namespace

int MetricsModel::shownRowCount() { return static_cast<int>(row_layout().size()); }

int MetricsModel::rowOf(Metric m) {
  const std::vector<RowEntry>& rows = row_layout();
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (rows[r].metric == m) return static_cast<int>(r);
  return -1;  // unreachable: every metric has a row
}

std::optional<Metric> MetricsModel::metricAt(int row) {
  const std::vector<RowEntry>& rows = row_layout();
  if (row < 0 || row >= static_cast<int>(rows.size())) return std::nullopt;
  return rows[static_cast<std::size_t>(row)].metric;
}

void MetricsModel::spanGroupRows(QTableView* view) {
  view->clearSpans();
  for (int r = 0; r < view->model()->rowCount(); ++r)
    if (!metricAt(r)) view->setSpan(r, 0, 1, ColumnCount);
}

void MetricsModel::setResults(const simulator::Metrics& design, const simulator::Metrics& baseline,
                              const simulator::MemoryFit& design_fit, const simulator::MemoryFit& baseline_fit) {
  beginResetModel();
  design_ = design;
  baseline_ = baseline;
  design_fit_ = design_fit;
  baseline_fit_ = baseline_fit;
  endResetModel();
}

const simulator::PhaseFit* MetricsModel::overCapacity(Metric m, bool baseline) const {
  const std::optional<simulator::FitPhase> phase = gui_core::metric_phase(m);
  if (!phase) return nullptr;
  const simulator::PhaseFit& f = gui_core::phase_fit(baseline ? baseline_fit_ : design_fit_, *phase);
  return f.fits() ? nullptr : &f;
}

void MetricsModel::clear() {
  beginResetModel();
  design_.reset();
  baseline_.reset();
  endResetModel();
}

int MetricsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !design_ ? 0 : shownRowCount();
}
int MetricsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant MetricsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Name: return tr("metric");
    case Design: return tr("design");
    case Baseline: return tr("baseline (backbone alone)");
    case Ratio: return tr("design / baseline");
    case Unit: return tr("unit");
    default: return {};
  }
}

Qt::ItemFlags MetricsModel::flags(const QModelIndex& index) const {
  if (index.isValid() && !metricAt(index.row())) return Qt::ItemIsEnabled;  // a header: not selectable
  return QAbstractTableModel::flags(index);
}

QVariant MetricsModel::groupData(int row, int column, int role) const {
  const int g = row_layout()[static_cast<std::size_t>(row)].group;
  switch (role) {
    case GroupRole: return true;
    case Qt::DisplayRole: return column == Name ? group_name(g) : QVariant();
    case Qt::ToolTipRole:
      return g < gui_core::metric_group_count ? QString(gui_core::group_tooltip(static_cast<MetricGroup>(g)))
                                              : tr("Metrics without a description");
    case Qt::BackgroundRole: return QBrush(kGroupBackground);
    case Qt::FontRole: {
      QFont f;
      f.setBold(true);
      return f;
    }
    default: return {};
  }
}

// What the metric is; on a cell of a phase that does not fit, by how much and what fits.
QVariant MetricsModel::metricTooltip(Metric m, int column) const {
  const QString about = text(gui_core::metric_tooltip(m));
  if (column == Unit) return about;
  const simulator::PhaseFit* over = overCapacity(m, column == Baseline);
  if (!over) return about;
  const QString fit = text((column == Baseline ? "Baseline: " : "") + simulator::describe(*over));
  return column == Name ? about + "\n\n" + fit : fit;
}

QVariant MetricsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !design_ || index.row() >= shownRowCount()) return {};
  const std::optional<Metric> metric = metricAt(index.row());
  if (!metric) return groupData(index.row(), index.column(), role);
  const Metric m = *metric;
  const double d = (*design_)[m], b = (*baseline_)[m];
  const double ratio = b != 0 ? d / b : std::nan("");
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case Design: return d;
      case Baseline: return b;
      case Ratio: return ratio;
      default: return {};
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() != Name && index.column() != Unit)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole) return metricTooltip(m, index.column());
  if (role == Qt::ForegroundRole && m == Metric::train_fits && d == 0) return QBrush(kOverCapacity);
  // The design's cells (name, value, ratio) follow the design's fit, the baseline's its own.
  if (role == Qt::ForegroundRole && index.column() != Unit && overCapacity(m, index.column() == Baseline))
    return QBrush(kOverCapacity);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Name: return label(m);
    case Design: return text(gui_core::format_metric(m, d));
    case Baseline: return text(gui_core::format_metric(m, b));
    case Ratio: return std::isfinite(ratio) ? text(gui_core::format_ratio(ratio)) : QString("-");
    case Unit: return unit(m);
    default: return {};
  }
}

void ServingModel::setResults(const simulator::Metrics& design, const simulator::Scenario& scenario) {
  beginResetModel();
  cells_ = design.serving;
  batches_ = scenario.serving.batches;
  inputs_ = scenario.serving.input_lengths;
  if (cells_.size() != batches_.size() * inputs_.size()) cells_.clear(), batches_.clear(), inputs_.clear();
  endResetModel();
}

void ServingModel::clear() {
  beginResetModel();
  cells_.clear();
  batches_.clear();
  inputs_.clear();
  endResetModel();
}

int ServingModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(batches_.size()); }
int ServingModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(inputs_.size());
}

QVariant ServingModel::headerData(int section, Qt::Orientation o, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (o == Qt::Horizontal && section < static_cast<int>(inputs_.size()))
    return tr("input %1 tokens").arg(text(gui_core::format_count(inputs_[static_cast<std::size_t>(section)])));
  if (o == Qt::Vertical && section < static_cast<int>(batches_.size()))
    return tr("batch %1").arg(batches_[static_cast<std::size_t>(section)]);
  return {};
}

QVariant ServingModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const std::size_t i = static_cast<std::size_t>(index.row()) * inputs_.size() + static_cast<std::size_t>(index.column());
  if (i >= cells_.size()) return {};
  const simulator::ServingPoint& p = cells_[i];
  switch (role) {
    case Qt::DisplayRole:
      return tr("%1 (%2 of baseline)%3")
          .arg(text(gui_core::format_si(p.tokens_per_s, "tokens/s")), text(gui_core::format_ratio(p.ratio)),
               p.fits ? QString() : tr(", does not fit"));
    case Qt::UserRole: return p.tokens_per_s;
    case Qt::ToolTipRole:
      return tr("decode at %1 tokens of context (input + half the output); baseline %2; %3")
          .arg(text(gui_core::format_count(p.context)), text(gui_core::format_si(p.baseline_tokens_per_s, "tokens/s")),
               p.fits ? tr("weights + KV cache fit") : tr("weights + KV cache exceed device memory"));
    case Qt::BackgroundRole: return p.fits ? QVariant() : QVariant(QBrush(QColor(0xF8, 0xD7, 0xDA)));
    case Qt::TextAlignmentRole: return int(Qt::AlignRight | Qt::AlignVCenter);
    default: return {};
  }
}

}  // namespace hdlab::gui
