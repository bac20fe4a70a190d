// Fit made obvious (issue 14): a phase whose memory does not fit the device is red in the
// costs headline, the metrics table, the pipeline's summary, device table and Gantt title,
// with the need, the capacity and the smallest change that fits; a scenario that fits
// shows none of it.
#include <catch2/catch.hpp>

#include <cmath>

#include <QLabel>
#include <QtCharts/QChart>

#include "chart_panel.hpp"
#include "gui_test_support.hpp"
#include "window_test_support.hpp"
#include "hdlab/gui_core/memory_fit.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/simulator/fit.hpp"
#include "main_window.hpp"
#include "metrics_model.hpp"
#include "pipeline_view.hpp"
#include "session.hpp"
#include "tradeoff_view.hpp"

using namespace hdlab;

namespace {

const QColor kRed(0xB0, 0x00, 0x20);

void set_tp(gui::MainWindow& w, std::int64_t tp) {
  simulator::Scenario s = w.session()->scenario();
  s.parallel.tp = tp;
  w.session()->setScenario(s);
  w.waitForEvaluation();
  w.pipelineView()->waitForRun();
}

bool red(const QAbstractItemModel& m, int row, int column) {
  const QVariant v = m.data(m.index(row, column), Qt::ForegroundRole);
  return v.isValid() && v.value<QBrush>().color() == kRed;
}

int metric_row(simulator::Metric m) { return gui::MetricsModel::rowOf(m); }

}  // namespace

TEST_CASE("metrics belong to the phase whose memory they assume", "[gui][fit]") {
  using simulator::FitPhase;
  using simulator::Metric;
  CHECK(gui_core::metric_phase(Metric::decode_tokens_per_s) == FitPhase::decode);
  CHECK(gui_core::metric_phase(Metric::kv_bytes) == FitPhase::decode);
  CHECK(gui_core::metric_phase(Metric::prefill_s) == FitPhase::prefill);
  CHECK(gui_core::metric_phase(Metric::train_step_s) == FitPhase::train);
  CHECK_FALSE(gui_core::metric_phase(Metric::kv_bytes_per_seq));
  CHECK_FALSE(gui_core::metric_phase(Metric::max_batch_seqs));
  CHECK_FALSE(gui_core::metric_phase(Metric::params_total));
}

TEST_CASE("costs: decode at batch 32 whose KV cache does not fit is red in the headline and the table",
          "[gui][fit]") {
  auto w = test::started_window({1400, 900}, test::WaitFor::pipeline);
  const gui::Session& s = *w->session();
  REQUIRE(s.scenario().decode.batch == 32);
  REQUIRE(s.scenario().decode.context == 4096);
  REQUIRE(s.scenario().parallel.tp == 1);
  // By hand: bf16 weights + 32 caches of 36 layers x 4 x 4096 positions x (K + V) x 8 x 128 x 2 B.
  const double weights = static_cast<double>(model::count_params(s.config()).total) * 2;
  const double kv = 36 * 4.0 * 4096 * 2 * 8 * 128 * 2;
  const double usable = 80e9 * 0.9;
  REQUIRE(weights + 32 * kv > usable);
  const auto batch = static_cast<std::int64_t>(std::floor((usable - weights) / kv));
  CHECK(batch == 21);

  const QString headline = w->costsView()->headline();
  CHECK(headline.contains("color:#B00020"));
  CHECK(headline.contains("Does not fit:"));
  const simulator::MemoryFit fit = simulator::memory_fit(s.config(), s.hardware(), s.scenario());
  CHECK(headline.contains(QString::fromStdString(simulator::describe(fit.decode)).toHtmlEscaped()));
  CHECK(headline.contains("decode at batch 32 x 4096 tokens does not fit"));
  CHECK(headline.contains(QString("Fits at batch %1 (").arg(batch)));
  CHECK(headline.contains("or tp 2 (2 devices"));
  // Training (254 GB with Adam at tp 1) does not fit either; one 4096-token prefill does.
  CHECK(headline.contains("training at micro-batch 1 x 4096 tokens does not fit"));
  CHECK_FALSE(headline.contains("prefill of"));

  const gui::MetricsModel& m = *w->costsView()->metrics();
  using gui::MetricsModel;
  using simulator::Metric;
  for (Metric x : {Metric::decode_tokens_per_s, Metric::decode_step_s, Metric::kv_bytes, Metric::train_step_s}) {
    INFO(simulator::metric_name(x));
    CHECK(red(m, metric_row(x), MetricsModel::Name));
    CHECK(red(m, metric_row(x), MetricsModel::Design));
    CHECK(m.data(m.index(metric_row(x), MetricsModel::Design), Qt::ToolTipRole).toString().contains("does not fit"));
  }
  CHECK_FALSE(red(m, metric_row(Metric::prefill_s), MetricsModel::Design));
  CHECK_FALSE(red(m, metric_row(Metric::params_total), MetricsModel::Design));
  // The baseline's 32 caches (0.6 GB each) fit beside its weights; its training does not.
  CHECK_FALSE(red(m, metric_row(Metric::decode_tokens_per_s), MetricsModel::Baseline));
  CHECK(red(m, metric_row(Metric::train_step_s), MetricsModel::Baseline));
}

TEST_CASE("pipeline: peak activations over device memory are red in the summary, table and Gantt",
          "[gui][fit][pipeline]") {
  auto w = test::started_window({1400, 900}, test::WaitFor::pipeline);
  gui::PipelineView* p = w->pipelineView();
  REQUIRE(p->result());
  REQUIRE(p->fit());
  const simulator::PipelineDevice& d0 = p->result()->devices[0];
  CHECK(d0.peak_activation_bytes > 80e9);  // 1F1B's first stage holds 4 micro-batches
  CHECK_FALSE(p->fit()->fits());
  CHECK(p->fit()->current.need_bytes == d0.memory_bytes());

  const QString warning = p->fitWarning();
  CHECK(warning == QString::fromStdString(simulator::describe(*p->fit())));
  CHECK(warning.contains("does not fit: device 0 needs"));
  CHECK(warning.contains("> 80.0 GB"));
  CHECK(warning.contains("tp 2 x pp 4 (8 devices"));
  const QLabel* label = p->findChild<QLabel*>("fit-warning");
  REQUIRE(label);
  CHECK(label->isVisibleTo(p));
  CHECK(label->styleSheet().contains("#B00020"));

  const gui::PipelineDeviceModel& table = *p->devices();
  CHECK(red(table, 0, gui::PipelineDeviceModel::Memory));
  CHECK(red(table, 0, gui::PipelineDeviceModel::PeakActivation));
  CHECK(table.data(table.index(0, gui::PipelineDeviceModel::Memory), Qt::UserRole).toDouble() == d0.memory_bytes());
  CHECK(table.data(table.index(0, gui::PipelineDeviceModel::Memory), Qt::DisplayRole).toString().endsWith("> 80.0 GB"));
  CHECK(table.data(table.index(0, gui::PipelineDeviceModel::Memory), Qt::ToolTipRole).toString().contains("optimizer state"));

  QChart* gantt = p->panel()->chart();
  // The title may be wrapped onto more lines (<br>) to fit the chart's width.
  const QString title = gantt->title().replace("<br>", " ");
  CHECK(title.endsWith(" - does not fit"));
  CHECK(p->fitWarning().contains("device 0 needs"));
  CHECK(p->fitWarning().contains("Fits at tp 2 x pp 4"));  // the suggestion: in the red line above the chart
  CHECK(gantt->titleBrush().color() == kRed);
}

TEST_CASE("a scenario that fits (tp 4) shows no warning anywhere", "[gui][fit][pipeline]") {
  auto w = test::started_window({1400, 900}, test::WaitFor::pipeline);
  set_tp(*w, 4);
  const QString headline = w->costsView()->headline();
  CHECK_FALSE(headline.contains("Does not fit"));
  CHECK_FALSE(headline.contains("#B00020"));
  const gui::MetricsModel& m = *w->costsView()->metrics();
  REQUIRE(m.rowCount() == gui::MetricsModel::shownRowCount());
  for (int row = 0; row < m.rowCount(); ++row)
    for (int col = 0; col < gui::MetricsModel::ColumnCount; ++col) {
      INFO(row << ", " << col);
      CHECK_FALSE(red(m, row, col));
    }

  gui::PipelineView* p = w->pipelineView();
  REQUIRE(p->fit());
  CHECK(p->fit()->fits());
  CHECK(p->fitWarning().isEmpty());
  CHECK_FALSE(p->findChild<QLabel*>("fit-warning")->isVisibleTo(p));
  for (int row = 0; row < p->devices()->rowCount(); ++row) CHECK_FALSE(red(*p->devices(), row, gui::PipelineDeviceModel::Memory));
  CHECK_FALSE(p->panel()->chart()->title().contains("Does not fit"));
  CHECK(p->panel()->chart()->titleBrush().color() != kRed);
}
