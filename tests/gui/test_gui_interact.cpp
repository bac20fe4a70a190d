// Interactive charts (issue 14, missing 1), through the chart panel every view shows its
// charts in: the hover read-out of a point (series, label, x and y with units) and of a
// Gantt task (device, micro-batch, pass, start, duration), zoom and pan with an exact
// reset, and legend entries that hide and show their series.
#include <catch2/catch.hpp>

#include <QTest>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>
#include <QtCharts/QXYSeries>

#include "chart_panel.hpp"
#include "gui_test_support.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/interact.hpp"
#include "hdlab/charts/pipeline_chart.hpp"
#include "hdlab/charts/tradeoff_charts.hpp"
#include "main_window.hpp"
#include "pipeline_view.hpp"

using namespace hdlab;

namespace {

// A design and its baseline on log axes; the design's last point does not fit and goes on
// dashed, as the trade-off charts draw it (one legend entry for both parts).
charts::LineChart decode_chart() {
  charts::LineChart spec;
  spec.title = "Decode throughput vs batch";
  spec.x = {"batch (sequences)", 2};
  spec.y = {"tokens/s", 10};
  charts::LineSeries design{"HD n=4", {{1, 100}, {2, 190}, {4, 350}}};
  design.labels = {"", "", "b=4 fits in 80 GB"};
  charts::LineSeries over{"HD n=4 (no fit)", {{4, 350}, {8, 610}}, charts::LineStyle::dashed, true, 0, false};
  over.group = "HD n=4";
  spec.series = {design, over, {"baseline", {{1, 300}, {2, 590}, {4, 1100}}, charts::LineStyle::solid, true, 1}};
  spec.references.push_back({"limit", 1000});
  return spec;
}

std::unique_ptr<gui::ChartPanel> shown(std::unique_ptr<QChart> chart) {
  test::ensure_app();
  auto panel = std::make_unique<gui::ChartPanel>("test");
  panel->resize(900, 600);
  panel->setChart(std::move(chart));
  panel->show();
  REQUIRE(QTest::qWaitForWindowExposed(panel.get()));
  QCoreApplication::processEvents();
  return panel;
}

QAbstractSeries* series_named(const QChart& chart, const QString& name) {
  for (QAbstractSeries* s : chart.series())
    if (s->name() == name) return s;
  FAIL("no series " << name.toStdString());
  return nullptr;
}

// Where the value `v` of `series` is drawn, in the chart view's pixels.
QPoint view_pos(const gui::ChartPanel& panel, QPointF v, QAbstractSeries* series) {
  QChart* chart = panel.chart();
  return panel.view()->mapFromScene(chart->mapToScene(chart->mapToPosition(v, series)));
}

std::pair<double, double> range(const QAbstractAxis* a) {
  if (auto* v = qobject_cast<const QValueAxis*>(a)) return {v->min(), v->max()};
  if (auto* l = qobject_cast<const QLogValueAxis*>(a)) return {l->min(), l->max()};
  FAIL("not a value axis");
  return {};
}

QAbstractAxis* axis(const QChart& chart, Qt::Orientation o) { return chart.axes(o).front(); }

QLegendMarker* marker_of(const QChart& chart, const QString& name) {
  for (QLegendMarker* m : chart.legend()->markers())
    if (m->series() && m->series()->name() == name && m->isVisible()) return m;
  FAIL("no legend entry " << name.toStdString());
  return nullptr;
}

}  // namespace

TEST_CASE("hover read-out of a line chart point: design, label, x and y with units", "[gui][interact]") {
  test::ensure_app();  // before any chart is built
  auto panel = shown(charts::build_line_chart(decode_chart()));
  QAbstractSeries* design = series_named(*panel->chart(), "HD n=4");
  const QPoint at = view_pos(*panel, {4, 350}, design);
  CHECK(panel->readOutAt(at).toStdString() == "HD n=4\nb=4 fits in 80 GB\nbatch: 4 sequences\n350 tokens/s");
  // Two pixels off the point still reads it; the middle of nowhere reads nothing.
  CHECK(panel->readOutAt(at + QPoint(2, -2)).toStdString() ==
        "HD n=4\nb=4 fits in 80 GB\nbatch: 4 sequences\n350 tokens/s");
  CHECK(panel->readOutAt(view_pos(*panel, {1.4, 700}, design)).isEmpty());
  // The reference line is a guide, not data: no read-out at its end.
  CHECK(panel->readOutAt(view_pos(*panel, {1, 1000}, design)).isEmpty());
  // A point without a label, and the dashed part's own point.
  CHECK(panel->readOutAt(view_pos(*panel, {2, 590}, design)).toStdString() == "baseline\nbatch: 2 sequences\n590 tokens/s");
  CHECK(panel->readOutAt(view_pos(*panel, {8, 610}, design)).toStdString() ==
        "HD n=4 (no fit)\nbatch: 8 sequences\n610 tokens/s");

  // What the mouse does: moving over the point sets the read-out the tooltip shows.
  QTest::mouseMove(panel->view()->viewport(), view_pos(*panel, {2, 190}, design));
  CHECK(panel->readOut().toStdString() == "HD n=4\nbatch: 2 sequences\n190 tokens/s");
}

TEST_CASE("hover read-out of a validation point carries its case label and units", "[gui][interact]") {
  test::ensure_app();  // before any chart is built
  const std::vector<gui_core::ValidationPoint> points = {{"HD n=4", "decode b=8 ctx=4096", 0.0135, 0.012},
                                                         {"baseline", "prefill 2048", 0.25, 0.2}};
  auto panel = shown(charts::build_scatter_chart(charts::validation_scatter(points)));
  QAbstractSeries* hd = series_named(*panel->chart(), "HD n=4");
  CHECK(panel->readOutAt(view_pos(*panel, {0.012, 0.0135}, hd)).toStdString() ==
        "HD n=4\ndecode b=8 ctx=4096\nmeasured time: 0.012 s\npredicted time: 0.0135 s");
  CHECK(panel->readOutAt(view_pos(*panel, {0.2, 0.25}, hd)).toStdString() ==
        "baseline\nprefill 2048\nmeasured time: 0.2 s\npredicted time: 0.25 s");
}

TEST_CASE("hover read-out of a Gantt task equals the pipeline result's task", "[gui][interact][pipeline]") {
  test::ensure_app();  // before any chart is built
  simulator::PipelineWorkload w;
  w.layers.assign(4, simulator::PipelineLayer{1e-3, 2e-3, 1e6});  // ms per layer: the axis is in ms
  simulator::PipelineOptions o;
  o.stages = 2;
  o.microbatches = 3;
  o.schedule = simulator::ScheduleKind::one_f_one_b;
  const simulator::PipelineResult r = simulator::simulate_pipeline(w, o);
  REQUIRE(r.metrics.makespan_s < 1.0);
  auto panel = shown(charts::build_gantt_chart(charts::pipeline_gantt_chart(r)));
  QAbstractSeries* any = panel->chart()->series().front();
  REQUIRE(r.tasks.size() == 12);
  for (const simulator::PipelineTask& t : r.tasks) {
    // The middle of the task's bar: its device's row (device 0 on top) at half its time.
    const QPointF mid((t.start_s + t.end_s) / 2 * 1e3, o.stages - 1 - t.device + 0.5);
    const std::string expected = "device " + std::to_string(t.device) + "\nmicro-batch " +
                                 std::to_string(t.microbatch) + (t.backward ? "\nbackward" : "\nforward") +
                                 "\nstart: " + charts::read_out_number(t.start_s * 1e3).toStdString() + " ms" +
                                 "\nduration: " + charts::read_out_number((t.end_s - t.start_s) * 1e3).toStdString() +
                                 " ms";
    CHECK(panel->readOutAt(view_pos(*panel, mid, any)).toStdString() == expected);
  }
  // Between the rows there is no task.
  CHECK(panel->readOutAt(view_pos(*panel, {r.tasks.front().start_s * 1e3 + 0.5, 1.0}, any)).isEmpty());

  // Zoomed in, the time axis ticks sit on round multiples (here 2 ms, a fifth of ~10 ms);
  // reset gives back the built range and ticks exactly.
  auto* time = qobject_cast<QValueAxis*>(axis(*panel->chart(), Qt::Horizontal));
  const auto built = range(time);
  const int ticks = time->tickCount();
  panel->zoomAt(view_pos(*panel, {12, 1}, any), 2.5);
  CHECK(time->tickType() == QValueAxis::TicksDynamic);
  CHECK(time->tickInterval() == 2.0);
  CHECK(time->tickAnchor() == 0.0);
  panel->resetZoom();
  CHECK(range(time) == built);
  CHECK(time->tickType() == QValueAxis::TicksFixed);
  CHECK(time->tickCount() == ticks);
}

TEST_CASE("the app's Gantt reads out the tasks of the pipeline it ran", "[gui][interact][pipeline]") {
  test::ensure_app();
  gui::MainWindow w(gui_core::read_catalog(test::profiles()));
  REQUIRE(w.applyDefaults().isEmpty());
  w.resize(1400, 900);
  w.show();
  w.waitForEvaluation();
  gui::PipelineView* view = w.pipelineView();
  view->waitForRun();
  for (int i = 0; i < w.tabs()->count(); ++i)
    if (w.tabs()->widget(i)->isAncestorOf(view) || w.tabs()->widget(i) == view) w.tabs()->setCurrentIndex(i);
  QCoreApplication::processEvents();
  REQUIRE(view->result());
  const simulator::PipelineResult& r = *view->result();
  gui::ChartPanel& panel = *view->panel();
  QAbstractSeries* any = panel.chart()->series().front();
  // The time axis' unit, from its title ("time (ms)").
  const QString title = axis(*panel.chart(), Qt::Horizontal)->titleText();
  const QString unit = title.section('(', 1).chopped(1);
  const double scale = unit == "us" ? 1e6 : unit == "ms" ? 1e3 : 1.0;
  REQUIRE((unit == "us" || unit == "ms" || unit == "s"));
  // The last backward task of the first device and the first forward of the last.
  std::vector<const simulator::PipelineTask*> picked;
  for (const auto& t : r.tasks)
    if (t.device == 0 && t.backward) picked = {&t};
  for (const auto& t : r.tasks)
    if (t.device == r.options.stages - 1 && !t.backward) {
      picked.push_back(&t);
      break;
    }
  REQUIRE(picked.size() == 2);
  for (const simulator::PipelineTask* t : picked) {
    const QPointF mid((t->start_s + t->end_s) / 2 * scale, static_cast<double>(r.options.stages - 1 - t->device) + 0.5);
    const QString text = panel.readOutAt(view_pos(panel, mid, any));
    CAPTURE(text.toStdString());
    CHECK(text.startsWith(QString("device %1\nmicro-batch %2\n").arg(t->device).arg(t->microbatch)));
    CHECK(text.contains(t->weight ? "\nweight gradient (W)" : t->backward ? "\nbackward" : "\nforward"));
    CHECK(text.contains(QString("\nstart: %1 %2\n").arg(charts::read_out_number(t->start_s * scale), unit)));
    CHECK(text.endsWith(QString("\nduration: %1 %2").arg(charts::read_out_number((t->end_s - t->start_s) * scale), unit)));
  }
}

TEST_CASE("zoom and pan change the axis ranges, log axes stay positive, reset restores them exactly",
          "[gui][interact]") {
  test::ensure_app();  // before any chart is built
  auto panel = shown(charts::build_line_chart(decode_chart()));
  QChart* chart = panel->chart();
  QAbstractSeries* design = series_named(*chart, "HD n=4");
  const auto x0 = range(axis(*chart, Qt::Horizontal)), y0 = range(axis(*chart, Qt::Vertical));
  CHECK_FALSE(panel->isZoomed());

  // The wheel: one notch up zooms in by 1.25 about the mouse, which keeps its value in place.
  const QPoint at = view_pos(*panel, {4, 350}, design);
  QWheelEvent wheel(at, panel->view()->viewport()->mapToGlobal(at), {}, {0, 120}, Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(panel->view()->viewport(), &wheel);
  REQUIRE(panel->isZoomed());
  auto x1 = range(axis(*chart, Qt::Horizontal)), y1 = range(axis(*chart, Qt::Vertical));
  CHECK(x1.first > x0.first);
  CHECK(x1.second < x0.second);
  CHECK(x1.second / x1.first == Approx(std::pow(x0.second / x0.first, 1 / 1.25)).epsilon(0.01));
  CHECK(y1.first > y0.first);
  // Within 4 px: the tick labels re-fitted to the new range can move the plot's edge a little.
  CHECK((view_pos(*panel, {4, 350}, design) - at).manhattanLength() <= 4);

  // Pan: dragging right shows smaller batches; the log axis stays positive.
  panel->panBy({40, 0});
  const auto x2 = range(axis(*chart, Qt::Horizontal));
  CHECK(x2.first < x1.first);
  CHECK(x2.first > 0);
  // A drag far past the edge stops at it.
  panel->panBy({5000, 0});
  CHECK(range(axis(*chart, Qt::Horizontal)).first >= x0.first);

  // Double-click resets exactly.
  QTest::mouseDClick(panel->view()->viewport(), Qt::LeftButton, {}, at);
  CHECK_FALSE(panel->isZoomed());
  CHECK(range(axis(*chart, Qt::Horizontal)) == x0);
  CHECK(range(axis(*chart, Qt::Vertical)) == y0);

  // A rectangle dragged with the left button zooms into it; right-click resets.
  const QPoint a = view_pos(*panel, {2, 150}, design), b = view_pos(*panel, {4, 400}, design);
  QTest::mousePress(panel->view()->viewport(), Qt::LeftButton, {}, a);
  QTest::mouseMove(panel->view()->viewport(), b);
  QTest::mouseRelease(panel->view()->viewport(), Qt::LeftButton, {}, b);
  x1 = range(axis(*chart, Qt::Horizontal));
  CHECK(x1.first == Approx(2).epsilon(0.03));
  CHECK(x1.second == Approx(4).epsilon(0.03));
  QTest::mouseClick(panel->view()->viewport(), Qt::RightButton, {}, a);
  CHECK(range(axis(*chart, Qt::Horizontal)) == x0);
  CHECK(range(axis(*chart, Qt::Vertical)) == y0);

  // Zooming out past the chart as built is a reset, never a log axis heading for 0.
  panel->zoomAt(at, 0.25);
  CHECK_FALSE(panel->isZoomed());
  CHECK(range(axis(*chart, Qt::Horizontal)) == x0);
}

TEST_CASE("a legend click hides a design with its dashed part and greys the entry, a second shows them",
          "[gui][interact]") {
  test::ensure_app();  // before any chart is built
  auto panel = shown(charts::build_line_chart(decode_chart()));
  QChart* chart = panel->chart();
  QAbstractSeries* solid = series_named(*chart, "HD n=4");
  QAbstractSeries* dashed = series_named(*chart, "HD n=4 (no fit)");
  QLegendMarker* entry = marker_of(*chart, "HD n=4");
  const QColor label = entry->labelBrush().color();
  const QPoint at = view_pos(*panel, {8, 610}, solid);
  REQUIRE_FALSE(panel->readOutAt(at).isEmpty());

  emit entry->clicked();
  CHECK_FALSE(solid->isVisible());
  CHECK_FALSE(dashed->isVisible());
  CHECK(series_named(*chart, "baseline")->isVisible());
  CHECK(entry->isVisible());  // still there to click back
  CHECK(entry->labelBrush().color() != label);
  CHECK(panel->readOutAt(at).isEmpty());  // hidden points have no read-out
  for (QLegendMarker* m : chart->legend()->markers(dashed)) CHECK_FALSE(m->isVisible());

  emit entry->clicked();
  CHECK(solid->isVisible());
  CHECK(dashed->isVisible());
  CHECK(entry->labelBrush().color() == label);
  for (QLegendMarker* m : chart->legend()->markers(dashed)) CHECK_FALSE(m->isVisible());
  CHECK_FALSE(panel->readOutAt(at).isEmpty());
}

TEST_CASE("a trade-off chart's legend entry hides the design's part that does not fit too", "[gui][interact]") {
  test::ensure_app();  // before any chart is built
  gui_core::Tradeoffs t;
  t.decode_vs_batch = {{1, 10, 20, true, true}, {2, 18, 39, true, true}, {4, 30, 70, false, true}};
  const charts::TradeoffCharts c = charts::tradeoff_charts(t, "HD n=2", "Qwen3-8B alone", 80e9);
  auto panel = shown(charts::build_line_chart(c.decode_vs_batch));
  emit marker_of(*panel->chart(), "HD n=2")->clicked();
  CHECK_FALSE(series_named(*panel->chart(), "HD n=2")->isVisible());
  CHECK_FALSE(series_named(*panel->chart(), "HD n=2 (no fit)")->isVisible());
  CHECK(series_named(*panel->chart(), "Qwen3-8B alone")->isVisible());
}

TEST_CASE("a Gantt legend click hides that pass on every device", "[gui][interact][pipeline]") {
  test::ensure_app();  // before any chart is built
  simulator::PipelineWorkload w;
  w.layers.assign(4, simulator::PipelineLayer{1e-3, 2e-3, 1e6});
  simulator::PipelineOptions o;
  o.stages = 2;
  o.microbatches = 3;
  const simulator::PipelineResult r = simulator::simulate_pipeline(w, o);
  auto panel = shown(charts::build_gantt_chart(charts::pipeline_gantt_chart(r)));
  QChart* chart = panel->chart();
  emit marker_of(*chart, "forward")->clicked();
  int forward = 0;
  for (QAbstractSeries* s : chart->series()) {
    if (s->name() == "forward") ++forward;
    CHECK(s->isVisible() == (s->name() != "forward"));
  }
  CHECK(forward >= 2);  // both devices, both shades
  emit marker_of(*chart, "forward")->clicked();
  for (QAbstractSeries* s : chart->series()) CHECK(s->isVisible());
}

