#include "method_pages.hpp"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>

namespace hdlab::gui {
namespace {

constexpr int kMaxInt = 2147483647;

// Adds "label: field" with an inline error line registered under `pointer`.
void add_field(QFormLayout* form, FieldErrors& errors, const QString& label, QWidget* field,
               const std::string& pointer) {
  QLabel* error = nullptr;
  form->addRow(label, with_error_line(field, &error));
  errors.add(pointer, field, error);
}

QComboBox* hd_kind_box(const QString& tooltip) {
  return choice_box({{"full", "full"}, {"local", "local"}, {"intra", "intra"}}, tooltip);
}

QFormLayout* new_form(QWidget* page) {
  auto* form = new QFormLayout(page);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  return form;
}

}  // namespace

MethodPages::MethodPages(FieldErrors& errors, QWidget* parent) : QStackedWidget(parent) {
  addWidget(baselinePage());
  addWidget(hdPage(errors));
  addWidget(phdPage(errors));
  addWidget(vwnPage(errors));
  addWidget(loopedPage(errors));
  addWidget(mhcPage(errors));
}

QStringList MethodPages::methods() { return {"baseline", "hd", "phd", "vwn", "looped", "mhc"}; }

QString MethodPages::method() const { return methods().value(currentIndex()); }

void MethodPages::setMethod(const QString& method) {
  const int i = static_cast<int>(methods().indexOf(method));
  if (i >= 0) setCurrentIndex(i);
}

void MethodPages::watch(QSpinBox* s) { connect(s, &QSpinBox::valueChanged, this, &MethodPages::edited); }
void MethodPages::watch(QDoubleSpinBox* s) {
  connect(s, &QDoubleSpinBox::valueChanged, this, &MethodPages::edited);
}
void MethodPages::watch(QComboBox* c) { connect(c, &QComboBox::currentIndexChanged, this, &MethodPages::edited); }
void MethodPages::watch(QCheckBox* c) { connect(c, &QCheckBox::toggled, this, &MethodPages::edited); }

QWidget* MethodPages::baselinePage() {
  auto* page = new QWidget();
  auto* form = new_form(page);
  auto* text = new QLabel(tr("The backbone as it is: no extra computation per token. Growth (below) may still "
                             "turn it into a bigger model."));
  text->setWordWrap(true);
  form->addRow(text);
  return page;
}

QWidget* MethodPages::hdPage(FieldErrors& errors) {
  auto* page = new QWidget();
  auto* form = new_form(page);
  hd_n_ = int_spin(1, 1024, 4, tr("Streams per token n: each token becomes n positions (t = i*n + k), "
                                  "n embedding tables; loss on the final stream only"));
  hd_window_ = int_spin(0, kMaxInt, 0, tr("Window of local layers in expanded positions (n positions per token). "
                                          "auto = the backbone's sliding window in tokens x n"), tr(" positions"));
  hd_window_->setSpecialValueText(tr("auto (backbone window x n)"));
  hd_rope_ = choice_box({{tr("expanded index t"), "expanded"}, {tr("token index i (intra layers)"), "token_index"}},
                        tr("RoPE positions of intra-stream layers: the expanded index t = i*n + k, or the token "
                           "index i (the head-folding implementation)"));
  hd_mirror_ = new QCheckBox(tr("mirrored layers run the final stream only"));
  hd_mirror_->setToolTip(tr("KV mirror: late layers take K/V from an early layer's input; under HD they run only "
                            "the final stream's queries (needs a backbone with KV-mirror layers)"));
  hd_theta_ = real_spin(0, 1e12, 0, 0, tr("RoPE base under HD; 0 = the backbone's (raised for larger n in "
                                          "progressive expansion)"));
  hd_theta_->setSpecialValueText(tr("backbone's"));
  add_field(form, errors, tr("streams n"), hd_n_, "/design/hd/n");
  add_field(form, errors, tr("local window"), hd_window_, "/design/hd/window");
  add_field(form, errors, tr("RoPE positions"), hd_rope_, "/design/hd/rope");
  add_field(form, errors, tr("KV mirror"), hd_mirror_, "/design/hd/kv_mirror");
  add_field(form, errors, tr("RoPE theta"), hd_theta_, "/design/hd/rope_theta");

  // The layer rule mirrors config_io's rule object; "Apply" fills the per-layer list.
  rule_sliding_ = hd_kind_box(tr("Kind for the backbone's sliding-window layers"));
  set_choice(rule_sliding_, "local");
  rule_every_ = int_spin(0, 4096, 0, tr("Layers l with (l+1) % k == 0 run full attention; 0 = none"));
  rule_every_->setSpecialValueText(tr("none"));
  rule_rest_ = hd_kind_box(tr("Kind for every other layer"));
  set_choice(rule_rest_, "full");
  // Named after config_io's rule keys (not registered for errors: the rule's errors go
  // to the "layer kinds" row).
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
  hd_summary_ = new QLabel();
  hd_summary_->setWordWrap(true);
  row->addRow(hd_summary_);
  add_field(form, errors, tr("layer kinds"), rule, "/design/hd/layers");
  for (QSpinBox* s : {hd_n_, hd_window_}) watch(s);
  watch(hd_theta_);
  watch(hd_rope_);
  watch(hd_mirror_);
  return page;
}

QWidget* MethodPages::phdPage(FieldErrors& errors) {
  auto* page = new QWidget();
  auto* form = new_form(page);
  phd_k_ = int_spin(1, 4096, 3, tr("Copies per token K: the origin plus K-1 hidden decoding tokens"));
  phd_variant_ = choice_box({{tr("plain"), "plain"}, {tr("SWA (hidden window)"), "swa"}, {tr("CSWA (chunked)"), "cswa"}},
                            tr("plain: hidden copies see origins and their own token; SWA adds the W previous hidden "
                               "tokens; CSWA only within chunks of C tokens"));
  set_choice(phd_variant_, "cswa");
  phd_w_ = int_spin(1, kMaxInt, 16, tr("Hidden-token window W (swa, cswa)"), tr(" hidden tokens"));
  phd_c_ = int_spin(1, kMaxInt, 32, tr("Chunk C (cswa)"), tr(" tokens"));
  add_field(form, errors, tr("copies K"), phd_k_, "/design/phd/K");
  add_field(form, errors, tr("variant"), phd_variant_, "/design/phd/variant");
  add_field(form, errors, tr("window W"), phd_w_, "/design/phd/W");
  add_field(form, errors, tr("chunk C"), phd_c_, "/design/phd/C");
  auto enable = [this] {
    const QString v = choice_value(phd_variant_);
    phd_w_->setEnabled(v != "plain");
    phd_c_->setEnabled(v == "cswa");
  };
  connect(phd_variant_, &QComboBox::currentIndexChanged, this, enable);
  enable();
  for (QSpinBox* s : {phd_k_, phd_w_, phd_c_}) watch(s);
  watch(phd_variant_);
  return page;
}

QWidget* MethodPages::vwnPage(FieldErrors& errors) {
  auto* page = new QWidget();
  auto* form = new_form(page);
  vwn_m_ = int_spin(1, 4096, 2, tr("Slots the D-wide sublayer input is made of (D/m each); must divide D"));
  vwn_n_ = int_spin(1, 4096, 3, tr("Slots of the wide residual stream: D' = (n/m) D"));
  vwn_dynamic_ = new QCheckBox(tr("input-dependent GHC coefficients"));
  vwn_dynamic_->setChecked(true);
  vwn_embedding_ = choice_box({{tr("full V x D' table"), "full"}, {tr("D -> D' projection"), "projected"}},
                              tr("Over-width input embedding"));
  vwn_mtp_ = new QCheckBox(tr("multi-token prediction head"));
  add_field(form, errors, tr("m"), vwn_m_, "/design/vwn/m");
  add_field(form, errors, tr("n"), vwn_n_, "/design/vwn/n");
  add_field(form, errors, tr("dynamic"), vwn_dynamic_, "/design/vwn/dynamic");
  add_field(form, errors, tr("embedding"), vwn_embedding_, "/design/vwn/embedding");
  add_field(form, errors, tr("MTP"), vwn_mtp_, "/design/vwn/mtp");
  for (QSpinBox* s : {vwn_m_, vwn_n_}) watch(s);
  watch(vwn_dynamic_);
  watch(vwn_embedding_);
  watch(vwn_mtp_);
  return page;
}

QWidget* MethodPages::loopedPage(FieldErrors& errors) {
  auto* page = new QWidget();
  auto* form = new_form(page);
  loop_prelude_ = int_spin(0, 4096, 0, tr("Layers run once before the loop"), tr(" layers"));
  loop_recurrent_ = int_spin(1, 4096, 1, tr("Layers of the block applied K times"), tr(" layers"));
  loop_coda_ = int_spin(0, 4096, 0, tr("Layers run once after the loop"), tr(" layers"));
  loop_iterations_ = int_spin(1, 4096, 4, tr("Times the recurrent block runs per token (K)"));
  loop_kv_ = choice_box({{tr("one per iteration"), "per_iteration"}, {tr("shared across iterations"), "shared"}},
                        tr("KV cache of the recurrent block: K*R layer slots, or R shared"));
  loop_injection_ = new QCheckBox(tr("re-inject the embedding each iteration (2D -> D adapter)"));
  QLabel* group_error = nullptr;
  auto* sum = new QLabel(tr("prelude + recurrent + coda must equal the layers"));
  sum->setWordWrap(true);
  form->addRow(with_error_line(sum, &group_error));
  errors.add("/design/looped", nullptr, group_error);
  add_field(form, errors, tr("prelude P"), loop_prelude_, "/design/looped/prelude");
  add_field(form, errors, tr("recurrent R"), loop_recurrent_, "/design/looped/recurrent");
  add_field(form, errors, tr("coda C"), loop_coda_, "/design/looped/coda");
  add_field(form, errors, tr("iterations K"), loop_iterations_, "/design/looped/iterations");
  add_field(form, errors, tr("KV cache"), loop_kv_, "/design/looped/kv");
  add_field(form, errors, tr("injection"), loop_injection_, "/design/looped/input_injection");
  // Prelude and coda take their layers from the recurrent block, so the sum stays whole;
  // an edit of the block itself is checked by the parser.
  for (QSpinBox* s : {loop_prelude_, loop_coda_})
    connect(s, &QSpinBox::valueChanged, this, [this] {
      if (layers_ <= 0) return;
      const QSignalBlocker block(loop_recurrent_);
      loop_recurrent_->setValue(std::max(1, layers_ - loop_prelude_->value() - loop_coda_->value()));
    });
  for (QSpinBox* s : {loop_prelude_, loop_recurrent_, loop_coda_, loop_iterations_}) watch(s);
  watch(loop_kv_);
  watch(loop_injection_);
  return page;
}

QWidget* MethodPages::mhcPage(FieldErrors& errors) {
  auto* page = new QWidget();
  auto* form = new_form(page);
  mhc_n_ = int_spin(1, 64, 4, tr("Residual streams of width D (DeepSeek-V4: 4)"));
  mhc_iters_ = int_spin(1, 1000, 20, tr("Sinkhorn-Knopp iterations projecting the stream mixing (paper: 20)"));
  add_field(form, errors, tr("streams n"), mhc_n_, "/design/mhc/n");
  add_field(form, errors, tr("Sinkhorn iterations"), mhc_iters_, "/design/mhc/sinkhorn_iters");
  for (QSpinBox* s : {mhc_n_, mhc_iters_}) watch(s);
  return page;
}

model::Json MethodPages::methodJson() const {
  using model::Json;
  const QString m = method();
  if (m == "hd") {
    Json o = {{"n", hd_n_->value()}, {"rope", choice_value(hd_rope_).toStdString()},
              {"kv_mirror", hd_mirror_->isChecked()}, {"rope_theta", hd_theta_->value()}};
    if (hd_window_->value() > 0) o["window"] = hd_window_->value();
    return o;
  }
  if (m == "phd") {
    const std::string v = choice_value(phd_variant_).toStdString();
    Json o = {{"K", phd_k_->value()}, {"variant", v}};
    if (v != "plain") o["W"] = phd_w_->value();
    if (v == "cswa") o["C"] = phd_c_->value();
    return o;
  }
  if (m == "vwn")
    return {{"m", vwn_m_->value()}, {"n", vwn_n_->value()}, {"dynamic", vwn_dynamic_->isChecked()},
            {"embedding", choice_value(vwn_embedding_).toStdString()}, {"mtp", vwn_mtp_->isChecked()}};
  if (m == "looped")
    return {{"prelude", loop_prelude_->value()},   {"recurrent", loop_recurrent_->value()},
            {"coda", loop_coda_->value()},         {"iterations", loop_iterations_->value()},
            {"kv", choice_value(loop_kv_).toStdString()}, {"input_injection", loop_injection_->isChecked()}};
  if (m == "mhc") return {{"n", mhc_n_->value()}, {"sinkhorn_iters", mhc_iters_->value()}};
  return Json::object();
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
  if (const auto* hd = std::get_if<model::HdDesign>(&m)) {
    hd_n_->setValue(static_cast<int>(hd->n));
    hd_window_->setValue(static_cast<int>(std::min<std::int64_t>(hd->window, kMaxInt)));
    set_choice(hd_rope_, model::to_string(hd->rope));
    hd_mirror_->setChecked(hd->kv_mirror);
    hd_theta_->setValue(hd->rope_theta);
  } else if (const auto* p = std::get_if<model::PhdDesign>(&m)) {
    phd_k_->setValue(static_cast<int>(p->K));
    set_choice(phd_variant_, model::to_string(p->variant));
    if (p->W > 0) phd_w_->setValue(static_cast<int>(std::min<std::int64_t>(p->W, kMaxInt)));
    if (p->C > 0) phd_c_->setValue(static_cast<int>(std::min<std::int64_t>(p->C, kMaxInt)));
    phd_w_->setEnabled(p->variant != model::PhdVariant::plain);
    phd_c_->setEnabled(p->variant == model::PhdVariant::cswa);
  } else if (const auto* v = std::get_if<model::VwnDesign>(&m)) {
    vwn_m_->setValue(static_cast<int>(v->m));
    vwn_n_->setValue(static_cast<int>(v->n));
    vwn_dynamic_->setChecked(v->dynamic);
    set_choice(vwn_embedding_, model::to_string(v->embedding));
    vwn_mtp_->setChecked(v->mtp);
  } else if (const auto* l = std::get_if<model::LoopedDesign>(&m)) {
    loop_prelude_->setValue(static_cast<int>(l->prelude));
    loop_recurrent_->setValue(static_cast<int>(l->recurrent));
    loop_coda_->setValue(static_cast<int>(l->coda));
    loop_iterations_->setValue(static_cast<int>(l->iterations));
    set_choice(loop_kv_, model::to_string(l->kv));
    loop_injection_->setChecked(l->input_injection);
  } else if (const auto* x = std::get_if<model::MhcDesign>(&m)) {
    mhc_n_->setValue(static_cast<int>(x->n));
    mhc_iters_->setValue(static_cast<int>(x->sinkhorn_iters));
  }
}

void MethodPages::adaptTo(const model::Backbone& effective) {
  std::vector<std::unique_ptr<QSignalBlocker>> blockers;
  for (QObject* o : findChildren<QWidget*>()) blockers.push_back(std::make_unique<QSignalBlocker>(o));
  hd_mirror_->setChecked(effective.kv_mirror_layers > 0);
  hd_mirror_->setEnabled(effective.kv_mirror_layers > 0);
  const int layers = static_cast<int>(effective.num_layers);
  layers_ = layers;
  const int prelude = std::min(loop_prelude_->value(), layers - 1);
  const int coda = std::min(loop_coda_->value(), layers - 1 - prelude);
  loop_prelude_->setValue(prelude);
  loop_coda_->setValue(coda);
  loop_recurrent_->setValue(layers - prelude - coda);
  rule_every_->setMaximum(layers);
}

void MethodPages::setLayerSummary(const QString& text) { hd_summary_->setText(text); }

}  // namespace hdlab::gui
