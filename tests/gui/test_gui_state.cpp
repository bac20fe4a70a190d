// What the window shows follows what is loaded and what is typed (issue 14, broken items
// 2-4): switching the backbone re-derives every model-dependent field, a loaded preset
// shows in the rule fields and the preset box; views over the last valid input say they
// are stale while the input is not valid; the Layers tab's kind editor applies on choice.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QPointer>

#include "design_editor.hpp"
#include "gui_test_support.hpp"
#include "window_test_support.hpp"
#include "hdlab/gui_core/hd_rule.hpp"
#include "layer_strip_widget.hpp"
#include "layer_table_model.hpp"
#include "main_window.hpp"
#include "method_pages.hpp"
#include "pipeline_view.hpp"
#include "scenario_editor.hpp"
#include "session.hpp"
#include "validation_view.hpp"

using namespace hdlab;

namespace {

int count_kind(const model::HdDesign& hd, model::HdLayerKind k) {
  return static_cast<int>(std::count(hd.layer_kinds.begin(), hd.layer_kinds.end(), k));
}

template <class W>
W* named(QWidget* root, const char* name) {
  auto* w = root->findChild<W*>(name);
  REQUIRE(w);
  return w;
}

// The texts of the stale banners under `root` that a user sees now.
QStringList visible_banners(QWidget* root) {
  QStringList texts;
  for (QLabel* l : root->findChildren<QLabel*>("staleBanner"))
    if (l->isVisible() && !l->text().isEmpty()) texts << l->text();
  return texts;
}

QTableView* layer_view(gui::MainWindow& w) {
  for (QTableView* v : w.findChildren<QTableView*>())
    if (v->model() == w.layerTable()) return v;
  FAIL("no table shows the layer model");
  return nullptr;
}

// Collects Qt's warnings while alive (the item views report misused editors this way).
struct WarningLog {
  static QStringList& lines() {
    static QStringList l;
    return l;
  }
  static void handler(QtMsgType type, const QMessageLogContext&, const QString& text) {
    if (type != QtDebugMsg && type != QtInfoMsg) lines() << text;
  }
  QtMessageHandler previous;
  WarningLog() : previous(qInstallMessageHandler(handler)) { lines().clear(); }
  ~WarningLog() { qInstallMessageHandler(previous); }
};

}  // namespace

TEST_CASE("an HD layer rule is read from a design's layers or fitted to its kinds", "[gui][state][rule]") {
  using K = model::HdLayerKind;
  const model::Backbone qwen = test::profile_config("qwen3-8b.json").base;  // 36 layers, no sliding ones
  const gui_core::HdRule intra{K::local, 6, K::intra};
  const auto kinds = gui_core::apply_rule(intra, qwen);
  REQUIRE(kinds.size() == 36);
  // The rule's kinds are the parser's for the same rule.
  const auto parsed =
      test::with_design(test::profile_config("qwen3-8b.json"),
                        R"({"hd": {"n": 4, "layers": {"sliding": "local", "full_every": 6, "rest": "intra"}}})");
  CHECK(std::get<model::HdDesign>(parsed.design.method).layer_kinds == kinds);
  CHECK(std::count(kinds.begin(), kinds.end(), K::full) == 6);

  // Written rules are taken as written: "full" is full in sliding layers too.
  const model::Json full = "full", every6 = model::Json::parse(R"({"full_every": 6})");
  const model::Json listed = model::Json::parse(R"({"full_layers": [1]})"), list = model::Json::array({"full"});
  CHECK(gui_core::rule_from_layers_json(&full) == gui_core::HdRule{K::full, 0, K::full});
  CHECK(gui_core::rule_from_layers_json(&every6) == gui_core::HdRule{K::local, 6, K::intra});
  CHECK(gui_core::rule_from_layers_json(nullptr) == gui_core::HdRule{K::local, 0, K::full});
  CHECK_FALSE(gui_core::rule_from_layers_json(&listed));
  CHECK_FALSE(gui_core::rule_from_layers_json(&list));

  // A per-layer list (a saved config) is fitted: the smallest full_every that gives it.
  const auto fitted = gui_core::fit_rule(kinds, qwen);
  REQUIRE(fitted);
  CHECK(fitted->full_every == 6);
  CHECK(fitted->rest == K::intra);
  CHECK(gui_core::apply_rule(*fitted, qwen) == kinds);
  auto edited = kinds;
  edited[2] = K::full;  // no rule makes layer 2 full and layer 3 intra with every 6th full
  CHECK_FALSE(gui_core::fit_rule(edited, qwen));
}

TEST_CASE("switching the backbone re-derives theta and name and fits the layer rule - a loaded preset shows",
          "[gui][state][backbone]") {
  auto w = test::started_window();
  gui::Session* s = w->session();
  gui::DesignEditor* editor = w->designEditor();
  CHECK(test::hd_of(s).rope_theta == 1e6);  // Qwen3-8B's own

  REQUIRE(editor->selectDesignPreset("hd-n4-intra"));
  CHECK(count_kind(test::hd_of(s), model::HdLayerKind::full) == 6);
  // Apply with the rule fields as loaded keeps the loaded kinds.
  editor->applyLayerRule();
  CHECK(count_kind(test::hd_of(s), model::HdLayerKind::full) == 6);
  CHECK(count_kind(test::hd_of(s), model::HdLayerKind::intra) == 30);

  REQUIRE(editor->selectModelPreset("deepseek-v3"));
  w->waitForEvaluation();
  CHECK(s->config().base.num_layers == 61);
  // DeepSeek-V3's theta (10000), not Qwen3-8B's 1e6.
  CHECK(test::hd_of(s).rope_theta == 10000.0);
  // The preset's rule fitted to 61 layers: layers 5, 11, ..., 59 full.
  CHECK(count_kind(test::hd_of(s), model::HdLayerKind::full) == 10);
  CHECK(count_kind(test::hd_of(s), model::HdLayerKind::intra) == 51);
  CHECK(test::hd_of(s).layer_kinds[59] == model::HdLayerKind::full);
  // The preset's name described the preset on the old model; the new one is derived.
  CHECK(s->config().design.name.empty());
  // Apply again: nothing moves.
  editor->applyLayerRule();
  CHECK(count_kind(test::hd_of(s), model::HdLayerKind::full) == 10);

  // The fields say what was loaded.
  CHECK(gui::choice_value(named<QComboBox>(editor, "/design/hd/layers/sliding")) == "local");
  CHECK(named<QSpinBox>(editor, "/design/hd/layers/full_every")->value() == 6);
  CHECK(gui::choice_value(named<QComboBox>(editor, "/design/hd/layers/rest")) == "intra");
  CHECK(named<QDoubleSpinBox>(editor, "/design/hd/rope_theta")->value() == 0.0);  // "backbone's"
  auto* preset = named<QComboBox>(editor, "/design/preset");
  CHECK(preset->currentText().contains("every 6th layer full"));

  // Back on Qwen3-8B: its theta, its 36 layers under the same rule.
  REQUIRE(editor->selectModelPreset("qwen3-8b"));
  CHECK(test::hd_of(s).rope_theta == 1e6);
  CHECK(count_kind(test::hd_of(s), model::HdLayerKind::full) == 6);
  // A preset that cannot apply here (width growth needs an MoE; Qwen3-8B is dense)
  // leaves the box on the preset that is loaded.
  const model::Config before = s->config();
  const int width = preset->findText("width growth", Qt::MatchContains);
  REQUIRE(width > 0);
  preset->setCurrentIndex(width);  // what a click on the item does before `activated`
  emit preset->activated(width);
  CHECK(s->config() == before);
  CHECK(preset->currentText().contains("every 6th layer full"));

  // An edit of the design leaves the preset: the box says so.
  named<QSpinBox>(editor, "/design/hd/n")->setValue(8);
  CHECK(preset->currentIndex() == 0);
}

TEST_CASE("a saved config (kinds per layer) shows its rule and theta follows the next backbone",
          "[gui][state][backbone]") {
  auto w = test::started_window();
  const auto dir = test::temp_dir("state_saved_config");
  const auto path = dir / "config.json";
  {
    const model::Config c = test::with_design(
        test::profile_config("qwen3-8b.json"), R"({"hd": {"n": 2, "layers": {"full_every": 4, "rest": "intra"}}})");
    std::ofstream(path) << model::to_json(c).dump(2);
  }
  gui::DesignEditor* editor = w->designEditor();
  REQUIRE(editor->loadModelFile(QString::fromStdString(path.string())));
  CHECK(named<QSpinBox>(editor, "/design/hd/layers/full_every")->value() == 4);
  CHECK(gui::choice_value(named<QComboBox>(editor, "/design/hd/layers/rest")) == "intra");
  // to_json wrote Qwen3-8B's theta explicitly; it equals the backbone's, so it follows.
  CHECK(named<QDoubleSpinBox>(editor, "/design/hd/rope_theta")->value() == 0.0);
  REQUIRE(editor->selectModelPreset("deepseek-v3"));
  CHECK(test::hd_of(w->session()).rope_theta == 10000.0);
  CHECK(count_kind(test::hd_of(w->session()), model::HdLayerKind::full) == 15);  // 61 / 4
}

TEST_CASE("a saved HD window the parser derived shows as auto and follows n - a given one shows its value",
          "[gui][state][hd]") {
  auto w = test::started_window();
  const auto dir = test::temp_dir("state_derived_window");
  const auto save = [&](const char* design) {
    const auto path = dir / "config.json";
    std::ofstream(path) << model::to_json(test::with_design(test::profile_config("gpt-oss-20b.json"), design)).dump(2);
    return QString::fromStdString(path.string());
  };
  gui::DesignEditor* editor = w->designEditor();
  // to_json writes the derived window (128 tokens x 4 = 512 positions) explicitly.
  REQUIRE(editor->loadModelFile(save(R"({"hd": {"n": 4}})")));
  CHECK(test::hd_of(w->session()).window == 512);
  CHECK(named<QSpinBox>(editor, "/design/hd/window")->value() == 0);  // "auto (backbone window x n)"
  named<QSpinBox>(editor, "/design/hd/n")->setValue(2);
  CHECK(test::hd_of(w->session()).window == 256);  // the span in tokens kept
  REQUIRE(editor->loadModelFile(save(R"({"hd": {"n": 4, "window": 300}})")));
  CHECK(named<QSpinBox>(editor, "/design/hd/window")->value() == 300);
  CHECK(test::hd_of(w->session()).window == 300);
}

TEST_CASE("an invalid design marks every view over the last valid one as stale until it is valid again",
          "[gui][state][stale]") {
  auto w = test::started_window();
  gui::DesignEditor* editor = w->designEditor();
  CHECK(visible_banners(w.get()).isEmpty());
  editor->setMethod("vwn");
  w->waitForEvaluation();
  REQUIRE(editor->valid());
  auto* m = named<QSpinBox>(editor, "/design/vwn/m");
  m->setValue(3);  // 3 does not divide D = 4096
  REQUIRE_FALSE(editor->valid());
  // Strip, masks, layers, costs, trade-offs and pipeline all show VWN m = 2: each tab,
  // when open, sits under a banner naming the design shown and the error.
  for (int i = 0; i < w->tabs()->count(); ++i) {
    if (w->tabs()->widget(i)->isAncestorOf(w->validationView())) continue;  // not over the design
    w->tabs()->setCurrentIndex(i);
    const QStringList banners = visible_banners(w.get());
    INFO("tab " << w->tabs()->tabText(i).toStdString());
    REQUIRE(banners.size() == 1);
    CHECK(banners[0].contains("stale", Qt::CaseInsensitive));
    CHECK(banners[0].contains("vwn m=2"));
    CHECK(banners[0].contains("not divisible"));
  }
  CHECK(w->windowTitle().contains("stale", Qt::CaseInsensitive));
  CHECK(w->statusCounts().contains("stale", Qt::CaseInsensitive));
  m->setValue(1);
  REQUIRE(editor->valid());
  w->waitForEvaluation();
  CHECK(visible_banners(w.get()).isEmpty());
  CHECK_FALSE(w->windowTitle().contains("stale", Qt::CaseInsensitive));
  CHECK(w->windowTitle().contains("vwn m=1"));
}

TEST_CASE("pipeline stages beyond the layers mark the Gantt as the last valid pipeline", "[gui][state][stale]") {
  auto w = test::started_window();
  gui::PipelineView* p = w->pipelineView();
  w->showTabOf(p);
  p->waitForRun();
  REQUIRE(p->result());
  CHECK(visible_banners(p).isEmpty());
  auto* pp = named<QSpinBox>(p, "/pipeline/pp");
  pp->setValue(64);  // 36 layers cannot fill 64 stages
  p->waitForRun();
  REQUIRE(p->errorAt("/pipeline/pp").size() > 0);
  QStringList banners = visible_banners(p);
  REQUIRE(banners.size() == 1);
  CHECK(banners[0].contains("stale", Qt::CaseInsensitive));
  CHECK(banners[0].contains("4 stages"));
  CHECK(banners[0].contains("64"));
  // The other tabs do not show the pipeline: no banner there.
  w->tabs()->setCurrentIndex(0);
  CHECK(visible_banners(w.get()).isEmpty());
  w->showTabOf(p);
  pp->setValue(6);
  p->waitForRun();
  CHECK(visible_banners(p).isEmpty());
  REQUIRE(p->result());
  CHECK(p->result()->options.stages == 6);
}

TEST_CASE("an invalid scenario marks the costs and trade-offs and masks and pipeline as stale", "[gui][state][stale]") {
  auto w = test::started_window();
  w->scenarioEditor()->tensorParallel()->setValue(3);  // 32 query heads over 3 devices
  REQUIRE(w->scenarioEditor()->errorAt("/scenario/parallel/tp").size() > 0);
  for (int i = 0; i < w->tabs()->count(); ++i) {
    w->tabs()->setCurrentIndex(i);
    const QString tab = w->tabs()->tabText(i).remove('&');
    INFO("tab " << tab.toStdString());
    const bool uses_scenario = tab != "Validation";  // the Layers tab's cost columns follow the scenario
    CHECK(visible_banners(w.get()).size() == (uses_scenario ? 1 : 0));
  }
  w->scenarioEditor()->tensorParallel()->setValue(2);
  w->waitForEvaluation();
  CHECK(visible_banners(w.get()).isEmpty());
}

TEST_CASE("choosing a kind in the Layers tab applies it at once with no editor warnings", "[gui][state][layers]") {
  auto w = test::started_window();
  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-intra"));
  w->waitForEvaluation();
  QTableView* view = layer_view(*w);
  w->showTabOf(view);
  const WarningLog log;
  for (const int row : {0, 1}) {
    const QModelIndex index = w->layerTable()->index(row, gui::LayerTableModel::Attention);
    view->setCurrentIndex(index);
    view->edit(index);
    const QPointer<QComboBox> box = qobject_cast<QComboBox*>(view->indexWidget(index));
    REQUIRE(box);
    // Pick "full" (layers 0 and 1 are intra) from the drop-down: what a click on the popup's item does (the
    // offscreen platform gives a popup no focus, so the item view's editor would close).
    const int full = box->findText("full");
    box->setCurrentIndex(full);
    emit box->activated(full);
    QCoreApplication::processEvents();
    INFO("row " << row);
    CHECK(test::hd_of(w->session()).layer_kinds[static_cast<std::size_t>(row)] == model::HdLayerKind::full);
    // Where the choice did not apply, Enter commits it (the old way).
    if (view->indexWidget(index)) {
      QKeyEvent enter(QEvent::KeyPress, Qt::Key_Return, Qt::NoModifier);
      QCoreApplication::sendEvent(view->indexWidget(index), &enter);
      QCoreApplication::processEvents();
    }
  }
  CHECK(test::hd_of(w->session()).layer_kinds[0] == model::HdLayerKind::full);
  CHECK(test::hd_of(w->session()).layer_kinds[1] == model::HdLayerKind::full);
  for (const QString& line : WarningLog::lines()) {
    INFO(line.toStdString());
    CHECK_FALSE(line.contains("does not belong to this view"));
    CHECK_FALSE(line.contains("closeEditor"));
    CHECK_FALSE(line.contains("commitData"));
  }
}

TEST_CASE("opening the Layers tab keeps the selected layer", "[gui][state][layers]") {
  auto w = test::started_window();
  QTableView* view = layer_view(*w);
  w->session()->setSelectedLayer(10);
  w->showTabOf(view);
  w->activateWindow();
  view->setFocus(Qt::TabFocusReason);
  QFocusEvent focus(QEvent::FocusIn, Qt::TabFocusReason);
  QCoreApplication::sendEvent(view, &focus);
  QCoreApplication::processEvents();
  CHECK(w->session()->selectedLayer() == 10);
  CHECK(view->currentIndex().row() == 10);
  // And the table follows a selection made elsewhere (the strip, the mask view).
  w->session()->setSelectedLayer(20);
  CHECK(view->currentIndex().row() == 20);
  // A new design (the model resets) keeps it too.
  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-intra"));
  CHECK(w->session()->selectedLayer() == 20);
  CHECK(view->currentIndex().row() == 20);
}

