// The headline metrics of every phase: cost_model.hpp's results condensed.
#include "hdlab/simulator/evaluate.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "hdlab/model/error.hpp"
#include "hdlab/simulator/cost_model.hpp"

namespace hdlab::simulator {

using model::OpKind;

namespace {

// Op tables are large fixed arrays; one set per thread, reused by every evaluation.
struct Workspace {
  CostContext ctx;
  PassCost pass;
  TrainResult train;
  InferenceResult inference;
};

Workspace& workspace() {
  thread_local std::unique_ptr<Workspace> w = std::make_unique<Workspace>();
  return *w;
}

void train_metrics(Workspace& w, Metrics& m) {
  const CostContext& ctx = w.ctx;
  cost_train(ctx, w.pass, w.train);
  const TrainResult& t = w.train;
  const double devices = ctx.sharding.tp * ctx.sharding.cp * static_cast<double>(ctx.scenario->parallel.dp);
  m[Metric::train_step_s] = t.step_s;
  m[Metric::train_tokens_per_s] = t.tokens / t.step_s;
  m[Metric::train_flops] = t.flops;
  m[Metric::train_mfu_fraction] = t.model_flops / (t.step_s * ctx.roofline.matrix_peak * devices);
  m[Metric::train_comm_s] = t.comm_s;
  m[Metric::train_memory_bytes] = t.memory.total();
  m[Metric::train_weight_bytes] = t.memory.weight_bytes;
  m[Metric::train_grad_bytes] = t.memory.grad_bytes;
  m[Metric::train_optimizer_bytes] = t.memory.optimizer_bytes;
  m[Metric::train_activation_bytes] = t.memory.activation_bytes;
  m[Metric::train_fits] = t.memory.total() <= ctx.hw->memory_bytes() ? 1 : 0;
}

void prefill_metrics(Workspace& w, Metrics& m) {
  const CostContext& ctx = w.ctx;
  const PrefillScenario& p = ctx.scenario->prefill;
  cost_prefill(ctx, w.pass, w.inference);
  m[Metric::prefill_s] = w.inference.seconds;
  m[Metric::prefill_tokens_per_s] = static_cast<double>(p.batch * p.tokens) / w.inference.seconds;
  m[Metric::prefill_flops] = w.pass.total().flops;
  m[Metric::prefill_attention_flops_exact] = attention_flops(ctx.shape, w.pass.attention_pairs_exact());
  m[Metric::prefill_attention_flops_executed] = attention_flops(ctx.shape, w.pass.attention_pairs_executed());
}

void decode_metrics(Workspace& w, Metrics& m) {
  const CostContext& ctx = w.ctx;
  const DecodeScenario& d = ctx.scenario->decode;
  cost_decode(ctx, false, d.batch, d.context, w.pass, w.inference);
  const model::OpCost total = w.pass.total();
  const double seconds = w.inference.seconds;
  m[Metric::decode_step_s] = seconds;
  m[Metric::decode_tokens_per_s] = static_cast<double>(d.batch) / seconds;
  m[Metric::decode_flops] = total.flops;
  m[Metric::decode_bytes] = total.bytes();
  m[Metric::decode_weight_bytes] = total.weight_bytes;
  m[Metric::decode_kv_read_bytes] = total.kv_bytes_read;
  m[Metric::decode_comm_s] = w.inference.comm.total();
  cost_decode(ctx, true, d.batch, d.context, w.pass, w.inference);
  m[Metric::decode_vs_baseline_ratio] = w.inference.seconds / seconds;
}

void memory_metrics(Workspace& w, Metrics& m) {
  const CostContext& ctx = w.ctx;
  const Scenario& s = *ctx.scenario;
  m[Metric::kv_bytes_per_seq] = kv_bytes_per_seq(ctx, s.kv.context);
  m[Metric::kv_bytes] = static_cast<double>(s.decode.batch) * kv_bytes_per_seq(ctx, s.decode.context);
  m[Metric::inference_weight_bytes] = inference_weight_bytes(ctx);
  m[Metric::max_batch_seqs] = max_batch(ctx, s.kv.context);
}

void serving_metrics(Workspace& w, Metrics& m) {
  const CostContext& ctx = w.ctx;
  const ServingScenario& sv = ctx.scenario->serving;
  const double usable = ctx.hw->memory_bytes() * ctx.scenario->kv.memory_utilization;
  const double weights = inference_weight_bytes(ctx), kv_split = ctx.sharding.kv_tp * ctx.sharding.ep;
  m.serving.resize(sv.batches.size() * sv.input_lengths.size());
  std::size_t i = 0;
  for (std::int64_t b : sv.batches) {
    for (std::int64_t in : sv.input_lengths) {
      ServingPoint& p = m.serving[i++];
      p.batch = b;
      p.input_tokens = in;
      p.context = in + sv.output_tokens / 2;
      cost_decode(ctx, false, b, p.context, w.pass, w.inference);
      p.tokens_per_s = static_cast<double>(b) / w.inference.seconds;
      cost_decode(ctx, true, b, p.context, w.pass, w.inference);
      p.baseline_tokens_per_s = static_cast<double>(b) / w.inference.seconds;
      p.ratio = p.tokens_per_s / p.baseline_tokens_per_s;
      const double kv = static_cast<double>(b) * kv_bytes_per_seq(ctx, in + sv.output_tokens) / kv_split;
      p.fits = weights + kv <= usable;
    }
  }
}

// A prediction is a finite number or no prediction: an inf or nan printed in a table
// with exit 0 would be read as a result. Profile numbers are range-checked when parsed;
// this catches whatever still overflows (or divides by zero) on the way, naming the
// metric (the sweep column) that went non-finite.
void require_finite(const Metrics& m) {
  auto fail = [](double v, const std::string& name) {
    throw model::ConfigError(name, std::string("the prediction is ") + (std::isnan(v) ? "nan" : "infinite") +
                                       ", not a number hdlab can report: the hardware profile's rates and the "
                                       "scenario's sizes overflow double precision (or a rate is 0)");
  };
  // (a metric's name is built only for the error: this runs after every evaluation)
  for (int i = 0; i < metric_count; ++i)
    if (const double v = m.values[static_cast<std::size_t>(i)]; !std::isfinite(v))
      fail(v, metric_name(static_cast<Metric>(i)));
  for (const ServingPoint& p : m.serving) {
    const std::pair<double, const char*> cells[] = {
        {p.tokens_per_s, "tokens_per_s"}, {p.baseline_tokens_per_s, "baseline_tokens_per_s"}, {p.ratio, "ratio"}};
    for (const auto& [v, what] : cells)
      if (!std::isfinite(v))
        fail(v, "serving_b" + std::to_string(p.batch) + "_in" + std::to_string(p.input_tokens) + "_" + what);
  }
}

}  // namespace

void evaluate(const model::Config& c, const HardwareProfile& hw, const Scenario& s, Metrics& out) {
  Workspace& w = workspace();
  make_context(c, hw, s, w.ctx);
  out[Metric::params_total] = static_cast<double>(w.ctx.params.total);
  out[Metric::params_active] = static_cast<double>(w.ctx.params.active_per_token);
  train_metrics(w, out);
  prefill_metrics(w, out);
  decode_metrics(w, out);
  memory_metrics(w, out);
  serving_metrics(w, out);
  require_finite(out);
}

Metrics evaluate(const model::Config& c, const HardwareProfile& hw, const Scenario& s) {
  Metrics m;
  evaluate(c, hw, s, m);
  return m;
}

}  // namespace hdlab::simulator
