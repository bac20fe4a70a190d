// Compare mode (issue 14, missing item 2): pinned designs (with their hardware) overlaid on
// every trade-off chart with the core's values, their Gantts on the current one's time
// axis, and the side-by-side table whose values and ratios (pin / current) are the
// simulator's numbers.
#include <catch2/catch.hpp>

#include <cmath>

#include <QLabel>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include "chart_panel.hpp"
#include "compare_view.hpp"
#include "design_editor.hpp"
#include "gui_test_support.hpp"
#include "window_test_support.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/pipeline_chart.hpp"
#include "hdlab/gui_core/compare.hpp"
#include "hdlab/gui_core/metric_info.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"
#include "main_window.hpp"
#include "pipeline_view.hpp"
#include "scenario_editor.hpp"
#include "session.hpp"
#include "tradeoff_view.hpp"

using namespace hdlab;

namespace {

// What was pinned, as the test saw the session at that moment.
struct Pinned {
  std::string label;
  std::string key;  // what legends and headers call it: "pin 1"
  model::Config config;
  simulator::HardwareProfile hardware;
  simulator::Scenario scenario;
  simulator::PipelineOptions pipeline;
};

Pinned pin_current(gui::MainWindow& w) {
  w.waitForEvaluation();
  w.pipelineView()->waitForRun();
  REQUIRE(w.pipelineView()->result());
  const gui::Session& s = *w.session();
  Pinned p{gui_core::pin_label(s.backboneLabel().toStdString(), s.config().design, s.hardwareLabel().toStdString()),
           "", s.config(), s.hardware(), s.scenario(), w.pipelineView()->result()->options};
  REQUIRE(w.pinCurrent().isEmpty());
  w.comparison()->waitForEvaluation();
  const auto& entries = w.comparison()->pins().entries();
  REQUIRE_FALSE(entries.empty());
  CHECK(entries.back().pin.label == p.label);
  p.key = gui_core::pin_key(entries.back().id);
  return p;
}

QLineSeries* series_named(QChart* chart, const std::string& name) {
  for (QAbstractSeries* s : chart->series())
    if (s->name().toStdString() == name) return qobject_cast<QLineSeries*>(s);
  return nullptr;
}

bool mentions(QChart* chart, const std::string& label) {
  for (QAbstractSeries* s : chart->series())
    if (s->name().toStdString().find(label) != std::string::npos) return true;
  return false;
}

// The points the chart draws for a pin's curve where it fits, against the core's.
void check_curve(QChart* chart, const std::string& label, const std::vector<gui_core::CurvePoint>& expected,
                 double scale) {
  CAPTURE(chart->title().toStdString(), label);
  QLineSeries* s = series_named(chart, label);
  REQUIRE(s);
  std::vector<QPointF> want;
  for (const auto& p : expected)
    if (p.design_fits) want.emplace_back(p.x, p.design * scale);
  REQUIRE(s->points().size() == static_cast<int>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    CHECK(s->points()[static_cast<int>(i)].x() == want[i].x());
    CHECK(s->points()[static_cast<int>(i)].y() == want[i].y());
  }
}

void check_overlays(gui::MainWindow& w, const Pinned& p) {
  const gui_core::Tradeoffs t = gui_core::compute_tradeoffs(p.config, p.hardware, p.scenario,
                                                            gui_core::default_grid(p.config, p.scenario));
  const QList<gui::ChartPanel*> panels = w.tradeoffView()->panels();
  // Cost vs size: the pin's five ratios, each its own series in the pin's line style.
  QLineSeries* decode = series_named(panels[0]->chart(), p.key + ": decode step");
  REQUIRE(decode);
  REQUIRE(t.by_size.size() == static_cast<std::size_t>(decode->points().size()));
  for (std::size_t i = 0; i < t.by_size.size(); ++i) {
    CHECK(decode->points()[static_cast<int>(i)].x() == t.by_size[i].x);
    CHECK(decode->points()[static_cast<int>(i)].y() == t.by_size[i].decode_step_ratio);
  }
  REQUIRE(series_named(panels[0]->chart(), p.key));  // the legend key naming the pin
  check_curve(panels[1]->chart(), p.key, t.decode_vs_batch, 1.0);
  check_curve(panels[2]->chart(), p.key, t.decode_vs_context, 1.0);
  check_curve(panels[3]->chart(), p.key, t.kv_vs_context, 1e-9);
  CHECK(w.tradeoffView()->findChild<QLabel*>()->text().contains(QString::fromStdString(p.key + " = " + p.label)));
}

// The seconds per unit of a Gantt's time axis, from its title "time (ms)".
double seconds_per_unit(const QValueAxis* x) {
  const QString t = x->titleText();
  return t.contains("(us)") ? 1e-6 : t.contains("(ms)") ? 1e-3 : 1.0;
}

const QValueAxis* time_axis(QChart* chart) {
  const QList<QAbstractAxis*> axes = chart->axes(Qt::Horizontal);
  REQUIRE(axes.size() == 1);
  return qobject_cast<const QValueAxis*>(axes.front());
}

}  // namespace

TEST_CASE("pin list: at most four pins, ids stable, repeated labels numbered", "[gui][compare]") {
  gui_core::PinList pins;
  gui_core::Pin p;
  p.label = "Qwen3-8B + HD n=4 on H100";
  const int a = pins.add(p);
  const int b = pins.add(p);
  CHECK(pins.entries()[1].pin.label == "Qwen3-8B + HD n=4 on H100 #2");
  pins.add(p);
  pins.add(p);
  CHECK(pins.full());
  CHECK_THROWS_WITH(pins.add(p), Catch::Contains("/pins") && Catch::Contains("at most 4"));
  CHECK(pins.remove(a));
  CHECK_FALSE(pins.remove(a));
  CHECK(pins.entries().front().id == b);
  CHECK(pins.pending().size() == 3);
  CHECK_FALSE(pins.set_result(a, {}));  // removed meanwhile: the result is dropped
  CHECK(pins.set_result(b, {}));
  CHECK(pins.pending().size() == 2);
}

TEST_CASE("compare rows: values and ratios pin / current are the simulator's numbers", "[gui][compare]") {
  const model::Config qwen = test::profile_config("qwen3-8b.json");
  const model::Config hd = test::with_design(qwen, R"({"hd": {"n": 4, "layers": "full"}})");
  const simulator::HardwareProfile hw = test::h100();
  const simulator::Scenario s;
  simulator::PipelineOptions o;
  o.stages = 4;
  o.microbatches = 8;
  gui_core::Pin pin{"Qwen3-8B alone on H100", qwen, hw, s, {{1, 8}, {4096}}, o};
  const gui_core::PinResult r = gui_core::evaluate_pin(pin);
  const simulator::Metrics current = simulator::evaluate(hd, hw, s);
  const simulator::Metrics pinned = simulator::evaluate(qwen, hw, s);
  const simulator::PipelineResult current_run = simulator::simulate_pipeline(hd, hw, s, o);
  const simulator::PipelineResult pinned_run = simulator::simulate_pipeline(qwen, hw, s, o);

  const auto rows = gui_core::compare_rows(current, current_run, {r});
  REQUIRE(rows.size() == static_cast<std::size_t>(simulator::metric_count) + 1);
  for (int i = 0; i < simulator::metric_count; ++i) {
    const auto m = static_cast<simulator::Metric>(i);
    const auto& row = rows[static_cast<std::size_t>(i)];
    CAPTURE(row.name);
    CHECK(row.name == simulator::metric_name(m));
    CHECK(row.unit == simulator::metric_unit(m));
    CHECK(row.current == current[m]);
    REQUIRE(row.pins.size() == 1);
    CHECK(row.pins[0] == pinned[m]);
    if (current[m] != 0) CHECK(row.ratios[0] == pinned[m] / current[m]);
    else CHECK(std::isnan(row.ratios[0]));
  }
  const auto& step = rows.back();
  CHECK(step.name == "pipeline_makespan_s");
  CHECK(step.unit == "s");
  CHECK(step.current == current_run.metrics.makespan_s);
  CHECK(step.pins[0] == pinned_run.metrics.makespan_s);
  CHECK(step.ratios[0] == pinned_run.metrics.makespan_s / current_run.metrics.makespan_s);
  CHECK(step.ratios[0] < 1.0);  // the backbone alone steps faster than HD n=4
  CHECK(gui_core::shared_time_end({&current_run, &pinned_run}) == current_run.metrics.makespan_s);
  // Without any pipeline run there is no makespan row.
  CHECK(gui_core::compare_rows(current, std::nullopt, {}).size() == static_cast<std::size_t>(simulator::metric_count));
}

TEST_CASE("pinning two designs overlays them on every trade-off chart with the core's values", "[gui][compare]") {
  auto w = test::started_window({1400, 900}, test::WaitFor::pipeline);
  const Pinned full = pin_current(*w);
  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-intra"));
  const Pinned intra = pin_current(*w);
  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-full"));
  w->waitForEvaluation();
  CHECK(full.label == "Qwen3-8B + HD n=4 on " + w->session()->hardwareLabel().toStdString());
  CHECK(intra.label == "Qwen3-8B + HD n=4 (30 intra, 6 full) on " + w->session()->hardwareLabel().toStdString());
  REQUIRE(w->comparison()->evaluated().size() == 2);
  check_overlays(*w, full);
  check_overlays(*w, intra);
  // The current design's own curve is still there, under its short label.
  CHECK(series_named(w->tradeoffView()->panels()[1]->chart(), "HD n=4"));

  // The compare table: current, then value and ratio per pin, all the simulator's numbers.
  const gui::CompareModel* m = w->compareView()->model();
  REQUIRE(m->columnCount() == gui::CompareModel::FirstPin + 4);
  CHECK(m->headerData(gui::CompareModel::ratioColumn(1), Qt::Horizontal, Qt::DisplayRole).toString().toStdString() ==
        intra.key + " / current");
  CHECK(m->headerData(gui::CompareModel::valueColumn(1), Qt::Horizontal, Qt::ToolTipRole).toString().toStdString() ==
        intra.label);
  const simulator::Metrics current = simulator::evaluate(w->session()->config(), w->session()->hardware(),
                                                         w->session()->scenario());
  const simulator::Metrics pinned = simulator::evaluate(intra.config, intra.hardware, intra.scenario);
  for (simulator::Metric metric : {simulator::Metric::decode_tokens_per_s, simulator::Metric::prefill_s,
                                   simulator::Metric::kv_bytes_per_seq, simulator::Metric::train_step_s}) {
    const int row = static_cast<int>(metric);
    CAPTURE(simulator::metric_name(metric));
    // In words, as the Costs tab names it; the CLI/CSV column in its tooltip.
    CHECK(m->data(m->index(row, gui::CompareModel::Name), Qt::DisplayRole).toString() ==
          gui_core::find_metric_info(metric)->label);
    CHECK(m->data(m->index(row, gui::CompareModel::Name), Qt::ToolTipRole).toString().contains(simulator::metric_name(metric)));
    CHECK(m->data(m->index(row, gui::CompareModel::Unit), Qt::DisplayRole).toString() == simulator::metric_unit(metric));
    CHECK(m->data(m->index(row, gui::CompareModel::Current), Qt::UserRole).toDouble() == current[metric]);
    CHECK(m->data(m->index(row, gui::CompareModel::valueColumn(1)), Qt::UserRole).toDouble() == pinned[metric]);
    CHECK(m->data(m->index(row, gui::CompareModel::ratioColumn(1)), Qt::UserRole).toDouble() ==
          pinned[metric] / current[metric]);
  }
  // HD intra attends within each stream: its prefill is cheaper than full HD's.
  CHECK(m->data(m->index(static_cast<int>(simulator::Metric::prefill_s), gui::CompareModel::ratioColumn(1)),
                Qt::UserRole)
            .toDouble() < 1.0);
}

TEST_CASE("pinned Gantts share the current Gantt's time axis, up to the longest makespan", "[gui][compare]") {
  auto w = test::started_window({1400, 900}, test::WaitFor::pipeline);
  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-intra"));
  const Pinned intra = pin_current(*w);
  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-full"));
  w->waitForEvaluation();
  w->pipelineView()->waitForRun();
  REQUIRE(w->pipelineView()->pinnedPanels().size() == 1);
  const simulator::PipelineResult pinned =
      simulator::simulate_pipeline(intra.config, intra.hardware, intra.scenario, intra.pipeline);
  const double current = w->pipelineView()->result()->metrics.makespan_s;
  const double longest = std::max(current, pinned.metrics.makespan_s);
  CHECK(current != pinned.metrics.makespan_s);
  const QValueAxis* a = time_axis(w->pipelineView()->panel()->chart());
  const QValueAxis* b = time_axis(w->pipelineView()->pinnedPanels().front()->chart());
  CHECK(a->titleText() == b->titleText());
  CHECK(a->min() == b->min());
  CHECK(a->max() == b->max());
  CHECK(a->max() * seconds_per_unit(a) >= longest);
  // Nice numbers round the end up to a round tick, at most to the next power of ten.
  CHECK(a->max() * seconds_per_unit(a) < longest * 10);
  CHECK(w->pipelineView()->pinnedPanels().front()->chart()->title().startsWith(QString::fromStdString(intra.key + ": ")));
  // The table's makespan row is the simulator's.
  const gui::CompareModel* m = w->compareView()->model();
  const int row = m->rowCount() - 1;
  CHECK(m->data(m->index(row, gui::CompareModel::Name), Qt::DisplayRole).toString() == "Pipeline makespan (Pipeline tab)");
  CHECK(m->data(m->index(row, gui::CompareModel::Name), Qt::ToolTipRole).toString().contains("pipeline_makespan_s"));
  CHECK(m->data(m->index(row, gui::CompareModel::Current), Qt::UserRole).toDouble() == current);
  CHECK(m->data(m->index(row, gui::CompareModel::valueColumn(0)), Qt::UserRole).toDouble() == pinned.metrics.makespan_s);
}

TEST_CASE("removing a pin removes its overlays, Gantt and columns", "[gui][compare]") {
  auto w = test::started_window({1400, 900}, test::WaitFor::pipeline);
  const Pinned full = pin_current(*w);
  REQUIRE(w->designEditor()->selectDesignPreset("hd-n4-intra"));
  const Pinned intra = pin_current(*w);
  w->waitForEvaluation();
  REQUIRE(w->comparison()->pins().size() == 2);
  w->pipelineView()->waitForRun();
  // The intra design's Gantt by itself, as it is drawn with nothing pinned.
  const auto own = charts::build_gantt_chart(
      charts::pipeline_gantt_chart(*w->pipelineView()->result(), *w->pipelineView()->fit()));
  const double alone = time_axis(own.get())->max();
  CHECK(time_axis(w->pipelineView()->panel()->chart())->max() >= alone);  // the full design's may stretch it
  w->comparison()->remove(w->comparison()->pins().entries().front().id);
  for (gui::ChartPanel* p : w->tradeoffView()->panels()) {
    CHECK_FALSE(mentions(p->chart(), full.key));
    CHECK(mentions(p->chart(), intra.key));
  }
  CHECK(w->pipelineView()->pinnedPanels().size() == 1);
  CHECK(time_axis(w->pipelineView()->panel()->chart())->max() == alone);  // intra beside intra
  CHECK(w->compareView()->model()->columnCount() == gui::CompareModel::FirstPin + 2);
  w->comparison()->clear();
  for (gui::ChartPanel* p : w->tradeoffView()->panels()) CHECK_FALSE(mentions(p->chart(), intra.key));
  CHECK(w->pipelineView()->pinnedPanels().isEmpty());
  CHECK(w->compareView()->model()->columnCount() == gui::CompareModel::FirstPin);
  // Alone again, the Gantt runs to its own makespan.
  CHECK(time_axis(w->pipelineView()->panel()->chart())->max() == alone);
}

TEST_CASE("a pin keeps the hardware it was pinned with and is evaluated on that profile", "[gui][compare]") {
  auto w = test::started_window({1400, 900}, test::WaitFor::pipeline);
  const Pinned h100 = pin_current(*w);
  REQUIRE(w->scenarioEditor()->selectHardwarePreset("a100"));
  const Pinned a100 = pin_current(*w);
  REQUIRE(w->scenarioEditor()->selectHardwarePreset("h100"));
  w->waitForEvaluation();
  CHECK(a100.hardware.name != h100.hardware.name);
  CHECK(a100.label.find("A100") != std::string::npos);
  const auto& entries = w->comparison()->pins().entries();
  REQUIRE(entries.size() == 2);
  CHECK(entries[1].pin.hardware == a100.hardware);
  REQUIRE(entries[1].result);
  const simulator::Metrics on_a100 = simulator::evaluate(a100.config, a100.hardware, a100.scenario);
  const simulator::Metrics on_h100 = simulator::evaluate(h100.config, h100.hardware, h100.scenario);
  CHECK(entries[1].result->tradeoffs.design[simulator::Metric::decode_tokens_per_s] ==
        on_a100[simulator::Metric::decode_tokens_per_s]);
  CHECK(on_a100[simulator::Metric::decode_tokens_per_s] < on_h100[simulator::Metric::decode_tokens_per_s]);
  const gui::CompareModel* m = w->compareView()->model();
  const int row = static_cast<int>(simulator::Metric::decode_tokens_per_s);
  CHECK(m->data(m->index(row, gui::CompareModel::valueColumn(1)), Qt::UserRole).toDouble() ==
        on_a100[simulator::Metric::decode_tokens_per_s]);
  CHECK(m->data(m->index(row, gui::CompareModel::Current), Qt::UserRole).toDouble() ==
        on_h100[simulator::Metric::decode_tokens_per_s]);
  check_overlays(*w, a100);
}

