#pragma once
// Pipeline-parallel training schedules (GPipe, 1F1B, interleaved 1F1B, zero-bubble ZB-H1)
// as a task DAG.
//
// The engine takes a plain workload: per-layer forward and backward times (and the
// weight-gradient part of the backward), activation bytes and the bytes a stage boundary
// after the layer would carry, for one micro-batch; the end costs (embedding on the first
// stage; final norm, LM head and loss on the last); the point-to-point link; and the
// looped structure. pipeline_cost.hpp fills it from the cost model; tests and benchmarks
// fill it by hand.
//
// How a step is simulated:
//  1. Partition: the layers are cut into p*v contiguous chunks (v = 1 unless interleaved);
//     chunk c runs on device c mod p. The first chunk carries the embedding, the last the
//     head. Balanced partitions minimise the slowest chunk, then spread the rest evenly.
//     A recurrent layer weighs K times its time, since a micro-batch runs it K times.
//  2. Path: a micro-batch's forward runs the layer passes in order (prelude, K times the
//     recurrent block, coda). A maximal run of consecutive passes on one chunk is one
//     step, so a recurrent block spread over several chunks makes K visits to each of
//     them, the data returning from the last recurrent chunk to the first (a transfer
//     when they sit on different devices); a block inside one chunk is one step.
//     The backward runs the steps in reverse.
//  3. Order: each device runs its tasks in the order the schedule fixes (below); tasks
//     are nodes of a Boost.Graph DAG with data edges (carrying the transfer time),
//     device-order edges, and the longest path gives every start time.
//
// Tasks: a forward and a backward per step and micro-batch. ZB-H1 (Qi et al. 2023, "Zero
// Bubble Pipeline Parallelism") splits each backward in two: B, the gradient with respect
// to the step's inputs (what the previous step waits for: recomputation, attention,
// norms, the dX products, the collectives), and W, the gradient with respect to its
// weights (the dW products), which nothing downstream needs, only the optimizer step.
// W of a step follows that step's B on the same device; the other schedules keep one
// backward task (B and W together).
//
// Device order. A device's visits per micro-batch are the path steps on it (one for a
// plain pipeline, v for interleaved, up to K on the stages holding a recurrent block).
// Each device keeps two priority lists. Micro-batches go in groups of `group` (default
// p; GPipe: all m); within a group, forwards visit by visit (every micro-batch of the
// group at visit 0, then visit 1...) and backwards mirrored (last visit first), as
// Megatron-LM orders model chunks; looped passes are ordered exactly like interleaved
// chunks. group = 1 runs one micro-batch's passes back to back (depth first), what a
// one-pass schedule does with a loop. The order is then found by list scheduling in
// time; a free device runs
//  - its next forward once that one's data has arrived, while it holds at most w
//    forwards without their backward (GPipe: no limit) and, ZB-H1 only, at most u W's
//    not yet started;
//  - else its next backward (ZB-H1: B) once that one's data has arrived (GPipe: after
//    all its forwards);
//  - else (ZB-H1) its oldest W not yet started: W's fill what would be bubbles. A W
//    that takes no time runs as soon as its B ends (deferring it would only hold memory).
// w, the warm-up: on a plain path (every device visited once) 1F1B's p-1-d, the steps
// after the device's visit; otherwise (interleaved, loops) Megatron-LM's interleaved
// 2(p-1-d) + (v-1) * group, read along the path as twice the steps after the device's
// last visit plus (its visits - 1) groups; and never less than lets its k-th backward
// follow every forward of that micro-batch on the device. ZB-H1 keeps 1F1B's w, so B
// takes 1F1B's backward slot; u, the W's a device may defer, is the largest w of any
// device minus its own (on a plain path d: the first stage defers none, the last p-1),
// so that no device holds more steps' activations than 1F1B's most loaded device does
// (p on a plain path). In the steady state each device then runs F, B, W per
// micro-batch, and the deferred W's fill the cool-down: on uniform stages with m >= p the
// bubble drops from 1F1B's (p-1)(F+B+W) to (p-1) max(F, B, F+B-W), the paper's
// (p-1)(F+B-W) when W <= F, B. ZB-H1 runs one chunk per device (v = 1); looped paths use
// the rules above unchanged.
// When every task arrives on time this is Megatron's warm-up / one-forward-one-backward /
// cool-down order (tests check the closed forms for GPipe, 1F1B, interleaved and ZB-H1);
// a device whose next forward is late but whose next backward is there runs the backward
// rather than idle. Should every device wait on its limit at once (possible with loops),
// the lowest-numbered one whose next forward has arrived runs it beyond the limit;
// PipelineMetrics::limit_overrides counts these.
//
// Conventions: transfers are asynchronous (they delay the receiver, never occupy a
// device) unless PipelineOptions::p2p is blocking (then the sending task holds its
// device until the transfer ends, and the receiver has the data then), and links have
// no contention; a backward pass sends a gradient of the same
// size as the forward's activation. Activation memory: a step's bytes are held from the
// start of its forward until the end of its backward, under ZB-H1 until the end of its W
// (W needs the layer inputs it multiplies by the output gradients; the paper's smaller
// W-only footprint is not modelled), so ZB-H1's bound on held steps is 1F1B's peak count:
// the same bytes on uniform stages, more where a later stage holds more per step than the
// first; a looped step keeps one copy per iteration. Weights, gradients and optimizer
// state are the cost model's (PipelineDevice's state fields, filled by pipeline_cost.hpp).
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace hdlab::simulator {

// One transformer layer for one micro-batch, one pass.
struct PipelineLayer {
  double forward_s = 0;
  double backward_s = 0;         // recomputation included, as the policy has it
  double activation_bytes = 0;   // kept from the forward until the backward
  // Sent to the next stage when a stage ends after this layer: the hidden states plus
  // whatever a later layer still needs (a KV-mirror source's input, the embedding a
  // looped design re-injects). A backward sends gradients of the same size.
  double boundary_bytes = 0;
  // Parameters the layer owns (logical, before tp/ep sharding; a recurrent layer's once),
  // for the update after the last backward (pipeline_cost.hpp); the engine ignores them.
  double dense_params = 0, expert_params = 0;
  // The part of backward_s computing weight gradients (W: the dW products); the rest,
  // backward_s - backward_weight_s, is the input gradient (B). Split off by ZB-H1 only.
  double backward_weight_s = 0;
};

// Work outside the layers: embedding (first stage) or final norm + head + loss (last).
struct PipelineEndCost {
  double forward_s = 0;
  double backward_s = 0;
  double activation_bytes = 0;
  double dense_params = 0;       // as PipelineLayer's
  double backward_weight_s = 0;  // as PipelineLayer's
};

// Layers [first_layer, first_layer + layer_count) run `iterations` times per pass.
struct PipelineLoop {
  std::int64_t first_layer = 0;
  std::int64_t layer_count = 0;
  std::int64_t iterations = 1;
};

// The point-to-point link between pipeline neighbours.
struct PipelineLink {
  double bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
  double latency_s = 0;
  double transfer_s(double bytes) const { return latency_s + bytes / bandwidth_bytes_per_s; }
};

struct PipelineWorkload {
  std::vector<PipelineLayer> layers;  // model order; a recurrent layer once
  PipelineEndCost embedding;
  PipelineEndCost head;
  std::optional<PipelineLoop> loop;
  PipelineLink link;
  double tokens_per_microbatch = 0;   // tokens trained on (not expanded positions); 0: unknown
};

enum class ScheduleKind { gpipe, one_f_one_b, interleaved, zb_h1 };
const char* to_string(ScheduleKind s);  // "gpipe", "1f1b", "interleaved", "zb-h1"

enum class PartitionPolicy { balanced, uniform, explicit_counts };
// How a stage sends its activations and gradients: async, the sender goes on computing
// while they travel (they only delay the receiver); blocking, the sender waits for its
// send to finish before its next task, as Megatron-LM's point-to-point exchange of
// 2021-2022 does (batch_isend_irecv, then a wait on every request and a device
// synchronize), so every sending task holds its device one transfer longer.
enum class P2pSends { async, blocking };
const char* to_string(P2pSends p);
const char* to_string(PartitionPolicy p);

struct PipelineOptions {
  std::int64_t stages = 1;           // p: pipeline devices
  std::int64_t microbatches = 1;     // m per optimizer step
  ScheduleKind schedule = ScheduleKind::one_f_one_b;
  std::int64_t virtual_stages = 1;   // v: chunks per device (interleaved only)
  std::int64_t group = 0;            // micro-batches per group; 0: the schedule's default
  PartitionPolicy partition = PartitionPolicy::balanced;
  std::vector<std::int64_t> layers_per_chunk;  // explicit_counts: p*v entries
  P2pSends p2p = P2pSends::async;
  bool operator==(const PipelineOptions&) const = default;
  std::int64_t chunks() const { return stages * virtual_stages; }
};

// Refuses options the workload cannot run (more chunks than layers, v not dividing the
// layers, a bad explicit partition...): ConfigError at `pointer`/<key>.
void check_pipeline(const PipelineWorkload& w, const PipelineOptions& o, const std::string& pointer = "/pipeline");

struct PipelineChunk {
  std::int64_t device = 0;
  std::int64_t first_layer = 0;
  std::int64_t layer_count = 0;
  bool embedding = false;
  bool head = false;
  // One micro-batch, every pass (recurrent layers K times), end costs included.
  double forward_s = 0;
  double backward_s = 0;
  double activation_bytes = 0;
  double backward_weight_s = 0;  // the part of backward_s that is W
};

struct PipelinePartition {
  std::vector<PipelineChunk> chunks;  // model order
  std::vector<double> device_time_s;  // forward + backward of one micro-batch, per device
  double imbalance = 1;               // slowest device / mean device (1 = balanced)
};
PipelinePartition partition_stages(const PipelineWorkload& w, const PipelineOptions& o);

// One visit of a micro-batch to a chunk, in forward order.
struct PipelineStep {
  std::int64_t chunk = 0;
  std::int64_t device = 0;
  std::int64_t first_layer = 0;       // layer of the first pass in the step
  std::int64_t last_layer = 0;        // layer of the last pass (inclusive)
  std::int64_t layer_passes = 0;
  std::int64_t first_iteration = -1;  // loop iterations touched; -1: no recurrent layer
  std::int64_t last_iteration = -1;
  bool embedding = false;
  bool head = false;
  double forward_s = 0;
  double backward_s = 0;
  double activation_bytes = 0;
  double send_s = 0;  // to the next step (forward) and back (gradient); 0 on one device
  double backward_weight_s = 0;  // the part of backward_s that is W
};
std::vector<PipelineStep> microbatch_path(const PipelineWorkload& w, const PipelinePartition& p);

struct PipelineTask {
  std::int32_t device = 0;
  std::int32_t microbatch = 0;
  std::int32_t step = 0;  // index into the path
  bool backward = false;  // a backward task: the whole backward, or under ZB-H1 its B or W
  double start_s = 0;
  double end_s = 0;
  bool weight = false;    // ZB-H1's W (backward too): the weight gradients split off the backward
};

struct PipelineDevice {
  double busy_s = 0;                 // compute time over the step
  double stage_time_s = 0;           // forward + backward of one micro-batch
  double peak_activation_bytes = 0;  // most activation bytes held at once
  std::int64_t peak_inflight_microbatches = 0;
  std::int64_t warmup_forwards = 0;  // w: forwards held beyond the running one before a backward must come
  std::int64_t deferred_weights = 0; // u (ZB-H1): W's a device may leave unstarted when it runs a forward
  std::int64_t tasks = 0;
  // The device's training state for the parameters of the layers (and ends) it holds:
  // memory.hpp's train_state_memory. pipeline_cost.hpp fills these; the engine alone has
  // no parameters and leaves them 0.
  double weight_bytes = 0, grad_bytes = 0, optimizer_bytes = 0;
  // Peak device memory: the state plus the most activation bytes held at once.
  double memory_bytes() const { return weight_bytes + grad_bytes + optimizer_bytes + peak_activation_bytes; }
};

struct PipelineMetrics {
  double makespan_s = 0;               // first forward start to last backward (ZB-H1: W) end
  double bubble_fraction = 0;          // idle share of p * makespan
  double imbalance = 1;                // slowest device's work / mean (1 = balanced)
  double ideal_makespan_s = 0;         // all work spread evenly, no bubble, no transfer
  double peak_activation_bytes = 0;    // the most on any device
  std::int64_t peak_activation_device = 0;
  double tokens_per_s = 0;             // m * tokens per micro-batch / step_s; 0 if unknown
  // After the makespan: each device reduces its gradients over the data-parallel ranks
  // and updates its parameters once its last backward is done (pipeline_cost.hpp fills
  // these; the engine alone has no update: update_s 0, step_s = makespan_s).
  double update_s = 0;                 // step_s - makespan_s: what the last device to finish adds
  double optimizer_s = 0;              // the slowest device's optimizer update
  double dp_reduce_s = 0;              // the slowest device's gradient all-reduce (before overlap)
  double framework_s = 0;              // the scenario's framework overhead per step (in update_s)
  double step_s = 0;                   // one optimizer step
  std::int64_t steps_per_microbatch = 0;      // forward path steps (visits)
  std::int64_t transfers_per_microbatch = 0;  // point-to-point sends, forward and backward
  double transfer_s_per_microbatch = 0;       // their time, summed along the path
  double backward_weight_s_per_microbatch = 0; // W time along the path (the backward's weight-gradient part)
  std::int64_t tasks = 0;
  std::int64_t limit_overrides = 0;           // forwards run beyond a device's limit (see "Device order")
};

struct PipelineResult {
  PipelineOptions options;          // as run (group resolved)
  PipelinePartition partition;
  std::vector<PipelineStep> path;
  std::vector<PipelineTask> tasks;  // device by device, in execution order
  std::vector<PipelineDevice> devices;
  PipelineMetrics metrics;
};

// Checks (errors at `pointer`/<key>), partitions, orders, builds the DAG and solves it.
PipelineResult simulate_pipeline(const PipelineWorkload& w, const PipelineOptions& o,
                                 const std::string& pointer = "/pipeline");

}  // namespace hdlab::simulator
