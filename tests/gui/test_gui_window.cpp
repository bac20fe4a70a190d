// The main window end to end, offscreen: defaults, switching designs and models updates
// every view, bad input shows the ConfigError next to its field, exports work.
#include <catch2/catch.hpp>

#include <QComboBox>
#include <QMouseEvent>
#include <QSpinBox>
#include <QtCharts/QChart>

#include "chart_panel.hpp"
#include "design_editor.hpp"
#include "gui_test_support.hpp"
#include "window_test_support.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "layer_strip_widget.hpp"
#include "layer_table_model.hpp"
#include "main_window.hpp"
#include "mask_view.hpp"
#include "metrics_model.hpp"
#include "pipeline_view.hpp"
#include "scenario_editor.hpp"
#include "session.hpp"
#include "tradeoff_view.hpp"

using namespace hdlab;

namespace {

int count_kind(const gui_core::LayerStrip& s, gui_core::LayerAttentionKind k) {
  int n = 0;
  for (const auto& l : s.layers) n += l.attention == k;
  return n;
}

double metric(gui::MainWindow& w, simulator::Metric m) {
  const gui::MetricsModel* model = w.costsView()->metrics();
  return model->data(model->index(gui::MetricsModel::rowOf(m), gui::MetricsModel::Design), Qt::UserRole).toDouble();
}

}  // namespace

TEST_CASE("main window starts on Qwen3-8B + HD n=4 + H100 with every view filled", "[gui][window]") {
  auto w = test::started_window();
  gui::Session* s = w->session();
  REQUIRE(s->ready());
  CHECK(s->config().base.name == "Qwen3-8B");
  REQUIRE(std::holds_alternative<model::HdDesign>(s->config().design.method));
  CHECK(std::get<model::HdDesign>(s->config().design.method).n == 4);
  CHECK(s->hardwareLabel().contains("H100"));
  CHECK(w->costsView()->metrics()->rowCount() == gui::MetricsModel::shownRowCount());
  // The costs view shows what the simulator computes for the session's inputs.
  CHECK(metric(*w, simulator::Metric::decode_tokens_per_s) ==
        Approx(simulator::evaluate(s->config(), s->hardware(), s->scenario())[simulator::Metric::decode_tokens_per_s])
            .epsilon(1e-12));
  CHECK(w->layerStrip()->strip().layers.size() == 36);
  CHECK(w->layerTable()->rowCount() == 36);
  for (gui::ChartPanel* p : w->tradeoffView()->panels()) CHECK_FALSE(p->chart()->series().isEmpty());
  CHECK(w->statusCounts().contains("params"));
  CHECK(w->statusCounts().contains("visible pairs"));
  const QPixmap shot = w->grab();
  CHECK(shot.size() == w->size());
}

TEST_CASE("switching designs and models updates the strip, table, masks and costs", "[gui][window]") {
  auto w = test::started_window();
  const double prefill_full = metric(*w, simulator::Metric::prefill_s);
  const QString counts_full = w->maskView()->countsSummary();

  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-intra"));
  w->waitForEvaluation();
  const gui_core::LayerStrip& strip = w->layerStrip()->strip();
  CHECK(count_kind(strip, gui_core::LayerAttentionKind::intra) == 30);  // full every 6th layer
  CHECK(count_kind(strip, gui_core::LayerAttentionKind::full) == 6);
  CHECK(w->layerTable()->data(w->layerTable()->index(0, gui::LayerTableModel::Attention), Qt::DisplayRole) == "intra");
  CHECK(w->maskView()->countsSummary() != counts_full);
  CHECK(w->maskView()->countsSummary().contains("intra"));
  // The "auto" layout is stream-major here: each stream's pairs are contiguous and the
  // kernel skips cross-stream tiles.
  const double prefill_auto = metric(*w, simulator::Metric::prefill_s);
  CHECK(prefill_auto < prefill_full);
  // Interleaved, every 128x128 tile holds all four streams: intra layers save no tile.
  auto* layout = w->scenarioEditor()->findChild<QComboBox*>("/scenario/attention/layout");
  REQUIRE(layout);
  layout->setCurrentIndex(layout->findData("interleaved"));
  w->waitForEvaluation();
  CHECK(metric(*w, simulator::Metric::prefill_s) == Approx(prefill_full));
  layout->setCurrentIndex(layout->findData("stream_major"));
  w->waitForEvaluation();
  CHECK(metric(*w, simulator::Metric::prefill_s) == Approx(prefill_auto));

  // One layer's kind, edited in the table, goes through the editor's parser.
  REQUIRE(w->layerTable()->setData(w->layerTable()->index(3, gui::LayerTableModel::Attention), "full", Qt::EditRole));
  CHECK(std::get<model::HdDesign>(w->session()->config().design.method).layer_kinds[3] == model::HdLayerKind::full);
  emit w->layerStrip()->kindRequested(4, model::HdLayerKind::full);
  CHECK(count_kind(w->layerStrip()->strip(), gui_core::LayerAttentionKind::full) == 8);

  // A bundled HuggingFace config.json: the HD design carries over to the new backbone.
  REQUIRE(w->designEditor()->selectModelPreset("qwen3-30b-a3b.config"));
  w->waitForEvaluation();
  CHECK(w->session()->config().base.moe.has_value());
  CHECK(std::holds_alternative<model::HdDesign>(w->session()->config().design.method));
  CHECK(w->layerTable()->rowCount() == static_cast<int>(w->session()->config().effective.num_layers));

  REQUIRE(w->designEditor()->selectModelPreset("welm-80b"));
  w->waitForEvaluation();
  CHECK(w->session()->config().base.name == "WeLM-80B");
  CHECK(w->layerStrip()->strip().mirror_pairs.size() == 16);
  CHECK(w->layerTable()->rowCount() == 49);
  CHECK(metric(*w, simulator::Metric::params_total) ==
        static_cast<double>(model::count_params(w->session()->config()).total));
}

TEST_CASE("a cancelled evaluation leaves the last results in place", "[gui][window][jobs]") {
  auto w = test::started_window();
  const double params_n4 = metric(*w, simulator::Metric::params_total);
  w->designEditor()->findChild<QSpinBox*>("/design/hd/n")->setValue(8);
  w->evaluateNow();
  CHECK(w->evaluating());
  w->cancelWork();
  CHECK_FALSE(w->evaluating());
  QCoreApplication::processEvents();
  CHECK(metric(*w, simulator::Metric::params_total) == params_n4);
  w->evaluateNow();  // F5
  w->waitForEvaluation();
  // n = 8: four more input tables of Qwen3-8B's vocabulary x hidden (151936 x 4096).
  CHECK(metric(*w, simulator::Metric::params_total) == params_n4 + 4 * 151936.0 * 4096);
}

TEST_CASE("clicking the layer strip selects the layer the mask view shows", "[gui][window]") {
  auto w = test::started_window();
  gui::LayerStripWidget* strip = w->layerStrip();
  int x = 0;
  while (x < strip->width() && strip->layerAt(x) != 10) ++x;
  REQUIRE(strip->layerAt(x + 1) == 10);
  QMouseEvent press(QEvent::MouseButtonPress, QPointF(x + 1, 50), strip->mapToGlobal(QPointF(x + 1, 50)),
                    Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(strip, &press);
  CHECK(w->session()->selectedLayer() == 10);
  CHECK(w->maskView()->countsSummary().startsWith("layer 10"));
}

TEST_CASE("bad input shows the ConfigError next to its field - the views keep the last valid design",
          "[gui][window][errors]") {
  auto w = test::started_window();
  gui::DesignEditor* editor = w->designEditor();
  const model::Config before = w->session()->config();

  // VWN: m must divide the hidden size 4096.
  editor->setMethod("vwn");
  auto* m = editor->findChild<QSpinBox*>("/design/vwn/m");
  REQUIRE(m);
  m->setValue(3);
  CHECK_FALSE(editor->valid());
  CHECK(editor->errorAt("/design/vwn/m").contains("not divisible"));
  // The session keeps the last valid design: VWN with the page's default m = 2.
  REQUIRE(std::holds_alternative<model::VwnDesign>(w->session()->config().design.method));
  CHECK(std::get<model::VwnDesign>(w->session()->config().design.method).m == 2);
  m->setValue(1);
  CHECK(editor->valid());
  CHECK(std::get<model::VwnDesign>(w->session()->config().design.method).m == 1);
  m->setValue(2);
  CHECK(editor->valid());
  CHECK(editor->errorAt("/design/vwn/m").isEmpty());

  // Looped: a prelude takes its layers from the block; a block too long is refused.
  editor->setMethod("looped");
  REQUIRE(editor->valid());
  editor->findChild<QSpinBox*>("/design/looped/prelude")->setValue(2);
  CHECK(editor->valid());
  CHECK(std::get<model::LoopedDesign>(w->session()->config().design.method).recurrent == 34);
  editor->findChild<QSpinBox*>("/design/looped/recurrent")->setValue(36);
  CHECK_FALSE(editor->valid());
  CHECK(editor->errorAt("/design/looped").contains("36 layers"));

  // HD: a window with no local layer is refused at the window field.
  editor->setMethod("hd");
  editor->findChild<QSpinBox*>("/design/hd/window")->setValue(100);
  CHECK(editor->errorAt("/design/hd/window").contains("no layer is local"));

  // Scenario: 32 query heads cannot be split over 3 tensor-parallel devices.
  w->scenarioEditor()->tensorParallel()->setValue(3);
  CHECK(w->scenarioEditor()->errorAt("/scenario/parallel/tp").size() > 0);
  w->scenarioEditor()->tensorParallel()->setValue(1);
  CHECK(w->scenarioEditor()->errorAt("/scenario/parallel/tp").isEmpty());

  // A file that does not exist: the message under the backbone picker, nothing lost.
  const model::Config valid_now = w->session()->config();
  CHECK_FALSE(editor->loadModelFile("/nonexistent/model.json"));
  CHECK(editor->backboneError().contains("/nonexistent/model.json"));
  CHECK(w->session()->config() == valid_now);
  (void)before;
}

TEST_CASE("every chart of the window exports to PNG (and SVG where available)", "[gui][window][export]") {
  auto w = test::started_window();
  const auto dir = test::temp_dir("window_export");
  const QStringList errors = w->exportAllCharts(QString::fromStdString(dir.string()));
  CHECK(errors.isEmpty());
  for (gui::ChartPanel* p : w->chartPanels()) {
    const auto png = dir / (p->fileStem().toStdString() + ".png");
    REQUIRE(std::filesystem::exists(png));
    QImage image(QString::fromStdString(png.string()));
    CHECK(image.size() == QSize(1200, 800));
    CHECK(std::filesystem::exists(dir / (p->fileStem().toStdString() + ".svg")));
  }
}

TEST_CASE("a chart's Export reports success and failure in the status bar", "[gui][window][export]") {
  auto w = test::started_window();
  const auto dir = test::temp_dir("window_export_report");
  gui::ChartPanel* p = w->chartPanels().front();
  const QString good = QString::fromStdString((dir / "chart.png").string());
  CHECK(p->exportAndReport(good).isEmpty());
  CHECK(w->statusMessage() == "Wrote " + good);
  CHECK(std::filesystem::exists(dir / "chart.png"));
  const QString bad = QString::fromStdString((dir / "missing" / "chart.png").string());
  CHECK_FALSE(p->exportAndReport(bad).isEmpty());
  CHECK(w->statusMessage().startsWith("Export failed: "));
  CHECK(w->statusMessage().contains(bad));
}

TEST_CASE("pipeline tab: Gantt chart, device table and the stages on the layer strip", "[gui][window][pipeline]") {
  auto w = test::started_window();
  gui::PipelineView* p = w->pipelineView();
  p->waitForRun();
  REQUIRE(p->result());
  CHECK(p->result()->options.stages == 4);
  CHECK(p->devices()->rowCount() == 4);
  CHECK_FALSE(p->panel()->chart()->series().isEmpty());
  CHECK(p->summary().contains("bubble"));
  const auto& stages = w->session()->layerStages();
  REQUIRE(stages.size() == 36);
  CHECK(stages.front() == 0);
  CHECK(stages.back() == 3);
  CHECK(std::is_sorted(stages.begin(), stages.end()));
  CHECK(w->layerStrip()->strip().stages == 4);

  // More stages than layers: the message sits at the stages field.
  p->findChild<QSpinBox*>("/pipeline/pp")->setValue(100);
  p->waitForRun();
  CHECK(p->errorAt("/pipeline/pp").size() > 0);
}
