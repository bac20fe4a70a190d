#include "form_helpers.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QSpinBox>
#include <QVBoxLayout>

#include "hdlab/gui_core/field_errors.hpp"

namespace hdlab::gui {
namespace {
const char* kErrorStyle = "color: #B00020;";
const char* kFieldErrorStyle = "border: 1px solid #B00020;";
}  // namespace

QSpinBox* int_spin(int lo, int hi, int value, const QString& tooltip, const QString& suffix) {
  auto* s = new QSpinBox();
  s->setRange(lo, hi);
  s->setValue(value);
  s->setToolTip(tooltip);
  s->setSuffix(suffix);
  s->setKeyboardTracking(false);  // one edit per value, not per keystroke
  s->setGroupSeparatorShown(true);
  return s;
}

QDoubleSpinBox* real_spin(double lo, double hi, double value, int decimals, const QString& tooltip) {
  auto* s = new QDoubleSpinBox();
  s->setRange(lo, hi);
  s->setDecimals(decimals);
  s->setValue(value);
  s->setToolTip(tooltip);
  s->setKeyboardTracking(false);
  return s;
}

QComboBox* choice_box(const std::vector<std::pair<QString, QString>>& items, const QString& tooltip) {
  auto* b = new QComboBox();
  for (const auto& [text, value] : items) b->addItem(text, value);
  b->setToolTip(tooltip);
  return b;
}

QString choice_value(const QComboBox* box) { return box->currentData().toString(); }

void set_choice(QComboBox* box, const QString& value) {
  const int i = box->findData(value);
  if (i >= 0) box->setCurrentIndex(i);
}

void add_labelled_fields(QLayout* row_layout, FieldErrors& errors, std::initializer_list<LabelledField> fields) {
  for (const LabelledField& f : fields) {
    QLabel* error = nullptr;
    auto* pair = new QWidget();
    auto* h = new QHBoxLayout(pair);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(new QLabel(f.label));
    h->addWidget(with_error_line(f.field, &error));
    row_layout->addWidget(pair);
    errors.add(f.pointer, f.field, error);
  }
}

QWidget* with_error_line(QWidget* field, QLabel** error) {
  auto* w = new QWidget();
  auto* v = new QVBoxLayout(w);
  v->setContentsMargins(0, 0, 0, 0);
  v->setSpacing(1);
  v->addWidget(field);
  auto* label = new QLabel();
  label->setStyleSheet(kErrorStyle);
  label->setWordWrap(true);
  label->hide();
  v->addWidget(label);
  *error = label;
  return w;
}

void FieldErrors::add(const std::string& pointer, QWidget* field, QLabel* label) {
  // The pointer names the field for tests and accessibility tools too.
  if (field && field->objectName().isEmpty()) field->setObjectName(QString::fromStdString(pointer));
  label->setObjectName(QString::fromStdString(pointer + "#error"));
  fields_.push_back({pointer, field, label});
}

void FieldErrors::show(const model::ConfigError& e) {
  std::vector<std::string> pointers;
  for (const auto& f : fields_) pointers.push_back(f.pointer);
  const int i = gui_core::field_for_pointer(e.pointer(), pointers);
  if (i < 0) {
    general_->setText(QString::fromStdString(e.what()));
    general_->show();
    return;
  }
  Field& f = fields_[static_cast<std::size_t>(i)];
  // The pointer's tail below the field says which entry (e.g. "layers/3").
  QString text = QString::fromStdString(e.reason());
  if (e.pointer().size() > f.pointer.size())
    text = QString::fromStdString(e.pointer().substr(f.pointer.size() + 1)) + ": " + text;
  f.label->setText(text);
  f.label->setToolTip(QString::fromStdString(e.what()));
  f.label->show();
  if (f.widget) {
    // A property selector keeps the border on the field itself, not on its children.
    f.widget->setProperty("hdlabError", true);
    f.widget->setStyleSheet(QString("*[hdlabError=\"true\"] { %1 }").arg(kFieldErrorStyle));
  }
}

void FieldErrors::clear() {
  for (auto& f : fields_) {
    f.label->clear();
    f.label->hide();
    if (f.widget && f.widget->property("hdlabError").toBool()) {
      f.widget->setProperty("hdlabError", false);
      f.widget->setStyleSheet({});
    }
  }
  general_->clear();
  general_->hide();
}

QString FieldErrors::textAt(const std::string& pointer) const {
  for (const auto& f : fields_)
    if (f.pointer == pointer) return f.label->text();
  return {};
}

QString FieldErrors::generalText() const { return general_->text(); }

}  // namespace hdlab::gui
