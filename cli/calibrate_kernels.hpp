#pragma once
// `hdlab calibrate`'s GPU-profile paths (cmd_calibrate_kernels.cpp): fitted to kerneldb's
// measured kernels, or derived from a fitted sibling.
#include <string>

#include "verbs.hpp"

namespace hdlab::cli {

struct KernelCalibrateCli {
  std::string kerneldb, device, datasheet, derive_from, output;
  int threads = 0;  // fits at once (0: one per core)
};

int calibrate_from_kerneldb(const KernelCalibrateCli& o);
int derive_profile(const KernelCalibrateCli& o);

}  // namespace hdlab::cli
