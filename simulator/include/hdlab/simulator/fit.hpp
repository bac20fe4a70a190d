#pragma once
// Whether a phase fits device memory, and the smallest change that makes it fit: what the
// GUI's headline, tables and Gantt chart (and `hdlab cost`) say next to a prediction, so
// that a time whose memory does not fit is not read as a plan.
//
// Need per device (the busiest device's), against what the device offers:
//   decode    inference weights + the KV cache of decode.batch sequences at decode.context
//             (split over min(tp, G) x ep devices), against memory x kv.memory_utilization:
//             max_batch_seqs' and the serving matrix's accounting;
//   prefill   the same for prefill.batch prompts of prefill.tokens;
//   train     weights + gradients + optimizer state + one micro-batch's activations
//             (train_memory_bytes), against the whole memory, as train_fits;
//   pipeline  each stage device's training state for the layers it holds plus the most
//             activation bytes its schedule keeps at once (PipelineDevice::memory_bytes),
//             against the whole memory.
// Not counted, as in those metrics: framework workspace, inference activations (see
// forward_memory.hpp for a reference runner's), allocator fragmentation.
//
// When a phase does not fit, two changes are searched, the rest of the scenario kept:
//   smaller batch  the largest batch below the current one that fits at the current tp
//                  (and pp): decode.batch, prefill.batch or train.micro_batch (the need
//                  grows with it, so a bisection);
//   more devices   the fewest devices that fit at the current batch: tp doubled from its
//                  value up to gpus_per_node (tensor parallelism stays inside a node's
//                  NVLink), values check_scenario refuses skipped; for the pipeline also
//                  pp doubled up to the layer count, ordered by tp x pp, then smaller tp
//                  (pipeline stages communicate less than tensor-parallel ranks).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/model/design.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/pipeline.hpp"

namespace hdlab::simulator {

enum class FitPhase { decode, prefill, train, pipeline };
const char* to_string(FitPhase p);  // "decode", "prefill", "train", "pipeline"

// A batch and device layout with its need per device (bytes, the busiest device's).
struct FitLayout {
  std::int64_t batch = 1;  // sequences: decode/prefill batch, training micro-batch
  std::int64_t tp = 1;
  std::int64_t pp = 1;     // 1 outside the pipeline
  double need_bytes = 0;
  std::int64_t devices() const { return tp * pp; }
};

struct MemoryPart {
  std::string name;  // "weights", "KV cache", "gradients", "optimizer state", "activations"
  double bytes = 0;
};

struct PhaseFit {
  FitPhase phase = FitPhase::decode;
  std::int64_t tokens = 0;        // per sequence: decode context, prompt, training seq_len
  FitLayout current;              // the scenario's
  std::int64_t device = 0;        // pipeline: the stage device with the most need
  std::vector<MemoryPart> parts;  // current.need_bytes by part, on that device
  double memory_bytes = 0;        // the device's memory
  double capacity_bytes = 0;      // usable by this phase (decode, prefill: x memory_utilization)
  bool fits() const { return current.need_bytes <= capacity_bytes; }
  // Set only when the phase does not fit and the search found one (see the header).
  std::optional<FitLayout> smaller_batch;
  std::optional<FitLayout> more_devices;
  std::int64_t max_tp = 1, max_pp = 1;  // the device search's bounds
};

struct MemoryFit {
  PhaseFit decode, prefill, train;
  bool fits() const { return decode.fits() && prefill.fits() && train.fits(); }
};

// The three phases evaluate() costs. ConfigError as evaluate's for a bad scenario.
MemoryFit memory_fit(const model::Config& c, const HardwareProfile& hw, const Scenario& s);

// A pipeline run `r` of options `o` (simulate_pipeline of pipeline_cost.hpp with the same
// config, hardware and scenario); the search reruns the pipeline for each candidate.
PhaseFit pipeline_fit(const model::Config& c, const HardwareProfile& hw, const Scenario& s,
                      const PipelineOptions& o, const PipelineResult& r);

// One sentence with units (decimal GB, as hardware profiles count memory):
// "decode at batch 32 x 4096 tokens does not fit: 97.4 GB per device (weights 20.1 GB +
// KV cache 77.3 GB) > 72.0 GB usable (0.9 x 80.0 GB). Fits at batch 21 (70.8 GB), or at
// tp 2 (2 devices, 48.7 GB each)." A phase that fits: "... fits: 20.6 GB of 72.0 GB usable."
std::string describe(const PhaseFit& f);
// The change alone: "batch 21, or tp 2" ("" when fitting or none was found).
std::string describe_changes(const PhaseFit& f);

}  // namespace hdlab::simulator
