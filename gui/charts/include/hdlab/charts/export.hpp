#pragma once
// Writing charts to PNG or SVG, with or without a display.
//
// For the CLI (linked only when HDLAB_GUI is ON):
//   hdlab::charts::OffscreenApplication app;   // once, in the verb, before any chart
//   hdlab::charts::write_chart(spec, "out/validation.png", 1200, 800);
// write_chart picks PNG or SVG by the file extension and writes atomically; errors
// (unwritable folder, unknown extension, SVG without Qt Svg) are model::ConfigErrors
// naming the path, which the CLI already maps to exit code 2.
#include <memory>
#include <string>

#include <QSize>
#include <QtCharts/QChart>

#include "hdlab/charts/chart_data.hpp"

class QApplication;

namespace hdlab::charts {

// Creates a QApplication on the "offscreen" platform when none exists yet (and owns it
// until destroyed); does nothing when the program already has one. Not thread-safe:
// create it on the main thread.
class OffscreenApplication {
 public:
  OffscreenApplication();
  ~OffscreenApplication();
  OffscreenApplication(const OffscreenApplication&) = delete;
  OffscreenApplication& operator=(const OffscreenApplication&) = delete;
  bool owns_application() const { return owned_ != nullptr; }

 private:
  std::unique_ptr<QApplication> owned_;
};

// Renders a chart at `size` pixels (logical), whether or not it sits in a view; a chart
// in a view is resized for the render and restored after.
QImage render_chart_image(QChart& chart, QSize size);

// Write a chart; ConfigError naming `path` on failure.
void save_chart_png(QChart& chart, const std::string& path, QSize size);
void save_chart_svg(QChart& chart, const std::string& path, QSize size, const std::string& title = "");
// By extension: .png or .svg.
void save_chart(QChart& chart, const std::string& path, QSize size);

// Build and write in one call (the CLI's entry points). Need a QApplication (above).
void write_chart(const LineChart& spec, const std::string& path, int width, int height);
void write_chart(const ScatterChart& spec, const std::string& path, int width, int height);
void write_chart(const GanttChart& spec, const std::string& path, int width, int height);

}  // namespace hdlab::charts
