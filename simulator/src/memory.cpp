#include "hdlab/simulator/memory.hpp"

#include <algorithm>

namespace hdlab::simulator {

using model::OpKind;

namespace {

bool is_ghc(OpKind k) {
  return k == OpKind::ghc_norm || k == OpKind::ghc_dynamic || k == OpKind::ghc_width || k == OpKind::ghc_depth;
}

// Tensors one layer keeps for its backward under selective recomputation. A training
// policy, not an implementation's allocations: every op keeps the inputs it reads (the
// nodes' act_bytes_in, in the activations' dtype), not the forward workspace that
// model/forward_memory.hpp derives from the nodes' tensors, so it stays a formula here
// over the nodes' costs (the sweep's hot path builds no tensor lists).
double selective_layer_bytes(const LayerGroupCost& lg, const ModelShape& s, double vwn_eta) {
  double bytes = 0;
  for (int i = 0; i < model::op_kind_count; ++i) {
    const auto k = static_cast<OpKind>(i);
    if (k == OpKind::residual || is_ghc(k)) continue;
    bytes += lg.ops[static_cast<std::size_t>(i)].cost.act_bytes_in;
  }
  bytes += row(lg.ops, OpKind::attention).cost.act_bytes_out;  // flash attention keeps its output
  if (s.vwn)
    bytes += 2 * s.bytes * vwn_eta * (s.vwn_n / s.vwn_m) * s.D * lg.work.seqs * lg.work.rows_q;
  if (lg.work.hidden_dropout) bytes += 2 * lg.work.seqs * lg.work.rows_q * s.D;  // the two masks, a byte an element
  return bytes;
}

}  // namespace

double params_per_device(const model::ParamCounts& p, double tp, double ep) {
  const double experts = static_cast<double>(p.routed_experts);
  return (static_cast<double>(p.total) - experts) / tp + experts / (tp * ep);
}

double saved_activation_bytes(const PassCost& forward, const ModelShape& s, Recompute r, double vwn_eta) {
  double bytes = 0, largest_layer = 0;
  for (int g = 0; g < forward.count; ++g) {
    const LayerGroupCost& lg = forward.groups[static_cast<std::size_t>(g)];
    const double selective = selective_layer_bytes(lg, s, vwn_eta);
    largest_layer = std::max(largest_layer, selective);
    double per_layer = selective;
    // Unfused attention's probabilities (with dropout also its mask and the dropped ones),
    // kept for the backward unless recomputed. A fused (flash) kernel never writes them:
    // its backward recomputes them from Q, K and the softmax statistics, whatever the policy.
    if (r == Recompute::none && lg.work.scores_materialised)
      per_layer += s.H * lg.work.seqs * lg.work.pairs_executed * (s.bytes + (lg.work.attention_dropout ? 1 + s.bytes : 0));
    if (r == Recompute::full) {
      const double width = s.vwn ? s.vwn_n / s.vwn_m * s.D : s.D;
      per_layer = lg.work.seqs * lg.work.rows_q * width * s.bytes;
    }
    bytes += lg.plan.passes * per_layer;
  }
  if (r == Recompute::full) bytes += largest_layer;
  const OpTable& out = forward.outside;
  // MTP's row is a whole output path: every input of its ops, and its logits for the loss.
  const OpRow& mtp = row(out, OpKind::mtp);
  bytes += row(out, OpKind::vwn_reduce).cost.act_bytes_in + row(out, OpKind::final_norm).cost.act_bytes_in +
           row(out, OpKind::lm_head).cost.act_bytes_in + row(out, OpKind::lm_head).cost.act_bytes_out +
           mtp.cost.act_bytes_in + mtp.rows * s.V * s.bytes;
  return bytes;
}

double residual_stream_activation_bytes(const PassCost& forward, const ModelShape& s, Recompute r) {
  double bytes = 0, largest_layer = 0;
  for (int g = 0; g < forward.count; ++g) {
    const LayerGroupCost& lg = forward.groups[static_cast<std::size_t>(g)];
    const double norms = row(lg.ops, OpKind::attn_norm).cost.act_bytes_in + row(lg.ops, OpKind::ffn_norm).cost.act_bytes_in;
    largest_layer = std::max(largest_layer, norms);
    const double width = s.vwn ? s.vwn_n / s.vwn_m * s.D : s.D;
    bytes += lg.plan.passes * (r == Recompute::full ? lg.work.seqs * lg.work.rows_q * width * s.bytes : norms);
  }
  if (r == Recompute::full) bytes += largest_layer;
  return bytes + row(forward.outside, OpKind::final_norm).cost.act_bytes_in;
}

double activation_bytes_per_device(const PassCost& forward, const ModelShape& s, Recompute r, double vwn_eta,
                                   const Sharding& sh) {
  double bytes = saved_activation_bytes(forward, s, r, vwn_eta);
  if (!sh.sequence_parallel) bytes += (sh.tp - 1) * residual_stream_activation_bytes(forward, s, r);
  return bytes / (sh.tp * sh.ep);
}

double cp_kv_buffer_bytes(const PassCost& forward, const ModelShape& s, const ParallelScenario& par) {
  if (par.cp <= 1) return 0;
  const double cp = static_cast<double>(par.cp), ep = static_cast<double>(par.ep);
  const double kv_split = std::min(static_cast<double>(par.tp), s.G);
  // of the whole sequences' K/V: all_gather holds the other ranks' (cp - 1)/cp, a ring the
  // chunk in flight besides the one in hand (2/cp)
  const double share = par.cp_comm == CpComm::all_gather ? (cp - 1) / cp : 2 / cp;
  double largest = 0;
  for (int g = 0; g < forward.count; ++g) {
    const LayerWork& w = forward.groups[static_cast<std::size_t>(g)].work;
    largest = std::max(largest, w.seqs * cp / ep * w.rows_kv * s.kv_out * s.comm_el_bytes / kv_split);
  }
  return share * largest;
}

TrainMemory train_state_memory(double dense, double experts, const ModelShape& s, const Scenario& sc) {
  const ParallelScenario& par = sc.parallel;
  // context-parallel ranks hold the same weights: the state shards over them too
  const double tp = static_cast<double>(par.tp), ep = static_cast<double>(par.ep),
               dp = static_cast<double>(par.dp * par.cp);
  const OptimizerSharding z = sc.train.sharding;
  // Parameters per device, the state sharded over the data-parallel ranks or not.
  auto per_device = [&](bool sharded) {
    const double sd = sharded ? dp : 1, se = sharded ? dp / ep : 1;
    return dense / tp / sd + experts / (tp * ep) / se;
  };
  TrainMemory m;
  m.weight_bytes = per_device(z == OptimizerSharding::weights) * s.weight_el_bytes;
  m.grad_bytes = per_device(z == OptimizerSharding::weights || z == OptimizerSharding::gradients) * s.comm_el_bytes;
  m.optimizer_bytes = per_device(z != OptimizerSharding::none) * s.optimizer_bytes_per_param;
  return m;
}

TrainMemory train_memory(const model::ParamCounts& p, const ModelShape& s, const PassCost& forward,
                         const Scenario& sc) {
  const ParallelScenario& par = sc.parallel;
  const double experts = static_cast<double>(p.routed_experts);
  TrainMemory m = train_state_memory(static_cast<double>(p.total) - experts, experts, s, sc);
  const Sharding sh{static_cast<double>(par.tp), static_cast<double>(par.ep), 1, par.sequence_parallel || par.tp == 1};
  m.activation_bytes = activation_bytes_per_device(forward, s, sc.train.recompute, sc.train.vwn_eta, sh) +
                      cp_kv_buffer_bytes(forward, s, par);
  return m;
}

}  // namespace hdlab::simulator
