#include "session.hpp"

#include <algorithm>

#include <QStringList>

namespace hdlab::gui {

Session::Session(gui_core::Catalog catalog, QObject* parent) : QObject(parent), catalog_(std::move(catalog)) {}

void Session::setConfig(const model::Config& config, const QString& backboneLabel) {
  if (config_ && *config_ == config && backbone_label_ == backboneLabel) return;
  const bool layers_changed = !config_ || config_->effective.num_layers != config.effective.num_layers;
  config_ = config;
  backbone_label_ = backboneLabel;
  // Stages were computed for the old layers; a new pipeline run brings new ones.
  if (layers_changed && !layer_stages_.empty()) {
    layer_stages_.clear();
    emit stagesChanged();
  }
  const int last = static_cast<int>(config.effective.num_layers) - 1;
  if (selected_layer_ > last) {
    selected_layer_ = std::max(0, last);
    emit layerSelected(selected_layer_);
  }
  emit configChanged();
}

void Session::setHardware(const simulator::HardwareProfile& hw, const QString& label) {
  if (hardware_ && *hardware_ == hw && hardware_label_ == label) return;
  hardware_ = hw;
  hardware_label_ = label;
  emit hardwareChanged();
}

void Session::setScenario(const simulator::Scenario& scenario) {
  if (scenario_ == scenario) return;
  scenario_ = scenario;
  emit scenarioChanged();
}

void Session::setSelectedLayer(int layer) {
  const int last = config_ ? static_cast<int>(config_->effective.num_layers) - 1 : 0;
  layer = std::clamp(layer, 0, std::max(0, last));
  if (layer == selected_layer_) return;
  selected_layer_ = layer;
  emit layerSelected(layer);
}

void Session::setInputError(Input input, const QString& error, const QString& shown) {
  Stale& s = stale_[static_cast<std::size_t>(input)];
  if (s.error == error && s.shown == shown) return;
  s = {error, error.isEmpty() ? QString() : shown};
  emit inputErrorsChanged();
}

QString Session::staleNote(std::initializer_list<Input> inputs) const {
  QStringList lines;
  for (Input input : inputs) {
    const Stale& s = stale_[static_cast<std::size_t>(input)];
    if (s.error.isEmpty()) continue;
    lines << (s.shown.isEmpty() ? tr("Not valid: %1").arg(s.error)
                                : tr("Stale: shows the last valid %1. Not valid now: %2").arg(s.shown, s.error));
  }
  return lines.join('\n');
}

void Session::setLayerStages(const std::vector<std::int64_t>& stages) {
  if (stages == layer_stages_) return;
  layer_stages_ = stages;
  emit stagesChanged();
}

}  // namespace hdlab::gui
