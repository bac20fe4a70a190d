#pragma once
// The parameter pages of the design editor, one per method (baseline, HD, PHD, VWN,
// looped). They turn widgets into the method's JSON object and back; the design editor
// does the parsing, so every check stays in model/config_io.
#include <QStackedWidget>
#include <QStringList>

#include "form_helpers.hpp"
#include "hdlab/gui_core/hd_rule.hpp"
#include "hdlab/model/config_io.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace hdlab::gui {

class MethodPages : public QStackedWidget {
  Q_OBJECT
 public:
  MethodPages(FieldErrors& errors, QWidget* parent = nullptr);

  static QStringList methods();  // "baseline", "hd", "phd", "vwn", "looped", "mhc": page order
  QString method() const;
  void setMethod(const QString& method);

  // The method's JSON object (HD without "layers": the editor adds the kinds).
  model::Json methodJson() const;
  // HD layer rule from the rule widgets, as a rule and in config_io's rule syntax.
  gui_core::HdRule hdRule() const;
  model::Json hdRuleJson() const;
  // Rule widgets from a rule (a loaded design's); emits nothing.
  void setHdRule(const gui_core::HdRule& rule);
  // Widgets from a parsed method; emits nothing.
  void load(const model::Method& m);
  // Defaults that follow a new backbone: KV mirror on when it has mirror pairs, the
  // looped block spanning the layers not in prelude or coda.
  void adaptTo(const model::Backbone& effective);
  void setLayerSummary(const QString& text);

 signals:
  void edited();
  void applyRuleRequested();

 private:
  QWidget* baselinePage();
  QWidget* hdPage(FieldErrors& errors);
  QWidget* phdPage(FieldErrors& errors);
  QWidget* vwnPage(FieldErrors& errors);
  QWidget* loopedPage(FieldErrors& errors);
  QWidget* mhcPage(FieldErrors& errors);
  void watch(QSpinBox* s);
  void watch(QDoubleSpinBox* s);
  void watch(QComboBox* c);
  void watch(QCheckBox* c);

  // HD
  QSpinBox* hd_n_;
  QSpinBox* hd_window_;
  QComboBox* hd_rope_;
  QCheckBox* hd_mirror_;
  QDoubleSpinBox* hd_theta_;
  QComboBox* rule_sliding_;
  QSpinBox* rule_every_;
  QComboBox* rule_rest_;
  QLabel* hd_summary_;
  // PHD
  QSpinBox* phd_k_;
  QComboBox* phd_variant_;
  QSpinBox* phd_w_;
  QSpinBox* phd_c_;
  // VWN
  QSpinBox* vwn_m_;
  QSpinBox* vwn_n_;
  QCheckBox* vwn_dynamic_;
  QComboBox* vwn_embedding_;
  QCheckBox* vwn_mtp_;
  // Looped
  QSpinBox* loop_prelude_;
  QSpinBox* loop_recurrent_;
  QSpinBox* loop_coda_;
  QSpinBox* loop_iterations_;
  QComboBox* loop_kv_;
  QCheckBox* loop_injection_;
  // mHC
  QSpinBox* mhc_n_;
  QSpinBox* mhc_iters_;
  int layers_ = 0;  // of the backbone the method applies to (adaptTo)
};

}  // namespace hdlab::gui
