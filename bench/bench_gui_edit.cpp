// An edit in the GUI until every visible view shows its result: the main window with its
// defaults (Qwen3-8B, HD n=4 on every layer, one H100) at 1600x1000 on the offscreen
// platform, the Costs tab in front; each iteration sets HD's "streams n" spin box in the
// design editor to 8 or back to 4, as a user would, and waits.
//
// "Updated" means all of:
//   - the synchronous views: the session's config, the layer strip, the Layers table, the
//     mask view and the status bar's counts and window title (they refresh inside the
//     edit's signal);
//   - the costs table and headline, and the trade-off charts: MainWindow::resultsShown
//     after the background evaluation (gui_core::compute_tradeoffs) of the new design;
//   - the pipeline Gantt, its device table and the strip's stage bands:
//     PipelineView::resultShown after the background pipeline simulation;
//   - then the posted events are drained, so the visible widgets have repainted into the
//     offscreen backing store.
// Each iteration checks that the costs table's decode throughput is the simulator's for
// the n just set (a stale or wrong table ends the benchmark with an error).
//
// Two timings:
//   edit_to_views/as_user         the event loop as it runs in the app, its edit timers
//                                 included (edit_delay_ms: a lone edit starts at once, edits
//                                 within 150 ms of the last start wait out the interval;
//                                 the iterations here are 200 ms apart, like separate edits)
//   edit_to_views/no_debounce     the same edit with both timers cut short: the work
//                                 itself (UI refresh + evaluation + pipeline + repaint)
// Counters per run: median_ms, mean_ms, max_ms over the iterations, sync_ms (median of
// the edit's synchronous part), target_met (median under 100 ms).
//
// usage: bench_gui_edit [--benchmark_filter=...] (Google Benchmark flags)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <vector>

#include <benchmark/benchmark.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QSpinBox>

#include "background_job.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/export.hpp"
#include "hdlab/charts/pipeline_chart.hpp"
#include "hdlab/gui_core/catalog.hpp"
#include "hdlab/gui_core/tradeoffs.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/fit.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"
#include "main_window.hpp"
#include "metrics_model.hpp"
#include "pipeline_view.hpp"
#include "session.hpp"
#include "tradeoff_view.hpp"

using namespace hdlab;

namespace {

constexpr double kTargetMs = 100;
constexpr int kTimeoutMs = 60000;  // a view that never updates is an error, not a slow edit

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// One window for both benchmarks, built in main() like the app at start-up (and destroyed
// there before the application).
gui::MainWindow* g_window = nullptr;

std::unique_ptr<gui::MainWindow> make_window() {
  auto w = std::make_unique<gui::MainWindow>(gui_core::read_catalog(std::string(HDLAB_SOURCE_DIR) + "/profiles"));
  if (!w->applyDefaults().isEmpty()) return w;  // the benchmark reports the session not ready
  w->resize(1600, 1000);
  w->show();
  w->waitForEvaluation();
  w->pipelineView()->waitForRun();
  QCoreApplication::processEvents();
  return w;
}

double shown_decode_tokens_per_s(gui::MainWindow& w) {
  const gui::MetricsModel* m = w.costsView()->metrics();
  const int row = gui::MetricsModel::rowOf(simulator::Metric::decode_tokens_per_s);
  return m->data(m->index(row, gui::MetricsModel::Design), Qt::UserRole).toDouble();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void edit_to_views(benchmark::State& state, bool debounce) {
  gui::MainWindow* w = g_window;
  if (!w->session()->ready()) {
    state.SkipWithError("the bundled Qwen3-8B / hd-n4-full / H100 profiles were not found");
    return;
  }
  auto* n_spin = w->findChild<QSpinBox*>("/design/hd/n");
  if (!n_spin) {
    state.SkipWithError("no spin box /design/hd/n in the design editor");
    return;
  }
  bool evaluated = false, pipelined = false;
  QObject::connect(w, &gui::MainWindow::resultsShown, w, [&] { evaluated = true; });
  QObject::connect(w->pipelineView(), &gui::PipelineView::resultShown, w, [&] { pipelined = true; });

  std::vector<double> total_ms, sync_ms;
  int n = n_spin->value();
  for (auto _ : state) {
    // A user's separate edits: more than kEditBurstMs after the last start, so the
    // timers start the work at once (back-to-back edits would be a burst, throttled).
    state.PauseTiming();
    QElapsedTimer quiet;
    quiet.start();
    while (quiet.elapsed() < gui::kEditBurstMs + 50) QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    state.ResumeTiming();
    n = n == 4 ? 8 : 4;
    evaluated = pipelined = false;
    const auto t0 = Clock::now();
    n_spin->setValue(n);  // the synchronous views refresh inside this call
    sync_ms.push_back(ms_since(t0));
    if (!debounce) {
      w->evaluateNow();
      w->pipelineView()->run();
    }
    QElapsedTimer guard;
    guard.start();
    while (!(evaluated && pipelined) && guard.elapsed() < kTimeoutMs)
      QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    QCoreApplication::processEvents();  // repaints of what changed
    total_ms.push_back(ms_since(t0));
    state.SetIterationTime(total_ms.back() / 1000);

    state.PauseTiming();
    const simulator::Metrics expected =
        simulator::evaluate(w->session()->config(), w->session()->hardware(), w->session()->scenario());
    const double shown = shown_decode_tokens_per_s(*w);
    state.ResumeTiming();
    if (!(evaluated && pipelined)) {
      state.SkipWithError("a view did not update within 60 s");
      break;
    }
    if (std::fabs(shown - expected[simulator::Metric::decode_tokens_per_s]) >
        1e-12 * std::fabs(expected[simulator::Metric::decode_tokens_per_s])) {
      state.SkipWithError("the costs table does not show the simulator's decode throughput for the edited design");
      break;
    }
  }
  QObject::disconnect(w, &gui::MainWindow::resultsShown, w, nullptr);
  QObject::disconnect(w->pipelineView(), &gui::PipelineView::resultShown, w, nullptr);
  if (total_ms.empty()) return;
  const double med = median(total_ms);
  state.counters["median_ms"] = med;
  state.counters["mean_ms"] = std::accumulate(total_ms.begin(), total_ms.end(), 0.0) / static_cast<double>(total_ms.size());
  state.counters["max_ms"] = *std::max_element(total_ms.begin(), total_ms.end());
  state.counters["sync_ms"] = median(sync_ms);
  state.counters["target_met"] = med < kTargetMs ? 1 : 0;
}

// Where an edit's time goes: each step of the update, on the current design, timed on
// its own (medians over the iterations, counters in ms): the evaluation behind the costs
// and trade-off views (worker thread in the app), filling the costs table, rebuilding
// the four trade-off charts (done even while their tab is hidden), the pipeline
// simulation (worker thread), building its Gantt chart, and one synchronous repaint of
// the whole window.
void edit_parts(benchmark::State& state) {
  gui::MainWindow* w = g_window;
  if (!w->session()->ready() || !w->pipelineView()->result()) {
    state.SkipWithError("the window has no results");
    return;
  }
  const model::Config config = w->session()->config();
  const simulator::HardwareProfile hw = w->session()->hardware();
  const simulator::Scenario scenario = w->session()->scenario();
  const simulator::PipelineOptions options = w->pipelineView()->result()->options;
  std::vector<double> eval, costs, charts, pipeline, gantt, repaint;
  auto timed = [](std::vector<double>& into, auto&& step) {
    const auto t0 = Clock::now();
    step();
    into.push_back(ms_since(t0));
  };
  for (auto _ : state) {
    const auto t0 = Clock::now();
    gui_core::Tradeoffs t;
    timed(eval, [&] {
      t = gui_core::compute_tradeoffs(config, hw, scenario, gui_core::default_grid(config, scenario),
                                      [](int, int) { return true; });
    });
    timed(costs, [&] { w->costsView()->setResults(t, scenario, "headline"); });
    timed(charts, [&] { w->tradeoffView()->setResults(t, "design", "baseline", hw.memory_bytes()); });
    simulator::PipelineResult r;
    simulator::PhaseFit fit;
    timed(pipeline, [&] {
      r = simulator::simulate_pipeline(config, hw, scenario, options);
      fit = simulator::pipeline_fit(config, hw, scenario, options, r);
    });
    timed(gantt, [&] { benchmark::DoNotOptimize(charts::build_gantt_chart(charts::pipeline_gantt_chart(r, fit))); });
    timed(repaint, [&] { w->repaint(); });
    state.SetIterationTime(ms_since(t0) / 1000);
  }
  state.counters["evaluation_ms"] = median(eval);
  state.counters["costs_table_ms"] = median(costs);
  state.counters["tradeoff_charts_ms"] = median(charts);
  state.counters["pipeline_ms"] = median(pipeline);
  state.counters["gantt_chart_ms"] = median(gantt);
  state.counters["repaint_ms"] = median(repaint);
}

}  // namespace

BENCHMARK(edit_parts)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(10);
BENCHMARK_CAPTURE(edit_to_views, as_user, true)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(30);
BENCHMARK_CAPTURE(edit_to_views, no_debounce, false)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(30);

int main(int argc, char** argv) {
  charts::OffscreenApplication app;  // before any widget
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::unique_ptr<gui::MainWindow> w = make_window();
  g_window = w.get();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
