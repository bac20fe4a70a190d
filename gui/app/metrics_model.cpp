#include "metrics_model.hpp"

#include <cmath>

#include <QBrush>
#include <QColor>

#include "hdlab/gui_core/memory_fit.hpp"
#include "hdlab/gui_core/units.hpp"

namespace hdlab::gui {
namespace {
QString text(const std::string& s) { return QString::fromStdString(s); }
const QColor kOverCapacity(0xB0, 0x00, 0x20);
}  // namespace

void MetricsModel::setResults(const simulator::Metrics& design, const simulator::Metrics& baseline,
                              const simulator::MemoryFit& design_fit, const simulator::MemoryFit& baseline_fit) {
  beginResetModel();
  design_ = design;
  baseline_ = baseline;
  design_fit_ = design_fit;
  baseline_fit_ = baseline_fit;
  endResetModel();
}

const simulator::PhaseFit* MetricsModel::overCapacity(simulator::Metric m, bool baseline) const {
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
  return parent.isValid() || !design_ ? 0 : simulator::metric_count;
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

QVariant MetricsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !design_ || index.row() >= simulator::metric_count) return {};
  const auto m = static_cast<simulator::Metric>(index.row());
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
  if (role == Qt::ForegroundRole && simulator::metric_name(m) == std::string("train_fits") && d == 0)
    return QBrush(kOverCapacity);
  // The design's cells (name, value, ratio) follow the design's fit, the baseline's its own.
  const simulator::PhaseFit* over = overCapacity(m, index.column() == Baseline);
  if (role == Qt::ForegroundRole && over && index.column() != Unit) return QBrush(kOverCapacity);
  if (role == Qt::ToolTipRole && over && index.column() != Unit)
    return text((index.column() == Baseline ? "Baseline: " : "") + simulator::describe(*over));
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Name: return QString(simulator::metric_name(m));
    case Design: return text(gui_core::format_metric(m, d));
    case Baseline: return text(gui_core::format_metric(m, b));
    case Ratio: return std::isfinite(ratio) ? text(gui_core::format_ratio(ratio)) : QString("-");
    case Unit: return QString(simulator::metric_unit(m));
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
