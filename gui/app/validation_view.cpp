#include "validation_view.hpp"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <filesystem>

#include "chart_panel.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/files.hpp"

namespace hdlab::gui {
namespace {

// `hdlab validate --kerneldb -o DIR` writes kernels.json (device, profile, statistics) and
// kernels.csv (every row) side by side: either file opens the pair, the other one read
// when it is there.
gui_core::ValidationFile read_kernel_report(const std::filesystem::path& path, const nlohmann::json* summary) {
  const std::filesystem::path dir = path.parent_path();
  if (summary) {
    const std::filesystem::path csv = dir / "kernels.csv";
    if (!std::filesystem::exists(csv)) return gui_core::parse_kernel_report(*summary, nullptr);
    const std::string text = model::read_text_file(csv.string());
    return gui_core::parse_kernel_report(*summary, &text, csv.string());
  }
  const std::string text = model::read_text_file(path.string());
  const std::filesystem::path json = dir / "kernels.json";
  const nlohmann::json sibling = std::filesystem::exists(json) ? model::read_json_file(json.string()) : nlohmann::json();
  return gui_core::parse_kernel_report(sibling, &text, path.string());
}

gui_core::ValidationFile read_validation_file(const QString& path) {
  const std::filesystem::path p = path.toStdString();
  if (p.extension() == ".csv") return read_kernel_report(p, nullptr);
  const nlohmann::json j = model::read_json_file(p.string());
  if (gui_core::is_kernel_summary(j)) return read_kernel_report(p, &j);
  return gui_core::parse_validation_file(j);
}

}  // namespace

ValidationView::ValidationView(QWidget* parent) : QWidget(parent) {
  auto* v = new QVBoxLayout(this);
  auto* row = new QHBoxLayout();
  auto* open = new QPushButton(tr("Open results..."));
  open->setToolTip(tr("What `hdlab validate -o DIR` writes (DIR/validation.json or DIR/points.json), the "
                      "published.json of `hdlab validate --published`, or any {\"points\": [{\"design\", "
                      "\"label\", \"predicted_s\", \"measured_s\"}]} (Ctrl+Shift+V)"));
  message_ = new QLabel(tr("No validation points loaded. Predicted-vs-measured points come from `hdlab validate` "
                           "runs of the reference executor; open their validation.json, points.json or published.json to plot them."));
  message_->setWordWrap(true);
  row->addWidget(message_, 1);
  row->addWidget(open);
  v->addLayout(row);
  panel_ = new ChartPanel("validation");
  v->addWidget(panel_, 1);
  spec_ = charts::validation_scatter({});
  panel_->setChart(charts::build_scatter_chart(spec_));
  connect(open, &QPushButton::clicked, this, &ValidationView::openDialog);
}

QString ValidationView::message() const { return message_->text(); }

void ValidationView::setPoints(const std::vector<gui_core::ValidationPoint>& points, const QString& source) {
  gui_core::ValidationFile f;
  f.kind = "points";
  f.points = points;
  setFile(f, source);
}

void ValidationView::setFile(const gui_core::ValidationFile& f, const QString& source) {
  const std::vector<gui_core::ValidationPoint>& points = f.points;
  charts::ScatterChart spec = charts::validation_scatter(points);
  spec.x.title = f.measured_axis;
  spec.y.title = f.predicted_axis;
  panel_->setChart(charts::build_scatter_chart(spec));
  spec_ = std::move(spec);
  const gui_core::ValidationSummary s = gui_core::summarize(points);
  const bool kernels = f.kind.rfind("kernel report", 0) == 0;
  const QString groups = f.kind == "published report" ? tr("metrics") : kernels ? tr("op classes") : tr("designs");
  const QString left_out =
      f.left_out > 0 ? tr(" %1 cases left out (no positive value on both sides).").arg(f.left_out) : QString();
  const QString kind = QString::fromStdString(f.about.empty() ? f.kind : f.kind + ", " + f.about);
  message_->setText(tr("%1 (%2): %3 points from %4 %5; median |predicted/measured - 1| = %6 %, worst %7 %, %8 % "
                       "within 20 %.%9")
                        .arg(source, kind)
                        .arg(s.points)
                        .arg(s.designs.size())
                        .arg(groups)
                        .arg(s.median_abs_error * 100, 0, 'f', 1)
                        .arg(s.max_abs_error * 100, 0, 'f', 1)
                        .arg(s.within_20_percent * 100, 0, 'f', 0)
                        .arg(left_out));
}

bool ValidationView::loadFile(const QString& path) {
  try {
    setFile(read_validation_file(path), path);
    return true;
  } catch (const model::ConfigError& e) {
    message_->setText(tr("<span style='color:#B00020'>%1</span>").arg(QString::fromStdString(e.what()).toHtmlEscaped()));
    return false;
  }
}

void ValidationView::openDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open validation results"), QString(),
                                                    tr("Validation results (*.json *.csv);;All files (*)"));
  if (!path.isEmpty()) loadFile(path);
}

}  // namespace hdlab::gui
