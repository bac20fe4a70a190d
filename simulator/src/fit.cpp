// Does a phase fit device memory, and what is the smallest change that does (fit.hpp).
#include "hdlab/simulator/fit.hpp"

#include <algorithm>
#include <functional>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hdlab/model/error.hpp"
#include "hdlab/simulator/cost_model.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"

namespace hdlab::simulator {

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

double total(const std::vector<MemoryPart>& parts) {
  double bytes = 0;
  for (const MemoryPart& p : parts) bytes += p.bytes;
  return bytes;
}

std::int64_t batch_of(const Scenario& s, FitPhase p) {
  switch (p) {
    case FitPhase::decode: return s.decode.batch;
    case FitPhase::prefill: return s.prefill.batch;
    default: return s.train.micro_batch;
  }
}

std::int64_t tokens_of(const Scenario& s, FitPhase p) {
  switch (p) {
    case FitPhase::decode: return s.decode.context;
    case FitPhase::prefill: return s.prefill.tokens;
    default: return s.train.seq_len;
  }
}

// The scenario with the phase's batch and the tensor-parallel degree set.
Scenario with_layout(const Scenario& s, FitPhase p, std::int64_t batch, std::int64_t tp) {
  Scenario out = s;
  out.parallel.tp = tp;
  if (p == FitPhase::decode) out.decode.batch = batch;
  else if (p == FitPhase::prefill) out.prefill.batch = batch;
  else out.train.micro_batch = batch;
  return out;
}

// Per device, by part: train_memory for training; inference weights plus the batch's KV
// cache (logical bytes split over the min(tp, G) x ep devices that hold its heads).
std::vector<MemoryPart> phase_parts(const model::Config& c, const HardwareProfile& hw, const Scenario& s, FitPhase p) {
  auto ctx = std::make_unique<CostContext>();
  make_context(c, hw, s, *ctx);
  if (p == FitPhase::train) {
    auto pass = std::make_unique<PassCost>();
    auto train = std::make_unique<TrainResult>();
    cost_train(*ctx, *pass, *train);
    const TrainMemory& m = train->memory;
    return {{"weights", m.weight_bytes},
            {"gradients", m.grad_bytes},
            {"optimizer state", m.optimizer_bytes},
            {"activations", m.activation_bytes}};
  }
  const double kv = d(batch_of(s, p)) * kv_bytes_per_seq(*ctx, tokens_of(s, p)) / (ctx->sharding.kv_tp * ctx->sharding.ep);
  return {{"weights", inference_weight_bytes(*ctx)}, {"KV cache", kv}};
}

std::int64_t busiest_device(const PipelineResult& r) {
  std::int64_t best = 0;
  for (std::size_t i = 1; i < r.devices.size(); ++i)
    if (r.devices[i].memory_bytes() > r.devices[static_cast<std::size_t>(best)].memory_bytes())
      best = static_cast<std::int64_t>(i);
  return best;
}

// The need of a layout in bytes per device, or nothing when the layout is refused (a tp
// that does not divide the heads, more stages than layers...).
using NeedFn = std::function<std::optional<double>(std::int64_t batch, std::int64_t tp, std::int64_t pp)>;

// Largest b in [1, hi] with fits(b), fits true up to some b and false above; 0 if none.
std::int64_t largest_fitting(std::int64_t hi, const std::function<bool(std::int64_t)>& fits) {
  std::int64_t lo = 0;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// The two changes of fit.hpp, for a phase that does not fit.
void search_changes(PhaseFit& f, const NeedFn& need, std::int64_t gpus_per_node, std::int64_t layers) {
  const FitLayout cur = f.current;
  f.max_tp = std::max(cur.tp, gpus_per_node);
  f.max_pp = f.phase == FitPhase::pipeline ? std::max(cur.pp, layers) : cur.pp;
  if (f.fits()) return;
  auto fitting = [&](std::int64_t b, std::int64_t tp, std::int64_t pp) -> std::optional<FitLayout> {
    const std::optional<double> bytes = need(b, tp, pp);
    if (!bytes || *bytes > f.capacity_bytes) return std::nullopt;
    return FitLayout{b, tp, pp, *bytes};
  };
  const std::int64_t b =
      largest_fitting(cur.batch - 1, [&](std::int64_t x) { return fitting(x, cur.tp, cur.pp).has_value(); });
  if (b >= 1) f.smaller_batch = fitting(b, cur.tp, cur.pp);
  std::vector<FitLayout> candidates;
  for (std::int64_t tp = cur.tp; tp <= f.max_tp; tp *= 2)
    for (std::int64_t pp = cur.pp; pp <= f.max_pp; pp *= 2)
      if (tp != cur.tp || pp != cur.pp) candidates.push_back({cur.batch, tp, pp, 0});
  std::stable_sort(candidates.begin(), candidates.end(), [](const FitLayout& x, const FitLayout& y) {
    return x.devices() != y.devices() ? x.devices() < y.devices() : x.tp < y.tp;
  });
  for (const FitLayout& l : candidates)
    if ((f.more_devices = fitting(l.batch, l.tp, l.pp))) break;
}

// A refused layout is no candidate; any other error is a bug and propagates.
template <class F>
std::optional<double> unless_refused(F&& need) {
  try {
    return need();
  } catch (const model::ConfigError&) {
    return std::nullopt;
  }
}

PhaseFit phase_fit(const model::Config& c, const HardwareProfile& hw, const Scenario& s, FitPhase p) {
  PhaseFit f;
  f.phase = p;
  f.tokens = tokens_of(s, p);
  f.parts = phase_parts(c, hw, s, p);
  f.current = {batch_of(s, p), s.parallel.tp, 1, total(f.parts)};
  f.memory_bytes = hw.memory_bytes();
  f.capacity_bytes = p == FitPhase::train ? f.memory_bytes : f.memory_bytes * s.kv.memory_utilization;
  const NeedFn need = [&](std::int64_t batch, std::int64_t tp, std::int64_t) {
    return unless_refused([&] { return total(phase_parts(c, hw, with_layout(s, p, batch, tp), p)); });
  };
  search_changes(f, need, s.parallel.gpus_per_node, c.effective.num_layers);
  return f;
}

std::string gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

std::string phase_label(const PhaseFit& f) {
  const std::int64_t b = f.current.batch;
  switch (f.phase) {
    case FitPhase::decode: return fmt::format("decode at batch {} x {} tokens", b, f.tokens);
    case FitPhase::prefill: return fmt::format("prefill of {} x {}-token prompts", b, f.tokens);
    case FitPhase::train: return fmt::format("training at micro-batch {} x {} tokens", b, f.tokens);
    case FitPhase::pipeline:
      return fmt::format("pipeline training on {} stages at micro-batch {} x {} tokens", f.current.pp, b, f.tokens);
  }
  return "";
}

const char* batch_knob(FitPhase p) { return p == FitPhase::decode || p == FitPhase::prefill ? "batch" : "micro-batch"; }

}  // namespace

const char* to_string(FitPhase p) {
  switch (p) {
    case FitPhase::decode: return "decode";
    case FitPhase::prefill: return "prefill";
    case FitPhase::train: return "train";
    case FitPhase::pipeline: return "pipeline";
  }
  return "";
}

MemoryFit memory_fit(const model::Config& c, const HardwareProfile& hw, const Scenario& s) {
  check_scenario(c, hw, s);
  return {phase_fit(c, hw, s, FitPhase::decode), phase_fit(c, hw, s, FitPhase::prefill),
          phase_fit(c, hw, s, FitPhase::train)};
}

PhaseFit pipeline_fit(const model::Config& c, const HardwareProfile& hw, const Scenario& s, const PipelineOptions& o,
                      const PipelineResult& r) {
  PhaseFit f;
  f.phase = FitPhase::pipeline;
  f.tokens = s.train.seq_len;
  f.memory_bytes = f.capacity_bytes = hw.memory_bytes();
  if (r.devices.empty()) return f;
  f.device = busiest_device(r);
  const PipelineDevice& dev = r.devices[static_cast<std::size_t>(f.device)];
  f.parts = {{"weights", dev.weight_bytes},
             {"gradients", dev.grad_bytes},
             {"optimizer state", dev.optimizer_bytes},
             {"peak activations", dev.peak_activation_bytes}};
  f.current = {s.train.micro_batch, s.parallel.tp, o.stages, dev.memory_bytes()};
  const NeedFn need = [&](std::int64_t batch, std::int64_t tp, std::int64_t pp) {
    return unless_refused([&] {
      PipelineOptions options = o;
      options.stages = pp;
      const PipelineResult run = simulate_pipeline(c, hw, with_layout(s, FitPhase::pipeline, batch, tp), options);
      return run.devices[static_cast<std::size_t>(busiest_device(run))].memory_bytes();
    });
  };
  search_changes(f, need, s.parallel.gpus_per_node, c.effective.num_layers);
  return f;
}

std::string describe_changes(const PhaseFit& f) {
  std::vector<std::string> changes;
  if (f.smaller_batch)
    changes.push_back(fmt::format("{} {} ({})", batch_knob(f.phase), f.smaller_batch->batch, gb(f.smaller_batch->need_bytes)));
  if (const auto& l = f.more_devices) {
    std::string layout = fmt::format("tp {}", l->tp);
    if (f.phase == FitPhase::pipeline) layout += fmt::format(" x pp {}", l->pp);
    changes.push_back(fmt::format("{} ({} devices, {} each)", layout, l->devices(), gb(l->need_bytes)));
  }
  return changes.empty() ? std::string() : fmt::format("{}", fmt::join(changes, ", or "));
}

std::string describe(const PhaseFit& f) {
  // The busiest device: a pipeline's stages differ, the other phases' devices do not.
  const std::string need = f.phase == FitPhase::pipeline
                               ? fmt::format("device {} needs {}", f.device, gb(f.current.need_bytes))
                               : fmt::format("{} per device", gb(f.current.need_bytes));
  const std::string capacity =
      f.capacity_bytes < f.memory_bytes
          ? fmt::format("{} usable ({:.2g} x {})", gb(f.capacity_bytes), f.capacity_bytes / f.memory_bytes, gb(f.memory_bytes))
          : gb(f.memory_bytes);
  if (f.fits()) return fmt::format("{} fits: {} of {}.", phase_label(f), need, capacity);
  std::vector<std::string> parts;
  for (const MemoryPart& p : f.parts) parts.push_back(p.name + " " + gb(p.bytes));
  std::string s =
      fmt::format("{} does not fit: {} ({}) > {}.", phase_label(f), need, fmt::join(parts, " + "), capacity);
  const std::string changes = describe_changes(f);
  if (!changes.empty()) return s + " Fits at " + changes + ".";
  std::string bounds = fmt::format("tp up to {}", f.max_tp);
  if (f.phase == FitPhase::pipeline) bounds += fmt::format(" and pp up to {}", f.max_pp);
  return s + fmt::format(" No smaller {} and no {} fits.", batch_knob(f.phase), bounds);
}

}  // namespace hdlab::simulator
