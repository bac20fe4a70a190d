#pragma once
// The full cost report `hdlab cost --json` prints (and the GUI can show): the scenario,
// the headline metrics, the serving matrix, KV bytes against context, and for each phase
// the op table by layer group with per-device time and bound of every op.
//
// Shape (units in the keys):
//  {"model", "design", "hardware", "scenario": {...}, "metrics": {"<name>": value},
//   "metric_units": {"<name>": unit}, "serving": [{"batch", "input_tokens", "context_tokens",
//   "tokens_per_s", "baseline_tokens_per_s", "ratio", "fits"}],
//   "kv_vs_context": [{"context_tokens", "kv_bytes_per_seq", "max_batch_seqs"}],
//   "phases": {"train_forward" | "prefill" | "decode": {
//      "seconds", "comm_tp_s", "comm_ep_s",
//      "totals": {flops, weight_bytes, act_bytes_in, act_bytes_out, kv_bytes_read, kv_bytes_written},
//      "attention_pairs_exact", "attention_pairs_executed",
//      "groups": [{"layers": [...], "instances", "passes", "kv_caches", "signature": {...},
//                  "work": {"seqs", "rows_q", "rows_kv", "pairs_exact", "pairs_executed",
//                           "kv_read_entries", "kv_written_entries"},
//                  "ops": [op rows]}],
//      "outside": [op rows],
//      "by_op": [{"op", "time_s", "compute_bound_time_s"}]}},
//   "train": {"step_s", "micro_step_s", "recompute_s", "dp_comm_s", "exposed_dp_s", ...}}
// An op row: {"op", "class", "flops", "weight_bytes", "act_bytes_in", "act_bytes_out",
// "kv_bytes_read", "kv_bytes_written", "params", "calls", "time_s" (one run, one device),
// "bound": "compute" | "memory"}. Costs are logical (the whole replica), times per device.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::simulator {

nlohmann::json cost_report(const model::Config& c, const HardwareProfile& hw, const Scenario& s,
                           const std::vector<std::int64_t>& kv_contexts);

}  // namespace hdlab::simulator
