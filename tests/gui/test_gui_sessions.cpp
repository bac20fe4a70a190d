// Sessions (issue 14, missing item 4): everything the window holds saved as one JSON
// document that opens to the same state and that the CLI reads to the same numbers; a
// Recent list; undo and redo of edits back to the exact earlier state; a bad file names
// its JSON pointer and changes nothing.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QSpinBox>
#include <QTabWidget>
#include <QUndoStack>

#include "gui_test_support.hpp"
#include "hdlab/simulator/pipeline_io.hpp"
#include "hdlab/simulator/report.hpp"
#include "hdlab/simulator/session_io.hpp"
#include "design_editor.hpp"
#include "form_helpers.hpp"
#include "main_window.hpp"
#include "mask_view.hpp"
#include "pipeline_view.hpp"
#include "scenario_editor.hpp"
#include "session.hpp"
#include "session_files.hpp"

using namespace hdlab;

namespace {

// A window on the defaults whose Recent list lives in `dir` (not the user's settings).
std::unique_ptr<gui::MainWindow> window_in(const std::filesystem::path& dir) {
  test::ensure_app();
  auto w = std::make_unique<gui::MainWindow>(gui_core::read_catalog(test::profiles()));
  w->sessionFiles()->setSettingsFile(QString::fromStdString((dir / "settings.ini").string()));
  REQUIRE(w->applyDefaults().isEmpty());
  w->resize(1400, 900);
  w->show();
  w->waitForEvaluation();
  w->pipelineView()->waitForRun();
  w->sessionFiles()->flushEdits();
  return w;
}

template <class W>
W* named(QWidget* root, const char* name) {
  auto* w = root->findChild<W*>(name);
  REQUIRE(w);
  return w;
}

QString qstr(const std::filesystem::path& p) { return QString::fromStdString(p.string()); }

// Everything a session holds, for comparing two windows (or one window at two times).
struct State {
  model::Config config;
  simulator::HardwareProfile hardware;
  simulator::Scenario scenario;
  model::Json pipeline;
  bool operator==(const State&) const = default;
};

State state_of(gui::MainWindow& w) {
  w.sessionFiles()->flushEdits();
  return {w.session()->config(), w.session()->hardware(), w.session()->scenario(), w.pipelineView()->optionsJson()};
}

// Edits in every part: design, hardware, scenario, pipeline, and the views.
void edit_everything(gui::MainWindow& w) {
  REQUIRE(w.designEditor()->selectDesignPreset("hd-n4-intra"));
  named<QSpinBox>(w.designEditor(), "/design/hd/n")->setValue(8);
  REQUIRE(w.scenarioEditor()->selectHardwarePreset("h200"));
  named<QSpinBox>(w.scenarioEditor(), "/scenario/decode/batch")->setValue(48);
  named<QSpinBox>(w.scenarioEditor(), "/scenario/parallel/tp")->setValue(2);
  named<QSpinBox>(w.pipelineView(), "/pipeline/pp")->setValue(3);
  gui::set_choice(named<QComboBox>(w.pipelineView(), "/pipeline/schedule"), "interleaved");
  named<QSpinBox>(w.pipelineView(), "/pipeline/virtual_stages")->setValue(3);
  named<QSpinBox>(w.pipelineView(), "/pipeline/microbatches")->setValue(12);
  gui::set_choice(named<QComboBox>(w.pipelineView(), "/pipeline/p2p"), "blocking");
  w.maskView()->tokensBox()->setValue(12);
  w.session()->setSelectedLayer(7);
  w.tabs()->setCurrentIndex(4);  // pipeline
  w.waitForEvaluation();
  w.pipelineView()->waitForRun();
  w.sessionFiles()->flushEdits();
}

}  // namespace

TEST_CASE("a saved session opens to the same config, hardware, scenario, pipeline and views", "[gui][sessions]") {
  const auto dir = test::temp_dir("sessions_roundtrip");
  auto a = window_in(dir);
  edit_everything(*a);
  const State saved = state_of(*a);
  REQUIRE(std::get<model::HdDesign>(saved.config.design.method).n == 8);
  REQUIRE(saved.hardware.name != test::h100().name);
  const auto path = dir / "study.json";
  REQUIRE(a->sessionFiles()->save(qstr(path)).isEmpty());
  CHECK(a->statusMessage().contains("Saved session"));

  // A fresh window on the defaults: different in every part until the session opens.
  auto b = window_in(dir);
  REQUIRE_FALSE(state_of(*b) == saved);
  REQUIRE(b->sessionFiles()->open(qstr(path)).isEmpty());
  b->waitForEvaluation();
  b->pipelineView()->waitForRun();
  const State opened = state_of(*b);
  CHECK(opened.config == saved.config);
  CHECK(opened.hardware == saved.hardware);
  CHECK(opened.scenario == saved.scenario);
  CHECK(opened.pipeline == saved.pipeline);
  CHECK(b->sessionFiles()->viewSettings() == a->sessionFiles()->viewSettings());
  CHECK(b->sessionFiles()->viewSettings().tab == "pipeline");
  CHECK(b->session()->selectedLayer() == 7);
  CHECK(b->maskView()->tokensBox()->value() == 12);
  // Tiles the user did not pick are saved as "the scenario's" (0) and follow it again.
  CHECK(b->sessionFiles()->viewSettings().mask.tile_q == 0);
  CHECK(b->maskView()->tileRowsBox()->value() == b->session()->scenario().attention.tile_q);
  CHECK(b->sessionFiles()->document() == a->sessionFiles()->document());
  // The views show what was opened: the pipeline ran the saved options.
  REQUIRE(b->pipelineView()->result());
  CHECK(b->pipelineView()->result()->options.stages == 3);
  CHECK(b->pipelineView()->result()->options.virtual_stages == 3);
  CHECK(b->pipelineView()->result()->options.p2p == simulator::P2pSends::blocking);
  CHECK(b->windowTitle().contains(QString::fromStdString(saved.hardware.name)));

  // The file is the CLI's format: the simulator's parser reads the GUI's state from it.
  const simulator::SessionDocument doc = simulator::parse_session(model::read_json_file(path.string()));
  CHECK(doc.config == saved.config);
  CHECK(doc.hardware == saved.hardware);
  CHECK(simulator::parse_scenario(doc.scenario) == saved.scenario);
  CHECK(doc.pipeline == saved.pipeline);
  CHECK(doc.gui["tab"] == "pipeline");
}

TEST_CASE("the CLI reads a saved session and gives the GUI's cost and pipeline", "[gui][sessions][cli]") {
  const auto dir = test::temp_dir("sessions_cli");
  auto w = window_in(dir);
  edit_everything(*w);
  const auto path = dir / "study.json";
  REQUIRE(w->sessionFiles()->save(qstr(path)).isEmpty());
  const gui::Session* s = w->session();

  auto run = [&](const std::string& args) {
    const auto out = dir / "out.json";
    const std::string cmd = "cd '" + std::string(HDLAB_SOURCE_DIR) + "' && '" + HDLAB_BINARY_DIR + "/cli/hdlab' " +
                            args + " > '" + out.string() + "' 2> '" + (dir / "err.txt").string() + "'";
    INFO(cmd);
    REQUIRE(std::system(cmd.c_str()) == 0);
    return model::read_json_file(out.string());
  };
  // No --hw, no scenario flags: all from the session.
  const model::Json cli_cost = run("cost '" + path.string() + "' --json");
  const model::Json gui_cost = model::Json::parse(
      simulator::cost_report(s->config(), s->hardware(), s->scenario(), {1024, 4096, 16384, 32768, 131072}).dump());
  CHECK(cli_cost["metrics"] == gui_cost["metrics"]);
  CHECK(cli_cost["scenario"] == gui_cost["scenario"]);
  CHECK(cli_cost["hardware"] == s->hardware().name);

  const model::Json cli_pipeline = run("pipeline '" + path.string() + "' --json --no-timeline");
  REQUIRE(w->pipelineView()->result());
  CHECK(cli_pipeline["pipeline"]["metrics"] ==
        model::Json::parse(simulator::to_json(w->pipelineView()->result()->metrics).dump()));
  CHECK(cli_pipeline["pipeline"]["options"]["schedule"] == "interleaved:3");
}

TEST_CASE("undo and redo restore the exact earlier states - edits of one field merge", "[gui][sessions][undo]") {
  const auto dir = test::temp_dir("sessions_undo");
  auto w = window_in(dir);
  gui::SessionFiles* files = w->sessionFiles();
  QUndoStack* stack = files->undoStack();
  REQUIRE(stack->count() == 0);  // the defaults are where history starts

  std::vector<State> states{state_of(*w)};
  auto step = [&](auto edit) {
    edit();
    w->waitForEvaluation();
    states.push_back(state_of(*w));
    REQUIRE_FALSE(states.back() == states[states.size() - 2]);
  };
  step([&] { named<QSpinBox>(w->designEditor(), "/design/hd/n")->setValue(6); });
  step([&] { named<QSpinBox>(w->scenarioEditor(), "/scenario/decode/batch")->setValue(12); });
  step([&] { REQUIRE(w->scenarioEditor()->selectHardwarePreset("h200")); });
  step([&] { named<QSpinBox>(w->pipelineView(), "/pipeline/pp")->setValue(6); });
  step([&] { REQUIRE(w->designEditor()->selectModelPreset("deepseek-v3")); });
  step([&] { w->designEditor()->setLayerKind(3, model::HdLayerKind::intra); });
  REQUIRE(stack->count() == 6);
  CHECK(stack->undoText() == "edit design/hd/layers/3");

  for (int i = 6; i > 0; --i) {
    stack->undo();
    INFO("after undoing step " << i);
    CHECK(state_of(*w) == states[static_cast<std::size_t>(i - 1)]);
  }
  // The fields show the restored values, not only the session.
  CHECK(named<QSpinBox>(w->designEditor(), "/design/hd/n")->value() == 4);
  CHECK(named<QSpinBox>(w->scenarioEditor(), "/scenario/decode/batch")->value() ==
        static_cast<int>(states[0].scenario.decode.batch));
  CHECK(named<QSpinBox>(w->pipelineView(), "/pipeline/pp")->value() == states[0].pipeline["pp"].get<int>());
  CHECK(w->session()->backboneLabel() == QString::fromStdString(states[0].config.base.name));
  for (int i = 1; i <= 6; ++i) {
    stack->redo();
    INFO("after redoing step " << i);
    CHECK(state_of(*w) == states[static_cast<std::size_t>(i)]);
  }
  CHECK(stack->count() == 6);  // undo and redo record nothing themselves

  // Consecutive edits of one field are one step; a new edit after undo drops the redo.
  auto* batch = named<QSpinBox>(w->scenarioEditor(), "/scenario/decode/batch");
  for (int v : {20, 21, 22, 23}) {
    batch->setValue(v);
    files->flushEdits();
  }
  CHECK(stack->count() == 7);
  stack->undo();
  CHECK(state_of(*w) == states[6]);
  named<QSpinBox>(w->scenarioEditor(), "/scenario/parallel/tp")->setValue(2);
  files->flushEdits();
  CHECK(stack->count() == 7);
  CHECK_FALSE(stack->canRedo());

  // Edit > Undo / Redo carry the usual shortcuts.
  QStringList shortcuts;
  for (QAction* menu : w->menuBar()->actions())
    if (menu->menu() && menu->text().remove('&') == "Edit")
      for (QAction* a : menu->menu()->actions())
        for (const QKeySequence& k : a->shortcuts()) shortcuts << k.toString();
  CHECK(shortcuts.contains("Ctrl+Z"));
  CHECK(shortcuts.contains("Ctrl+Shift+Z"));
}

TEST_CASE("Recent sessions: newest first, at most 8, a missing file leaves the list with a message",
          "[gui][sessions][recent]") {
  const auto dir = test::temp_dir("sessions_recent");
  auto w = window_in(dir);
  gui::SessionFiles* files = w->sessionFiles();
  files->clearRecent();
  std::vector<QString> paths;
  for (int i = 0; i < 10; ++i) {
    paths.push_back(qstr(dir / ("s" + std::to_string(i) + ".json")));
    REQUIRE(files->save(paths.back()).isEmpty());
  }
  QStringList recent = files->recent();
  REQUIRE(recent.size() == gui::SessionFiles::max_recent);
  CHECK(recent.front() == paths[9]);
  CHECK(recent.back() == paths[2]);
  // Opening one moves it to the front, once.
  REQUIRE(files->open(paths[4]).isEmpty());
  recent = files->recent();
  CHECK(recent.front() == paths[4]);
  CHECK(recent.count(paths[4]) == 1);
  CHECK(recent.size() == gui::SessionFiles::max_recent);

  // A file that is gone: a message naming it, and it leaves the list; nothing else changes.
  REQUIRE(QFile::remove(paths[7]));
  const State before = state_of(*w);
  const QString msg = files->openRecent(paths[7]);
  CHECK(msg.contains(paths[7]));
  CHECK(msg.contains("removed from Recent sessions"));
  CHECK(w->statusMessage() == msg);
  CHECK_FALSE(files->recent().contains(paths[7]));
  CHECK(files->recent().size() == gui::SessionFiles::max_recent - 1);
  CHECK(state_of(*w) == before);

  // The list is kept in the settings: another window sees it.
  auto other = window_in(dir);
  CHECK(other->sessionFiles()->recent() == files->recent());
}

TEST_CASE("a bad session file names the JSON pointer and changes nothing", "[gui][sessions][bad]") {
  const auto dir = test::temp_dir("sessions_bad");
  auto w = window_in(dir);
  edit_everything(*w);
  const auto good = dir / "good.json";
  REQUIRE(w->sessionFiles()->save(qstr(good)).isEmpty());
  const model::Json doc = model::read_json_file(good.string());
  REQUIRE(w->designEditor()->selectModelPreset("deepseek-v3"));  // something for a bad open to overwrite
  w->waitForEvaluation();
  w->sessionFiles()->flushEdits();
  const State before = state_of(*w);
  const model::Json document = w->sessionFiles()->document();
  const int steps = w->sessionFiles()->undoStack()->count();

  auto with = [&](const std::string& pointer, const model::Json& value) {
    model::Json d = doc;
    d[model::Json::json_pointer(pointer)] = value;
    return d;
  };
  model::Json typo = doc;
  typo["scenaro"] = typo["scenario"];
  typo.erase("scenario");
  const std::vector<std::pair<model::Json, std::string>> cases = {
      {with("/scenario/decode/batch", 0), "/scenario/decode/batch"},
      {typo, "/scenaro"},
      {with("/gui/mask/tokens", 100000), "/gui/mask/tokens"},
      {with("/gui/tab", "charts"), "/gui/tab"},
      {with("/pipeline/partition", model::Json::array({9, 9, 9})), "/pipeline/partition"},
      {with("/hardware/memory_gb", "lots"), "/hardware/memory_gb"},
      {with("/design/hd/n", -1), "/design/hd/n"},
      {with("/hardware", "no-such-device"), "/hardware"},
  };
  int i = 0;
  for (const auto& [bad, pointer] : cases) {
    const auto path = dir / ("bad" + std::to_string(i++) + ".json");
    std::ofstream(path) << bad.dump(2);
    const QString msg = w->sessionFiles()->open(qstr(path));
    INFO(msg.toStdString());
    CHECK(msg.contains(QString::fromStdString(pointer + ":")));
    CHECK(msg.contains(qstr(path)));
    CHECK(msg.contains("nothing changed"));
    CHECK(w->statusMessage() == msg);
    CHECK(state_of(*w) == before);
    CHECK(w->sessionFiles()->document() == document);
    CHECK(w->sessionFiles()->undoStack()->count() == steps);
  }
  // The typo gets the closest key.
  const QString msg = w->sessionFiles()->open(qstr(dir / "bad1.json"));
  CHECK(msg.contains("scenario"));
  // Not JSON at all: the file and the line.
  std::ofstream(dir / "broken.json") << "{\"backbone\": ";
  CHECK(w->sessionFiles()->open(qstr(dir / "broken.json")).contains("broken.json"));
  CHECK(state_of(*w) == before);
  // The good one still opens, and is one undo step.
  REQUIRE(w->sessionFiles()->open(qstr(good)).isEmpty());
  CHECK(w->sessionFiles()->undoStack()->count() == steps + 1);
  w->sessionFiles()->undoStack()->undo();
  CHECK(state_of(*w) == before);
}

TEST_CASE("a restored scenario's settings for several ranks leave when their ranks go back to one",
          "[gui][sessions][scenario]") {
  // The scenario refuses sequence_parallel and tp_all_reduce at tp = 1 and cp_comm at
  // cp = 1; a session saved with them must stay editable down to one rank.
  const auto dir = test::temp_dir("sessions_ranks");
  auto w = window_in(dir);
  simulator::Scenario s = w->session()->scenario();
  s.parallel.tp = 2;
  s.parallel.sequence_parallel = false;
  s.parallel.tp_all_reduce = simulator::TpAllReduce::library;
  s.parallel.cp = 2;
  s.parallel.cp_comm = simulator::CpComm::ring;
  w->scenarioEditor()->restore(nullptr, s, w->scenarioEditor()->hardwarePreset());
  w->waitForEvaluation();
  CHECK(w->session()->scenario() == s);  // kept while their ranks are there
  named<QSpinBox>(w->scenarioEditor(), "/scenario/parallel/tp")->setValue(1);
  named<QSpinBox>(w->scenarioEditor(), "/scenario/parallel/cp")->setValue(1);
  w->waitForEvaluation();
  CHECK(w->session()->inputError(gui::Session::Input::scenario).isEmpty());
  const simulator::ParallelScenario& p = w->session()->scenario().parallel;
  CHECK(p.tp == 1);
  CHECK(p.cp == 1);
  CHECK(p.tp_all_reduce == simulator::TpAllReduce::automatic);
  CHECK(p.cp_comm == simulator::CpComm::all_gather);
}

TEST_CASE("the FFN gate/up and gradient accumulation choices are restored with a scenario and edited into it",
          "[gui][sessions][scenario]") {
  const auto dir = test::temp_dir("sessions_gate_up");
  auto w = window_in(dir);
  auto* gate_up = w->scenarioEditor()->findChild<QComboBox*>("/scenario/ffn/gate_up");
  auto* accumulation = w->scenarioEditor()->findChild<QComboBox*>("/scenario/train/grad_accumulation");
  REQUIRE(gate_up);
  REQUIRE(accumulation);
  CHECK(gate_up->currentData().toString() == "fused");
  CHECK(accumulation->currentData().toString() == "fused");
  simulator::Scenario s = w->session()->scenario();
  s.ffn.gate_up = simulator::GateUp::separate;
  s.train.grad_accumulation = simulator::GradAccumulation::separate;
  w->scenarioEditor()->restore(nullptr, s, w->scenarioEditor()->hardwarePreset());
  w->waitForEvaluation();
  CHECK(gate_up->currentData().toString() == "separate");
  CHECK(accumulation->currentData().toString() == "separate");
  CHECK(w->session()->scenario() == s);
  gate_up->setCurrentIndex(gate_up->findData("fused"));
  accumulation->setCurrentIndex(accumulation->findData("fused"));
  w->waitForEvaluation();
  CHECK(w->session()->scenario().ffn.gate_up == simulator::GateUp::fused);
  CHECK(w->session()->scenario().train.grad_accumulation == simulator::GradAccumulation::fused);
  accumulation->setCurrentIndex(accumulation->findData("autocast"));
  w->waitForEvaluation();
  CHECK(w->session()->scenario().train.grad_accumulation == simulator::GradAccumulation::autocast);
}
