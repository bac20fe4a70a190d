#include "tradeoff_view.hpp"

#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QResizeEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "chart_panel.hpp"
#include "hdlab/charts/charts.hpp"
#include "hdlab/charts/compare_charts.hpp"
#include "hdlab/charts/tradeoff_charts.hpp"
#include "hdlab/gui_core/memory_fit.hpp"
#include "metrics_model.hpp"

namespace hdlab::gui {
namespace {

std::unique_ptr<QChart> message_chart(const QString& title) {
  auto chart = std::make_unique<QChart>();
  chart->setTitle(title);
  return chart;
}

}  // namespace

TradeoffView::TradeoffView(QWidget* parent) : QWidget(parent) {
  auto* v = new QVBoxLayout(this);
  note_ = new QLabel();
  note_->setWordWrap(true);
  v->addWidget(note_);
  // The four charts in a grid that scrolls when the tab is smaller than they need, two
  // columns where two fit side by side, else one (reflow).
  auto* charts = new QWidget();
  grid_ = new QGridLayout(charts);
  grid_->setContentsMargins(0, 0, 0, 0);
  cost_ = new ChartPanel("cost-vs-size");
  batch_ = new ChartPanel("decode-vs-batch");
  context_ = new ChartPanel("decode-vs-context");
  kv_ = new ChartPanel("kv-vs-context");
  scroll_ = new QScrollArea();
  scroll_->setWidget(charts);
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // reflow instead
  v->addWidget(scroll_, 1);
  reflow(2);
  clear(tr("No results yet"));
}

void TradeoffView::reflow(int columns) {
  if (columns == columns_) return;
  columns_ = columns;
  const QList<ChartPanel*> all{cost_, batch_, context_, kv_};  // the widgets only; panels() would build the charts
  for (ChartPanel* p : all) grid_->removeWidget(p);
  for (int i = 0; i < all.size(); ++i) grid_->addWidget(all[i], i / columns, i % columns);
  for (int c = 0; c < 2; ++c) grid_->setColumnStretch(c, c < columns ? 1 : 0);
}

void TradeoffView::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  // Two columns need two panels' minimum width and the spacing, beside a scroll bar.
  const QMargins m = layout()->contentsMargins();
  const int room = e->size().width() - m.left() - m.right() - scroll_->verticalScrollBar()->sizeHint().width();
  reflow(room >= 2 * cost_->minimumSizeHint().width() + grid_->horizontalSpacing() ? 2 : 1);
}

QList<ChartPanel*> TradeoffView::panels() const {
  buildCharts();
  return {cost_, batch_, context_, kv_};
}

void TradeoffView::showEvent(QShowEvent* e) {
  buildCharts();
  QWidget::showEvent(e);
}

void TradeoffView::setResults(const gui_core::Tradeoffs& t, const QString& design, const QString& baseline,
                              double device_memory_bytes) {
  shown_ = Shown{t, design, baseline, device_memory_bytes};
  render();
}

void TradeoffView::setPins(std::vector<std::pair<QString, gui_core::Tradeoffs>> pins, const QString& legend) {
  pins_ = std::move(pins);
  pin_legend_ = legend;
  if (shown_) render();
}

void TradeoffView::render() {
  const gui_core::Tradeoffs& t = shown_->t;
  charts::TradeoffCharts specs = charts::tradeoff_charts(t, shown_->design.toStdString(),
                                                         shown_->baseline.toStdString(), shown_->device_memory_bytes);
  std::vector<charts::PinOverlay> overlays;
  for (const auto& [label, result] : pins_) overlays.push_back({label.toStdString(), &result});
  const std::vector<std::string> left_off = charts::overlay_pins(specs, t, overlays);
  QString note = tr("Baseline: %1. Dashed: the batch's KV cache at that context does not fit next to the weights.")
                     .arg(shown_->baseline);
  for (const auto& p : t.by_size)
    if (!p.error.empty()) note += tr(" %1 = %2 left out: %3.").arg(QString::fromStdString(t.axis->symbol)).arg(p.x).arg(
        QString::fromStdString(p.error));
  if (!pins_.empty())
    note += tr(" Pinned: %1 (a colour each; on the cost chart a line style each).").arg(pin_legend_);
  for (const std::string& label : left_off)
    if (t.axis) note += tr(" %1 has another size axis: not on the cost chart.").arg(QString::fromStdString(label));
  if (t.cancelled) note += tr(" Cancelled: curves are partial.");
  note_->setText(note);
  pending_ = std::move(specs);
  has_size_axis_ = t.axis.has_value();
  if (isVisible()) buildCharts();
}

void TradeoffView::buildCharts() const {
  if (!pending_) return;
  const charts::TradeoffCharts specs = std::move(*pending_);
  pending_.reset();
  if (has_size_axis_) cost_->setChart(charts::build_line_chart(specs.cost_vs_size));
  else cost_->setChart(message_chart(tr("The baseline has no size to vary: pick HD, PHD, VWN or looped")));
  batch_->setChart(charts::build_line_chart(specs.decode_vs_batch));
  context_->setChart(charts::build_line_chart(specs.decode_vs_context));
  kv_->setChart(charts::build_line_chart(specs.kv_vs_context));
}

void TradeoffView::clear(const QString& message) {
  shown_.reset();
  pending_.reset();
  for (ChartPanel* p : {cost_, batch_, context_, kv_}) p->setChart(message_chart(message));
  note_->setText(message);
}

CostsView::CostsView(QWidget* parent) : QWidget(parent) {
  auto* v = new QVBoxLayout(this);
  headline_ = new QLabel();
  headline_->setWordWrap(true);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(headline_);
  auto* split = new QSplitter(Qt::Vertical);
  metrics_ = new MetricsModel(this);
  serving_ = new ServingModel(this);
  metrics_view_ = new QTableView();
  metrics_view_->setModel(metrics_);
  metrics_view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  metrics_view_->verticalHeader()->hide();
  metrics_view_->verticalHeader()->setDefaultSectionSize(metrics_view_->fontMetrics().height() + 8);
  metrics_view_->setAlternatingRowColors(true);
  metrics_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  // Each group's name spans its header row; the rows are laid out anew on every result.
  connect(metrics_, &QAbstractItemModel::modelReset, metrics_view_,
          [this] { MetricsModel::spanGroupRows(metrics_view_); });
  serving_view_ = new QTableView();
  serving_view_->setModel(serving_);
  serving_view_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  serving_view_->setToolTip(tr("Decode throughput per batch x input length (the serving matrix), against the baseline"));
  split->addWidget(metrics_view_);
  split->addWidget(serving_view_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  v->addWidget(split, 1);
}

void CostsView::setResults(const gui_core::Tradeoffs& t, const simulator::Scenario& s, const QString& headline) {
  metrics_->setResults(t.design, t.baseline, t.design_fit, t.baseline_fit);
  serving_->setResults(t.design, s);
  // A phase whose memory does not fit is no plan: say so in red under the numbers, with
  // the need, the capacity and the smallest change that fits.
  QString text = headline;
  for (const std::string& w : gui_core::fit_warnings(t.design_fit))
    text += QString("<br><span style=\"color:#B00020\"><b>%1</b> %2</span>")
                .arg(tr("Does not fit:"), QString::fromStdString(w).toHtmlEscaped());
  headline_->setText(text);
}

QString CostsView::headline() const { return headline_->text(); }

void CostsView::clear(const QString& message) {
  metrics_->clear();
  serving_->clear();
  headline_->setText(message);
}

}  // namespace hdlab::gui
