#pragma once
// Per-layer costs for the Layers tab and the layer strip, computed without Qt from the
// simulator's own passes: the op table of each layer group (identical layers are costed
// once, op_table.hpp) timed with the evaluation's roofline, then split back over the
// layers of the group, each times the runs it makes per pass (a looped recurrent layer:
// its iterations). Per layer and phase:
//   flops           logical FLOPs of the layer in one pass of the phase, the whole model
//                   replica (all tp x ep devices), FLOP
//   seconds         the layer's op times on one device in that pass (op_time, as
//                   pass_time sums them), s; the layer's collectives are not in it
// and, the same in every phase (inference memory at the decode scenario):
//   kv_bytes_per_seq  the KV cache the layer keeps for one sequence at the decode context
//                   (every cache of the layer: looped per-iteration caches counted per
//                   iteration), logical, B
//   weight_bytes    the layer's resident weights on one device in inference (dense / tp,
//                   routed experts / (tp * ep)), B
//   memory_bytes    weight_bytes + the KV cache of the decode batch at the decode
//                   context on one device (split over min(tp, KV heads) * ep), B
// Sums over the layers are the simulator's: flops the pass's FLOPs less the ops outside
// the layers, seconds PassTime::layers_s, kv_bytes_per_seq kv_bytes_per_seq(decode
// context), weight_bytes the inference weights less the outside ops' (embeddings, head).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hdlab/model/design.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::gui_core {

// The passes per-layer costs are shown for: a prefill (prefill.batch prompts of
// prefill.tokens), a decode step (decode.batch sequences at decode.context), the forward
// of one training micro-step (micro_batch sequences of seq_len per data-parallel rank).
enum class CostPhase { decode, prefill, train_forward };
inline constexpr int cost_phase_count = 3;
const char* to_string(CostPhase p);  // "decode step", "prefill", "training forward"

struct LayerCost {
  std::int64_t layer = 0;
  double passes = 1;  // runs per pass through the model (looped recurrent: iterations)
  double flops = 0;
  double seconds = 0;
  double kv_bytes_per_seq = 0;
  double weight_bytes = 0;
  double memory_bytes = 0;
};

struct PhaseLayerCosts {
  CostPhase phase = CostPhase::decode;
  std::vector<LayerCost> layers;
  double pass_flops = 0;      // the whole pass (outside ops included), FLOP
  double layers_seconds = 0;  // the simulator's PassTime::layers_s, s
  double pass_seconds = 0;    // every op of the pass on one device (PassTime::total_s), s
  double comm_seconds = 0;    // the pass's collectives not hidden, s
};

struct LayerCosts {
  std::array<PhaseLayerCosts, cost_phase_count> phases{};  // by CostPhase
  std::int64_t kv_context = 0;      // tokens per sequence the KV figures are for (decode.context)
  std::int64_t kv_batch = 0;        // sequences in memory_bytes (decode.batch)
  double outside_weight_bytes = 0;  // embeddings, final norm, head...: per device, B
  std::size_t layer_count() const { return phases[0].layers.size(); }
  const PhaseLayerCosts& at(CostPhase p) const { return phases[static_cast<std::size_t>(p)]; }
};

// Checks the scenario as evaluate does (ConfigError at its pointer).
LayerCosts layer_costs(const model::Config& c, const simulator::HardwareProfile& hw, const simulator::Scenario& s);

// What a bar or a column shows.
enum class LayerQuantity { time, flops, kv_bytes, memory };
inline constexpr int layer_quantity_count = 4;
const char* to_string(LayerQuantity q);             // "time", "FLOPs", "KV cache", "memory"
double value(const LayerCost& c, LayerQuantity q);  // raw: s, FLOP, B, B
// One unit per quantity, so that a column reads down without changing prefixes: ms,
// GFLOP, MB (1e6 bytes, as the hardware profiles count). Shown = raw * scale.
struct DisplayUnit {
  const char* unit;
  double scale;
  int decimals;
};
DisplayUnit display_unit(LayerQuantity q);
// The value in its display unit: "0.412 ms", "51.54 GFLOP", "67.11 MB".
std::string format_value(double v, LayerQuantity q);

}  // namespace hdlab::gui_core
