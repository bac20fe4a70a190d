// Speed of the pipeline schedule simulator on a large looped case: p = 64 stages,
// m = 512 micro-batches, a model looped K = 4 times (every pass a task: 2 x 512 x 256
// tasks). Target: under 1 s to build and solve (partition, path, device orders by list
// scheduling, Boost.Graph DAG, longest path, metrics), per schedule. Also reported: the
// time to fill the workload from the cost model, done once per design.
//
// usage: bench_pipeline [MODEL.json] [HARDWARE.json] [REPEATS]
// (defaults: the bundled Qwen3-8B grown to 72 layers (depth x2) and looped 4 times,
// H100 SXM, 5)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"
#include "hdlab/simulator/pipeline_io.hpp"

using namespace hdlab;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median wall time of `repeats` runs of simulate_pipeline, and the last result.
double median_solve_s(const simulator::PipelineWorkload& w, const simulator::PipelineOptions& o, int repeats,
                      simulator::PipelineResult& last) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    last = simulator::simulate_pipeline(w, o);
    times.push_back(seconds_since(t0));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string src = HDLAB_SOURCE_DIR;
  const std::string model_path = argc > 1 ? argv[1] : src + "/profiles/models/qwen3-8b.json";
  const std::string hw_path = argc > 2 ? argv[2] : src + "/profiles/hardware/h100-sxm.json";
  const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  try {
    const model::Backbone base = model::load_backbone(model::read_json_file(model_path));
    const model::Design design =
        model::parse_design(model::Json::parse(R"({"growth": {"depth_factor": 2}, "looped": {"prelude": 0, "coda": 0, "iterations": 4}})"), base);
    const model::Config config = model::make_config(base, design);
    const simulator::HardwareProfile hw = simulator::parse_hardware_profile(model::read_json_file(hw_path));
    const simulator::Scenario scenario;

    const auto t0 = std::chrono::steady_clock::now();
    const simulator::PipelineWorkload w = simulator::pipeline_workload(config, hw, scenario, 64);
    const double workload_s = seconds_since(t0);
    std::printf("model %s, design %s, hardware %s\n", config.effective.name.c_str(),
                model::describe(config.design).c_str(), hw.name.c_str());
    std::printf("workload from the cost model (%zu layers): %.4f s, once per design\n", w.layers.size(), workload_s);

    bool met = true;
    for (const char* schedule : {"1f1b", "gpipe"}) {
      simulator::PipelineOptions o = simulator::parse_pipeline_options(
          model::Json{{"pp", 64}, {"microbatches", 512}, {"schedule", schedule}});
      simulator::PipelineResult r;
      const double solve_s = median_solve_s(w, o, repeats, r);
      met = met && solve_s < 1.0;
      std::printf("%-6s p=64 m=512 K=4: %lld tasks (%lld steps per micro-batch), build and solve %.3f s "
                  "(median of %d; target < 1 s: %s); makespan %.3f s, bubble %.1f %%, peak activations %.1f GB\n",
                  schedule, static_cast<long long>(r.metrics.tasks),
                  static_cast<long long>(r.metrics.steps_per_microbatch), solve_s, repeats,
                  solve_s < 1.0 ? "met" : "MISSED", r.metrics.makespan_s, 100 * r.metrics.bubble_fraction,
                  r.metrics.peak_activation_bytes / 1e9);
    }
    return met ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_pipeline: %s\n", e.what());
    return 2;
  }
}
