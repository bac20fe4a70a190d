#include "hdlab/gui_core/memory_fit.hpp"

#include <string_view>

namespace hdlab::gui_core {

std::optional<simulator::FitPhase> metric_phase(simulator::Metric m) {
  using simulator::FitPhase;
  const std::string_view name = simulator::metric_name(m);
  if (name.starts_with("train_")) return FitPhase::train;
  if (name.starts_with("prefill_")) return FitPhase::prefill;
  if (name.starts_with("decode_") || m == simulator::Metric::kv_bytes) return FitPhase::decode;
  return std::nullopt;
}

const simulator::PhaseFit& phase_fit(const simulator::MemoryFit& f, simulator::FitPhase p) {
  switch (p) {
    case simulator::FitPhase::prefill: return f.prefill;
    case simulator::FitPhase::train: return f.train;
    default: return f.decode;
  }
}

std::vector<std::string> fit_warnings(const simulator::MemoryFit& f) {
  std::vector<std::string> out;
  for (const simulator::PhaseFit* p : {&f.decode, &f.prefill, &f.train})
    if (!p->fits()) out.push_back(simulator::describe(*p));
  return out;
}

}  // namespace hdlab::gui_core
