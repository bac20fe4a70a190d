#pragma once
// Item models over simulator results: every scalar metric of the design next to its
// baseline (formatted with its unit; the raw value under Qt::UserRole), and the serving
// matrix (decode throughput per batch x input length against the baseline). A metric of a
// phase whose memory does not fit the device (simulator/fit.hpp) is red, its tooltip
// saying by how much and what would fit.
//
// The metrics table is grouped (gui_core/metric_info.hpp): a header row per group (Size,
// Training, Prefill, ...; GroupRole true, bold, spanning the row in the view) followed by
// its metrics under their labels, each with its unit and a tooltip saying what it
// measures. The rows are the same for every result; rowOf / metricAt map between them.
#include <optional>

#include <QAbstractTableModel>

#include "hdlab/gui_core/tradeoffs.hpp"

class QTableView;

namespace hdlab::gui {

class MetricsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Name, Design, Baseline, Ratio, Unit, ColumnCount };
  // True on a group's header row (Name column), absent on a metric's.
  static constexpr int GroupRole = Qt::UserRole + 1;
  using QAbstractTableModel::QAbstractTableModel;

  // The fits default to "everything fits" (no marks).
  void setResults(const simulator::Metrics& design, const simulator::Metrics& baseline,
                  const simulator::MemoryFit& design_fit = {}, const simulator::MemoryFit& baseline_fit = {});
  void clear();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  // Rows while results are shown: one per metric and one per group.
  static int shownRowCount();
  // The row of a metric, and the metric of a row (none on a group's header row).
  static int rowOf(simulator::Metric m);
  static std::optional<simulator::Metric> metricAt(int row);
  // Spans each group's header row over every column of `view` (call after a reset).
  static void spanGroupRows(QTableView* view);

 private:
  // The fit of the metric's phase (gui_core::metric_phase) when it does not fit.
  const simulator::PhaseFit* overCapacity(simulator::Metric m, bool baseline) const;
  QVariant groupData(int row, int column, int role) const;
  QVariant metricTooltip(simulator::Metric m, int column) const;

  std::optional<simulator::Metrics> design_, baseline_;
  simulator::MemoryFit design_fit_, baseline_fit_;
};

class ServingModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;
  // Rows: the scenario's batches; columns: its input lengths.
  void setResults(const simulator::Metrics& design, const simulator::Scenario& scenario);
  void clear();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<simulator::ServingPoint> cells_;
  std::vector<std::int64_t> batches_, inputs_;
};

}  // namespace hdlab::gui
