// Whole-model decode step time against context length, per design, on the runner:
// the model-level counterpart of bench_executor_ops's op-level decode table. Each cell is
// the median of measured decode steps after a prefill of the context (untimed) and
// warm-up steps; "attn" is the attention op's share of it (all layers).
//
// Reading it: the baseline's step grows with context only through attention; HD n=4
// (intra on the sliding layers, full on the others) reads 4x the KV per layer; an intra
// layer's 4 query rows run over whole tiles of every stream when interleaved (4x the
// pairs), over their own stream only when its cache is kept per stream (stream-major):
// the same bytes read, a quarter of the pairs. PHD keeps only origins (+ W hidden) so it
// tracks the baseline; looped K=4 repeats the whole stack, weights and KV reads
// included, 4 times.
//
// usage: bench_runner [--backend cpu|cuda] [--threads N] [--quick] [--model FILE]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hdlab/executor/backends.hpp"
#include "hdlab/executor/measure.hpp"
#include "hdlab/model/config_io.hpp"

using namespace hdlab;
using namespace hdlab::executor;

namespace {

struct Options {
  std::string backend = "cpu";
  std::string model = std::string(HDLAB_SOURCE_DIR) + "/profiles/models/tiny-dense.json";
  int threads = 0;
  bool quick = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--backend") o.backend = next();
    else if (a == "--threads") o.threads = std::atoi(next().c_str());
    else if (a == "--model") o.model = next();
    else if (a == "--quick") o.quick = true;
    else {
      std::fprintf(stderr, "usage: bench_runner [--backend cpu|cuda] [--threads N] [--quick] [--model FILE]\n");
      std::exit(2);
    }
  }
  return o;
}

struct Design {
  const char* label;
  const char* json;
  std::optional<model::Layout> layout;
};

}  // namespace

int main(int argc, char** argv) {
  // The CUDA backend's module: $HDLAB_CUDA_MODULE, else the one this build made.
  const char* cuda_module = std::getenv("HDLAB_CUDA_MODULE");
  hdlab::executor::set_cuda_module(cuda_module && *cuda_module ? cuda_module : HDLAB_CUDA_MODULE);
  const Options o = parse(argc, argv);
  std::unique_ptr<Backend> be =
      o.backend == "cuda" ? make_cuda_backend(0) : make_cpu_backend(CpuOptions{o.threads, "auto"});
  const model::Backbone base = model::load_backbone(model::read_json_file(o.model));
  const std::vector<Design> designs = {
      {"baseline", "{}", std::nullopt},
      {"hd4 inter", R"({"hd": {"n": 4, "layers": {"sliding": "intra", "full_every": 2}}})", model::Layout::interleaved},
      {"hd4 stream", R"({"hd": {"n": 4, "layers": {"sliding": "intra", "full_every": 2}}})", model::Layout::stream_major},
      {"phd3 swa", R"({"phd": {"K": 3, "variant": "swa", "W": 16}})", std::nullopt},
      {"looped4", R"({"looped": {"iterations": 4}})", std::nullopt},
  };
  const std::vector<std::int64_t> contexts =
      o.quick ? std::vector<std::int64_t>{64, 256} : std::vector<std::int64_t>{128, 256, 512, 1024, 2048};
  std::printf("bench_runner: decode step [ms] (attention share) against context, %s, %s\n", base.name.c_str(),
              be->description().c_str());
  std::printf("%8s", "context");
  for (const Design& d : designs) std::printf("  %20s", d.label);
  std::printf("\n");
  std::vector<std::vector<double>> step(designs.size());
  for (std::int64_t c : contexts) {
    std::printf("%8lld", static_cast<long long>(c));
    for (std::size_t i = 0; i < designs.size(); ++i) {
      const model::Config cfg =
          model::make_config(base, model::parse_design(model::Json::parse(designs[i].json), base, "/design"));
      RunOptions ro;
      ro.layout = designs[i].layout;
      RandomWeights w(1);
      Runner r(*be, cfg, upload_weights(*be, cfg, w, ScalarType::f32), ro);
      MeasureOptions mo;
      mo.phase = Phase::decode;
      mo.tokens = c;
      mo.warmup = 2;
      mo.repeats = o.quick ? 3 : 9;
      const Measurement m = measure(r, *be, mo);
      step[i].push_back(m.median_ms);
      const double attn = m.op_ms(model::OpKind::attention);
      std::printf("  %11.3f (%5.1f%%)", m.median_ms, m.median_ms > 0 ? 100 * attn / m.median_ms : 0.0);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  // Growth of the step from the shortest to the longest context, per design.
  std::printf("%8s", "x growth");
  for (std::size_t i = 0; i < designs.size(); ++i) std::printf("  %20.2f", step[i].back() / step[i].front());
  std::printf("\n");
  std::printf("hd4 interleaved / stream-major at context %lld: %.2fx (intra layers read whole tiles of every stream "
              "when interleaved: the same bytes, 4x the pairs)\n",
              static_cast<long long>(contexts.back()), step[1].back() / step[2].back());
  return 0;
}
