#pragma once
// Shared by the GUI tests: one offscreen QApplication for the whole executable, and
// configs built from the bundled profiles.
#include <filesystem>
#include <string>

#include <QApplication>

#include "hdlab/charts/export.hpp"
#include "hdlab/gui_core/catalog.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::test {

// Created on first use and kept to the end of the process: destroying a QApplication
// during static destruction races Qt's own teardown.
inline void ensure_app() {
  static auto* app = new charts::OffscreenApplication();
  (void)app;
}

inline std::filesystem::path profiles() { return std::filesystem::path(HDLAB_SOURCE_DIR) / "profiles"; }

inline model::Config profile_config(const std::string& model_file) {
  return model::parse_config(model::read_json_file((profiles() / "models" / model_file).string()));
}

inline model::Config with_design(const model::Config& c, const std::string& design_json) {
  return model::make_config(c.base, model::parse_design(model::Json::parse(design_json), c.base));
}

inline simulator::HardwareProfile h100() {
  return simulator::parse_hardware_profile(model::read_json_file((profiles() / "hardware/h100-sxm.json").string()));
}

inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("hdlab_test_gui_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace hdlab::test
