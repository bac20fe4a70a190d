#pragma once
// Roofline timing of op tables on a hardware profile, and collective communication.
//
// Per op and device:
//   time = max(flops / (peak * compute_eff), bytes / (bandwidth * memory_eff)) + calls * launch
// where peak is the matrix rate of the model's dtype for gemm and attention ops and the
// fp32 vector rate for vector ops (memory ops have no compute term); the op is compute
// bound when the first term wins. Efficiencies come from the profile (scalar or curve,
// see hardware.hpp).
//
// Sharding of a table's logical costs over a tensor-parallel group of tp devices and
// an expert-parallel group of ep devices (tables are built for the sequences of the
// whole tp x ep group; the dense part runs data-parallel over the ep ranks, and tensor
// parallelism comes with sequence parallelism, so norms and other vector ops split too):
//   FLOPs, activation and KV bytes / (tp * ep) for every op;
//   weight bytes / tp, except the routed experts' / (tp * ep) (each device holds E / ep
//   experts and 1/tp of each; every ep rank reads its own copy of the dense weights).
// With tp > G the K/V heads are replicated: KV bytes split over min(tp, G) only.
//
// Collectives (p ranks, S bytes per device, bandwidth B per direction times
// efficiency.communication, latency a per step):
//   ring all-reduce  2 (p-1)/p * S / B + 2 (p-1) a
//   all-gather and reduce-scatter (p-1)/p * S / B + (p-1) a
//   all-to-all       (p-1)/p * S / B + (p-1) a        (S: bytes a device sends)
// Per layer pass: tensor parallel all-reduces the attention and the FFN outputs
// ([rows, D]) once each in the forward (twice as many in training: backward too);
// expert parallel dispatches and combines each token's top-k copies ([rows, k, D]).
#include <array>
#include <cstdint>
#include <string>

#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/kernel_models.hpp"
#include "hdlab/simulator/op_table.hpp"

namespace hdlab::simulator {

struct Sharding {
  double tp = 1;
  double ep = 1;
  double kv_tp = 1;  // min(tp, G): K/V heads split this many ways (replicated beyond)
  bool sequence_parallel = true;  // residual-stream ops split over tp (evaluate.hpp's ParallelScenario)
  // Context-parallel ranks a training sequence splits over. The split is made where the
  // training pass is built (for micro_batch * ep / cp sequences: each op's rows, FLOPs and
  // activations, and the attention pairs, 1/cp of the whole); here it sizes the K/V
  // exchange (cost_model.hpp's train_comm).
  double cp = 1;
  // The ways an op's rows and activations split: tp * ep, or ep alone for the
  // residual-stream ops without sequence parallelism.
  double activation_ways(model::OpKind k) const;
};
// The ops on the residual stream: norms around the sublayers, residual adds, VWN's
// hyper-connections, the final norm.
bool on_residual_stream(model::OpKind k);

struct OpTime {
  double seconds = 0;  // max(compute_s, memory_s) + launch_s (kernel models: their time)
  double compute_s = 0;
  double memory_s = 0;
  double launch_s = 0;
  bool compute_bound = false;
  double backward_s = 0;  // the op's backward (training): 2 x seconds, or the kernel models' (kernel_time.cpp)
  // The part of backward_s that computes weight gradients: the dW products of an op with
  // weights (roofline: a GEMM op's backward is its dX and dW products, each as long as the
  // forward, so half; kernel models: each product's dW = X^T dY). What a zero-bubble
  // pipeline defers (pipeline.hpp's W); attention, element-wise ops and lookups have none.
  double backward_weight_s = 0;
};

// The share of an op's logical cost one device carries.
model::OpCost device_cost(model::OpKind k, const OpRow& r, const Sharding& s);

// One device's rates for one model dtype and sharding, looked up once per evaluation.
struct Roofline {
  const HardwareProfile* hw = nullptr;
  Sharding sharding;
  double matrix_peak = 0;     // FLOP/s of the weight products' precision (the scenario's compute)
  double attention_peak = 0;  // FLOP/s of the activations' precision, which attention runs in
  // peak * scalar efficiency by OpClass (memory ops: 0, no compute term), FLOP/s
  std::array<double, 4> compute_rate{};
  double memory_rate = 0;  // bandwidth * scalar memory efficiency, B/s
  double launch_s = 0;
  bool curves = false;     // the profile has efficiency curves: evaluate them per op
  double inv_group = 1, inv_tp = 1, inv_kv = 1;  // 1 / (tp*ep), 1 / tp, 1 / (kv_tp*ep)
  // Fitted kernel models (kernel_models.hpp), where the profile has them: then every op is
  // timed by them (kernel_time.cpp) and `shape` gives the attention's heads and widths.
  const KernelModels* kernels = nullptr;
  const GemmKernel* gemm = nullptr;
  const PrefillAttentionKernel* prefill = nullptr;
  const DecodeAttentionKernel* decode = nullptr;
  const MoeLayerKernel* moe_layer = nullptr;  // the products' precision's, where fitted
  std::uint64_t gemm_key = 0, decode_key = 0;  // their memo keys (kernel_memo.hpp), looked up once here
  DecodeKernel decode_kernel = DecodeKernel::automatic;  // the scenario's attention.decode_kernel
  ModelShape shape{};    // a copy (the roofline may outlive the caller's)
  double kv_group = 1;  // G / kv_tp: KV heads one device holds
};
// `dtype`: the weight products' precision; attention runs in the shape's activations
// precision (the prefill kernel in fp8 with an fp8 cache: prefill_kernel_dtype) and decode
// attention's kernel is the one of its KV-cache precision (without a shape both are
// `dtype`). ConfigError when the device has no matrix rate for one of them (fp8 on a
// device without).
// `shape` is needed (and used, copied) only with kernel models; without it the profile's
// kernel models are left unused (the roofline's rates time every op).
Roofline make_roofline(const HardwareProfile& hw, model::DType dtype, const Sharding& s,
                       const ModelShape* shape = nullptr);
// What an op or a pass is timed for: inference runs the forward alone, training its
// backward too. Timed for the forward, the backward fields (OpTime's, PassTime's) stay 0:
// a decode step's ops would otherwise time three GEMMs each where one runs.
enum class Timing { forward, training };
// One op on one device. `work` is the layer's (null outside the layers); the kernel
// models time attention from it.
OpTime op_time(model::OpKind k, const OpRow& r, const Roofline& rl, const LayerWork* work,
               Timing timing = Timing::training);
// The kernel models' time of an op, forward and (training) backward (kernel_time.cpp).
OpTime kernel_op_time(model::OpKind k, const OpRow& r, const Roofline& rl, const LayerWork* work,
                      Timing timing = Timing::training);

// Per-op time of a pass on one device, summed over layer passes.
struct PassTime {
  std::array<double, model::op_kind_count> op_s{};  // by OpKind
  std::array<double, model::op_kind_count> compute_bound_s{};  // the part of op_s in compute-bound runs
  double total_s = 0;
  double layers_s = 0;  // ops inside the layers only
  // The backward of the pass (training): 2 x each op's forward under the roofline (the
  // matrix-product convention for every op); the kernel models time each op's backward
  // kernels (the transposed products of a GEMM, ...: kernel_time.cpp).
  std::array<double, model::op_kind_count> backward_op_s{};
  double backward_s = 0;
  double backward_weight_s = 0;  // the part of backward_s in weight-gradient products (OpTime's)
};
void pass_time(const PassCost& p, const Roofline& rl, Timing timing, PassTime& out);

struct Link {
  double bytes_per_s = 0;  // per direction, efficiency applied
  double latency_s = 0;
  // Fitted collectives of the group's GPU count (kernel models, groups inside one node):
  // where present they time the collective instead of the ring formulas below.
  std::array<std::vector<CollectiveRegime>, collective_count> regimes{};
  std::vector<CollectiveRegime> custom_all_reduce;  // an inference engine's one-node all-reduce
};
// The link a group spanning `span` devices uses: NVLink inside a node of gpus_per_node
// devices, the network beyond; `ranks` are the collective's participants (the fitted
// regimes are looked up for that count). ConfigError at `pointer` when the profile has no
// such link.
Link link_for(const HardwareProfile& hw, std::int64_t span, std::int64_t gpus_per_node, const std::string& pointer,
              std::int64_t ranks = 0);

double ring_all_reduce_s(double bytes, double ranks, const Link& l);
double all_gather_s(double bytes, double ranks, const Link& l);  // also reduce-scatter
double all_to_all_s(double bytes_sent, double ranks, const Link& l);
// An inference engine's all-reduce: the faster of its one-node kernel and the library's.
double inference_all_reduce_s(double bytes, double ranks, const Link& l);

// Collective time of one forward pass on one device: tensor-parallel all-reduces and
// expert-parallel all-to-alls per layer pass; in training also context parallelism's K/V
// exchange, and what the scenario's overlaps hide of each kind (cost_model's train_comm).
struct PassComm {
  double tp_s = 0;
  double ep_s = 0;
  double cp_s = 0;
  // the parts hidden behind compute (training, cost_model's train_comm), each <= its kind's
  double tp_hidden_s = 0, ep_hidden_s = 0, cp_hidden_s = 0;
  double total() const { return tp_s + ep_s + cp_s - tp_hidden_s - ep_hidden_s - cp_hidden_s; }  // exposed
};
// `inference`: prefill and decode (an engine's one-node all-reduce where the profile has one).
PassComm pass_comm(const PassCost& p, const ModelShape& s, const Sharding& sh, const Link& tp_link,
                   const Link& ep_link, bool inference = false);

}  // namespace hdlab::simulator
