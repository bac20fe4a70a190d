// Fits of the kernel models to kerneldb rows; see kernel_fit.hpp for what and how.
#include "hdlab/calibration/kernel_fit.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>
#include <limits>
#include <cmath>
#include <functional>
#include <utility>
#include <nlopt.hpp>

#include "hdlab/model/error.hpp"
#include "kernel_shapes.hpp"

namespace hdlab::calibration {

using simulator::CollectiveRegime;
using simulator::KernelModels;

namespace {

// One parameter: its starting value and the physical range it must stay in.
struct Bound {
  double init, lo, hi;
};

// A measured row as a model sees it.
template <class Shape>
struct Sample {
  Shape shape;
  double seconds;
};

// An even subsample of at most `max` rows, in a fixed order (the same fit every run).
template <class T>
std::vector<T> spread(const std::vector<T>& all, std::size_t max) {
  if (all.size() <= max) return all;
  std::vector<T> out;
  out.reserve(max);
  const double stride = static_cast<double>(all.size()) / static_cast<double>(max);
  for (std::size_t i = 0; i < max; ++i) out.push_back(all[static_cast<std::size_t>(static_cast<double>(i) * stride)]);
  return out;
}

// Minimises the mean |log(predicted / measured)| over `samples`, with Subplex over the
// logarithms of the parameters inside their bounds. Returns the parameters.
template <class Shape>
std::vector<double> fit(const std::vector<Bound>& bounds, const std::vector<Sample<Shape>>& samples,
                        const std::function<double(const std::vector<double>&, const Shape&)>& predict,
                        int max_evaluations, double* loss_out = nullptr) {
  const std::size_t n = bounds.size();
  std::vector<double> x(n), lo(n), hi(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = std::log(std::clamp(bounds[i].init, bounds[i].lo, bounds[i].hi));
    lo[i] = std::log(bounds[i].lo);
    hi[i] = std::log(bounds[i].hi);
  }
  struct Problem {
    const std::vector<Sample<Shape>>* samples;
    const std::function<double(const std::vector<double>&, const Shape&)>* predict;
    std::vector<double> p;
  } problem{&samples, &predict, std::vector<double>(n)};
  auto objective = [](const std::vector<double>& lx, std::vector<double>&, void* data) {
    auto* pr = static_cast<Problem*>(data);
    for (std::size_t i = 0; i < lx.size(); ++i) pr->p[i] = std::exp(lx[i]);
    double sum = 0;
    for (const auto& s : *pr->samples) sum += std::abs(std::log((*pr->predict)(pr->p, s.shape) / s.seconds));
    return sum / static_cast<double>(pr->samples->size());
  };
  nlopt::opt opt(nlopt::LN_SBPLX, static_cast<unsigned>(n));
  opt.set_lower_bounds(lo);
  opt.set_upper_bounds(hi);
  opt.set_min_objective(objective, &problem);
  opt.set_xtol_rel(1e-4);
  opt.set_maxeval(max_evaluations);
  double loss = 0;
  try {
    opt.optimize(x, loss);
  } catch (const nlopt::roundoff_limited&) {  // converged as far as doubles allow: keep x
  }
  if (loss_out) *loss_out = loss;
  std::vector<double> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = std::exp(x[i]);
  return p;
}

double peak_of(const DeviceFacts& f, model::DType d) {
  auto it = f.peak_tflop_per_s.find(d);
  if (it == f.peak_tflop_per_s.end() || it->second <= 0)
    throw model::ConfigError("/peak_" + std::string(model::to_string(d)) + "_tflop_per_s",
                             "the datasheet profile has no rate for a precision kerneldb measured");
  return it->second;
}

// ---- GEMM ----

simulator::GemmKernel gemm_from(const std::vector<double>& p, double element_bytes, bool quantised) {
  simulator::GemmKernel g;
  g.tensor_tflop_per_s = p[0];
  g.operand_tb_per_s = p[1];
  g.memory_gb_per_s = p[2];
  g.latency_us = p[3];
  g.overlap = p[4];
  g.k_step_ns = p[5];
  g.split_k_us = p[6];
  g.stream_k_us = p[7];
  g.epilogue_share = p[8];
  g.l2_resident_mb = p[9];
  g.l2_gb_per_s = p[10];
  if (quantised) {
    g.quant_latency_us = p[11];
    g.quant_passes = p[12];
  }
  g.element_bytes = element_bytes;
  return g;
}

simulator::GemmKernel fit_gemm(const std::vector<GemmRow>& rows, model::DType dtype, const std::string& name,
                               const DeviceFacts& f, const KernelFitOptions& o) {
  std::vector<Sample<simulator::GemmShape>> all;
  for (const GemmRow& r : rows)
    if (r.dtype == name && !held_out(r)) all.push_back({detail::gemm_shape(r), r.seconds});
  // Half the rows, fitted from two starts: a dozen parameters are fixed as well by 1500
  // rows as by 3000 (held-out medians within 0.1 point on all three devices, p90s within
  // 0.4), and the second start costs what the halving saves.
  const auto samples = spread(all, std::max<std::size_t>(1, o.max_rows / 2));
  const double peak = peak_of(f, dtype), bw = f.memory_gb_per_s, l2 = f.l2_cache_mb, e = detail::element_bytes(name);
  const bool quantised = dtype == model::DType::fp8;  // per-tensor: A is scaled and cast per call
  // The L2 rate lies between the DRAM's (so reading A from L2 is never slower, whatever B
  // the fit takes: B <= bw) and 4x it; the resident footprint is at most the datasheet's L2.
  std::vector<Bound> b = {{0.8 * peak, 0.3 * peak, 1.0 * peak},  // tensor peak, TFLOP/s
                          {50, 1, 1000},                         // operand rate, TB/s
                          {0.85 * bw, 0.3 * bw, 1.0 * bw},       // DRAM, GB/s
                          {3, 0.5, 30},                          // latency, us
                          {3, 1.2, 20},                          // overlap exponent
                          {0.5, 0.01, 20},                       // k step, ns
                          {2, 0.1, 20},                          // split-K reduction, us
                          {3, 0.1, 50},                          // stream-K fixup, us
                          {0.1, 0.001, 1},                       // epilogue share
                          {0.5 * l2, 1, l2},                     // L2-resident footprint, MB
                          {1.5 * bw, bw, 4 * bw}};               // L2 rate, GB/s
  if (quantised) b.insert(b.end(), {{5, 0.1, 50}, {2, 0.5, 8}});
  const std::function<double(const std::vector<double>&, const simulator::GemmShape&)> predict =
      [&](const std::vector<double>& p, const simulator::GemmShape& s) {
        return simulator::gemm_seconds(gemm_from(p, e, quantised), f.sms, s);
      };
  // The epilogue share and the stream-K fixup decide which schedule wins where, and one
  // local search stays on the side it starts: from an epilogue hidden behind the main loop
  // and a cheap stream-K (as Hopper's and Blackwell's kernels fit) and from a serial
  // epilogue without stream-K (as Ampere's). The lower loss is kept (kerneldb: the first
  // alone gives the A100 a held-out median of 6.8% instead of 6.4%, the second the H100's
  // bf16 a p90 of 13.1% instead of 12.7%).
  std::vector<double> best;
  double best_loss = std::numeric_limits<double>::infinity();
  for (const auto& [epilogue, stream_k] : {std::pair{0.1, 3.0}, std::pair{0.9, 10.0}}) {
    b[7].init = stream_k;
    b[8].init = epilogue;
    double loss = 0;
    std::vector<double> p = fit(b, samples, predict, o.max_evaluations, &loss);
    if (loss < best_loss) {
      best_loss = loss;
      best = std::move(p);
    }
  }
  return gemm_from(best, e, quantised);
}

// ---- attention ----

// Parameters: F, softmax, B, B_kv, then (latency, unit) per head dimension, then the
// window's cost when windowed rows were measured.
simulator::PrefillAttentionKernel prefill_from(const std::vector<double>& p, const std::vector<double>& head_dims,
                                               bool windows) {
  simulator::PrefillAttentionKernel a;
  a.tensor_tflop_per_s = p[0];
  a.softmax_flops = p[1];
  a.memory_gb_per_s = p[2];
  a.kv_gb_per_s = p[3];
  for (std::size_t i = 0; i < head_dims.size(); ++i) a.head_dims.push_back({head_dims[i], p[4 + 2 * i], p[5 + 2 * i]});
  a.window_us = windows ? p[4 + 2 * head_dims.size()] : 0;
  return a;
}

// The rows of one prefill kernel: those whose (activations, cache) precisions run it
// (prefill_kernel_dtype), full and windowed masks alike.
simulator::PrefillAttentionKernel fit_prefill(const std::vector<AttentionRow>& rows, model::DType dtype,
                                              const DeviceFacts& f, const KernelFitOptions& o) {
  std::vector<Sample<simulator::PrefillAttentionShape>> all;
  std::vector<double> head_dims;
  bool windows = false;
  for (const AttentionRow& r : rows) {
    const auto d = detail::model_dtype(r.attn_dtype), kv = detail::model_dtype(r.kv_dtype);
    if (!d || !kv || simulator::prefill_kernel_dtype(*d, *kv) != dtype || held_out(r)) continue;
    all.push_back({detail::prefill_shape(r), r.seconds});
    head_dims.push_back(r.head_dim);
    windows = windows || (r.window > 0 && r.window < r.isl);
  }
  std::sort(head_dims.begin(), head_dims.end());
  head_dims.erase(std::unique(head_dims.begin(), head_dims.end()), head_dims.end());
  const auto samples = spread(all, o.max_rows);
  const double peak = peak_of(f, dtype), bw = f.memory_gb_per_s;
  std::vector<Bound> b = {{0.7 * peak, 0.1 * peak, 1.0 * peak},  // tensor peak
                          {100, 1, 5000},                        // softmax work per pair
                          {0.5 * bw, 0.05 * bw, 1.0 * bw},       // queries and outputs
                          {0.5 * bw, 0.05 * bw, 1.0 * bw}};      // K and V, cache write and read
  for (std::size_t i = 0; i < head_dims.size(); ++i) b.insert(b.end(), {{12, 0.5, 50}, {3, 0.01, 50}});  // us
  if (windows) b.push_back({1, 0.01, 100});  // a window edge's block, us
  const std::function<double(const std::vector<double>&, const simulator::PrefillAttentionShape&)> predict =
      [&](const std::vector<double>& p, const simulator::PrefillAttentionShape& s) {
        return simulator::prefill_attention_seconds(prefill_from(p, head_dims, windows), f.sms, s);
      };
  // The tensor rate and the softmax work trade along a narrow valley (both set a pair's
  // cost) where one Subplex run can stop short: runs restart where the last ended while
  // that still lowers the loss by more than 1e-6 (at most four).
  std::vector<double> p;
  double loss = INFINITY, last = INFINITY;
  for (int run = 0; run < 4 && !(last - loss < 1e-6); ++run) {
    last = loss;
    p = fit(b, samples, predict, o.max_evaluations, &loss);
    for (std::size_t i = 0; i < b.size(); ++i) b[i].init = p[i];
  }
  return prefill_from(p, head_dims, windows);
}

// p: the 15 shared parameters (start, below), then the grouped kernel's latency for each
// of head_dims.
simulator::DecodeAttentionKernel decode_from(const std::vector<double>& p, const std::vector<double>& head_dims,
                                             double factor, bool span, double tensor) {
  simulator::DecodeAttentionKernel a;
  a.memory_gb_per_s = p[0];
  a.latency_us = p[1];
  a.overlap = p[2];
  a.grouped = {p[3], p[4], p[5], p[6], p[7], span, {}};
  for (std::size_t i = 0; i < head_dims.size(); ++i) a.grouped.head_dims.push_back({head_dims[i], p[15 + i]});
  a.one_row = {p[8], p[9], p[10], p[11], p[12], p[13], p[14]};
  a.grouped_min_block_factor = factor;
  a.tensor_tflop_per_s = tensor;
  return a;
}

// The bounds of decode_from's 15 shared parameters, B at most 0.9 of the datasheet's
// bandwidth `bw`: what a plain copy reaches (H100, H200 measured); the element-wise
// kernels take this bandwidth too.
std::vector<Bound> decode_start(double bw) {
  return {{0.85 * bw, 0.2 * bw, 0.9 * bw},  // memory, GB/s
          {6, 0.5, 50},                     // latency, us
          {3, 1.0, 20},                     // overlap exponent
          {2, 0.01, 50},                    // grouped block, us
          {0.05, 0.0001, 5},                // grouped, per query row, us
          {40, 0.5, 5000},                  // grouped block, GB/s
          {1, 0.25, 32},                    // grouped resident blocks per SM
          {100, 1, 512},                    // grouped block's least keys
          {2, 0.01, 50},                    // one-row block, us
          {40, 0.5, 5000},                  // one-row block, GB/s
          {2, 0.25, 32},                    // one-row resident blocks per SM
          {1, 0.25, 64},                    // one-row split target, blocks per SM
          {65536, 4096, 1e6},               // one-row keys of a pass x hd
          {2, 0.01, 20},                    // one-row split variant, us
          {2 * bw, bw, 20 * bw}};           // one-row L2 reads, GB/s
}

// Every row of the cache precision the split keeps in, sliding windows included (the
// model reads a window's keys out of its whole context), but those faster than a step's
// read of its cache can be (kernel_shapes.hpp).
simulator::DecodeAttentionKernel fit_decode(const std::vector<AttentionRow>& rows, const std::string& kv_name,
                                            const DeviceFacts& f, const KernelFitOptions& o) {
  std::vector<Sample<simulator::DecodeAttentionShape>> all;
  std::vector<double> head_dims;  // the grouped kernel's, each compiled apart
  for (const AttentionRow& r : rows)
    if (r.kv_dtype == kv_name && !held_out(r) && !detail::reads_cache_above_dram(r, f.memory_gb_per_s, f.l2_cache_mb)) {
      all.push_back({detail::decode_shape(r), r.seconds});
      if (r.heads > r.kv_heads) head_dims.push_back(r.head_dim);
    }
  std::sort(head_dims.begin(), head_dims.end());
  head_dims.erase(std::unique(head_dims.begin(), head_dims.end()), head_dims.end());
  const auto samples = spread(all, o.max_rows);
  // One query row a sequence: the tables never make decode compute-bound, so the tensor
  // rate is the datasheet's, not fitted.
  const double peak = peak_of(f, model::DType::bf16);
  const std::vector<Bound> start = decode_start(f.memory_gb_per_s);
  // Two discrete choices: the dispatch's block factor (TensorRT-LLM's 4, or none: the
  // grouped kernel whatever the grid), then whether the grouped splits span a window's
  // whole context (tried where the rows have a window shorter than their context). Each
  // factor is fitted to the end (three Subplex runs, each from where the last stopped) and
  // the lower loss on the fitted rows wins: a brief first run ranked the A100's two factors
  // the other way round (0.1246 for none against 0.1276 for 4, 0.1224 against 0.1213 at the
  // end). Each span is then fitted to the end with the per-head-dimension refinement below,
  // which turns the H100 fp8 table's span round (0.1515 spanning against 0.1524 not,
  // 0.1143 against 0.1107 refined). (Refining both factors as well would turn the A100's to
  // none by 0.13% of the loss, at about 9 s more for each of the H100 and B200 fits.)
  auto predict_with = [&](double factor, bool span, const std::vector<double>& dims) {
    return std::function<double(const std::vector<double>&, const simulator::DecodeAttentionShape&)>(
        [&, factor, span](const std::vector<double>& p, const simulator::DecodeAttentionShape& s) {
          return simulator::decode_attention_seconds(decode_from(p, dims, factor, span, peak), f.sms, s);
        });
  };
  struct Candidate {
    std::vector<double> p;
    double loss = INFINITY, factor = 0;
    bool span = true;
    std::vector<double> dims;  // head dimensions with a latency of their own (p[15...])
  };
  // Three Subplex runs, each from where the last stopped.
  auto fit_in_runs = [&](std::vector<Bound> b, double factor, bool span, const std::vector<double>& dims,
                         double& loss) {
    std::vector<double> p;
    for (int evaluations : {o.max_evaluations / 3, o.max_evaluations / 2, o.max_evaluations / 3}) {
      p = fit(b, samples, predict_with(factor, span, dims), evaluations, &loss);
      for (std::size_t i = 0; i < b.size(); ++i) b[i].init = p[i];
    }
    return p;
  };
  // The grouped kernel's latency per head dimension (each compiled apart): a
  // refinement from a candidate's shared-model optimum, each starting at the shared latency, kept
  // where it lowers the loss. (Fitting them with the rest from the start ended higher on
  // the B200's tables than the shared model: 0.0885 against 0.0879.)
  auto refine = [&](Candidate c) {
    if (head_dims.empty()) return c;
    std::vector<Bound> b = start;
    for (std::size_t i = 0; i < b.size(); ++i) b[i].init = c.p[i];
    b.insert(b.end(), head_dims.size(), Bound{c.p[1], 0.5, 50});  // us
    double loss = INFINITY;
    std::vector<double> p = fit_in_runs(b, c.factor, c.span, head_dims, loss);
    if (loss < c.loss) c = Candidate{std::move(p), loss, c.factor, c.span, head_dims};
    return c;
  };
  auto fit_to_end = [&](double factor, bool span) {
    Candidate c{{}, INFINITY, factor, span, {}};
    c.p = fit_in_runs(start, factor, span, {}, c.loss);
    return c;
  };
  Candidate best = fit_to_end(0, true);
  if (Candidate c = fit_to_end(4, true); c.loss < best.loss) best = std::move(c);
  const bool windows =
      std::any_of(samples.begin(), samples.end(), [](const auto& s) { return s.shape.context > s.shape.keys; });
  best = refine(std::move(best));
  if (Candidate c = windows ? refine(fit_to_end(best.factor, false)) : Candidate{}; c.loss < best.loss)
    best = std::move(c);
  return decode_from(best.p, best.dims, best.factor, best.span, peak);
}

// ---- collectives ----

struct CollectiveShape {
  simulator::Collective op;
  double bytes, gpus;
};

std::vector<CollectiveRegime> fit_regimes(const std::vector<Sample<CollectiveShape>>& samples, double link_gb_per_s,
                                          const KernelFitOptions& o) {
  // Three protocols (NCCL's LL, LL128 and Simple, or a one-shot / two-shot all-reduce):
  // small latency and bandwidth, middling both, large both. Physical bounds: a collective
  // costs at least a launch and a handshake (2 us), and its bus bandwidth stays within
  // 1.2 x the link's per-direction figure (the bus-bandwidth convention counts a ring's
  // traffic; a little over the link absorbs what the datasheet rounds). Without them a
  // regime can fit a handful of large messages with an impossible rate that then
  // extrapolates beyond the data (a 1 GiB all-reduce at 547 GB/s on a 300 GB/s link).
  const double bus_max = 1.2 * link_gb_per_s;
  auto make = [](const std::vector<double>& p) {
    return std::vector<CollectiveRegime>{{p[0], p[1]}, {p[2], p[3]}, {p[4], p[5]}};
  };
  const std::function<double(const std::vector<double>&, const CollectiveShape&)> predict =
      [&](const std::vector<double>& p, const CollectiveShape& s) {
        return simulator::collective_seconds(make(p), s.op, s.bytes, s.gpus);
      };
  // A min over regimes has local minima (a regime that never wins stays where it
  // started), so the fit starts from three fixed spreads of the regimes and keeps the
  // best; the tables have a few dozen rows per group, so this costs little.
  const double starts[3][6] = {{5, 10, 15, 100, 40, 0.9 * bus_max},
                               {3, 20, 10, 0.3 * bus_max, 30, 0.95 * bus_max},
                               {8, 5, 25, 0.5 * bus_max, 100, bus_max}};
  std::vector<double> best;
  double best_loss = std::numeric_limits<double>::infinity();
  for (const auto& start : starts) {
    const std::vector<Bound> b = {{start[0], 2, 2000}, {std::min(start[1], bus_max), 1, bus_max},
                                  {start[2], 2, 2000}, {std::min(start[3], bus_max), 1, bus_max},
                                  {start[4], 2, 5000}, {std::min(start[5], bus_max), 1, bus_max}};
    double loss = 0;
    std::vector<double> p = fit(b, samples, predict, o.max_evaluations, &loss);
    if (loss < best_loss) {
      best_loss = loss;
      best = std::move(p);
    }
  }
  std::vector<CollectiveRegime> r = make(best);
  std::sort(r.begin(), r.end(), [](const auto& x, const auto& y) { return x.alpha_us < y.alpha_us; });
  return r;
}

void fit_collectives(const std::vector<CollectiveRow>& rows, double link_gb_per_s, const KernelFitOptions& o,
                     KernelModels& out) {
  // (library, op, gpus) -> the 2-byte rows left in by the split
  std::map<std::tuple<std::string, int, int>, std::vector<Sample<CollectiveShape>>> groups;
  for (const CollectiveRow& r : rows) {
    const auto op = detail::collective_of(r.op);
    if (!op || detail::element_bytes(r.dtype) != 2 || held_out(r)) continue;
    groups[{r.library, static_cast<int>(*op), static_cast<int>(r.gpus)}].push_back({{*op, r.bytes, r.gpus}, r.seconds});
  }
  for (const auto& [key, samples] : groups) {
    const auto& [library, op, gpus] = key;
    if (samples.size() < 6) continue;  // too few sizes to tell three regimes apart
    auto regimes = fit_regimes(samples, link_gb_per_s, o);
    if (library == "custom") out.custom_all_reduce[gpus] = std::move(regimes);
    else out.collectives[static_cast<std::size_t>(op)][gpus] = std::move(regimes);
  }
}

}  // namespace

DeviceFacts device_facts(const simulator::HardwareProfile& h) {
  DeviceFacts f;
  if (!h.sms || *h.sms <= 0)
    throw model::ConfigError("/sms", "the datasheet profile " + h.name + " needs its streaming multiprocessors (\"sms\")");
  f.sms = *h.sms;
  f.peak_tflop_per_s[model::DType::bf16] = h.peak_bf16_tflop_per_s;
  f.peak_tflop_per_s[model::DType::fp16] = h.peak_fp16_tflop_per_s;
  if (h.peak_fp8_tflop_per_s) f.peak_tflop_per_s[model::DType::fp8] = *h.peak_fp8_tflop_per_s;
  f.memory_gb_per_s = h.memory_bandwidth_gb_per_s;
  if (!h.l2_cache_mb || *h.l2_cache_mb < 1)
    throw model::ConfigError("/l2_cache_mb", "the datasheet profile " + h.name +
                                                 " needs its L2 cache size (at least 1 MB) to bound the GEMM fit");
  f.l2_cache_mb = *h.l2_cache_mb;
  if (!h.nvlink_bandwidth_gb_per_s || *h.nvlink_bandwidth_gb_per_s <= 0)
    throw model::ConfigError("/nvlink_bandwidth_gb_per_s",
                             "the datasheet profile " + h.name + " needs its NVLink bandwidth to bound the collective fits");
  f.nvlink_gb_per_s = *h.nvlink_bandwidth_gb_per_s;
  return f;
}

namespace {

// Runs independent fits on up to `threads` threads (0: one per core), taking them in the
// order given (the longest first keeps the last one short). Each writes only its own
// result and the models are pure functions (their memos are per thread), so the fit is
// the same for any thread count. The error of the first failed fit, in the order given, is
// rethrown: the same message however the fits interleave.
void run_fits(const std::vector<std::function<void()>>& fits, int threads) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t n = std::min(fits.size(), static_cast<std::size_t>(threads > 0 ? threads : cores));
  std::vector<std::exception_ptr> errors(fits.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < fits.size(); i = next++) {
      try {
        fits[i]();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < n; ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {  // no thread to be had: fewer run the same fits
      break;
    }
  }
  work();
  for (std::thread& t : helpers) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace

KernelModels fit_kernel_models(const KernelDb& db, const DeviceFacts& facts, const KernelFitOptions& o) {
  KernelModels k;
  k.device = db.device;
  k.sms = facts.sms;
  // Each fit below fills its own slot; the maps are filled after, on this thread.
  struct Slots {
    std::optional<simulator::GemmKernel> gemm;
    std::optional<simulator::PrefillAttentionKernel> prefill;
    std::optional<simulator::DecodeAttentionKernel> decode;
  };
  const std::array<const char*, 2> names = {"bfloat16", "fp8"};
  std::array<Slots, 2> slots;
  std::vector<std::function<void()>> decode_fits, other_fits;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const char* name = names[i];
    const model::DType d = *detail::model_dtype(name);
    const bool rate = facts.peak_tflop_per_s.count(d) > 0;
    if (rate && std::any_of(db.gemm.begin(), db.gemm.end(), [&](const GemmRow& r) { return r.dtype == name; }))
      other_fits.push_back([&, i, d, name] { slots[i].gemm = fit_gemm(db.gemm, d, name, facts, o); });
    const bool prefill =
        std::any_of(db.context_attention.begin(), db.context_attention.end(), [&](const AttentionRow& r) {
          const auto a = detail::model_dtype(r.attn_dtype), kv = detail::model_dtype(r.kv_dtype);
          return a && kv && simulator::prefill_kernel_dtype(*a, *kv) == d;
        });
    if (rate && prefill)
      other_fits.push_back([&, i, d] { slots[i].prefill = fit_prefill(db.context_attention, d, facts, o); });
    if (std::any_of(db.generation_attention.begin(), db.generation_attention.end(),
                    [&](const AttentionRow& r) { return r.kv_dtype == name; }))
      decode_fits.push_back([&, i, name] { slots[i].decode = fit_decode(db.generation_attention, name, facts, o); });
  }
  if (std::none_of(db.gemm.begin(), db.gemm.end(), [](const GemmRow& r) { return r.dtype == "bfloat16"; }))
    throw model::ConfigError(db.folder + "/gemm_perf.csv", "has no bfloat16 rows: nothing to anchor the models on");
  other_fits.push_back([&] { fit_collectives(db.collectives, facts.nvlink_gb_per_s, o, k); });
  std::vector<std::function<void()>> fits = std::move(decode_fits);  // the decode fits take longest
  fits.insert(fits.end(), other_fits.begin(), other_fits.end());
  run_fits(fits, o.threads);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const model::DType d = *detail::model_dtype(names[i]);
    if (slots[i].gemm) k.gemm[d] = *slots[i].gemm;
    if (slots[i].prefill) k.prefill_attention[d] = *slots[i].prefill;
    if (slots[i].decode) k.decode_attention[d] = *slots[i].decode;
  }
  k.gemm[model::DType::fp16] = k.gemm[model::DType::bf16];  // the same tensor-core rate and width
  // No table times element-wise kernels alone (kernel_fit.hpp): a streaming kernel's
  // bandwidth and a short kernel's latency.
  k.vector.memory_gb_per_s = k.decode_attention.count(model::DType::bf16)
                                 ? k.decode_attention[model::DType::bf16].memory_gb_per_s
                                 : k.gemm[model::DType::bf16].memory_gb_per_s;
  k.vector.latency_us = k.gemm[model::DType::bf16].latency_us;
  for (const auto& [d, gemm] : k.gemm)
    if (auto m = fit_moe_layer(db.moe, d, gemm, k.vector, k.sms, o)) k.moe_layer[d] = *m;
  return k;
}

MoeFitRouting moe_fit_routing(const std::vector<MoeRow>& rows, model::DType dtype) {
  bool power_law = false;
  for (const MoeRow& r : rows) {
    if (detail::model_dtype(r.dtype) != dtype) continue;
    if (r.distribution == "balanced") return MoeFitRouting::balanced;
    power_law = power_law || power_law_alpha(r.distribution).has_value();
  }
  return power_law ? MoeFitRouting::power_law : MoeFitRouting::none;
}

// A row as the MoE layer fit sees it: the composition's time, which the fit
// does not move, and the bytes of the tokens routed.
namespace {
struct MoeSample {
  double composed_s, token_bytes;
};
}  // namespace

std::optional<simulator::MoeLayerKernel> fit_moe_layer(const std::vector<MoeRow>& rows, model::DType dtype,
                                                       const simulator::GemmKernel& gemm,
                                                       const simulator::VectorKernel& vector, double sms,
                                                       const KernelFitOptions& o) {
  const bool balanced = moe_fit_routing(rows, dtype) == MoeFitRouting::balanced;
  std::vector<Sample<MoeSample>> all;
  for (const MoeRow& r : rows) {
    if (held_out(r) || detail::model_dtype(r.dtype) != dtype) continue;
    if (balanced ? r.distribution != "balanced" : !power_law_alpha(r.distribution)) continue;
    const simulator::MoeShape s = detail::moe_shape(r);
    all.push_back({{simulator::moe_seconds(gemm, vector, sms, s), s.layer_tokens * s.hidden * s.element_bytes},
                   r.seconds});
  }
  if (all.empty()) return std::nullopt;
  const std::vector<Bound> b = {{10, 0.1, 500},     // latency, us
                                {2000, 10, 1e5}};   // token rate, GB/s
  const std::function<double(const std::vector<double>&, const MoeSample&)> predict =
      [](const std::vector<double>& p, const MoeSample& s) {
        return s.composed_s + simulator::moe_layer_seconds({p[0], p[1]}, s.token_bytes);
      };
  const std::vector<double> p = fit(b, spread(all, o.max_rows), predict, o.max_evaluations);
  return simulator::MoeLayerKernel{p[0], p[1]};
}

}  // namespace hdlab::calibration
