#pragma once
// The trade-off charts (cost vs size, decode throughput vs batch and vs context, KV
// memory vs context, each against the baseline) and the cost tables (every metric and
// the serving matrix), filled from one gui_core::Tradeoffs computed off the UI thread.
#include <optional>
#include <utility>
#include <vector>

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

class TradeoffView : public QWidget {
  Q_OBJECT
 public:
  explicit TradeoffView(QWidget* parent = nullptr);
  void setResults(const gui_core::Tradeoffs& t, const QString& design, const QString& baseline,
                  double device_memory_bytes);
  void clear(const QString& message);
  QList<ChartPanel*> panels() const;
  // Pinned designs (legend key, result) drawn over every chart (charts/compare_charts.hpp);
  // `legend` says which design each key is.
  void setPins(std::vector<std::pair<QString, gui_core::Tradeoffs>> pins, const QString& legend = {});

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  void reflow(int columns);
  void render();

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
