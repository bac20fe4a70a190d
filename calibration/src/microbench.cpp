// Microbenchmarks: op cases timed as the runner times a layer's op (see microbench.hpp).
#include "hdlab/calibration/microbench.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "hdlab/executor/backends.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::calibration {

using executor::Backend;
using executor::OpCase;
using executor::ScalarType;
using model::OpKind;

const char* to_string(BenchKind k) {
  switch (k) {
    case BenchKind::gemm: return "gemm";
    case BenchKind::attention: return "attention";
    case BenchKind::vector: return "vector";
    case BenchKind::memory: return "memory";
    case BenchKind::launch: return "launch";
    case BenchKind::runner: return "runner";
    case BenchKind::gemm_bf16: return "gemm_bf16";
    case BenchKind::gemm_fp16: return "gemm_fp16";
  }
  return "gemm";
}

namespace {

constexpr ScalarType kF32 = ScalarType::f32;

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// Runs `run(instance)` over `instances` prepared copies, timing each run with the
// backend's timer, until the plan's run count and measured time are reached.
template <class Run>
std::vector<double> time_runs(Backend& backend, std::size_t instances, const BenchPlan& plan, Run run,
                              executor::PreparedOp* context) {
  auto timer = backend.make_timer();
  // Warm-up: every instance once (first touch of its pages, library set-up), at least 3 runs.
  for (std::size_t i = 0; i < std::max<std::size_t>(instances, 3); ++i) run(i % instances);
  backend.synchronize();
  std::vector<double> seconds;
  double total = 0;
  for (std::size_t i = 0;; ++i) {
    if (context) context->run();
    timer->start();
    run(i % instances);
    timer->stop();
    const double s = timer->elapsed_ms() * 1e-3;
    seconds.push_back(s);
    total += s;
    const int runs = static_cast<int>(seconds.size());
    if (runs >= plan.max_runs || (runs >= plan.min_runs && total >= plan.min_seconds)) break;
  }
  return seconds;
}

void summarize(Sample& s, const std::vector<double>& seconds) {
  s.seconds = quantile(seconds, 0.5);
  s.spread = s.seconds > 0 ? (quantile(seconds, 0.75) - quantile(seconds, 0.25)) / s.seconds : 0;
  s.runs = static_cast<int>(seconds.size());
}

// Copies of a case so that a run finds its operands out of the nearest caches.
std::size_t instances_for(double bytes, const BenchPlan& plan) {
  const double n = static_cast<double>(plan.rotate_bytes) / std::max(bytes, 1.0);
  return static_cast<std::size_t>(std::clamp(std::ceil(n), 1.0, 64.0));
}

Sample sample_of(const OpCase& c, BenchKind bench) {
  Sample s;
  s.bench = bench;
  s.name = c.name;
  s.op = c.kind;
  s.flops = c.executed_flops;
  s.bytes = c.cost.bytes();
  s.calls = 1;
  return s;
}

OpCase vector_case(const VectorShape& v, std::uint64_t seed) {
  switch (v.op) {
    case OpKind::residual: return executor::add_case(v.rows, v.width, kF32, seed);
    case OpKind::ffn_act: return executor::swiglu_case(v.rows, v.width, kF32, seed);
    case OpKind::rope: return executor::rope_case(v.rows, v.width / 64, 64, 7, 1, kF32, seed);
    case OpKind::ghc_dynamic: return executor::ghc_dynamic_case(v.rows, 2, 4, v.width / 4, kF32, seed);
    case OpKind::ghc_width: return executor::ghc_width_case(v.rows, 2, 4, v.width / 4, false, kF32, seed);
    case OpKind::ghc_depth: return executor::ghc_depth_case(v.rows, 2, 4, v.width / 4, false, kF32, seed);
    default: return executor::rms_norm_case(v.op, v.rows, v.width, kF32, seed);
  }
}

}  // namespace

Sample time_case(Backend& backend, const OpCase& c, BenchKind bench, const BenchPlan& plan,
                 executor::PreparedOp* context) {
  Sample s = sample_of(c, bench);
  const std::size_t instances = instances_for(s.bytes, plan);
  std::vector<std::unique_ptr<executor::PreparedOp>> ops;
  for (std::size_t i = 0; i < instances; ++i) ops.push_back(c.prepare(backend));
  summarize(s, time_runs(backend, instances, plan, [&](std::size_t i) { ops[i]->run(); }, context));
  return s;
}

namespace {

// The precisions whose rates the matrix_rates shapes measure, as the sample kinds.
constexpr std::pair<executor::MatrixPrecision, BenchKind> kLowPrecisions[] = {
    {executor::MatrixPrecision::bf16, BenchKind::gemm_bf16}, {executor::MatrixPrecision::fp16, BenchKind::gemm_fp16}};

int matrix_rate_count(const Backend& backend, const BenchPlan& plan) {
  int n = 0;
  for (auto [precision, kind] : kLowPrecisions)
    if (executor::supports_matrix_precision(backend, precision)) n += static_cast<int>(plan.matrix_rates.size());
  return n;
}

}  // namespace

std::vector<Sample> run_matrix_rate_benchmarks(Backend& backend, const BenchPlan& plan) {
  std::vector<Sample> out;
  for (auto [precision, kind] : kLowPrecisions) {
    if (!executor::supports_matrix_precision(backend, precision)) continue;
    for (const GemmShape& g : plan.matrix_rates) {
      const auto product = executor::make_matrix_product(backend, precision, g.m, g.n, g.k);
      if (!product->check())
        throw executor::BackendError(std::string("calibration: the ") + executor::to_string(precision) +
                                     " matrix product of " + backend.name() + " computed wrong results");
      Sample s;
      s.bench = kind;
      s.name = std::string("matrix ") + executor::to_string(precision) + " M=" + std::to_string(g.m) +
               " N=" + std::to_string(g.n) + " K=" + std::to_string(g.k);
      s.op = OpKind::ffn_gate_up;
      s.shape = {g.m, g.n, g.k};
      s.x = static_cast<double>(std::min({g.m, g.n, g.k}));
      const double m = static_cast<double>(g.m), n = static_cast<double>(g.n), k = static_cast<double>(g.k);
      s.flops = 2 * m * n * k;
      s.bytes = 2 * (m * k + n * k + m * n);  // two bytes an element in both precisions
      // One instance: the operands of a product this size are far beyond any cache.
      summarize(s, time_runs(backend, 1, plan, [&](std::size_t) { product->run(); }, nullptr));
      out.push_back(std::move(s));
    }
  }
  return out;
}

namespace {

// One round of the plan; `done` takes each sample as it is measured.
void run_round(Backend& backend, const BenchPlan& plan, const std::function<void(Sample)>& done) {
  // Launch: the smallest op of each kind; the cheapest is what any backend call costs.
  auto launch = [&](const OpCase& c) {
    Sample s = time_case(backend, c, BenchKind::launch, plan);
    s.shape = {1, 16};
    s.x = s.bytes;
    done(std::move(s));
  };
  launch(executor::add_case(1, 16, kF32, 1));
  launch(executor::rms_norm_case(OpKind::attn_norm, 1, 16, kF32, 2));
  launch(executor::swiglu_case(1, 16, kF32, 3));
  launch(executor::rope_case(1, 1, 16, 0, 1, kF32, 4));
  launch(executor::gemm_case(OpKind::qkv_proj, 1, 16, 16, kF32, 5));
  // The product every vector, attention and gather run follows (see the header).
  const GemmShape& cg = plan.context_gemm;
  const auto context = executor::gemm_case(OpKind::ffn_gate_up, cg.m, cg.n, cg.k, kF32, 99).prepare(backend);
  std::uint64_t seed = 100;
  for (const GemmShape& g : plan.gemm) {
    Sample s = time_case(backend, executor::gemm_case(OpKind::ffn_gate_up, g.m, g.n, g.k, kF32, seed++), BenchKind::gemm, plan);
    s.shape = {g.m, g.n, g.k};
    s.x = static_cast<double>(std::min({g.m, g.n, g.k}));
    done(std::move(s));
  }
  for (Sample& s : run_matrix_rate_benchmarks(backend, plan)) done(std::move(s));
  for (const executor::AttentionCaseShape& a : plan.attention) {
    const executor::AttentionMask mask = executor::attention_case_mask(a);
    Sample s = time_case(backend, executor::attention_case(a, kF32, seed++), BenchKind::attention, plan, context.get());
    s.shape = {mask.query_rows(), mask.key_rows(), a.heads, a.kv_heads, a.head_dim};
    s.mask = std::string(model::to_string(a.mask.kind)) + " " + (a.decode ? "decode" : model::to_string(a.layout));
    s.x = static_cast<double>(mask.query_rows());
    done(std::move(s));
  }
  for (const VectorShape& v : plan.vector) {
    Sample s = time_case(backend, vector_case(v, seed++), BenchKind::vector, plan, context.get());
    s.shape = {v.rows, v.width};
    s.x = s.bytes;
    done(std::move(s));
  }
  for (std::int64_t rows : plan.gather_rows) {
    Sample s = time_case(backend, executor::gather_rows_case(rows, 32768, 512, 1, 0, kF32, seed++), BenchKind::memory,
                         plan, context.get());
    s.shape = {rows, 512};
    s.x = s.bytes;
    done(std::move(s));
  }
  for (Sample& s : run_runner_benchmarks(backend, plan)) done(std::move(s));
}

}  // namespace

std::vector<Sample> run_benchmarks(Backend& backend, const BenchPlan& plan, const BenchProgress& progress) {
  const int rounds = std::max(1, plan.rounds);
  // The runner's samples are known only once its passes ran: the progress total counts
  // the kernel shapes, and grows by the runner's after the first round.
  int per_round = static_cast<int>(plan.gemm.size() + plan.attention.size() + plan.vector.size() +
                                   plan.gather_rows.size()) + 5 + matrix_rate_count(backend, plan);
  std::vector<Sample> best;
  std::map<std::string, std::size_t> index;  // sample name -> its place in best
  int measured = 0;
  for (int round = 0; round < rounds; ++round) {
    run_round(backend, plan, [&](Sample s) {
      auto [it, fresh] = index.try_emplace(s.name, best.size());
      if (fresh) best.push_back(s);
      const int total = std::max(per_round, static_cast<int>(best.size())) * rounds;
      if (progress) progress(s, ++measured, total);
      if (s.seconds < best[it->second].seconds) best[it->second] = std::move(s);
    });
    per_round = static_cast<int>(best.size());
  }
  return best;
}

}  // namespace hdlab::calibration
