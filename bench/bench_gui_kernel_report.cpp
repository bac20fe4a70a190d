// Opening a kernel-level validation report in the GUI's Validation tab, offscreen: a
// synthetic report the size of the bundled H100 one (286,000 CSV rows, 58,000 of them held
// out, in 40 op classes with log-uniform times over 5 decades), then
//   parse_ms  gui_core::parse_kernel_report over the CSV text (the rows the fit saw are
//             read and skipped, as in a real report)
//   show_ms   ValidationView::setFile (scatter spec, chart, panel) plus the posted events
//             until the tab has repainted at 1200x800
// and the markers drawn (the scatter merges points within 1% of the axes per series once a
// chart has more than 5,000). Target: under 2 s for both together (it was ~14 s before the
// merging: Qt Charts rebuilds a graphics item per marker on every geometry change).
//
// usage: bench_gui_kernel_report [--rows N]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include <QApplication>
#include <QtCharts/QChartView>
#include <QtCharts/QScatterSeries>

#include "hdlab/gui_core/validation_points.hpp"
#include "validation_view.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// kernels.csv as `hdlab validate --kerneldb` writes it; one row in five is held out.
std::string synthetic_csv(long rows) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> decade(-5.5, -0.5), noise(-0.1, 0.1);
  std::string csv = "op_class,precision,label,source,held_out,measured_s,predicted_s,error\n";
  char line[256];
  for (long i = 0; i < rows; ++i) {
    const double measured = std::pow(10.0, decade(rng)), predicted = measured * (1 + noise(rng));
    std::snprintf(line, sizeof line, "class%ld,bf16,m=%ld n=128 k=256,gemm_perf.csv.gz:%ld,%d,%.9g,%.9g,%.6f\n",
                  i % 40, i, i + 2, i % 5 == 0 ? 1 : 0, measured, predicted, predicted / measured - 1);
    csv += line;
  }
  return csv;
}

}  // namespace

int main(int argc, char** argv) {
  long rows = 286000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--rows") == 0) rows = std::atol(argv[i + 1]);
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const std::string csv = synthetic_csv(rows);

  auto t0 = Clock::now();
  const hdlab::gui_core::ValidationFile file = hdlab::gui_core::parse_kernel_report({}, &csv, "kernels.csv");
  const double parse_ms = ms_since(t0);

  hdlab::gui::ValidationView view;
  view.resize(1200, 800);
  view.show();
  app.processEvents();
  t0 = Clock::now();
  view.setFile(file, "synthetic");
  app.processEvents();
  const double show_ms = ms_since(t0);

  long markers = 0;
  if (auto* chart_view = view.findChild<QChartView*>())
    for (QAbstractSeries* s : chart_view->chart()->series())
      if (auto* scatter = qobject_cast<QScatterSeries*>(s)) markers += scatter->count();
  std::printf("kernel report: %ld rows, %zu held-out points, %ld markers drawn\n", rows, file.points.size(), markers);
  std::printf("parse_ms %.0f  show_ms %.0f  total_ms %.0f  target (< 2000 ms) %s\n", parse_ms, show_ms,
              parse_ms + show_ms, parse_ms + show_ms < 2000 ? "met" : "not met");
  return 0;
}
