#pragma once
// Fitting a hardware profile's rates and efficiency curves to microbenchmark samples.
//
// The model fitted is the simulator's own roofline (simulator/roofline.hpp): a sample
// of class c with F executed FLOPs moving B bytes in `calls` backend calls takes
//   t = max(F / (peak * e(x)), B / (bandwidth * m(B))) + calls * launch
// with e the compute curve of its op (the vector ops: one curve per kernel, their
// kernels differ by an order of magnitude on a CPU) or of its class, and m the memory
// curve of its class. Fitted in order, each from the samples it explains, directly (no
// iterative optimiser: every number can be traced to the samples it came from):
//   launch     the median time of the cheapest smallest op (what any call costs);
//   peak       the best GEMM rate measured (FLOPs over time less launch): the fp32
//              matrix and vector peak of the profile; the bf16 and fp16 peaks likewise
//              from the gemm_bf16 and gemm_fp16 samples, where there are any (else the
//              fp32 peak stands for them: the CPU backend computes every dtype in fp32);
//   bandwidth  the stream bandwidth: the residual add (c = a + b, every thread) over
//              the largest sizes;
//   memory     the memory curve: the row gathers' bandwidth over their bytes;
//   gemm       gemm_memory from the smallest-M product of each weight shape (a
//              product of one row streams its weights); then the compute curve at each
//              M from the products the memory term leaves compute bound (median over
//              weight shapes); where none is (small M), the best efficiency seen there,
//              so those stay memory bound; then made non-decreasing in M (pool adjacent
//              violators: more rows never make a product less efficient, a dip is noise);
//   attention, the vector ops (per op) and the pooled vector class: the efficiency
//              each sample implies at its abscissa (median where several share one),
//              their memory term at the stream bandwidth (curves of one point, 1.0);
//   runner     the composite ops timed in forward passes (experts, shared experts,
//              router): an op curve each, from the efficiency each sample implies.
// The gemm_bf16 and gemm_fp16 samples give those peaks only: the curves and the residuals
// are of the fp32 samples, the precision the executor's ops run in.
// The launch samples give the launch overhead only (they run without the forward-pass
// context the other samples have); their residuals show how far a lone call is from it.
// Knots sit at the distinct abscissae (clustered in log x beyond `max_knots`). The
// residuals are computed with simulator::op_time on the finished profile, so they are
// exactly the errors the simulator makes on the calibration's own shapes.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/calibration/microbench.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::calibration {

struct FitOptions {
  int max_knots = 12;  // per curve
  // A GEMM counts as compute bound when its memory term is below this share of its time.
  double compute_bound_share = 0.7;
};

struct Residual {
  std::string name;
  BenchKind bench = BenchKind::gemm;
  double measured_s = 0;
  double predicted_s = 0;
  double error = 0;  // predicted / measured - 1
};

struct ResidualSummary {
  int samples = 0;
  double median_abs_error = 0;
  double max_abs_error = 0;
};

struct FitResult {
  double launch_s = 0;
  double peak_flop_per_s = 0;
  // The best bf16 and fp16 matrix rates; 0 when not measured (the fp32 peak stands in).
  double peak_bf16_flop_per_s = 0;
  double peak_fp16_flop_per_s = 0;
  double bandwidth_bytes_per_s = 0;
  // Keys as in a profile's "efficiency_curves": "gemm", "attention", "vector", "memory",
  // "gemm_memory", and op names ("attn_norm", "ffn_act", ...).
  std::map<std::string, simulator::EfficiencyCurve> curves;
  std::vector<Residual> residuals;
  std::map<std::string, ResidualSummary> summary;  // by bench kind, and "all"
};

// ConfigError("", ...) when the samples lack what a fit needs (a GEMM, a large copy,
// a launch sample).
FitResult fit_samples(const std::vector<Sample>& samples, const FitOptions& options = {});

// The fitted rates and curves written into a profile (peaks, bandwidth, launch,
// efficiency scalars at the curves' upper ends, curves); other fields kept.
void apply_fit(const FitResult& fit, simulator::HardwareProfile& profile);

// The op kinds a vector benchmark's curve times: the executor runs every RMSNorm of a
// layer (attention, FFN, QK, final, VWN slot norm) with one kernel, so a curve fitted on
// rms_norm samples serves all of them.
std::vector<model::OpKind> ops_timed_like(model::OpKind benchmarked);

// Residuals and summaries with simulator::op_time on a profile (used by fit_samples; a
// refit or a test can check any profile against samples).
void compute_residuals(const std::vector<Sample>& samples, const simulator::HardwareProfile& profile, FitResult& out);

nlohmann::json residuals_json(const FitResult& fit);

}  // namespace hdlab::calibration
