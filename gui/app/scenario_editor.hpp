#pragma once
// Hardware and scenario: which device, how many (tp, ep, dp), and the shapes each phase
// is costed at (training sequence, prompt, decode batch and context, serving matrix,
// attention tiles, how gate and up are launched and gradients accumulated). Parsed by
// simulator::parse_scenario and checked against the design with check_scenario; errors
// appear next to the field their pointer names.
#include <QWidget>

#include "form_helpers.hpp"
#include "hdlab/simulator/evaluate.hpp"

class QComboBox;
class QFormLayout;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace hdlab::gui {

class Session;

class ScenarioEditor : public QWidget {
  Q_OBJECT
 public:
  explicit ScenarioEditor(Session* session, QWidget* parent = nullptr);

  bool loadHardwareFile(const QString& path);
  bool selectHardwarePreset(const QString& needle);
  QString errorAt(const std::string& pointer) const { return errors_.textAt(pointer); }
  QString generalError() const { return errors_.generalText(); }
  QSpinBox* tensorParallel() const { return tp_; }

  // Sessions (session_files.hpp): the profile file the hardware picker shows ("" when
  // none), and every field set from a valid hardware profile (nullptr: keep the one
  // loaded) and scenario. Scenario fields without a widget (precision, framework
  // overheads, ...) are kept as restored: edits change only the fields shown.
  QString hardwarePreset() const;
  void restore(const simulator::HardwareProfile* hw, const simulator::Scenario& scenario, const QString& hardwarePreset);

 public slots:
  // Shows a ConfigError from an evaluation (pointers under /scenario or /hardware).
  void showError(const hdlab::model::ConfigError& e);
  void openHardwareDialog();

 signals:
  void statusMessage(const QString& text);

 private:
  QWidget* hardwareGroup();
  QWidget* parallelGroup();
  QWidget* phaseGroup();
  QWidget* attentionGroup();
  QWidget* ffnGroup();
  void addField(QFormLayout* form, const QString& label, QWidget* field, const std::string& pointer);
  nlohmann::json scenarioJson() const;
  void rebuild();
  void showHardware(const simulator::HardwareProfile& hw);
  void showScenario(const simulator::Scenario& s);

  Session* session_;
  QLabel* general_error_;
  FieldErrors errors_;
  QComboBox* hardware_box_;
  QLabel* hardware_summary_;
  QLabel* hardware_error_;
  QSpinBox *tp_, *ep_, *dp_, *cp_, *gpus_per_node_;
  QSpinBox *decode_batch_, *decode_context_, *prefill_tokens_, *prefill_batch_;
  QSpinBox *train_seq_, *train_micro_, *train_accum_;
  QComboBox *recompute_, *sharding_, *grad_accumulation_;
  QSpinBox* kv_context_;
  QDoubleSpinBox* memory_utilization_;
  QLineEdit *serving_batches_, *serving_inputs_;
  QSpinBox* serving_output_;
  QComboBox *layout_, *count_, *decode_kernel_;
  QComboBox* gate_up_;  // ffn.gate_up
  QSpinBox *tile_q_, *tile_k_;
  nlohmann::json restored_;          // the last restored scenario's object; edited fields are laid over it
  nlohmann::json shown_at_restore_;  // what the widgets showed right after that restore
};

}  // namespace hdlab::gui
