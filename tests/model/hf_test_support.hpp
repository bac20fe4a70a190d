#pragma once
// Helpers shared by the HF import tests: the bundled configs, parameter counts, the
// ConfigError a call throws, and comparisons with published figures.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/hf_import.hpp"
#include "hdlab/model/params.hpp"

namespace hf_test {

using namespace hdlab::model;
using i64 = std::int64_t;

inline std::string hf_dir() { return std::string(HDLAB_SOURCE_DIR) + "/profiles/models/hf"; }
inline Json hf_json(const std::string& name) { return read_json_file(hf_dir() + "/" + name + ".config.json"); }
inline Backbone hf(const std::string& name) { return import_hf_config(hf_json(name)); }
inline ParamCounts params_of(const Backbone& b) { return count_params(make_config(b, Design{})); }

// The ConfigError `f` throws (pointer and reason); fails the test when none is thrown.
struct Caught {
  std::string pointer, reason;
};
template <class F>
Caught config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return {e.pointer(), e.reason()};
  }
  FAIL("no ConfigError thrown");
  return {};
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Published figures are given to a few significant digits: `value` rounds to `published`
// at `unit` resolution (e.g. 8.19B at 0.01B).
inline bool rounds_to(i64 value, double published, double unit) {
  return std::llround(static_cast<double>(value) / unit) == std::llround(published / unit);
}

// |value - published| <= rel * published.
inline bool within(i64 value, double published, double rel) {
  return std::abs(static_cast<double>(value) - published) <= rel * published;
}

// One layer's multi-head latent attention weights (DeepSeek-V2/V3): queries directly
// (q_rank 0) or through q_a (+ its RMSNorm) and q_b; kv_a with the shared RoPE key (+ its
// RMSNorm); kv_b up to per-head keys and values; the output projection.
inline i64 mla_params(i64 D, i64 H, i64 q_rank, i64 kv_rank, i64 nope, i64 rope, i64 v) {
  const i64 q = q_rank > 0 ? D * q_rank + q_rank + q_rank * H * (nope + rope) : D * H * (nope + rope);
  return q + D * (kv_rank + rope) + kv_rank + kv_rank * H * (nope + v) + H * v * D;
}
inline i64 swiglu(i64 D, i64 F) { return 3 * D * F; }

// One GQA layer's attention weights (methods.md section 0): q, k, v, o, plus biases on
// q, k, v (qkv_bias) and on o (o_bias).
inline i64 gqa_attention(i64 D, i64 H, i64 G, i64 hd, bool qkv_bias, bool o_bias = false) {
  return D * H * hd + 2 * D * G * hd + H * hd * D + (qkv_bias ? H * hd + 2 * G * hd : 0) + (o_bias ? D : 0);
}

}  // namespace hf_test
