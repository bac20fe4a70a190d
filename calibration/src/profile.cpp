// Assembling a calibrated profile (profile.hpp).
#include "hdlab/calibration/profile.hpp"

#include <cmath>
#include <sstream>
#include <tuple>

#include "hdlab/simulator/hardware.hpp"

namespace hdlab::calibration {

void parse_cpuinfo(const std::string& text, MachineFacts& out) {
  std::istringstream in(text);
  std::string line;
  int processors = 0;
  std::string flags;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    std::string value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.erase(0, 1);
    if (key == "processor") ++processors;
    if (key == "model name" && out.cpu_model.empty()) out.cpu_model = value;
    if (key == "flags" && flags.empty()) flags = " " + value + " ";
  }
  out.cpu_cores = processors;
  out.cpu_flags.clear();
  for (const char* f : {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "amx_tile"})
    if (flags.find(std::string(" ") + f + " ") != std::string::npos) {
      if (!out.cpu_flags.empty()) out.cpu_flags += ' ';
      out.cpu_flags += f;
    }
}

double parse_cache_size(const std::string& text) {
  std::istringstream in(text);
  double v = 0;
  std::string unit;
  if (!(in >> v)) return 0;
  in >> unit;
  if (unit.empty() && !text.empty()) {
    const char last = text.find_last_not_of(" \n") != std::string::npos ? text[text.find_last_not_of(" \n")] : ' ';
    if (last == 'K' || last == 'M' || last == 'G') unit = std::string(1, last);
  }
  if (!unit.empty() && (unit[0] == 'K' || unit[0] == 'k')) return v * 1024;
  if (!unit.empty() && unit[0] == 'M') return v * 1024 * 1024;
  if (!unit.empty() && unit[0] == 'G') return v * 1024 * 1024 * 1024;
  return v;
}

nlohmann::json to_json(const MachineFacts& m) {
  nlohmann::json j = {{"cpu_model", m.cpu_model}, {"cpu_cores", m.cpu_cores},       {"cpu_flags", m.cpu_flags},
                      {"memory_bytes", m.memory_bytes}, {"l2_cache_bytes", m.l2_cache_bytes},
                      {"l3_cache_bytes", m.l3_cache_bytes}, {"os", m.os},      {"host", m.host}};
  if (!m.gpu.empty()) j["gpu"] = m.gpu;
  return j;
}

MachineFacts machine_from_json(const nlohmann::json& j) {
  MachineFacts m;
  if (!j.is_object()) return m;
  m.cpu_model = j.value("cpu_model", "");
  m.cpu_cores = j.value("cpu_cores", 0);
  m.cpu_flags = j.value("cpu_flags", "");
  m.memory_bytes = j.value("memory_bytes", 0.0);
  m.l2_cache_bytes = j.value("l2_cache_bytes", 0.0);
  m.l3_cache_bytes = j.value("l3_cache_bytes", 0.0);
  m.gpu = j.value("gpu", "");
  m.os = j.value("os", "");
  m.host = j.value("host", "");
  return m;
}

nlohmann::json to_json(const CalibrationRun& r) {
  return {{"backend", r.backend},       {"device", r.device},         {"threads", r.threads},
          {"plan", r.plan},             {"rounds", r.rounds},         {"measured_utc", r.measured_utc}, {"fitted_utc", r.fitted_utc},
          {"elapsed_s", r.elapsed_s},   {"load_average_1min", {{"start", r.load_start}, {"end", r.load_end}}},
          {"hdlab_version", r.version}};
}

simulator::HardwareProfile make_profile(const std::string& name, const FitResult& fit, const std::vector<Sample>& samples,
                                        const MachineFacts& machine, const CalibrationRun& run) {
  simulator::HardwareProfile h;
  h.name = name;
  h.kind = run.backend == "cuda" ? simulator::DeviceKind::gpu : simulator::DeviceKind::cpu;
  h.efficiency.fill(1.0);
  apply_fit(fit, h);
  h.memory_gb = machine.memory_bytes * 1e-9;
  if (machine.l2_cache_bytes > 0) h.l2_cache_mb = machine.l2_cache_bytes * 1e-6;
  const std::string by = "measured by hdlab calibrate (" + run.plan + " plan, " + run.measured_utc + ", " + run.device + ")";
  const bool gpu = h.kind == simulator::DeviceKind::gpu;
  h.sources = {
      {"peak_fp32_tflop_per_s", "the best fp32 GEMM rate " + by},
      {"memory_bandwidth_gb_per_s", "stream bandwidth: the residual add c = a + b on every thread over >= 32 MiB, " + by},
      {"kernel_launch_overhead_us", "median time of the cheapest smallest backend op, " + by},
      {"efficiency_curves", "fitted to the microbenchmark samples in calibration/samples (calibration/residuals shows the fit)"},
      {"memory_gb", gpu ? "device memory" : "host memory (MemTotal)"},
      {"l2_cache_mb", gpu ? "device L2, from the driver" : "per core, from the OS (sysfs)"},
      {"measured.gemm_peak_gflop_per_s", "the best fp32 GEMM rate " + by},
      {"measured.stream_add_gb_per_s", "the residual add's rate over the largest sizes, " + by},
      {"measured.launch_us", "median time of the cheapest smallest backend op, " + by},
  };
  // The scalar efficiencies stand in where an op has no curve: each class's best fitted point.
  for (const char* cls : {"gemm", "attention", "vector", "memory"})
    h.sources["efficiency." + std::string(cls)] =
        std::string("the best point of the fitted ") + cls + " curve (efficiency_curves), " + by;
  h.assumptions = {
      {"peak_bf16_tflop_per_s", "the executor's CPU backend computes every dtype in fp32 (bf16 models are refused): the fp32 rate"},
      {"peak_fp16_tflop_per_s", "as bf16: the fp32 rate"},
      {"peak_fp8_tflop_per_s", "not measured: the executor runs no fp8 (null)"},
      {"efficiency.communication", "not measured: a single device has no links (1, unused)"},
  };
  for (const char* link : {"nvlink_bandwidth_gb_per_s", "nvlink_latency_us", "network_bandwidth_gb_per_s",
                           "network_latency_us", "pcie_bandwidth_gb_per_s"})
    h.assumptions[link] = "not measured: calibration runs on a single device (null); add the link's datasheet figure "
                          "to model several devices";
  if (gpu) {
    h.assumptions["peak_bf16_tflop_per_s"] = "the fp32 GEMM rate (no bf16 product was measured): a lower bound for bf16";
    h.assumptions["peak_fp16_tflop_per_s"] = "the fp32 GEMM rate (no fp16 product was measured): a lower bound for fp16";
  }
  h.measured = {{"gemm_peak_gflop_per_s", fit.peak_flop_per_s * 1e-9},
                {"stream_add_gb_per_s", fit.bandwidth_bytes_per_s * 1e-9},
                {"launch_us", fit.launch_s * 1e6}};
  // Measured low-precision peaks replace the assumptions above.
  for (auto [field, precision, rate] : {std::tuple{"peak_bf16_tflop_per_s", "bf16", fit.peak_bf16_flop_per_s},
                                        std::tuple{"peak_fp16_tflop_per_s", "fp16", fit.peak_fp16_flop_per_s}}) {
    if (rate <= 0) continue;
    h.assumptions.erase(field);
    const std::string what = std::string("the best ") + precision +
                             " matrix-product rate (f32 accumulation; CUDA: cublasGemmEx) " + by;
    h.sources[field] = what;
    h.sources[std::string("measured.gemm_") + precision + "_peak_gflop_per_s"] = what;
    h.measured[std::string("gemm_") + precision + "_peak_gflop_per_s"] = rate * 1e-9;
  }
  nlohmann::json list = nlohmann::json::array();
  for (const Sample& s : samples) list.push_back(to_json(s));
  h.calibration = {{"tool", "hdlab calibrate"},
                   {"machine", to_json(machine)},
                   {"run", to_json(run)},
                   {"tiles", {{"tile_q", executor::kTileQ}, {"tile_k", executor::kTileK}}},
                   {"residuals", residuals_json(fit)},
                   {"samples", list}};
  return h;
}

}  // namespace hdlab::calibration
