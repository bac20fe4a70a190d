#pragma once
// A calibrated hardware profile: the fit's rates and curves plus what was measured, on
// what machine, when, and how well the fit explains its own samples. The facts about the
// machine come in as plain data (the CLI reads them from the system); nothing here reads
// files or the clock.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/calibration/fit.hpp"
#include "hdlab/calibration/microbench.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::calibration {

struct MachineFacts {
  std::string cpu_model;        // "Intel(R) Xeon(R) Processor"
  int cpu_cores = 0;            // logical CPUs the OS shows
  std::string cpu_flags;        // the vector extensions that matter here ("avx2 avx512f ...")
  double memory_bytes = 0;      // host (cpu) or device (cuda) memory
  double l2_cache_bytes = 0;    // per core (cpu), 0 when unknown
  double l3_cache_bytes = 0;    // shared last level, 0 when unknown
  std::string gpu;              // cuda: the device's name; empty on cpu
  std::string os;               // kernel name and release
  std::string host;
};

// The fields of /proc/cpuinfo a profile records (model name, logical CPUs, the vector
// flags among sse4_2 avx avx2 fma avx512f avx512_bf16 amx_tile).
void parse_cpuinfo(const std::string& text, MachineFacts& out);
// "4096K" / "32M" (sysfs cache sizes) -> bytes; 0 when unreadable.
double parse_cache_size(const std::string& text);

struct CalibrationRun {
  std::string backend;          // "cpu" | "cuda"
  std::string device;           // Backend::description()
  int threads = 0;              // cpu threads the backend used
  std::string plan;             // "full" | "quick"
  int rounds = 1;               // times the plan was measured (each shape keeps its fastest)
  std::string measured_utc;     // ISO 8601, when the samples were measured
  std::string fitted_utc;       // when they were fitted (a refit differs)
  double elapsed_s = 0;         // measuring time
  double load_start = 0, load_end = 0;  // 1-minute load average around the measurement
  std::string version;          // hdlab version
};

// The profile of a calibration: `name`, kind from the backend, rates and curves from the
// fit, host memory, caches, no links; sources, assumptions and the "calibration" object
// (machine, run, fit residuals, every sample). Passes parse_hardware_profile.
simulator::HardwareProfile make_profile(const std::string& name, const FitResult& fit, const std::vector<Sample>& samples,
                                        const MachineFacts& machine, const CalibrationRun& run);

nlohmann::json to_json(const MachineFacts& m);
MachineFacts machine_from_json(const nlohmann::json& j);
nlohmann::json to_json(const CalibrationRun& r);

}  // namespace hdlab::calibration
