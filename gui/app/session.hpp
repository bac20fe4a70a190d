#pragma once
// What the user is looking at: the valid config (backbone + design), the hardware, the
// scenario, the selected layer and the pipeline stages. Editors parse and validate
// their input and hand only valid values here; every view listens to the signals.
// While an editor's input does not parse, the views keep the last valid value and the
// editor records why here, so that the views can say they are stale.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>

#include "hdlab/gui_core/catalog.hpp"
#include "hdlab/model/design.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::gui {

class Session : public QObject {
  Q_OBJECT
 public:
  explicit Session(gui_core::Catalog catalog, QObject* parent = nullptr);

  const gui_core::Catalog& catalog() const { return catalog_; }
  bool hasConfig() const { return config_.has_value(); }
  bool hasHardware() const { return hardware_.has_value(); }
  // Only when has...(): callers check first.
  const model::Config& config() const { return *config_; }
  const simulator::HardwareProfile& hardware() const { return *hardware_; }
  const simulator::Scenario& scenario() const { return scenario_; }
  QString backboneLabel() const { return backbone_label_; }
  QString hardwareLabel() const { return hardware_label_; }
  // Ready to evaluate: a config and a hardware profile.
  bool ready() const { return hasConfig() && hasHardware(); }

  // Inputs whose editor holds something that does not parse.
  enum class Input { design, scenario, pipeline };
  QString inputError(Input input) const { return stale_[static_cast<std::size_t>(input)].error; }
  // One line per input in `inputs` that is not valid, naming what the views still show
  // and the error: "Stale: shows the last valid design (vwn m=2 ...). /design/vwn/m: ...".
  // Empty when all are valid.
  QString staleNote(std::initializer_list<Input> inputs) const;

  int selectedLayer() const { return selected_layer_; }
  // Stage per effective layer from the last pipeline run; empty when none.
  const std::vector<std::int64_t>& layerStages() const { return layer_stages_; }

 public slots:
  void setConfig(const hdlab::model::Config& config, const QString& backboneLabel);
  void setHardware(const hdlab::simulator::HardwareProfile& hw, const QString& label);
  void setScenario(const hdlab::simulator::Scenario& scenario);
  void setSelectedLayer(int layer);
  void setLayerStages(const std::vector<std::int64_t>& stages);
  // `error` empty: the input is valid again. `shown` names the last valid value the
  // views still show ("design (hd n=4 ...)"); empty when they show none.
  void setInputError(hdlab::gui::Session::Input input, const QString& error, const QString& shown = {});

 signals:
  void configChanged();
  void hardwareChanged();
  void scenarioChanged();
  void layerSelected(int layer);
  void stagesChanged();
  void inputErrorsChanged();

 private:
  gui_core::Catalog catalog_;
  std::optional<model::Config> config_;
  std::optional<simulator::HardwareProfile> hardware_;
  simulator::Scenario scenario_;
  QString backbone_label_, hardware_label_;
  int selected_layer_ = 0;
  std::vector<std::int64_t> layer_stages_;
  struct Stale {
    QString error, shown;
  };
  std::array<Stale, 3> stale_;  // by Input
};

}  // namespace hdlab::gui
