#include "main_window.hpp"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QProgressBar>
#include <QScrollArea>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include "chart_panel.hpp"
#include "compare_view.hpp"
#include "design_editor.hpp"
#include "first_run_hint.hpp"
#include "hdlab/charts/export.hpp"
#include "hdlab/gui_core/units.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/files.hpp"
#include "hdlab/model/params.hpp"
#include "layer_panel.hpp"
#include "layer_strip_widget.hpp"
#include "layer_table_model.hpp"
#include "mask_view.hpp"
#include "pipeline_view.hpp"
#include "scenario_editor.hpp"
#include "serving_view.hpp"
#include "session.hpp"
#include "session_files.hpp"
#include "stale_banner.hpp"
#include "tradeoff_view.hpp"
#include "validation_view.hpp"

namespace hdlab::gui {
namespace {

QScrollArea* scrolled(QWidget* w) {
  auto* area = new QScrollArea();
  area->setWidget(w);
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  return area;
}

QString count(std::int64_t v) { return QString::fromStdString(gui_core::format_count(v)); }

}  // namespace

MainWindow::MainWindow(gui_core::Catalog catalog, QWidget* parent)
    : QMainWindow(parent), session_(new Session(std::move(catalog), this)), job_(this) {
  setWindowTitle(tr("hdlab"));
  buildCentral();
  buildDock();
  session_files_ = new SessionFiles(this);
  connect(session_files_, &SessionFiles::message, this, &MainWindow::showMessage);
  buildMenus();
  buildStatusBar();
  debounce_.setSingleShot(true);
  connect(&debounce_, &QTimer::timeout, this, &MainWindow::evaluateNow);
  connect(session_, &Session::configChanged, this, &MainWindow::scheduleEvaluation);
  connect(session_, &Session::hardwareChanged, this, &MainWindow::scheduleEvaluation);
  connect(session_, &Session::scenarioChanged, this, &MainWindow::scheduleEvaluation);
  connect(session_, &Session::configChanged, this, &MainWindow::updateCounts);
  connect(session_, &Session::hardwareChanged, this, &MainWindow::updateCounts);
  connect(session_, &Session::inputErrorsChanged, this, &MainWindow::updateCounts);
  connect(mask_view_, &MaskView::countsChanged, this, &MainWindow::updateCounts);
  // A chart's Export says what it wrote, or why it could not, in the status bar.
  for (ChartPanel* p : chartPanels())
    connect(p, &ChartPanel::statusMessage, this, [this](const QString& text) { showMessage(text); });
  job_.on_progress = [this](int done, int total) { showProgress(done, total); };
  job_.on_result = [this](const gui_core::Tradeoffs& t) { onResults(t); };
  job_.on_error = [this](const model::ConfigError& e) {
    scenario_editor_->showError(e);
    const QString msg = tr("Cannot evaluate: %1").arg(QString::fromStdString(e.what()));
    costs_view_->clear(msg);
    tradeoff_view_->clear(msg);
    layer_panel_->clearCosts();
    showMessage(msg);
  };
  job_.on_idle = [this] {
    progress_->hide();
    cancel_->hide();
  };
  resize(1500, 950);
}

MainWindow::~MainWindow() { job_.cancel(); }

void MainWindow::buildCentral() {
  auto* central = new QWidget();
  auto* v = new QVBoxLayout(central);
  v->addWidget(new FirstRunHint());  // until dismissed once
  // The strip and every tab show the last valid design while the typed one is not valid.
  v->addWidget(new StaleBanner(session_, {Session::Input::design}));
  strip_ = new LayerStripWidget(session_);
  v->addWidget(strip_);
  tabs_ = new QTabWidget();
  costs_view_ = new CostsView();
  mask_view_ = new MaskView(session_);
  layer_model_ = new LayerTableModel(session_, this);
  layer_panel_ = new LayerPanel(session_, layer_model_, strip_);
  layer_view_ = layer_panel_->view();
  tradeoff_view_ = new TradeoffView();
  pipeline_view_ = new PipelineView(session_);
  validation_view_ = new ValidationView();
  serving_view_ = new ServingView(session_);
  comparison_ = new Comparison(this);
  compare_view_ = new CompareView(comparison_);
  // Views over the scenario (and the pipeline view over its own fields) say when theirs is stale.
  for (QWidget* view : std::initializer_list<QWidget*>{costs_view_, tradeoff_view_, mask_view_, layer_panel_})
    StaleBanner::attach(view, session_, {Session::Input::scenario});
  StaleBanner::attach(pipeline_view_, session_, {Session::Input::scenario, Session::Input::pipeline});
  StaleBanner::attach(serving_view_, session_, {Session::Input::scenario});
  StaleBanner::attach(compare_view_, session_, {Session::Input::scenario});  // its current column
  tabs_->addTab(costs_view_, tr("&Costs"));
  // Tabs whose controls and pictures need more height than a 1024 x 700 window leaves
  // them scroll instead of raising the window's minimum size.
  tabs_->addTab(scrolled(mask_view_), tr("&Masks"));
  tabs_->addTab(layer_panel_, tr("&Layers"));
  tabs_->addTab(tradeoff_view_, tr("&Trade-offs"));
  tabs_->addTab(scrolled(pipeline_view_), tr("&Pipeline"));
  tabs_->addTab(scrolled(validation_view_), tr("&Validation"));
  tabs_->addTab(scrolled(serving_view_), tr("&Serving"));
  tabs_->addTab(compare_view_, tr("C&ompare"));
  connect(comparison_, &Comparison::changed, this, &MainWindow::showPins);
  connect(comparison_, &Comparison::failed, this, &MainWindow::showMessage);
  connect(compare_view_, &CompareView::pinRequested, this, [this] { pinCurrent(); });
  connect(pipeline_view_, &PipelineView::resultShown, this,
          [this] { compare_view_->setCurrent(compare_view_->current(), pipeline_view_->result()); });
  v->addWidget(tabs_, 1);
  setCentralWidget(central);
  follow_selected_layer(layer_view_, session_);
}

void MainWindow::buildDock() {
  design_editor_ = new DesignEditor(session_);
  scenario_editor_ = new ScenarioEditor(session_);
  auto* tabs = new QTabWidget();
  tabs->addTab(scrolled(design_editor_), tr("Design"));
  tabs->addTab(scrolled(scenario_editor_), tr("Hardware && scenario"));
  auto* dock = new QDockWidget(tr("Editor"));
  dock->setObjectName("editor");
  dock->setWidget(tabs);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  dock->setMinimumWidth(400);
  addDockWidget(Qt::LeftDockWidgetArea, dock);
  // Per-layer edits from the table and the strip go through the editor's parser.
  layer_model_->onKindEdited = [this](int layer, model::HdLayerKind kind) { design_editor_->setLayerKind(layer, kind); };
  connect(strip_, &LayerStripWidget::kindRequested, design_editor_, &DesignEditor::setLayerKind);
  connect(layer_panel_, &LayerPanel::kindsRequested, design_editor_, &DesignEditor::setLayerKinds);
  auto show = [this](const QString& text) { showMessage(text); };
  connect(design_editor_, &DesignEditor::statusMessage, this, show);
  connect(scenario_editor_, &ScenarioEditor::statusMessage, this, show);
}

void MainWindow::buildMenus() {
  auto add = [this](QMenu* menu, const QString& text, const QKeySequence& key, auto slot, const QString& tip = {}) {
    QAction* a = menu->addAction(text);
    a->setShortcut(key);
    a->setStatusTip(tip);
    connect(a, &QAction::triggered, this, slot);
    return a;
  };
  QMenu* file = menuBar()->addMenu(tr("&File"));
  add(file, tr("&Open model..."), QKeySequence::Open, [this] { design_editor_->openModelDialog(); },
      tr("hdlab config, backbone or HuggingFace config.json"));
  add(file, tr("Open &hardware profile..."), QKeySequence(tr("Ctrl+Shift+H")),
      [this] { scenario_editor_->openHardwareDialog(); });
  add(file, tr("Open &validation points..."), QKeySequence(tr("Ctrl+Shift+V")), [this] {
    showTabOf(validation_view_);
    validation_view_->openDialog();
  });
  add(file, tr("&Save config..."), QKeySequence::Save, [this] { saveConfigDialog(); },
      tr("Backbone + design as one JSON document the CLI reads"));
  add(file, tr("&Export all charts..."), QKeySequence(tr("Ctrl+Shift+E")), [this] { exportAllChartsDialog(); });
  file->addSeparator();
  add(file, tr("Open sess&ion..."), QKeySequence(tr("Ctrl+Shift+O")), [this] { session_files_->openDialog(); },
      tr("A session file: backbone, design, hardware, scenario, pipeline and views"));
  add(file, tr("Save sessio&n..."), QKeySequence(tr("Ctrl+Shift+S")), [this] { session_files_->saveDialog(); },
      tr("Everything as one JSON document; hdlab cost / pipeline read it as MODEL"));
  session_files_->fillRecentMenu(file->addMenu(tr("Recent sess&ions")));
  file->addSeparator();
  add(file, tr("&Quit"), QKeySequence::Quit, [this] { close(); });
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = session_files_->undoStack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = session_files_->undoStack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcuts({QKeySequence(tr("Ctrl+Shift+Z")), QKeySequence(tr("Ctrl+Y"))});
  edit->addActions({undo, redo});
  edit->addSeparator();
  add(edit, tr("&Copy design JSON"), QKeySequence(tr("Ctrl+Shift+C")), [this] { design_editor_->copyDesignJson(); });
  add(edit, tr("Apply HD layer &rule"), QKeySequence(tr("Ctrl+R")), [this] { design_editor_->applyLayerRule(); });
  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (int i = 0; i < tabs_->count(); ++i)
    add(view, tabs_->tabText(i).remove('&'), QKeySequence(QString("Ctrl+%1").arg(i + 1)),
        [this, i] { tabs_->setCurrentIndex(i); });
  view->addSeparator();
  add(view, tr("Next layer"), QKeySequence(tr("Alt+Down")), [this] { mask_view_->nextLayer(); });
  add(view, tr("Previous layer"), QKeySequence(tr("Alt+Up")), [this] { mask_view_->previousLayer(); });
  QMenu* compare = menuBar()->addMenu(tr("Comp&are"));
  add(compare, tr("&Pin current design"), QKeySequence(tr("Ctrl+P")), [this] { pinCurrent(); },
      tr("Keep the design, hardware, scenario and pipeline as a reference on every chart and the Compare tab"));
  add(compare, tr("&Remove all pins"), QKeySequence(), [this] { comparison_->clear(); });
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  add(run, tr("&Recompute"), QKeySequence(tr("F5")), [this] { evaluateNow(); });
  add(run, tr("&Cancel"), QKeySequence(tr("Esc")), [this] { cancelWork(); });
}

void MainWindow::buildStatusBar() {
  counts_ = new QLabel();
  counts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_ = new QLabel();
  message_->setStyleSheet("color: #444;");
  message_timer_.setSingleShot(true);
  message_timer_.setInterval(8000);
  connect(&message_timer_, &QTimer::timeout, message_, &QLabel::clear);
  statusBar()->addPermanentWidget(counts_, 3);
  statusBar()->addPermanentWidget(message_, 1);
  progress_ = new QProgressBar();
  progress_->setMaximumWidth(180);
  progress_->setFormat(tr("%v / %m points"));
  progress_->hide();
  cancel_ = new QToolButton();
  cancel_->setText(tr("Cancel"));
  cancel_->setToolTip(tr("Stop the running computation (Esc)"));
  cancel_->hide();
  connect(cancel_, &QToolButton::clicked, this, &MainWindow::cancelWork);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
  connect(pipeline_view_, &PipelineView::progress, this, &MainWindow::showProgress);
  connect(serving_view_, &ServingView::progress, this, &MainWindow::showProgress);
  const auto hide_when_idle = [this] {
    if (!job_.running()) {
      progress_->hide();
      cancel_->hide();
    }
  };
  connect(pipeline_view_, &PipelineView::idle, this, hide_when_idle);
  connect(serving_view_, &ServingView::idle, this, hide_when_idle);
}

QStringList MainWindow::applyDefaults() {
  QStringList missing;
  if (!design_editor_->selectModelPreset("qwen3-8b")) missing << tr("model Qwen3-8B");
  if (!design_editor_->selectDesignPreset("hd-n4-full")) missing << tr("design preset hd-n4-full");
  if (!scenario_editor_->selectHardwarePreset("h100")) missing << tr("hardware H100");
  return missing;
}

void MainWindow::scheduleEvaluation() {
  if (!session_->ready() || debounce_.isActive()) return;  // the scheduled run reads the session then
  debounce_.start(edit_delay_ms(last_start_));
}

void MainWindow::evaluateNow() {
  debounce_.stop();
  if (!session_->ready()) return;
  last_start_.start();
  const model::Config config = session_->config();
  const simulator::HardwareProfile hw = session_->hardware();
  const simulator::Scenario scenario = session_->scenario();
  // Copies travel to the worker; the UI may change the session meanwhile.
  job_.start([config, hw, scenario](const gui_core::ProgressFn& progress) {
    return gui_core::compute_tradeoffs(config, hw, scenario, gui_core::default_grid(config, scenario), progress);
  });
  progress_->setRange(0, 0);
  progress_->show();
  cancel_->show();
}

void MainWindow::cancelWork() {
  job_.cancel();
  pipeline_view_->cancel();
  serving_view_->cancel();
  showMessage(tr("Cancelled"));
}

void MainWindow::waitForEvaluation() {
  if (debounce_.isActive()) evaluateNow();
  job_.wait();
  QCoreApplication::processEvents();  // delivers the finished signal
}

void MainWindow::showProgress(int done, int total) {
  progress_->setRange(0, total);
  progress_->setValue(done);
  progress_->show();
  cancel_->show();
}

void MainWindow::onResults(const gui_core::Tradeoffs& t) {
  const QString design = QString::fromStdString(model::describe(session_->config().design));
  const QString baseline = tr("%1 alone").arg(session_->backboneLabel());
  const simulator::Metrics& m = t.design;
  using simulator::Metric;
  const QString headline =
      tr("<b>%1</b> on %2 x %3: decode %4 at batch %5 / %6 tokens (%7 of the baseline); prefill %8; train step %9.")
          .arg(design.toHtmlEscaped(), session_->hardwareLabel().toHtmlEscaped())
          .arg(session_->scenario().parallel.tp * session_->scenario().parallel.cp * session_->scenario().parallel.dp)
          .arg(QString::fromStdString(gui_core::format_si(m[Metric::decode_tokens_per_s], "tokens/s")))
          .arg(session_->scenario().decode.batch)
          .arg(count(session_->scenario().decode.context),
               QString::fromStdString(gui_core::format_ratio(m[Metric::decode_vs_baseline_ratio])),
               QString::fromStdString(gui_core::format_seconds(m[Metric::prefill_s])),
               QString::fromStdString(gui_core::format_seconds(m[Metric::train_step_s])));
  costs_view_->setResults(t, session_->scenario(), headline);
  layer_panel_->setCosts(t.layers);
  tradeoff_view_->setResults(t, QString::fromStdString(gui_core::short_label(session_->config().design)), baseline,
                            session_->hardware().memory_bytes());
  compare_view_->setCurrent(t.design, pipeline_view_->result());
  emit resultsShown();
}

int MainWindow::tabIndexOf(const QWidget* view) const {
  for (int i = 0; i < tabs_->count(); ++i)
    if (tabs_->widget(i) == view || tabs_->widget(i)->isAncestorOf(view)) return i;
  return -1;
}

void MainWindow::showTabOf(QWidget* view) {
  if (const int i = tabIndexOf(view); i >= 0) tabs_->setCurrentIndex(i);
}

QString MainWindow::pinCurrent() {
  if (!session_->ready()) return tr("Nothing to pin: load a model and a hardware profile first");
  gui_core::Pin pin;
  pin.config = session_->config();
  pin.hardware = session_->hardware();
  pin.scenario = session_->scenario();
  pin.grid = gui_core::default_grid(pin.config, pin.scenario);
  if (pipeline_view_->result()) pin.pipeline = pipeline_view_->result()->options;
  pin.label = gui_core::pin_label(session_->backboneLabel().toStdString(), pin.config.design,
                                  session_->hardwareLabel().toStdString());
  QString error;
  if (comparison_->pin(pin, &error) < 0) {
    showMessage(error);
    return error;
  }
  showMessage(tr("Pinned %1").arg(QString::fromStdString(pin.label)));
  return {};
}

void MainWindow::showPins() {
  std::vector<std::pair<QString, gui_core::Tradeoffs>> curves;
  std::vector<std::pair<QString, simulator::PipelineResult>> runs;
  QStringList legend;
  for (const gui_core::PinList::Entry* e : comparison_->evaluated()) {
    // Legends name a pin by its key; the trade-off note and the Compare tab give its label.
    const QString key = QString::fromStdString(gui_core::pin_key(e->id));
    curves.emplace_back(key, e->result->tradeoffs);
    if (e->result->pipeline) runs.emplace_back(key, *e->result->pipeline);
    legend << tr("%1 = %2").arg(key, QString::fromStdString(e->pin.label));
  }
  tradeoff_view_->setPins(std::move(curves), legend.join("; "));
  pipeline_view_->setPins(std::move(runs));
}

QString MainWindow::statusCounts() const { return counts_->text(); }
QString MainWindow::statusMessage() const { return message_->text(); }

void MainWindow::showMessage(const QString& text) {
  message_->setText(text);
  message_->setToolTip(text);
  message_timer_.start();
}

void MainWindow::updateCounts() {
  if (!session_->hasConfig()) {
    counts_->setText(tr("No model loaded: File > Open model (Ctrl+O)"));
    return;
  }
  const model::Config& c = session_->config();
  const model::ParamCounts p = model::count_params(c);
  const QString design = QString::fromStdString(model::describe(c.design));
  // Both name the last valid design; while the typed one is not valid they say so.
  const bool stale = !session_->inputError(Session::Input::design).isEmpty();
  counts_->setText((stale ? tr("Stale (last valid design): ") : QString()) +
                   tr("%1 + %2: %3 params (%4 embedding, %5 active) | %6")
                       .arg(session_->backboneLabel(), design, count(p.total), count(p.embedding()),
                            count(p.active_per_token), mask_view_->countsSummary()));
  setWindowTitle(tr("hdlab - %1 + %2%3%4")
                     .arg(session_->backboneLabel(), design,
                          session_->hasHardware() ? tr(" on %1").arg(session_->hardwareLabel()) : QString(),
                          stale ? tr(" - stale: the design typed is not valid") : QString()));
}

void MainWindow::saveConfigDialog() {
  if (!session_->hasConfig()) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Save config"), "config.json", tr("JSON (*.json)"));
  if (path.isEmpty()) return;
  try {
    model::write_file_atomic(path.toStdString(), model::to_json(session_->config()).dump(2) + "\n");
    showMessage(tr("Wrote %1").arg(path));
  } catch (const model::ConfigError& e) {
    showMessage(QString::fromStdString(e.what()));
  }
}

QList<ChartPanel*> MainWindow::chartPanels() const {
  QList<ChartPanel*> all = tradeoff_view_->panels();
  all << pipeline_view_->panel();
  all << pipeline_view_->pinnedPanels();
  all << validation_view_->panel();
  all << serving_view_->panels();
  return all;
}

QStringList MainWindow::exportAllCharts(const QString& dir) {
  QStringList errors;
  for (ChartPanel* p : chartPanels()) {
    // A fixed size, so exports do not depend on the window's shape.
    const QSize size(1200, 800);
    QString e = p->exportTo(dir + "/" + p->fileStem() + ".png", size);
    if (!e.isEmpty()) errors << e;
    e = p->exportTo(dir + "/" + p->fileStem() + ".svg", size);
    if (!e.isEmpty()) errors << e;
  }
  return errors;
}

void MainWindow::exportAllChartsDialog() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Export all charts to"));
  if (dir.isEmpty()) return;
  const QStringList errors = exportAllCharts(dir);
  showMessage(errors.isEmpty() ? tr("Charts written to %1").arg(dir) : errors.join("; "));
}

}  // namespace hdlab::gui
