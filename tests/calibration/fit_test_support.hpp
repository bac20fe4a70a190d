// Paths and bundled profiles shared by the kernel-fit tests (test_kernel_fit.cpp,
// test_kernel_fit_bundled.cpp, test_kernel_derive.cpp).
#pragma once

#include <string>

#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace fit_test {

// A path in the source tree.
inline std::string source(const std::string& relative) { return std::string(HDLAB_SOURCE_DIR) + "/" + relative; }

// A bundled hardware profile by its file under profiles/hardware, without ".json"
// ("h100-sxm", "datasheet/h100-sxm").
inline hdlab::simulator::HardwareProfile profile(const std::string& relative) {
  return hdlab::simulator::parse_hardware_profile(
      hdlab::model::read_json_file(source("profiles/hardware/" + relative + ".json")));
}

}  // namespace fit_test
