#pragma once
// The trade-off charts (cost vs size, decode throughput vs batch and vs context, KV
// memory vs context, each against the baseline) and the cost tables (every metric and
// the serving matrix), filled from one gui_core::Tradeoffs computed off the UI thread.
#include <optional>
#include <utility>
#include <vector>

#include <QWidget>

#include "hdlab/charts/tradeoff_charts.hpp"
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
  // Pinned designs (legend key, result) drawn over every chart (charts/compare_charts.hpp);
  // `legend` says which design each key is.
  void setPins(std::vector<std::pair<QString, gui_core::Tradeoffs>> pins, const QString& legend = {});

 protected:
  void resizeEvent(QResizeEvent* e) override;
  void showEvent(QShowEvent* e) override;

 private:
  void reflow(int columns);
  // Chart specs and the note from the current results and the pins (cheap); the Qt charts
  // are built from the specs when the view is shown (buildCharts).
  void render();
  void buildCharts() const;

  QGridLayout* grid_;
  QScrollArea* scroll_;
  int columns_ = 0;
  ChartPanel* cost_;
  ChartPanel* batch_;
  ChartPanel* context_;
  ChartPanel* kv_;
  QLabel* note_;
  struct Shown {
    gui_core::Tradeoffs t;
    QString design, baseline;
    double device_memory_bytes = 0;
  };
  std::optional<Shown> shown_;  // the current design's results, redrawn when pins change
  mutable std::optional<charts::TradeoffCharts> pending_;  // specs the charts do not show yet
  bool has_size_axis_ = false;  // the cost-vs-size chart has a curve (the baseline has no size)
  std::vector<std::pair<QString, gui_core::Tradeoffs>> pins_;
  QString pin_legend_;
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
