#pragma once
// The parameter pages of the design editor, one per registered design, each built from
// the form its module declares (model::design_form): a spin box, check box or choice per
// field of the method's JSON block. They turn widgets into that JSON block and back; the
// design editor does the parsing, so every check stays in the design's module. Nothing
// here names a design: a module added to the registry gets its page.
#include <QStackedWidget>
#include <QStringList>

#include <map>
#include <string>
#include <vector>

#include "form_helpers.hpp"
#include "hdlab/gui_core/hd_rule.hpp"
#include "hdlab/model/config_io.hpp"

class QComboBox;
class QLabel;
class QSpinBox;

namespace hdlab::gui {

class MethodPages : public QStackedWidget {
  Q_OBJECT
 public:
  MethodPages(FieldErrors& errors, QWidget* parent = nullptr);

  static QStringList methods();  // the registry's keys, in page order
  static QString title(const QString& method);  // "Hidden Decoding (HD)"
  QString method() const;
  void setMethod(const QString& method);

  // The method's JSON object (without "layers" where the form edits stream kinds by
  // rule: the editor adds them).
  model::Json methodJson() const;
  // The stream-kind rule from the rule widgets, as a rule and in config_io's rule syntax.
  gui_core::HdRule hdRule() const;
  model::Json hdRuleJson() const;
  // Rule widgets from a rule (a loaded design's); emits nothing.
  void setHdRule(const gui_core::HdRule& rule);
  // Widgets from a parsed method (through its JSON block); emits nothing.
  void load(const model::Method& m);
  // Settings that follow a new backbone: fields that need KV-mirror layers, and the
  // layer partition (the block that takes the rest spans the layers the others leave).
  void adaptTo(const model::Backbone& effective);
  void setLayerSummary(const QString& text);

 signals:
  void edited();
  void applyRuleRequested();

 private:
  struct Page {
    std::string key;
    model::DesignForm form;
    std::map<std::string, QWidget*> widgets;  // by field key
  };
  QWidget* buildPage(Page& page, FieldErrors& errors);
  QWidget* fieldWidget(const model::FormField& f);
  QWidget* ruleEditor();
  void watch(QWidget* field);
  static bool active(const Page& page, const model::FormField& f);
  void updateEnabled(const Page& page);
  void keepPartition(const Page& page);
  const Page& current() const;

  std::vector<Page> pages_;
  // The stream-kind rule (forms with layer_kinds).
  QComboBox* rule_sliding_ = nullptr;
  QSpinBox* rule_every_ = nullptr;
  QComboBox* rule_rest_ = nullptr;
  QLabel* rule_summary_ = nullptr;
  int layers_ = 0;  // of the backbone the method applies to (adaptTo)
};

}  // namespace hdlab::gui
