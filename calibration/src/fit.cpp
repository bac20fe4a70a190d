// The fit of a profile's rates and curves to microbenchmark samples (see fit.hpp).
#include "hdlab/calibration/fit.hpp"

#include <algorithm>
#include <cmath>

#include "hdlab/model/error.hpp"
#include "hdlab/simulator/roofline.hpp"

namespace hdlab::calibration {

using model::OpKind;
using simulator::EfficiencyCurve;

namespace {

constexpr double kMinEfficiency = 1e-4;

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Rates {
  double launch = 0, peak = 0, bandwidth = 0;
  double peak_bf16 = 0, peak_fp16 = 0;  // 0: no sample of that precision
  double busy(const Sample& s) const { return std::max(s.seconds - s.calls * launch, 0.02 * s.seconds); }
};

Rates measure_rates(const std::vector<Sample>& samples) {
  Rates r;
  r.launch = INFINITY;
  for (const Sample& s : samples)
    if (s.bench == BenchKind::launch) r.launch = std::min(r.launch, s.seconds);
  if (!std::isfinite(r.launch)) throw model::ConfigError("", "calibration samples: no launch sample (smallest ops)");
  double largest = 0, largest_rate = 0;
  for (const Sample& s : samples) {
    if (s.bench == BenchKind::gemm) r.peak = std::max(r.peak, s.flops / r.busy(s));
    if (s.bench == BenchKind::gemm_bf16) r.peak_bf16 = std::max(r.peak_bf16, s.flops / r.busy(s));
    if (s.bench == BenchKind::gemm_fp16) r.peak_fp16 = std::max(r.peak_fp16, s.flops / r.busy(s));
    if (s.bench == BenchKind::vector && s.op == OpKind::residual) {
      // Stream bandwidth: the add over at least 32 MiB moved, beyond the caches a small
      // operand would sit in.
      if (s.bytes >= 32.0 * (1 << 20)) r.bandwidth = std::max(r.bandwidth, s.bytes / r.busy(s));
      if (s.bytes > largest) largest = s.bytes, largest_rate = s.bytes / r.busy(s);
    }
  }
  if (r.peak <= 0) throw model::ConfigError("", "calibration samples: no GEMM sample");
  if (r.bandwidth <= 0) r.bandwidth = largest_rate;
  if (r.bandwidth <= 0) throw model::ConfigError("", "calibration samples: no residual add sample (stream bandwidth)");
  return r;
}

// (abscissa, implied efficiency) pairs -> a curve: knots at the distinct abscissae
// (log-spaced clusters beyond max_knots), each the median efficiency of its points.
EfficiencyCurve curve_from(std::vector<std::pair<double, double>> points, int max_knots) {
  EfficiencyCurve c;
  if (points.empty()) return c;
  std::sort(points.begin(), points.end());
  std::vector<double> edges;  // cluster boundaries in log x
  std::vector<double> xs;
  for (const auto& p : points) xs.push_back(p.first);
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  const bool cluster = static_cast<int>(xs.size()) > max_knots;
  const double lo = std::log(xs.front()), hi = std::log(xs.back());
  std::size_t i = 0;
  while (i < points.size()) {
    std::size_t j = i;
    std::vector<double> logx, eff;
    const int bin = cluster ? static_cast<int>((std::log(points[i].first) - lo) / (hi - lo) * (max_knots - 1e-9)) : 0;
    while (j < points.size() &&
           (cluster ? static_cast<int>((std::log(points[j].first) - lo) / (hi - lo) * (max_knots - 1e-9)) == bin
                    : points[j].first == points[i].first)) {
      logx.push_back(std::log(points[j].first));
      eff.push_back(points[j].second);
      ++j;
    }
    double mean_logx = 0;
    for (double v : logx) mean_logx += v / static_cast<double>(logx.size());
    c.x.push_back(std::exp(mean_logx));
    c.efficiency.push_back(std::clamp(median_of(eff), kMinEfficiency, 1.0));
    i = j;
  }
  return c;
}

EfficiencyCurve constant_curve(double efficiency) { return EfficiencyCurve{{1.0}, {efficiency}}; }

// Pool adjacent violators: the closest non-decreasing sequence (weighted least squares).
// A GEMM's efficiency does not fall as it gets more rows (more reuse of each weight);
// a dip in the measured points is noise, not a property of the machine.
void make_non_decreasing(std::vector<double>& v, std::vector<double> w) {
  std::vector<std::pair<double, double>> blocks;  // (mean, weight)
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0; i < v.size(); ++i) {
    blocks.push_back({v[i], w[i]});
    sizes.push_back(1);
    while (blocks.size() > 1 && blocks[blocks.size() - 2].first > blocks.back().first) {
      auto [m2, w2] = blocks.back();
      const std::size_t n2 = sizes.back();
      blocks.pop_back();
      sizes.pop_back();
      auto& [m1, w1] = blocks.back();
      m1 = (m1 * w1 + m2 * w2) / (w1 + w2);
      w1 += w2;
      sizes.back() += n2;
    }
  }
  std::size_t at = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b)
    for (std::size_t k = 0; k < sizes[b]; ++k) v[at++] = blocks[b].first;
}

double gemm_x(const Sample& s) { return std::max(1.0, static_cast<double>(std::min({s.shape.at(0), s.shape.at(1), s.shape.at(2)}))); }

// gemm_memory from each weight shape's smallest-M product, then the compute curve.
void fit_gemm(const std::vector<Sample>& samples, const Rates& r, const FitOptions& o, FitResult& out) {
  std::map<std::pair<std::int64_t, std::int64_t>, const Sample*> smallest;
  for (const Sample& s : samples)
    if (s.bench == BenchKind::gemm) {
      const Sample*& best = smallest[{s.shape.at(1), s.shape.at(2)}];
      if (!best || s.shape.at(0) < best->shape.at(0)) best = &s;
    }
  std::vector<std::pair<double, double>> memory;
  for (const auto& [shape, s] : smallest) memory.push_back({std::max(1.0, s->bytes), s->bytes / (r.bandwidth * r.busy(*s))});
  const EfficiencyCurve mem = curve_from(memory, o.max_knots);
  std::map<double, std::vector<double>> bound, seen;  // by x: compute-bound implied, all implied
  for (const Sample& s : samples) {
    if (s.bench != BenchKind::gemm) continue;
    const double busy = r.busy(s), implied = s.flops / (r.peak * busy);
    const double memory_s = s.bytes / (r.bandwidth * mem.at(std::max(1.0, s.bytes)));
    seen[gemm_x(s)].push_back(implied);
    if (memory_s < o.compute_bound_share * busy) bound[gemm_x(s)].push_back(implied);
  }
  std::vector<std::pair<double, double>> compute;
  std::vector<double> weights;
  for (const auto& [x, all] : seen) {
    // Compute bound somewhere at this x: their median. Nowhere: the best seen, so that
    // the memory term stays the one that times these products.
    const auto it = bound.find(x);
    compute.push_back({x, it != bound.end() ? median_of(it->second) : *std::max_element(all.begin(), all.end())});
    weights.push_back(static_cast<double>(it != bound.end() ? it->second.size() : 1));
  }
  EfficiencyCurve gemm = curve_from(compute, static_cast<int>(compute.size()));  // one knot per M
  make_non_decreasing(gemm.efficiency, weights);
  out.curves["gemm"] = gemm;
  out.curves["gemm_memory"] = mem;
}

}  // namespace

std::vector<OpKind> ops_timed_like(OpKind benchmarked) {
  if (benchmarked == OpKind::attn_norm)
    return {OpKind::attn_norm, OpKind::ffn_norm, OpKind::qk_norm, OpKind::final_norm, OpKind::ghc_norm};
  return {benchmarked};
}

FitResult fit_samples(const std::vector<Sample>& samples, const FitOptions& o) {
  const Rates r = measure_rates(samples);
  FitResult out;
  out.launch_s = r.launch;
  out.peak_flop_per_s = r.peak;
  out.peak_bf16_flop_per_s = r.peak_bf16;
  out.peak_fp16_flop_per_s = r.peak_fp16;
  out.bandwidth_bytes_per_s = r.bandwidth;
  fit_gemm(samples, r, o, out);
  std::map<std::string, std::vector<std::pair<double, double>>> points;
  std::map<std::string, std::vector<std::pair<double, double>>> composed;  // runner samples by op
  for (const Sample& s : samples) {
    const double busy = r.busy(s);
    if (s.bench == BenchKind::memory) points["memory"].push_back({std::max(1.0, s.bytes), s.bytes / (r.bandwidth * busy)});
    if (s.bench == BenchKind::attention) points["attention"].push_back({std::max(1.0, s.x), s.flops / (r.peak * busy)});
    if (s.bench == BenchKind::vector) {
      // x = bytes moved; each kernel its own curve, and all of them the class's.
      const std::pair<double, double> p{std::max(1.0, s.bytes), s.flops / (r.peak * busy)};
      points[model::to_string(s.op)].push_back(p);
      points["vector"].push_back(p);
    }
    if (s.bench == BenchKind::runner && s.flops > 0)
      composed[model::to_string(s.op)].push_back({std::max(1.0, s.x), s.flops / (r.peak * busy)});
  }
  // An op timed as the runner composes it replaces its kernel's curve: the op's own
  // calls, sizes and context are in it.
  for (auto& [key, p] : composed) points[key] = std::move(p);
  for (const auto& [key, p] : points) out.curves[key] = curve_from(p, o.max_knots);
  // Vector and attention ops are timed by their compute curves; their memory term is the
  // stream bandwidth itself, a bound none of them beats (the memory curve proper is the
  // gathers', far below it).
  out.curves["vector_memory"] = constant_curve(1.0);
  out.curves["attention_memory"] = constant_curve(1.0);
  simulator::HardwareProfile scratch;
  scratch.efficiency.fill(1.0);
  apply_fit(out, scratch);
  compute_residuals(samples, scratch, out);
  return out;
}

void apply_fit(const FitResult& fit, simulator::HardwareProfile& h) {
  using simulator::EfficiencyClass;
  const double peak_tflop = fit.peak_flop_per_s * 1e-12;
  // Where bf16 or fp16 went unmeasured (the CPU computes every dtype in fp32 and refuses
  // bf16 models) the fp32 rate stands for it; the caller records that as an assumption.
  h.peak_fp32_tflop_per_s = peak_tflop;
  h.peak_bf16_tflop_per_s = fit.peak_bf16_flop_per_s > 0 ? fit.peak_bf16_flop_per_s * 1e-12 : peak_tflop;
  h.peak_fp16_tflop_per_s = fit.peak_fp16_flop_per_s > 0 ? fit.peak_fp16_flop_per_s * 1e-12 : peak_tflop;
  h.memory_bandwidth_gb_per_s = fit.bandwidth_bytes_per_s * 1e-9;
  h.kernel_launch_overhead_us = fit.launch_s * 1e6;
  auto best = [](const EfficiencyCurve& c) { return *std::max_element(c.efficiency.begin(), c.efficiency.end()); };
  const std::pair<const char*, EfficiencyClass> classes[] = {{"gemm", EfficiencyClass::gemm},
                                                             {"attention", EfficiencyClass::attention},
                                                             {"vector", EfficiencyClass::vector},
                                                             {"memory", EfficiencyClass::memory}};
  for (auto [key, cls] : classes) {
    if (auto it = fit.curves.find(key); it != fit.curves.end() && !it->second.empty()) {
      h.curves[static_cast<std::size_t>(cls)] = it->second;
      h.efficiency[static_cast<std::size_t>(cls)] = best(it->second);  // the scalar: the curve's best
    }
    if (auto it = fit.curves.find(std::string(key) + "_memory"); it != fit.curves.end() && !it->second.empty())
      h.class_memory_curves[static_cast<std::size_t>(cls)] = it->second;
  }
  // An op's own curve first; then the ops its kernel also times, where they have none.
  for (const auto& [key, curve] : fit.curves)
    if (auto op = model::op_kind_from_string(key); op && !curve.empty()) h.op_curves[static_cast<std::size_t>(*op)] = curve;
  for (const auto& [key, curve] : fit.curves)
    if (auto op = model::op_kind_from_string(key); op && !curve.empty())
      for (OpKind k : ops_timed_like(*op))
        if (!fit.curves.count(model::to_string(k))) h.op_curves[static_cast<std::size_t>(k)] = curve;
}

namespace {

// The op a sample stands for, as the simulator would cost it.
std::pair<OpKind, simulator::OpRow> as_op(const Sample& s) {
  simulator::OpRow row;
  row.cost.flops = s.flops;
  row.cost.act_bytes_in = s.bytes;
  row.calls = s.calls;
  OpKind kind = s.op;
  if (s.bench == BenchKind::gemm) {
    kind = OpKind::ffn_gate_up;
    row.rows = static_cast<double>(s.shape.at(0));
    row.weight_dim_min = static_cast<double>(std::min(s.shape.at(1), s.shape.at(2)));
  } else if (s.bench == BenchKind::attention) {
    kind = OpKind::attention;
    row.rows = s.x;
  } else if (s.bench == BenchKind::memory) {
    kind = OpKind::embedding;
  } else if (s.bench == BenchKind::runner) {  // the op row the simulator built for it
    row.rows = static_cast<double>(s.shape.at(0));
    row.weight_dim_min = static_cast<double>(s.shape.at(1));
  } else if (model::op_class(kind) == model::OpClass::gemm) {  // the smallest GEMM (launch)
    kind = OpKind::ffn_gate_up;
    row.rows = 1;
    row.weight_dim_min = 1;
  }
  return {kind, row};
}

}  // namespace

void compute_residuals(const std::vector<Sample>& samples, const simulator::HardwareProfile& profile, FitResult& out) {
  const simulator::Roofline rl = simulator::make_roofline(profile, model::DType::fp32, simulator::Sharding{});
  out.residuals.clear();
  std::map<std::string, std::vector<double>> errors;
  for (const Sample& s : samples) {
    // The bf16 and fp16 products are those peaks themselves; the fp32 roofline below
    // does not time them.
    if (s.bench == BenchKind::gemm_bf16 || s.bench == BenchKind::gemm_fp16) continue;
    const auto [kind, row] = as_op(s);
    const double predicted = simulator::op_time(kind, row, rl, nullptr).seconds;
    Residual r{s.name, s.bench, s.seconds, predicted, predicted / s.seconds - 1};
    errors[to_string(s.bench)].push_back(std::fabs(r.error));
    errors["all"].push_back(std::fabs(r.error));
    out.residuals.push_back(std::move(r));
  }
  out.summary.clear();
  for (auto& [key, e] : errors)
    out.summary[key] = {static_cast<int>(e.size()), median_of(e), *std::max_element(e.begin(), e.end())};
}

nlohmann::json residuals_json(const FitResult& fit) {
  nlohmann::json summary = nlohmann::json::object();
  for (const auto& [key, s] : fit.summary)
    summary[key] = {{"samples", s.samples}, {"median_abs_error", s.median_abs_error}, {"max_abs_error", s.max_abs_error}};
  nlohmann::json each = nlohmann::json::array();
  for (const Residual& r : fit.residuals)
    each.push_back({{"name", r.name}, {"bench", to_string(r.bench)}, {"measured_s", r.measured_s},
                    {"predicted_s", r.predicted_s}, {"error", r.error}});
  return {{"summary", summary}, {"samples", each}};
}

}  // namespace hdlab::calibration
