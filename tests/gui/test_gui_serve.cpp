// The serving tab and the validation tab's kernel reports and case labels (issue 14,
// missing 6): the serving charts and tables hold the serving simulator's numbers for the
// workload the form describes, the load sweep equals separate runs at its rates, a bad
// workload field is shown at its field with its JSON pointer; kernels.json / kernels.csv
// of `hdlab validate --kerneldb` open with the file's held-out rows; scatter points carry
// their case labels.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iterator>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTest>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>

#include "chart_panel.hpp"
#include "form_helpers.hpp"
#include "gui_test_support.hpp"
#include "hdlab/calibration/kernel_validation.hpp"
#include "hdlab/calibration/validation.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/gui_core/serving_run.hpp"
#include "hdlab/model/files.hpp"
#include "main_window.hpp"
#include "scenario_editor.hpp"
#include "serving_view.hpp"
#include "session.hpp"
#include "validation_view.hpp"
#include "window_test_support.hpp"

using namespace hdlab;

namespace {

std::vector<QPointF> line_points(const gui::ChartPanel& panel, const QString& name) {
  for (QAbstractSeries* s : panel.chart()->series())
    if (auto* line = qobject_cast<QLineSeries*>(s); line && line->name() == name) {
      const QList<QPointF> p = line->points();
      return {p.begin(), p.end()};
    }
  FAIL("no series " << name.toStdString());
  return {};
}

// Whether a label the view shows holds every one of `parts`.
bool shows(const QWidget& view, std::initializer_list<const char*> parts) {
  for (const QLabel* l : view.findChildren<QLabel*>()) {
    if (!l->isVisibleTo(&view)) continue;
    bool all = true;
    for (const char* p : parts) all = all && l->text().contains(p);
    if (all) return true;
  }
  return false;
}

std::vector<QPointF> as_points(const std::vector<std::pair<double, double>>& cdf) {
  std::vector<QPointF> out;
  for (const auto& [v, f] : cdf) out.emplace_back(v, f);
  return out;
}

// Qwen3-8B alone on one H100, the default scenario.
struct ServingFixture {
  bool app = (test::ensure_app(), true);  // before the widgets below
  gui::Session session{gui_core::Catalog{}};
  gui::ServingView view{&session};
  ServingFixture() {
    session.setConfig(test::profile_config("qwen3-8b.json"), "Qwen3-8B");
    session.setHardware(test::h100(), "H100");
    view.waitForRun();
  }
  template <class W>
  W* field(const char* pointer) {
    W* w = view.findChild<W*>(pointer);
    REQUIRE(w != nullptr);
    return w;
  }
};

// A fixed-seed Poisson workload, as the form is set in the tests.
simulator::ServeSpec poisson_spec() {
  simulator::ServeSpec s;
  s.workload.arrivals = simulator::ArrivalKind::poisson;
  s.workload.requests = 64;
  s.workload.rate_per_s = 6;
  s.workload.input = simulator::fixed_length(512);
  s.workload.output = simulator::fixed_length(64);
  s.workload.seed = 7;
  s.engine.max_running = 32;
  s.engine.max_batched_tokens = 4096;
  return s;
}

void set_poisson_form(ServingFixture& f) {
  gui::set_choice(f.field<QComboBox>("/workload/arrivals"), "poisson");
  f.field<QSpinBox>("/workload/requests")->setValue(64);
  f.field<QDoubleSpinBox>("/workload/rate_per_s")->setValue(6);
  f.field<QSpinBox>("/workload/input_tokens")->setValue(512);
  f.field<QSpinBox>("/workload/output_tokens")->setValue(64);
  f.field<QSpinBox>("/workload/seed")->setValue(7);
  f.field<QSpinBox>("/engine/max_running")->setValue(32);
  f.field<QSpinBox>("/engine/max_batched_tokens")->setValue(4096);
  f.view.waitForRun();
}

}  // namespace

TEST_CASE("serving tab: latency CDFs, KV over time and the tables are the serving simulator's", "[gui][serve]") {
  ServingFixture f;
  set_poisson_form(f);
  REQUIRE(f.view.result());
  CHECK(f.view.result()->spec == poisson_spec());
  const simulator::ServeResult r = simulator::simulate_serving(f.session.config(), f.session.hardware(),
                                                               f.session.scenario(), poisson_spec());
  REQUIRE(r.requests == 64);
  CHECK(line_points(*f.view.cdfPanel(), "TTFT") == as_points(r.ttft_s.cdf));
  CHECK(line_points(*f.view.cdfPanel(), "TPOT") == as_points(r.tpot_s.cdf));
  CHECK(line_points(*f.view.cdfPanel(), "E2E") == as_points(r.e2e_s.cdf));
  CHECK(line_points(*f.view.cdfPanel(), "TTFT").size() > 10);
  std::vector<QPointF> used;
  for (const simulator::EngineSample& s : r.timeline) used.emplace_back(s.time_s, s.kv_used_fraction);
  CHECK(line_points(*f.view.kvPanel(), "used") == used);

  // Latency table: seconds under UserRole, milliseconds shown.
  const QStandardItemModel& lat = *f.view.latencyTable();
  REQUIRE(lat.rowCount() == gui::ServingView::LatencyRowCount);
  CHECK(lat.item(gui::ServingView::Ttft, 0)->text() == "TTFT");
  CHECK(lat.item(gui::ServingView::Ttft, 3)->data(Qt::UserRole).toDouble() == r.ttft_s.p90);
  CHECK(lat.item(gui::ServingView::Tpot, 2)->data(Qt::UserRole).toDouble() == r.tpot_s.p50);
  CHECK(lat.item(gui::ServingView::E2e, 4)->data(Qt::UserRole).toDouble() == r.e2e_s.p99);
  CHECK(lat.item(gui::ServingView::Ttft, 3)->text() == QString::number(1e3 * r.ttft_s.p90, 'f', 2));
  CHECK(lat.horizontalHeaderItem(3)->text() == "p90 (ms)");
  // Throughput table: every row has a unit.
  const QStandardItemModel& tp = *f.view.throughputTable();
  bool found = false;
  for (int row = 0; row < tp.rowCount(); ++row) {
    CHECK_FALSE(tp.item(row, 2)->text().isEmpty());
    if (tp.item(row, 0)->text() == "output throughput") {
      found = true;
      CHECK(tp.item(row, 1)->data(Qt::UserRole).toDouble() == r.output_tokens_per_s);
      CHECK(tp.item(row, 2)->text() == "tokens/s");
    }
  }
  CHECK(found);
  CHECK(f.view.summary().contains(QString::number(r.output_tokens_per_s, 'f', 1)));
}

TEST_CASE("serving tab: throughput and p90 TTFT vs load equal separate runs at the swept rates", "[gui][serve]") {
  ServingFixture f;
  set_poisson_form(f);
  REQUIRE(f.view.result());
  const model::Config& c = f.session.config();
  // Saturation: the same requests all at t = 0, requests finished per second.
  simulator::ServeSpec all_at_once = poisson_spec();
  all_at_once.workload.arrivals = simulator::ArrivalKind::static_batch;
  all_at_once.workload.rate_per_s = 0;
  const double saturation =
      simulator::simulate_serving(c, f.session.hardware(), f.session.scenario(), all_at_once).requests_per_s;
  REQUIRE(saturation > 0);
  CHECK(f.view.result()->saturation_rate_per_s == saturation);
  std::vector<QPointF> throughput, ttft;
  for (double factor : {0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0}) {
    simulator::ServeSpec s = poisson_spec();
    s.workload.rate_per_s = factor * saturation;
    const simulator::ServeResult r = simulator::simulate_serving(c, f.session.hardware(), f.session.scenario(), s);
    throughput.emplace_back(factor * saturation, r.output_tokens_per_s);
    ttft.emplace_back(factor * saturation, r.ttft_s.p90);
  }
  CHECK(line_points(*f.view.throughputPanel(), "served") == throughput);
  CHECK(line_points(*f.view.ttftPanel(), "p90 TTFT") == ttft);
  // Past saturation the queue grows: p90 TTFT at 2x is above that at 0.25x.
  CHECK(ttft.back().y() > ttft.front().y());
}

TEST_CASE("serving tab: a bad workload field is shown at the field, naming its pointer", "[gui][serve]") {
  ServingFixture f;
  set_poisson_form(f);
  REQUIRE(f.view.result());
  f.field<QDoubleSpinBox>("/workload/rate_per_s")->setValue(0);
  f.view.waitForRun();
  CHECK(f.view.errorAt("/workload/rate_per_s").contains("must be above 0 requests/s"));
  CHECK(f.field<QLabel>("/workload/rate_per_s#error")->toolTip().contains("/workload/rate_per_s"));
  CHECK(shows(f.view, {"Cannot run", "/workload/rate_per_s", "must be above 0"}));
  // The charts keep the last valid run, and the line says so.
  CHECK(f.view.result()->spec == poisson_spec());
  CHECK(shows(f.view, {"the charts and tables show the last run"}));

  // A prompt the token budget never holds without chunked prefill: the engine's error.
  f.field<QDoubleSpinBox>("/workload/rate_per_s")->setValue(6);
  f.field<QCheckBox>("/engine/chunked_prefill")->setChecked(false);
  f.field<QSpinBox>("/engine/max_batched_tokens")->setValue(256);
  f.view.waitForRun();
  CHECK(f.view.errorAt("/workload/rate_per_s").isEmpty());
  CHECK(shows(f.view, {"/workload", "never fits engine.max_batched_tokens (256)"}));
}

TEST_CASE("the serving simulation waits while its tab is hidden and runs when it is shown", "[gui][serve]") {
  auto w = test::started_window();  // the Costs tab in front
  gui::ServingView* v = w->servingView();
  // The defaults' run was asked for while the tab was hidden: it waits, nothing runs.
  CHECK(v->busy());
  QTest::qWait(400);  // past the edit delay
  CHECK_FALSE(v->result());
  w->showTabOf(v);
  QTest::qWait(400);
  v->waitForRun();
  REQUIRE(v->result());
  CHECK_FALSE(v->busy());
  // Hidden again, an edit waits for the tab once more: no run starts.
  w->tabs()->setCurrentIndex(0);
  int started = 0;
  QObject::connect(v, &gui::ServingView::progress, v, [&](int, int) { ++started; });
  auto* batch = w->scenarioEditor()->findChild<QSpinBox*>("/scenario/decode/batch");
  REQUIRE(batch);
  batch->setValue(16);
  QTest::qWait(400);
  CHECK(started == 0);
  CHECK(v->busy());
  w->showTabOf(v);
  QTest::qWait(400);
  v->waitForRun();
  CHECK(started > 0);  // shown, it ran
  CHECK_FALSE(v->busy());
  w->waitForEvaluation();
}

TEST_CASE("the main window has a Serving tab whose charts export with the others", "[gui][serve]") {
  test::ensure_app();
  gui::MainWindow w(gui_core::read_catalog(test::profiles()));
  REQUIRE(w.applyDefaults().isEmpty());
  w.servingView()->waitForRun();
  REQUIRE(w.servingView()->result());
  CHECK(w.tabs()->tabText(w.tabIndexOf(w.servingView())) == "&Serving");
  for (gui::ChartPanel* p : w.servingView()->panels()) {
    CHECK(w.chartPanels().contains(p));
    CHECK_FALSE(p->chart()->series().isEmpty());
  }
  w.waitForEvaluation();
}

namespace {

calibration::KernelCase kernel(const std::string& op_class, const std::string& precision, const std::string& label,
                               int line, double measured_s, double predicted_s, bool held_out) {
  return {op_class, precision, label, "table.csv:" + std::to_string(line), measured_s, predicted_s, held_out};
}

std::vector<QPointF> scatter_points(const QChart& chart, const QString& group) {
  for (QAbstractSeries* s : chart.series())
    if (auto* scatter = qobject_cast<QScatterSeries*>(s); scatter && scatter->name() == group) {
      const QList<QPointF> p = scatter->points();
      return {p.begin(), p.end()};
    }
  return {};
}

}  // namespace

TEST_CASE("the validation tab opens a kernel report: the held-out rows per op class, with their labels",
          "[gui][serve][validation]") {
  test::ensure_app();
  const auto dir = test::temp_dir("serve_kernels");
  calibration::KernelValidation v = calibration::summarize_kernel_cases(
      {kernel("gemm", "bf16", "m=8 n=4096 k=4096", 2, 2.0e-5, 2.2e-5, true),
       kernel("gemm", "fp8", "m=64 n=4096 k=4096", 3, 3.0e-5, 2.7e-5, true),
       kernel("gemm", "bf16", "m=16 n=4096 k=4096", 4, 2.1e-5, 2.1e-5, false),
       kernel("decode_attention", "bf16", "b=8 ctx=4096, 32/8 heads", 5, 4.0e-5, 5.0e-5, true)},
      2);
  v.device = "h100_sxm";
  v.profile = "h100-sxm";
  model::write_file_atomic((dir / "kernels.json").string(), calibration::to_json(v).dump(2));
  model::write_file_atomic((dir / "kernels.csv").string(), calibration::kernel_cases_csv(v));
  gui::ValidationView view;
  for (const char* file : {"kernels.json", "kernels.csv"}) {
    CAPTURE(file);
    REQUIRE(view.loadFile(QString::fromStdString((dir / file).string())));
    CHECK(view.message().contains("kernel report, device h100_sxm, profile h100-sxm"));
    CHECK(view.message().contains("3 points from 2 op classes"));
    // (measured, predicted) seconds of the held-out rows; the fitted row is left out.
    CHECK(scatter_points(*view.panel()->chart(), "gemm") ==
          std::vector<QPointF>{QPointF(2.0e-5, 2.2e-5), QPointF(3.0e-5, 2.7e-5)});
    CHECK(scatter_points(*view.panel()->chart(), "decode_attention") == std::vector<QPointF>{QPointF(4.0e-5, 5.0e-5)});
    REQUIRE(view.spec().groups.size() == 2);
    CHECK(view.spec().groups[0].labels ==
          std::vector<std::string>{"bf16 m=8 n=4096 k=4096 (table.csv:2)", "fp8 m=64 n=4096 k=4096 (table.csv:3)"});
    // A label with a comma survives the CSV's quoting.
    CHECK(view.spec().groups[1].labels == std::vector<std::string>{"bf16 b=8 ctx=4096, 32/8 heads (table.csv:5)"});
    CHECK(view.panel()->chart()->axes(Qt::Horizontal).front()->titleText() == "measured kernel time (s)");
  }
  // kernels.json alone: its worst rows (2 per class here), and the message says so.
  std::filesystem::remove(dir / "kernels.csv");
  REQUIRE(view.loadFile(QString::fromStdString((dir / "kernels.json").string())));
  CHECK(view.message().contains("worst rows only"));
  CHECK(scatter_points(*view.panel()->chart(), "gemm").size() == 2);
  // A broken row is named by file, line and column.
  model::write_file_atomic((dir / "kernels.csv").string(),
                           calibration::kernel_cases_csv(v) + "gemm,bf16,m=1,table.csv:9,1,-1,2e-5,0\n");
  CHECK_FALSE(view.loadFile(QString::fromStdString((dir / "kernels.csv").string())));
  CHECK(view.message().contains("kernels.csv:6"));
  CHECK(view.message().contains("column measured_s"));
}

TEST_CASE("validation scatter points carry their case labels", "[gui][serve][validation]") {
  test::ensure_app();
  const std::vector<gui_core::ValidationPoint> points = {{"base", "prefill L=64", 0.010, 0.012},
                                                         {"hd4", "prefill L=64", 0.030, 0.025},
                                                         {"hd4", "decode ctx=64", 0.002, 0.0021}};
  const charts::ScatterChart spec = charts::validation_scatter(points);
  REQUIRE(spec.groups.size() == 2);
  CHECK(spec.groups[0].labels == std::vector<std::string>{"prefill L=64"});
  CHECK(spec.groups[1].labels == std::vector<std::string>{"prefill L=64", "decode ctx=64"});
  CHECK(spec.groups[1].labels.size() == spec.groups[1].points.size());
  gui::ValidationView view;
  view.setPoints(points, "sample");
  CHECK(view.spec().groups[1].labels == spec.groups[1].labels);
}
