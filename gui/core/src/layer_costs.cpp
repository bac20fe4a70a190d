#include "hdlab/gui_core/layer_costs.hpp"

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "hdlab/simulator/cost_model.hpp"
#include "hdlab/simulator/phases.hpp"

namespace hdlab::gui_core {
namespace {

using simulator::LayerGroupCost;
using simulator::PassCost;

// What one run of one layer of a group costs in a pass.
struct RunCost {
  double flops = 0;
  double seconds = 0;
};

RunCost run_cost(const LayerGroupCost& lg, const simulator::Roofline& rl) {
  RunCost r;
  r.flops = simulator::table_total(lg.ops).flops;
  // Op by op, as pass_time times them (rows with no launch are not run).
  for (int i = 0; i < model::op_kind_count; ++i) {
    const simulator::OpRow& row = lg.ops[static_cast<std::size_t>(i)];
    if (row.calls <= 0) continue;
    r.seconds += simulator::op_time(static_cast<model::OpKind>(i), row, rl, &lg.work).seconds;
  }
  return r;
}

// Resident weight bytes of a table on one device in inference: routed experts split
// over tp * ep, everything else over tp (params_per_device's rule).
double table_weight_bytes(const simulator::OpTable& t, const simulator::CostContext& ctx) {
  double dense = 0, experts = 0;
  for (int i = 0; i < model::op_kind_count; ++i) {
    const double p = t[static_cast<std::size_t>(i)].params;
    (static_cast<model::OpKind>(i) == model::OpKind::experts ? experts : dense) += p;
  }
  const double tp = ctx.sharding.tp, ep = ctx.sharding.ep;
  return (dense / tp + experts / (tp * ep)) * ctx.shape.weight_el_bytes;
}

// The group of `pass` whose signature is layer l's.
const LayerGroupCost& group_of(const PassCost& pass, const simulator::LayerSignature& sig) {
  for (int g = 0; g < pass.count; ++g)
    if (pass.groups[static_cast<std::size_t>(g)].plan.sig == sig) return pass.groups[static_cast<std::size_t>(g)];
  throw std::logic_error("layer_costs: a layer's signature is in no group of the pass");
}

// Splits `pass` (timed as `time`) over the layers of the config.
PhaseLayerCosts split(const simulator::CostContext& ctx, CostPhase phase, const PassCost& pass,
                      const simulator::PassTime& time, double comm_s) {
  const model::Config& c = *ctx.config;
  PhaseLayerCosts out;
  out.phase = phase;
  out.pass_flops = pass.total().flops;
  out.layers_seconds = time.layers_s;
  out.pass_seconds = time.total_s;
  out.comm_seconds = comm_s;
  std::array<RunCost, simulator::max_layer_groups> runs{};
  for (int g = 0; g < pass.count; ++g)
    runs[static_cast<std::size_t>(g)] = run_cost(pass.groups[static_cast<std::size_t>(g)], ctx.roofline);
  const simulator::Scenario& s = *ctx.scenario;
  const double kv_split = ctx.sharding.kv_tp * ctx.sharding.ep;
  const double entry_bytes = ctx.shape.kv_out * ctx.shape.kv_el_bytes;
  out.layers.reserve(static_cast<std::size_t>(c.effective.num_layers));
  for (std::int64_t l = 0; l < c.effective.num_layers; ++l) {
    double passes = 1, caches = 1;
    const simulator::LayerSignature sig = simulator::layer_signature(c.effective, c.design.method, l, &passes, &caches);
    const LayerGroupCost& lg = group_of(pass, sig);
    const RunCost& run = runs[static_cast<std::size_t>(&lg - pass.groups.data())];
    LayerCost lc;
    lc.layer = l;
    lc.passes = passes;
    lc.flops = run.flops * passes;
    lc.seconds = run.seconds * passes;
    lc.kv_bytes_per_seq =
        caches * model::kv_entries(c.design.method, lg.plan.view, s.decode.context) * entry_bytes;
    lc.weight_bytes = table_weight_bytes(lg.ops, ctx);
    lc.memory_bytes = lc.weight_bytes + static_cast<double>(s.decode.batch) * lc.kv_bytes_per_seq / kv_split;
    out.layers.push_back(lc);
  }
  return out;
}

}  // namespace

const char* to_string(CostPhase p) {
  switch (p) {
    case CostPhase::decode:
      return "decode step";
    case CostPhase::prefill:
      return "prefill";
    case CostPhase::train_forward:
      return "training forward";
  }
  return "?";
}

LayerCosts layer_costs(const model::Config& c, const simulator::HardwareProfile& hw, const simulator::Scenario& s) {
  // The context and op tables are large fixed arrays: on the heap, not the stack.
  auto ctx = std::make_unique<simulator::CostContext>();
  simulator::make_context(c, hw, s, *ctx);
  auto pass = std::make_unique<PassCost>();
  LayerCosts out;
  out.kv_context = s.decode.context;
  out.kv_batch = s.decode.batch;

  simulator::InferenceResult inference;
  simulator::cost_decode(*ctx, false, s.decode.batch, s.decode.context, *pass, inference);
  out.phases[static_cast<std::size_t>(CostPhase::decode)] =
      split(*ctx, CostPhase::decode, *pass, inference.time, inference.comm.total());
  out.outside_weight_bytes = table_weight_bytes(pass->outside, *ctx);

  simulator::cost_prefill(*ctx, *pass, inference);
  out.phases[static_cast<std::size_t>(CostPhase::prefill)] =
      split(*ctx, CostPhase::prefill, *pass, inference.time, inference.comm.total());

  auto train = std::make_unique<simulator::TrainResult>();
  simulator::cost_train(*ctx, *pass, *train);
  out.phases[static_cast<std::size_t>(CostPhase::train_forward)] =
      split(*ctx, CostPhase::train_forward, *pass, train->forward, train->forward_comm.total());
  return out;
}

const char* to_string(LayerQuantity q) {
  switch (q) {
    case LayerQuantity::time:
      return "time";
    case LayerQuantity::flops:
      return "FLOPs";
    case LayerQuantity::kv_bytes:
      return "KV cache";
    case LayerQuantity::memory:
      return "memory";
  }
  return "?";
}

double value(const LayerCost& c, LayerQuantity q) {
  switch (q) {
    case LayerQuantity::time:
      return c.seconds;
    case LayerQuantity::flops:
      return c.flops;
    case LayerQuantity::kv_bytes:
      return c.kv_bytes_per_seq;
    case LayerQuantity::memory:
      return c.memory_bytes;
  }
  return 0;
}

DisplayUnit display_unit(LayerQuantity q) {
  switch (q) {
    case LayerQuantity::time:
      return {"ms", 1e3, 3};
    case LayerQuantity::flops:
      return {"GFLOP", 1e-9, 2};
    case LayerQuantity::kv_bytes:
    case LayerQuantity::memory:
      return {"MB", 1e-6, 2};
  }
  return {"", 1, 0};
}

std::string format_value(double v, LayerQuantity q) {
  const DisplayUnit u = display_unit(q);
  char buf[64] = "";
  std::snprintf(buf, sizeof buf, "%.*f %s", u.decimals, v * u.scale, u.unit);
  return buf;
}

}  // namespace hdlab::gui_core
