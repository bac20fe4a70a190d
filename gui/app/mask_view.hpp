#pragma once
// The mask view: a layer's attention mask as a heatmap, logical order (interleaved,
// t = i*copies + k) next to the physical layout the kernel sees, with the kernel's tile
// grid over the physical one; colours by the key's stream; the exact pair and tile
// counts, for the picture and at the scenario's prompt length.
#include <optional>

#include <QImage>
#include <QWidget>

#include "hdlab/gui_core/mask_picture.hpp"
#include "hdlab/gui_core/view_settings.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QSpinBox;
class QHBoxLayout;

namespace hdlab::gui {

class Session;

// One heatmap; square cells, optional tile grid (skipped tiles greyed).
class MaskCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit MaskCanvas(const QString& title, QWidget* parent = nullptr);
  void setPicture(const gui_core::MaskPicture& picture, std::optional<gui_core::TileGrid> grid);
  void clear(const QString& message);
  const QImage& image() const { return image_; }
  QSize sizeHint() const override { return {360, 380}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;

 private:
  QRectF cellArea() const;
  QString cellText(QPointF at) const;

  QString title_;
  QString message_;
  std::optional<gui_core::MaskPicture> picture_;
  std::optional<gui_core::TileGrid> grid_;
  QImage image_;
};

class MaskView : public QWidget {
  Q_OBJECT
 public:
  explicit MaskView(Session* session, QWidget* parent = nullptr);
  // One line of exact counts for the status bar.
  QString countsSummary() const { return summary_; }
  const MaskCanvas* physicalCanvas() const { return physical_; }
  QSpinBox* tokensBox() const { return tokens_; }
  QComboBox* layoutBox() const { return layout_; }
  // The picture's settings, for sessions (gui_core/view_settings.hpp).
  gui_core::MaskViewSettings settings() const;
  void setSettings(const gui_core::MaskViewSettings& s);

 public slots:
  void refresh();
  void exportPng();
  void nextLayer();
  void previousLayer();

 signals:
  void countsChanged(const QString& summary);

 private:
  void updateLegend(std::int64_t copies, bool hd);
  QString scenarioCounts(int layer) const;

  Session* session_;
  QSpinBox* layer_;
  QSpinBox* tokens_;
  QComboBox* layout_;
  QSpinBox* tile_q_;
  QSpinBox* tile_k_;
  QCheckBox* show_tiles_;
  QLabel* kind_;
  MaskCanvas* logical_;
  MaskCanvas* physical_;
  QHBoxLayout* legend_;
  QLabel* counts_;
  QString summary_;
  bool layout_chosen_ = false;  // the user picked a layout; else follow the design's default
};

}  // namespace hdlab::gui
