#pragma once
// Which memory fit (simulator/fit.hpp) a view's number stands on: the costs table marks a
// metric red when its phase does not fit, the headline lists the phases that do not.
#include <optional>
#include <string>
#include <vector>

#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/fit.hpp"

namespace hdlab::gui_core {

// The phase whose memory a metric's value assumes: train_* train, prefill_* prefill,
// decode_* and kv_bytes (decode.batch sequences at decode.context) decode; none for the
// rest (parameter counts, per-sequence KV, the largest batch: sizes, not plans).
std::optional<simulator::FitPhase> metric_phase(simulator::Metric m);

const simulator::PhaseFit& phase_fit(const simulator::MemoryFit& f, simulator::FitPhase p);

// describe() of every phase that does not fit, decode first (the headline's order).
std::vector<std::string> fit_warnings(const simulator::MemoryFit& f);

}  // namespace hdlab::gui_core
