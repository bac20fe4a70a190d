#pragma once
// A hardware profile: what one device can do (peak rates, memory, links) and how close
// real kernels get to it (efficiencies). Data, not code: profiles live in
// profiles/hardware/*.json and are parsed here at the edge into a plain struct.
//
// JSON schema (units in the key names; GB = 1e9 bytes, TFLOP = 1e12 FLOPs, decimal):
//   {"name": "NVIDIA H100 SXM5 80GB", "kind": "gpu" | "cpu",
//    "peak_bf16_tflop_per_s": 989, "peak_fp16_tflop_per_s": 989,
//    "peak_fp8_tflop_per_s": 1979 | null,       // null: no fp8 matrix rate
//    "peak_fp32_tflop_per_s": 67,                // non-matrix (vector) fp32 rate
//    "memory_gb": 80, "memory_bandwidth_gb_per_s": 3350, "l2_cache_mb": 50,
//    "nvlink_bandwidth_gb_per_s": 450,           // per direction; null or 0: none
//    "nvlink_latency_us": 3, "network_bandwidth_gb_per_s": 50, "network_latency_us": 10,
//    "pcie_bandwidth_gb_per_s": 64, "kernel_launch_overhead_us": 4,
//    "sms": 132,                                 // optional: streaming multiprocessors
//    "kernel_models": {...optional, simulator/kernel_models.hpp: fitted kernel times...},
//    "efficiency": {"gemm": 0.8, "attention": 0.6, "vector": 0.5, "memory": 0.85,
//                   "communication": 0.8},
//    "efficiency_curves": {...optional, see below...},
//    "measured": {...optional, free-form...},
//    "sources": {"<key>": "text"}, "assumptions": {"<key>": "text"},
//    "calibration": {...optional, free-form provenance written by `hdlab calibrate`...}}
// Every key above is required except efficiency_curves, measured and calibration; link
// fields (nvlink_*, network_*, pcie_*) and l2_cache_mb may be null (the device has none,
// or it is not known: a scenario that needs a missing link is refused). Unknown keys
// are errors naming their JSON pointer.
//
// Efficiency model (the roofline of simulator/roofline.hpp):
//   time = max(flops / (peak * compute_eff), bytes / (bandwidth * memory_eff)) + launch
// compute_eff is efficiency.<class> of the op's class (gemm, attention, vector);
// memory_eff is efficiency.memory for every class. Links use efficiency.communication.
//
// efficiency_curves (optional, the calibration extension): per class, a list of
// [x, efficiency] points, x strictly increasing, efficiency in (0, 1]. The curve replaces
// the scalar of that class; between points it is linear in log(x), outside it is clamped
// to the end points. The abscissa x is fixed per class so a calibration fit and the
// simulator agree on it:
//   "gemm":      x = the smallest of the GEMM's three dimensions (M, N, K) — small-M
//                (decode) products are the ones far from peak;
//   "attention": x = query rows per sequence handed to the kernel in one call;
//   "vector":    x = bytes the op moves;
//   "memory":    x = bytes the op moves (bandwidth efficiency of small transfers).
// e.g. "efficiency_curves": {"gemm": [[1, 0.02], [64, 0.35], [1024, 0.75], [8192, 0.81]]}
// Two finer kinds of key, for devices whose kernels differ more than the classes say
// (written by `hdlab calibrate` for CPUs, where they do):
//   "<op name>" (model/ops.hpp, e.g. "ffn_act", "attn_norm"): the compute efficiency of
//               that op alone, at its class's abscissa, in place of the class's curve —
//               a CPU's SwiGLU spends its time in exp(), its RMSNorm in a reduction,
//               its residual add streams; one vector curve cannot time all three;
//   "gemm_memory", "attention_memory", "vector_memory": the memory efficiency of that
//               class's ops against the bytes they move, in place of "memory" — a CPU
//               BLAS repacks the weights of every product, so a small-M GEMM streams
//               its weights far below the copy bandwidth.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/model/backbone.hpp"
#include "hdlab/model/ops.hpp"
#include "hdlab/simulator/kernel_models.hpp"

namespace hdlab::simulator {

// Efficiency classes: the four op classes of model/ops.hpp plus links.
enum class EfficiencyClass { gemm, attention, vector, memory, communication };
inline constexpr int efficiency_class_count = 5;
const char* to_string(EfficiencyClass c);

// One fitted curve: efficiency against the class's abscissa (see the header comment).
struct EfficiencyCurve {
  std::vector<double> x;           // strictly increasing, > 0
  std::vector<double> efficiency;  // same length, each in (0, 1]
  bool empty() const { return x.empty(); }
  // Linear in log(x) between points, clamped outside. Requires !empty().
  double at(double x_value) const;
  bool operator==(const EfficiencyCurve&) const = default;
};

enum class DeviceKind { gpu, cpu };

struct HardwareProfile {
  std::string name;
  DeviceKind kind = DeviceKind::gpu;
  double peak_bf16_tflop_per_s = 0;
  double peak_fp16_tflop_per_s = 0;
  std::optional<double> peak_fp8_tflop_per_s;  // absent: no fp8 matrix rate
  double peak_fp32_tflop_per_s = 0;            // non-matrix fp32 rate (vector ops)
  double memory_gb = 0;
  double memory_bandwidth_gb_per_s = 0;
  std::optional<double> l2_cache_mb;
  std::optional<double> nvlink_bandwidth_gb_per_s;  // per direction
  std::optional<double> nvlink_latency_us;
  std::optional<double> network_bandwidth_gb_per_s;  // per direction, per device
  std::optional<double> network_latency_us;
  std::optional<double> pcie_bandwidth_gb_per_s;
  double kernel_launch_overhead_us = 0;
  std::optional<double> sms;  // streaming multiprocessors (GPUs; the kernel models' waves)
  // Fitted kernel times (kernel_models.hpp); where present they time every op and
  // collective in place of the roofline's flat efficiencies.
  std::optional<KernelModels> kernel_models;
  // Scalar efficiency per EfficiencyClass, each in (0, 1].
  std::array<double, efficiency_class_count> efficiency{};
  // Optional fitted curve per EfficiencyClass (communication curves are not used).
  std::array<EfficiencyCurve, efficiency_class_count> curves{};
  // Optional compute curve per OpKind (replaces its class's), and memory curve per
  // compute class (gemm, attention, vector: replaces "memory" for that class's ops).
  std::array<EfficiencyCurve, model::op_kind_count> op_curves{};
  std::array<EfficiencyCurve, 3> class_memory_curves{};
  nlohmann::json measured;     // object or null; kept as written
  std::map<std::string, std::string> sources;
  std::map<std::string, std::string> assumptions;
  nlohmann::json calibration;  // object or null; kept as written

  bool operator==(const HardwareProfile&) const = default;

  double scalar_efficiency(EfficiencyClass c) const { return efficiency[static_cast<int>(c)]; }
  // The curve at x where the profile has one, else the scalar.
  double efficiency_at(EfficiencyClass c, double x) const;
  // Compute efficiency of op `k` (of class c) at x: its op curve, else efficiency_at(c, x).
  double compute_efficiency_at(model::OpKind k, EfficiencyClass c, double x) const;
  // Memory efficiency of an op of class c moving `bytes`: the class's memory curve, else
  // efficiency_at(memory, bytes).
  double memory_efficiency_at(EfficiencyClass c, double bytes) const;
  // Whether any curve (class, op or class memory) is set.
  bool has_curves() const;
  // Matrix peak for a storage type in FLOP/s (1e12 * TFLOP/s). ConfigError (pointer
  // "/peak_fp8_tflop_per_s") when asked for fp8 on a device without an fp8 rate.
  double matrix_peak_flop_per_s(model::DType dtype) const;
  double vector_peak_flop_per_s() const { return peak_fp32_tflop_per_s * 1e12; }
  double memory_bytes() const { return memory_gb * 1e9; }
  double memory_bandwidth_bytes_per_s() const { return memory_bandwidth_gb_per_s * 1e9; }
  double launch_overhead_s() const { return kernel_launch_overhead_us * 1e-6; }
};

// The efficiency class that times an op of a given class.
EfficiencyClass efficiency_class(model::OpClass c);

// Parses a profile document; every error is a ConfigError naming the JSON pointer
// (`pointer` prefixes it, "" for a whole file).
HardwareProfile parse_hardware_profile(const nlohmann::json& j, const std::string& pointer = "");
nlohmann::json to_json(const HardwareProfile& h);

}  // namespace hdlab::simulator
