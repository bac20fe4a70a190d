#pragma once
// The trade-off charts (cost vs size, decode throughput vs batch and vs context, KV
// memory vs context, each against the baseline) and the cost tables (every metric and
// the serving matrix), filled from one gui_core::Tradeoffs computed off the UI thread.
#include <optional>

#include <QWidget>

#include "hdlab/gui_core/tradeoffs.hpp"

class QGridLayout;
class QLabel;
class QScrollArea;
class QTableView;

namespace hdlab::gui {

class ChartPanel;
class MetricsModel;
class ServingModel;

// The charts are rebuilt when shown (or when panels() is asked for them): rebuilding all
// four takes tens of milliseconds, which an edit should not spend on a hidden tab.
class TradeoffView : public QWidget {
  Q_OBJECT
 public:
  explicit TradeoffView(QWidget* parent = nullptr);
  void setResults(const gui_core::Tradeoffs& t, const QString& design, const QString& baseline,
                  double device_memory_bytes);
  void clear(const QString& message);
  // The chart panels, their charts brought up to date with the last results first.
  QList<ChartPanel*> panels() const;

 protected:
  void resizeEvent(QResizeEvent* e) override;
  void showEvent(QShowEvent* e) override;

 private:
  struct Pending {
    gui_core::Tradeoffs t;
    QString design, baseline;
    double device_memory_bytes;
  };
  void reflow(int columns);
  void buildCharts() const;

  QGridLayout* grid_;
  QScrollArea* scroll_;
  int columns_ = 0;
  mutable std::optional<Pending> pending_;  // results the charts do not show yet
  ChartPanel* cost_;
  ChartPanel* batch_;
  ChartPanel* context_;
  ChartPanel* kv_;
  QLabel* note_;
};

class CostsView : public QWidget {
  Q_OBJECT
 public:
  explicit CostsView(QWidget* parent = nullptr);
  void setResults(const gui_core::Tradeoffs& t, const simulator::Scenario& s, const QString& headline);
  void clear(const QString& message);
  MetricsModel* metrics() const { return metrics_; }
  // The headline as shown (rich text), with the over-capacity warning when there is one.
  QString headline() const;
  ServingModel* serving() const { return serving_; }

 private:
  QLabel* headline_;
  MetricsModel* metrics_;
  ServingModel* serving_;
  QTableView* metrics_view_;
  QTableView* serving_view_;
};

}  // namespace hdlab::gui
