#pragma once
// What the user is looking at: the valid config (backbone + design), the hardware, the
// scenario, the selected layer and the pipeline stages. Editors parse and validate
// their input and hand only valid values here; every view listens to the signals.
#include <cstdint>
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

  int selectedLayer() const { return selected_layer_; }
  // Stage per effective layer from the last pipeline run; empty when none.
  const std::vector<std::int64_t>& layerStages() const { return layer_stages_; }

 public slots:
  void setConfig(const hdlab::model::Config& config, const QString& backboneLabel);
  void setHardware(const hdlab::simulator::HardwareProfile& hw, const QString& label);
  void setScenario(const hdlab::simulator::Scenario& scenario);
  void setSelectedLayer(int layer);
  void setLayerStages(const std::vector<std::int64_t>& stages);

 signals:
  void configChanged();
  void hardwareChanged();
  void scenarioChanged();
  void layerSelected(int layer);
  void stagesChanged();

 private:
  gui_core::Catalog catalog_;
  std::optional<model::Config> config_;
  std::optional<simulator::HardwareProfile> hardware_;
  simulator::Scenario scenario_;
  QString backbone_label_, hardware_label_;
  int selected_layer_ = 0;
  std::vector<std::int64_t> layer_stages_;
};

}  // namespace hdlab::gui
