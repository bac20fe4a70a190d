#include "hdlab/simulator/hardware.hpp"

#include <algorithm>
#include <cmath>

#include "hdlab/model/json_reader.hpp"

namespace hdlab::simulator {

using model::fail;
using model::ObjectReader;
using nlohmann::json;

namespace {

constexpr const char* kClassNames[efficiency_class_count] = {"gemm", "attention", "vector", "memory",
                                                             "communication"};

// What a real device can have, so that no profile number (a subnormal peak, a peak of
// 1e300) can turn a prediction into inf or nan: rates from 1 MFLOP/s to 1 EFLOP/s per
// device, memory from 1 MB to 1 PB, bandwidths from 1 MB/s to 1 PB/s, latencies and
// overheads up to a second, efficiencies from 1e-6 to 1.
struct Range {
  double min, max;
  const char* unit;
};
constexpr Range kTflops{1e-6, 1e6, "TFLOP/s"};
constexpr Range kGigabytes{1e-3, 1e6, "GB"};
constexpr Range kBandwidth{1e-3, 1e6, "GB/s"};
constexpr Range kMicroseconds{0.0, 1e6, "us"};
constexpr Range kCacheMegabytes{0.0, 1e6, "MB"};
constexpr Range kEfficiency{1e-6, 1.0, "(fraction of peak)"};
constexpr Range kCurveX{1e-6, 1e18, "(the class's abscissa: a dimension, rows or bytes)"};

std::string shown(double v) { return json(v).dump(); }

double physical(const json& j, const std::string& pointer, Range range) {
  const double v = model::read_number(j, pointer);
  if (v < range.min || v > range.max)
    fail(pointer, "must be between " + shown(range.min) + " and " + shown(range.max) + " " + range.unit +
                      " (a physically sensible device), got " + shown(v));
  return v;
}

double physical(ObjectReader& r, const char* key, Range range) { return physical(r.required(key), r.at(key), range); }

// A required key whose value may be null (the device has no such link, or it is
// unknown). `zero_is_none`: 0 also means the device has none (links).
std::optional<double> nullable_number(ObjectReader& r, const char* key, Range range, bool zero_is_none = false) {
  const json& v = r.required(key);
  if (v.is_null()) return std::nullopt;
  if (zero_is_none && v.is_number() && v.get<double>() == 0.0) return 0.0;
  return physical(v, r.at(key), range);
}

std::map<std::string, std::string> string_map(ObjectReader& r, const char* key) {
  const json& v = r.required(key);
  if (!v.is_object()) fail(r.at(key), "must be an object of key -> text, got " + model::json_type_name(v));
  std::map<std::string, std::string> out;
  for (const auto& [k, text] : v.items()) out[k] = model::read_string(text, model::pointer_join(r.at(key), k));
  return out;
}

json free_form_object(ObjectReader& r, const char* key) {
  const json* v = r.find(key);
  if (!v || v->is_null()) return nullptr;
  if (!v->is_object()) fail(r.at(key), "must be an object, got " + model::json_type_name(*v));
  return *v;
}

EfficiencyCurve parse_curve(const json& j, const std::string& ptr) {
  if (!j.is_array() || j.size() < 1) fail(ptr, "must be a non-empty list of [x, efficiency] points");
  EfficiencyCurve c;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string p = model::pointer_join(ptr, i);
    if (!j[i].is_array() || j[i].size() != 2) fail(p, "must be a pair [x, efficiency]");
    const double x = physical(j[i][0], model::pointer_join(p, std::size_t{0}), kCurveX);
    const double e = physical(j[i][1], model::pointer_join(p, std::size_t{1}), kEfficiency);
    if (!c.x.empty() && x <= c.x.back())
      fail(model::pointer_join(p, std::size_t{0}), "must be larger than the previous point's x");
    c.x.push_back(x);
    c.efficiency.push_back(e);
  }
  return c;
}

void parse_efficiency(ObjectReader r, HardwareProfile& h) {
  for (int i = 0; i < efficiency_class_count; ++i) {
    h.efficiency[static_cast<std::size_t>(i)] = physical(r, kClassNames[i], kEfficiency);
  }
  r.finish();
}

// "<class>_memory" keys, in EfficiencyClass order (gemm, attention, vector).
constexpr const char* kClassMemoryNames[3] = {"gemm_memory", "attention_memory", "vector_memory"};

void parse_curves(ObjectReader r, HardwareProfile& h) {
  // Communication has no curve: links are timed by the ring formulas with one efficiency.
  for (int i = 0; i < efficiency_class_count - 1; ++i)
    if (const json* v = r.find(kClassNames[i])) h.curves[static_cast<std::size_t>(i)] = parse_curve(*v, r.at(kClassNames[i]));
  for (int i = 0; i < 3; ++i)
    if (const json* v = r.find(kClassMemoryNames[i]))
      h.class_memory_curves[static_cast<std::size_t>(i)] = parse_curve(*v, r.at(kClassMemoryNames[i]));
  for (int i = 0; i < model::op_kind_count; ++i) {
    const char* name = model::to_string(static_cast<model::OpKind>(i));
    if (const json* v = r.find(name)) h.op_curves[static_cast<std::size_t>(i)] = parse_curve(*v, r.at(name));
  }
  r.finish();
}

json curve_to_json(const EfficiencyCurve& c) {
  json out = json::array();
  for (std::size_t i = 0; i < c.x.size(); ++i) out.push_back({c.x[i], c.efficiency[i]});
  return out;
}

}  // namespace

const char* to_string(EfficiencyClass c) { return kClassNames[static_cast<int>(c)]; }

EfficiencyClass efficiency_class(model::OpClass c) {
  switch (c) {
    case model::OpClass::gemm: return EfficiencyClass::gemm;
    case model::OpClass::attention: return EfficiencyClass::attention;
    case model::OpClass::vector: return EfficiencyClass::vector;
    case model::OpClass::memory: return EfficiencyClass::memory;
  }
  return EfficiencyClass::vector;
}

double EfficiencyCurve::at(double x_value) const {
  if (x_value <= x.front()) return efficiency.front();
  if (x_value >= x.back()) return efficiency.back();
  const auto hi = static_cast<std::size_t>(std::upper_bound(x.begin(), x.end(), x_value) - x.begin());
  const std::size_t lo = hi - 1;
  const double t = std::log(x_value / x[lo]) / std::log(x[hi] / x[lo]);
  return efficiency[lo] + t * (efficiency[hi] - efficiency[lo]);
}

double HardwareProfile::efficiency_at(EfficiencyClass c, double x) const {
  const EfficiencyCurve& curve = curves[static_cast<int>(c)];
  return curve.empty() ? efficiency[static_cast<int>(c)] : curve.at(x);
}

double HardwareProfile::compute_efficiency_at(model::OpKind k, EfficiencyClass c, double x) const {
  const EfficiencyCurve& curve = op_curves[static_cast<std::size_t>(k)];
  return curve.empty() ? efficiency_at(c, x) : curve.at(x);
}

double HardwareProfile::memory_efficiency_at(EfficiencyClass c, double bytes) const {
  const auto i = static_cast<std::size_t>(c);
  if (i < class_memory_curves.size() && !class_memory_curves[i].empty()) return class_memory_curves[i].at(bytes);
  return efficiency_at(EfficiencyClass::memory, bytes);
}

bool HardwareProfile::has_curves() const {
  auto any = [](const auto& list) {
    return std::any_of(list.begin(), list.end(), [](const EfficiencyCurve& c) { return !c.empty(); });
  };
  return any(curves) || any(op_curves) || any(class_memory_curves);
}

double HardwareProfile::matrix_peak_flop_per_s(model::DType dtype) const {
  switch (dtype) {
    case model::DType::bf16: return peak_bf16_tflop_per_s * 1e12;
    case model::DType::fp16: return peak_fp16_tflop_per_s * 1e12;
    case model::DType::fp32: return peak_fp32_tflop_per_s * 1e12;
    case model::DType::fp8:
      if (!peak_fp8_tflop_per_s) fail("/peak_fp8_tflop_per_s", "is null: " + name + " has no fp8 matrix rate");
      return *peak_fp8_tflop_per_s * 1e12;
  }
  return peak_bf16_tflop_per_s * 1e12;
}

HardwareProfile parse_hardware_profile(const json& j, const std::string& pointer) {
  ObjectReader r(j, pointer);
  HardwareProfile h;
  h.name = r.string("name", std::nullopt);
  h.kind = r.choice<DeviceKind>("kind", {{"gpu", DeviceKind::gpu}, {"cpu", DeviceKind::cpu}}, std::nullopt);
  h.peak_bf16_tflop_per_s = physical(r, "peak_bf16_tflop_per_s", kTflops);
  h.peak_fp16_tflop_per_s = physical(r, "peak_fp16_tflop_per_s", kTflops);
  h.peak_fp8_tflop_per_s = nullable_number(r, "peak_fp8_tflop_per_s", kTflops);
  h.peak_fp32_tflop_per_s = physical(r, "peak_fp32_tflop_per_s", kTflops);
  h.memory_gb = physical(r, "memory_gb", kGigabytes);
  h.memory_bandwidth_gb_per_s = physical(r, "memory_bandwidth_gb_per_s", kBandwidth);
  h.l2_cache_mb = nullable_number(r, "l2_cache_mb", kCacheMegabytes);
  h.nvlink_bandwidth_gb_per_s = nullable_number(r, "nvlink_bandwidth_gb_per_s", kBandwidth, true);
  h.nvlink_latency_us = nullable_number(r, "nvlink_latency_us", kMicroseconds);
  h.network_bandwidth_gb_per_s = nullable_number(r, "network_bandwidth_gb_per_s", kBandwidth, true);
  h.network_latency_us = nullable_number(r, "network_latency_us", kMicroseconds);
  h.pcie_bandwidth_gb_per_s = nullable_number(r, "pcie_bandwidth_gb_per_s", kBandwidth, true);
  h.kernel_launch_overhead_us = physical(r, "kernel_launch_overhead_us", kMicroseconds);
  if (const json* v = r.find("sms")) h.sms = static_cast<double>(model::read_integer(*v, r.at("sms"), 1, 1 << 16));
  if (const json* v = r.find("kernel_models")) h.kernel_models = parse_kernel_models(*v, r.at("kernel_models"));
  parse_efficiency(r.object("efficiency"), h);
  if (auto c = r.optional_object("efficiency_curves")) parse_curves(*c, h);
  h.measured = free_form_object(r, "measured");
  h.sources = string_map(r, "sources");
  h.assumptions = string_map(r, "assumptions");
  h.calibration = free_form_object(r, "calibration");
  r.finish();
  return h;
}

json to_json(const HardwareProfile& h) {
  auto nullable = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json eff = json::object();
  json curves = json::object();
  for (int i = 0; i < efficiency_class_count; ++i) {
    eff[kClassNames[i]] = h.efficiency[static_cast<std::size_t>(i)];
    if (!h.curves[static_cast<std::size_t>(i)].empty())
      curves[kClassNames[i]] = curve_to_json(h.curves[static_cast<std::size_t>(i)]);
  }
  for (int i = 0; i < 3; ++i)
    if (!h.class_memory_curves[static_cast<std::size_t>(i)].empty())
      curves[kClassMemoryNames[i]] = curve_to_json(h.class_memory_curves[static_cast<std::size_t>(i)]);
  for (int i = 0; i < model::op_kind_count; ++i)
    if (!h.op_curves[static_cast<std::size_t>(i)].empty())
      curves[model::to_string(static_cast<model::OpKind>(i))] = curve_to_json(h.op_curves[static_cast<std::size_t>(i)]);
  json j = {{"name", h.name},
            {"kind", h.kind == DeviceKind::gpu ? "gpu" : "cpu"},
            {"peak_bf16_tflop_per_s", h.peak_bf16_tflop_per_s},
            {"peak_fp16_tflop_per_s", h.peak_fp16_tflop_per_s},
            {"peak_fp8_tflop_per_s", nullable(h.peak_fp8_tflop_per_s)},
            {"peak_fp32_tflop_per_s", h.peak_fp32_tflop_per_s},
            {"memory_gb", h.memory_gb},
            {"memory_bandwidth_gb_per_s", h.memory_bandwidth_gb_per_s},
            {"l2_cache_mb", nullable(h.l2_cache_mb)},
            {"nvlink_bandwidth_gb_per_s", nullable(h.nvlink_bandwidth_gb_per_s)},
            {"nvlink_latency_us", nullable(h.nvlink_latency_us)},
            {"network_bandwidth_gb_per_s", nullable(h.network_bandwidth_gb_per_s)},
            {"network_latency_us", nullable(h.network_latency_us)},
            {"pcie_bandwidth_gb_per_s", nullable(h.pcie_bandwidth_gb_per_s)},
            {"kernel_launch_overhead_us", h.kernel_launch_overhead_us},
            {"efficiency", eff},
            {"sources", h.sources},
            {"assumptions", h.assumptions}};
  if (h.sms) j["sms"] = *h.sms;
  if (h.kernel_models) j["kernel_models"] = to_json(*h.kernel_models);
  if (!curves.empty()) j["efficiency_curves"] = curves;
  if (!h.measured.is_null()) j["measured"] = h.measured;
  if (!h.calibration.is_null()) j["calibration"] = h.calibration;
  return j;
}

}  // namespace hdlab::simulator
