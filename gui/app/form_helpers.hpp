#pragma once
// Small pieces every editor form uses: spin boxes with units in tooltips, and the
// inline errors: a ConfigError's JSON pointer picks the field it is shown next to.
#include <initializer_list>
#include <string>
#include <vector>

#include <QLabel>
#include <QString>
#include <QWidget>

#include "hdlab/model/error.hpp"

class QSpinBox;
class QDoubleSpinBox;
class QComboBox;
class QLayout;

namespace hdlab::gui {

QSpinBox* int_spin(int lo, int hi, int value, const QString& tooltip, const QString& suffix = {});
QDoubleSpinBox* real_spin(double lo, double hi, double value, int decimals, const QString& tooltip);
// Items are (shown text, JSON value) pairs; the JSON value is kept as item data.
QComboBox* choice_box(const std::vector<std::pair<QString, QString>>& items, const QString& tooltip);
QString choice_value(const QComboBox* box);
void set_choice(QComboBox* box, const QString& value);

// A field with a hidden error line under it; `error` receives the label.
QWidget* with_error_line(QWidget* field, QLabel** error);

class FieldErrors;

// A labelled field of a flowing form: "label [field]" with the field's error line under it.
struct LabelledField {
  QString label;
  QWidget* field;
  const char* pointer;  // the JSON pointer whose errors show at the field
};
// Adds each field to `row_layout` as one label + field pair and registers it with `errors`.
void add_labelled_fields(QLayout* row_layout, FieldErrors& errors, std::initializer_list<LabelledField> fields);

// Maps JSON pointers to error labels. show() puts a ConfigError's reason next to the
// field whose pointer is the longest prefix of the error's; errors no field claims go
// to the general label with their pointer.
class FieldErrors {
 public:
  explicit FieldErrors(QLabel* general) : general_(general) {}
  // Also names the field after its pointer (objectName), e.g. "/design/hd/n".
  void add(const std::string& pointer, QWidget* field, QLabel* label);
  void show(const model::ConfigError& e);
  void clear();
  // The text shown for a field (by its registered pointer), or "" when none.
  QString textAt(const std::string& pointer) const;
  QString generalText() const;

 private:
  struct Field {
    std::string pointer;
    QWidget* widget;
    QLabel* label;
  };
  std::vector<Field> fields_;
  QLabel* general_;
};

}  // namespace hdlab::gui
