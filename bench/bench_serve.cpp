// Speed and memory of the serving simulation: 100,000 requests of Llama-2-70B on 8 H100
// (tp 8), an open Poisson stream the engine keeps up with (so the requests in flight stay
// bounded), log-normal prompts (median 1,000 tokens) and uniform outputs (16-512).
// Target: under 2 s on one core. Memory: the run's peak resident set grows with the
// requests in flight, not with the total, so 10x the requests leaves it about where it was
// (both runs are reported).
//
// usage: bench_serve [MODEL.json] [HARDWARE.json]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/serving.hpp"

using namespace hdlab;

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

simulator::ServeSpec workload(std::int64_t requests) {
  return simulator::parse_serve_spec(nlohmann::json{
      {"workload",
       {{"arrivals", "poisson"},
        {"rate_per_s", 10},
        {"requests", requests},
        {"input_tokens", {{"distribution", "lognormal"}, {"median", 1000}, {"sigma", 0.8}, {"max", 8000}}},
        {"output_tokens", {{"distribution", "uniform"}, {"min", 16}, {"max", 512}}}}}});
}

}  // namespace

int main(int argc, char** argv) {
  const std::string src = HDLAB_SOURCE_DIR;
  const std::string model_path = argc > 1 ? argv[1] : src + "/profiles/models/llama2-70b-fp16.json";
  const std::string hw_path = argc > 2 ? argv[2] : src + "/profiles/hardware/h100-sxm.json";
  try {
    const model::Backbone b = model::load_backbone(model::read_json_file(model_path));
    const model::Config config = model::make_config(b, model::parse_design(model::Json::parse("{}"), b));
    const simulator::HardwareProfile hw = simulator::parse_hardware_profile(model::read_json_file(hw_path));
    simulator::Scenario scenario;
    scenario.parallel.tp = 8;
    bool met = true;
    for (std::int64_t requests : {10'000, 100'000}) {
      const auto t0 = std::chrono::steady_clock::now();
      const simulator::ServeResult r = simulator::simulate_serving(config, hw, scenario, workload(requests));
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%lld requests of %s on %s x 8: %lld steps simulated in %.3f s (%.0f steps/s); %.1f simulated s, "
                  "%.2f requests/s, mean running %.1f, mean waiting %.1f; peak RSS so far %.1f MB\n",
                  static_cast<long long>(requests), config.effective.name.c_str(), hw.name.c_str(),
                  static_cast<long long>(r.steps), wall, static_cast<double>(r.steps) / wall, r.duration_s(),
                  r.requests_per_s, r.mean_running, r.mean_waiting, peak_rss_mb());
      if (requests == 100'000) {
        met = wall < 2.0;
        std::printf("target: 100,000 requests under 2 s on one core: %s\n", met ? "met" : "NOT met");
      }
    }
    return met ? 0 : 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_serve: %s\n", e.what());
    return 1;
  }
}
