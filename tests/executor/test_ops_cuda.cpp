// The CUDA backend. Host-side parts run everywhere: loading the CUDA module (and its
// failures), the attention kernel's shared-memory budget, matrix products on the CPU, and
// the CPU backend's errors for bad router scores and row ids that the CUDA backend must
// repeat. The rest needs a device: the cross-backend op table in f32 and bf16, memory,
// timers, those same errors, head dims against the device's shared memory, a second
// thread. Without a usable device (no GPU, no driver, or a build without CUDA) those skip
// visibly (test_skip.hpp) before asserting anything; with one, every assertion runs.
//
// The module-loading tests come first: a loaded module stays loaded, so they must run
// before any test loads it when the whole file runs in one process (CTest runs one test
// case per process).
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hdlab/executor/backends.hpp"
#include "hdlab/executor/cuda_limits.hpp"
#include "op_test_support.hpp"
#include "test_skip.hpp"

using namespace hdlab::executor;
using hdlab::executor::testing::check_cases;
using Catch::Matchers::Contains;

namespace {

// The CUDA backend; without a usable device the test skips (CTest runs one test case per
// process, so nothing has been asserted yet).
Backend& cuda_or_skip() {
  static const CudaProbe probe = probe_cuda();
  if (probe.devices == 0) hdlab::testing::skip_test("no usable CUDA device (" + probe.reason + ")");
  static const auto backend = make_cuda_backend(probe.usable.front().ordinal);
  return *backend;
}

// Cases of the cross-backend table the backend runs, convert excepted (check_all's count).
int supported_op_cases(const Backend& backend, ScalarType type) {
  int n = 0;
  for (const OpCase& c : supported_cases(backend, correctness_cases(type))) n += c.op != BackendOp::convert;
  return n;
}

int check_all(Backend& backend, ScalarType type) {
  int ran = 0;
  for (int op = 0; op < backend_op_count; ++op) {
    if (static_cast<BackendOp>(op) == BackendOp::convert) continue;
    ran += check_cases(backend, correctness_cases(type), static_cast<BackendOp>(op));
  }
  return ran;
}

// ---- bad data in an op's inputs (not its shapes) --------------------------------------------

// One input the CPU backend refuses, and the message it refuses it with; the CUDA backend
// must throw the same.
struct BadData {
  const char* what;
  enum class Op { softmax, sigmoid, gather, scatter } op;
  std::vector<float> logits;      // routing: [4 tokens, 4 experts]
  std::int64_t k;                 // routing
  std::vector<std::int32_t> ids;  // gather: rows of a [4, 8] table; scatter: rows of a [4, 8] output
  std::string message;
};

std::vector<float> logits_with(std::int64_t token, std::vector<float> row) {
  std::vector<float> all;
  for (std::int64_t t = 0; t < 4; ++t)
    for (std::int64_t e = 0; e < 4; ++e)
      all.push_back(t == token ? row[static_cast<std::size_t>(e)] : 0.1f * static_cast<float>(e + t));
  return all;
}

std::vector<BadData> bad_data_table() {
  using Op = BadData::Op;
  const float nan = NAN, inf = INFINITY;
  return {
      {"softmax: a NaN logit makes every score of its token NaN", Op::softmax, logits_with(2, {0.1f, nan, 0.3f, 0.4f}), 2,
       {}, "topk_routing: token 2 has NaN router scores"},
      {"softmax: an infinite logit gives inf - inf", Op::softmax, logits_with(0, {inf, 0.2f, 0.3f, 0.4f}), 1, {},
       "topk_routing: token 0 has NaN router scores"},
      {"sigmoid: three NaN logits leave one expert for k = 2", Op::sigmoid, logits_with(3, {nan, 0.5f, nan, nan}), 2, {},
       "topk_routing: token 3 has NaN router scores"},
      {"gather: a negative id", Op::gather, {}, 0, {0, 2, -1}, "gather_rows: id -1 outside [0, 4)"},
      {"gather: the id one past the table", Op::gather, {}, 0, {3, 4}, "gather_rows: id 4 outside [0, 4)"},
      {"gather: two bad ids, the first is named", Op::gather, {}, 0, {1, 9, -5}, "gather_rows: id 9 outside [0, 4)"},
      {"scatter: an id past the output", Op::scatter, {}, 0, {1, 7, 2}, "scatter_add_rows: id 7 outside [0, 4)"},
      {"scatter: a negative id", Op::scatter, {}, 0, {-3, 0}, "scatter_add_rows: id -3 outside [0, 4)"},
  };
}

// Runs the row's op; the BackendError's message, or "" when it ran.
std::string error_of(Backend& be, const BadData& row) {
  try {
    using Op = BadData::Op;
    if (row.op == Op::softmax || row.op == Op::sigmoid) {
      const Tensor logits = be.allocate({4, 4}, ScalarType::f32);
      be.upload(logits, row.logits);
      be.topk_routing(logits, row.k, row.op == Op::softmax ? hdlab::model::RouterKind::softmax
                                                           : hdlab::model::RouterKind::sigmoid,
                      true, be.allocate({4, row.k}, ScalarType::i32), be.allocate({4, row.k}, ScalarType::f32));
    } else {
      const auto n = static_cast<std::int64_t>(row.ids.size());
      const Tensor ids = be.allocate({n}, ScalarType::i32);
      be.upload(ids, row.ids);
      const Tensor table = be.allocate({4, 8}, ScalarType::f32);
      be.upload(table, random_floats(32, 7));
      if (row.op == Op::gather) {
        be.gather_rows(table, ids, be.allocate({n, 8}, ScalarType::f32));
      } else {
        const Tensor src = be.allocate({n, 8}, ScalarType::f32), weights = be.allocate({n}, ScalarType::f32);
        be.upload(src, random_floats(static_cast<std::size_t>(n * 8), 8));
        be.upload(weights, std::vector<float>(static_cast<std::size_t>(n), 0.5f));
        be.scatter_add_rows(src, ids, weights, table);
      }
    }
    be.synchronize();
  } catch (const BackendError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// ---- the CUDA module: loading it, and what is reported when it cannot be -------------------

TEST_CASE("a CUDA module that cannot be loaded is reported with the loader's reason", "[cuda][bad-input]") {
  if (!cuda_compiled()) hdlab::testing::skip_test("built without CUDA (HDLAB_CUDA=OFF): there is no module to load");
  struct Row {
    std::string path;
    std::vector<std::string> reason;  // what the probe's reason and the error must say
  };
  const std::string source = HDLAB_SOURCE_DIR;
  const std::vector<Row> rows = {
      {"", {"location was not given"}},
      {"/nonexistent/hdlab/libhdlab_cuda.so",
       {"cannot load the CUDA backend module", "/nonexistent/hdlab/libhdlab_cuda.so", "No such file or directory"}},
      {source + "/README.md", {"cannot load the CUDA backend module", source + "/README.md"}},  // not ELF
      {"libm.so.6", {"libm.so.6 is not an hdlab CUDA module", "hdlab_cuda_module_entry_points"}},  // no entry point
  };
  for (const Row& row : rows) {
    INFO("module path '" << row.path << "'");
    set_cuda_module(row.path);
    const CudaProbe probe = probe_cuda();
    CHECK(probe.devices == 0);
    CHECK_FALSE(probe.module_loaded);
    CHECK(probe.usable.empty());
    std::string error;
    try {
      make_cuda_backend(0);
    } catch (const BackendError& e) {
      error = e.what();
    }
    for (const std::string& part : row.reason) {
      CHECK_THAT(probe.reason, Contains(part));
      CHECK_THAT(error, Contains(part));
    }
  }
  set_cuda_module(HDLAB_CUDA_MODULE);  // this build's module, for what follows in this process
}

TEST_CASE("an error thrown inside the CUDA module is caught by its type", "[cuda]") {
  // The module keeps its symbols hidden; its BackendError must still be the program's.
  const CudaProbe probe = probe_cuda();
  if (!probe.module_loaded) hdlab::testing::skip_test("the CUDA module did not load: " + probe.reason);
  try {
    make_cuda_backend(999);  // no machine has device 999: the module itself refuses
    FAIL("device 999 was made");
  } catch (const BackendError& e) {
    CHECK_THAT(e.what(), Contains("no usable device 999"));
  }
}

TEST_CASE("probing for CUDA never throws", "[cuda]") {
  CudaProbe probe;
  REQUIRE_NOTHROW(probe = probe_cuda());
  CHECK(probe.devices == static_cast<int>(probe.usable.size()));
  if (probe.devices == 0) {
    CHECK_FALSE(probe.reason.empty());
    CHECK_THROWS_AS(make_cuda_backend(0), BackendError);
  }
  for (const CudaDevice& d : probe.usable) {
    CHECK(d.major >= 8);
    CHECK(d.shared_per_block_optin >= cuda_attention_shared_bytes(128));  // every sm_80+ part: 99 KiB or more
  }
}

// ---- shared with the host: the attention kernel's shared memory ---------------------------

TEST_CASE("the CUDA attention kernel's shared memory per block and the head dims it allows", "[cuda][host]") {
  // K and V tiles [64, hd] and scores [64, 65], f32.
  CHECK(cuda_attention_shared_bytes(64) == 49408);
  CHECK(cuda_attention_shared_bytes(128) == 82176);
  CHECK(cuda_attention_shared_bytes(256) == 147712);
  // Opt-in limits of sm_80 (163 KiB), sm_90 (227 KiB), sm_86/89/120 (99 KiB), the default 48 KiB.
  CHECK(cuda_attention_max_head_dim(163 * 1024) == 256);
  CHECK(cuda_attention_max_head_dim(227 * 1024) == 256);
  CHECK(cuda_attention_max_head_dim(99 * 1024) == 165);
  CHECK(cuda_attention_max_head_dim(48 * 1024) == 63);
  CHECK(cuda_attention_max_head_dim(cuda_attention_shared_bytes(1) - 1) == 0);
  // Past the kernel, attention is composed of other ops: DeepSeek's absorbed decode
  // (576 q/k dims, 512 values) on any device; MLA's prefill (192 / 128) fused on sm_80+.
  CHECK_FALSE(cuda_attention_fused(576, 512, 227 * 1024));
  CHECK(cuda_attention_fused(192, 128, 163 * 1024));
  CHECK(cuda_attention_fused(256, 256, 163 * 1024));
  CHECK_FALSE(cuda_attention_fused(256, 256, 99 * 1024));
  CHECK_FALSE(cuda_attention_fused(257, 8, 227 * 1024));
  // The largest allowed head dim is exactly the last whose block fits.
  for (std::int64_t hd = 1; hd <= kCudaAttentionMaxHeadDim; ++hd) {
    INFO("head dim " << hd);
    CHECK(cuda_attention_max_head_dim(cuda_attention_shared_bytes(hd)) == hd);
    CHECK(cuda_attention_max_head_dim(cuda_attention_shared_bytes(hd) - 1) == hd - 1);
  }
}

// ---- matrix products (calibration's rates) on the CPU -----------------------------------------

TEST_CASE("matrix products: fp32 on the CPU backend, bf16 and fp16 refused", "[cuda][host][bad-input]") {
  auto cpu = make_cpu_backend(CpuOptions{1, "generic"});
  CHECK(supports_matrix_precision(*cpu, MatrixPrecision::fp32));
  CHECK_FALSE(supports_matrix_precision(*cpu, MatrixPrecision::bf16));
  CHECK_FALSE(supports_matrix_precision(*cpu, MatrixPrecision::fp16));
  const auto product = make_matrix_product(*cpu, MatrixPrecision::fp32, 3, 5, 24);
  CHECK(product->check());  // every element 24/8 = 3
  struct Row {
    MatrixPrecision precision;
    std::int64_t m, n, k;
    const char* message;
  };
  const Row rows[] = {
      {MatrixPrecision::bf16, 8, 8, 8, "cpu backend has no bf16 matrix product (it computes in fp32)"},
      {MatrixPrecision::fp16, 8, 8, 8, "cpu backend has no fp16 matrix product (it computes in fp32)"},
      {MatrixPrecision::fp32, 0, 8, 8, "m, n, k must be at least 1 and k at most 65536, got 0, 8, 8"},
      {MatrixPrecision::fp32, 8, 8, 0, "got 8, 8, 0"},
      {MatrixPrecision::fp32, 8, 8, 65537, "got 8, 8, 65537"},
  };
  for (const Row& r : rows) {
    INFO(to_string(r.precision) << " " << r.m << " x " << r.n << " x " << r.k);
    CHECK_THROWS_WITH(make_matrix_product(*cpu, r.precision, r.m, r.n, r.k), Contains(r.message));
  }
}

// ---- bad router scores and row ids ----------------------------------------------------------

TEST_CASE("bad router scores and row ids: the errors the CPU backend throws", "[cuda][host][bad-input]") {
  auto cpu = make_cpu_backend(CpuOptions{2, "generic"});
  for (const BadData& row : bad_data_table()) {
    INFO(row.what);
    CHECK(error_of(*cpu, row) == row.message);
  }
}

TEST_CASE("cuda: bad router scores and row ids throw the CPU backend's BackendError", "[cuda][bad-input]") {
  Backend& be = cuda_or_skip();
  for (const BadData& row : bad_data_table()) {
    INFO(row.what);
    CHECK(error_of(be, row) == row.message);
  }
  // A NaN score is never picked, as on the CPU: one NaN logit of four, k = 2.
  auto cpu = make_cpu_backend(CpuOptions{1, "generic"});
  const std::vector<float> logits = logits_with(1, {0.3f, NAN, 0.9f, -0.2f});
  std::vector<std::vector<std::int32_t>> picked;
  for (Backend* b : {static_cast<Backend*>(cpu.get()), &be}) {
    const Tensor l = b->allocate({4, 4}, ScalarType::f32), ids = b->allocate({4, 2}, ScalarType::i32);
    b->upload(l, logits);
    b->topk_routing(l, 2, hdlab::model::RouterKind::sigmoid, false, ids, b->allocate({4, 2}, ScalarType::f32));
    picked.push_back(b->download_i32(ids));
  }
  CHECK(picked[0][2] == 2);  // token 1: experts 2 then 0, never the NaN one
  CHECK(picked[0][3] == 0);
  CHECK(picked[1] == picked[0]);
}

// ---- the op table on the device -------------------------------------------------------------

TEST_CASE("cuda f32 ops match the reference", "[cuda]") {
  Backend* be = &cuda_or_skip();
  CHECK(be->name() == "cuda");
  const int expected = supported_op_cases(*be, ScalarType::f32);
  CHECK(expected == static_cast<int>(correctness_cases(ScalarType::f32).size()));  // CUDA runs every f32 case
  CHECK(check_all(*be, ScalarType::f32) == expected);
}

TEST_CASE("cuda bf16 ops match the reference", "[cuda]") {
  Backend* be = &cuda_or_skip();
  for (BackendOp op : {BackendOp::gemm, BackendOp::attention, BackendOp::rms_norm, BackendOp::rope})
    CHECK(be->supports(op, ScalarType::bf16));
  const int expected = supported_op_cases(*be, ScalarType::bf16);
  CHECK(expected == static_cast<int>(correctness_cases(ScalarType::bf16).size()));  // and every bf16 case
  CHECK(check_all(*be, ScalarType::bf16) == expected);
}

TEST_CASE("cuda memory, conversions and timers", "[cuda]") {
  Backend* be = &cuda_or_skip();
  const std::size_t before = be->memory().allocated_bytes;
  {
    const Tensor t = be->allocate({1000}, ScalarType::f32);
    const Tensor h = be->allocate({1000}, ScalarType::bf16);
    CHECK(be->memory().allocated_bytes == before + 6000);
    std::vector<float> x(1000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.25f;
    be->upload(t, x);
    be->convert(t, h);
    be->convert(h, t);
    CHECK(be->download_f32(t) == x);  // multiples of 1/4 below 250 are exact in bf16
  }
  CHECK(be->memory().allocated_bytes == before);
  const MemoryStats m = be->memory();
  CHECK(m.total_bytes > 0);
  CHECK_THROWS_AS(be->require_fits(m.total_bytes * 2), OutOfMemoryError);
  // Thrown inside the CUDA module, caught here by its type.
  CHECK_THROWS_AS(be->allocate({static_cast<std::int64_t>(m.total_bytes)}, ScalarType::f32), OutOfMemoryError);
}

TEST_CASE("cuda timers measure the work between start and stop", "[cuda]") {
  Backend* be = &cuda_or_skip();
  // 2 x 2048^3 = 17.2 GFLOP of f32 products: no device of this build's kind runs fp32
  // above 1 PFLOP/s, so one takes at least 17 us; two take about twice one.
  const std::int64_t n = 2048;
  const Tensor a = be->allocate({n, n}, ScalarType::f32), c = be->allocate({n, n}, ScalarType::f32);
  be->upload(a, random_floats(static_cast<std::size_t>(n * n), 3));
  auto timed = [&](int products) {
    be->gemm(a, false, a, true, c);  // warm: cuBLAS's first call picks its kernel
    be->synchronize();
    auto timer = be->make_timer();
    const auto host_start = std::chrono::steady_clock::now();
    timer->start();
    for (int i = 0; i < products; ++i) be->gemm(a, false, a, true, c);
    timer->stop();
    const double ms = timer->elapsed_ms();
    const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count();
    INFO(products << " products: " << ms << " ms on the device timer, " << host_ms << " ms on the host clock");
    CHECK(ms >= products * 2.0 * n * n * n / 1e15 * 1e3);
    CHECK(ms <= host_ms);  // the events lie between the host's two readings
    return ms;
  };
  const double one = timed(1), two = timed(2);
  CHECK(two > 1.3 * one);
  CHECK(two < 3.0 * one);
}

// ---- what the device allows, and threads ------------------------------------------------------

TEST_CASE("cuda attention runs every head dim: the fused kernel where shared memory holds it, in parts past it",
          "[cuda][mla]") {
  Backend& be = cuda_or_skip();
  const CudaProbe probe = probe_cuda();
  const std::size_t optin = probe.usable.front().shared_per_block_optin;
  const std::int64_t largest = cuda_attention_max_head_dim(optin);
  INFO(probe.usable.front().name << ": " << optin << " bytes of shared memory per block, head dim at most " << largest);
  std::vector<std::int64_t> dims = {64, 128, 256, largest, 320, 576};
  if (largest < kCudaAttentionMaxHeadDim) dims.push_back(largest + 1);
  for (std::int64_t hd : dims) {
    INFO("head dim " << hd);
    CHECK(be.fused_attention_fits(hd, hd) == (hd <= largest));
    AttentionCaseShape shape;
    shape.mask.tokens = 100;
    shape.heads = 2;
    shape.kv_heads = 1;
    shape.head_dim = hd;
    for (ScalarType type : {ScalarType::f32, ScalarType::bf16}) {
      const OpCheck r = attention_case(shape, type, 77).prepare(be)->check();
      INFO(to_string(type) << " worst: " << r.worst);
      CHECK(r.pass);
    }
  }
}

TEST_CASE("a cuda backend made on one thread runs ops on another", "[cuda]") {
  cuda_or_skip();
  // The last usable device: with two or more, not the device a new thread starts on (0),
  // so the ops there run only if the backend makes its own device current.
  const int device = probe_cuda().usable.back().ordinal;
  const auto be = make_cuda_backend(device);
  std::vector<OpCase> cases;
  for (BackendOp op : {BackendOp::gemm, BackendOp::attention, BackendOp::rms_norm, BackendOp::topk_routing,
                       BackendOp::gather_rows, BackendOp::scatter_add_rows})
    for (const OpCase& c : correctness_cases(ScalarType::f32))
      if (c.op == op) {
        cases.push_back(c);
        break;
      }
  REQUIRE(cases.size() == 6);
  std::vector<OpCheck> results;
  std::string error;
  std::thread worker([&] {  // no assertions here: Catch2 records them on the test's thread
    try {
      for (const OpCase& c : cases) results.push_back(c.prepare(*be)->check());
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  worker.join();
  CHECK(error.empty());
  REQUIRE(results.size() == cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO(cases[i].name << ": " << results[i].worst);
    CHECK(results[i].pass);
  }
}

TEST_CASE("cuda device available", "[cuda]") {
  const CudaProbe probe = probe_cuda();
  if (probe.devices == 0) hdlab::testing::skip_test("CUDA tests need a device: " + probe.reason);
  CHECK(probe.reason.empty());
  CHECK_NOTHROW(make_cuda_backend(probe.usable.front().ordinal));
}
