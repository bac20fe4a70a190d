#pragma once
// The mask view: a layer's attention mask as a heatmap, logical order (interleaved,
// t = i*copies + k) next to the physical layout the kernel sees, with the kernel's tile
// grid over the physical one; colours by the key's stream; the exact pair and tile
// counts, for the picture and at the scenario's prompt length. The picture uses the
// cost model's layout and tile until the user picks others, and says which it shows.
#include <optional>

#include <QImage>
#include <QWidget>

#include "form_helpers.hpp"
#include "hdlab/gui_core/mask_picture.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/gui_core/view_settings.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QLayout;
class QPushButton;
class QSpinBox;

namespace hdlab::gui {

class Session;

// One heatmap; square cells, optional tile grid (skipped tiles greyed).
class MaskCanvas : public QWidget {
  Q_OBJECT
 public:
  explicit MaskCanvas(const QString& title, QWidget* parent = nullptr);
  void setPicture(const gui_core::MaskPicture& picture, std::optional<gui_core::TileGrid> grid);
  void clear(const QString& message);
  void setTitle(const QString& title);
  QString title() const { return title_; }
  QString message() const { return message_; }
  const QImage& image() const { return image_; }
  // What a position within a token is called in the hover read-out ("stream" under HD,
  // "copy" under PHD).
  void setPositionName(const QString& name) { position_name_ = name; }
  QSize sizeHint() const override { return {360, 380}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;

 private:
  int titleHeight() const;
  QRectF cellArea() const;
  QString cellText(QPointF at) const;

  QString title_;
  QString position_name_ = tr("copy");
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
  QSpinBox* tileRowsBox() const { return tile_q_; }
  QSpinBox* tileColumnsBox() const { return tile_k_; }
  // The error shown at a field ("/mask/tokens"), or "" when none.
  QString errorAt(const std::string& pointer) const { return errors_.textAt(pointer); }
  // The picture's counts line and the counts at the scenario's prompt length (HTML).
  QString countsText() const;
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
  struct Field {
    QString label;
    QWidget* widget;
    std::string pointer;
  };
  QWidget* buildControls(const std::vector<Field>& fields, const std::vector<QWidget*>& extra);
  void connectSignals(QPushButton* save);
  void followCostModel(const model::Config& c, const simulator::Scenario& s, std::int64_t copies);
  QString pictureSettings(model::Layout layout, std::int64_t Bq, std::int64_t Bk) const;
  void showPictures(const model::Config& c, const model::MaskSpec& spec, int layer);
  void updateLegend(std::int64_t copies, bool hd);
  QString scenarioCounts(int layer) const;

  Session* session_;
  QLabel* general_error_;
  FieldErrors errors_;
  QSpinBox* layer_;
  QSpinBox* tokens_;
  QComboBox* layout_;
  QSpinBox* tile_q_;
  QSpinBox* tile_k_;
  QCheckBox* show_tiles_;
  QLabel* kind_;
  MaskCanvas* logical_;
  MaskCanvas* physical_;
  QLayout* legend_;
  QLabel* counts_;
  QString summary_;
  // The user picked these; until then they follow the cost model (followCostModel).
  bool layout_chosen_ = false;
  bool tiles_chosen_ = false;
  bool tokens_chosen_ = false;
};

}  // namespace hdlab::gui
