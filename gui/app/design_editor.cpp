#include "design_editor.hpp"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include "hdlab/gui_core/catalog.hpp"
#include "hdlab/gui_core/hd_rule.hpp"
#include "hdlab/gui_core/units.hpp"
#include "hdlab/model/hf_import.hpp"
#include "method_pages.hpp"
#include "session.hpp"

namespace hdlab::gui {
namespace {

QString count(std::int64_t v) { return QString::fromStdString(gui_core::format_count(v)); }

QLabel* error_label() {
  auto* l = new QLabel();
  l->setStyleSheet("color: #B00020;");
  l->setWordWrap(true);
  l->hide();
  return l;
}

using gui_core::edits_layer_kinds;

// The per-layer stream kinds of a design whose page edits them; empty for the others.
std::vector<model::HdLayerKind> stream_kinds(const model::Config& c) {
  std::vector<model::HdLayerKind> kinds;
  if (!edits_layer_kinds(model::method_name(c.design.method))) return kinds;
  for (std::int64_t l = 0; l < c.effective.num_layers; ++l)
    kinds.push_back(model::layer_role(c.design.method, c.effective, l).stream_kind);
  return kinds;
}

// Sets the field `name` (a spin box of the method's page) to its minimum, where it reads
// as not given (its min_text: "auto", "backbone's").
void show_not_given(const QWidget* page, const QString& name) {
  if (auto* box = page->findChild<QSpinBox*>(name)) {
    const QSignalBlocker block(box);
    box->setValue(box->minimum());
  } else if (auto* real = page->findChild<QDoubleSpinBox*>(name)) {
    const QSignalBlocker block(real);
    real->setValue(real->minimum());
  }
}

}  // namespace

QString backbone_summary(const model::Backbone& b) {
  QString s = QObject::tr("%1 layers, D %2, %3 q / %4 KV heads x %5")
                  .arg(b.num_layers)
                  .arg(count(b.hidden), count(b.num_heads), count(b.num_kv_heads), count(b.head_dim));
  if (b.moe) {
    s += QObject::tr(", MoE %1 experts top-%2 x %3").arg(count(b.moe->num_experts), count(b.moe->top_k),
                                                          count(b.moe->expert_intermediate));
    if (b.moe->num_shared_experts > 0) s += QObject::tr(" (+%1 shared)").arg(b.moe->num_shared_experts);
  }
  if (b.intermediate > 0) s += QObject::tr(", dense FFN %1").arg(count(b.intermediate));
  if (b.num_sliding_layers() > 0) s += QObject::tr(", %1 sliding layers").arg(b.num_sliding_layers());
  if (b.kv_mirror_layers > 0) s += QObject::tr(", KV mirror on the last %1").arg(b.kv_mirror_layers);
  s += QObject::tr(", vocabulary %1").arg(count(b.vocab_size));
  if (b.input_vocab_size > 0 && b.input_vocab_size != b.vocab_size)
    s += QObject::tr(" (input table %1 rows)").arg(count(b.input_vocab_size));
  if (b.max_context > 0) s += QObject::tr(", %1-token context").arg(count(b.max_context));
  return s;
}

DesignEditor::DesignEditor(Session* session, QWidget* parent)
    : QWidget(parent), session_(session), general_error_(error_label()), errors_(general_error_) {
  auto* v = new QVBoxLayout(this);
  v->addWidget(backboneGroup());
  v->addWidget(designGroup());
  v->addWidget(growthGroup());
  auto* copy = new QPushButton(tr("Copy design JSON"));
  copy->setToolTip(tr("The design as the CLI reads it (--design), to the clipboard (Ctrl+Shift+C)"));
  connect(copy, &QPushButton::clicked, this, &DesignEditor::copyDesignJson);
  v->addWidget(copy);
  v->addStretch(1);
}

QWidget* DesignEditor::backboneGroup() {
  auto* box = new QGroupBox(tr("Backbone"));
  auto* v = new QVBoxLayout(box);
  auto* row = new QHBoxLayout();
  model_box_ = new QComboBox();
  model_box_->setToolTip(tr("Model presets from profiles/models (ours and bundled HuggingFace config.json files)"));
  for (const auto& e : session_->catalog().models)
    model_box_->addItem(QString::fromStdString(e.label), QString::fromStdString(e.path));
  model_box_->setMinimumContentsLength(18);
  model_box_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  auto* open = new QPushButton(tr("Open..."));
  open->setToolTip(tr("Load a model file: an hdlab config, a backbone, or a HuggingFace config.json (Ctrl+O)"));
  row->addWidget(model_box_, 1);
  row->addWidget(open);
  v->addLayout(row);
  backbone_summary_ = new QLabel(tr("No backbone loaded: pick a preset or open a file."));
  backbone_summary_->setWordWrap(true);
  v->addWidget(backbone_summary_);
  backbone_error_ = error_label();
  v->addWidget(backbone_error_);
  connect(model_box_, &QComboBox::activated, this,
          [this](int i) { loadModelFile(model_box_->itemData(i).toString()); });
  connect(open, &QPushButton::clicked, this, &DesignEditor::openModelDialog);
  return box;
}

QWidget* DesignEditor::designGroup() {
  auto* box = new QGroupBox(tr("Design"));
  auto* form = new QFormLayout(box);
  form->addRow(general_error_);
  name_ = new QLineEdit();
  name_->setPlaceholderText(tr("derived from the method"));
  name_->setToolTip(tr("A label for charts and reports"));
  design_preset_ = new QComboBox();
  design_preset_->addItem(tr("(choose a preset)"), QString());
  for (const auto& e : session_->catalog().designs)
    design_preset_->addItem(QString::fromStdString(e.label), QString::fromStdString(e.path));
  design_preset_->setToolTip(tr("Design presets from profiles/designs, applied to the current backbone"));
  design_preset_->setObjectName("/design/preset");
  design_preset_->setMinimumContentsLength(18);
  design_preset_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  std::vector<std::pair<QString, QString>> methods;
  for (const QString& m : MethodPages::methods()) methods.emplace_back(MethodPages::title(m), m);
  method_box_ = choice_box(methods, tr("How the design buys extra computation"));
  pages_ = new MethodPages(errors_);
  QLabel* name_error = nullptr;
  form->addRow(tr("name"), with_error_line(name_, &name_error));
  errors_.add("/design/name", name_, name_error);
  form->addRow(tr("preset"), design_preset_);
  form->addRow(tr("method"), method_box_);
  form->addRow(pages_);
  connect(name_, &QLineEdit::editingFinished, this, &DesignEditor::rebuild);
  connect(name_, &QLineEdit::textEdited, this, [this] { name_from_file_ = false; });
  connect(design_preset_, &QComboBox::activated, this, [this](int i) {
    const QString path = design_preset_->itemData(i).toString();
    // A preset that does not apply leaves the box on the design that is loaded.
    if (path.isEmpty() || !loadDesignFile(path)) design_preset_->setCurrentIndex(preset_index_);
  });
  connect(method_box_, &QComboBox::currentIndexChanged, this, [this] {
    pages_->setMethod(choice_value(method_box_));
    name_->clear();  // a preset's name described the old method
    leavePreset();
    rebuild();
  });
  connect(pages_, &MethodPages::edited, this, [this] {
    leavePreset();
    rebuild();
  });
  connect(pages_, &MethodPages::applyRuleRequested, this, &DesignEditor::applyLayerRule);
  return box;
}

QWidget* DesignEditor::growthGroup() {
  growth_ = new QGroupBox(tr("Growth of a trained MoE"));
  growth_->setCheckable(true);
  growth_->setChecked(false);
  growth_->setToolTip(tr("Grow the backbone first (more layers, more experts); the method applies to the grown model"));
  auto* form = new QFormLayout(growth_);
  depth_factor_ = int_spin(1, 64, 1, tr("Layers x this factor"), tr(" x layers"));
  depth_mode_ = choice_box({{tr("interpose l0,l0,l1,l1,..."), "interpose"}, {tr("stack l0..ln,l0..ln"), "stack"}},
                           tr("Interposition keeps the per-layer weight-norm profile; stacking breaks it"));
  width_factor_ = int_spin(1, 64, 1, tr("Experts and top-k x this factor (MoE backbones only)"), tr(" x experts"));
  noise_alpha_ = real_spin(0, 10, 0, 3, tr("New experts = the expert they split from + N(0, (alpha * std)^2); 0 keeps the function"));
  const std::pair<const char*, QWidget*> fields[] = {
      {"depth_factor", depth_factor_}, {"depth_mode", depth_mode_}, {"width_factor", width_factor_},
      {"noise_alpha", noise_alpha_}};
  const QString labels[] = {tr("depth"), tr("depth mode"), tr("width"), tr("noise alpha")};
  for (int i = 0; i < 4; ++i) {
    QLabel* error = nullptr;
    form->addRow(labels[i], with_error_line(fields[i].second, &error));
    errors_.add(std::string("/design/growth/") + fields[i].first, fields[i].second, error);
  }
  auto edited = [this] {
    leavePreset();
    rebuild();
  };
  connect(growth_, &QGroupBox::toggled, this, edited);
  connect(depth_factor_, &QSpinBox::valueChanged, this, edited);
  connect(width_factor_, &QSpinBox::valueChanged, this, edited);
  connect(noise_alpha_, &QDoubleSpinBox::valueChanged, this, edited);
  connect(depth_mode_, &QComboBox::currentIndexChanged, this, edited);
  return growth_;
}

QString DesignEditor::backboneError() const { return backbone_error_->text(); }

bool DesignEditor::loadModelFile(const QString& path) {
  try {
    const model::Json doc = model::read_json_file(path.toStdString());
    const model::Backbone b = model::load_backbone(doc);
    std::optional<model::Design> design;
    if (!model::looks_like_hf_config(doc) && doc.is_object() && doc.contains("design"))
      design = model::parse_design(doc["design"], b, "/design");
    backbone_error_->hide();
    backbone_error_->clear();
    // The picker shows the preset when the file is one, however the path was written.
    const QString canonical = QFileInfo(path).canonicalFilePath();
    for (int i = 0; i < model_box_->count(); ++i)
      if (QFileInfo(model_box_->itemData(i).toString()).canonicalFilePath() == canonical) model_box_->setCurrentIndex(i);
    setBackbone(b, QString::fromStdString(b.name));
    if (design) {
      loadDesign(*design, doc["design"]);
      leavePreset();  // the file's own design
    }
    rebuild();
    emit statusMessage(tr("Loaded %1").arg(path));
    return true;
  } catch (const model::ConfigError& e) {
    backbone_error_->setText(QString::fromStdString(e.what()));
    backbone_error_->show();
    return false;
  }
}

bool DesignEditor::selectModelPreset(const QString& needle) {
  const int i = gui_core::find_entry(session_->catalog().models, needle.toStdString());
  return i >= 0 && loadModelFile(QString::fromStdString(session_->catalog().models[static_cast<std::size_t>(i)].path));
}

bool DesignEditor::loadDesignFile(const QString& path) {
  if (!has_base_) return false;
  errors_.clear();
  try {
    const model::Json written = model::read_json_file(path.toStdString());
    const model::Design d = model::parse_design(written, base_, "/design");
    loadDesign(d, written);
    rebuild();
    if (!valid_) return false;
    // The box shows the preset however it was picked (the box, a test, the defaults).
    const QString canonical = QFileInfo(path).canonicalFilePath();
    preset_index_ = 0;
    for (int i = 1; i < design_preset_->count(); ++i)
      if (QFileInfo(design_preset_->itemData(i).toString()).canonicalFilePath() == canonical) preset_index_ = i;
    design_preset_->setCurrentIndex(preset_index_);
    return true;
  } catch (const model::ConfigError& e) {
    errors_.show(e);
    return false;
  }
}

bool DesignEditor::selectDesignPreset(const QString& needle) {
  const int i = gui_core::find_entry(session_->catalog().designs, needle.toStdString());
  return i >= 0 &&
         loadDesignFile(QString::fromStdString(session_->catalog().designs[static_cast<std::size_t>(i)].path));
}

void DesignEditor::setMethod(const QString& method) { set_choice(method_box_, method); }

void DesignEditor::setBackbone(const model::Backbone& b, const QString& label) {
  base_ = b;
  has_base_ = true;
  base_label_ = label;
  kinds_.clear();  // a new layer count: the rule decides again
  // A preset's or file's name may describe the old backbone ("the Qwen3-8B setting");
  // the name derived from the design is right for any. A typed name is the user's.
  if (name_from_file_) {
    name_->clear();
    name_from_file_ = false;
  }
  backbone_summary_->setText(backbone_summary(b));
  QString tip = QString::fromStdString(b.source);
  for (const auto& [field, note] : b.assumptions)
    tip += QString("\n%1: %2").arg(QString::fromStdString(field), QString::fromStdString(note));
  backbone_summary_->setToolTip(tip);
  pages_->adaptTo(b);
}

void DesignEditor::loadDesign(const model::Design& d, const model::Json& written) {
  const QSignalBlocker b1(method_box_), b2(name_), b3(growth_), b4(depth_factor_), b5(depth_mode_), b6(width_factor_),
      b7(noise_alpha_);
  name_->setText(QString::fromStdString(d.name));
  set_choice(method_box_, model::method_name(d.method));
  pages_->load(d.method);
  // Values the parser derived show as not given, so that they follow the next backbone or
  // size (HD's window keeps its span in tokens when n changes).
  const std::string method = model::method_name(d.method);
  for (const std::string& key : model::derived_fields(d.method, base_))
    show_not_given(this, QString::fromStdString("/design/" + method + "/" + key));
  name_from_file_ = !d.name.empty();
  growth_->setChecked(d.growth.has_value());
  const model::GrowthDesign g = d.growth.value_or(model::GrowthDesign{});
  depth_factor_->setValue(static_cast<int>(g.depth_factor));
  set_choice(depth_mode_, model::to_string(g.depth_mode));
  width_factor_->setValue(static_cast<int>(g.width_factor));
  noise_alpha_->setValue(g.noise_alpha);
  kinds_.clear();
  if (edits_layer_kinds(method)) {
    const model::Config config = model::make_config(base_, d);
    kinds_ = stream_kinds(config);
    showRule(config, written);
  }
}

void DesignEditor::showRule(const model::Config& c, const model::Json& written) {
  // The rule as written where the fields can hold it, else one fitted to the kinds; the
  // check keeps "Apply" from changing the kinds just loaded.
  const std::string method = model::method_name(c.design.method);
  const model::Json* layers = nullptr;
  if (written.is_object() && written.contains(method) && written[method].is_object() &&
      written[method].contains("layers"))
    layers = &written[method]["layers"];
  std::optional<gui_core::HdRule> rule = gui_core::rule_from_layers_json(layers);
  if (!rule || gui_core::apply_rule(*rule, c.effective) != kinds_) rule = gui_core::fit_rule(kinds_, c.effective);
  if (rule) pages_->setHdRule(*rule);
}

void DesignEditor::leavePreset() {
  preset_index_ = 0;
  design_preset_->setCurrentIndex(0);
}

std::int64_t DesignEditor::expectedLayers() const {
  return base_.num_layers * (growth_->isChecked() ? depth_factor_->value() : 1);
}

model::Json DesignEditor::designJson() const {
  model::Json d = model::Json::object();
  if (!name_->text().trimmed().isEmpty()) d["name"] = name_->text().trimmed().toStdString();
  const std::string method = pages_->method().toStdString();
  model::Json body = pages_->methodJson();
  if (edits_layer_kinds(method)) {
    if (static_cast<std::int64_t>(kinds_.size()) == expectedLayers()) {
      model::Json list = model::Json::array();
      for (auto k : kinds_) list.push_back(model::to_string(k));
      body["layers"] = list;
    } else {
      body["layers"] = pages_->hdRuleJson();
    }
  }
  d[method] = body;
  if (growth_->isChecked())
    d["growth"] = {{"depth_factor", depth_factor_->value()},
                   {"depth_mode", choice_value(depth_mode_).toStdString()},
                   {"width_factor", width_factor_->value()},
                   {"noise_alpha", noise_alpha_->value()}};
  return d;
}

void DesignEditor::rebuild() {
  if (!has_base_) return;
  errors_.clear();
  try {
    const model::Design d = model::parse_design(designJson(), base_, "/design");
    const model::Config c = model::make_config(base_, d);
    QString summary = QString::fromStdString(model::describe(c.design));
    if (std::vector<model::HdLayerKind> kinds = stream_kinds(c); !kinds.empty()) {
      kinds_ = std::move(kinds);
      if (gui_core::apply_rule(pages_->hdRule(), c.effective) != kinds_)
        summary += tr(" - set layer by layer; Apply rule replaces them with the rule above");
    }
    pages_->setLayerSummary(summary);
    valid_ = true;
    session_->setConfig(c, base_label_);
    session_->setInputError(Session::Input::design, {});
  } catch (const model::ConfigError& e) {
    valid_ = false;
    errors_.show(e);
    if (session_->hasConfig()) {
      const QString shown = QString::fromStdString(model::describe(session_->config().design));
      session_->setInputError(Session::Input::design, QString::fromStdString(e.what()), tr("design (%1)").arg(shown));
    }
    emit statusMessage(tr("Design not valid (%1); the views show the last valid one").arg(QString::fromStdString(e.what())));
  }
}

void DesignEditor::setLayerKind(int layer, model::HdLayerKind kind) { setLayerKinds({layer}, kind); }

void DesignEditor::setLayerKinds(const QList<int>& layers, model::HdLayerKind kind) {
  if (!edits_layer_kinds(pages_->method().toStdString())) return;
  bool changed = false;
  for (const int layer : layers) {
    if (layer < 0 || layer >= static_cast<int>(kinds_.size())) continue;
    changed = changed || kinds_[static_cast<std::size_t>(layer)] != kind;
    kinds_[static_cast<std::size_t>(layer)] = kind;
  }
  if (!changed) return;
  leavePreset();
  rebuild();
}

void DesignEditor::applyLayerRule() {
  const std::vector<model::HdLayerKind> before = kinds_;
  kinds_.clear();
  rebuild();
  if (kinds_ != before) leavePreset();
}

void DesignEditor::copyDesignJson() {
  if (!session_->hasConfig()) return;
  QApplication::clipboard()->setText(QString::fromStdString(model::to_json(session_->config().design).dump()));
  emit statusMessage(tr("Design JSON copied to the clipboard"));
}

void DesignEditor::openModelDialog() {
  const QString start = QString::fromStdString((session_->catalog().root / "models").string());
  const QString path = QFileDialog::getOpenFileName(this, tr("Open model"), start,
                                                    tr("Model JSON (*.json);;All files (*)"));
  if (!path.isEmpty()) loadModelFile(path);
}

QString DesignEditor::modelPreset() const {
  return model_box_->currentIndex() >= 0 ? model_box_->currentData().toString() : QString();
}

QString DesignEditor::designPreset() const { return design_preset_->itemData(preset_index_).toString(); }

void DesignEditor::restore(const model::Config& config, const QString& modelPreset, const QString& designPreset) {
  backbone_error_->hide();
  backbone_error_->clear();
  errors_.clear();
  const QString canonical = QFileInfo(modelPreset).canonicalFilePath();
  for (int i = 0; i < model_box_->count(); ++i)
    if (!canonical.isEmpty() && QFileInfo(model_box_->itemData(i).toString()).canonicalFilePath() == canonical)
      model_box_->setCurrentIndex(i);
  setBackbone(config.base, QString::fromStdString(config.base.name));
  loadDesign(config.design, model::to_json(config.design));
  preset_index_ = 0;
  const QString preset = QFileInfo(designPreset).canonicalFilePath();
  for (int i = 1; i < design_preset_->count(); ++i)
    if (!preset.isEmpty() && QFileInfo(design_preset_->itemData(i).toString()).canonicalFilePath() == preset)
      preset_index_ = i;
  design_preset_->setCurrentIndex(preset_index_);
  rebuild();
}

}  // namespace hdlab::gui
