#pragma once
// Fitting the kernel models of simulator/kernel_models.hpp to measured kernels (kerneldb).
//
// Each model's parameters are fitted per precision on the rows held_out() leaves in (the
// fixed 80%), by minimising the mean |log(predicted / measured)| (a relative error, so a
// 3 us kernel counts as much as a 30 ms one; the log keeps too-fast and too-slow
// symmetric) with NLopt's Subplex over the logarithms of the parameters, inside bounds
// that keep each one physical (a peak between 0.3 and 1.0 of the datasheet's, a latency
// between 0.1 and 50 us, ...). Starting points come from the datasheet profile. Large
// tables are fitted on a fixed, evenly spread subsample (max_rows; the GEMM half of it,
// from two starts) to keep the fit of all three devices under a minute on 2 cores; the
// error figures are computed on every row.
//
// What is fitted from which table:
//   gemm              gemm_perf, per gemm_dtype (bfloat16 -> bf16, fp8 -> fp8: per-tensor
//                     scaling, so the on-the-fly quantisation of A is part of the fit); the
//                     L2-resident footprint is bounded by the datasheet's l2_cache_mb
//   prefill_attention context_attention_perf, per kernel precision (prefill_kernel_dtype:
//                     bf16 from bfloat16 rows with a bfloat16 cache, fp8 from fp8 rows and
//                     bfloat16 rows with an fp8 cache), full and sliding-window rows; the
//                     fixed costs per head dimension the table measured, the window's
//                     cost only where it has windowed rows (else 0)
//   decode_attention  generation_attention_perf, per kv_cache_dtype, sliding-window rows
//                     included, rows faster than the datasheet's DRAM could read their
//                     cache left out (A100: 351); the dispatch factor (0 or TensorRT-LLM's 4)
//                     is chosen by the fit
//   collectives       nccl_perf, per op and GPU count, on the 2-byte (half) rows; the
//                     int8 rows are predicted from their bytes and reported, not fitted
//   custom_all_reduce custom_allreduce_perf, per GPU count
//   vector            no table times element-wise kernels alone: the stream bandwidth is
//                     the decode-attention fit's (a kernel that only streams memory), the
//                     latency the bf16 GEMM fit's (a launch and a short kernel); stated in
//                     the profile's assumptions
//   moe_layer         moe_perf, per moe_dtype: the layer's own latency and token rate on
//                     top of the composition the cost model builds from the GEMM and
//                     vector models (kernel_models.hpp), on the balanced-routing rows
//                     (else the power-law ones, their skew modelled: fit_moe_layer);
//                     kernel_validation predicts every MoE row and reports per routing
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/kernel_models.hpp"

namespace hdlab::calibration {

// What the fit starts from and bounds against: the device's datasheet figures.
struct DeviceFacts {
  double sms = 0;                                   // streaming multiprocessors
  std::map<model::DType, double> peak_tflop_per_s;  // dense tensor peaks by input precision
  double memory_gb_per_s = 0;
  double l2_cache_mb = 0;                           // bounds the GEMM's L2-resident footprint
  double nvlink_gb_per_s = 0;                       // per direction (bounds the collectives' bus bandwidth)
};
// From a datasheet hardware profile: its peaks, bandwidths, L2 size and "sms".
DeviceFacts device_facts(const simulator::HardwareProfile& datasheet);

struct KernelFitOptions {
  std::size_t max_rows = 3000;  // rows per fitted model (an even subsample beyond)
  int max_evaluations = 3000;   // objective evaluations per model
  int threads = 0;              // fits run at once (0: one per core); the models do not depend on it
};

// Fits every model the tables support. ConfigError when the GEMM table has no bfloat16
// rows (nothing to anchor the profile on).
simulator::KernelModels fit_kernel_models(const KernelDb& db, const DeviceFacts& facts,
                                          const KernelFitOptions& options = {});

// The MoE layer's own costs (simulator::MoeLayerKernel: latency and token rate) for the
// products' precision `dtype`, fitted on the rows held_out() leaves in on top of the
// composition of `gemm` and `vector` (moe_seconds): the balanced-routing rows where the
// table has them (the routing the cost model assumes), else the power-law rows, each
// with the collector's skewed load on its timed rank (kerneldb.hpp's
// power_law_rank_load); nullopt without rows of the precision.
// moe_fit_routing: which of them the fit takes (none: no rows of the precision).
enum class MoeFitRouting { none, balanced, power_law };
MoeFitRouting moe_fit_routing(const std::vector<MoeRow>& rows, model::DType dtype);
std::optional<simulator::MoeLayerKernel> fit_moe_layer(const std::vector<MoeRow>& rows, model::DType dtype,
                                                       const simulator::GemmKernel& gemm,
                                                       const simulator::VectorKernel& vector, double sms,
                                                       const KernelFitOptions& options = {});

// The profile of a device: the datasheet profile with the fitted models, its name and
// sources, and the fit's provenance and held-out error figures in kernel_models.fit.
simulator::HardwareProfile fitted_profile(const simulator::HardwareProfile& datasheet, const KernelDb& db,
                                          const simulator::KernelModels& models);

// A sibling device without measurements (H200 from H100, H20 from H100): the fitted
// models scaled by datasheet ratios (tensor rates by the peak ratio, memory rates by the
// bandwidth ratio, SMs replaced), everything else kept; the profile says so.
simulator::KernelModels derive_kernel_models(const simulator::KernelModels& fitted,
                                             const simulator::HardwareProfile& fitted_datasheet,
                                             const simulator::HardwareProfile& target_datasheet);

}  // namespace hdlab::calibration
