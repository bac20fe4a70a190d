#include "mask_view.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>

#include "form_helpers.hpp"
#include "hdlab/gui_core/layer_strip.hpp"
#include "hdlab/gui_core/units.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "mask_image.hpp"
#include "session.hpp"

namespace hdlab::gui {
namespace {

QString count(std::int64_t v) { return QString::fromStdString(gui_core::format_count(v)); }

QString percent(double part, double whole) { return QString::number(whole > 0 ? 100.0 * part / whole : 0, 'f', 1); }

QString tile_text(const model::TileCount& t, std::int64_t visible_pairs, std::int64_t Bq, std::int64_t Bk) {
  return QObject::tr("tiles %1x%2: %3 of %4 run (%5 full, %6 need masking); executed pairs %7 (%8x the visible)")
      .arg(Bq)
      .arg(Bk)
      .arg(count(t.visible), count(t.total), count(t.full), count(t.visible - t.full), count(t.executed_pairs))
      .arg(visible_pairs > 0 ? static_cast<double>(t.executed_pairs) / static_cast<double>(visible_pairs) : 0.0, 0, 'f',
           2);
}

}  // namespace

MaskCanvas::MaskCanvas(const QString& title, QWidget* parent) : QWidget(parent), title_(title) {
  setMinimumSize(200, 220);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void MaskCanvas::setPicture(const gui_core::MaskPicture& picture, std::optional<gui_core::TileGrid> grid) {
  picture_ = picture;
  grid_ = std::move(grid);
  image_ = mask_image(picture);
  message_.clear();
  update();
}

void MaskCanvas::clear(const QString& message) {
  picture_.reset();
  grid_.reset();
  image_ = QImage();
  message_ = message;
  update();
}

QRectF MaskCanvas::cellArea() const {
  if (!picture_) return {};
  const QRectF area = QRectF(rect()).adjusted(4, 24, -4, -4);
  const double cell = std::min(area.width() / static_cast<double>(picture_->cols),
                               area.height() / static_cast<double>(picture_->rows));
  return {area.left(), area.top(), cell * static_cast<double>(picture_->cols), cell * static_cast<double>(picture_->rows)};
}

void MaskCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.drawText(QRectF(4, 2, width() - 8, 20), Qt::AlignLeft | Qt::AlignVCenter, title_);
  p.setFont(font());
  if (!picture_) {
    p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, message_);
    return;
  }
  const QRectF area = cellArea();
  p.drawImage(area, image_);  // no smoothing: cells stay crisp
  const double cx = area.width() / static_cast<double>(picture_->cols);
  const double cy = area.height() / static_cast<double>(picture_->rows);
  if (grid_) {
    // Grey out the tiles a kernel skips; outline every tile.
    for (std::int64_t r = 0; r < grid_->grid_rows; ++r)
      for (std::int64_t c = 0; c < grid_->grid_cols; ++c) {
        const QRectF t(area.left() + static_cast<double>(c * grid_->tile_cols) * cx,
                       area.top() + static_cast<double>(r * grid_->tile_rows) * cy,
                       static_cast<double>(std::min(grid_->tile_cols, picture_->cols - c * grid_->tile_cols)) * cx,
                       static_cast<double>(std::min(grid_->tile_rows, picture_->rows - r * grid_->tile_rows)) * cy);
        if (grid_->at(r, c) == gui_core::TileState::skipped) p.fillRect(t, QColor(0, 0, 0, 28));
        p.setPen(QPen(QColor(0x33, 0x33, 0x33), 1.0));
        p.setBrush(Qt::NoBrush);
        p.drawRect(t);
      }
  }
  p.setPen(QPen(QColor(0x66, 0x66, 0x66), 1.0));
  p.setBrush(Qt::NoBrush);
  p.drawRect(area);
}

QString MaskCanvas::cellText(QPointF at) const {
  const QRectF area = cellArea();
  if (!picture_ || !area.contains(at)) return {};
  const auto col = static_cast<std::int64_t>((at.x() - area.left()) / area.width() * static_cast<double>(picture_->cols));
  const auto row = static_cast<std::int64_t>((at.y() - area.top()) / area.height() * static_cast<double>(picture_->rows));
  if (row < 0 || col < 0 || row >= picture_->rows || col >= picture_->cols) return {};
  const std::int64_t n = picture_->spec.copies;
  const std::int64_t q = picture_->row_logical[static_cast<std::size_t>(row)];
  const std::int64_t k = picture_->col_logical[static_cast<std::size_t>(col)];
  return tr("query row %1 = t %2 (token %3, copy %4)\nkey column %5 = t %6 (token %7, copy %8)\n%9")
      .arg(row)
      .arg(q)
      .arg(q / n)
      .arg(q % n)
      .arg(col)
      .arg(k)
      .arg(k / n)
      .arg(k % n)
      .arg(picture_->at(row, col) >= 0 ? tr("visible") : tr("masked"));
}

bool MaskCanvas::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const QString text = cellText(help->pos());
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(e);
}

MaskView::MaskView(Session* session, QWidget* parent) : QWidget(parent), session_(session) {
  auto* v = new QVBoxLayout(this);
  auto* controls = new QHBoxLayout();
  layer_ = int_spin(0, 4095, 0, tr("Layer shown (PgUp / PgDn; or click the layer strip)"));
  tokens_ = int_spin(1, static_cast<int>(gui_core::max_picture_positions), 16,
                     tr("Tokens in the picture (positions = tokens x copies, at most %1); counts at the prompt "
                        "length are below")
                         .arg(gui_core::max_picture_positions),
                     tr(" tokens"));
  layout_ = choice_box({{tr("interleaved"), "interleaved"}, {tr("stream-major"), "stream_major"},
                        {tr("PHD [origins | hidden]"), "phd_split"}},
                       tr("Physical layout: the order of positions the kernel sees"));
  tile_q_ = int_spin(1, 512, 8, tr("Tile rows in the picture (query positions)"), tr(" rows"));
  tile_k_ = int_spin(1, 512, 8, tr("Tile columns in the picture (key positions)"), tr(" keys"));
  show_tiles_ = new QCheckBox(tr("tile grid"));
  show_tiles_->setChecked(true);
  show_tiles_->setToolTip(tr("Outline the kernel's tiles; greyed tiles hold no visible pair and are skipped"));
  auto* save = new QPushButton(tr("Export PNG..."));
  save->setToolTip(tr("Save both heatmaps as one PNG"));
  for (auto [label, w] : std::initializer_list<std::pair<QString, QWidget*>>{
           {tr("layer"), layer_}, {tr("tokens"), tokens_}, {tr("layout"), layout_}, {tr("tile"), tile_q_},
           {tr("x"), tile_k_}}) {
    controls->addWidget(new QLabel(label));
    controls->addWidget(w);
  }
  controls->addWidget(show_tiles_);
  controls->addStretch(1);
  controls->addWidget(save);
  v->addLayout(controls);
  kind_ = new QLabel();
  kind_->setWordWrap(true);
  v->addWidget(kind_);
  auto* pictures = new QHBoxLayout();
  logical_ = new MaskCanvas(tr("Logical order (t = i x copies + k)"));
  physical_ = new MaskCanvas(tr("Physical layout"));
  pictures->addWidget(logical_);
  pictures->addWidget(physical_);
  v->addLayout(pictures, 1);
  legend_ = new QHBoxLayout();
  v->addLayout(legend_);
  counts_ = new QLabel();
  counts_->setWordWrap(true);
  counts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(counts_);

  connect(layer_, &QSpinBox::valueChanged, session_, &Session::setSelectedLayer);
  connect(session_, &Session::layerSelected, this, &MaskView::refresh);
  connect(session_, &Session::configChanged, this, &MaskView::refresh);
  connect(session_, &Session::scenarioChanged, this, &MaskView::refresh);
  for (QSpinBox* s : {tokens_, tile_q_, tile_k_}) connect(s, &QSpinBox::valueChanged, this, &MaskView::refresh);
  connect(show_tiles_, &QCheckBox::toggled, this, &MaskView::refresh);
  connect(layout_, &QComboBox::activated, this, [this] {
    layout_chosen_ = true;
    refresh();
  });
  connect(save, &QPushButton::clicked, this, &MaskView::exportPng);
  refresh();
}

void MaskView::updateLegend(std::int64_t copies, bool hd) {
  while (QLayoutItem* item = legend_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  auto swatch = [this](const QColor& c, const QString& text) {
    auto* l = new QLabel(
        QString("<span style='background:%1; border:1px solid #666'>&nbsp;&nbsp;&nbsp;&nbsp;</span> %2").arg(c.name(), text));
    legend_->addWidget(l);
  };
  const std::int64_t shown = std::min<std::int64_t>(copies, 16);
  for (std::int64_t k = 0; k < shown; ++k) {
    const QString name = hd ? tr("stream %1").arg(k) : (k == 0 ? tr("origin") : tr("hidden copy %1").arg(k));
    swatch(stream_colour(static_cast<int>(k)), copies > 1 ? name : tr("visible"));
  }
  if (copies > shown) legend_->addWidget(new QLabel(tr("... %1 more (colours repeat)").arg(copies - shown)));
  swatch(kMaskedColour, tr("masked"));
  legend_->addStretch(1);
  legend_->addWidget(new QLabel(hd ? tr("colour = stream of the key") : tr("colour = copy of the key")));
}

QString MaskView::scenarioCounts(int layer) const {
  const simulator::Scenario& s = session_->scenario();
  const model::Config& c = session_->config();
  try {
    const model::MaskSpec spec = model::layer_mask(c, layer, s.prefill.tokens);
    const model::Layout layout = simulator::resolve_layout(c, s);
    const gui_core::MaskCounts n = gui_core::mask_counts(spec, layout, s.attention.tile_q, s.attention.tile_k);
    return tr("<b>At the prompt length</b> (%1 tokens, %2 layout, from the scenario): visible pairs %3 of %4 (%5 %); %6.")
        .arg(count(s.prefill.tokens), model::to_string(layout), count(n.visible_pairs), count(n.all_pairs),
             percent(static_cast<double>(n.visible_pairs), static_cast<double>(n.all_pairs)),
             tile_text(n.tiles, n.visible_pairs, s.attention.tile_q, s.attention.tile_k));
  } catch (const model::ConfigError& e) {
    return tr("<b>At the prompt length</b>: %1").arg(QString::fromStdString(e.what()).toHtmlEscaped());
  }
}

void MaskView::refresh() {
  if (!session_->hasConfig()) {
    logical_->clear(tr("No design loaded"));
    physical_->clear(tr("No design loaded"));
    return;
  }
  const model::Config& c = session_->config();
  const int layer = session_->selectedLayer();
  {
    const QSignalBlocker block(layer_);
    layer_->setMaximum(static_cast<int>(c.effective.num_layers) - 1);
    layer_->setValue(layer);
  }
  try {
    model::MaskSpec spec = model::layer_mask(c, layer, 1);
    const std::int64_t max_tokens = gui_core::max_picture_tokens(spec.copies);
    {
      const QSignalBlocker block(tokens_);
      tokens_->setMaximum(static_cast<int>(max_tokens));
    }
    spec = model::layer_mask(c, layer, tokens_->value());
    if (!layout_chosen_) {
      const QSignalBlocker block(layout_);
      set_choice(layout_, model::to_string(model::default_layout(c.design)));
    }
    const model::Layout layout = model::layout_from_string(choice_value(layout_).toStdString());
    const gui_core::MaskPicture logical = gui_core::mask_picture(spec, model::Layout::interleaved);
    const gui_core::MaskPicture physical = gui_core::mask_picture(spec, layout);
    const std::int64_t Bq = tile_q_->value(), Bk = tile_k_->value();
    std::optional<gui_core::TileGrid> grid;
    if (show_tiles_->isChecked()) grid = gui_core::tile_grid(physical, Bq, Bk);
    logical_->setPicture(logical, std::nullopt);
    physical_->setPicture(physical, grid);
    const bool hd = std::holds_alternative<model::HdDesign>(c.design.method);
    updateLegend(spec.copies, hd);
    const gui_core::LayerStrip strip = gui_core::layer_strip(c);
    kind_->setText(QString::fromStdString(gui_core::describe(strip.layers[static_cast<std::size_t>(layer)], strip.copies)) +
                   (spec.final_copy_queries_only ? tr(" - rows: the final stream's queries only") : QString()));
    const gui_core::MaskCounts n = gui_core::mask_counts(spec, layout, Bq, Bk);
    counts_->setText(
        tr("<b>Picture</b>: %1 tokens x %2 copies = %3 positions, %4 query rows; visible pairs %5 of %6 (%7 %); %8.<br>%9")
            .arg(count(spec.tokens), count(spec.copies), count(spec.positions()), count(spec.query_rows()),
                 count(n.visible_pairs), count(n.all_pairs),
                 percent(static_cast<double>(n.visible_pairs), static_cast<double>(n.all_pairs)),
                 tile_text(n.tiles, n.visible_pairs, Bq, Bk), scenarioCounts(layer)));
    summary_ = tr("layer %1 %2: %3 visible pairs, %4 of %5 tiles run (%6 tokens, %7x%8 tiles)")
                   .arg(layer)
                   .arg(model::to_string(spec.kind), count(n.visible_pairs), count(n.tiles.visible),
                        count(n.tiles.total), count(spec.tokens))
                   .arg(Bq)
                   .arg(Bk);
  } catch (const model::ConfigError& e) {
    physical_->clear(QString::fromStdString(e.what()));
    logical_->clear(QString());
    summary_ = QString::fromStdString(e.what());
  }
  emit countsChanged(summary_);
}

void MaskView::exportPng() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export mask"), QString("mask-layer%1.png").arg(layer_->value()),
                                                    tr("PNG image (*.png)"));
  if (path.isEmpty()) return;
  // Both heatmaps, their titles and the legend as seen.
  const QPixmap shot = grab();
  if (!shot.save(path, "PNG")) counts_->setText(tr("Could not write %1").arg(path));
}

void MaskView::nextLayer() { session_->setSelectedLayer(session_->selectedLayer() + 1); }
void MaskView::previousLayer() { session_->setSelectedLayer(session_->selectedLayer() - 1); }

gui_core::MaskViewSettings MaskView::settings() const {
  return {tokens_->value(), layout_chosen_ ? choice_value(layout_).toStdString() : std::string("auto"), tile_q_->value(),
          tile_k_->value(), show_tiles_->isChecked()};
}

void MaskView::setSettings(const gui_core::MaskViewSettings& s) {
  {
    const QSignalBlocker b1(tokens_), b2(layout_), b3(tile_q_), b4(tile_k_), b5(show_tiles_);
    tokens_->setMaximum(static_cast<int>(gui_core::max_picture_positions));  // refresh() lowers it to what fits
    tokens_->setValue(static_cast<int>(s.tokens));
    layout_chosen_ = s.layout != "auto";
    if (layout_chosen_) set_choice(layout_, QString::fromStdString(s.layout));
    tile_q_->setValue(static_cast<int>(s.tile_q));
    tile_k_->setValue(static_cast<int>(s.tile_k));
    show_tiles_->setChecked(s.tiles);
  }
  refresh();
}

}  // namespace hdlab::gui
