// The chart module: builders over plain data, PNG/SVG export offscreen (what the CLI
// calls), and the trade-off chart specs.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <QImage>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChartView>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>

#include "gui_test_support.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/export.hpp"
#include "hdlab/charts/pipeline_chart.hpp"
#include "hdlab/charts/tradeoff_charts.hpp"

using namespace hdlab;

namespace {

charts::LineChart two_lines() {
  charts::LineChart spec;
  spec.title = "decode throughput";
  spec.x = {"batch (sequences)", 2};
  spec.y = {"tokens/s", 10};
  spec.series.push_back({"design", {{1, 100}, {2, 190}, {4, 350}, {8, 0}}});  // 0 cannot sit on a log axis
  spec.series.push_back({"baseline", {{1, 300}, {2, 590}, {4, 1100}}, charts::LineStyle::dashed});
  spec.references.push_back({"limit", 1000});
  return spec;
}

int distinct_colours(const QImage& image) {
  std::set<QRgb> colours;
  for (int y = 0; y < image.height(); y += 3)
    for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
  return static_cast<int>(colours.size());
}

// True when some pixel is within `tol` of `c` per channel (antialiasing blends edges).
bool has_colour(const QImage& image, const QColor& c, int tol = 24) {
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) {
      const QColor p = image.pixelColor(x, y);
      if (std::abs(p.red() - c.red()) <= tol && std::abs(p.green() - c.green()) <= tol &&
          std::abs(p.blue() - c.blue()) <= tol)
        return true;
    }
  return false;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("line chart: one series per spec series, log axes, non-positive points dropped", "[gui][charts]") {
  test::ensure_app();
  const auto chart = charts::build_line_chart(two_lines());
  const auto series = chart->series();
  REQUIRE(series.size() == 3);  // two series + the reference line
  auto* design = qobject_cast<QLineSeries*>(series[0]);
  REQUIRE(design);
  CHECK(design->name() == "design");
  CHECK(design->count() == 3);  // the y = 0 point is left out
  CHECK(qobject_cast<QLineSeries*>(series[1])->pen().style() == Qt::DashLine);
  const auto axes = chart->axes();
  REQUIRE(axes.size() == 2);
  for (QAbstractAxis* a : axes) CHECK(qobject_cast<QLogValueAxis*>(a));
  auto* y = qobject_cast<QLogValueAxis*>(chart->axes(Qt::Vertical).front());
  CHECK(y->min() == Approx(100));   // whole powers of 10 around 100..1100
  CHECK(y->max() == Approx(10000));
  CHECK(y->titleText() == "tokens/s");
}

TEST_CASE("a chart exports a PNG of the requested size with axes and the series drawn", "[gui][charts][export]") {
  test::ensure_app();
  const auto dir = test::temp_dir("png");
  const std::string path = (dir / "line.png").string();
  charts::write_chart(two_lines(), path, 640, 480);
  QImage image;
  REQUIRE(image.load(QString::fromStdString(path)));
  CHECK(image.width() == 640);
  CHECK(image.height() == 480);
  CHECK(distinct_colours(image) > 20);  // text, grid, lines: not a blank canvas
  CHECK(has_colour(image, charts::palette(0)));  // the first series' colour is on the plot
  CHECK(has_colour(image, charts::palette(1)));
}

TEST_CASE("SVG export writes an SVG document", "[gui][charts][export]") {
  test::ensure_app();
  const auto dir = test::temp_dir("svg");
  const std::string path = (dir / "scatter.svg").string();
  const auto spec = charts::validation_scatter({{"hd", "", 1.2, 1.0}, {"baseline", "", 0.4, 0.5}});
  charts::write_chart(spec, path, 400, 300);
  const std::string svg = slurp(path);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("viewBox=\"0 0 400 300\"") != std::string::npos);
  CHECK(svg.size() > 2000);
}

TEST_CASE("export errors name the path: missing folder, unknown format, absurd size", "[gui][charts][export]") {
  test::ensure_app();
  const auto spec = two_lines();
  try {
    charts::write_chart(spec, "/nonexistent-folder/x.png", 400, 300);
    FAIL("expected a ConfigError");
  } catch (const model::ConfigError& e) {
    CHECK(std::string(e.what()).find("/nonexistent-folder") != std::string::npos);
  }
  const auto dir = test::temp_dir("bad");
  CHECK_THROWS_AS(charts::write_chart(spec, (dir / "x.jpg").string(), 400, 300), model::ConfigError);
  CHECK_THROWS_AS(charts::write_chart(spec, (dir / "x.png").string(), 4, 4), model::ConfigError);
  CHECK_FALSE(std::filesystem::exists(dir / "x.jpg"));
}

TEST_CASE("validation scatter: one colour per design, y = x and the +-20 % band, log-log", "[gui][charts]") {
  test::ensure_app();
  const std::vector<gui_core::ValidationPoint> points = {
      {"hd n=4", "a", 1.1, 1.0}, {"baseline", "b", 0.5, 0.6}, {"hd n=4", "c", 0.02, 0.025}};
  const charts::ScatterChart spec = charts::validation_scatter(points);
  REQUIRE(spec.groups.size() == 2);
  CHECK(spec.groups[0].name == "hd n=4");
  CHECK(spec.groups[0].points.size() == 2);
  CHECK(spec.groups[0].points[0].x == 1.0);  // x = measured, y = predicted
  CHECK(spec.groups[0].points[0].y == 1.1);
  CHECK(spec.title.find("3 points") != std::string::npos);
  const auto chart = charts::build_scatter_chart(spec);
  int scatter = 0, lines = 0;
  for (QAbstractSeries* s : chart->series()) {
    scatter += qobject_cast<QScatterSeries*>(s) != nullptr;
    lines += qobject_cast<QLineSeries*>(s) != nullptr && qobject_cast<QScatterSeries*>(s) == nullptr;
  }
  CHECK(scatter == 2);
  CHECK(lines == 3);  // y = x, 1.2x, 0.8x
  CHECK(qobject_cast<QScatterSeries*>(chart->series()[0])->color() != qobject_cast<QScatterSeries*>(chart->series()[1])->color());
  for (QAbstractAxis* a : chart->axes()) CHECK(qobject_cast<QLogValueAxis*>(a));
}

TEST_CASE("a scatter of more than 5000 points draws one marker per 1 % cell of the axes, and says how many it stands for",
          "[gui][charts]") {
  test::ensure_app();
  // 6000 points of one design on three spots 1e-4, 1e-3, 1e-2 s (measured = predicted), each
  // spot spread over 1e-5 of its value: far inside one cell of the 100 x 100 log grid over
  // the 3 decades 3e-5 .. 3e-2 that the outlier of another design spans (the spots sit at
  // 17.4, 50.8 and 84.1 cells, away from cell edges). The outlier stays its own marker.
  std::vector<gui_core::ValidationPoint> points;
  for (int i = 0; i < 6000; ++i) {
    const double v = std::pow(10.0, -4 + i % 3) * (1 + 1e-9 * i);
    points.push_back({"gemm", "row " + std::to_string(i), v, v});
  }
  points.push_back({"attention", "lone", 3e-2, 3e-5});
  const auto chart = charts::build_scatter_chart(charts::validation_scatter(points));
  const auto series_named = [](const QChart& c, const QString& name) {
    for (QAbstractSeries* s : c.series())
      if (s->name() == name) return qobject_cast<QScatterSeries*>(s);
    return static_cast<QScatterSeries*>(nullptr);
  };
  auto* gemm = series_named(*chart, "gemm");
  auto* lone = series_named(*chart, "attention");
  REQUIRE(gemm);
  REQUIRE(lone);
  CHECK(chart->title().contains("6001 points"));  // the title counts every point
  REQUIRE(gemm->count() == 3);
  CHECK(gemm->at(0) == QPointF(1e-4, 1e-4));  // the first point of each cell is the one kept
  const QStringList labels = gemm->property("hdlab_hover_labels").toStringList();
  REQUIRE(labels.size() == 3);
  CHECK(labels[0] == "row 0 (one marker for 2000 points close together)");
  CHECK(labels[2] == "row 2 (one marker for 2000 points close together)");
  REQUIRE(lone->count() == 1);
  CHECK(lone->property("hdlab_hover_labels").toStringList() == QStringList{"lone"});
  // At 5000 points or fewer every point is its own marker, as before.
  points.resize(5000);
  const auto small = charts::build_scatter_chart(charts::validation_scatter(points));
  REQUIRE(series_named(*small, "gemm"));
  CHECK(series_named(*small, "gemm")->count() == 5000);
}

TEST_CASE("Gantt chart: one area per device, kind and shade - one legend entry per kind", "[gui][charts]") {
  test::ensure_app();
  charts::GanttChart spec;
  spec.title = "1F1B, 2 stages";
  spec.rows = {"device 0", "device 1"};
  spec.categories = {"forward", "backward"};
  spec.bars = {{0, 0.0, 1.0, 0, 0}, {0, 1.0, 2.0, 0, 1}, {1, 1.0, 2.0, 0, 0}, {1, 2.0, 4.0, 1, 0},
               {0, 4.0, 6.0, 1, 0}, {0, 6.0, 6.0, 1, 1}};  // the last is empty and left out
  QChartView view(charts::build_gantt_chart(spec).release());
  QChart* chart = view.chart();
  view.show();  // legend markers report visibility only once shown
  CHECK(chart->series().size() == 5);
  int visible_markers = 0;
  for (QLegendMarker* m : chart->legend()->markers()) visible_markers += m->isVisible();
  CHECK(chart->legend()->markers().size() == 5);
  CHECK(visible_markers == 2);
  auto* first = qobject_cast<QAreaSeries*>(chart->series()[0]);
  REQUIRE(first);
  CHECK(first->upperSeries()->count() == 4);  // one bar: up, across, down
  const auto dir = test::temp_dir("gantt");
  charts::save_chart(*chart, (dir / "gantt.png").string(), QSize(500, 200));
  QImage image((dir / "gantt.png").c_str());
  CHECK(image.size() == QSize(500, 200));
  CHECK(has_colour(image, charts::palette(0), 10));
  CHECK(has_colour(image, charts::palette(1), 10));
}

TEST_CASE("trade-off chart specs: curves split at the memory limit, references, labels", "[gui][charts]") {
  gui_core::Tradeoffs t;
  t.axis = gui_core::SizeAxis{"n", "HD streams n", {1, 2}};
  t.by_size = {{1, 1, 1, 1, 1, 1, ""}, {2, 2, 3, 1.5, 2, 1.1, ""}};
  t.decode_vs_batch = {{1, 10, 20, true, true}, {2, 18, 39, true, true}, {4, 30, 70, false, true}};
  t.kv_vs_context = {{1024, 2e9, 5e8, true, true}};
  const charts::TradeoffCharts c = charts::tradeoff_charts(t, "HD n=2", "Qwen3-8B alone", 80e9);
  REQUIRE(c.cost_vs_size.series.size() == 5);
  CHECK(c.cost_vs_size.series[3].name == "KV per seq");
  CHECK(c.cost_vs_size.series[3].points[1].y == 2);
  CHECK(c.cost_vs_size.references.front().y == 1.0);
  // design fits, design no fit, baseline, and the legend's key for the dashes
  REQUIRE(c.decode_vs_batch.series.size() == 4);
  const auto& over = c.decode_vs_batch.series[1];
  CHECK(over.style == charts::LineStyle::dashed);
  CHECK_FALSE(over.in_legend);
  CHECK(c.decode_vs_batch.series[3].points.empty());
  CHECK(c.decode_vs_batch.series[3].style == charts::LineStyle::dashed);
  REQUIRE(over.points.size() == 2);
  CHECK(over.points[0].x == 2);  // starts at the last point that fits
  CHECK(over.points[1].x == 4);
  CHECK(c.decode_vs_batch.series[2].name == "Qwen3-8B alone");
  REQUIRE(c.kv_vs_context.series.size() == 2);
  CHECK(c.kv_vs_context.series[0].points[0].y == Approx(2.0));  // GB
  CHECK(c.kv_vs_context.references.front().y == Approx(80.0));
  CHECK(c.kv_vs_context.y.title == "GB per sequence");
}

TEST_CASE("pipeline Gantt spec: a bar per task, forward and backward, rows per device", "[gui][charts][pipeline]") {
  simulator::PipelineWorkload w;
  w.layers.assign(4, simulator::PipelineLayer{1.0, 2.0, 1e6});
  simulator::PipelineOptions o;
  o.stages = 2;
  o.microbatches = 3;
  o.schedule = simulator::ScheduleKind::gpipe;
  const simulator::PipelineResult r = simulator::simulate_pipeline(w, o);
  const charts::GanttChart g = charts::pipeline_gantt_chart(r);
  CHECK(g.rows == std::vector<std::string>{"device 0", "device 1"});
  REQUIRE(g.bars.size() == r.tasks.size());
  CHECK(g.bars.size() == 2 * 3 * 2);
  int backward = 0;
  double end = 0;
  for (const auto& b : g.bars) {
    backward += b.category == 1;
    end = std::max(end, b.end_s);
    CHECK(b.end_s > b.start_s);
  }
  CHECK(backward == 6);
  CHECK(end == Approx(r.metrics.makespan_s));
  CHECK(g.title.find("gpipe") != std::string::npos);
  CHECK(g.title.find("bubble") != std::string::npos);
}
