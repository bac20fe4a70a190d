// The pipeline workload from the cost model (pipeline_cost.hpp).
#include "hdlab/simulator/pipeline_cost.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <variant>

#include "hdlab/model/json_reader.hpp"
#include "hdlab/model/schedule.hpp"
#include "hdlab/simulator/cost_model.hpp"

namespace hdlab::simulator {

using model::OpKind;

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// A pass made of one run of one layer group, nothing outside.
std::unique_ptr<PassCost> single_layer(const LayerGroupCost& g) {
  auto one = std::make_unique<PassCost>();
  one->count = 1;
  one->groups[0] = g;
  one->groups[0].plan.passes = 1;
  return one;
}

// A pass made of some of the ops outside the layers.
std::unique_ptr<PassCost> outside_only(const OpTable& outside, std::initializer_list<OpKind> kinds) {
  auto p = std::make_unique<PassCost>();
  for (OpKind k : kinds) row(p->outside, k) = row(outside, k);
  return p;
}

// Parameters an op table owns: the routed experts apart (they shard over ep too).
void owned_params(const OpTable& t, double& dense, double& experts) {
  for (int i = 0; i < model::op_kind_count; ++i) {
    const double p = t[static_cast<std::size_t>(i)].params;
    (static_cast<OpKind>(i) == OpKind::experts ? experts : dense) += p;
  }
}

// One pass of a layer that runs `passes` times a micro-batch (a recurrent layer: the
// iterations); its gradients join the step's once a micro-batch, a 1/passes share a pass.
PipelineLayer layer_costs(const CostContext& ctx, const LayerGroupCost& g, double passes) {
  const TrainScenario& t = ctx.scenario->train;
  const auto one = single_layer(g);
  PassTime time;
  pass_time(*one, ctx.roofline, Timing::training, time);
  const double comm = train_comm(ctx, *one, time).total();
  const double comm_passes = t.recompute == Recompute::full ? 3 : 2;  // forward, backward (, recomputed forward)
  PipelineLayer l;
  owned_params(g.ops, l.dense_params, l.expert_params);
  // autocast's cast of the layer's weights, by the forward and by a recomputed forward
  const double cast = weight_cast_s(ctx, l.dense_params, l.expert_params) / passes;
  const double recast = t.recompute == Recompute::full ? cast : 0;
  l.forward_s = time.total_s + comm + cast;
  const double accumulate = grad_accumulation_s(ctx, l.dense_params, l.expert_params) / passes;  // follows dW
  l.backward_s = time.backward_s + recompute_s(t, time) + recast + (comm_passes - 1) * comm + accumulate;
  l.backward_weight_s = time.backward_weight_s + accumulate;  // recomputation and collectives serve B
  l.activation_bytes = activation_bytes_per_device(*one, ctx.shape, t.recompute, t.vwn_eta, ctx.sharding);
  // memory.hpp adds one layer's selective set, live while full recomputation reruns a
  // layer, once per pass; per layer only the kept input counts.
  if (t.recompute == Recompute::full)
    l.activation_bytes -= activation_bytes_per_device(*one, ctx.shape, Recompute::selective, t.vwn_eta, ctx.sharding);
  return l;
}

PipelineEndCost end_costs(const CostContext& ctx, const OpTable& outside, std::initializer_list<OpKind> kinds) {
  const auto p = outside_only(outside, kinds);
  PassTime time;
  pass_time(*p, ctx.roofline, Timing::training, time);
  PipelineEndCost e;
  double experts = 0;
  owned_params(p->outside, e.dense_params, experts);
  const double accumulate = grad_accumulation_s(ctx, e.dense_params, experts);
  e.forward_s = time.total_s + weight_cast_s(ctx, e.dense_params, experts);  // the ends are not recomputed
  e.backward_s = time.backward_s + accumulate;
  e.backward_weight_s = time.backward_weight_s + accumulate;  // the head's dW; the embedding's scatter-add is all B
  const TrainScenario& t = ctx.scenario->train;
  e.activation_bytes = activation_bytes_per_device(*p, ctx.shape, t.recompute, t.vwn_eta, ctx.sharding);
  return e;
}

// Bytes a cut after each layer carries, per device: the next layer's query rows of
// hidden state, pending KV-mirror source inputs, and the embedding a loop re-injects.
void boundary_bytes(const CostContext& ctx, const std::vector<const LayerGroupCost*>& group_of,
                    std::vector<PipelineLayer>& layers) {
  const model::Backbone& b = ctx.config->effective;
  const ModelShape& s = ctx.shape;
  const double seqs = d(ctx.scenario->train.micro_batch) / ctx.sharding.cp;  // one device's sequences (cp: its share)
  const double width = s.vwn ? s.vwn_n / s.vwn_m * s.D : s.D;
  const double per_row = width * s.comm_el_bytes / ctx.sharding.tp;
  const auto n = static_cast<std::int64_t>(layers.size());
  // Layers before the recurrent block pass on the embedding the block re-injects.
  const auto loop = model::recurrent_block(ctx.config->design.method, n);
  const bool injects = loop && model::design_features(ctx.config->design.method).input_injection;
  for (std::int64_t l = 0; l + 1 < n; ++l) {
    const LayerWork& next = group_of[static_cast<std::size_t>(l + 1)]->work;
    double bytes = seqs * next.rows_q * per_row;
    for (std::int64_t j = l + 1; j < n; ++j) {
      const std::int64_t source = b.mirror_source(j);
      if (source >= 0 && source <= l) bytes += seqs * group_of[static_cast<std::size_t>(j)]->work.rows_kv * per_row;
    }
    if (injects && l < loop->first)
      bytes += seqs * next.rows_kv * s.D * s.comm_el_bytes / ctx.sharding.tp;
    layers[static_cast<std::size_t>(l)].boundary_bytes = bytes;
  }
}

}  // namespace

namespace {

PipelineWorkload workload_of(const CostContext& ctx, std::int64_t pp, const std::string& pointer) {
  const model::Config& c = *ctx.config;
  const HardwareProfile& hw = *ctx.hw;
  const Scenario& s = *ctx.scenario;
  auto forward = std::make_unique<PassCost>();
  const TrainScenario& t = s.train;
  train_forward_pass(c, ctx.shape, ctx.plan, d(t.micro_batch) * ctx.sharding.ep / ctx.sharding.cp, t.seq_len,
                     ctx.options, *forward);

  const model::Backbone& b = c.effective;
  PipelineWorkload w;
  std::vector<const LayerGroupCost*> group_of;
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    double passes = 1;
    const LayerSignature sig = layer_signature(b, c.design.method, l, &passes);
    const LayerGroupCost* g = nullptr;
    for (int i = 0; i < forward->count && !g; ++i)
      if (forward->groups[static_cast<std::size_t>(i)].plan.sig == sig) g = &forward->groups[static_cast<std::size_t>(i)];
    if (!g) throw std::logic_error("pipeline: layer " + std::to_string(l) + " has no group in the forward pass");
    group_of.push_back(g);
    w.layers.push_back(layer_costs(ctx, *g, passes));
  }
  if (const auto loop = model::recurrent_block(c.design.method, b.num_layers)) {
    w.loop = PipelineLoop{loop->first, loop->layers, loop->iterations};
    // The injection adapter's row covers every iteration; one run joins each first recurrent pass.
    const PipelineEndCost inject = end_costs(ctx, forward->outside, {OpKind::injection});
    PipelineLayer& first = w.layers[static_cast<std::size_t>(loop->first)];
    first.forward_s += inject.forward_s / d(loop->iterations);
    first.backward_s += inject.backward_s / d(loop->iterations);
    first.backward_weight_s += inject.backward_weight_s / d(loop->iterations);
    first.dense_params += inject.dense_params;
  }
  w.embedding = end_costs(ctx, forward->outside, {OpKind::embedding, OpKind::vwn_embed_proj});
  w.head = end_costs(ctx, forward->outside, {OpKind::vwn_reduce, OpKind::final_norm, OpKind::lm_head, OpKind::mtp});
  boundary_bytes(ctx, group_of, w.layers);

  const ParallelScenario& par = s.parallel;
  if (pp > 1) {
    const Link link = link_for(hw, par.tp * par.cp * par.dp * pp, par.gpus_per_node, pointer + "/pp");
    w.link = PipelineLink{link.bytes_per_s, link.latency_s};
  }
  w.tokens_per_microbatch = d(t.micro_batch) * d(t.seq_len);
  return w;
}

// The optimizer step after the makespan (pipeline_cost.hpp): per device, its parameters'
// gradient all-reduce (partly hidden behind its last backward) and update; and the
// training state those parameters hold on it.
void add_optimizer_step(const CostContext& ctx, const PipelineWorkload& w, PipelineResult& r) {
  const auto devices = r.devices.size();
  std::vector<double> dense(devices, 0), experts(devices, 0), last_end(devices, 0), last_length(devices, 0);
  for (const PipelineChunk& ch : r.partition.chunks) {
    const auto dev = static_cast<std::size_t>(ch.device);
    for (std::int64_t l = ch.first_layer; l < ch.first_layer + ch.layer_count; ++l) {
      dense[dev] += w.layers[static_cast<std::size_t>(l)].dense_params;
      experts[dev] += w.layers[static_cast<std::size_t>(l)].expert_params;
    }
    if (ch.embedding) dense[dev] += w.embedding.dense_params;
    if (ch.head) dense[dev] += w.head.dense_params;
  }
  for (const PipelineTask& t : r.tasks) {
    const auto dev = static_cast<std::size_t>(t.device);
    if (t.backward && t.end_s >= last_end[dev]) {
      last_end[dev] = t.end_s;
      last_length[dev] = t.end_s - t.start_s;
    }
  }
  PipelineMetrics& m = r.metrics;
  m.step_s = m.makespan_s;
  for (std::size_t dev = 0; dev < devices; ++dev) {
    const TrainMemory state = train_state_memory(dense[dev], experts[dev], ctx.shape, *ctx.scenario);
    r.devices[dev].weight_bytes = state.weight_bytes;
    r.devices[dev].grad_bytes = state.grad_bytes;
    r.devices[dev].optimizer_bytes = state.optimizer_bytes;
    const double reduce = dp_gradient_s(ctx, dense[dev], experts[dev]);
    const double optimizer = optimizer_update_s(ctx, dense[dev], experts[dev]);
    const double exposed = ctx.scenario->train.overlap_dp_comm ? std::max(0.0, reduce - last_length[dev]) : reduce;
    m.dp_reduce_s = std::max(m.dp_reduce_s, reduce);
    m.optimizer_s = std::max(m.optimizer_s, optimizer);
    m.step_s = std::max(m.step_s, last_end[dev] + exposed + optimizer);
  }
  m.framework_s = ctx.scenario->framework.train_step_s;
  m.step_s += m.framework_s;
  m.update_s = m.step_s - m.makespan_s;
  if (m.step_s > 0) m.tokens_per_s = w.tokens_per_microbatch * d(r.options.microbatches) / m.step_s;
}

}  // namespace

PipelineWorkload pipeline_workload(const model::Config& c, const HardwareProfile& hw, const Scenario& s,
                                   std::int64_t pp, const std::string& pointer) {
  auto ctx = std::make_unique<CostContext>();
  make_context(c, hw, s, *ctx);
  return workload_of(*ctx, pp, pointer);
}

PipelineResult simulate_pipeline(const model::Config& c, const HardwareProfile& hw, const Scenario& s,
                                 const PipelineOptions& o, const std::string& pointer) {
  if (o.stages < 1) model::fail(pointer + "/pp", "must be >= 1, got " + std::to_string(o.stages));
  if (s.train.sharding == OptimizerSharding::weights)
    model::fail("/scenario/train/optimizer_sharding",
                "weights (ZeRO-3) is not costed by the pipeline: its per-micro-batch weight gathers are not modelled "
                "there; give gradients (ZeRO-2) or less, or cost the step without a pipeline (hdlab cost)");
  auto ctx = std::make_unique<CostContext>();
  make_context(c, hw, s, *ctx);
  const PipelineWorkload w = workload_of(*ctx, o.stages, pointer);
  PipelineResult r = simulate_pipeline(w, o, pointer);
  add_optimizer_step(*ctx, w, r);
  return r;
}

}  // namespace hdlab::simulator
