// The costs table in words: every simulator metric has a label, group, unit and tooltip
// (gui_core/metric_info); the table shows group header rows and labelled rows whose
// values are the simulator's; an HD design's visible strings say "stream" and "local",
// not "copy" and "sliding"; the first-run hint shows until dismissed, then never again.
#include <catch2/catch.hpp>

#include <set>

#include <QAbstractButton>
#include <QComboBox>
#include <QDockWidget>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>
#include <QtCharts/QChartView>

#include "first_run_hint.hpp"
#include "gui_test_support.hpp"
#include "window_test_support.hpp"
#include "hdlab/gui_core/metric_info.hpp"
#include "hdlab/gui_core/tradeoffs.hpp"
#include "main_window.hpp"
#include "mask_view.hpp"
#include "metrics_model.hpp"
#include "session.hpp"
#include "tradeoff_view.hpp"

using namespace hdlab;
using simulator::Metric;

namespace {

// The costs tab's table over the metrics model.
QTableView* metrics_view(gui::MainWindow& w) {
  for (QTableView* v : w.costsView()->findChildren<QTableView*>())
    if (v->model() == w.costsView()->metrics()) return v;
  return nullptr;
}

QString cell(const QAbstractItemModel& m, int row, int column, int role = Qt::DisplayRole) {
  return m.data(m.index(row, column), role).toString();
}

// Every string a user can read in `w` as it is shown now: texts, titles, tooltips,
// combo-box items, tab names, table headers and cells (with their tooltips), chart
// titles and axis titles, the mask pictures' titles, the status bar and window title.
void collect_visible(QWidget& w, QStringList& out) {
  out << w.windowTitle();
  for (QWidget* c : w.findChildren<QWidget*>()) {
    if (!c->isVisibleTo(&w)) continue;
    out << c->toolTip() << c->statusTip();
    if (auto* l = qobject_cast<QLabel*>(c)) out << l->text();
    if (auto* b = qobject_cast<QAbstractButton*>(c)) out << b->text();
    if (auto* g = qobject_cast<QGroupBox*>(c)) out << g->title();
    if (auto* m = qobject_cast<gui::MaskCanvas*>(c)) out << m->title();
    if (auto* box = qobject_cast<QComboBox*>(c))
      for (int i = 0; i < box->count(); ++i) out << box->itemText(i);
    if (auto* t = qobject_cast<QTabWidget*>(c))
      for (int i = 0; i < t->count(); ++i) out << t->tabText(i) << t->tabToolTip(i);
    if (auto* v = qobject_cast<QChartView*>(c); v && v->chart()) {
      out << v->chart()->title();
      for (QAbstractAxis* a : v->chart()->axes()) out << a->titleText();
    }
    if (auto* v = qobject_cast<QAbstractItemView*>(c); v && v->model()) {
      const QAbstractItemModel& m = *v->model();
      for (int col = 0; col < m.columnCount(); ++col)
        for (int role : {Qt::DisplayRole, Qt::ToolTipRole}) out << m.headerData(col, Qt::Horizontal, role).toString();
      for (int row = 0; row < m.rowCount(); ++row)
        for (int col = 0; col < m.columnCount(); ++col)
          for (int role : {Qt::DisplayRole, Qt::ToolTipRole}) out << cell(m, row, col, role);
    }
  }
}

// Every main tab with every editor tab in front, so each page's strings are seen.
QStringList visible_strings(gui::MainWindow& w) {
  auto* editor = qobject_cast<QTabWidget*>(w.findChild<QDockWidget*>("editor")->widget());
  REQUIRE(editor);
  QStringList out;
  for (int i = 0; i < w.tabs()->count(); ++i)
    for (int j = 0; j < editor->count(); ++j) {
      w.tabs()->setCurrentIndex(i);
      editor->setCurrentIndex(j);
      QCoreApplication::processEvents();
      collect_visible(w, out);
    }
  w.tabs()->setCurrentIndex(0);
  editor->setCurrentIndex(0);
  return out;
}

}  // namespace

TEST_CASE("every simulator metric has a label, group, unit and tooltip", "[gui][metrics]") {
  std::set<int> seen;
  int last_group = -1;
  for (const gui_core::MetricInfo& i : gui_core::metric_infos()) {
    INFO(simulator::metric_name(i.metric));
    CHECK(seen.insert(static_cast<int>(i.metric)).second);  // one entry per metric
    // Listed group by group, in the table's order.
    CHECK(static_cast<int>(i.group) >= last_group);
    last_group = static_cast<int>(i.group);
  }
  for (int k = 0; k < simulator::metric_count; ++k) {
    const auto m = static_cast<Metric>(k);
    INFO(simulator::metric_name(m));
    const gui_core::MetricInfo* i = gui_core::find_metric_info(m);
    REQUIRE(i != nullptr);
    const std::string label = i->label;
    CHECK_FALSE(label.empty());
    CHECK(label.find('_') == std::string::npos);  // words, not the snake_case column name
    CHECK(label != simulator::metric_name(m));
    CHECK_FALSE(std::string(i->unit).empty());
    CHECK(std::string(i->tooltip).size() > 20);
    CHECK(static_cast<int>(i->group) < gui_core::metric_group_count);
    CHECK_FALSE(std::string(gui_core::group_label(i->group)).empty());
    // The row's tooltip names the CLI / CSV column, so a number can be found in a sweep.
    CHECK_THAT(gui_core::metric_tooltip(m), Catch::Contains(simulator::metric_name(m)));
  }
  CHECK(static_cast<int>(seen.size()) == simulator::metric_count);
}

TEST_CASE("the costs table shows group rows and labelled rows with the simulator's numbers", "[gui][metrics]") {
  auto w = test::started_window({1600, 1000});
  const gui::MetricsModel& m = *w->costsView()->metrics();
  REQUIRE(m.rowCount() == simulator::metric_count + gui_core::metric_group_count);
  QTableView* view = metrics_view(*w);
  REQUIRE(view);

  // Group header rows, in order, each spanning the row, followed by its metrics.
  QStringList groups;
  for (int row = 0; row < m.rowCount(); ++row) {
    const std::optional<Metric> metric = gui::MetricsModel::metricAt(row);
    if (!metric) {
      CHECK(m.data(m.index(row, gui::MetricsModel::Name), gui::MetricsModel::GroupRole).toBool());
      CHECK(view->columnSpan(row, 0) == gui::MetricsModel::ColumnCount);
      groups << cell(m, row, gui::MetricsModel::Name);
      continue;
    }
    INFO(simulator::metric_name(*metric));
    const gui_core::MetricInfo* info = gui_core::find_metric_info(*metric);
    REQUIRE(info);
    CHECK(gui::MetricsModel::rowOf(*metric) == row);
    CHECK(groups.last() == gui_core::group_label(info->group));
    CHECK(cell(m, row, gui::MetricsModel::Name) == info->label);
    CHECK(cell(m, row, gui::MetricsModel::Unit) == info->unit);
    CHECK(cell(m, row, gui::MetricsModel::Name, Qt::ToolTipRole).contains(info->tooltip));
    CHECK(view->columnSpan(row, 0) == 1);
  }
  CHECK(groups == QStringList{"Size", "Training", "Prefill", "Decode", "Memory", "Serving capacity"});
  CHECK(cell(m, 0, gui::MetricsModel::Name) == "Size");
  CHECK_FALSE(m.flags(m.index(0, gui::MetricsModel::Name)).testFlag(Qt::ItemIsSelectable));

  // The values are the simulator's for the session's design and its backbone alone.
  const gui::Session& s = *w->session();
  const simulator::Metrics design = simulator::evaluate(s.config(), s.hardware(), s.scenario());
  const simulator::Metrics base = simulator::evaluate(gui_core::baseline_config(s.config()), s.hardware(), s.scenario());
  for (Metric metric : {Metric::params_total, Metric::train_step_s, Metric::prefill_s, Metric::decode_tokens_per_s,
                        Metric::kv_bytes_per_seq, Metric::max_batch_seqs}) {
    INFO(simulator::metric_name(metric));
    const int row = gui::MetricsModel::rowOf(metric);
    CHECK(m.data(m.index(row, gui::MetricsModel::Design), Qt::UserRole).toDouble() == design[metric]);
    CHECK(m.data(m.index(row, gui::MetricsModel::Baseline), Qt::UserRole).toDouble() == base[metric]);
    CHECK(m.data(m.index(row, gui::MetricsModel::Ratio), Qt::UserRole).toDouble() == design[metric] / base[metric]);
  }
  const int kv = gui::MetricsModel::rowOf(Metric::kv_bytes_per_seq);
  CHECK(cell(m, kv, gui::MetricsModel::Name) == "KV cache per sequence");
  CHECK(cell(m, kv, gui::MetricsModel::Design).endsWith("GB"));
  CHECK(cell(m, kv, gui::MetricsModel::Ratio) == "4.00x");  // HD n=4 caches 4 positions per token
}

TEST_CASE("an HD design's visible strings say stream and local, not copy and sliding", "[gui][metrics][words]") {
  auto w = test::started_window({1600, 1000});
  REQUIRE(std::holds_alternative<model::HdDesign>(w->session()->config().design.method));
  const QStringList strings = visible_strings(*w);
  REQUIRE(strings.size() > 200);
  const QRegularExpression copy(R"(\bcop(y|ies)\b)", QRegularExpression::CaseInsensitiveOption);
  const QRegularExpression sliding(R"(\bsliding\b)", QRegularExpression::CaseInsensitiveOption);
  for (const QString& t : strings) {
    INFO(t.toStdString());
    // "Copy design JSON" puts the design on the clipboard, and the hardware profile's
    // sources cite a measured device-to-device memory copy: no stream is meant.
    if (!t.contains("design JSON", Qt::CaseInsensitive) && !t.contains("device-to-device copy"))
      CHECK_FALSE(t.contains(copy));
    // The backbone's sliding-window layers keep their name, said to be the backbone's.
    if (t.contains(sliding)) CHECK(t.contains("backbone", Qt::CaseInsensitive));
  }
  // What the HD views say instead.
  CHECK_FALSE(strings.filter("x 4 streams = ").isEmpty());  // the mask picture's numbers
  CHECK_FALSE(strings.filter("Logical order (t = i x n + k, k = stream)").isEmpty());
}

TEST_CASE("the first-run hint shows once and stays dismissed", "[gui][metrics][hint]") {
  test::ensure_app();
  // A settings file of the test's own, so neither the user's settings nor another run count.
  const std::filesystem::path dir = test::temp_dir("hint_settings");
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, QString::fromStdString(dir.string()));
  QCoreApplication::setOrganizationName("hdlab-test");
  QCoreApplication::setApplicationName("test_gui_metrics");
  QSettings().remove(gui::FirstRunHint::kDismissedKey);

  {
    auto w = test::started_window({1600, 1000});
    auto* hint = w->findChild<gui::FirstRunHint*>("firstRunHint");
    REQUIRE(hint);
    CHECK(hint->isVisibleTo(w.get()));
    // What the window is and the three main actions, by the names the window uses.
    for (const char* word : {"Design", "Hardware &amp; scenario", "Costs", "1.", "2.", "3."}) {
      INFO(word);
      CHECK(hint->text().contains(word));
    }
    auto* ok = hint->findChild<QPushButton*>();
    REQUIRE(ok);
    CHECK(ok->text() == "Got it");
    ok->click();
    CHECK_FALSE(hint->isVisibleTo(w.get()));
  }
  CHECK(QSettings().value(gui::FirstRunHint::kDismissedKey).toBool());
  {
    auto w = test::started_window({1600, 1000});  // the next start
    auto* hint = w->findChild<gui::FirstRunHint*>("firstRunHint");
    REQUIRE(hint);
    CHECK_FALSE(hint->isVisibleTo(w.get()));
  }
  CHECK(std::filesystem::exists(dir / "hdlab-test" / "test_gui_metrics.ini"));
  QSettings().remove(gui::FirstRunHint::kDismissedKey);
}
