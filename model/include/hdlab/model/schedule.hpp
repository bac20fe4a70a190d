#pragma once
// How a design schedules the backbone: how many sequence positions each token takes, and
// for each layer its role in a loop, how often a token passes through it and how many KV
// caches it keeps. Written once here for the cost model, the memory models, the executor
// and the GUI. Dispatch over the design variant is exhaustive: a new design that does not
// say how it schedules does not compile.
#include <cstdint>
#include <optional>
#include <vector>

#include "hdlab/model/design.hpp"
#include "hdlab/model/mask.hpp"

namespace hdlab::model {

enum class LoopRole : std::uint8_t { none, prelude, recurrent, coda };
const char* to_string(LoopRole r);  // "", "prelude", "recurrent", "coda"

struct LayerSchedule {
  LoopRole role = LoopRole::none;
  std::int64_t passes = 1;     // runs of the layer per token and forward pass
  std::int64_t kv_caches = 1;  // KV caches the layer keeps per sequence
};

// One run of a layer in execution order: every layer once, except a loop's recurrent block,
// which runs once per iteration.
struct LayerRun {
  std::int64_t layer = 0;
  std::int64_t iteration = 0;
  std::int64_t cache_slot = 0;   // the KV cache this run reads and appends to (0 .. slots-1)
  bool iteration_start = false;  // looped with injection: the adapter runs before this layer
  bool commits_kv = true;        // this run's K/V is what its cache keeps (looped shared KV: the last iteration)
  bool overwrites_kv = false;    // looped shared KV, iterations >= 1: replaces what iteration 0 appended
};

// Positions per token in the expanded sequence: HD's n streams, PHD's K copies, else 1.
std::int64_t copies_per_token(const Method& m);

// The schedule of layer `layer` (an index of the effective backbone).
LayerSchedule layer_schedule(const Method& m, std::int64_t layer);

// A schedule's recurrent block: layers [first, first + layers) each run `iterations` times
// per pass, after the prelude [0, first). nullopt when no layer repeats.
struct RecurrentBlock {
  std::int64_t first = 0;
  std::int64_t layers = 0;
  std::int64_t iterations = 1;
};
std::optional<RecurrentBlock> recurrent_block(const Method& m, std::int64_t num_layers);

// Positions one KV cache of a layer with mask `m` holds at most for one sequence of up to
// `max_tokens` tokens, all of its streams or copies together: every position for causal
// and intra layers (an intra cache kept per stream holds max_tokens of them each), a ring
// of twice the window plus a token's copies for sliding layers, and for PHD the origins
// plus the hidden copies still visible. The executor reserves this per cache slot; the
// memory models (forward_memory.hpp) sum it over the schedule's slots.
std::int64_t kv_cache_positions(const MaskSpec& m, std::int64_t max_tokens);

// Every layer run of one forward pass over `num_layers` (effective) layers, in order. The
// cache slots number the prelude's caches first, then the recurrent block's (one set per
// iteration, or one shared set), then the coda's.
std::vector<LayerRun> layer_runs(const Method& m, std::int64_t num_layers);

}  // namespace hdlab::model
