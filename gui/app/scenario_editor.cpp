#include "scenario_editor.hpp"

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
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <memory>

#include "hdlab/gui_core/catalog.hpp"
#include "hdlab/gui_core/units.hpp"
#include "hdlab/model/config_io.hpp"
#include "session.hpp"

namespace hdlab::gui {
namespace {

constexpr int kMaxInt = 2147483647;

QString list_text(const std::vector<std::int64_t>& v) {
  QStringList parts;
  for (auto x : v) parts << QString::number(x);
  return parts.join(", ");
}

// "1, 8, 32" -> [1, 8, 32]; a part that is not an integer stays a string, so the
// scenario parser reports it at its index.
nlohmann::json list_json(const QString& text) {
  nlohmann::json list = nlohmann::json::array();
  for (const QString& part : text.split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts)) {
    bool ok = false;
    const qlonglong v = part.toLongLong(&ok);
    if (ok) list.push_back(v);
    else list.push_back(part.toStdString());
  }
  return list;
}

QString hardware_summary(const simulator::HardwareProfile& h) {
  using namespace gui_core;
  return QObject::tr("%1 bf16, %2 memory, %3/s")
      .arg(QString::fromStdString(format_si(h.peak_bf16_tflop_per_s * 1e12, "FLOP/s")),
           QString::fromStdString(format_bytes(h.memory_bytes())),
           QString::fromStdString(format_bytes(h.memory_bandwidth_bytes_per_s())));
}

}  // namespace

ScenarioEditor::ScenarioEditor(Session* session, QWidget* parent)
    : QWidget(parent), session_(session), general_error_(new QLabel()), errors_(general_error_) {
  general_error_->setStyleSheet("color: #B00020;");
  general_error_->setWordWrap(true);
  general_error_->hide();
  auto* v = new QVBoxLayout(this);
  v->addWidget(hardwareGroup());
  v->addWidget(general_error_);
  v->addWidget(parallelGroup());
  v->addWidget(phaseGroup());
  v->addWidget(attentionGroup());
  v->addWidget(ffnGroup());
  v->addStretch(1);
  connect(session_, &Session::configChanged, this, &ScenarioEditor::rebuild);
  connect(session_, &Session::hardwareChanged, this, &ScenarioEditor::rebuild);
  rebuild();
}

void ScenarioEditor::addField(QFormLayout* form, const QString& label, QWidget* field, const std::string& pointer) {
  QLabel* error = nullptr;
  form->addRow(label, with_error_line(field, &error));
  errors_.add(pointer, field, error);
  if (auto* s = qobject_cast<QSpinBox*>(field)) connect(s, &QSpinBox::valueChanged, this, &ScenarioEditor::rebuild);
  if (auto* s = qobject_cast<QDoubleSpinBox*>(field))
    connect(s, &QDoubleSpinBox::valueChanged, this, &ScenarioEditor::rebuild);
  if (auto* c = qobject_cast<QComboBox*>(field))
    connect(c, &QComboBox::currentIndexChanged, this, &ScenarioEditor::rebuild);
  if (auto* e = qobject_cast<QLineEdit*>(field)) connect(e, &QLineEdit::editingFinished, this, &ScenarioEditor::rebuild);
}

QWidget* ScenarioEditor::hardwareGroup() {
  auto* box = new QGroupBox(tr("Hardware"));
  auto* v = new QVBoxLayout(box);
  auto* row = new QHBoxLayout();
  hardware_box_ = new QComboBox();
  hardware_box_->setToolTip(tr("Device profiles from profiles/hardware (datasheet leads or calibrated)"));
  for (const auto& e : session_->catalog().hardware)
    hardware_box_->addItem(QString::fromStdString(e.label), QString::fromStdString(e.path));
  auto* open = new QPushButton(tr("Open..."));
  open->setToolTip(tr("Load a hardware profile JSON (e.g. one written by hdlab calibrate)"));
  row->addWidget(hardware_box_, 1);
  row->addWidget(open);
  v->addLayout(row);
  hardware_summary_ = new QLabel(tr("No hardware loaded."));
  hardware_summary_->setWordWrap(true);
  v->addWidget(hardware_summary_);
  hardware_error_ = new QLabel();
  hardware_error_->setStyleSheet("color: #B00020;");
  hardware_error_->setWordWrap(true);
  hardware_error_->hide();
  v->addWidget(hardware_error_);
  connect(hardware_box_, &QComboBox::activated, this,
          [this](int i) { loadHardwareFile(hardware_box_->itemData(i).toString()); });
  connect(open, &QPushButton::clicked, this, &ScenarioEditor::openHardwareDialog);
  return box;
}

QWidget* ScenarioEditor::parallelGroup() {
  const simulator::ParallelScenario d;
  auto* box = new QGroupBox(tr("Devices"));
  auto* form = new QFormLayout(box);
  tp_ = int_spin(1, 4096, static_cast<int>(d.tp), tr("Tensor parallel: every layer sharded over tp devices"));
  ep_ = int_spin(1, 4096, static_cast<int>(d.ep), tr("Expert parallel: routed experts over ep of the dp ranks"));
  dp_ = int_spin(1, 1 << 20, static_cast<int>(d.dp), tr("Data parallel replicas (world = tp x cp x dp)"));
  cp_ = int_spin(1, 4096, static_cast<int>(d.cp),
                 tr("Context parallel (training): each sequence split over cp devices, K/V gathered per layer"));
  gpus_per_node_ = int_spin(1, 1024, static_cast<int>(d.gpus_per_node),
                            tr("Devices per node: collectives inside use NVLink, larger ones the network"));
  addField(form, tr("tensor parallel"), tp_, "/scenario/parallel/tp");
  addField(form, tr("expert parallel"), ep_, "/scenario/parallel/ep");
  addField(form, tr("data parallel"), dp_, "/scenario/parallel/dp");
  addField(form, tr("context parallel"), cp_, "/scenario/parallel/cp");
  addField(form, tr("devices per node"), gpus_per_node_, "/scenario/parallel/gpus_per_node");
  return box;
}

QWidget* ScenarioEditor::phaseGroup() {
  const simulator::Scenario d;
  auto* box = new QGroupBox(tr("Phases"));
  auto* form = new QFormLayout(box);
  train_seq_ = int_spin(1, kMaxInt, static_cast<int>(d.train.seq_len), tr("Tokens per training sequence (before "
                                                                          "HD/PHD expansion)"), tr(" tokens"));
  train_micro_ = int_spin(1, 1 << 20, static_cast<int>(d.train.micro_batch), tr("Sequences per rank per micro-step"),
                          tr(" seqs"));
  train_accum_ = int_spin(1, 1 << 20, static_cast<int>(d.train.grad_accum), tr("Micro-steps per optimizer step"));
  recompute_ = choice_box({{tr("none"), "none"}, {tr("selective"), "selective"}, {tr("full"), "full"}},
                          tr("What the backward pass recomputes instead of keeping"));
  set_choice(recompute_, simulator::to_string(d.train.recompute));
  sharding_ = choice_box({{tr("none"), "none"}, {tr("optimizer (ZeRO-1)"), "optimizer"},
                          {tr("+ gradients (ZeRO-2)"), "gradients"}, {tr("+ weights (ZeRO-3)"), "weights"}},
                         tr("State sharded over the data-parallel ranks"));
  grad_accumulation_ = choice_box({{tr("in the products (fused)"), "fused"},
                                   {tr("a pass per micro-step"), "separate"},
                                   {tr("PyTorch autocast"), "autocast"}},
                                  tr("How each micro-step's weight gradients join the step's: the weight-gradient "
                                     "products add them in, a kernel adds every gradient into the buffer, or "
                                     "PyTorch's autocast (master weights cast every forward, gradients cast back "
                                     "and added into .grad)"));
  prefill_tokens_ = int_spin(1, kMaxInt, static_cast<int>(d.prefill.tokens), tr("Prompt tokens per sequence"),
                             tr(" tokens"));
  prefill_batch_ = int_spin(1, 1 << 20, static_cast<int>(d.prefill.batch), tr("Sequences prefilled together"),
                            tr(" seqs"));
  decode_batch_ = int_spin(1, 1 << 20, static_cast<int>(d.decode.batch), tr("Sequences per decode step (per replica)"),
                           tr(" seqs"));
  decode_context_ = int_spin(1, kMaxInt, static_cast<int>(d.decode.context), tr("Tokens already in each KV cache"),
                             tr(" tokens"));
  kv_context_ = int_spin(1, kMaxInt, static_cast<int>(d.kv.context), tr("Context for KV size and max batch"),
                         tr(" tokens"));
  memory_utilization_ = real_spin(0.01, 1.0, d.kv.memory_utilization, 2,
                                  tr("Share of device memory usable for weights + KV cache"));
  serving_batches_ = new QLineEdit(list_text(d.serving.batches));
  serving_batches_->setToolTip(tr("Serving matrix batches (sequences), comma separated"));
  serving_inputs_ = new QLineEdit(list_text(d.serving.input_lengths));
  serving_inputs_->setToolTip(tr("Serving matrix input lengths (tokens), comma separated"));
  serving_output_ = int_spin(1, kMaxInt, static_cast<int>(d.serving.output_tokens), tr("Tokens generated per request"),
                             tr(" tokens"));
  addField(form, tr("train sequence"), train_seq_, "/scenario/train/seq_len");
  addField(form, tr("micro-batch"), train_micro_, "/scenario/train/micro_batch");
  addField(form, tr("grad accumulation"), train_accum_, "/scenario/train/grad_accum");
  addField(form, tr("gradients added"), grad_accumulation_, "/scenario/train/grad_accumulation");
  addField(form, tr("recompute"), recompute_, "/scenario/train/recompute");
  addField(form, tr("optimizer sharding"), sharding_, "/scenario/train/optimizer_sharding");
  addField(form, tr("prompt"), prefill_tokens_, "/scenario/prefill/tokens");
  addField(form, tr("prefill batch"), prefill_batch_, "/scenario/prefill/batch");
  addField(form, tr("decode batch"), decode_batch_, "/scenario/decode/batch");
  addField(form, tr("decode context"), decode_context_, "/scenario/decode/context");
  addField(form, tr("KV context"), kv_context_, "/scenario/kv/context");
  addField(form, tr("memory usable"), memory_utilization_, "/scenario/kv/memory_utilization");
  addField(form, tr("serving batches"), serving_batches_, "/scenario/serving/batches");
  addField(form, tr("serving inputs"), serving_inputs_, "/scenario/serving/input_lengths");
  addField(form, tr("serving output"), serving_output_, "/scenario/serving/output_tokens");
  return box;
}

QWidget* ScenarioEditor::attentionGroup() {
  const simulator::AttentionScenario d;
  auto* box = new QGroupBox(tr("Attention kernel"));
  auto* form = new QFormLayout(box);
  layout_ = choice_box({{tr("auto (least attention work)"), "auto"}, {tr("interleaved"), "interleaved"},
                        {tr("stream-major"), "stream_major"}, {tr("PHD [origins | hidden]"), "phd_split"}},
                       tr("Physical order of the positions the kernel sees"));
  tile_q_ = int_spin(1, 1 << 16, static_cast<int>(d.tile_q), tr("Query rows per kernel tile (Bq)"), tr(" rows"));
  tile_k_ = int_spin(1, 1 << 16, static_cast<int>(d.tile_k), tr("Keys per kernel tile (Bk)"), tr(" keys"));
  count_ = choice_box({{tr("executed tiles"), "executed"}, {tr("exact pairs"), "exact"}},
                      tr("Which attention count times the op; both are reported"));
  decode_kernel_ = choice_box({{tr("auto (grouped where it applies)"), "auto"}, {tr("one row per head"), "one_row"}},
                              tr("Decode attention's kernel on a fitted GPU profile: one row per head runs a block per "
                                 "query head even under GQA (an engine without a grouped-query decode kernel)"));
  addField(form, tr("layout"), layout_, "/scenario/attention/layout");
  addField(form, tr("tile rows"), tile_q_, "/scenario/attention/tile_q");
  addField(form, tr("tile keys"), tile_k_, "/scenario/attention/tile_k");
  addField(form, tr("timed by"), count_, "/scenario/attention/count");
  addField(form, tr("decode kernel"), decode_kernel_, "/scenario/attention/decode_kernel");
  return box;
}

QWidget* ScenarioEditor::ffnGroup() {
  auto* box = new QGroupBox(tr("FFN kernels"));
  auto* form = new QFormLayout(box);
  gate_up_ = choice_box({{tr("one product (fused)"), "fused"}, {tr("two products"), "separate"}},
                        tr("How the engine launches a gated FFN's gate and up projections on a fitted GPU "
                           "profile: one product of the joined weights, or one per weight"));
  addField(form, tr("gate and up"), gate_up_, "/scenario/ffn/gate_up");
  return box;
}

nlohmann::json ScenarioEditor::scenarioJson() const {
  nlohmann::json shown = {{"train",
           {{"seq_len", train_seq_->value()},
            {"micro_batch", train_micro_->value()},
            {"grad_accum", train_accum_->value()},
            {"recompute", choice_value(recompute_).toStdString()},
            {"optimizer_sharding", choice_value(sharding_).toStdString()},
            {"grad_accumulation", choice_value(grad_accumulation_).toStdString()}}},
          {"prefill", {{"tokens", prefill_tokens_->value()}, {"batch", prefill_batch_->value()}}},
          {"decode", {{"batch", decode_batch_->value()}, {"context", decode_context_->value()}}},
          {"serving",
           {{"batches", list_json(serving_batches_->text())},
            {"input_lengths", list_json(serving_inputs_->text())},
            {"output_tokens", serving_output_->value()}}},
          {"kv", {{"context", kv_context_->value()}, {"memory_utilization", memory_utilization_->value()}}},
          {"parallel",
           {{"tp", tp_->value()},
            {"ep", ep_->value()},
            {"dp", dp_->value()},
            {"cp", cp_->value()},
            {"gpus_per_node", gpus_per_node_->value()}}},
          {"attention",
           {{"layout", choice_value(layout_).toStdString()},
            {"tile_q", tile_q_->value()},
            {"tile_k", tile_k_->value()},
            {"count", choice_value(count_).toStdString()},
            {"decode_kernel", choice_value(decode_kernel_).toStdString()}}},
          {"ffn", {{"gate_up", choice_value(gate_up_).toStdString()}}}};
  if (!restored_.is_object() || shown_at_restore_.is_null()) return shown;
  // A field keeps its restored value until it is edited: a widget may show it rounded
  // (two decimals) and the session must come back exactly as saved.
  nlohmann::json j = restored_;
  for (const auto& [part, fields] : shown.items())
    for (const auto& [key, value] : fields.items())
      if (value != shown_at_restore_[part][key]) j[part][key] = value;
  // Restored settings that apply only past one tensor- or context-parallel rank (the
  // scenario refuses them there) leave with the ranks they applied to.
  nlohmann::json& parallel = j["parallel"];
  if (parallel.value("tp", 1) == 1) {
    parallel.erase("sequence_parallel");
    parallel.erase("tp_all_reduce");
  }
  if (parallel.value("cp", 1) == 1) parallel.erase("cp_comm");
  return j;
}

void ScenarioEditor::rebuild() {
  errors_.clear();
  try {
    const simulator::Scenario s = simulator::parse_scenario(scenarioJson(), "/scenario");
    if (session_->ready()) simulator::check_scenario(session_->config(), session_->hardware(), s, "/scenario");
    session_->setScenario(s);
    session_->setInputError(Session::Input::scenario, {});
  } catch (const model::ConfigError& e) {
    errors_.show(e);
    session_->setInputError(Session::Input::scenario, QString::fromStdString(e.what()), tr("scenario"));
  }
}

void ScenarioEditor::showError(const model::ConfigError& e) { errors_.show(e); }

bool ScenarioEditor::loadHardwareFile(const QString& path) {
  try {
    const simulator::HardwareProfile hw = simulator::parse_hardware_profile(model::read_json_file(path.toStdString()));
    const QString canonical = QFileInfo(path).canonicalFilePath();
    for (int i = 0; i < hardware_box_->count(); ++i)
      if (QFileInfo(hardware_box_->itemData(i).toString()).canonicalFilePath() == canonical)
        hardware_box_->setCurrentIndex(i);
    showHardware(hw);
    return true;
  } catch (const model::ConfigError& e) {
    hardware_error_->setText(QString::fromStdString(e.what()));
    hardware_error_->show();
    return false;
  }
}

bool ScenarioEditor::selectHardwarePreset(const QString& needle) {
  const int i = gui_core::find_entry(session_->catalog().hardware, needle.toStdString());
  return i >= 0 &&
         loadHardwareFile(QString::fromStdString(session_->catalog().hardware[static_cast<std::size_t>(i)].path));
}

void ScenarioEditor::openHardwareDialog() {
  const QString start = QString::fromStdString((session_->catalog().root / "hardware").string());
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open hardware profile"), start, tr("Hardware JSON (*.json);;All files (*)"));
  if (!path.isEmpty()) loadHardwareFile(path);
}

void ScenarioEditor::showHardware(const simulator::HardwareProfile& hw) {
  hardware_error_->hide();
  hardware_summary_->setText(hardware_summary(hw));
  QString tip;
  for (const auto& [key, text] : hw.sources) tip += QString("%1: %2\n").arg(QString::fromStdString(key), QString::fromStdString(text));
  hardware_summary_->setToolTip(tip.trimmed());
  session_->setHardware(hw, QString::fromStdString(hw.name));
}

QString ScenarioEditor::hardwarePreset() const {
  return hardware_box_->currentIndex() >= 0 ? hardware_box_->currentData().toString() : QString();
}

void ScenarioEditor::restore(const simulator::HardwareProfile* hw, const simulator::Scenario& scenario,
                             const QString& hardwarePreset) {
  const QString canonical = QFileInfo(hardwarePreset).canonicalFilePath();
  for (int i = 0; i < hardware_box_->count(); ++i)
    if (!canonical.isEmpty() && QFileInfo(hardware_box_->itemData(i).toString()).canonicalFilePath() == canonical)
      hardware_box_->setCurrentIndex(i);
  if (hw) showHardware(*hw);
  showScenario(scenario);
  rebuild();
}

void ScenarioEditor::showScenario(const simulator::Scenario& s) {
  restored_ = simulator::to_json(s);
  // One rebuild after all fields are set, not one per field.
  std::vector<std::unique_ptr<QSignalBlocker>> blocks;
  for (QWidget* w : findChildren<QWidget*>()) blocks.push_back(std::make_unique<QSignalBlocker>(w));
  auto set = [](QSpinBox* box, std::int64_t v) { box->setValue(static_cast<int>(v)); };
  set(tp_, s.parallel.tp);
  set(ep_, s.parallel.ep);
  set(dp_, s.parallel.dp);
  set(cp_, s.parallel.cp);
  set(gpus_per_node_, s.parallel.gpus_per_node);
  set(train_seq_, s.train.seq_len);
  set(train_micro_, s.train.micro_batch);
  set(train_accum_, s.train.grad_accum);
  const nlohmann::json& train = restored_["train"];
  set_choice(recompute_, QString::fromStdString(train["recompute"].get<std::string>()));
  set_choice(sharding_, QString::fromStdString(train["optimizer_sharding"].get<std::string>()));
  set_choice(grad_accumulation_, QString::fromStdString(train["grad_accumulation"].get<std::string>()));
  set(prefill_tokens_, s.prefill.tokens);
  set(prefill_batch_, s.prefill.batch);
  set(decode_batch_, s.decode.batch);
  set(decode_context_, s.decode.context);
  set(kv_context_, s.kv.context);
  memory_utilization_->setValue(s.kv.memory_utilization);
  serving_batches_->setText(list_text(s.serving.batches));
  serving_inputs_->setText(list_text(s.serving.input_lengths));
  set(serving_output_, s.serving.output_tokens);
  const nlohmann::json& attention = restored_["attention"];
  set_choice(layout_, QString::fromStdString(attention["layout"].get<std::string>()));
  set(tile_q_, s.attention.tile_q);
  set(tile_k_, s.attention.tile_k);
  set_choice(count_, QString::fromStdString(attention["count"].get<std::string>()));
  set_choice(decode_kernel_, QString::fromStdString(attention["decode_kernel"].get<std::string>()));
  set_choice(gate_up_, QString::fromStdString(restored_["ffn"]["gate_up"].get<std::string>()));
  shown_at_restore_ = nlohmann::json();
  shown_at_restore_ = scenarioJson();  // restored_ is not consulted while this is null
}

}  // namespace hdlab::gui
