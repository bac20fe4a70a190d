#pragma once
// The main window: editors in a dock on the left; the layer strip over the views (costs,
// masks, layers, trade-offs, pipeline, validation, serving) in the middle; a status bar with the
// exact counts and the progress of background work, which Esc cancels.
#include <memory>

#include <QElapsedTimer>
#include <QMainWindow>
#include <QTimer>

#include "background_job.hpp"
#include "hdlab/gui_core/catalog.hpp"
#include "hdlab/gui_core/tradeoffs.hpp"

class QLabel;
class QProgressBar;
class QTabWidget;
class QTableView;
class QToolButton;

namespace hdlab::gui {

class ChartPanel;
class Comparison;
class CompareView;
class CostsView;
class DesignEditor;
class LayerPanel;
class LayerStripWidget;
class LayerTableModel;
class MaskView;
class PipelineView;
class ScenarioEditor;
class ServingView;
class Session;
class SessionFiles;
class TradeoffView;
class ValidationView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(gui_core::Catalog catalog, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Qwen3-8B + HD n=4 (all layers full) + H100 where those profiles exist; returns what
  // could not be found (empty when all were).
  QStringList applyDefaults();

  Session* session() const { return session_; }
  // Session files, Recent sessions and undo/redo (session_files.hpp).
  SessionFiles* sessionFiles() const { return session_files_; }
  DesignEditor* designEditor() const { return design_editor_; }
  ScenarioEditor* scenarioEditor() const { return scenario_editor_; }
  MaskView* maskView() const { return mask_view_; }
  LayerStripWidget* layerStrip() const { return strip_; }
  LayerTableModel* layerTable() const { return layer_model_; }
  LayerPanel* layerPanel() const { return layer_panel_; }
  CostsView* costsView() const { return costs_view_; }
  TradeoffView* tradeoffView() const { return tradeoff_view_; }
  PipelineView* pipelineView() const { return pipeline_view_; }
  ValidationView* validationView() const { return validation_view_; }
  ServingView* servingView() const { return serving_view_; }
  Comparison* comparison() const { return comparison_; }
  CompareView* compareView() const { return compare_view_; }
  QTabWidget* tabs() const { return tabs_; }
  // The tab that shows `view` (a tab page or a widget inside one, e.g. a scrolled page), or
  // -1; and bringing it forward.
  int tabIndexOf(const QWidget* view) const;
  void showTabOf(QWidget* view);
  QString statusCounts() const;
  QString statusMessage() const;
  bool evaluating() const { return job_.running(); }
  // Blocks until the running evaluation has delivered its result (tests).
  void waitForEvaluation();
  QList<ChartPanel*> chartPanels() const;

 public slots:
  void evaluateNow();
  void cancelWork();
  // Pins the session's design, hardware, scenario and the pipeline shown (compare mode);
  // returns why not (the list is full, nothing to pin), empty when pinned.
  QString pinCurrent();
  void saveConfigDialog();
  void exportAllChartsDialog();
  // Writes every chart as PNG (and SVG where available) into `dir`; returns the errors.
  QStringList exportAllCharts(const QString& dir);
  // A transient note in the status bar, beside the counts.
  void showMessage(const QString& text);

 signals:
  // The costs and trade-off views show a new evaluation (benchmarks wait for it).
  void resultsShown();

 private:
  void buildCentral();
  void buildDock();
  void buildMenus();
  void buildStatusBar();
  void onResults(const gui_core::Tradeoffs& t);
  void updateCounts();
  void scheduleEvaluation();
  void showProgress(int done, int total);
  // Hands the evaluated pins to the trade-off charts and the pipeline Gantts.
  void showPins();

  Session* session_;
  SessionFiles* session_files_ = nullptr;
  DesignEditor* design_editor_ = nullptr;
  ScenarioEditor* scenario_editor_ = nullptr;
  LayerStripWidget* strip_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  CostsView* costs_view_ = nullptr;
  MaskView* mask_view_ = nullptr;
  LayerTableModel* layer_model_ = nullptr;
  QTableView* layer_view_ = nullptr;
  LayerPanel* layer_panel_ = nullptr;
  TradeoffView* tradeoff_view_ = nullptr;
  PipelineView* pipeline_view_ = nullptr;
  ValidationView* validation_view_ = nullptr;
  ServingView* serving_view_ = nullptr;
  Comparison* comparison_ = nullptr;
  CompareView* compare_view_ = nullptr;
  QLabel* counts_ = nullptr;
  QLabel* message_ = nullptr;  // transient notes; the counts stay visible beside them
  QTimer message_timer_;
  QProgressBar* progress_ = nullptr;
  QToolButton* cancel_ = nullptr;
  QTimer debounce_;
  QElapsedTimer last_start_;  // of the last evaluation: edits in a burst wait out kEditBurstMs
  BackgroundJob<gui_core::Tradeoffs> job_;
};

}  // namespace hdlab::gui
