#include "serving_view.hpp"

#include <cmath>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include "chart_panel.hpp"
#include "flow_layout.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/serving_charts.hpp"
#include "session.hpp"

namespace hdlab::gui {
namespace {

constexpr int kIntMax = 10'000'000;

QStandardItem* number_item(const QString& text, double value) {
  auto* item = new QStandardItem(text);
  item->setData(value, Qt::UserRole);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  item->setEditable(false);
  return item;
}

QStandardItem* text_item(const QString& text) {
  auto* item = new QStandardItem(text);
  item->setEditable(false);
  return item;
}

QTableView* table_over(QStandardItemModel* model) {
  auto* view = new QTableView();
  view->setModel(model);
  view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view->horizontalHeader()->setStretchLastSection(true);
  view->verticalHeader()->hide();
  view->setMinimumHeight(200);
  return view;
}

QString fixed(double v, int decimals) { return QString::number(v, 'f', decimals); }

}  // namespace

ServingView::ServingView(Session* session, QWidget* parent)
    : QWidget(parent), session_(session), general_error_(new QLabel()), errors_(general_error_), job_(this) {
  general_error_->setStyleSheet("color: #B00020;");
  general_error_->setWordWrap(true);
  general_error_->hide();
  // Form, summary and results scroll together: in a short window the charts get the
  // whole height once the form is scrolled away.
  auto* content = new QWidget();
  auto* v = new QVBoxLayout(content);
  v->addLayout(buildForm());
  v->addWidget(general_error_);
  summary_ = new QLabel(tr("One serving instance (the scenario's tp x ep devices) running a continuous-batching engine "
                           "over the workload; step times from the cost model."));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(summary_);
  v->addWidget(buildResults(), 1);
  auto* area = new QScrollArea();
  area->setWidget(content);
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(area);
  connectSignals();
  arrivalsChanged();
}

QLayout* ServingView::buildForm() {
  auto* form = new FlowLayout();
  arrivals_ = choice_box({{tr("Poisson (rate)"), "poisson"}, {tr("closed (users)"), "closed"}, {tr("static batch"), "static"}},
                         tr("How requests arrive: an open Poisson stream, a closed loop of users, or all at t = 0"));
  requests_ = int_spin(1, kIntMax, 200, tr("Requests in all"), tr(" requests"));
  rate_ = real_spin(0, 1e6, 4, 3, tr("Poisson arrival rate [requests/s]"));
  rate_->setSuffix(tr(" req/s"));
  users_ = int_spin(1, kIntMax, 16, tr("Closed loop: concurrent users"), tr(" users"));
  think_ = real_spin(0, 1e6, 0, 3, tr("Closed loop: pause between a user's requests [s]"));
  think_->setSuffix(tr(" s"));
  input_ = int_spin(1, kIntMax, 1024, tr("Prompt length of every request [tokens]"), tr(" tokens"));
  output_ = int_spin(1, kIntMax, 128, tr("Output length of every request [tokens]"), tr(" tokens"));
  seed_ = int_spin(0, kIntMax, 1, tr("Seed of the arrival times"));
  batching_ = choice_box({{tr("continuous"), "continuous"}, {tr("static"), "static"}},
                         tr("continuous: requests join and leave every step; static: a batch runs to completion"));
  max_running_ = int_spin(1, kIntMax, 256, tr("Requests in the engine at once"), tr(" requests"));
  max_batched_ = int_spin(1, kIntMax, 8192, tr("Tokens per engine step (decode rows + prompt tokens)"), tr(" tokens"));
  chunked_ = new QCheckBox();
  chunked_->setChecked(true);
  chunked_->setToolTip(tr("Cut prompts into chunks that fill each step's token budget"));
  add_labelled_fields(form, errors_,
                      {{tr("arrivals"), arrivals_, "/workload/arrivals"},
                       {tr("requests"), requests_, "/workload/requests"},
                       {tr("rate"), rate_, "/workload/rate_per_s"},
                       {tr("users"), users_, "/workload/users"},
                       {tr("think"), think_, "/workload/think_s"},
                       {tr("input"), input_, "/workload/input_tokens"},
                       {tr("output"), output_, "/workload/output_tokens"},
                       {tr("seed"), seed_, "/workload/seed"},
                       {tr("batching"), batching_, "/engine/batching"},
                       {tr("max running"), max_running_, "/engine/max_running"},
                       {tr("max batched"), max_batched_, "/engine/max_batched_tokens"},
                       {tr("chunked prefill"), chunked_, "/engine/chunked_prefill"}});
  run_button_ = new QPushButton(tr("Run"));
  run_button_->setToolTip(tr("Simulate the workload and the load sweep now (they also rerun after each edit)"));
  form->addWidget(run_button_);
  return form;
}

QWidget* ServingView::buildResults() {
  auto* results = new QWidget();
  grid_ = new QGridLayout(results);
  grid_->setContentsMargins(0, 0, 0, 0);
  cdf_panel_ = new ChartPanel("serving-latency-cdf");
  throughput_panel_ = new ChartPanel("serving-throughput-vs-load");
  ttft_panel_ = new ChartPanel("serving-ttft-vs-load");
  kv_panel_ = new ChartPanel("serving-kv-over-time");
  // Taller than the panels' minimum, so the vertical axis titles fit beside the plot;
  // the tab scrolls in a short window.
  for (ChartPanel* p : {cdf_panel_, throughput_panel_, ttft_panel_, kv_panel_}) p->view()->setMinimumHeight(340);
  latency_ = new QStandardItemModel(0, 6, this);
  latency_->setHorizontalHeaderLabels(
      {tr("latency"), tr("mean (ms)"), tr("p50 (ms)"), tr("p90 (ms)"), tr("p99 (ms)"), tr("max (ms)")});
  throughput_ = new QStandardItemModel(0, 3, this);
  throughput_->setHorizontalHeaderLabels({tr("quantity"), tr("value"), tr("unit")});
  latency_view_ = table_over(latency_);
  throughput_view_ = table_over(throughput_);
  placeResults(2);
  return results;
}

void ServingView::placeResults(int columns) {
  columns_ = columns;
  const QList<QWidget*> items{cdf_panel_, kv_panel_, throughput_panel_, ttft_panel_, latency_view_, throughput_view_};
  for (QWidget* w : items) grid_->removeWidget(w);
  for (int row = 0; row < 6; ++row) grid_->setRowStretch(row, 0);
  for (int i = 0; i < static_cast<int>(items.size()); ++i) {
    grid_->addWidget(items[i], i / columns, i % columns);
    if (i < 4) grid_->setRowStretch(i / columns, 1);  // the charts take the height; the tables keep theirs
  }
}

void ServingView::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  // Two charts side by side where both fit at their minimum width (plus the Export
  // column and margins), one column in a narrow window, so the tab never scrolls sideways.
  const int columns = width() >= 2 * (ChartPanel::kMinimumChartSize.width() + 60) ? 2 : 1;
  if (columns != columns_) placeResults(columns);
}

void ServingView::connectSignals() {
  debounce_.setSingleShot(true);
  debounce_.setInterval(250);
  connect(&debounce_, &QTimer::timeout, this, &ServingView::run);
  for (QSpinBox* s : {requests_, users_, input_, output_, seed_, max_running_, max_batched_})
    connect(s, &QSpinBox::valueChanged, this, &ServingView::schedule);
  for (QDoubleSpinBox* s : {rate_, think_}) connect(s, &QDoubleSpinBox::valueChanged, this, &ServingView::schedule);
  for (QComboBox* c : {arrivals_, batching_}) connect(c, &QComboBox::currentIndexChanged, this, &ServingView::schedule);
  connect(arrivals_, &QComboBox::currentIndexChanged, this, &ServingView::arrivalsChanged);
  connect(chunked_, &QCheckBox::toggled, this, &ServingView::schedule);
  connect(run_button_, &QPushButton::clicked, this, &ServingView::run);
  connect(session_, &Session::configChanged, this, &ServingView::schedule);
  connect(session_, &Session::hardwareChanged, this, &ServingView::schedule);
  connect(session_, &Session::scenarioChanged, this, &ServingView::schedule);
  job_.on_progress = [this](int done, int total) { emit progress(done, total); };
  job_.on_result = [this](const gui_core::ServingRun& r) { onResult(r); };
  job_.on_error = [this](const model::ConfigError& e) { showError(e); };
  job_.on_idle = [this] { emit idle(); };
}

void ServingView::arrivalsChanged() {
  const QString kind = choice_value(arrivals_);
  rate_->setEnabled(kind == "poisson");
  users_->setEnabled(kind == "closed");
  think_->setEnabled(kind == "closed");
}

void ServingView::schedule() {
  if (!session_->ready()) return;
  if (isVisible()) debounce_.start();
  else pending_ = true;
}

void ServingView::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (pending_) debounce_.start();
  pending_ = false;
}

nlohmann::json ServingView::formJson() const {
  const std::string kind = choice_value(arrivals_).toStdString();
  nlohmann::json w = {{"arrivals", kind},
                      {"requests", requests_->value()},
                      {"input_tokens", input_->value()},
                      {"output_tokens", output_->value()},
                      {"seed", seed_->value()}};
  // Only the keys of the chosen kind: the parser refuses a rate on a closed loop.
  if (kind == "poisson") w["rate_per_s"] = rate_->value();
  if (kind == "closed") {
    w["users"] = users_->value();
    w["think_s"] = think_->value();
  }
  const nlohmann::json e = {{"batching", choice_value(batching_).toStdString()},
                            {"max_running", max_running_->value()},
                            {"max_batched_tokens", max_batched_->value()},
                            {"chunked_prefill", chunked_->isChecked()}};
  return {{"workload", w}, {"engine", e}};
}

void ServingView::run() {
  debounce_.stop();
  pending_ = false;
  if (!session_->ready()) return;
  errors_.clear();
  simulator::ServeSpec spec;
  try {
    spec = simulator::parse_serve_spec(formJson());
  } catch (const model::ConfigError& e) {
    job_.cancel();
    showError(e);
    return;
  }
  const model::Config config = session_->config();
  const simulator::HardwareProfile hw = session_->hardware();
  const simulator::Scenario scenario = session_->scenario();
  job_.start([config, hw, scenario, spec](const gui_core::ProgressFn& progress) {
    return gui_core::run_serving(config, hw, scenario, spec, progress);
  });
  emit progress(0, 0);
}

void ServingView::showError(const model::ConfigError& e) {
  errors_.show(e);
  // The line under the form names the pointer (a field's own line shows only the reason),
  // so the general label would repeat it.
  general_error_->hide();
  summary_->setText(tr("<span style='color:#B00020'>Cannot run: %1%2</span>")
                        .arg(QString::fromStdString(e.what()).toHtmlEscaped(),
                             result_ ? tr(" (the charts and tables show the last run)") : QString()));
}

void ServingView::onResult(const gui_core::ServingRun& run) {
  result_ = run;
  const simulator::ServeResult& r = run.result;
  cdf_panel_->setChart(charts::build_line_chart(charts::latency_cdf_chart(r)));
  throughput_panel_->setChart(charts::build_line_chart(charts::throughput_vs_load_chart(run.load)));
  ttft_panel_->setChart(charts::build_line_chart(charts::ttft_vs_load_chart(run.load)));
  kv_panel_->setChart(charts::build_line_chart(charts::kv_over_time_chart(r)));
  latency_->removeRows(0, latency_->rowCount());
  const std::pair<QString, const simulator::Percentiles*> rows[] = {
      {tr("TTFT"), &r.ttft_s}, {tr("TPOT"), &r.tpot_s}, {tr("ITL"), &r.itl_s}, {tr("queue"), &r.queue_s}, {tr("E2E"), &r.e2e_s}};
  for (const auto& [name, p] : rows) {
    QList<QStandardItem*> items{text_item(name)};
    for (double s : {p->mean, p->p50, p->p90, p->p99, p->max}) items << number_item(fixed(1e3 * s, 2), s);
    latency_->appendRow(items);
  }
  throughput_->removeRows(0, throughput_->rowCount());
  auto add = [this](const QString& name, double value, const QString& text, const QString& unit) {
    throughput_->appendRow({text_item(name), number_item(text, value), text_item(unit)});
  };
  add(tr("requests finished"), static_cast<double>(r.requests), QString::number(r.requests), tr("requests"));
  add(tr("duration"), r.duration_s(), fixed(r.duration_s(), 3), tr("s"));
  add(tr("request throughput"), r.requests_per_s, fixed(r.requests_per_s, 3), tr("requests/s"));
  add(tr("output throughput"), r.output_tokens_per_s, fixed(r.output_tokens_per_s, 1), tr("tokens/s"));
  add(tr("output throughput per GPU"), r.output_tokens_per_s_per_gpu, fixed(r.output_tokens_per_s_per_gpu, 1),
      tr("tokens/s (%1 GPUs)").arg(r.devices));
  add(tr("input throughput"), r.input_tokens_per_s, fixed(r.input_tokens_per_s, 1), tr("tokens/s"));
  add(tr("decode-only steps' throughput"), r.decode_tokens_per_s, fixed(r.decode_tokens_per_s, 1), tr("tokens/s"));
  add(tr("engine steps"), static_cast<double>(r.steps), QString::number(r.steps), tr("steps"));
  add(tr("mean step"), r.mean_step_s, fixed(1e3 * r.mean_step_s, 3), tr("ms"));
  add(tr("running requests, mean"), r.mean_running, fixed(r.mean_running, 1), tr("requests"));
  add(tr("running requests, max"), static_cast<double>(r.max_running_seen), QString::number(r.max_running_seen),
      tr("requests"));
  add(tr("waiting requests, mean"), r.mean_waiting, fixed(r.mean_waiting, 1), tr("requests"));
  add(tr("KV cache used, mean"), r.kv_used_mean, fixed(100 * r.kv_used_mean, 1), tr("% of the cache"));
  add(tr("KV cache used, max"), r.kv_used_max, fixed(100 * r.kv_used_max, 1), tr("% of the cache"));
  add(tr("KV cache capacity"), r.kv_capacity_bytes, fixed(r.kv_capacity_bytes / 1e9, 2),
      tr("GB (one K/V-head shard)"));
  add(tr("saturation rate (all requests at t = 0)"), run.saturation_rate_per_s, fixed(run.saturation_rate_per_s, 3),
      tr("requests/s"));
  summary_->setText(summary());
}

QString ServingView::summary() const {
  if (!result_) return {};
  const simulator::ServeResult& r = result_->result;
  return tr("%1 %2 arrivals: %3 requests in %4 s on %5 device(s); %6 output tokens/s; p90 TTFT %7 ms, p90 TPOT %8 ms. "
            "Saturation about %9 requests/s (all requests at t = 0); the load sweep runs them as a Poisson stream at "
            "0.25x to 2x that.")
      .arg(QString::fromStdString(model::describe(session_->config().design)).toHtmlEscaped(),
           QString::fromStdString(simulator::to_string(result_->spec.workload.arrivals)))
      .arg(r.requests)
      .arg(fixed(r.duration_s(), 3))
      .arg(r.devices)
      .arg(fixed(r.output_tokens_per_s, 1), fixed(1e3 * r.ttft_s.p90, 2), fixed(1e3 * r.tpot_s.p90, 2),
           fixed(result_->saturation_rate_per_s, 3));
}

QList<ChartPanel*> ServingView::panels() const { return {cdf_panel_, kv_panel_, throughput_panel_, ttft_panel_}; }

void ServingView::cancel() { job_.cancel(); }

void ServingView::waitForRun() {
  if (debounce_.isActive() || pending_) run();
  job_.wait();
  QCoreApplication::processEvents();
}

}  // namespace hdlab::gui
