// Per-layer cost (issue 14, missing item 3): FLOPs, time, KV bytes and memory per layer
// from the simulator's own passes, in the Layers tab and as bars on the strip, and the
// kind of many selected layers set in one edit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include <QComboBox>
#include <QImage>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>

#include "design_editor.hpp"
#include "gui_test_support.hpp"
#include "window_test_support.hpp"
#include "hdlab/gui_core/layer_costs.hpp"
#include "hdlab/simulator/cost_model.hpp"
#include "layer_panel.hpp"
#include "layer_strip_widget.hpp"
#include "layer_table_model.hpp"
#include "main_window.hpp"
#include "scenario_editor.hpp"
#include "session.hpp"

using namespace hdlab;
using gui_core::CostPhase;
using gui_core::LayerQuantity;
using simulator::Metric;

namespace {

constexpr double rel = 1e-9;  // sums over layers against the simulator's totals: rounding only

const char* intra_design = R"({"hd": {"n": 4, "layers": {"full_every": 6, "rest": "intra"}}})";

struct Sums {
  double flops = 0, seconds = 0, kv = 0, weights = 0;
};
Sums sums(const gui_core::PhaseLayerCosts& p) {
  Sums s;
  for (const auto& l : p.layers) {
    s.flops += l.flops;
    s.seconds += l.seconds;
    s.kv += l.kv_bytes_per_seq;
    s.weights += l.weight_bytes;
  }
  return s;
}

// The layers' sums equal the simulator's totals for each phase, computed here from its
// own passes and evaluate()'s metrics.
void check_against_simulator(const model::Config& c, const simulator::Scenario& s) {
  const simulator::HardwareProfile hw = test::h100();
  const gui_core::LayerCosts costs = gui_core::layer_costs(c, hw, s);
  const simulator::Metrics m = simulator::evaluate(c, hw, s);
  REQUIRE(costs.layer_count() == static_cast<std::size_t>(c.effective.num_layers));
  auto ctx = std::make_unique<simulator::CostContext>();
  simulator::make_context(c, hw, s, *ctx);
  auto pass = std::make_unique<simulator::PassCost>();
  simulator::InferenceResult r;

  simulator::cost_decode(*ctx, false, s.decode.batch, s.decode.context, *pass, r);
  const Sums decode = sums(costs.at(CostPhase::decode));
  CHECK(decode.flops + simulator::table_total(pass->outside).flops == Approx(m[Metric::decode_flops]).epsilon(rel));
  CHECK(decode.seconds == Approx(r.time.layers_s).epsilon(rel));
  // The layers, the ops outside them and the collectives make the decode step (no framework overhead set).
  CHECK(decode.seconds + (r.time.total_s - r.time.layers_s) + r.comm.total() ==
        Approx(m[Metric::decode_step_s]).epsilon(rel));
  CHECK(decode.kv * static_cast<double>(s.decode.batch) == Approx(m[Metric::kv_bytes]).epsilon(rel));
  CHECK(decode.weights + costs.outside_weight_bytes == Approx(m[Metric::inference_weight_bytes]).epsilon(rel));

  simulator::cost_prefill(*ctx, *pass, r);
  const Sums prefill = sums(costs.at(CostPhase::prefill));
  CHECK(prefill.flops + simulator::table_total(pass->outside).flops == Approx(m[Metric::prefill_flops]).epsilon(rel));
  CHECK(prefill.seconds == Approx(r.time.layers_s).epsilon(rel));
  CHECK(prefill.seconds + (r.time.total_s - r.time.layers_s) + r.comm.total() ==
        Approx(m[Metric::prefill_s]).epsilon(rel));

  auto train = std::make_unique<simulator::TrainResult>();
  simulator::cost_train(*ctx, *pass, *train);
  const Sums forward = sums(costs.at(CostPhase::train_forward));
  CHECK(forward.flops + simulator::table_total(pass->outside).flops == Approx(pass->total().flops).epsilon(rel));
  CHECK(forward.seconds == Approx(train->forward.layers_s).epsilon(rel));
}

double cell(const gui::LayerTableModel* m, int row, int column) {
  return m->data(m->index(row, column), Qt::UserRole).toDouble();
}

}  // namespace

TEST_CASE("per-layer costs add up to the simulator's pass totals", "[gui][layercost]") {
  const model::Config qwen = test::profile_config("qwen3-8b.json");
  simulator::Scenario s;
  SECTION("HD n=4, intra with every 6th layer full") {
    check_against_simulator(test::with_design(qwen, intra_design), s);
  }
  SECTION("HD at tp = 2") {
    s.parallel.tp = 2;
    s.parallel.dp = 1;
    check_against_simulator(test::with_design(qwen, intra_design), s);
  }
  SECTION("MoE backbone: routed experts' weights") {
    check_against_simulator(test::profile_config("tiny-moe.json"), s);
  }
  SECTION("KV mirror (WeLM)") { check_against_simulator(test::profile_config("welm-80b.json"), s); }
  SECTION("looped with a prelude and a coda") {
    check_against_simulator(
        test::with_design(qwen, R"({"looped": {"prelude": 2, "coda": 2, "iterations": 4, "kv": "per_iteration"}})"), s);
  }
}

TEST_CASE("a looped recurrent layer costs its iterations - a prelude layer one run", "[gui][layercost]") {
  const model::Config c = test::with_design(
      test::profile_config("qwen3-8b.json"),
      R"({"looped": {"prelude": 2, "coda": 2, "iterations": 4, "kv": "per_iteration", "input_injection": false}})");
  const gui_core::LayerCosts costs = gui_core::layer_costs(c, test::h100(), simulator::Scenario{});
  for (int p = 0; p < gui_core::cost_phase_count; ++p) {
    const auto& layers = costs.at(static_cast<CostPhase>(p)).layers;
    INFO(gui_core::to_string(static_cast<CostPhase>(p)));
    const gui_core::LayerCost &prelude = layers[0], &recurrent = layers[2], &coda = layers[35];
    CHECK(prelude.passes == 1);
    CHECK(recurrent.passes == 4);
    CHECK(coda.passes == 1);
    // The same layer shape: four runs of the prelude layer's ops, four caches (one per iteration), one set of weights.
    CHECK(recurrent.flops == Approx(4 * prelude.flops).epsilon(1e-12));
    CHECK(recurrent.seconds == Approx(4 * prelude.seconds).epsilon(1e-12));
    CHECK(recurrent.kv_bytes_per_seq == Approx(4 * prelude.kv_bytes_per_seq).epsilon(1e-12));
    CHECK(recurrent.weight_bytes == prelude.weight_bytes);
  }
}

TEST_CASE("an HD intra layer costs less than a full one at long context", "[gui][layercost]") {
  const model::Config c = test::with_design(test::profile_config("qwen3-8b.json"), intra_design);
  simulator::Scenario s;
  s.prefill.tokens = 32768;
  s.decode.context = 32768;
  s.train.seq_len = 32768;
  s.attention.layout = model::Layout::stream_major;
  const gui_core::LayerCosts costs = gui_core::layer_costs(c, test::h100(), s);
  const auto& kinds = std::get<model::HdDesign>(c.design.method).layer_kinds;
  const auto full = std::find(kinds.begin(), kinds.end(), model::HdLayerKind::full) - kinds.begin();
  const auto intra = std::find(kinds.begin(), kinds.end(), model::HdLayerKind::intra) - kinds.begin();
  REQUIRE(full < static_cast<long>(kinds.size()));
  REQUIRE(intra < static_cast<long>(kinds.size()));
  const auto at = [&](CostPhase p, long layer) { return costs.at(p).layers[static_cast<std::size_t>(layer)]; };
  for (const CostPhase p : {CostPhase::prefill, CostPhase::train_forward}) {
    INFO(gui_core::to_string(p));
    // Same projections and FFN; the attention over 4 x 32k positions is what differs: a full layer's
    // pairs are every earlier position of every stream, an intra layer's its own stream's (a quarter).
    CHECK(at(p, intra).seconds < 0.8 * at(p, full).seconds);
    CHECK(at(p, intra).flops < 0.8 * at(p, full).flops);
  }
  // A decode step reads the whole cache once either way (memory bound): the same time or less,
  // a quarter of the attention FLOPs.
  CHECK(at(CostPhase::decode, intra).seconds <= at(CostPhase::decode, full).seconds);
  CHECK(at(CostPhase::decode, intra).flops < at(CostPhase::decode, full).flops);
  // Both keep every position of every stream: the same cache.
  CHECK(costs.at(CostPhase::decode).layers[static_cast<std::size_t>(intra)].kv_bytes_per_seq ==
        costs.at(CostPhase::decode).layers[static_cast<std::size_t>(full)].kv_bytes_per_seq);
}

TEST_CASE("display units are fixed per quantity", "[gui][layercost]") {
  CHECK(gui_core::format_value(4.12e-4, LayerQuantity::time) == "0.412 ms");
  CHECK(gui_core::format_value(5.154e10, LayerQuantity::flops) == "51.54 GFLOP");
  CHECK(gui_core::format_value(6.7108864e7, LayerQuantity::kv_bytes) == "67.11 MB");
  CHECK(gui_core::format_value(1.5e9, LayerQuantity::memory) == "1500.00 MB");
}

TEST_CASE("the Layers tab shows the core's per-layer costs with units for the chosen phase", "[gui][layercost]") {
  auto w = test::started_window();
  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-intra"));
  w->waitForEvaluation();
  gui::Session* s = w->session();
  const gui_core::LayerCosts expected = gui_core::layer_costs(s->config(), s->hardware(), s->scenario());
  const gui::LayerTableModel* m = w->layerTable();
  REQUIRE(m->rowCount() == 36);
  using Col = gui::LayerTableModel;
  for (const auto& [column, unit] : {std::pair{Col::Flops, "[GFLOP]"}, std::pair{Col::Time, "[ms]"},
                                     std::pair{Col::KvBytes, "[MB/seq]"}, std::pair{Col::Memory, "[MB/device]"}}) {
    CHECK(m->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString().contains(unit));
    CHECK_FALSE(m->headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
  }
  CHECK(m->headerData(Col::KvBytes, Qt::Horizontal, Qt::ToolTipRole).toString().contains("4,096 tokens"));
  gui::LayerPanel* panel = w->layerPanel();
  for (const CostPhase phase : {CostPhase::decode, CostPhase::prefill, CostPhase::train_forward}) {
    panel->phaseBox()->setCurrentIndex(panel->phaseBox()->findData(static_cast<int>(phase)));
    INFO(gui_core::to_string(phase));
    CHECK(panel->summary().startsWith(gui_core::to_string(phase)));
    for (int row = 0; row < 36; ++row) {
      const gui_core::LayerCost& c = expected.at(phase).layers[static_cast<std::size_t>(row)];
      CHECK(cell(m, row, Col::Flops) == c.flops);
      CHECK(cell(m, row, Col::Time) == c.seconds);
      CHECK(cell(m, row, Col::KvBytes) == c.kv_bytes_per_seq);
      CHECK(cell(m, row, Col::Memory) == c.memory_bytes);
    }
    // The strip's bars follow the phase.
    CHECK(w->layerStrip()->barPhase() == phase);
  }
  // Shown in the column's unit, the raw value under UserRole.
  const double t0 = cell(m, 0, Col::Time);
  CHECK(m->data(m->index(0, Col::Time), Qt::DisplayRole).toString() == QString("%L1").arg(t0 * 1e3, 0, 'f', 3));
  CHECK(m->data(m->index(0, Col::Time), Qt::ToolTipRole).toString().contains(" ms on one device"));

  // A looped design's recurrent layers say how many runs their figures hold.
  REQUIRE(w->designEditor()->selectDesignPreset("looped-x4"));
  w->waitForEvaluation();
  CHECK(m->data(m->index(5, Col::Flops), Qt::ToolTipRole).toString().contains("(4 runs per pass)"));
}

TEST_CASE("the strip draws one bar per layer scaled to the chosen quantity", "[gui][layercost]") {
  auto w = test::started_window();
  gui::Session* s = w->session();
  simulator::Scenario long_context = s->scenario();
  long_context.prefill.tokens = 32768;
  s->setScenario(long_context);
  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-intra"));
  w->waitForEvaluation();
  gui::LayerStripWidget* strip = w->layerStrip();
  REQUIRE(strip->barQuantity() == LayerQuantity::time);
  REQUIRE(strip->barPhase() == CostPhase::decode);
  strip->setBarPhase(CostPhase::prefill);
  const gui_core::LayerCosts expected = gui_core::layer_costs(s->config(), s->hardware(), s->scenario());
  const auto& layers = expected.at(CostPhase::prefill).layers;
  for (const LayerQuantity q : {LayerQuantity::time, LayerQuantity::flops, LayerQuantity::memory}) {
    strip->setBarQuantity(q);
    INFO(gui_core::to_string(q));
    std::size_t top = 0;
    for (std::size_t l = 0; l < layers.size(); ++l)
      if (gui_core::value(layers[l], q) > gui_core::value(layers[top], q)) top = l;
    const QRectF tallest = strip->barRect(static_cast<int>(top));
    REQUIRE(tallest.height() > 10);
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const QRectF bar = strip->barRect(static_cast<int>(l));
      CHECK(bar.bottom() == Approx(tallest.bottom()));
      CHECK(bar.height() / tallest.height() ==
            Approx(gui_core::value(layers[l], q) / gui_core::value(layers[top], q)).epsilon(1e-12));
    }
  }
  // A prefill of 32k tokens: full layers attend over four streams' positions, intra layers their own stream's.
  strip->setBarQuantity(LayerQuantity::time);
  const auto& kinds = test::hd_of(s).layer_kinds;
  const auto first = [&](model::HdLayerKind k) {
    return static_cast<int>(std::find(kinds.begin(), kinds.end(), k) - kinds.begin());
  };
  const QRectF full = strip->barRect(first(model::HdLayerKind::full)),
               intra = strip->barRect(first(model::HdLayerKind::intra));
  CHECK(full.height() > 1.2 * intra.height());
  // Drawn: the bar's colour inside the tallest bar; the background where bars are off.
  const QPoint inside = full.center().toPoint();
  CHECK(strip->grab().toImage().pixelColor(inside) == QColor(0x3A, 0x3A, 0x4A));
  strip->setBarQuantity(std::nullopt);
  CHECK(strip->barRect(0).isEmpty());
  CHECK(strip->grab().toImage().pixelColor(inside) != QColor(0x3A, 0x3A, 0x4A));
  // The panel's selectors show the strip's choice.
  CHECK(w->layerPanel()->barsBox()->currentData().toInt() == -1);
  CHECK(w->layerPanel()->phaseBox()->currentData().toInt() == static_cast<int>(CostPhase::prefill));
  // While the typed scenario is not valid, the bars (the last valid scenario's) are grey.
  strip->setBarQuantity(LayerQuantity::time);
  w->scenarioEditor()->tensorParallel()->setValue(3);  // 32 query heads do not split over 3 devices
  REQUIRE_FALSE(w->session()->inputError(gui::Session::Input::scenario).isEmpty());
  CHECK(strip->grab().toImage().pixelColor(inside) == QColor(0xB8, 0xB8, 0xB8));
}

TEST_CASE("setting the kind of many selected layers is one design change", "[gui][layercost]") {
  auto w = test::started_window();
  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-intra"));
  w->waitForEvaluation();
  const std::vector<model::HdLayerKind> before = test::hd_of(w->session()).layer_kinds;
  gui::LayerPanel* panel = w->layerPanel();
  w->showTabOf(panel);
  QTableView* view = panel->view();
  REQUIRE(view->model() == w->layerTable());
  CHECK(view->selectionMode() == QAbstractItemView::ExtendedSelection);
  // Rows 2-9 and 20 (a Shift range and a Ctrl click).
  auto* m = w->layerTable();
  view->selectionModel()->select(QItemSelection(m->index(2, 0), m->index(9, 0)),
                                 QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  view->selectionModel()->select(m->index(20, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
  CHECK(panel->selectedLayers() == QList<int>{2, 3, 4, 5, 6, 7, 8, 9, 20});
  int changes = 0;
  QObject::connect(w->session(), &gui::Session::configChanged, [&changes] { ++changes; });
  panel->kindBox()->setCurrentIndex(panel->kindBox()->findText("full"));
  REQUIRE(panel->setKindButton()->isEnabled());
  panel->setKindButton()->click();
  CHECK(changes == 1);
  const std::vector<model::HdLayerKind>& after = test::hd_of(w->session()).layer_kinds;
  for (std::size_t l = 0; l < after.size(); ++l) {
    INFO("layer " << l);
    const bool selected = (l >= 2 && l <= 9) || l == 20;
    CHECK(after[l] == (selected ? model::HdLayerKind::full : before[l]));
  }
  // The selection stays for the next edit; the costs follow the new design after one evaluation.
  CHECK(panel->selectedLayers().size() == 9);
  w->waitForEvaluation();
  gui::Session* s = w->session();
  const gui_core::LayerCosts expected = gui_core::layer_costs(s->config(), s->hardware(), s->scenario());
  CHECK(cell(m, 3, gui::LayerTableModel::Time) == expected.at(CostPhase::decode).layers[3].seconds);
  CHECK(m->data(m->index(3, gui::LayerTableModel::Attention), Qt::DisplayRole) == "full");
  // The same from the context menu's action.
  panel->setSelectedKind(model::HdLayerKind::intra);
  CHECK(changes == 2);
  CHECK(test::hd_of(w->session()).layer_kinds[20] == model::HdLayerKind::intra);
  CHECK(test::hd_of(w->session()).layer_kinds[5] == model::HdLayerKind::intra);
  // Baseline designs have no per-layer kinds to set.
  w->designEditor()->setMethod("baseline");
  CHECK_FALSE(panel->setKindButton()->isEnabled());
}
