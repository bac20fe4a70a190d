// Executor op benchmarks on the op cases the correctness test uses (op_cases.hpp):
//   1. GEMM rate of the backend against OpenBLAS's own cblas_sgemm on this machine;
//   2. attention FLOP rate on visible tiles as a fraction of the GEMM rate (target >= 0.40);
//   3. an HD intra-stream layer at n=4 against a full cross-stream layer: stream-major
//      (target <= 0.35x) and interleaved (about 1x: the layout, not the mask, saves work);
//   4. decode-step attention time against context length.
// Speed targets live here, not in the tests. Figures are medians of repeated runs.
//
// usage: bench_executor_ops [--backend cpu|cuda] [--threads N] [--quick] [--verify] [--min-ms MS]
//                           [--clock wall|cpu]
// --clock cpu times CPU backend ops by this process's CPU time instead of the wall
// clock: on a machine shared with other work it measures what an op costs, not how long
// it waited for a core. Use it with --threads 1 (OpenBLAS threads spin between calls).
#include <cblas.h>

#include <time.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench_timing.hpp"
#include "hdlab/executor/backends.hpp"
#include "hdlab/executor/op_cases.hpp"

using namespace hdlab;
using namespace hdlab::executor;
using bench::measure;
using bench::Timing;

namespace {

struct Options {
  std::string backend = "cpu";
  int threads = 0;
  bool quick = false;   // smaller shapes, for a smoke run
  bool verify = false;  // also check every benchmarked case against its reference
  double min_ms = 400;  // per measurement
  std::string clock = "wall";
};

// Process CPU time (all threads) between start() and stop().
class CpuClockTimer final : public EventTimer {
 public:
  void start() override { start_ = now(); }
  void stop() override { stop_ = now(); }
  double elapsed_ms() override { return stop_ - start_; }

 private:
  static double now() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
  }
  double start_ = 0, stop_ = 0;
};

std::unique_ptr<EventTimer> timer_for(Backend& be, const Options& o) {
  if (o.clock == "cpu" && be.name() == "cpu") return std::make_unique<CpuClockTimer>();
  return be.make_timer();
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return std::string(argv[++i]);
    };
    if (a == "--backend") o.backend = next();
    else if (a == "--threads") o.threads = std::stoi(next());
    else if (a == "--quick") o.quick = true;
    else if (a == "--verify") o.verify = true;
    else if (a == "--min-ms") o.min_ms = std::stod(next());
    else if (a == "--clock") o.clock = next();
    else throw std::runtime_error("unknown argument " + a);
  }
  return o;
}

struct Measured {
  Timing timing;
  double gflops_exact = 0;     // analytic (pair-exact) FLOPs per second
  double gflops_executed = 0;  // FLOPs the kernel runs (whole visible tiles)
};

Measured run_case(Backend& be, const OpCase& c, const Options& o) {
  auto prepared = c.prepare(be);
  if (o.verify) {
    const OpCheck check = prepared->check();
    if (!check.pass) throw std::runtime_error(c.name + " is wrong: " + check.worst);
  }
  auto timer = timer_for(be, o);
  Measured m;
  m.timing = measure([&] { prepared->run(); }, timer.get(), o.min_ms);
  m.gflops_exact = c.cost.flops / (m.timing.median_ms * 1e6);
  m.gflops_executed = c.executed_flops / (m.timing.median_ms * 1e6);
  return m;
}

void print_row(const OpCase& c, const Measured& m) {
  std::printf("  %-78s %9.3f ms %8.1f GFLOP/s (executed %7.1f)\n", c.name.c_str(), m.timing.median_ms,
              m.gflops_exact, m.gflops_executed);
}

const char* verdict(bool met) { return met ? "met" : "MISSED"; }

// OpenBLAS called directly on the same shape: y [M, N] = x [M, K] W^T, W [N, K].
double openblas_gflops(std::int64_t m, std::int64_t n, std::int64_t k, const Options& o) {
  auto a = random_floats(static_cast<std::size_t>(m * k), 1), b = random_floats(static_cast<std::size_t>(n * k), 2);
  std::vector<float> c(static_cast<std::size_t>(m * n));
  CpuClockTimer cpu_clock;
  const Timing t = measure(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m), static_cast<blasint>(n),
                    static_cast<blasint>(k), 1.0f, a.data(), static_cast<blasint>(k), b.data(),
                    static_cast<blasint>(k), 0.0f, c.data(), static_cast<blasint>(n));
      },
      o.clock == "cpu" ? &cpu_clock : nullptr, o.min_ms);
  return 2.0 * static_cast<double>(m * n * k) / (t.median_ms * 1e6);
}

// Section 1; returns the backend's best GEMM rate (the yardstick for attention).
double bench_gemm(Backend& be, const Options& o) {
  std::printf("\n1. GEMM (y = x W^T), backend vs OpenBLAS cblas_sgemm called directly\n");
  struct Shape {
    std::int64_t m, n, k;
    model::OpKind kind;
  };
  const std::vector<Shape> shapes =
      o.quick ? std::vector<Shape>{{256, 512, 512, model::OpKind::qkv_proj}}
              : std::vector<Shape>{{512, 1024, 1024, model::OpKind::qkv_proj},
                                   {1024, 1024, 1024, model::OpKind::o_proj},
                                   {512, 4096, 1024, model::OpKind::ffn_gate_up},
                                   {2048, 1024, 2048, model::OpKind::ffn_down}};
  double best = 0;
  for (const Shape& s : shapes) {
    const OpCase c = gemm_case(s.kind, s.m, s.n, s.k, ScalarType::f32, 7);
    const Measured ours = run_case(be, c, o);
    print_row(c, ours);
    if (be.name() == "cpu") {
      const double blas = openblas_gflops(s.m, s.n, s.k, o);
      std::printf("  %-78s %8.1f GFLOP/s -> backend / OpenBLAS = %.3f\n", "  OpenBLAS cblas_sgemm, same shape", blas,
                  ours.gflops_exact / blas);
    }
    best = std::max(best, ours.gflops_exact);
  }
  std::printf("  best backend GEMM rate: %.1f GFLOP/s\n", best);
  return best;
}

AttentionCaseShape shape_of(model::MaskSpec::Kind kind, std::int64_t tokens, std::int64_t copies,
                            model::Layout layout, std::int64_t heads, std::int64_t kv_heads, std::int64_t hd) {
  AttentionCaseShape s;
  s.mask.kind = kind;
  s.mask.tokens = tokens;
  s.mask.copies = copies;
  s.layout = layout;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.head_dim = hd;
  return s;
}

void bench_attention_rate(Backend& be, const Options& o, double gemm_rate) {
  std::printf("\n2. Attention FLOP rate on visible tiles vs the GEMM rate (target >= 0.40)\n");
  const std::int64_t tokens = o.quick ? 512 : 2048;
  double worst = INFINITY;
  for (std::int64_t hd : {64, 128}) {
    const OpCase c = attention_case(
        shape_of(model::MaskSpec::Kind::causal, tokens, 1, model::Layout::interleaved, 8, 2, hd), ScalarType::f32, 11);
    const Measured m = run_case(be, c, o);
    print_row(c, m);
    const double ratio = m.gflops_executed / gemm_rate;
    std::printf("  %-78s %.3f (pair-exact %.3f)\n", "  executed rate / GEMM rate", ratio, m.gflops_exact / gemm_rate);
    worst = std::min(worst, ratio);
  }
  std::printf("  attention / GEMM rate: %.3f, target >= 0.40: %s\n", worst, verdict(worst >= 0.40));
}

void bench_intra_vs_full(Backend& be, const Options& o) {
  std::printf("\n3. HD n=4: intra-stream layer vs full cross-stream layer (same tokens, heads)\n");
  using K = model::MaskSpec::Kind;
  using L = model::Layout;
  const std::int64_t tokens = o.quick ? 256 : 1024, n = 4, heads = 8, kv = 2, hd = 128;
  auto time_of = [&](K kind, L layout) {
    const OpCase c = attention_case(shape_of(kind, tokens, n, layout, heads, kv, hd), ScalarType::f32, 13);
    const Measured m = run_case(be, c, o);
    print_row(c, m);
    return m.timing.median_ms;
  };
  const double full_inter = time_of(K::causal, L::interleaved);
  const double full_stream = time_of(K::causal, L::stream_major);
  const double intra_stream = time_of(K::intra, L::stream_major);
  const double intra_inter = time_of(K::intra, L::interleaved);
  const double r_stream = intra_stream / std::min(full_inter, full_stream);
  std::printf("  intra (stream-major) / full (stream-major %.3f, interleaved %.3f)\n", intra_stream / full_stream,
              intra_stream / full_inter);
  std::printf("  intra stream-major / fastest full layer: %.3f, target <= 0.35: %s\n", r_stream,
              verdict(r_stream <= 0.35));
  std::printf("  intra interleaved / full interleaved: %.3f (about 1: the interleaved layout saves nothing)\n",
              intra_inter / full_inter);
}

void bench_decode(Backend& be, const Options& o) {
  std::printf("\n4. Decode step attention against context (H=8, G=2, hd=128; KV read per step)\n");
  using K = model::MaskSpec::Kind;
  const std::vector<std::int64_t> contexts =
      o.quick ? std::vector<std::int64_t>{1024, 4096} : std::vector<std::int64_t>{1024, 2048, 4096, 8192, 16384};
  for (std::int64_t copies : {1, 4}) {
    for (std::int64_t ctx : contexts) {
      AttentionCaseShape s = shape_of(K::causal, ctx, copies, model::Layout::interleaved, 8, 2, 128);
      s.decode = true;
      const OpCase c = attention_case(s, ScalarType::f32, 17);
      const Measured m = run_case(be, c, o);
      const double gb_per_s = c.cost.kv_bytes_read / (m.timing.median_ms * 1e6);
      std::printf("  %-60s %9.3f ms  %7.2f us per 1k keys  KV %7.1f MB at %6.1f GB/s\n", c.name.c_str(),
                  m.timing.median_ms, 1e3 * m.timing.median_ms / (static_cast<double>(ctx * copies) / 1024),
                  c.cost.kv_bytes_read / 1e6, gb_per_s);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // The CUDA backend's module: $HDLAB_CUDA_MODULE, else the one this build made.
  const char* cuda_module = std::getenv("HDLAB_CUDA_MODULE");
  hdlab::executor::set_cuda_module(cuda_module && *cuda_module ? cuda_module : HDLAB_CUDA_MODULE);
  try {
    const Options o = parse(argc, argv);
    std::unique_ptr<Backend> be =
        o.backend == "cpu" ? make_cpu_backend(CpuOptions{o.threads, "auto"}) : make_backend(o.backend);
    if (o.clock != "wall" && o.clock != "cpu") throw std::runtime_error("--clock wall or cpu");
    std::printf("backend: %s; clock: %s\n", be->description().c_str(),
                o.clock == "cpu" && be->name() == "cpu" ? "process CPU time" : "wall (backend timer)");
    const double gemm_rate = bench_gemm(*be, o);
    bench_attention_rate(*be, o, gemm_rate);
    bench_intra_vs_full(*be, o);
    bench_decode(*be, o);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_executor_ops: %s\n", e.what());
    return 1;
  }
}
