#pragma once
// How a design schedules the backbone: how many sequence positions each token takes, and
// for each layer its role in a loop, how often a token passes through it and how many KV
// caches it keeps. Written once here for the cost model, the memory models, the executor
// and the GUI. Dispatch over the design variant is exhaustive: a new design that does not
// say how it schedules does not compile.
#include <cstdint>

#include "hdlab/model/design.hpp"

namespace hdlab::model {

enum class LoopRole : std::uint8_t { none, prelude, recurrent, coda };
const char* to_string(LoopRole r);  // "", "prelude", "recurrent", "coda"

struct LayerSchedule {
  LoopRole role = LoopRole::none;
  std::int64_t passes = 1;     // runs of the layer per token and forward pass
  std::int64_t kv_caches = 1;  // KV caches the layer keeps per sequence
};

// Positions per token in the expanded sequence: HD's n streams, PHD's K copies, else 1.
std::int64_t copies_per_token(const Method& m);

// The schedule of layer `layer` (an index of the effective backbone).
LayerSchedule layer_schedule(const Method& m, std::int64_t layer);

}  // namespace hdlab::model
