#pragma once
// The pipeline view: pipeline-parallel training of the design (simulator/pipeline_cost:
// per-layer costs from the cost model, GPipe / 1F1B / interleaved / ZB-H1 schedules),
// shown as a Gantt chart per device with the step's metrics and a per-device table. The
// run goes off the UI thread; its stage partition colours the layer strip. When the
// busiest device's memory (training state + peak activations) exceeds the device's, the
// Gantt title, a line under the summary and the device's memory cell say so in red, with
// the smallest change that fits (simulator/fit.hpp).
#include <optional>
#include <utility>
#include <vector>

#include <QAbstractTableModel>
#include <QTimer>
#include <QWidget>

#include "background_job.hpp"
#include "form_helpers.hpp"
#include "hdlab/simulator/fit.hpp"
#include "hdlab/simulator/pipeline.hpp"

class QComboBox;
class QLayout;
class QLabel;
class QSpinBox;
class QTableView;

namespace hdlab::gui {

class ChartPanel;
class Session;

// One row per pipeline device: busy time, stage time, peak activations, memory (training
// state + peak activations; red above the device's), in-flight micro-batches, warm-up
// forwards, tasks.
class PipelineDeviceModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Busy, StageTime, PeakActivation, Memory, InFlight, Warmup, Tasks, Layers, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;
  // `memory_bytes`: the device's memory (0: unknown, nothing marked).
  void setResult(const simulator::PipelineResult& r, double memory_bytes = 0);
  void clear();
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<simulator::PipelineDevice> devices_;
  std::vector<QString> layers_;  // layers held per device, e.g. "0-8, 27-35"
  double memory_bytes_ = 0;
};

// A pipeline run and whether its memory fits, computed together off the UI thread.
struct PipelineRun {
  simulator::PipelineResult result;
  simulator::PhaseFit fit;
};

// Stage (device) of every layer from a partition; layers follow model order.
std::vector<std::int64_t> layer_stages(const simulator::PipelinePartition& p, std::int64_t layers);

class PipelineView : public QWidget {
  Q_OBJECT
 public:
  explicit PipelineView(Session* session, QWidget* parent = nullptr);
  // The Gantt's panel, its chart brought up to date with the last run first (the chart
  // is built when the view is shown: tens of milliseconds an edit should not spend on a
  // hidden tab).
  ChartPanel* panel() const;
  // Pinned designs' runs (label, result): a Gantt each under the current one, every Gantt's
  // time axis running to the longest makespan of them all.
  void setPins(std::vector<std::pair<QString, simulator::PipelineResult>> pins);
  // Their Gantts, brought up to date first.
  QList<ChartPanel*> pinnedPanels() const;
  PipelineDeviceModel* devices() const { return devices_; }
  const std::optional<simulator::PipelineResult>& result() const { return result_; }
  const std::optional<simulator::PhaseFit>& fit() const { return fit_; }
  // The red over-capacity line under the summary; empty when the run fits.
  QString fitWarning() const;
  QString errorAt(const std::string& pointer) const { return errors_.textAt(pointer); }
  QString summary() const;
  void cancel();
  // Blocks until the scheduled or running simulation has delivered (tests).
  void waitForRun();

  // Sessions (session_files.hpp): the controls as the options object the CLI reads
  // (pipeline_io.hpp), and the controls set from one. checkOptions() throws a ConfigError
  // at its pointer for options these controls cannot show (an explicit partition, a
  // group, a value beyond a control's range); restoreOptions() expects checked options.
  nlohmann::json optionsJson() const;
  static void checkOptions(const nlohmann::json& options);
  void restoreOptions(const nlohmann::json& options);

 public slots:
  void run();

 signals:
  void progress(int done, int total);
  void idle();
  // The Gantt, the device table and the strip's stages show a new run (result()).
  void resultShown();
  // A control was changed by the user (not by restoreOptions).
  void settingsEdited();

 private:
  QLayout* buildControls();
  void connectSignals();
  void schedule();
  void onResult(const PipelineRun& run);
  // Records `e` as the reason the views show the last valid run (result_), if any.
  void markStale(const model::ConfigError& e);
  void buildGantt() const;

 protected:
  void showEvent(QShowEvent* e) override;

 private:

  Session* session_;
  QLabel* general_error_;
  FieldErrors errors_;
  QSpinBox* pp_;
  QSpinBox* microbatches_;
  QComboBox* schedule_;
  QSpinBox* virtual_stages_;
  QComboBox* partition_;
  QComboBox* p2p_;
  QLabel* summary_;
  QLabel* fit_warning_;
  ChartPanel* panel_;
  PipelineDeviceModel* devices_;
  QTableView* device_view_;
  QWidget* pinned_box_;   // holds the pinned Gantts
  QWidget* pinned_area_;  // scrolls pinned_box_; hidden while nothing is pinned
  mutable QList<ChartPanel*> pinned_panels_;
  std::vector<std::pair<QString, simulator::PipelineResult>> pins_;
  QTimer debounce_;
  QElapsedTimer last_start_;  // of the last run (edit_delay_ms)
  BackgroundJob<PipelineRun> job_;
  std::optional<simulator::PipelineResult> result_;
  std::optional<simulator::PhaseFit> fit_;
  mutable bool gantt_pending_ = false;  // result_ and fit_ are newer than the Gantt
};

}  // namespace hdlab::gui
