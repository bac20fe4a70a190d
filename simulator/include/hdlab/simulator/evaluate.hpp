#pragma once
// One call that costs a design on a device in every phase: the headline numbers a sweep
// writes as CSV columns and the CLI prints.
//
// For the sweep engine (read this first):
//  - Parse the scenario once (parse_scenario), the hardware once (hardware.hpp), and per
//    grid point build the model::Config and call evaluate(config, hw, scenario, metrics)
//    with one Metrics object reused across calls: after the first call it allocates
//    nothing (the serving vector keeps its capacity), so millions of calls are fine.
//  - Columns: metric_columns(scenario) once per sweep (names carry their units:
//    *_s seconds, *_flops FLOPs, *_bytes bytes, *_tokens_per_s, *_params, *_seqs,
//    *_ratio and *_fraction dimensionless, *_fits 1/0); metric_row(metrics, row) per
//    point gives the values in the same order. A single value by name:
//    metric_value(metrics, "decode_tokens_per_s"); scalar ones by enum: metrics[Metric::x].
//  - Bad input (a tp that does not divide the heads, an fp8 model on a device without
//    fp8...) is a model::ConfigError naming the scenario's JSON pointer
//    ("/scenario/parallel/tp"); a sweep can record it as that point's error and go on.
//  - Serving cells are named serving_b<batch>_in<input tokens>_{tokens_per_s,ratio,fits}.
//  - Scenario fields are all JSON-addressable, so a sweep axis such as
//    "/scenario/decode/batch": [1, 8, 64] maps onto parse_scenario's input.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/model/design.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::simulator {

// What the backward pass may recompute instead of keeping (Korthikanti et al. 2022):
// none keeps every activation (attention probabilities included), selective recomputes
// the core attention (softmax(QK^T)V), full keeps only each layer's input and reruns
// the layer's forward in the backward pass.
enum class Recompute { none, selective, full };
const char* to_string(Recompute r);
// ZeRO stages over the data-parallel ranks: none; optimizer (states sharded, ZeRO-1);
// gradients (+ gradients, ZeRO-2); weights (+ weights, ZeRO-3).
enum class OptimizerSharding { none, optimizer, gradients, weights };
const char* to_string(OptimizerSharding s);
// Which attention count times the attention op: the pairs a tiled kernel computes
// (executed) or only the visible pairs (exact). Both are always reported.
enum class AttentionCount { executed, exact };
const char* to_string(AttentionCount c);
// How prefill and training attention runs: one fused kernel over visible tiles
// (FlashAttention: the scores never leave the chip), or unfused as frameworks ran it
// before FlashAttention: Q K^T over every (query, key) pair written to memory as
// [seqs, H, rows_q, rows_kv] scores, a masked softmax reading and writing them, and the
// product with V reading the probabilities. Decode reads the cache either way.
enum class AttentionKernel { fused, unfused };
const char* to_string(AttentionKernel k);
const char* to_string(DecodeKernel k);

// How a micro-step's weight gradients join the step's (TrainScenario::grad_accumulation).
enum class GradAccumulation { fused, separate, autocast };
const char* to_string(GradAccumulation g);

struct TrainScenario {
  std::int64_t seq_len = 4096;      // tokens per training sequence (before HD/PHD expansion)
  std::int64_t micro_batch = 1;     // sequences per data-parallel rank per micro-step
  std::int64_t grad_accum = 1;      // micro-steps per optimizer step
  Recompute recompute = Recompute::selective;
  OptimizerSharding sharding = OptimizerSharding::none;
  double vwn_eta = 1.0;             // VWN: share of width-connection inputs saved, not recomputed
  bool overlap_dp_comm = true;      // gradient all-reduce hidden behind the backward pass
  // ZeRO-3 / FSDP: the next layer's weights gathered while the current one computes
  // (FSDP's prefetch), hidden behind the forward and the backward as far as they last
  bool overlap_weight_gather = true;
  // Tensor-parallel collectives split into chunks that run under the projections next to
  // them (Megatron / Transformer Engine's TP communication overlap; off by default, as
  // there): hidden behind the pass's TP-sharded GEMMs as far as they last.
  bool overlap_tp_comm = false;
  // Expert-parallel all-to-alls of one micro-batch run under another's compute
  // (DualPipe-style two-micro-batch overlap; off by default): hidden behind the pass's
  // layer compute outside the routed experts as far as it lasts.
  bool overlap_ep_comm = false;
  // Dropout probabilities (Megatron-LM's hidden_dropout and attention_dropout); 0: none.
  // Any p > 0 costs the same: the masks written and kept, and with unfused attention the
  // dropout kernel over the probabilities (layer_ops; a fused kernel drops inside).
  double hidden_dropout = 0;
  double attention_dropout = 0;
  // fused: the weight-gradient products add into the step's gradient buffer themselves
  // (Megatron-LM's gradient accumulation fusion), nothing costed beyond them; separate: a
  // kernel after each micro-step's backward adds every gradient into the step's buffer
  // (Megatron-LM's main_grad hook without that fusion): per parameter on the device it
  // reads the gradient in the weights' precision and reads and writes the buffer in the
  // communication precision (the buffer is what the data-parallel all-reduce sends);
  // autocast: PyTorch's automatic mixed precision, the parameters kept in the master
  // precision (the optimizer state's, where it differs from the weights') and cast to the
  // weights' precision by every forward (again by a fully recomputed one: the cast cache
  // lives one forward), each micro-step's weight gradients cast back and added into the
  // parameters' .grad by autograd: per parameter on the device, a cast reads the master
  // and writes the weights' precision; the backward reads the gradient in the weights'
  // precision, writes it in the master's, and the add reads both and writes the master's.
  GradAccumulation grad_accumulation = GradAccumulation::fused;
  bool operator==(const TrainScenario&) const = default;
};

struct PrefillScenario {
  std::int64_t tokens = 4096;  // prompt tokens L per sequence
  std::int64_t batch = 1;      // sequences prefilled together
  bool operator==(const PrefillScenario&) const = default;
};

struct DecodeScenario {
  std::int64_t batch = 32;      // sequences decoded together per step (per model replica)
  std::int64_t context = 4096;  // tokens already in the KV cache of each sequence
  // HD with KV mirror: a decode step's mirrored layers run only the final stream's query
  // row (training's and prefill's mirror shortcut) when an engine has a kernel for that
  // uneven step; off (the default), they run all n rows like the other layers, reading
  // the K/V projected from their source layer.
  bool kv_mirror_final_only = false;
  bool operator==(const DecodeScenario&) const = default;
};

// Decode throughput over a batch x input-length matrix, as published HD serving results
// are reported. A cell decodes at context = input + output_tokens / 2 (the mean context
// while generating output_tokens), against the baseline: the base backbone (before any
// growth) without the method, on the same devices.
struct ServingScenario {
  std::vector<std::int64_t> batches{1, 8, 32, 128};
  std::vector<std::int64_t> input_lengths{1024, 4096, 16384};
  std::int64_t output_tokens = 1024;
  bool operator==(const ServingScenario&) const = default;
};

struct KvScenario {
  std::int64_t context = 32768;     // tokens per sequence for kv_bytes_per_seq and max_batch_seqs
  double memory_utilization = 0.9;  // share of device memory usable for weights + KV cache
  bool operator==(const KvScenario&) const = default;
};

// Devices: world = tp * dp. Tensor parallel shards every layer over tp devices; expert
// parallel shards the routed experts over ep devices carved out of the data-parallel
// ranks (ep divides dp); in inference a model replica spans tp * ep devices, its dense
// part running data-parallel over the ep ranks. Collectives inside one node of
// gpus_per_node devices use NVLink, larger ones the network.
//
// Sequence parallelism (Korthikanti et al. 2022): with tp > 1 the ops on the residual
// stream (norms, residual adds, VWN's hyper-connections, the final norm) and the inputs
// they save split their rows over the tp ranks; the TP all-reduces become reduce-scatters
// and all-gathers of the same bytes, so communication is unchanged. Off, every tp rank
// runs those ops on the whole [rows, D] and keeps their inputs whole. Default on. At
// tp = 1 it has no effect: asking for it there is refused, and the JSON leaves it out.
//
// Context parallelism (training only): each training sequence splits over cp ranks, in
// 2 x cp chunks with rank i holding chunks i and 2cp - 1 - i, so every rank carries 1/cp
// of the rows and, under a causal mask, 1/cp of the attention pairs; the weights are
// replicated over the cp ranks, which join the data-parallel ranks in the gradient
// all-reduce and in ZeRO's sharding. Before each layer's attention the ranks exchange
// their K/V ([tokens/cp, kv entry] each): all_gather gathers the whole sequence's K/V
// first (Llama 3; nothing hidden), ring passes the chunks around while attending to the
// one in hand (ring attention; hidden behind the attention as far as it lasts). The
// backward reduce-scatters the K/V gradients the same way. Devices: world = tp * cp * dp.
// Prefill and decode run without it: the cp ranks serve as more replicas, as dp's do.
enum class CpComm { all_gather, ring };
const char* to_string(CpComm c);
// The tensor-parallel all-reduce of prefill and decode on a fitted profile: automatic, the
// faster of the collective library's (NCCL) and an inference engine's one-node custom
// kernel where the profile has one; library, NCCL's only (an engine built without its
// custom all-reduce: TensorRT-LLM before v0.12 unless built with --use_custom_all_reduce).
// Training always runs the library's.
enum class TpAllReduce { automatic, library };
const char* to_string(TpAllReduce a);
struct ParallelScenario {
  std::int64_t tp = 1;
  std::int64_t ep = 1;
  std::int64_t dp = 1;
  std::int64_t cp = 1;
  std::int64_t gpus_per_node = 8;
  bool sequence_parallel = true;  // only read when tp > 1
  CpComm cp_comm = CpComm::all_gather;  // only read when cp > 1
  TpAllReduce tp_all_reduce = TpAllReduce::automatic;  // only read when tp > 1
  bool operator==(const ParallelScenario&) const = default;
};

struct AttentionScenario {
  std::optional<model::Layout> layout;  // physical layout; empty: "auto" (resolve_layout)
  std::int64_t tile_q = 128;            // kernel tile: query rows
  std::int64_t tile_k = 128;            // kernel tile: keys
  AttentionCount count = AttentionCount::executed;
  AttentionKernel kernel = AttentionKernel::fused;
  // Decode attention's kernel on a fitted GPU profile: automatic, the engine's dispatch as
  // fitted (a grouped-query kernel for GQA groups where it applies); one_row, a block per
  // query head even under GQA, each reading its KV head's keys (an engine without a
  // grouped-query decode kernel: TensorRT-LLM before v0.8, whose GQA decode ran the masked
  // multi-head kernel).
  DecodeKernel decode_kernel = DecodeKernel::automatic;
  bool operator==(const AttentionScenario&) const = default;
};

// How an engine launches a gated FFN's gate and up projections: one product of the
// concatenated [D, 2F] weights (Megatron's fused fc1, vLLM's merged gate_up) or two of
// [D, F] (TensorRT-LLM's Llama before --use_fused_mlp). Timed on fitted GPU profiles;
// FLOPs and weights are the same either way.
enum class GateUp { fused, separate };
const char* to_string(GateUp g);

struct FfnScenario {
  GateUp gate_up = GateUp::fused;
  bool operator==(const FfnScenario&) const = default;
};

// Time the framework spends per iteration outside the kernels and collectives hdlab times
// (Python dispatch, a serving engine's scheduler and sampling, a data loader that is not
// overlapped): added once per training optimizer step (the pipeline's too), per prefill
// and per decode step. 0 unless given: hdlab does not guess a framework's overhead.
struct FrameworkScenario {
  double train_step_s = 0;
  double prefill_s = 0;
  double decode_step_s = 0;
  bool operator==(const FrameworkScenario&) const = default;
};

// Precision per tensor class, for mixed-precision deployments (fp8 weights with 16-bit
// activations, an fp8 KV cache, bf16 optimizer states...). A class left unset takes the
// model's dtype (backbone "dtype"); the optimizer state is fp32 unless set.
//   weights          resident weights: memory, the bytes a pass reads, ZeRO-3's gathers
//   activations      tensors between ops, what training keeps for its backward, the
//                    attention's queries and outputs (and an unfused kernel's scores);
//                    prefill attention runs in it (its matrix rate and fitted kernel)
//   kv_cache         the KV cache: memory, the bytes decode reads and writes, the decode
//                    attention kernel fitted for that cache dtype
//   compute          the weight products' matrix rate and fitted GEMM kernel (fp8: the
//                    16-bit inputs quantised on the fly, as the fitted kernel's passes say)
//   communication    the element of every collective and pipeline transfer, and of the
//                    gradients, which are kept and reduced in it
//   optimizer_state  Adam's two moments and, when it differs from the weights' dtype,
//                    the master copy of the weights
struct PrecisionScenario {
  std::optional<model::DType> weights, activations, kv_cache, compute, communication;
  model::DType optimizer_state = model::DType::fp32;
  bool operator==(const PrecisionScenario&) const = default;
};

struct Scenario {
  TrainScenario train;
  PrefillScenario prefill;
  DecodeScenario decode;
  ServingScenario serving;
  KvScenario kv;
  ParallelScenario parallel;
  AttentionScenario attention;
  FfnScenario ffn;
  FrameworkScenario framework;
  PrecisionScenario precision;
  bool operator==(const Scenario&) const = default;
};

// {"train": {"seq_len", "micro_batch", "grad_accum", "recompute", "optimizer_sharding",
//            "vwn_eta", "overlap_dp_comm", "overlap_weight_gather", "overlap_tp_comm",
//            "overlap_ep_comm", "hidden_dropout", "attention_dropout",
//            "grad_accumulation": "fused"|"separate"|"autocast"},
//  "prefill": {"tokens", "batch"}, "decode": {"batch", "context", "kv_mirror_final_only"},
//  "serving": {"batches": [...], "input_lengths": [...], "output_tokens"},
//  "kv": {"context", "memory_utilization"},
//  "parallel": {"tp", "ep", "dp", "cp", "gpus_per_node", "sequence_parallel",
//               "cp_comm": "all_gather"|"ring", "tp_all_reduce": "auto"|"library"},
//  "attention": {"layout": "auto"|"interleaved"|"stream_major"|"phd_split",
//                "tile_q", "tile_k", "count": "executed"|"exact", "kernel": "fused"|"unfused"},
//  "ffn": {"gate_up": "fused"|"separate"},
//  "framework": {"train_step_s", "prefill_s", "decode_step_s"},
//  "precision": {"weights", "activations", "kv_cache", "compute", "communication",
//                "optimizer_state"}: each "bf16" | "fp16" | "fp32" | "fp8", or "model"
//                (the backbone's dtype; optimizer_state: "fp32" unless given)}
// Every key optional (defaults above); unknown keys are ConfigErrors at their pointer.
// "train": {"zero_stage": 0-3} may stand for optimizer_sharding (none, optimizer,
// gradients, weights), not next to it; to_json writes optimizer_sharding.
Scenario parse_scenario(const nlohmann::json& j, const std::string& pointer = "/scenario");
nlohmann::json to_json(const Scenario& s);  // every field explicit

// Scalar metrics. Names carry units; see metric_name / metric_unit.
enum class Metric : int {
  params_total,                      // parameters of the design (embeddings included)
  params_active,                     // per token, embeddings excluded
  train_step_s,                      // one optimizer step (grad_accum micro-steps)
  train_tokens_per_s,                // tokens (not expanded positions) per second, all devices
  train_flops,                       // FLOPs of one optimizer step, all devices (executed attention)
  train_mfu_fraction,                // train_flops / (step time * peak * devices)
  train_comm_s,                      // collective time per step not hidden behind compute
  train_memory_bytes,                // peak per device: weights + gradients + optimizer + activations
  train_weight_bytes,                // per device
  train_grad_bytes,                  // per device
  train_optimizer_bytes,             // per device (fp32 master + Adam moments)
  train_activation_bytes,            // per device, one micro-batch
  train_fits,                        // 1 when train_memory_bytes <= device memory
  prefill_s,                         // prefill of prefill.batch sequences of prefill.tokens
  prefill_tokens_per_s,              // prompt tokens per second
  prefill_flops,
  prefill_attention_flops_exact,     // visible pairs only
  prefill_attention_flops_executed,  // whole visible tiles
  decode_step_s,                     // one decode step at decode.batch, decode.context
  decode_tokens_per_s,               // generated tokens per second (per replica)
  decode_flops,                      // per step
  decode_bytes,                      // per step, every byte moved
  decode_weight_bytes,               // weights read per step
  decode_kv_read_bytes,              // KV cache read per step
  decode_comm_s,                     // collective time per step
  decode_vs_baseline_ratio,          // decode_tokens_per_s / the baseline's (see ServingScenario) at the same point
  kv_bytes_per_seq,                  // KV cache of one sequence at kv.context
  kv_bytes,                          // KV cache of decode.batch sequences at decode.context
  inference_weight_bytes,            // resident weights per device in inference
  max_batch_seqs,                    // most sequences at kv.context whose cache fits
  count_
};
inline constexpr int metric_count = static_cast<int>(Metric::count_);
const char* metric_name(Metric m);  // "train_step_s"
const char* metric_unit(Metric m);  // "s", "FLOP", "B", "tokens/s", "params", "seqs", "1"
std::optional<Metric> metric_from_name(std::string_view name);

struct ServingPoint {
  std::int64_t batch = 0;
  std::int64_t input_tokens = 0;
  std::int64_t context = 0;  // tokens decoded against: input + output_tokens / 2
  double tokens_per_s = 0;
  double baseline_tokens_per_s = 0;
  double ratio = 0;          // tokens_per_s / baseline_tokens_per_s
  bool fits = false;         // weights + KV cache at input + output_tokens fit the devices
};

struct Metrics {
  std::array<double, metric_count> values{};
  std::vector<ServingPoint> serving;  // batches-major: batches[i] x input_lengths[j]
  double operator[](Metric m) const { return values[static_cast<int>(m)]; }
  double& operator[](Metric m) { return values[static_cast<int>(m)]; }
};

// Every scalar metric, then three columns per serving cell (batches-major).
std::vector<std::string> metric_columns(const Scenario& s);
// Values in metric_columns() order, written over `row` (resized, capacity reused).
void metric_row(const Metrics& m, std::vector<double>& row);
// A scalar metric or a serving column by name; ConfigError("", ...) when unknown.
double metric_value(const Metrics& m, std::string_view name);

// The physical attention layout an evaluation uses: the scenario's, or with "auto" the
// one with the fewest executed attention pairs at the prefill length and the scenario's
// tile (model::best_layout: stream-major for HD designs whose intra layers gain more than
// their full and local layers lose; PHD's [origins | hidden]; otherwise interleaved).
model::Layout resolve_layout(const model::Config& c, const Scenario& s);

// Checks a scenario against a config and device (tp divides the query heads and divides
// the KV heads or is a multiple of them, which are then replicated; ep divides the
// experts and dp, ...). ConfigError naming "<pointer>/parallel/tp" etc.
void check_scenario(const model::Config& c, const HardwareProfile& hw, const Scenario& s,
                    const std::string& pointer = "/scenario");

// Evaluates every phase. Calls check_scenario first. Every metric is finite: one that is
// not (an overflow of the profile's rates and the scenario's sizes) is a ConfigError
// naming the metric, never a reported inf or nan.
void evaluate(const model::Config& c, const HardwareProfile& hw, const Scenario& s, Metrics& out);
Metrics evaluate(const model::Config& c, const HardwareProfile& hw, const Scenario& s);

}  // namespace hdlab::simulator
