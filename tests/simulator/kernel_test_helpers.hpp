// Helpers shared by the kernel-model tests (test_kernel_models.cpp,
// test_kernel_models_monotonic.cpp, test_decode_attention.cpp): the bundled profiles, a collector of "more work took
// less time" violations, and attention shapes.
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.hpp"
#include "hdlab/simulator/kernel_models.hpp"
#include "hdlab/simulator/roofline.hpp"

namespace kernel_test {

using namespace hdlab;
using namespace hdlab::simulator;
using model::DType;

constexpr double kRounding = 1e-12;  // relative: see the header comment

inline model::Json profile_json(const std::string& file) {
  return model::read_json_file(fixtures::source_path("profiles/hardware/" + file + ".json"));
}
inline HardwareProfile profile(const std::string& file) { return parse_hardware_profile(profile_json(file)); }

// The profiles fitted on their own kerneldb folder (H200 and H20 are derived from the H100's).
inline const char* const fitted_files[] = {"h100-sxm", "a100-80gb-sxm", "b200"};

// Violations of "more work never takes less time", each described; the test asserts none
// and prints the first few (one CHECK per sweep keeps a failure readable).
struct Violations {
  std::vector<std::string> cases;
  void check(double smaller_work_s, double larger_work_s, const std::string& what) {
    if (!(larger_work_s >= smaller_work_s * (1 - kRounding))) {
      std::ostringstream o;
      o.precision(9);
      o << what << ": " << smaller_work_s * 1e6 << " us -> " << larger_work_s * 1e6 << " us";
      cases.push_back(o.str());
    }
  }
  std::string first(std::size_t n = 8) const {
    std::string out = std::to_string(cases.size()) + " violation(s)";
    for (std::size_t i = 0; i < cases.size() && i < n; ++i) out += "\n  " + cases[i];
    return out;
  }
};

inline std::string describe(const char* file, DType d, const char* what) {
  return std::string(file) + " " + model::to_string(d) + " " + what;
}

inline std::string num(double x) {
  std::ostringstream o;
  o << x;
  return o.str();
}

// (heads, KV heads): MHA, GQA 4:1, GQA 8:1, MQA
inline const std::vector<std::pair<double, double>> head_layouts = {{32, 32}, {32, 8}, {64, 8}, {16, 1}};

inline std::vector<double> doubling(double from, double to) {
  std::vector<double> out;
  for (double x = from; x <= to; x *= 2) out.push_back(x);
  return out;
}

// A causal prefill of `rows` tokens per sequence (exact pairs; the model only needs them
// to grow with the rows).
inline PrefillAttentionShape prefill(double seqs, double rows, double heads, double kv_heads, double pairs = -1) {
  PrefillAttentionShape p;
  p.seqs = seqs;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.head_dim = 128;
  p.rows = rows;
  p.pairs = pairs >= 0 ? pairs : rows * (rows + 1) / 2;
  p.longest_row_keys = rows;
  p.kv_positions = rows;
  return p;
}

// One decode step: `keys` read per sequence and KV head, out of `context` positions (0:
// the keys are the context).
inline DecodeAttentionShape decode(double seqs, double keys, double heads, double kv_heads, double head_dim = 128,
                                   double context = 0) {
  DecodeAttentionShape d;
  d.seqs = seqs;
  d.heads = heads;
  d.kv_heads = kv_heads;
  d.head_dim = head_dim;
  d.keys = keys;
  d.context = context;
  return d;
}

inline model::Config qwen3() {
  const model::Backbone b =
      model::load_backbone(model::read_json_file(fixtures::source_path("profiles/models/qwen3-8b.json")));
  return model::make_config(b, model::parse_design(model::Json::parse("{}"), b));
}

}  // namespace kernel_test
