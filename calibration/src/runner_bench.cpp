// Runner benchmarks: ops as the runner composes them, timed in real forward passes of
// calibration-only models and costed by the simulator's op table of the same pass
// (microbench.hpp). The simulator costs an op as one record; the runner may issue several
// backend calls for it (the two residual adds of a layer, RoPE and QK-norm on q and on k,
// the three q, k, v products, every routed expert's five calls, the two GHCs of a VWN
// layer), so the op's speed is measured where it runs.
#include <algorithm>
#include <memory>

#include "hdlab/calibration/microbench.hpp"
#include "hdlab/executor/measure.hpp"
#include "hdlab/executor/weights.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/phases.hpp"

namespace hdlab::calibration {

namespace {

using model::OpKind;

// Ops timed here: everything but attention (timed by its kernel's benchmarks, mask by
// mask) and the GEMMs whose products the GEMM grid times as they are. q, k and v are three
// products too, but a composed qkv curve is indexed by min(rows, KV width), which
// saturates at the calibration models' KV width and cannot carry to other head counts;
// the grid at the same abscissa predicts held-out widths better (measured: max error
// 33% -> 22% on profiles/validation/cpu.json).
bool composed(OpKind k) {
  switch (k) {
    case OpKind::attention:
    case OpKind::qkv_proj:
    case OpKind::o_proj:
    case OpKind::ffn_gate_up:
    case OpKind::ffn_down:
    case OpKind::lm_head:
    case OpKind::vwn_embed_proj:
      return false;
    default: return true;
  }
}

// Small models in powers of two (the validation models are not): 2 layers of D = 256,
// 4 query / 2 KV heads of 64, one sliding (window 128) and one full layer.
model::Backbone dense() {
  model::Backbone b;
  b.name = "hdlab calibration dense";
  b.num_layers = 2;
  b.hidden = 256;
  b.num_heads = 4;
  b.num_kv_heads = 2;
  b.head_dim = 64;
  b.qk_norm = true;
  b.intermediate = 1024;
  b.vocab_size = 1024;
  b.vocab_pad_multiple = 64;
  b.layers = {{model::AttentionKind::sliding, 128}, {}};
  b.rope_theta = 10000.0;
  b.norm_eps = 1e-6;
  b.dtype = model::DType::fp32;
  return b;
}

// ... with 16 routed experts of 256 (top-2) and one shared expert of 256.
model::Backbone moe() {
  model::Backbone b = dense();
  b.name = "hdlab calibration MoE";
  b.intermediate = 0;
  model::MoeConfig m;
  m.num_experts = 16;
  m.top_k = 2;
  m.expert_intermediate = 256;
  m.num_shared_experts = 1;
  m.shared_expert_intermediate = 256;
  b.moe = m;
  return b;
}

model::Config config(const model::Backbone& b, const char* design) {
  return model::make_config(b, model::parse_design(nlohmann::json::parse(design), b, "/design"));
}

// One sample per composed op: the measured time per run of the op (per layer run for a
// layer op) against the op row the simulator builds for the same pass.
void add_samples(const executor::Measurement& m, const simulator::PassCost& pass, const std::string& what,
                 std::vector<Sample>& out) {
  for (int i = 0; i < model::op_kind_count; ++i) {
    const auto k = static_cast<OpKind>(i);
    if (!composed(k)) continue;
    double passes = 0;
    const simulator::OpRow* row = nullptr;
    for (int g = 0; g < pass.count; ++g) {
      const simulator::LayerGroupCost& lg = pass.groups[static_cast<std::size_t>(g)];
      const simulator::OpRow& r = simulator::row(lg.ops, k);
      if (r.calls <= 0) continue;
      passes += lg.plan.passes;
      row = &r;  // the ops other than attention cost the same in every group
    }
    if (!row && simulator::row(pass.outside, k).calls > 0) {
      row = &simulator::row(pass.outside, k);
      passes = 1;
    }
    const double ms = m.op_ms(k);
    if (!row || passes <= 0 || ms <= 0 || row->cost.bytes() <= 0) continue;
    Sample s;
    s.bench = BenchKind::runner;
    s.op = k;
    s.name = std::string(model::to_string(k)) + " in a " + what;
    s.shape = {static_cast<std::int64_t>(row->rows + 0.5), static_cast<std::int64_t>(row->weight_dim_min)};
    s.flops = row->cost.flops;
    s.bytes = row->cost.bytes();
    s.calls = row->calls;
    s.x = model::op_class(k) == model::OpClass::gemm ? std::max(1.0, std::min(row->rows, row->weight_dim_min))
                                                      : std::max(1.0, s.bytes);
    s.seconds = ms * 1e-3 / passes;
    s.runs = m.options.repeats;
    const auto [lo, hi] = std::minmax_element(m.total_ms.begin(), m.total_ms.end());
    s.spread = m.median_ms > 0 ? (*hi - *lo) / m.median_ms : 0;
    out.push_back(std::move(s));
  }
}

struct Pass {
  executor::Phase phase;
  std::int64_t tokens;
};

void run_model(executor::Backend& backend, const model::Config& c, const std::string& name,
               const std::vector<Pass>& passes, const BenchPlan& plan, std::vector<Sample>& out) {
  executor::RandomWeights weights(7);
  executor::Runner runner(backend, c, executor::upload_weights(backend, c, weights, executor::ScalarType::f32), {});
  const simulator::ModelShape shape = simulator::model_shape(c.effective, c.design.method);
  const simulator::LayerPlan layers = simulator::plan_layers(c.effective, c.design.method);
  simulator::PassOptions po;
  po.layout = runner.layout();
  po.tile_q = executor::kTileQ;
  po.tile_k = executor::kTileK;
  po.mirror_final_only_decode = true;  // the executor decodes HD's mirrored layers on the final stream
  auto cost = std::make_unique<simulator::PassCost>();
  for (const Pass& p : passes) {
    executor::MeasureOptions mo;
    mo.phase = p.phase;
    mo.tokens = p.tokens;
    mo.warmup = 2;
    mo.repeats = std::max(5, plan.min_runs);
    const executor::Measurement m = executor::measure(runner, backend, mo);
    std::string what = name + " " + executor::to_string(p.phase);
    switch (p.phase) {
      case executor::Phase::train_forward: simulator::train_forward_pass(c, shape, layers, 1, p.tokens, po, *cost); break;
      case executor::Phase::prefill: simulator::prefill_pass(c, shape, layers, 1, p.tokens, po, *cost); break;
      case executor::Phase::decode:
        simulator::decode_pass(c.design.method, shape, layers, 1, p.tokens + mo.warmup + (mo.repeats - 1) / 2, po, *cost);
        break;
    }
    add_samples(m, *cost, what + " of " + std::to_string(p.tokens) + " tokens", out);
  }
}

}  // namespace

std::vector<Sample> run_runner_benchmarks(executor::Backend& backend, const BenchPlan& plan) {
  std::vector<Sample> out;
  using P = executor::Phase;
  std::vector<Pass> passes;
  for (std::int64_t L : plan.runner_prefill) passes.push_back({P::prefill, L});
  if (plan.runner_decode_context > 0) passes.push_back({P::decode, plan.runner_decode_context});
  for (std::int64_t L : plan.runner_train) passes.push_back({P::train_forward, L});
  if (passes.empty()) return out;
  run_model(backend, config(dense(), "{}"), "dense", passes, plan, out);
  run_model(backend, config(moe(), "{}"), "MoE", passes, plan, out);
  // VWN at (m, n) = (2, 4) and a looped block with injection: their own ops (GHC, reduce,
  // injection); the validation uses other (m, n) and loop shapes.
  run_model(backend, config(dense(), R"({"vwn": {"m": 2, "n": 4, "dynamic": true}})"), "VWN", passes, plan, out);
  run_model(backend, config(dense(), R"({"looped": {"prelude": 0, "recurrent": 1, "coda": 1, "iterations": 2, "input_injection": true}})"),
            "looped", passes, plan, out);
  return out;
}

}  // namespace hdlab::calibration
