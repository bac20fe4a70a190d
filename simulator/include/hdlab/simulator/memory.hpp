#pragma once
// Device memory: resident weights, training state (mixed-precision Adam, optional ZeRO
// sharding) and saved activations.
//
// Training state per parameter, each in its class's precision (the scenario's, else the
// model's dtype): weights; gradients in the communication precision they are reduced in;
// the optimizer's two Adam moments plus a master copy of the weights when its precision
// differs from theirs (fp32 state: 12 bytes, 8 when the weights are fp32 too), as in
// ZeRO's accounting. Activations below are e bytes per element (the activations'
// precision); context parallelism's gathered K/V are in the communication precision.
// Sharding over the data-parallel ranks (and context-parallel: they hold the same
// weights): ZeRO-1 shards the optimizer, ZeRO-2 also the
// gradients, ZeRO-3 also the weights; routed experts shard over the dp / ep ranks that
// hold copies of the same experts.
//
// Saved activations per layer pass (Korthikanti et al. 2022 applied to our layer: every
// op keeps its inputs for its backward, flash attention also its output; residual adds
// keep nothing), for the training sequences of one micro-batch:
//   selective: those tensors; the attention probabilities are recomputed, not kept;
//   none:      + unfused attention's probabilities, H * executed pairs * e bytes (with
//              dropout also the mask and the dropped ones); a fused (flash) kernel keeps
//              none under any policy: its backward recomputes them;
//   full:      the layer input only ([rows, D], VWN the wide [rows, (n/m) D]), plus one
//              layer's selective set live while it is recomputed in the backward.
// VWN (selective and none): the GHC ops are recomputed except a share eta of the width
// connection inputs, which adds 2 * e * eta * (n/m) * D bytes per token and layer
// (the published 4 eta (n/m) D at bf16). HD's KV-mirror layers keep activations of their
// final-stream rows only (K/V of all positions), which is where their saving shows.
// Outside the layers: the final norm and head inputs and the logits (e bytes each), VWN's
// reduce input; VWN MTP every input of its path (embedding ids included) and its logits.
// With tensor parallelism activations are split over the tp ranks; without sequence
// parallelism the residual-stream share (the norms' inputs; full recomputation's kept
// layer inputs; the final norm's input) is whole on every tp rank.
#include "hdlab/model/params.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/op_table.hpp"
#include "hdlab/simulator/roofline.hpp"

namespace hdlab::simulator {

// Parameters one device holds: dense part over tp, routed experts over tp * ep.
double params_per_device(const model::ParamCounts& p, double tp, double ep);

struct TrainMemory {
  double weight_bytes = 0;
  double grad_bytes = 0;
  double optimizer_bytes = 0;
  double activation_bytes = 0;
  double total() const { return weight_bytes + grad_bytes + optimizer_bytes + activation_bytes; }
};

// Saved-activation bytes of a training forward pass (logical: every sequence in it).
double saved_activation_bytes(const PassCost& forward, const ModelShape& s, Recompute r, double vwn_eta);
// The residual-stream share of those bytes (logical), which sequence parallelism splits.
double residual_stream_activation_bytes(const PassCost& forward, const ModelShape& s, Recompute r);
// Saved-activation bytes one device of the tp x ep group keeps.
double activation_bytes_per_device(const PassCost& forward, const ModelShape& s, Recompute r, double vwn_eta,
                                   const Sharding& sh);

// Context parallelism: K/V of other ranks' chunks one device holds while a layer's
// attention runs (the largest layer's): all_gather the (cp - 1)/cp of the whole sequences'
// K/V it gathers, ring the chunk in flight next to the one in hand. 0 at cp = 1.
double cp_kv_buffer_bytes(const PassCost& forward, const ModelShape& s, const ParallelScenario& par);

// Weights, gradients and optimizer state (activation_bytes 0) one device of the tp x ep
// group holds for `dense` + `experts` logical parameters (routed experts counted apart:
// they shard over ep too), sharded as the scenario's ZeRO stage says over dp * cp. What
// train_memory counts for the whole model and the pipeline for one stage's layers.
TrainMemory train_state_memory(double dense, double experts, const ModelShape& s, const Scenario& sc);

// Per device. `forward` is the training forward pass of micro_batch * ep / cp sequences
// (the tp x ep group's share), as evaluate() builds it; the state shards over dp * cp.
TrainMemory train_memory(const model::ParamCounts& p, const ModelShape& s, const PassCost& forward,
                         const Scenario& sc);

}  // namespace hdlab::simulator
