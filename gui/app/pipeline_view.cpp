#include "pipeline_view.hpp"

#include <QBrush>
#include <QColor>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSpinBox>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "chart_panel.hpp"
#include "flow_layout.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/compare_charts.hpp"
#include "hdlab/charts/pipeline_chart.hpp"
#include "hdlab/gui_core/compare.hpp"
#include "hdlab/gui_core/units.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"
#include "hdlab/simulator/pipeline_io.hpp"
#include "session.hpp"

namespace hdlab::gui {
namespace {

QString text(const std::string& s) { return QString::fromStdString(s); }

// "0-8, 27-35": the layers a device holds, as ranges.
QString layer_ranges(const simulator::PipelinePartition& p, std::int64_t device) {
  QStringList parts;
  for (const auto& c : p.chunks)
    if (c.device == device && c.layer_count > 0)
      parts << (c.layer_count == 1 ? QString::number(c.first_layer)
                                   : QString("%1-%2").arg(c.first_layer).arg(c.first_layer + c.layer_count - 1));
  return parts.join(", ");
}

}  // namespace

std::vector<std::int64_t> layer_stages(const simulator::PipelinePartition& p, std::int64_t layers) {
  std::vector<std::int64_t> stages(static_cast<std::size_t>(layers), -1);
  for (const auto& c : p.chunks)
    for (std::int64_t l = c.first_layer; l < c.first_layer + c.layer_count && l < layers; ++l)
      stages[static_cast<std::size_t>(l)] = c.device;
  return stages;
}

void PipelineDeviceModel::setResult(const simulator::PipelineResult& r, double memory_bytes) {
  beginResetModel();
  devices_ = r.devices;
  memory_bytes_ = memory_bytes;
  layers_.clear();
  for (std::size_t d = 0; d < devices_.size(); ++d)
    layers_.push_back(layer_ranges(r.partition, static_cast<std::int64_t>(d)));
  endResetModel();
}

void PipelineDeviceModel::clear() {
  beginResetModel();
  devices_.clear();
  layers_.clear();
  endResetModel();
}

int PipelineDeviceModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(devices_.size());
}
int PipelineDeviceModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant PipelineDeviceModel::headerData(int section, Qt::Orientation o, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (o == Qt::Vertical) return tr("device %1").arg(section);
  static const char* names[] = {"busy",      "fwd + bwd of one micro-batch", "peak activations",
                                "memory",    "in flight",                    "warm-up forwards",
                                "tasks",     "layers"};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

QVariant PipelineDeviceModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const simulator::PipelineDevice& d = devices_[static_cast<std::size_t>(index.row())];
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case Busy: return d.busy_s;
      case StageTime: return d.stage_time_s;
      case PeakActivation: return d.peak_activation_bytes;
      case Memory: return d.memory_bytes();
      case InFlight: return static_cast<qlonglong>(d.peak_inflight_microbatches);
      case Warmup: return static_cast<qlonglong>(d.warmup_forwards);
      case Tasks: return static_cast<qlonglong>(d.tasks);
      default: return {};
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() != Layers) return int(Qt::AlignRight | Qt::AlignVCenter);
  const bool over = memory_bytes_ > 0 && d.memory_bytes() > memory_bytes_;
  if (role == Qt::ForegroundRole && over && (index.column() == Memory || index.column() == PeakActivation))
    return QBrush(QColor(0xB0, 0x00, 0x20));
  if (role == Qt::ToolTipRole && index.column() == Memory)
    return tr("weights %1 + gradients %2 + optimizer state %3 + peak activations %4%5")
        .arg(text(gui_core::format_bytes(d.weight_bytes)), text(gui_core::format_bytes(d.grad_bytes)),
             text(gui_core::format_bytes(d.optimizer_bytes)), text(gui_core::format_bytes(d.peak_activation_bytes)),
             memory_bytes_ > 0 ? tr("; the device has %1").arg(text(gui_core::format_bytes(memory_bytes_))) : QString());
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Busy: return text(gui_core::format_seconds(d.busy_s));
    case StageTime: return text(gui_core::format_seconds(d.stage_time_s));
    case PeakActivation: return text(gui_core::format_bytes(d.peak_activation_bytes));
    case Memory:
      return over ? tr("%1 > %2").arg(text(gui_core::format_bytes(d.memory_bytes())), text(gui_core::format_bytes(memory_bytes_)))
                  : text(gui_core::format_bytes(d.memory_bytes()));
    case InFlight: return tr("%1 micro-batches").arg(d.peak_inflight_microbatches);
    case Warmup: return static_cast<qlonglong>(d.warmup_forwards);
    case Tasks: return static_cast<qlonglong>(d.tasks);
    case Layers: return layers_[static_cast<std::size_t>(index.row())];
    default: return {};
  }
}

PipelineView::PipelineView(Session* session, QWidget* parent)
    : QWidget(parent), session_(session), general_error_(new QLabel()), errors_(general_error_), job_(this) {
  general_error_->setStyleSheet("color: #B00020;");
  general_error_->setWordWrap(true);
  general_error_->hide();
  auto* v = new QVBoxLayout(this);
  v->addLayout(buildControls());
  v->addWidget(general_error_);
  summary_ = new QLabel(tr("Training step under pipeline parallelism; per-layer costs from the cost model at the "
                           "scenario's training micro-batch."));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setMinimumHeight(2 * summary_->fontMetrics().lineSpacing() + 4);  // room for the wrapped line
  v->addWidget(summary_);
  fit_warning_ = new QLabel();
  fit_warning_->setObjectName("fit-warning");
  fit_warning_->setStyleSheet("color: #B00020;");
  fit_warning_->setWordWrap(true);
  fit_warning_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  fit_warning_->hide();
  v->addWidget(fit_warning_);
  auto* split = new QSplitter(Qt::Vertical);
  panel_ = new ChartPanel("pipeline-gantt");
  // The Gantt has no vertical axis title to fit: a shorter chart leaves room for the
  // device table in a 700-pixel-high window.
  panel_->view()->setMinimumHeight(240);
  devices_ = new PipelineDeviceModel(this);
  device_view_ = new QTableView();
  device_view_->setModel(devices_);
  device_view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  device_view_->horizontalHeader()->setStretchLastSection(true);
  // Pinned designs' Gantts (compare mode) under the current one, scrolling when many; with
  // none pinned the current Gantt has the room to itself, as before.
  pinned_box_ = new QWidget();
  new QVBoxLayout(pinned_box_);
  pinned_box_->layout()->setContentsMargins(0, 0, 0, 0);
  auto* pinned = new QScrollArea();
  pinned->setWidget(pinned_box_);
  pinned->setWidgetResizable(true);
  pinned->setFrameShape(QFrame::NoFrame);
  pinned->hide();  // until something is pinned
  pinned_area_ = pinned;
  auto* gantts = new QWidget();
  auto* gv = new QVBoxLayout(gantts);
  gv->setContentsMargins(0, 0, 0, 0);
  gv->addWidget(panel_, 1);
  gv->addWidget(pinned, 1);
  split->addWidget(gantts);
  split->addWidget(device_view_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  v->addWidget(split, 1);
  connectSignals();
}

QLayout* PipelineView::buildControls() {
  // Label and field stay together; the pairs wrap onto a second line in a narrow window.
  auto* controls = new FlowLayout();
  pp_ = int_spin(1, 1024, 4, tr("Pipeline stages p: devices the layers are cut over"), tr(" stages"));
  microbatches_ = int_spin(1, 1 << 16, 16, tr("Micro-batches per optimizer step (each one the scenario's training "
                                              "micro-batch)"));
  schedule_ = choice_box({{tr("1F1B"), "1f1b"},
                          {tr("GPipe"), "gpipe"},
                          {tr("interleaved 1F1B"), "interleaved"},
                          {tr("zero bubble (ZB-H1)"), "zb-h1"}},
                         tr("Order of forwards and backwards on each device"));
  virtual_stages_ = int_spin(2, 64, 2, tr("Model chunks per device (interleaved only)"), tr(" chunks"));
  virtual_stages_->setEnabled(false);
  partition_ = choice_box({{tr("balanced"), "balanced"}, {tr("uniform"), "uniform"}},
                          tr("balanced: minimise the slowest stage by cost; uniform: equal layer counts"));
  p2p_ = choice_box({{tr("async"), "async"}, {tr("blocking"), "blocking"}},
                    tr("async: a stage's sends travel while it computes; blocking: each send holds the stage until "
                       "it arrives (Megatron-LM 2021-2022)"));
  add_labelled_fields(controls, errors_,
                      {{tr("stages"), pp_, "/pipeline/pp"},
                       {tr("micro-batches"), microbatches_, "/pipeline/microbatches"},
                       {tr("schedule"), schedule_, "/pipeline/schedule"},
                       {tr("chunks"), virtual_stages_, "/pipeline/virtual_stages"},
                       {tr("partition"), partition_, "/pipeline/partition"},
                       {tr("sends"), p2p_, "/pipeline/p2p"}});
  return controls;
}

void PipelineView::connectSignals() {
  debounce_.setSingleShot(true);
  connect(&debounce_, &QTimer::timeout, this, &PipelineView::run);
  for (QSpinBox* s : {pp_, microbatches_, virtual_stages_}) {
    connect(s, &QSpinBox::valueChanged, this, &PipelineView::schedule);
    connect(s, &QSpinBox::valueChanged, this, &PipelineView::settingsEdited);
  }
  for (QComboBox* c : {schedule_, partition_, p2p_}) {
    connect(c, &QComboBox::currentIndexChanged, this, &PipelineView::schedule);
    connect(c, &QComboBox::currentIndexChanged, this, &PipelineView::settingsEdited);
  }
  connect(schedule_, &QComboBox::currentIndexChanged, this,
          [this] { virtual_stages_->setEnabled(choice_value(schedule_) == "interleaved"); });
  connect(session_, &Session::configChanged, this, &PipelineView::schedule);
  connect(session_, &Session::hardwareChanged, this, &PipelineView::schedule);
  connect(session_, &Session::scenarioChanged, this, &PipelineView::schedule);
  job_.on_result = [this](const PipelineRun& r) { onResult(r); };
  // The Gantt, the table and the summary keep the last valid run, under a banner that
  // says so; the strip's stage bands go (the strip has no banner for the pipeline).
  job_.on_error = [this](const model::ConfigError& e) {
    errors_.show(e);
    markStale(e);
    session_->setLayerStages({});
  };
  job_.on_idle = [this] { emit idle(); };
}

void PipelineView::schedule() {
  if (!session_->ready() || debounce_.isActive()) return;  // the scheduled run reads the inputs then
  debounce_.start(edit_delay_ms(last_start_));
}

void PipelineView::run() {
  debounce_.stop();
  if (!session_->ready()) return;
  last_start_.start();
  errors_.clear();
  const nlohmann::json o = optionsJson();
  simulator::PipelineOptions options;
  try {
    options = simulator::parse_pipeline_options(o);
  } catch (const model::ConfigError& e) {
    errors_.show(e);
    markStale(e);
    return;
  }
  const model::Config config = session_->config();
  const simulator::HardwareProfile hw = session_->hardware();
  const simulator::Scenario scenario = session_->scenario();
  // The engine has no progress callback: the bar shows "busy" and Cancel drops the result.
  job_.start([config, hw, scenario, options](const gui_core::ProgressFn&) {
    PipelineRun run{simulator::simulate_pipeline(config, hw, scenario, options), {}};
    run.fit = simulator::pipeline_fit(config, hw, scenario, options, run.result);
    return run;
  });
  emit progress(0, 0);
}

void PipelineView::markStale(const model::ConfigError& e) {
  QString shown;
  if (result_)
    shown = tr("pipeline (%1 stages, %2, %3 micro-batches)")
                .arg(result_->options.stages)
                .arg(simulator::to_string(result_->options.schedule))
                .arg(result_->options.microbatches);
  session_->setInputError(Session::Input::pipeline, QString::fromStdString(e.what()), shown);
}

void PipelineView::onResult(const PipelineRun& run) {
  const simulator::PipelineResult& r = run.result;
  session_->setInputError(Session::Input::pipeline, {});
  result_ = r;
  fit_ = run.fit;
  gantt_pending_ = true;
  if (isVisible()) buildGantt();
  devices_->setResult(r, run.fit.memory_bytes);
  session_->setLayerStages(layer_stages(r.partition, session_->config().effective.num_layers));
  summary_->setText(summary());
  fit_warning_->setText(run.fit.fits() ? QString() : text(simulator::describe(run.fit)));
  fit_warning_->setVisible(!run.fit.fits());
  emit resultShown();
}

ChartPanel* PipelineView::panel() const {
  buildGantt();
  return panel_;
}

QList<ChartPanel*> PipelineView::pinnedPanels() const {
  buildGantt();
  return pinned_panels_;
}

void PipelineView::setPins(std::vector<std::pair<QString, simulator::PipelineResult>> pins) {
  pins_ = std::move(pins);
  gantt_pending_ = true;
  if (isVisible()) buildGantt();
}

void PipelineView::showEvent(QShowEvent* e) {
  buildGantt();
  QWidget::showEvent(e);
}

// The current Gantt and the pinned ones, on one time axis: alone, a Gantt runs to its own
// makespan; beside pins, all run to the longest.
void PipelineView::buildGantt() const {
  if (!gantt_pending_) return;
  gantt_pending_ = false;
  std::vector<const simulator::PipelineResult*> runs;
  if (result_) runs.push_back(&*result_);
  for (const auto& p : pins_) runs.push_back(&p.second);
  const double end = pins_.empty() ? 0 : gui_core::shared_time_end(runs);
  if (result_ && fit_) {
    charts::GanttChart spec = charts::pipeline_gantt_chart(*result_, *fit_);
    spec.time_end_s = end;
    panel_->setChart(charts::build_gantt_chart(spec));
  }
  qDeleteAll(pinned_panels_);
  pinned_panels_.clear();
  for (std::size_t i = 0; i < pins_.size(); ++i) {
    auto* p = new ChartPanel(QString("pipeline-gantt-pin-%1").arg(i + 1));
    p->view()->setMinimumHeight(200);
    p->setChart(charts::build_gantt_chart(charts::pinned_gantt_chart(pins_[i].second, pins_[i].first.toStdString(), end)));
    pinned_box_->layout()->addWidget(p);
    pinned_panels_ << p;
  }
  pinned_area_->setVisible(!pins_.empty());
}

QString PipelineView::fitWarning() const { return fit_warning_->text(); }

QString PipelineView::summary() const {
  if (!result_) return {};
  const simulator::PipelineMetrics& m = result_->metrics;
  QString s = tr("Step %1 (ideal %2 with the work spread evenly); bubble %3 %; slowest stage %4x the mean; "
                 "peak activations %5 on device %6; %7 sends per micro-batch taking %8 along its path")
                  .arg(text(gui_core::format_seconds(m.makespan_s)), text(gui_core::format_seconds(m.ideal_makespan_s)))
                  .arg(m.bubble_fraction * 100, 0, 'f', 1)
                  .arg(m.imbalance, 0, 'f', 2)
                  .arg(text(gui_core::format_bytes(m.peak_activation_bytes)))
                  .arg(m.peak_activation_device)
                  .arg(m.transfers_per_microbatch)
                  .arg(text(gui_core::format_seconds(m.transfer_s_per_microbatch)));
  if (m.tokens_per_s > 0) s += tr("; %1").arg(text(gui_core::format_si(m.tokens_per_s, "tokens/s")));
  if (m.limit_overrides > 0)
    s += tr("; %1 forwards ran beyond their device's warm-up limit (every device was waiting)").arg(m.limit_overrides);
  return s + ".";
}

void PipelineView::cancel() { job_.cancel(); }

void PipelineView::waitForRun() {
  if (debounce_.isActive()) run();
  job_.wait();
  QCoreApplication::processEvents();
}

nlohmann::json PipelineView::optionsJson() const {
  nlohmann::json o = {{"pp", pp_->value()},
                      {"microbatches", microbatches_->value()},
                      {"schedule", choice_value(schedule_).toStdString()},
                      {"partition", choice_value(partition_).toStdString()},
                      {"p2p", choice_value(p2p_).toStdString()}};
  if (choice_value(schedule_) == "interleaved") o["virtual_stages"] = virtual_stages_->value();
  return o;
}

void PipelineView::checkOptions(const nlohmann::json& options) {
  const simulator::PipelineOptions o = simulator::parse_pipeline_options(options, "/pipeline");
  // The controls' ranges (buildControls).
  const std::tuple<const char*, std::int64_t, std::int64_t, std::int64_t> ranges[] = {
      {"/pipeline/pp", o.stages, 1, 1024},
      {"/pipeline/microbatches", o.microbatches, 1, 1 << 16},
      {"/pipeline/virtual_stages", o.schedule == simulator::ScheduleKind::interleaved ? o.virtual_stages : 2, 2, 64}};
  for (const auto& [pointer, value, lo, hi] : ranges)
    if (value < lo || value > hi)
      model::fail(pointer, "is " + std::to_string(value) + "; the pipeline view shows " + std::to_string(lo) + " to " +
                               std::to_string(hi) + " (the CLI takes it)");
  if (o.group != 0)
    model::fail("/pipeline/group", "the pipeline view runs the schedule's own grouping (0); the CLI takes others");
  if (o.partition == simulator::PartitionPolicy::explicit_counts)
    model::fail("/pipeline/partition", "the pipeline view offers balanced or uniform; the CLI takes a list");
}

void PipelineView::restoreOptions(const nlohmann::json& options) {
  const simulator::PipelineOptions o = simulator::parse_pipeline_options(options, "/pipeline");
  {
    const QSignalBlocker b1(pp_), b2(microbatches_), b3(schedule_), b4(virtual_stages_), b5(partition_), b6(p2p_);
    pp_->setValue(static_cast<int>(o.stages));
    microbatches_->setValue(static_cast<int>(o.microbatches));
    set_choice(schedule_, QString::fromUtf8(simulator::to_string(o.schedule)));
    if (o.schedule == simulator::ScheduleKind::interleaved)
      virtual_stages_->setValue(static_cast<int>(o.virtual_stages));
    set_choice(partition_, QString::fromStdString(simulator::to_string(o.partition)));
    set_choice(p2p_, QString::fromUtf8(simulator::to_string(o.p2p)));
  }
  virtual_stages_->setEnabled(choice_value(schedule_) == "interleaved");
  schedule();
}

}  // namespace hdlab::gui
