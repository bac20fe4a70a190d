#pragma once
// The design editor: backbone preset (profiles/models, bundled HF config.json files or
// any file), the design's method and parameters, growth, and the per-layer HD kinds.
// Every edit is turned into design JSON and parsed by model/config_io; a valid result
// goes to the Session, a ConfigError is shown next to the field its JSON pointer names.
#include <vector>

#include <QWidget>

#include "form_helpers.hpp"
#include "hdlab/model/config_io.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace hdlab::gui {

class MethodPages;
class Session;

class DesignEditor : public QWidget {
  Q_OBJECT
 public:
  explicit DesignEditor(Session* session, QWidget* parent = nullptr);

  // Loads a model file: our config document (backbone + optional design), a bare
  // backbone, or a HuggingFace config.json. On error the message is shown under the
  // backbone picker and false returned; the session keeps what it had.
  bool loadModelFile(const QString& path);
  // Picks a catalog model whose name or file contains `needle`; false if none.
  bool selectModelPreset(const QString& needle);
  // Applies a design preset file (profiles/designs) to the current backbone.
  bool loadDesignFile(const QString& path);
  bool selectDesignPreset(const QString& needle);
  // Sets the method and, for convenience in tests and presets, its size knob.
  void setMethod(const QString& method);

  bool valid() const { return valid_; }  // the last edit parsed
  QString errorAt(const std::string& pointer) const { return errors_.textAt(pointer); }
  QString generalError() const { return errors_.generalText(); }
  QString backboneError() const;
  MethodPages* pages() const { return pages_; }

  // Sessions (session_files.hpp): the preset files the pickers show ("" when none), and
  // every field set from a valid config (backbone and design), as if it had been typed.
  QString modelPreset() const;
  QString designPreset() const;
  void restore(const model::Config& config, const QString& modelPreset, const QString& designPreset);

 public slots:
  void setLayerKind(int layer, hdlab::model::HdLayerKind kind);
  // Many layers at once: one design change (one parse, one configChanged, one evaluation).
  void setLayerKinds(const QList<int>& layers, hdlab::model::HdLayerKind kind);
  void applyLayerRule();
  void copyDesignJson();
  void openModelDialog();

 signals:
  void statusMessage(const QString& text);

 private:
  QWidget* backboneGroup();
  QWidget* designGroup();
  QWidget* growthGroup();
  void setBackbone(const model::Backbone& b, const QString& label);
  // Widgets from a parsed design; `written` is the design's JSON as read (its "hd"
  // "layers" value sets the rule fields).
  void loadDesign(const model::Design& d, const model::Json& written);
  void showRule(const model::Config& c, const model::Json& written);
  // The design no longer is the preset the box shows (an edit, or a design from a file).
  void leavePreset();
  model::Json designJson() const;
  std::int64_t expectedLayers() const;
  void rebuild();

  Session* session_;
  QLabel* general_error_;
  FieldErrors errors_;
  model::Backbone base_;
  bool has_base_ = false;
  QString base_label_;
  std::vector<model::HdLayerKind> kinds_;  // explicit HD kinds once parsed; empty: use the rule
  bool valid_ = false;
  bool name_from_file_ = false;  // the name is a preset's or a file's (it may describe the old backbone)
  int preset_index_ = 0;         // the design preset loaded; 0: none

  QComboBox* model_box_;
  QLabel* backbone_summary_;
  QLabel* backbone_error_;
  QLineEdit* name_;
  QComboBox* design_preset_;
  QComboBox* method_box_;
  MethodPages* pages_;
  QGroupBox* growth_;
  QSpinBox* depth_factor_;
  QComboBox* depth_mode_;
  QSpinBox* width_factor_;
  QDoubleSpinBox* noise_alpha_;
};

// "36 layers, D 4,096, 32 q / 8 KV heads x 128, dense FFN 12,288, vocabulary 151,936".
QString backbone_summary(const model::Backbone& b);

}  // namespace hdlab::gui
