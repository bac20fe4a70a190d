// Speed of the analytical cost model: full evaluations (training step, prefill, decode,
// KV/memory, the default 4 x 3 serving matrix against the baseline) of Qwen3-8B with
// HD n=4 on one hardware profile, single thread. Target: >= 100,000 evaluations per
// second per core. Also reported: the rate when every call has new mask shapes (a sweep
// over sequence lengths), where model::visible_tiles dominates.
//
// usage: bench_evaluate [MODEL.json] [HARDWARE.json] [SECONDS]
// (defaults: the bundled Qwen3-8B and H100 SXM profiles, 2 s)
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <string>

#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/evaluate.hpp"

using namespace hdlab;

namespace {
// CPU time of this thread: the rate per core stays meaningful on a shared, loaded machine.
double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
}  // namespace

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
    const double cpu_start = thread_cpu_s();
    double elapsed = 0;
    while (elapsed < seconds) {
      for (int i = 0; i < 1000; ++i, ++evaluations) {
        scenario.decode.context = 1024 + (evaluations % 4096);
        simulator::evaluate(config, hw, scenario, metrics);
        checksum += metrics[simulator::Metric::decode_step_s];
      }
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const double cpu = thread_cpu_s() - cpu_start;
    const double rate = static_cast<double>(evaluations) / cpu;
    std::printf("model %s, design %s, hardware %s\n", config.effective.name.c_str(),
                model::describe(config.design).c_str(), hw.name.c_str());
    std::printf("full evaluations: %lld in %.3f s wall, %.3f s of this thread's CPU time\n", evaluations, elapsed, cpu);
    std::printf("evaluations per second per core (CPU time): %.0f (target >= 100000: %s), %.2f us each\n", rate,
                rate >= 100000 ? "met" : "MISSED", 1e6 * cpu / static_cast<double>(evaluations));
    std::printf("checksum (mean decode step, s): %.6g\n", checksum / static_cast<double>(evaluations));

    // Cold: a new training length every call, so the tile counts of the training and
    // prefill masks (model::visible_tiles, remembered per thread) are recomputed each time.
    long long cold = 0;
    const auto cold_start = std::chrono::steady_clock::now();
    const double cold_cpu_start = thread_cpu_s();
    double cold_elapsed = 0;
    while (cold_elapsed < seconds / 4) {
      for (int i = 0; i < 10; ++i, ++cold) {
        scenario.train.seq_len = 4096 + (cold % 100000);
        scenario.prefill.tokens = 4096 + (cold % 100000);
        simulator::evaluate(config, hw, scenario, metrics);
        checksum += metrics[simulator::Metric::train_step_s];
      }
      cold_elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - cold_start).count();
    }
    const double cold_cpu = thread_cpu_s() - cold_cpu_start;
    std::printf("with new mask shapes every call (cold tile counts): %.0f evaluations/s per core, %.1f us each\n",
                static_cast<double>(cold) / cold_cpu, 1e6 * cold_cpu / static_cast<double>(cold));
    return 0;
  } catch (const model::ConfigError& e) {
    std::fprintf(stderr, "bench_evaluate: %s\n", e.what());
    return 2;
  }
}
