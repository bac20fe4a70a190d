// hdlab calibrate --from-kerneldb DIR --device NAME [--datasheet PROFILE] [--threads N] -o PROFILE
// hdlab calibrate --derive-from FITTED --datasheet PROFILE -o PROFILE
// GPU profiles fitted to measured kernels (calibration/kernel_fit.hpp): the datasheet
// profile of the device (default: profiles/hardware/datasheet/<device>.json) with kernel
// models fitted on the kerneldb tables' fixed 80%, scored on the other 20%. --derive-from
// scales a fitted profile's models to a sibling's datasheet (H200, H20 from H100).
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "calibrate_kernels.hpp"
#include "hdlab/calibration/kernel_fit.hpp"
#include "hdlab/model/files.hpp"

namespace hdlab::cli {

namespace {

using namespace hdlab::calibration;

// The datasheet profile bundled for each kerneldb device folder.
std::string datasheet_for(const std::string& device) {
  if (device == "h100_sxm") return "h100-sxm";
  if (device == "a100_sxm") return "a100-80gb-sxm";
  if (device == "b200_sxm") return "b200";
  throw model::ConfigError("--datasheet", "no bundled datasheet profile for kerneldb device \"" + device +
                                              "\" (h100_sxm, a100_sxm, b200_sxm): give one");
}

simulator::HardwareProfile load_datasheet(const std::string& given, const std::string& device) {
  if (!given.empty()) return load_hardware(given, "--datasheet");
  return load_hardware(profiles_dir() + "/hardware/datasheet/" + datasheet_for(device) + ".json", "--datasheet");
}

void write_profile(const simulator::HardwareProfile& h, const std::string& path) {
  const nlohmann::json j = simulator::to_json(h);
  if (!(simulator::parse_hardware_profile(j) == h))  // what is written reads back as it is
    throw std::logic_error("calibrate: the profile does not round-trip through its JSON");
  model::write_file_atomic(path, j.dump(2) + "\n");
}

void print_errors(const nlohmann::json& errors) {
  std::cout << fmt::format("  {:<36} {:<14} {:>6} {:>9} {:>9} {:>9} {:>9}\n", "class", "precision", "rows", "median",
                           "p90", "max", "signed");
  for (const auto& e : errors)
    std::cout << fmt::format("  {:<36} {:<14} {:>6} {:>8.1f}% {:>8.1f}% {:>8.1f}% {:>+8.1f}%\n",
                             e["class"].get<std::string>(), e["precision"].get<std::string>(),
                             e["held_out_rows"].get<std::int64_t>(), 100 * e["median_abs_error"].get<double>(),
                             100 * e["p90_abs_error"].get<double>(), 100 * e["max_abs_error"].get<double>(),
                             100 * e["median_signed_error"].get<double>());
}

}  // namespace

int calibrate_from_kerneldb(const KernelCalibrateCli& o) {
  check_output_file("-o", o.output);
  const simulator::HardwareProfile datasheet = load_datasheet(o.datasheet, o.device);
  const DeviceFacts facts = [&] {
    try {
      return device_facts(datasheet);
    } catch (const model::ConfigError& e) {
      throw model::ConfigError("--datasheet", e.what());
    }
  }();
  const auto t0 = std::chrono::steady_clock::now();
  const KernelDb db = read_kerneldb(o.kerneldb, o.device);
  KernelFitOptions fit;
  fit.threads = o.threads;
  const simulator::KernelModels models = fit_kernel_models(db, facts, fit);
  const simulator::HardwareProfile h = fitted_profile(datasheet, db, models);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_profile(h, o.output);
  std::cout << fmt::format("fitted kernel models of {} on {}/{} in {:.1f} s; held-out error (predicted / measured - 1):\n",
                           h.name, o.kerneldb, o.device, seconds);
  print_errors(h.kernel_models->fit["held_out_errors"]);
  std::cout << "profile written to " << o.output << "\n";
  return exit_ok;
}

int derive_profile(const KernelCalibrateCli& o) {
  check_output_file("-o", o.output);
  if (o.datasheet.empty()) throw model::ConfigError("--datasheet", "give the datasheet profile of the device to derive");
  const simulator::HardwareProfile fitted = load_hardware(o.derive_from, "--derive-from");
  if (!fitted.kernel_models)
    throw model::ConfigError("--derive-from", fitted.name + " has no fitted kernel_models to derive from");
  simulator::HardwareProfile target = load_hardware(o.datasheet, "--datasheet");
  target.kernel_models = derive_kernel_models(*fitted.kernel_models, fitted, target);
  target.sources["kernel_models"] = "derived by hdlab calibrate --derive-from " + o.derive_from +
                                    ": no measured kernels of this device; " +
                                    target.kernel_models->fit["method"].get<std::string>();
  // the fitted profile's assumptions about its models hold for the derived ones too
  for (const auto& [key, note] : fitted.assumptions)
    if (key.rfind("kernel_models.", 0) == 0) target.assumptions[key] = note;
  write_profile(target, o.output);
  std::cout << "derived kernel models of " << target.name << " from " << fitted.name << " (datasheet ratios)\n"
            << "profile written to " << o.output << "\n";
  return exit_ok;
}

}  // namespace hdlab::cli
