#include "hdlab/gui_core/serving_run.hpp"

#include <iterator>

#include "hdlab/model/error.hpp"

namespace hdlab::gui_core {

double saturation_rate(const model::Config& c, const simulator::HardwareProfile& hw, const simulator::Scenario& s,
                       const simulator::ServeSpec& spec) {
  simulator::ServeSpec all_at_once = spec;
  simulator::Workload& w = all_at_once.workload;
  w.arrivals = simulator::ArrivalKind::static_batch;
  w.rate_per_s = 0;
  w.users = 1;
  w.think_s = 0;
  return simulator::simulate_serving(c, hw, s, all_at_once).requests_per_s;
}

simulator::ServeSpec at_rate(const simulator::ServeSpec& spec, double rate_per_s) {
  simulator::ServeSpec open = spec;
  simulator::Workload& w = open.workload;
  w.arrivals = simulator::ArrivalKind::poisson;
  w.rate_per_s = rate_per_s;
  w.users = 1;
  w.think_s = 0;
  return open;
}

ServingRun run_serving(const model::Config& c, const simulator::HardwareProfile& hw, const simulator::Scenario& s,
                       const simulator::ServeSpec& spec, const ProgressFn& progress) {
  const int total = 2 + static_cast<int>(std::size(kLoadFactors));
  int done = 0;
  // false: the caller cancelled; what was computed so far is returned and dropped.
  auto step = [&] { return !progress || progress(++done, total); };
  ServingRun run;
  run.spec = spec;
  run.result = simulator::simulate_serving(c, hw, s, spec);
  if (!step()) return run;
  run.saturation_rate_per_s = saturation_rate(c, hw, s, spec);
  if (!step()) return run;
  if (!(run.saturation_rate_per_s > 0))
    throw model::ConfigError("/workload", "the engine finished no requests: no saturation rate to sweep the load around");
  for (double f : kLoadFactors) {
    const double rate = f * run.saturation_rate_per_s;
    run.load.push_back({f, rate, simulator::simulate_serving(c, hw, s, at_rate(spec, rate))});
    if (!step()) return run;
  }
  return run;
}

}  // namespace hdlab::gui_core
