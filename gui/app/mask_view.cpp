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

#include "flow_layout.hpp"
#include "form_helpers.hpp"
#include "hdlab/gui_core/layer_strip.hpp"
#include "hdlab/gui_core/units.hpp"
#include "hdlab/model/designs/interface.hpp"
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

void MaskCanvas::setTitle(const QString& title) {
  title_ = title;
  update();
}

void MaskCanvas::clear(const QString& message) {
  picture_.reset();
  grid_.reset();
  image_ = QImage();
  message_ = message;
  update();
}

// The bold title, wrapped to the canvas' width (it names the layout and tile shown).
int MaskCanvas::titleHeight() const {
  QFont bold = font();
  bold.setBold(true);
  return QFontMetrics(bold).boundingRect(QRect(0, 0, std::max(width() - 8, 1), 1000), Qt::TextWordWrap, title_).height();
}

QRectF MaskCanvas::cellArea() const {
  if (!picture_) return {};
  const QRectF area = QRectF(rect()).adjusted(4, titleHeight() + 6, -4, -4);
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
  p.drawText(QRectF(4, 2, width() - 8, titleHeight()), Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, title_);
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
  return tr("query row %1 = t %2 (token %3, %10 %4)\nkey column %5 = t %6 (token %7, %10 %8)\n%9")
      .arg(row)
      .arg(q)
      .arg(q / n)
      .arg(q % n)
      .arg(col)
      .arg(k)
      .arg(k / n)
      .arg(k % n)
      .arg(picture_->at(row, col) >= 0 ? tr("visible") : tr("masked"))
      .arg(position_name_);
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

MaskView::MaskView(Session* session, QWidget* parent)
    : QWidget(parent), session_(session), general_error_(new QLabel()), errors_(general_error_) {
  auto* v = new QVBoxLayout(this);
  layer_ = int_spin(0, 4095, 0, tr("Layer shown (PgUp / PgDn; or click the layer strip)"));
  // No maximum below what a user may type: a count the picture cannot show is refused
  // with a message at the field (refresh), not cut to the box's limit.
  tokens_ = int_spin(1, 1 << 30, 16,
                     tr("Tokens in the picture (positions = tokens x positions per token, at most %1); counts "
                        "at the prompt length are below")
                         .arg(gui_core::max_picture_positions),
                     tr(" tokens"));
  layout_ = choice_box({{tr("interleaved"), "interleaved"}, {tr("stream-major"), "stream_major"},
                        {tr("PHD [origins | hidden]"), "phd_split"}},
                       tr("Physical layout: the order of positions the kernel sees (follows the cost model's "
                          "until you pick one)"));
  tile_q_ = int_spin(1, 4096, 128, tr("Tile rows (query positions); follows the scenario's kernel tile until you "
                                      "change it"),
                     tr(" rows"));
  tile_k_ = int_spin(1, 4096, 128, tr("Tile columns (key positions); follows the scenario's kernel tile until you "
                                      "change it"),
                     tr(" keys"));
  show_tiles_ = new QCheckBox(tr("tile grid"));
  show_tiles_->setChecked(true);
  show_tiles_->setToolTip(tr("Outline the kernel's tiles; greyed tiles hold no visible pair and are skipped"));
  auto* save = new QPushButton(tr("Export PNG..."));
  save->setToolTip(tr("Save both heatmaps as one PNG"));
  v->addWidget(buildControls({{tr("layer"), layer_, "/mask/layer"},
                              {tr("tokens"), tokens_, "/mask/tokens"},
                              {tr("layout"), layout_, "/mask/layout"},
                              {tr("tile"), tile_q_, "/mask/tile"},
                              {tr("x"), tile_k_, "/mask/tile_k"}},
                             {show_tiles_, save}));
  general_error_->setStyleSheet("color: #B00020;");
  general_error_->setWordWrap(true);
  general_error_->hide();
  v->addWidget(general_error_);
  kind_ = new QLabel();
  kind_->setWordWrap(true);
  v->addWidget(kind_);
  auto* pictures = new QHBoxLayout();
  logical_ = new MaskCanvas(tr("Logical order"));
  physical_ = new MaskCanvas(tr("Physical layout"));
  pictures->addWidget(logical_);
  pictures->addWidget(physical_);
  v->addLayout(pictures, 1);
  auto* legend = new QWidget();
  legend_ = new FlowLayout(legend);
  legend_->setContentsMargins(0, 0, 0, 0);
  v->addWidget(legend);
  counts_ = new QLabel();
  counts_->setWordWrap(true);
  counts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(counts_);
  connectSignals(save);
  refresh();
}

QWidget* MaskView::buildControls(const std::vector<Field>& fields, const std::vector<QWidget*>& extra) {
  // Label and field stay together; the pairs wrap onto more lines in a narrow window.
  auto* bar = new QWidget();
  auto* flow = new FlowLayout(bar);
  flow->setContentsMargins(0, 0, 0, 0);
  for (const Field& f : fields) {
    QLabel* error = nullptr;
    auto* pair = new QWidget();
    auto* h = new QHBoxLayout(pair);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(new QLabel(f.label));
    h->addWidget(with_error_line(f.widget, &error));
    flow->addWidget(pair);
    errors_.add(f.pointer, f.widget, error);
  }
  for (QWidget* w : extra) flow->addWidget(w);
  return bar;
}

void MaskView::connectSignals(QPushButton* save) {
  connect(layer_, &QSpinBox::valueChanged, session_, &Session::setSelectedLayer);
  connect(session_, &Session::layerSelected, this, &MaskView::refresh);
  connect(session_, &Session::configChanged, this, &MaskView::refresh);
  connect(session_, &Session::scenarioChanged, this, &MaskView::refresh);
  // Programmatic changes are made under a QSignalBlocker: a signal here is the user's.
  connect(tokens_, &QSpinBox::valueChanged, this, [this] {
    tokens_chosen_ = true;
    refresh();
  });
  for (QSpinBox* s : {tile_q_, tile_k_})
    connect(s, &QSpinBox::valueChanged, this, [this] {
      tiles_chosen_ = true;
      refresh();
    });
  connect(show_tiles_, &QCheckBox::toggled, this, &MaskView::refresh);
  connect(layout_, &QComboBox::activated, this, [this] {
    layout_chosen_ = true;
    refresh();
  });
  connect(save, &QPushButton::clicked, this, &MaskView::exportPng);
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

// Layout and tile follow the cost model's (the scenario's tile; its layout, or with
// "auto" the one resolve_layout picks) until the user picks others.
void MaskView::followCostModel(const model::Config& c, const simulator::Scenario& s, std::int64_t copies) {
  if (!layout_chosen_) {
    const QSignalBlocker block(layout_);
    set_choice(layout_, model::to_string(simulator::resolve_layout(c, s)));
  }
  if (!tiles_chosen_) {
    const QSignalBlocker bq(tile_q_), bk(tile_k_);
    tile_q_->setValue(static_cast<int>(s.attention.tile_q));
    tile_k_->setValue(static_cast<int>(s.attention.tile_k));
  }
  if (!tokens_chosen_) {
    // Two tiles a side where the picture can hold them, so the grid shows what it skips.
    const std::int64_t tile = std::max(s.attention.tile_q, s.attention.tile_k);
    const std::int64_t want = (2 * tile + copies - 1) / copies;
    const QSignalBlocker block(tokens_);
    tokens_->setValue(static_cast<int>(std::clamp<std::int64_t>(want, 1, gui_core::max_picture_tokens(copies))));
  }
}

// "stream-major, 128x128 tiles: the cost model's" or what the cost model uses instead.
QString MaskView::pictureSettings(model::Layout layout, std::int64_t Bq, std::int64_t Bk) const {
  const simulator::Scenario& s = session_->scenario();
  const model::Layout model_layout = simulator::resolve_layout(session_->config(), s);
  const QString shown = tr("%1, %2x%3 tiles").arg(model::to_string(layout)).arg(Bq).arg(Bk);
  if (layout == model_layout && Bq == s.attention.tile_q && Bk == s.attention.tile_k)
    return tr("%1 (the cost model's)").arg(shown);
  return tr("%1 (your choice; the cost model uses %2, %3x%4)")
      .arg(shown, model::to_string(model_layout))
      .arg(s.attention.tile_q)
      .arg(s.attention.tile_k);
}

void MaskView::showPictures(const model::Config& c, const model::MaskSpec& spec, int layer) {
  const model::Layout layout = model::layout_from_string(choice_value(layout_).toStdString());
  const gui_core::MaskPicture logical = gui_core::mask_picture(spec, model::Layout::interleaved);
  const gui_core::MaskPicture physical = gui_core::mask_picture(spec, layout);
  const std::int64_t Bq = tile_q_->value(), Bk = tile_k_->value();
  std::optional<gui_core::TileGrid> grid;
  if (show_tiles_->isChecked()) grid = gui_core::tile_grid(physical, Bq, Bk);
  const QString settings = pictureSettings(layout, Bq, Bk);
  // HD's positions per token are streams (n), PHD's are copies (K).
  const bool hd = model::design_features(c.design.method).streams;
  const QString per_token = hd ? tr("streams") : tr("copies");
  const QString position = hd ? tr("stream") : tr("copy");
  logical_->setTitle(spec.copies > 1 ? tr("Logical order (t = i x %1 + k, k = %2)").arg(hd ? "n" : "K", position)
                                     : tr("Logical order (t = i)"));
  logical_->setPositionName(position);
  physical_->setPositionName(position);
  logical_->setPicture(logical, std::nullopt);
  physical_->setTitle(tr("Physical layout: %1").arg(settings));
  physical_->setPicture(physical, grid);
  updateLegend(spec.copies, hd);
  const gui_core::LayerStrip strip = gui_core::layer_strip(c);
  kind_->setText(QString::fromStdString(gui_core::describe(strip.layers[static_cast<std::size_t>(layer)], strip.copies)) +
                 (spec.final_copy_queries_only ? tr(" - rows: the final stream's queries only") : QString()));
  const gui_core::MaskCounts n = gui_core::mask_counts(spec, layout, Bq, Bk);
  counts_->setText(
      tr("<b>Picture</b> (%1): %2 tokens x %3 %11 = %4 positions, %5 query rows; visible pairs %6 of %7 (%8 %); "
         "%9.<br>%10")
          .arg(settings.toHtmlEscaped(), count(spec.tokens), count(spec.copies), count(spec.positions()),
               count(spec.query_rows()), count(n.visible_pairs), count(n.all_pairs),
               percent(static_cast<double>(n.visible_pairs), static_cast<double>(n.all_pairs)),
               tile_text(n.tiles, n.visible_pairs, Bq, Bk))
          .arg(scenarioCounts(layer), per_token));
  summary_ = tr("layer %1 %2: %3 visible pairs, %4 of %5 tiles run (%6 tokens, %7x%8 tiles)")
                 .arg(layer)
                 .arg(model::to_string(spec.kind), count(n.visible_pairs), count(n.tiles.visible), count(n.tiles.total),
                      count(spec.tokens))
                 .arg(Bq)
                 .arg(Bk);
}

void MaskView::refresh() {
  errors_.clear();
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
    followCostModel(c, session_->scenario(), model::layer_mask(c, layer, 1).copies);
    showPictures(c, model::layer_mask(c, layer, tokens_->value()), layer);
  } catch (const model::ConfigError& e) {
    // Refused, not truncated: the reason sits at its field; the pictures say why they are empty.
    errors_.show(e);
    const QString why = QString::fromStdString(e.what());
    physical_->clear(tr("Not drawn: %1").arg(why));
    logical_->clear(QString());
    counts_->setText(scenarioCounts(layer));
    summary_ = why;
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

QString MaskView::countsText() const { return counts_->text(); }

void MaskView::nextLayer() { session_->setSelectedLayer(session_->selectedLayer() + 1); }
void MaskView::previousLayer() { session_->setSelectedLayer(session_->selectedLayer() - 1); }

gui_core::MaskViewSettings MaskView::settings() const {
  return {tokens_chosen_ ? tokens_->value() : 0, layout_chosen_ ? choice_value(layout_).toStdString() : std::string("auto"),
          tiles_chosen_ ? tile_q_->value() : 0, tiles_chosen_ ? tile_k_->value() : 0, show_tiles_->isChecked()};
}

void MaskView::setSettings(const gui_core::MaskViewSettings& s) {
  {
    const QSignalBlocker b1(tokens_), b2(layout_), b3(tile_q_), b4(tile_k_), b5(show_tiles_);
    // A value the session gives is the user's choice; 0 and "auto" follow the cost model.
    tokens_chosen_ = s.tokens > 0;
    if (tokens_chosen_) tokens_->setValue(static_cast<int>(s.tokens));
    layout_chosen_ = s.layout != "auto";
    if (layout_chosen_) set_choice(layout_, QString::fromStdString(s.layout));
    tiles_chosen_ = s.tile_q > 0 && s.tile_k > 0;
    if (tiles_chosen_) {
      tile_q_->setValue(static_cast<int>(s.tile_q));
      tile_k_->setValue(static_cast<int>(s.tile_k));
    }
    show_tiles_->setChecked(s.tiles);
  }
  refresh();
}

}  // namespace hdlab::gui
