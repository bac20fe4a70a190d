#include "method_pages.hpp"

#include <algorithm>
#include <climits>
#include <memory>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>

#include "hdlab/model/design.hpp"

namespace hdlab::gui {
namespace {

using Kind = model::FormField::Kind;

QString q(const std::string& s) { return QString::fromStdString(s); }

// Adds "label: field" with an inline error line registered under `pointer`.
void add_field(QFormLayout* form, FieldErrors& errors, const QString& label, QWidget* field,
               const std::string& pointer) {
  QLabel* error = nullptr;
  form->addRow(label, with_error_line(field, &error));
  errors.add(pointer, field, error);
}

QComboBox* stream_kind_box(const QString& tooltip) {
  return choice_box({{"full", "full"}, {"local", "local"}, {"intra", "intra"}}, tooltip);
}

QFormLayout* new_form(QWidget* page) {
  auto* form = new QFormLayout(page);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  return form;
}

int clamp_int(double v) {
  return static_cast<int>(std::clamp(v, static_cast<double>(INT_MIN), static_cast<double>(INT_MAX)));
}

// A field's value as the JSON block holds it; false when the widget's value means "not given".
bool field_value(const model::FormField& f, const QWidget* w, model::Json& out) {
  switch (f.kind) {
    case Kind::integer: {
      const int v = static_cast<const QSpinBox*>(w)->value();
      if (!f.min_text.empty() && v == clamp_int(f.min)) return false;
      out = v;
      return true;
    }
    case Kind::real: {
      const double v = static_cast<const QDoubleSpinBox*>(w)->value();
      if (!f.min_text.empty() && v == f.min) return false;
      out = v;
      return true;
    }
    case Kind::flag: out = static_cast<const QCheckBox*>(w)->isChecked(); return true;
    case Kind::choice: out = choice_value(static_cast<const QComboBox*>(w)).toStdString(); return true;
  }
  return false;
}

// Sets a field's widget from the JSON block's value (nullptr: the key was left out, so a
// field whose minimum means "not given" shows it; others keep what they show).
void set_field(const model::FormField& f, QWidget* w, const model::Json* v) {
  if (!v) {
    if (f.min_text.empty()) return;
    if (f.kind == Kind::integer) static_cast<QSpinBox*>(w)->setValue(clamp_int(f.min));
    if (f.kind == Kind::real) static_cast<QDoubleSpinBox*>(w)->setValue(f.min);
    return;
  }
  switch (f.kind) {
    case Kind::integer: static_cast<QSpinBox*>(w)->setValue(clamp_int(v->get<double>())); break;
    case Kind::real: static_cast<QDoubleSpinBox*>(w)->setValue(v->get<double>()); break;
    case Kind::flag: static_cast<QCheckBox*>(w)->setChecked(v->get<bool>()); break;
    case Kind::choice: set_choice(static_cast<QComboBox*>(w), q(v->get<std::string>())); break;
  }
}

}  // namespace

MethodPages::MethodPages(FieldErrors& errors, QWidget* parent) : QStackedWidget(parent) {
  for (const std::string& key : model::design_keys()) pages_.push_back({key, model::design_form(key), {}});
  // Built once every page is in place: the pages' signal handlers hold references to them.
  for (Page& page : pages_) addWidget(buildPage(page, errors));
}

QStringList MethodPages::methods() {
  QStringList keys;
  for (const std::string& key : model::design_keys()) keys << q(key);
  return keys;
}

QString MethodPages::title(const QString& method) { return q(model::design_form(method.toStdString()).title); }

QString MethodPages::method() const { return methods().value(currentIndex()); }

void MethodPages::setMethod(const QString& method) {
  const int i = static_cast<int>(methods().indexOf(method));
  if (i >= 0) setCurrentIndex(i);
}

const MethodPages::Page& MethodPages::current() const { return pages_.at(static_cast<std::size_t>(currentIndex())); }

void MethodPages::watch(QWidget* field) {
  if (auto* s = qobject_cast<QSpinBox*>(field)) connect(s, &QSpinBox::valueChanged, this, &MethodPages::edited);
  if (auto* s = qobject_cast<QDoubleSpinBox*>(field))
    connect(s, &QDoubleSpinBox::valueChanged, this, &MethodPages::edited);
  if (auto* c = qobject_cast<QComboBox*>(field))
    connect(c, &QComboBox::currentIndexChanged, this, &MethodPages::edited);
  if (auto* c = qobject_cast<QCheckBox*>(field)) connect(c, &QCheckBox::toggled, this, &MethodPages::edited);
}

QWidget* MethodPages::fieldWidget(const model::FormField& f) {
  const QString tip = q(f.tooltip);
  switch (f.kind) {
    case Kind::integer: {
      QSpinBox* s = int_spin(clamp_int(f.min), clamp_int(f.max), clamp_int(f.start), tip, q(f.unit));
      if (!f.min_text.empty()) s->setSpecialValueText(q(f.min_text));
      return s;
    }
    case Kind::real: {
      QDoubleSpinBox* s = real_spin(f.min, f.max, f.start, f.decimals, tip);
      if (!f.min_text.empty()) s->setSpecialValueText(q(f.min_text));
      return s;
    }
    case Kind::flag: {
      auto* c = new QCheckBox(q(f.unit));
      c->setChecked(f.start != 0);
      c->setToolTip(tip);
      return c;
    }
    case Kind::choice: {
      std::vector<std::pair<QString, QString>> items;
      for (const auto& c : f.choices) items.emplace_back(q(c.label), q(c.value));
      QComboBox* box = choice_box(items, tip);
      set_choice(box, q(f.start_choice));
      return box;
    }
  }
  return nullptr;
}

QWidget* MethodPages::buildPage(Page& page, FieldErrors& errors) {
  auto* widget = new QWidget();
  auto* form = new_form(widget);
  const std::string block = "/design/" + page.key;
  // The block's own errors (a partition that does not sum up) show under its sentence.
  if (!page.form.about.empty()) {
    auto* about = new QLabel(q(page.form.about));
    about->setWordWrap(true);
    QLabel* error = nullptr;
    form->addRow(with_error_line(about, &error));
    errors.add(block, nullptr, error);
  }
  for (const model::FormField& f : page.form.fields) {
    QWidget* w = fieldWidget(f);
    page.widgets[f.key] = w;
    add_field(form, errors, q(f.label), w, block + "/" + f.key);
  }
  if (page.form.layer_kinds) add_field(form, errors, tr("layer kinds"), ruleEditor(), block + "/layers");
  // The fields that follow others are connected first, so that the page is consistent
  // when `edited` (connected last, by watch) makes the editor parse it.
  for (const model::FormField& f : page.form.fields)
    if (!f.when_key.empty())
      connect(static_cast<QComboBox*>(page.widgets.at(f.when_key)), &QComboBox::currentIndexChanged, this,
              [this, &page] { updateEnabled(page); });
  for (const std::string& key : page.form.layer_partition)
    if (key != page.form.partition_rest)
      connect(static_cast<QSpinBox*>(page.widgets.at(key)), &QSpinBox::valueChanged, this,
              [this, &page] { keepPartition(page); });
  for (const model::FormField& f : page.form.fields) watch(page.widgets.at(f.key));
  updateEnabled(page);
  return widget;
}

// The stream-kind rule mirrors config_io's rule object; "Apply" fills the per-layer list.
QWidget* MethodPages::ruleEditor() {
  rule_sliding_ = stream_kind_box(tr("Kind for the backbone's sliding-window layers"));
  set_choice(rule_sliding_, "local");
  rule_every_ = int_spin(0, 4096, 0, tr("Layers l with (l+1) % k == 0 run full attention; 0 = none"));
  rule_every_->setSpecialValueText(tr("none"));
  rule_rest_ = stream_kind_box(tr("Kind for every other layer"));
  set_choice(rule_rest_, "full");
  // Named after config_io's rule keys (not registered for errors: the rule's errors go to
  // the "layer kinds" row).
  rule_sliding_->setObjectName("/design/hd/layers/sliding");
  rule_every_->setObjectName("/design/hd/layers/full_every");
  rule_rest_->setObjectName("/design/hd/layers/rest");
  auto* apply = new QPushButton(tr("Apply rule"));
  apply->setToolTip(tr("Set every layer's kind from this rule (Ctrl+R); single layers are edited in the Layers "
                       "tab or by right-clicking the layer strip"));
  connect(apply, &QPushButton::clicked, this, &MethodPages::applyRuleRequested);
  auto* rule = new QWidget();
  auto* row = new QFormLayout(rule);
  row->setContentsMargins(0, 0, 0, 0);
  row->addRow(tr("backbone sliding layers"), rule_sliding_);
  row->addRow(tr("full every k"), rule_every_);
  row->addRow(tr("other layers"), rule_rest_);
  row->addRow(apply);
  rule_summary_ = new QLabel();
  rule_summary_->setWordWrap(true);
  row->addRow(rule_summary_);
  return rule;
}

// A field shown only for some values of a choice (PHD's W and C) is active while the
// choice holds one of them.
bool MethodPages::active(const Page& page, const model::FormField& f) {
  if (f.when_key.empty()) return true;
  const std::string v = choice_value(static_cast<const QComboBox*>(page.widgets.at(f.when_key))).toStdString();
  return std::find(f.when_values.begin(), f.when_values.end(), v) != f.when_values.end();
}

void MethodPages::updateEnabled(const Page& page) {
  for (const model::FormField& f : page.form.fields)
    if (!f.when_key.empty()) page.widgets.at(f.key)->setEnabled(active(page, f));
}

// The fields of a layer partition other than the rest keep their values; the rest takes
// what they leave, so the sum stays whole (an edit of the rest itself is checked by the
// parser).
void MethodPages::keepPartition(const Page& page) {
  if (layers_ <= 0 || page.form.partition_rest.empty()) return;
  int taken = 0;
  for (const std::string& key : page.form.layer_partition)
    if (key != page.form.partition_rest) taken += static_cast<QSpinBox*>(page.widgets.at(key))->value();
  auto* rest = static_cast<QSpinBox*>(page.widgets.at(page.form.partition_rest));
  const QSignalBlocker block(rest);
  rest->setValue(std::max(rest->minimum(), layers_ - taken));
}

model::Json MethodPages::methodJson() const {
  const Page& page = current();
  model::Json o = model::Json::object();
  for (const model::FormField& f : page.form.fields) {
    const QWidget* w = page.widgets.at(f.key);
    if (!active(page, f)) continue;  // e.g. PHD's W under the plain variant
    model::Json v;
    if (field_value(f, w, v)) o[f.key] = v;
  }
  return o;
}

gui_core::HdRule MethodPages::hdRule() const {
  auto kind = [](const QComboBox* box) {
    const QString v = choice_value(box);
    if (v == "full") return model::HdLayerKind::full;
    return v == "local" ? model::HdLayerKind::local : model::HdLayerKind::intra;
  };
  return {kind(rule_sliding_), rule_every_->value(), kind(rule_rest_)};
}

model::Json MethodPages::hdRuleJson() const {
  const gui_core::HdRule r = hdRule();
  return {{"sliding", model::to_string(r.sliding)}, {"full_every", r.full_every}, {"rest", model::to_string(r.rest)}};
}

void MethodPages::setHdRule(const gui_core::HdRule& rule) {
  const QSignalBlocker b1(rule_sliding_), b2(rule_every_), b3(rule_rest_);
  set_choice(rule_sliding_, model::to_string(rule.sliding));
  rule_every_->setMaximum(std::max<int>(rule_every_->maximum(), static_cast<int>(rule.full_every)));
  rule_every_->setValue(static_cast<int>(rule.full_every));
  set_choice(rule_rest_, model::to_string(rule.rest));
}

void MethodPages::load(const model::Method& m) {
  // Loading sets many widgets; one rebuild afterwards, not one per widget.
  std::vector<std::unique_ptr<QSignalBlocker>> blockers;
  for (QObject* o : findChildren<QWidget*>()) blockers.push_back(std::make_unique<QSignalBlocker>(o));
  setMethod(model::method_name(m));
  model::Json design = model::Json::object();
  model::method_to_json(m, design);
  const model::Json& block = design[model::method_name(m)];
  const Page& page = current();
  for (const model::FormField& f : page.form.fields)
    set_field(f, page.widgets.at(f.key), block.contains(f.key) ? &block[f.key] : nullptr);
  updateEnabled(page);
}

void MethodPages::adaptTo(const model::Backbone& effective) {
  std::vector<std::unique_ptr<QSignalBlocker>> blockers;
  for (QObject* o : findChildren<QWidget*>()) blockers.push_back(std::make_unique<QSignalBlocker>(o));
  layers_ = static_cast<int>(effective.num_layers);
  const bool mirrors = effective.kv_mirror_layers > 0;
  for (const Page& page : pages_) {
    for (const model::FormField& f : page.form.fields)
      if (f.needs_mirror_layers) {
        auto* box = static_cast<QCheckBox*>(page.widgets.at(f.key));
        box->setChecked(mirrors);
        box->setEnabled(mirrors);
      }
    // Each kept field of a partition is cut to what the layers before it leave, keeping
    // at least the rest's minimum; the rest takes the remainder.
    if (page.form.partition_rest.empty()) continue;
    const int rest_min = static_cast<QSpinBox*>(page.widgets.at(page.form.partition_rest))->minimum();
    int left = layers_ - rest_min;
    for (const std::string& key : page.form.layer_partition) {
      if (key == page.form.partition_rest) continue;
      auto* s = static_cast<QSpinBox*>(page.widgets.at(key));
      s->setValue(std::max(0, std::min(s->value(), left)));
      left -= s->value();
    }
    keepPartition(page);
  }
  if (rule_every_) rule_every_->setMaximum(layers_);
}

void MethodPages::setLayerSummary(const QString& text) {
  if (rule_summary_) rule_summary_->setText(text);
}

}  // namespace hdlab::gui
