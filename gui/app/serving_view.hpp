#pragma once
// The serving tab: a workload and engine editor over the serving simulator
// (simulator/serving.hpp, what `hdlab serve` runs) on the session's model, hardware and
// scenario. A run goes off the UI thread and gives the latency CDFs (TTFT, TPOT, E2E),
// throughput and p90 TTFT against offered load (the workload's requests as a Poisson
// stream at 0.25x to 2x the engine's saturation rate), the KV cache over the run, and
// tables of the run's latencies and throughput with their units. The form's JSON goes
// through the core's parser, so a bad field is shown at the field its pointer names.
#include <optional>

#include <QTimer>
#include <QWidget>

#include "background_job.hpp"
#include "form_helpers.hpp"
#include "hdlab/gui_core/serving_run.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGridLayout;
class QLabel;
class QLayout;
class QPushButton;
class QSpinBox;
class QStandardItemModel;
class QTableView;

namespace hdlab::gui {

class ChartPanel;
class Session;

class ServingView : public QWidget {
  Q_OBJECT
 public:
  // Rows of the latency table (columns: mean, p50, p90, p99, max in ms; UserRole: seconds).
  enum LatencyRow { Ttft, Tpot, Itl, Queue, E2e, LatencyRowCount };

  explicit ServingView(Session* session, QWidget* parent = nullptr);

  // {"workload": {...}, "engine": {...}} as the form holds it (parse_serve_spec's input).
  nlohmann::json formJson() const;
  const std::optional<gui_core::ServingRun>& result() const { return result_; }
  ChartPanel* cdfPanel() const { return cdf_panel_; }
  ChartPanel* throughputPanel() const { return throughput_panel_; }
  ChartPanel* ttftPanel() const { return ttft_panel_; }
  ChartPanel* kvPanel() const { return kv_panel_; }
  QList<ChartPanel*> panels() const;
  // Latencies (rows LatencyRow) and throughput / engine figures (name, value with unit;
  // UserRole of the value column: the number in the unit the name gives).
  QStandardItemModel* latencyTable() const { return latency_; }
  QStandardItemModel* throughputTable() const { return throughput_; }
  QString errorAt(const std::string& pointer) const { return errors_.textAt(pointer); }
  QString summary() const;
  void cancel();
  // Blocks until the scheduled or running simulation has delivered (tests).
  void waitForRun();

 // A run is scheduled, waiting for the tab to be shown, or running.
  bool busy() const { return pending_ || debounce_.isActive() || job_.running(); }

 public slots:
  void run();

 signals:
  void progress(int done, int total);
  void idle();

 private:
  QLayout* buildForm();
  QWidget* buildResults();
  // The four charts and two tables in a grid of `columns` (1 or 2) columns.
  void placeResults(int columns);
  void resizeEvent(QResizeEvent* e) override;
  void showEvent(QShowEvent* e) override;
  void connectSignals();
  void schedule();
  void arrivalsChanged();
  void onResult(const gui_core::ServingRun& run);
  void showError(const model::ConfigError& e);

  Session* session_;
  QLabel* general_error_;
  FieldErrors errors_;
  QComboBox* arrivals_;
  QSpinBox* requests_;
  QDoubleSpinBox* rate_;
  QSpinBox* users_;
  QDoubleSpinBox* think_;
  QSpinBox* input_;
  QSpinBox* output_;
  QSpinBox* seed_;
  QComboBox* batching_;
  QSpinBox* max_running_;
  QSpinBox* max_batched_;
  QCheckBox* chunked_;
  QPushButton* run_button_;
  QLabel* summary_;
  ChartPanel* cdf_panel_;
  ChartPanel* throughput_panel_;
  ChartPanel* ttft_panel_;
  ChartPanel* kv_panel_;
  QStandardItemModel* latency_;
  QStandardItemModel* throughput_;
  QTableView* latency_view_;
  QTableView* throughput_view_;
  QGridLayout* grid_;
  int columns_ = 0;
  QTimer debounce_;
  // An input changed while the tab was hidden: the simulation (seconds of CPU) waits for
  // the tab to be shown instead of competing with the visible views' evaluation.
  bool pending_ = false;
  BackgroundJob<gui_core::ServingRun> job_;
  std::optional<gui_core::ServingRun> result_;
};

}  // namespace hdlab::gui
