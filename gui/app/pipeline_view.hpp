#pragma once
// The pipeline view: pipeline-parallel training of the design (simulator/pipeline_cost:
// per-layer costs from the cost model, GPipe / 1F1B / interleaved / ZB-H1 schedules),
// shown as a Gantt chart per device with the step's metrics and a per-device table. The
// run goes off the UI thread; its stage partition colours the layer strip.
#include <optional>

#include <QAbstractTableModel>
#include <QTimer>
#include <QWidget>

#include "background_job.hpp"
#include "form_helpers.hpp"
#include "hdlab/simulator/pipeline.hpp"

class QComboBox;
class QHBoxLayout;
class QLabel;
class QSpinBox;
class QTableView;

namespace hdlab::gui {

class ChartPanel;
class Session;

// One row per pipeline device: busy time, stage time, peak activations, in-flight
// micro-batches, warm-up forwards, tasks.
class PipelineDeviceModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Busy, StageTime, PeakActivation, InFlight, Warmup, Tasks, Layers, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;
  void setResult(const simulator::PipelineResult& r);
  void clear();
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<simulator::PipelineDevice> devices_;
  std::vector<QString> layers_;  // layers held per device, e.g. "0-8, 27-35"
};

// Stage (device) of every layer from a partition; layers follow model order.
std::vector<std::int64_t> layer_stages(const simulator::PipelinePartition& p, std::int64_t layers);

class PipelineView : public QWidget {
  Q_OBJECT
 public:
  explicit PipelineView(Session* session, QWidget* parent = nullptr);
  ChartPanel* panel() const { return panel_; }
  PipelineDeviceModel* devices() const { return devices_; }
  const std::optional<simulator::PipelineResult>& result() const { return result_; }
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
  // A control was changed by the user (not by restoreOptions).
  void settingsEdited();

 private:
  QHBoxLayout* buildControls();
  void connectSignals();
  void schedule();
  void onResult(const simulator::PipelineResult& r);
  // Records `e` as the reason the views show the last valid run (result_), if any.
  void markStale(const model::ConfigError& e);

  Session* session_;
  QLabel* general_error_;
  FieldErrors errors_;
  QSpinBox* pp_;
  QSpinBox* microbatches_;
  QComboBox* schedule_;
  QSpinBox* virtual_stages_;
  QComboBox* partition_;
  QLabel* summary_;
  ChartPanel* panel_;
  PipelineDeviceModel* devices_;
  QTableView* device_view_;
  QTimer debounce_;
  BackgroundJob<simulator::PipelineResult> job_;
  std::optional<simulator::PipelineResult> result_;
};

}  // namespace hdlab::gui
