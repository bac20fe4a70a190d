#include "hdlab/charts/export.hpp"

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include <QApplication>
#include <QBuffer>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>

#include "hdlab/charts/charts.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/model/files.hpp"

namespace hdlab::charts {
namespace {

// QApplication keeps references to argc and argv for its lifetime and may edit argv.
int offscreen_argc = 3;
char arg0[] = "hdlab";
char arg1[] = "-platform";
char arg2[] = "offscreen";
char* offscreen_argv[] = {arg0, arg1, arg2, nullptr};

void require_application(const std::string& path) {
  if (!qobject_cast<QApplication*>(QCoreApplication::instance()))
    throw model::ConfigError(path, "charts need a QApplication (create hdlab::charts::OffscreenApplication first)");
}

// Draws the chart into `painter` over `target`, laid out at `size`.
void paint_chart(QChart& chart, QPainter& painter, QSize size) {
  QGraphicsScene* scene = chart.scene();
  QGraphicsScene own_scene;
  const bool borrowed = scene == nullptr;
  if (borrowed) {
    own_scene.addItem(&chart);
    scene = &own_scene;
  }
  const QRectF old = chart.geometry();
  chart.setGeometry(QRectF(QPointF(0, 0), QSizeF(size)));
  // The chart lays itself out on a posted event; an export must not wait for the loop.
  if (chart.layout()) chart.layout()->activate();
  QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
  fit_labels(chart);  // the labels Qt would elide at this size are thinned out first
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setRenderHint(QPainter::TextAntialiasing);
  scene->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), chart.mapRectToScene(chart.rect()));
  if (borrowed) {
    own_scene.removeItem(&chart);  // the scene must not delete a chart it does not own
  } else {
    chart.setGeometry(old);
    if (chart.layout()) chart.layout()->activate();
    fit_labels(chart);  // back to the view's size
  }
}

std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return ext;
}

template <class Spec, class Build>
void write_built(const Spec& spec, Build build, const std::string& path, int width, int height) {
  require_application(path);
  if (width < 16 || height < 16 || width > 16384 || height > 16384)
    throw model::ConfigError(path, "chart size must be 16..16384 pixels per side, got " + std::to_string(width) + "x" +
                                       std::to_string(height));
  std::unique_ptr<QChart> chart = build(spec);
  save_chart(*chart, path, QSize(width, height));
}

}  // namespace

OffscreenApplication::OffscreenApplication() {
  if (QCoreApplication::instance() != nullptr) return;
  // Headless hosts (CI, ssh) often have no XDG runtime folder; Qt then makes one in /tmp
  // and warns on stderr. Give it a private one so the verbs' output stays clean.
  if (std::getenv("XDG_RUNTIME_DIR") == nullptr) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("hdlab-runtime-" + std::to_string(::getuid()));
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
    if (!ec) ::setenv("XDG_RUNTIME_DIR", dir.c_str(), 0);
  }
  owned_ = std::make_unique<QApplication>(offscreen_argc, offscreen_argv);
}

OffscreenApplication::~OffscreenApplication() = default;

QImage render_chart_image(QChart& chart, QSize size) {
  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  QPainter painter(&image);
  paint_chart(chart, painter, size);
  painter.end();
  return image;
}

void save_chart_png(QChart& chart, const std::string& path, QSize size) {
  require_application(path);
  const QImage image = render_chart_image(chart, size);
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!image.save(&buffer, "PNG")) throw model::ConfigError(path, "PNG encoding failed");
  model::write_file_atomic(path, std::string(bytes.constData(), static_cast<std::size_t>(bytes.size())));
}

void save_chart_svg(QChart& chart, const std::string& path, QSize size, const std::string& title) {
  require_application(path);
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  QSvgGenerator svg;
  svg.setOutputDevice(&buffer);
  svg.setSize(size);
  svg.setViewBox(QRect(QPoint(0, 0), size));
  svg.setTitle(QString::fromStdString(title.empty() ? chart.title().toStdString() : title));
  svg.setDescription("hdlab chart");
  QPainter painter(&svg);
  paint_chart(chart, painter, size);
  painter.end();
  model::write_file_atomic(path, std::string(bytes.constData(), static_cast<std::size_t>(bytes.size())));
}

void save_chart(QChart& chart, const std::string& path, QSize size) {
  const std::string ext = extension_of(path);
  if (ext == ".png") return save_chart_png(chart, path, size);
  if (ext == ".svg") return save_chart_svg(chart, path, size);
  throw model::ConfigError(path, "unknown chart format \"" + ext + "\" (use .png or .svg)");
}

void write_chart(const LineChart& spec, const std::string& path, int width, int height) {
  write_built(spec, build_line_chart, path, width, height);
}
void write_chart(const ScatterChart& spec, const std::string& path, int width, int height) {
  write_built(spec, build_scatter_chart, path, width, height);
}
void write_chart(const GanttChart& spec, const std::string& path, int width, int height) {
  write_built(spec, build_gantt_chart, path, width, height);
}

}  // namespace hdlab::charts
