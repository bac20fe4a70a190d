// Profiles with fitted kernel models: a device fitted on its kerneldb tables, and a sibling
// derived from a fitted one by datasheet ratios. See kernel_fit.hpp.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "hdlab/calibration/kernel_fit.hpp"
#include "hdlab/calibration/kernel_validation.hpp"
#include "hdlab/model/error.hpp"
#include "kernel_shapes.hpp"

namespace hdlab::calibration {

using nlohmann::json;
using simulator::HardwareProfile;
using simulator::KernelModels;

namespace {

// Rows fitted and held out per table, as the split leaves them.
template <class Row>
json split_counts(const std::vector<Row>& rows) {
  std::int64_t held = 0;
  for (const Row& r : rows) held += held_out(r) ? 1 : 0;
  return {{"rows", rows.size()}, {"fitted_on", static_cast<std::int64_t>(rows.size()) - held}, {"held_out", held}};
}

json class_errors(const KernelValidation& v) {
  json out = json::array();
  for (const KernelClassStats& c : v.classes)
    out.push_back({{"class", c.op_class},
                   {"precision", c.precision},
                   {"held_out_rows", c.rows},
                   {"median_abs_error", c.median_abs_error},
                   {"p90_abs_error", c.p90_abs_error},
                   {"max_abs_error", c.max_abs_error},
                   {"median_signed_error", c.median_signed_error}});
  return out;
}

}  // namespace

HardwareProfile fitted_profile(const HardwareProfile& datasheet, const KernelDb& db, const KernelModels& models) {
  HardwareProfile p = datasheet;
  p.kernel_models = models;
  p.kernel_models->fit = json::object();
  HardwareProfile scored = p;  // the models as written, scored on the held-out rows
  const KernelValidation v = summarize_kernel_cases(predict_kerneldb(db, scored), 3);
  json& fit = p.kernel_models->fit;
  fit["data"] = {{"folder", db.folder},
                 {"device", db.device},
                 {"device_name", db.device_name},
                 {"files", db.files},
                 {"licence", "NVIDIA aiconfigurator kernel tables, Apache-2.0 (profiles/kerneldb/NOTICE)"}};
  fit["split"] = "calibration::held_out(): FNV-1a of each row's shape; the lowest fifth of the hash range is held out "
                 "and never fitted on";
  fit["rows"] = {{"gemm", split_counts(db.gemm)},
                 {"context_attention", split_counts(db.context_attention)},
                 {"generation_attention", split_counts(db.generation_attention)},
                 {"collectives", split_counts(db.collectives)},
                 {"moe", split_counts(db.moe)}};
  fit["method"] = "mean |log(predicted / measured)| minimised by NLopt Subplex over log parameters within physical "
                  "bounds (calibration/kernel_fit.hpp)";
  fit["held_out_errors"] = class_errors(v);
  std::string set_aside;
  const auto beyond_dram =
      std::count_if(db.generation_attention.begin(), db.generation_attention.end(),
                    [&](const AttentionRow& r) { return detail::reads_cache_above_dram(r, datasheet); });
  if (beyond_dram > 0) {
    fit["rows"]["generation_attention"]["faster_than_dram"] = beyond_dram;
    set_aside = fmt::format(" but {} decode rows whose time would read their cache faster than the datasheet's "
                            "memory bandwidth (never fitted; their own class in the error figures)",
                            beyond_dram);
  }
  p.sources["kernel_models"] = fmt::format(
      "hdlab calibrate --from-kerneldb on {} ({}): every parameter fitted on the rows the fixed split keeps in{}; "
      "error figures on the held-out rows in kernel_models.fit.held_out_errors",
      db.folder, db.device_name, set_aside);
  p.assumptions["kernel_models.vector"] =
      "no kerneldb table times element-wise kernels alone: their stream bandwidth is the decode-attention fit's (a "
      "kernel that only streams memory) and their latency the bf16 GEMM fit's (a launch and a short kernel)";
  for (const auto& [d, m] : models.moe_layer)
    p.assumptions[std::string("kernel_models.moe_layer.") + model::to_string(d)] =
        moe_fit_routing(db.moe, d) == MoeFitRouting::balanced
            ? "fitted on the balanced-routing moe_perf rows (the routing the cost model assumes)"
            : "no balanced-routing moe_perf rows: fitted on the power-law rows, with the collector's skewed load "
              "on the rank it times modelled (calibration/kerneldb.hpp, power_law_rank_load); the cost model "
              "routes tokens evenly";
  p.assumptions["kernel_models.gemm.fp16"] = "fp16 products take the bf16 fit (the same tensor-core rate and width)";
  p.assumptions["kernel_models.prefill_attention"] =
      "bf16 attention with an fp8 KV cache is timed by the fp8 kernel (TensorRT-LLM runs FP8 context attention "
      "then); a head dimension the tables lack takes the fixed costs of the next measured one up (the largest, "
      "beyond them)";
  return p;
}

KernelModels derive_kernel_models(const KernelModels& fitted, const HardwareProfile& from, const HardwareProfile& to) {
  if (!to.sms || *to.sms <= 0)
    throw model::ConfigError("/sms", to.name + " needs its streaming multiprocessors (\"sms\") to derive kernel models");
  KernelModels k = fitted;
  const double sm_ratio = *to.sms / fitted.sms;
  const double memory = to.memory_bandwidth_gb_per_s / from.memory_bandwidth_gb_per_s;
  auto compute = [&](model::DType d) {
    const double a = from.matrix_peak_flop_per_s(d), b = to.matrix_peak_flop_per_s(d);
    return b / a;
  };
  // The L2 keeps its fitted ratio to the DRAM (about 2x on A100, H100 and B200 alike),
  // and a resident footprint the datasheet L2 sizes' ratio.
  const double l2 = (to.l2_cache_mb && from.l2_cache_mb && *from.l2_cache_mb > 0) ? *to.l2_cache_mb / *from.l2_cache_mb
                                                                                 : 1.0;
  for (auto& [d, g] : k.gemm) {
    g.tensor_tflop_per_s *= compute(d);
    g.operand_tb_per_s *= sm_ratio;  // on-chip operand paths scale with the SMs
    g.memory_gb_per_s *= memory;
    g.l2_gb_per_s *= memory;
    g.l2_resident_mb *= l2;
  }
  for (auto& [d, a] : k.prefill_attention) {
    a.tensor_tflop_per_s *= compute(d);
    a.memory_gb_per_s *= memory;
    a.kv_gb_per_s *= memory;
  }
  for (auto& [d, a] : k.decode_attention) {  // per-block costs and rates: an SM's, kept
    a.tensor_tflop_per_s *= compute(model::DType::bf16);
    a.memory_gb_per_s *= memory;
    a.one_row.l2_gb_per_s *= sm_ratio;  // L2 to the SMs: scales with the SMs
  }
  k.vector.memory_gb_per_s *= memory;
  for (auto& [d, m] : k.moe_layer) m.token_gb_per_s *= memory;  // a stream, like the vector kernels
  // One-node collectives: NVLink bandwidth by the datasheet ratio, latencies kept.
  const double link = (to.nvlink_bandwidth_gb_per_s && from.nvlink_bandwidth_gb_per_s)
                          ? *to.nvlink_bandwidth_gb_per_s / *from.nvlink_bandwidth_gb_per_s
                          : 1.0;
  for (auto& by_gpus : k.collectives)
    for (auto& [p, regimes] : by_gpus)
      for (auto& r : regimes) r.bus_gb_per_s *= link;
  for (auto& [p, regimes] : k.custom_all_reduce)
    for (auto& r : regimes) r.bus_gb_per_s *= link;
  k.sms = *to.sms;
  k.device = "derived from " + fitted.device;
  k.fit = {{"derived_from", fitted.device},
           {"method", fmt::format("fitted models of {} scaled by datasheet ratios to {}: tensor rates x peak ratio "
                                  "(bf16 {:.3f}), memory, GEMM L2 and MoE token rates x bandwidth ratio {:.3f}, on-chip operand "
                                  "and decode L2 rates x SM ratio {:.3f}, GEMM L2-resident footprint x L2 size ratio "
                                  "{:.3f}, NVLink bus bandwidths x {:.3f}; latencies and shapes kept",
                                  from.name, to.name, compute(model::DType::bf16), memory, sm_ratio, l2, link)},
           {"fitted_held_out_errors", fitted.fit.contains("held_out_errors") ? fitted.fit["held_out_errors"] : json()}};
  return k;
}

}  // namespace hdlab::calibration
