#pragma once
// Microbenchmarks of one executor backend: the measurements a calibration fits.
//
// Every benchmark is an executor op case (executor/op_cases.hpp: shapes, analytic cost
// in the simulator's counting, executed FLOPs), timed the way the runner times a layer's
// op: one backend op between two timer reads, after warm-up, median over many runs.
// So that a small op does not find its operands hot in the caches (in a forward pass
// every layer reads its own weights), each shape is prepared several times over
// distinct buffers (`rotate_bytes` in all) and the runs cycle through them.
//
// What is measured (the plan, full or quick):
//   gemm       y = x W^T over a grid of M (token rows) x weight shapes [N, K]: the
//              matrix rate against the smallest dimension and the weight bytes;
//   attention  prefill over sequence lengths and mask densities (causal, sliding
//              windows, HD intra-stream in both layouts, PHD split) and decode steps
//              against KV caches of several lengths (the executor's 64 x 64 tiles);
//   vector     RMSNorm, residual add, SwiGLU, RoPE and the VWN GHC ops over sizes;
//   memory     embedding-style row gathers over sizes (the memory class's op); the
//              stream bandwidth is the residual add's over the largest sizes (STREAM's
//              Add kernel c = a + b on all threads);
//   launch     the smallest op of each kind (what one backend call costs at all);
//   gemm_bf16, gemm_fp16
//              large products in bf16 and in fp16 (f32 accumulation; CUDA: cublasGemmEx
//              on the tensor cores) where the backend runs them (executor's
//              MatrixProduct): the profile's bf16 and fp16 peaks, which the fp32 grid
//              above does not give (a GPU's tensor cores outrun its fp32 units many times);
//   runner     every op as the runner composes it from backend calls (the simulator's
//              op is one record; the runner may issue several calls for it: the two
//              residual adds of a layer, RoPE and QK-norm on q and on k, five calls
//              per routed expert, the two GHCs of a VWN layer), timed inside real
//              forward passes of calibration-only models (dense, MoE, VWN (2, 4),
//              looped with injection; powers of two, which the validation models
//              avoid), each sample costed by the simulator's op table of that pass.
//              Attention and the GEMMs (the q, k, v products included) come from
//              their kernels' benchmarks above.
// In a forward pass every op runs right after others: the BLAS's worker threads are
// still spinning from the last product and the caches hold the last op's data. So that
// the vector, attention and gather samples see the same, each of their runs follows an
// untimed GEMM of a layer's size (`context_gemm`); GEMM samples follow each other.
// The shapes are fixed grids chosen apart from the model sizes the bundled validation
// set uses (held out, see validation.hpp); the profile records every one.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/executor/backend.hpp"
#include "hdlab/executor/op_cases.hpp"
#include "hdlab/model/ops.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::calibration {

enum class BenchKind { gemm, attention, vector, memory, launch, runner, gemm_bf16, gemm_fp16 };
const char* to_string(BenchKind k);

// One measured shape. `x` is the abscissa the simulator evaluates the op's compute
// efficiency at (simulator/hardware.hpp: GEMM the smallest of M, N, K; attention the
// query rows; vector and memory the bytes moved).
struct Sample {
  BenchKind bench = BenchKind::gemm;
  std::string name;                             // the op case's name (op and shape)
  model::OpKind op = model::OpKind::qkv_proj;   // the layer op it stands for
  // gemm, gemm_bf16, gemm_fp16 {M, N, K}; attention {query rows, key rows, H, G, hd}; runner {rows, smaller
  // weight dimension} (the simulator's OpRow); else {rows, width}
  std::vector<std::int64_t> shape;
  std::string mask;                             // attention: mask kind and layout ("causal interleaved", "decode intra", ...)
  double x = 0;
  double flops = 0;    // executed (attention: whole visible tiles)
  double bytes = 0;    // moved, as the simulator counts it (model::OpCost::bytes())
  double calls = 1;    // backend ops per run
  double seconds = 0;  // median of the runs
  double spread = 0;   // (p75 - p25) / median of the runs: the noise it was measured under
  int runs = 0;
};

struct GemmShape {
  std::int64_t m = 1, n = 1, k = 1;
};
struct VectorShape {
  model::OpKind op = model::OpKind::attn_norm;  // attn_norm (RMSNorm), residual (add), ffn_act (SwiGLU), rope, ghc_*
  std::int64_t rows = 1, width = 1;             // rope: width = heads * head_dim (head_dim 64); ghc: width = D' of n = 2m slots
};

struct BenchPlan {
  std::string name;  // "full" | "quick"
  std::vector<GemmShape> gemm;
  // Products timed in bf16 and fp16 where the backend runs those precisions (CUDA): x W^T
  // with x [M, K], W [N, K]; K at most 2^16.
  std::vector<GemmShape> matrix_rates;
  std::vector<executor::AttentionCaseShape> attention;
  std::vector<VectorShape> vector;
  std::vector<std::int64_t> gather_rows;   // memory: gathers of this many rows of width 512 from a 32768-row table
  std::vector<std::int64_t> runner_prefill;  // runner: prefills of the calibration models of these lengths
  std::int64_t runner_decode_context = 0;    // runner: decode steps of them at this context (0: none)
  std::vector<std::int64_t> runner_train;    // runner: training forwards of these lengths (every row's logits)
  GemmShape context_gemm{128, 512, 512};   // run untimed before each vector / attention / gather run
  double min_seconds = 0.05;  // per shape: runs until this much op time is measured...
  int min_runs = 9;           // ...and at least this many runs
  int max_runs = 400;
  // The whole plan is measured this many times and each shape keeps its fastest round: on
  // a shared machine a co-tenant can take a core for seconds, which doubles every sample
  // measured meanwhile (a shape's own runs cannot see that; they all fall inside it).
  int rounds = 1;
  std::size_t rotate_bytes = std::size_t{48} << 20;  // distinct operand bytes each shape cycles through
};
BenchPlan full_plan();
BenchPlan quick_plan();

// Runs every benchmark of the plan on the backend (f32; the matrix rates in bf16 and fp16
// where the backend has them), plan.rounds times, reporting each sample as it is
// measured; (done, total) counts shapes over all rounds. Each shape's sample is the round
// with the least time.
using BenchProgress = std::function<void(const Sample&, int done, int total)>;
std::vector<Sample> run_benchmarks(executor::Backend& backend, const BenchPlan& plan, const BenchProgress& progress = {});

// Times one prepared case; exposed for tests and for the launch benchmark. `context`:
// an op run untimed before each timed run (nullptr: none).
Sample time_case(executor::Backend& backend, const executor::OpCase& c, BenchKind bench, const BenchPlan& plan,
                 executor::PreparedOp* context = nullptr);

// The bf16 and fp16 matrix-rate samples alone (run_benchmarks includes them): one per
// shape of plan.matrix_rates and precision the backend runs (none on the CPU). Each
// product is checked once before it is timed (executor::MatrixProduct::check); a wrong
// result throws executor::BackendError.
std::vector<Sample> run_matrix_rate_benchmarks(executor::Backend& backend, const BenchPlan& plan);

// The runner benchmarks alone (run_benchmarks includes them).
std::vector<Sample> run_runner_benchmarks(executor::Backend& backend, const BenchPlan& plan);

nlohmann::json to_json(const Sample& s);
Sample sample_from_json(const nlohmann::json& j, const std::string& pointer);

}  // namespace hdlab::calibration
