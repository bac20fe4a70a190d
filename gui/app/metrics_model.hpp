#pragma once
// Item models over simulator results: every scalar metric of the design next to its
// baseline (formatted with its unit; the raw value under Qt::UserRole), and the serving
// matrix (decode throughput per batch x input length against the baseline).
#include <optional>

#include <QAbstractTableModel>

#include "hdlab/gui_core/tradeoffs.hpp"

namespace hdlab::gui {

class MetricsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Name, Design, Baseline, Ratio, Unit, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void setResults(const simulator::Metrics& design, const simulator::Metrics& baseline);
  void clear();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;
  // The row of a metric (rows follow simulator::Metric order).
  static int rowOf(simulator::Metric m) { return static_cast<int>(m); }

 private:
  std::optional<simulator::Metrics> design_, baseline_;
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
