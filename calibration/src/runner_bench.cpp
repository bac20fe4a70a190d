// Runner benchmarks: the ops the runner composes from several backend calls, timed in
// real forward passes of a calibration-only MoE model and costed by the simulator's op
// table of the same pass (microbench.hpp).
#include <memory>

#include "hdlab/calibration/microbench.hpp"
#include "hdlab/executor/measure.hpp"
#include "hdlab/executor/weights.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/phases.hpp"

namespace hdlab::calibration {

namespace {

using model::OpKind;

constexpr OpKind kComposite[] = {OpKind::experts, OpKind::shared_experts, OpKind::router};

// A small MoE in powers of two (the validation models are not): 2 layers of D = 256,
// 4 query / 2 KV heads of 64, 16 experts of 256 (top-2) and one shared expert of 256.
model::Config calibration_moe() {
  model::Backbone b;
  b.name = "hdlab calibration MoE";
  b.num_layers = 2;
  b.hidden = 256;
  b.num_heads = 4;
  b.num_kv_heads = 2;
  b.head_dim = 64;
  b.vocab_size = 1024;
  b.vocab_pad_multiple = 64;
  b.layers.assign(2, model::LayerAttention{});
  b.rope_theta = 10000.0;
  b.norm_eps = 1e-6;
  b.dtype = model::DType::fp32;
  model::MoeConfig m;
  m.num_experts = 16;
  m.top_k = 2;
  m.expert_intermediate = 256;
  m.num_shared_experts = 1;
  m.shared_expert_intermediate = 256;
  b.moe = m;
  return model::make_config(b, model::Design{});
}

// One sample per composite op: the measured time per layer run against the op row the
// simulator builds for the same pass.
void add_samples(const executor::Measurement& m, const simulator::PassCost& pass, const std::string& what,
                 std::vector<Sample>& out) {
  for (OpKind k : kComposite) {
    double passes = 0;
    const simulator::OpRow* row = nullptr;
    for (int g = 0; g < pass.count; ++g) {
      const simulator::LayerGroupCost& lg = pass.groups[static_cast<std::size_t>(g)];
      const simulator::OpRow& r = simulator::row(lg.ops, k);
      if (r.calls <= 0) continue;
      passes += lg.plan.passes;
      row = &r;
    }
    const double ms = m.op_ms(k);
    if (!row || passes <= 0 || ms <= 0) continue;
    Sample s;
    s.bench = BenchKind::runner;
    s.op = k;
    s.name = std::string(model::to_string(k)) + " in a " + what + " of the calibration MoE";
    s.shape = {static_cast<std::int64_t>(row->rows + 0.5), static_cast<std::int64_t>(row->weight_dim_min)};
    s.flops = row->cost.flops;
    s.bytes = row->cost.bytes();
    s.calls = row->calls;
    s.x = model::op_class(k) == model::OpClass::gemm ? std::max(1.0, std::min(row->rows, row->weight_dim_min))
                                                      : std::max(1.0, s.bytes);
    s.seconds = ms * 1e-3 / passes;
    s.runs = m.options.repeats;
    double lo = *std::min_element(m.total_ms.begin(), m.total_ms.end()), hi = *std::max_element(m.total_ms.begin(), m.total_ms.end());
    s.spread = m.median_ms > 0 ? (hi - lo) / m.median_ms : 0;
    out.push_back(std::move(s));
  }
}

executor::Measurement measure_pass(executor::Runner& runner, executor::Backend& backend, executor::Phase phase,
                                   std::int64_t tokens, const BenchPlan& plan) {
  executor::MeasureOptions mo;
  mo.phase = phase;
  mo.tokens = tokens;
  mo.warmup = 2;
  mo.repeats = std::max(5, plan.min_runs);
  return executor::measure(runner, backend, mo);
}

}  // namespace

std::vector<Sample> run_runner_benchmarks(executor::Backend& backend, const BenchPlan& plan) {
  std::vector<Sample> out;
  if (plan.moe_prefill.empty() && plan.moe_decode_context <= 0) return out;
  const model::Config c = calibration_moe();
  executor::RandomWeights weights(7);
  executor::Runner runner(backend, c, executor::upload_weights(backend, c, weights, executor::ScalarType::f32), {});
  const simulator::ModelShape shape = simulator::model_shape(c.effective, c.design.method);
  const simulator::LayerPlan layers = simulator::plan_layers(c.effective, c.design.method);
  simulator::PassOptions po;
  po.tile_q = executor::kTileQ;
  po.tile_k = executor::kTileK;
  auto pass = std::make_unique<simulator::PassCost>();
  for (std::int64_t L : plan.moe_prefill) {
    const executor::Measurement m = measure_pass(runner, backend, executor::Phase::prefill, L, plan);
    simulator::prefill_pass(c, shape, layers, 1, L, po, *pass);
    add_samples(m, *pass, "prefill of " + std::to_string(L) + " tokens", out);
  }
  if (plan.moe_decode_context > 0) {
    const executor::Measurement m = measure_pass(runner, backend, executor::Phase::decode, plan.moe_decode_context, plan);
    simulator::decode_pass(c.design.method, shape, layers, 1, plan.moe_decode_context + 2 + (m.options.repeats - 1) / 2, po, *pass);
    add_samples(m, *pass, "decode step at " + std::to_string(plan.moe_decode_context) + " tokens", out);
  }
  return out;
}

}  // namespace hdlab::calibration
