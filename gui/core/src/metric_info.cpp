#include "hdlab/gui_core/metric_info.hpp"

#include <array>

namespace hdlab::gui_core {
namespace {

using simulator::Metric;
using G = MetricGroup;

// The descriptions follow simulator/evaluate.cpp and cost_model.cpp: where a number
// comes from, per what (device, step, sequence) and at which scenario fields.
constexpr std::array kInfos{
    MetricInfo{Metric::params_total, G::size, "Parameters (total)", "parameters",
               "Every parameter of the design, embedding tables included (HD adds one embedding table per "
               "stream; growth and VWN add their own weights)."},
    MetricInfo{Metric::params_active, G::size, "Parameters active per token", "parameters",
               "Parameters one token is multiplied by, embeddings excluded: for MoE only the shared and top-k "
               "routed experts count."},

    MetricInfo{Metric::train_step_s, G::training, "Step time", "seconds",
               "One optimizer step: grad_accum micro-steps of forward + backward (+ recomputation), the "
               "collectives not hidden behind compute, the gradient all-reduce's exposed part, the optimizer "
               "update and the scenario's framework overhead."},
    MetricInfo{Metric::train_tokens_per_s, G::training, "Training throughput", "tokens/s",
               "Training tokens per second over all devices: dp x micro_batch x grad_accum x seq_len tokens per "
               "step / step time. Tokens, not expanded positions: an HD token with n streams counts once."},
    MetricInfo{Metric::train_flops, G::training, "FLOPs per step", "FLOP",
               "FLOPs of one optimizer step on all devices: 3x the forward pass (forward + backward) plus "
               "recomputed work, with the attention's executed tiles (masked pairs inside a run tile count)."},
    MetricInfo{Metric::train_mfu_fraction, G::training, "Model FLOPs utilization (MFU)", "% of peak",
               "Model FLOPs (3x the forward, no recomputation, visible attention pairs only) / (step time x "
               "matrix peak x devices)."},
    MetricInfo{Metric::train_comm_s, G::training, "Exposed communication per step", "seconds",
               "Collective time per step that compute does not hide: tensor-, expert- and context-parallel "
               "collectives, ZeRO-3 weight gathers and the gradient all-reduce's part that outlasts the backward."},

    MetricInfo{Metric::prefill_s, G::prefill, "Prefill time", "seconds",
               "Prefill of prefill.batch prompts of prefill.tokens tokens each: compute on the roofline, "
               "collectives and the framework overhead per prefill."},
    MetricInfo{Metric::prefill_tokens_per_s, G::prefill, "Prefill throughput", "tokens/s",
               "Prompt tokens per second: prefill.batch x prefill.tokens / prefill time."},
    MetricInfo{Metric::prefill_flops, G::prefill, "Prefill FLOPs", "FLOP",
               "FLOPs of the prefill pass on one model replica: weight products plus attention over the "
               "executed tiles."},
    MetricInfo{Metric::prefill_attention_flops_exact, G::prefill, "Attention FLOPs (visible pairs)", "FLOP",
               "Attention score and value FLOPs of the prefill counting only the query-key pairs the mask "
               "lets through: the least any kernel must do."},
    MetricInfo{Metric::prefill_attention_flops_executed, G::prefill, "Attention FLOPs (executed tiles)", "FLOP",
               "Attention FLOPs a tiled kernel runs: every pair of each tile with at least one visible pair "
               "(tile size and layout from the scenario's attention settings). Over the visible-pairs figure: "
               "the work wasted on masked pairs."},

    MetricInfo{Metric::decode_step_s, G::decode, "Decode step time", "seconds",
               "One decode step: decode.batch sequences each generate one token against decode.context tokens "
               "of KV cache; roofline time of every op plus collectives and the framework overhead per step."},
    MetricInfo{Metric::decode_tokens_per_s, G::decode, "Decode throughput", "tokens/s",
               "Generated tokens per second per model replica: decode.batch / decode step time."},
    MetricInfo{Metric::decode_vs_baseline_ratio, G::decode, "Decode speed vs backbone", "x backbone",
               "This design's decode throughput / the backbone's alone at the same batch and context "
               "(1 = as fast; 0.25 = four times slower)."},
    MetricInfo{Metric::decode_flops, G::decode, "FLOPs per decode step", "FLOP",
               "FLOPs of one decode step on one model replica (all decode.batch sequences)."},
    MetricInfo{Metric::decode_bytes, G::decode, "Bytes moved per decode step", "bytes",
               "Every byte a decode step reads and writes: weights, KV cache, activations."},
    MetricInfo{Metric::decode_weight_bytes, G::decode, "Weights read per decode step", "bytes",
               "Weight bytes a decode step reads from memory: each weight once per step, shared by the batch."},
    MetricInfo{Metric::decode_kv_read_bytes, G::decode, "KV cache read per decode step", "bytes",
               "KV-cache bytes a decode step reads: every sequence's keys and values its new token attends to."},
    MetricInfo{Metric::decode_comm_s, G::decode, "Communication per decode step", "seconds",
               "Tensor- and expert-parallel collective time of one decode step."},

    MetricInfo{Metric::train_memory_bytes, G::memory, "Training peak per device", "bytes",
               "Peak training memory of one device: weights + gradients + optimizer state + activations of "
               "one micro-batch. Red when it exceeds the device's memory."},
    MetricInfo{Metric::train_weight_bytes, G::memory, "Training weights per device", "bytes",
               "Weights one training device holds (sharded by tensor/expert parallelism and ZeRO-3)."},
    MetricInfo{Metric::train_grad_bytes, G::memory, "Gradients per device", "bytes",
               "Gradients one training device holds, in the communication precision (sharded from ZeRO-2)."},
    MetricInfo{Metric::train_optimizer_bytes, G::memory, "Optimizer state per device", "bytes",
               "Adam's two moments (and fp32 master weights when the weights are not fp32) on one device "
               "(sharded from ZeRO-1)."},
    MetricInfo{Metric::train_activation_bytes, G::memory, "Training activations per device", "bytes",
               "Activations one device keeps for the backward of one micro-batch, after the scenario's "
               "recomputation."},
    MetricInfo{Metric::train_fits, G::memory, "Training fits in device memory", "yes/no",
               "Whether the training peak per device is at most the device's memory."},
    MetricInfo{Metric::inference_weight_bytes, G::memory, "Inference weights per device", "bytes",
               "Resident weights per device when serving (sharded over tensor and expert parallelism)."},
    MetricInfo{Metric::kv_bytes, G::memory, "KV cache of the decode batch", "bytes",
               "KV cache of decode.batch sequences at decode.context tokens, the whole replica (HD caches n "
               "positions per token)."},

    MetricInfo{Metric::kv_bytes_per_seq, G::serving, "KV cache per sequence", "bytes",
               "KV cache of one sequence at kv.context tokens, the whole replica."},
    MetricInfo{Metric::max_batch_seqs, G::serving, "Most sequences that fit", "sequences",
               "Largest batch whose KV cache at kv.context tokens fits next to the weights in "
               "kv.memory_utilization of each device's memory."},
};

}  // namespace

std::span<const MetricInfo> metric_infos() { return kInfos; }

const MetricInfo* find_metric_info(simulator::Metric m) {
  for (const MetricInfo& i : kInfos)
    if (i.metric == m) return &i;
  return nullptr;
}

const char* group_label(MetricGroup g) {
  switch (g) {
    case G::size: return "Size";
    case G::training: return "Training";
    case G::prefill: return "Prefill";
    case G::decode: return "Decode";
    case G::memory: return "Memory";
    case G::serving: return "Serving capacity";
  }
  return "?";
}

const char* group_tooltip(MetricGroup g) {
  switch (g) {
    case G::size: return "Parameter counts of the design";
    case G::training: return "One optimizer step at the scenario's train settings (seq_len, micro_batch, grad_accum)";
    case G::prefill: return "One prefill at the scenario's prefill.tokens and prefill.batch";
    case G::decode: return "One decode step at the scenario's decode.batch and decode.context";
    case G::memory: return "Per-device memory in training, and the weights and KV cache in inference";
    case G::serving: return "How many sequences a device holds at the scenario's kv.context";
  }
  return "";
}

std::string metric_tooltip(simulator::Metric m) {
  const std::string column = simulator::metric_name(m);
  if (const MetricInfo* i = find_metric_info(m)) return std::string(i->tooltip) + "\nCLI / CSV column: " + column;
  return column + ": no description yet";
}

}  // namespace hdlab::gui_core
