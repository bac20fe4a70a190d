#pragma once
// What the serving tab computes off the UI thread: one run of the serving engine over the
// workload the form describes (simulator/serving.hpp), and a throughput-vs-load sweep of
// the same requests arriving as a Poisson stream at fractions and multiples of the
// engine's saturation rate. Every number shown comes from simulate_serving's ServeResult.
#include <vector>

#include "hdlab/gui_core/tradeoffs.hpp"
#include "hdlab/simulator/serving.hpp"

namespace hdlab::gui_core {

// Offered load of the sweep as multiples of the saturation rate.
inline constexpr double kLoadFactors[] = {0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0};

// One point of the throughput-vs-load sweep.
struct LoadPoint {
  double factor = 0;              // of the saturation rate
  double offered_rate_per_s = 0;  // Poisson arrival rate [requests/s]
  simulator::ServeResult result;
};

struct ServingRun {
  simulator::ServeSpec spec;
  simulator::ServeResult result;       // the workload as given
  double saturation_rate_per_s = 0;    // saturation_rate(spec)
  std::vector<LoadPoint> load;         // one per kLoadFactors entry, in that order
};

// The engine's capacity for this workload: its requests all arriving at t = 0 (static
// arrivals, the engine as given), finished requests per second of that run. Offered
// loads above it make the queue grow without bound.
double saturation_rate(const model::Config& c, const simulator::HardwareProfile& hw, const simulator::Scenario& s,
                       const simulator::ServeSpec& spec);

// `spec` with its requests arriving as a Poisson stream at `rate_per_s` (lengths, count,
// seed and engine kept; a closed loop's users and think time dropped).
simulator::ServeSpec at_rate(const simulator::ServeSpec& spec, double rate_per_s);

// The run, the saturation estimate and the sweep; `progress` counts simulations
// (2 + the sweep's) and returning false from it stops the work (the result is then
// incomplete and must be dropped). ConfigError as simulate_serving's.
ServingRun run_serving(const model::Config& c, const simulator::HardwareProfile& hw, const simulator::Scenario& s,
                       const simulator::ServeSpec& spec, const ProgressFn& progress = {});

}  // namespace hdlab::gui_core
