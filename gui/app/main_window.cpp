#include "main_window.hpp"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QHeaderView>
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
#include "design_editor.hpp"
#include "hdlab/charts/export.hpp"
#include "hdlab/gui_core/units.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/files.hpp"
#include "hdlab/model/params.hpp"
#include "layer_strip_widget.hpp"
#include "layer_table_model.hpp"
#include "mask_view.hpp"
#include "pipeline_view.hpp"
#include "scenario_editor.hpp"
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
  debounce_.setInterval(150);  // one evaluation per burst of edits (spin box arrows held down)
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
  // The strip and every tab show the last valid design while the typed one is not valid.
  v->addWidget(new StaleBanner(session_, {Session::Input::design}));
  strip_ = new LayerStripWidget(session_);
  v->addWidget(strip_);
  tabs_ = new QTabWidget();
  costs_view_ = new CostsView();
  mask_view_ = new MaskView(session_);
  layer_model_ = new LayerTableModel(session_, this);
  layer_view_ = new QTableView();
  layer_view_->setModel(layer_model_);
  layer_view_->setItemDelegateForColumn(LayerTableModel::Attention, new LayerKindDelegate(layer_view_));
  layer_view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  layer_view_->horizontalHeader()->setStretchLastSection(true);
  layer_view_->verticalHeader()->hide();
  layer_view_->verticalHeader()->setDefaultSectionSize(layer_view_->fontMetrics().height() + 8);
  layer_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  layer_view_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                               QAbstractItemView::SelectedClicked);
  tradeoff_view_ = new TradeoffView();
  pipeline_view_ = new PipelineView(session_);
  validation_view_ = new ValidationView();
  // Views over the scenario (and the pipeline view over its own fields) say when theirs is stale.
  for (QWidget* view : std::initializer_list<QWidget*>{costs_view_, tradeoff_view_, mask_view_})
    StaleBanner::attach(view, session_, {Session::Input::scenario});
  StaleBanner::attach(pipeline_view_, session_, {Session::Input::scenario, Session::Input::pipeline});
  tabs_->addTab(costs_view_, tr("&Costs"));
  tabs_->addTab(mask_view_, tr("&Masks"));
  tabs_->addTab(layer_view_, tr("&Layers"));
  tabs_->addTab(tradeoff_view_, tr("&Trade-offs"));
  tabs_->addTab(pipeline_view_, tr("&Pipeline"));
  tabs_->addTab(validation_view_, tr("&Validation"));
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
    tabs_->setCurrentWidget(validation_view_);
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
  connect(pipeline_view_, &PipelineView::idle, this, [this] {
    if (!job_.running()) {
      progress_->hide();
      cancel_->hide();
    }
  });
}

QStringList MainWindow::applyDefaults() {
  QStringList missing;
  if (!design_editor_->selectModelPreset("qwen3-8b")) missing << tr("model Qwen3-8B");
  if (!design_editor_->selectDesignPreset("hd-n4-full")) missing << tr("design preset hd-n4-full");
  if (!scenario_editor_->selectHardwarePreset("h100")) missing << tr("hardware H100");
  return missing;
}

void MainWindow::scheduleEvaluation() {
  if (session_->ready()) debounce_.start();
}

void MainWindow::evaluateNow() {
  debounce_.stop();
  if (!session_->ready()) return;
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
  tradeoff_view_->setResults(t, QString::fromStdString(gui_core::short_label(session_->config().design)), baseline,
                            session_->hardware().memory_bytes());
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
  all << validation_view_->panel();
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
