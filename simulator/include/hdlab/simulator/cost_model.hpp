#pragma once
// Every phase of a design costed on a device, with the intermediates a report or a test
// wants (op tables, per-op times, communication). evaluate.hpp condenses these into the
// headline metrics; the CLI's --json prints them whole.
//
// Training step (per device, one optimizer step):
//   micro-step = 3 x forward (backward = 2 x forward for every op, the matrix-product
//                convention applied to all ops) + recomputation + TP/EP collectives
//                (forward's, again in the backward, again for full recomputation)
//   recomputation: selective reruns the attention op (and VWN's GHC norm, dynamic
//                coefficients and the (1 - eta) share of width connections); full
//                reruns every layer's forward
//   step = grad_accum x micro-step + exposed DP gradient all-reduce (hidden behind the
//          backward of the last micro-step when overlap_dp_comm) + ZeRO-3 weight
//          all-gathers (forward and backward of each micro-step; with
//          overlap_weight_gather each hidden behind the compute of its pass as far as that
//          lasts, so at most the shorter of the two is hidden) + the optimizer update
//          (memory bound: reads weights, gradients and optimizer states, writes weights
//          and states, each in its precision) + the scenario's framework overhead per step
// Context parallelism (evaluate.hpp's ParallelScenario): the training pass is built for
// 1/cp of the sequences (1/cp of every op's rows and of the attention pairs per device);
// each layer pass all-gathers its K/V over the cp ranks in the forward and reduce-scatters
// their gradients in the backward (again gathered for full recomputation), a ring hiding
// each exchange behind the layer's forward attention as far as that lasts; gradients
// all-reduce and ZeRO shards over dp * cp ranks.
// Prefill and decode: the pass's op times plus its collectives, nothing overlapped, plus
// the framework overhead per prefill or step.
#include <memory>

#include "hdlab/model/params.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/memory.hpp"
#include "hdlab/simulator/phases.hpp"
#include "hdlab/simulator/roofline.hpp"

namespace hdlab::simulator {

// Each tensor class's precision: the scenario's where it sets one, else the model's dtype.
TensorPrecision tensor_precision(const model::Backbone& b, const PrecisionScenario& p);

// What every phase needs, derived once per evaluation.
struct CostContext {
  const model::Config* config = nullptr;
  const HardwareProfile* hw = nullptr;
  const Scenario* scenario = nullptr;
  ModelShape shape;
  LayerPlan plan;
  ModelShape baseline_shape;  // the base backbone (before growth) without the method (serving ratios)
  LayerPlan baseline_plan;
  PassOptions options;
  Sharding sharding;
  Roofline roofline;
  Link tp_link, ep_link, cp_link, dp_link;
  model::ParamCounts params;
};
// Checks the scenario (check_scenario) and derives the context. The context points at
// c, hw and s: they must outlive it (temporaries are refused at compile time).
void make_context(const model::Config& c, const HardwareProfile& hw, const Scenario& s, CostContext& out);
void make_context(const model::Config&&, const HardwareProfile&, const Scenario&, CostContext&) = delete;
void make_context(const model::Config&, const HardwareProfile&&, const Scenario&, CostContext&) = delete;
void make_context(const model::Config&, const HardwareProfile&, const Scenario&&, CostContext&) = delete;

struct TrainResult {
  PassTime forward;            // one micro-step's forward on one device
  PassComm forward_comm;       // its TP/EP collectives
  double recompute_s = 0;      // per micro-step
  double grad_accumulation_s = 0;  // per micro-step: gradients added into the step's buffer (0 when fused)
  double weight_cast_s = 0;        // per micro-step: autocast's casts of the parameters, every forward run
  double micro_step_s = 0;
  double dp_comm_s = 0;        // gradient all-reduce per step
  double exposed_dp_s = 0;
  double zero3_gather_s = 0;   // per micro-step
  double exposed_zero3_s = 0;  // its part not hidden behind the micro-step's compute
  double optimizer_s = 0;
  double framework_s = 0;      // the scenario's framework overhead per step
  double step_s = 0;
  double comm_s = 0;           // collectives not hidden, per step
  double flops = 0;            // per step, all devices, attention executed
  double model_flops = 0;      // per step, all devices, no recomputation, attention exact
  double tokens = 0;           // per step, all devices
  TrainMemory memory;
};
// `forward` receives the training forward pass (micro_batch * ep sequences).
void cost_train(const CostContext& ctx, PassCost& forward, TrainResult& out);
// The collectives of a training forward pass (or of one layer pass) on one device, timed
// `time`: TP and EP as pass_comm, and context parallelism's K/V all-gather per layer pass
// (each device receives the whole sequences' K/V of its layer, split over min(tp, G)).
// Hidden, each at most the shorter of the collective and the compute it runs under: a
// ring's K/V behind the pass's attention; with overlap_tp_comm the TP collectives behind
// the TP-sharded projections (qkv, o, FFN and shared-expert GEMMs); with overlap_ep_comm
// the all-to-alls behind the layers' compute outside the routed experts that the other
// two left (no compute hides two collectives).
PassComm train_comm(const CostContext& ctx, const PassCost& pass, const PassTime& time);
// Ranks a data-parallel collective spans: dp, times cp (context-parallel ranks hold the
// same weights); routed experts' copies are spread over this / ep.
double gradient_ranks(const ParallelScenario& p);

struct InferenceResult {
  PassTime time;
  PassComm comm;
  double framework_s = 0;  // the scenario's framework overhead per prefill or decode step
  double seconds = 0;      // op times + collectives + framework overhead
};
void cost_prefill(const CostContext& ctx, PassCost& pass, InferenceResult& out);
// A decode step of `batch` sequences at `context`; baseline = the base backbone (before
// growth) without the method.
void cost_decode(const CostContext& ctx, bool baseline, std::int64_t batch, std::int64_t context, PassCost& pass,
                 InferenceResult& out);

// Inference memory per device.
double inference_weight_bytes(const CostContext& ctx);
double kv_bytes_per_seq(const CostContext& ctx, std::int64_t context);
// Sequences of `context` tokens whose KV cache fits next to the weights (per replica).
double max_batch(const CostContext& ctx, std::int64_t context);

// The recomputation rule of a training step (what cost_train adds to 3 x forward, and
// the pipeline to each layer pass's backward). Selective reruns a share of some ops:
// attention and VWN's GHC norm and dynamic coefficients in full, its width connections
// but the eta share whose inputs are kept; 0 for every other op.
double selective_recompute_share(model::OpKind k, double vwn_eta);
// Recomputation time of `forward` (a pass, or one layer pass): none 0, full the layers'
// forward (layers_s), selective the shares above of each op's time.
double recompute_s(const TrainScenario& t, const PassTime& forward);

// The optimizer update and the data-parallel gradient all-reduce of `dense` + `experts`
// parameters (logical counts; a device holds their tp, and for experts tp * ep, share;
// a ZeRO-sharded optimizer updates its dp share), as one device runs them.
double optimizer_update_s(const CostContext& ctx, double dense, double experts);
double dp_gradient_s(const CostContext& ctx, double dense, double experts);
// One micro-step's gradient accumulation of those parameters on one device: 0 when fused
// (TrainScenario::grad_accumulation), else one streaming pass over their gradients
// (autocast: their cast back to the master precision and the add into .grad).
double grad_accumulation_s(const CostContext& ctx, double dense, double experts);
// One forward's cast of those parameters to the weights' precision under autocast (0 in
// the other modes, and where the master precision is the weights': nothing to cast).
double weight_cast_s(const CostContext& ctx, double dense, double experts);

// FLOPs of the attention op of a pass for a pair count (2*H*(qk+v) per pair).
double attention_flops(const ModelShape& s, double pairs);

}  // namespace hdlab::simulator
