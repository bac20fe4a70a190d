// Speed of the analytical cost model: full evaluations (training step, prefill, decode,
// KV/memory, the default 4 x 3 serving matrix against the baseline) of Qwen3-8B with
// HD n=4 on one hardware profile, single thread. Target: >= 100,000 evaluations per
// second per core.
//
// usage: bench_evaluate [MODEL.json] [HARDWARE.json] [SECONDS]
// (defaults: the bundled Qwen3-8B and H100 SXM profiles, 2 s)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/evaluate.hpp"

using namespace hdlab;

int main(int argc, char** argv) {
  const std::string src = HDLAB_SOURCE_DIR;
  const std::string model_path = argc > 1 ? argv[1] : src + "/profiles/models/qwen3-8b.json";
  const std::string hw_path = argc > 2 ? argv[2] : src + "/profiles/hardware/h100-sxm.json";
  const double seconds = argc > 3 ? std::atof(argv[3]) : 2.0;
  try {
    const model::Backbone base = model::load_backbone(model::read_json_file(model_path));
    const model::Design design = model::parse_design(model::Json::parse(R"({"hd": {"n": 4}})"), base);
    const model::Config config = model::make_config(base, design);
    const simulator::HardwareProfile hw = simulator::parse_hardware_profile(model::read_json_file(hw_path));
    simulator::Scenario scenario;
    simulator::Metrics metrics;
    simulator::evaluate(config, hw, scenario, metrics);  // warm-up: sizes the workspace

    // Vary the decode context per call so nothing can be reused between calls.
    long long evaluations = 0;
    double checksum = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < seconds) {
      for (int i = 0; i < 1000; ++i, ++evaluations) {
        scenario.decode.context = 1024 + (evaluations % 4096);
        simulator::evaluate(config, hw, scenario, metrics);
        checksum += metrics[simulator::Metric::decode_step_s];
      }
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const double rate = static_cast<double>(evaluations) / elapsed;
    std::printf("model %s, design %s, hardware %s\n", config.effective.name.c_str(),
                model::describe(config.design).c_str(), hw.name.c_str());
    std::printf("full evaluations: %lld in %.3f s on one thread\n", evaluations, elapsed);
    std::printf("evaluations per second per core: %.0f (target >= 100000: %s), %.2f us each\n", rate,
                rate >= 100000 ? "met" : "MISSED", 1e6 * elapsed / static_cast<double>(evaluations));
    std::printf("checksum (mean decode step, s): %.6g\n", checksum / static_cast<double>(evaluations));
    return 0;
  } catch (const model::ConfigError& e) {
    std::fprintf(stderr, "bench_evaluate: %s\n", e.what());
    return 2;
  }
}
