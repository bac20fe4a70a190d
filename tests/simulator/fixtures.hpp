#pragma once
// Small configs and a round-number device for the simulator tests. Every expected number
// in the tests is worked out from these by hand (or by the formula the test names).
#include <cmath>
#include <string>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/simulator/cost_model.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace fixtures {

using hdlab::model::Json;

// 2 layers, D 8, 2 query heads / 1 KV head of 4, SwiGLU F 16, vocabulary 10, QK-norm,
// untied. Parameters: per layer attention 192, QK-norm 8, norms 16, FFN 384; final norm
// 8; tables 80 + 80: 1368 in all.
inline Json tiny_dense() {
  return Json::parse(R"({"name": "tiny", "num_layers": 2, "hidden_size": 8, "num_heads": 2, "num_kv_heads": 1,
                        "head_dim": 4, "qk_norm": true, "intermediate_size": 16, "vocab_size": 10})");
}

// 4 layers, D 8, 2 x 1 heads of 4; layer 0 dense F 16, layers 1-3 MoE: 4 experts of 6,
// top-2, one shared expert of 10; the last layer mirrors layer 0's K/V.
inline Json tiny_moe() {
  return Json::parse(R"({"name": "tiny-moe", "num_layers": 4, "hidden_size": 8, "num_heads": 2, "num_kv_heads": 1,
                        "head_dim": 4, "intermediate_size": 16, "vocab_size": 10,
                        "moe": {"num_experts": 4, "top_k": 2, "expert_intermediate_size": 6,
                                "num_shared_experts": 1, "shared_expert_intermediate_size": 10,
                                "first_dense_layers": 1},
                        "kv_mirror_layers": 1})");
}

// 4 layers alternating sliding (window 3) and full.
inline Json tiny_sliding() {
  return Json::parse(R"({"name": "tiny-swa", "num_layers": 4, "hidden_size": 8, "num_heads": 2, "num_kv_heads": 1,
                        "head_dim": 4, "intermediate_size": 16, "vocab_size": 10,
                        "attention": {"layers": ["sliding", "full", "sliding", "full"], "sliding_window": 3}})");
}

inline hdlab::model::Config config(const Json& backbone, const std::string& design) {
  return hdlab::model::parse_config(Json{{"backbone", backbone}, {"design", Json::parse(design)}});
}

// A device with round numbers: 100 TFLOP/s bf16, 10 TFLOP/s fp32 vector, 1000 GB/s,
// 10 GB, NVLink 100 GB/s (1 us), network 10 GB/s (5 us), launch `launch_us`.
inline Json device_json(double launch_us = 0) {
  Json j = Json::parse(R"({
    "name": "round device", "kind": "gpu",
    "peak_bf16_tflop_per_s": 100, "peak_fp16_tflop_per_s": 100, "peak_fp8_tflop_per_s": null,
    "peak_fp32_tflop_per_s": 10, "memory_gb": 10, "memory_bandwidth_gb_per_s": 1000, "l2_cache_mb": null,
    "nvlink_bandwidth_gb_per_s": 100, "nvlink_latency_us": 1, "network_bandwidth_gb_per_s": 10,
    "network_latency_us": 5, "pcie_bandwidth_gb_per_s": null, "kernel_launch_overhead_us": 0,
    "efficiency": {"gemm": 0.5, "attention": 0.25, "vector": 0.5, "memory": 0.8, "communication": 0.5},
    "sources": {"all": "made up for tests"}, "assumptions": {}
  })");
  j["kernel_launch_overhead_us"] = launch_us;
  return j;
}

inline hdlab::simulator::HardwareProfile device(double launch_us = 0) {
  return hdlab::simulator::parse_hardware_profile(device_json(launch_us));
}

inline std::string source_path(const std::string& relative) { return std::string(HDLAB_SOURCE_DIR) + "/" + relative; }

// The message of the ConfigError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const hdlab::model::ConfigError& e) {
    return e.what();
  }
  return "";
}

// Relative closeness for quantities computed along different routes.
inline bool close(double a, double b, double rel = 1e-12) {
  return std::fabs(a - b) <= rel * std::fmax(std::fabs(a), std::fabs(b)) + 1e-300;
}

}  // namespace fixtures
