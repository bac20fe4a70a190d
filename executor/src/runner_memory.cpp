// Memory of a run estimated from the config alone, so a run that would not fit is
// refused before anything is allocated (needed and available bytes in the error).
#include <algorithm>
#include <cmath>

#include "hdlab/model/forward_memory.hpp"
#include "runner_internal.hpp"

namespace hdlab::executor {

MemoryEstimate estimate_memory(const model::Config& c, const RunShape& shape, const RunOptions& o) {
  // The layer program's memory of this run (model/forward_memory.hpp): the cache slots
  // its schedule keeps and the workspace its nodes' tensors need in the largest call,
  // every tensor in the run's storage type; the weights as the runner uploads them.
  model::ForwardRun run;
  run.phase = shape.phase == Phase::train_forward ? model::ForwardPhase::train_forward
              : shape.phase == Phase::prefill     ? model::ForwardPhase::prefill
                                                  : model::ForwardPhase::decode;
  run.tokens = std::max<std::int64_t>(shape.tokens, 1);
  run.decode_steps = std::max<std::int64_t>(shape.decode_steps, 0);
  run.layout = o.layout.value_or(model::default_layout(c.design));
  run.element_bytes = static_cast<double>(scalar_bytes(o.dtype));
  const model::ForwardMemory m = model::forward_memory(c, run);
  MemoryEstimate e;
  e.weights = device_weight_bytes(c, o.dtype);
  e.kv_cache = static_cast<std::size_t>(m.kv_bytes);
  // An upper bound: the prediction is validated within 2% of the measured peak
  // (tests/calibration/test_forward_memory.cpp); what it misses (allocator rounding,
  // short-lived temporaries) is covered by that 2% of the whole added to the workspace.
  constexpr double validated_error = 0.02;
  e.activations = static_cast<std::size_t>(std::ceil(m.workspace_bytes + validated_error * m.total()));
  return e;
}

void require_run_fits(const Backend& backend, const model::Config& c, const RunShape& shape, const RunOptions& o) {
  backend.require_fits(estimate_memory(c, shape, o).total());
}

}  // namespace hdlab::executor
