// The cross-backend op test, CUDA side: the same correctness table as the CPU test, in f32
// and bf16, on the CUDA backend. Every test is tagged [cuda]. Without a usable device
// (no GPU, no driver, or a build without CUDA) each test says so and returns, and the
// last test case exits with code 4, which CTest reports as "skipped" for this executable.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>

#include "hdlab/executor/backends.hpp"
#include "op_test_support.hpp"

using namespace hdlab::executor;
using hdlab::executor::testing::check_cases;

namespace {

// The CUDA backend, or null after a visible "skipped" note. CTest runs one test case per
// process (a test filter is set): there the test exits with 4 and CTest lists it as
// skipped; run by hand, it warns and returns so that the other tests still run.
Backend* cuda_or_skip() {
  static const CudaProbe probe = probe_cuda();
  if (probe.devices == 0) {
    if (Catch::getCurrentContext().getConfig()->hasTestFilters()) {
      std::cout << "SKIPPED: no usable CUDA device (" << probe.reason << ")" << std::endl;
      std::exit(4);
    }
    WARN("skipped: no usable CUDA device (" << probe.reason << ")");
    return nullptr;
  }
  static const auto backend = make_cuda_backend(0);
  return backend.get();
}

int check_all(Backend& backend, ScalarType type) {
  int ran = 0;
  for (int op = 0; op < backend_op_count; ++op) {
    if (static_cast<BackendOp>(op) == BackendOp::convert) continue;
    ran += check_cases(backend, correctness_cases(type), static_cast<BackendOp>(op));
  }
  return ran;
}

}  // namespace

TEST_CASE("probing for CUDA never throws", "[cuda]") {
  CudaProbe probe;
  REQUIRE_NOTHROW(probe = probe_cuda());
  if (probe.devices == 0) {
    CHECK_FALSE(probe.reason.empty());
    CHECK_THROWS_AS(make_cuda_backend(0), BackendError);
  }
}

TEST_CASE("cuda f32 ops match the reference", "[cuda]") {
  Backend* be = cuda_or_skip();
  if (!be) return;
  CHECK(be->name() == "cuda");
  CHECK(check_all(*be, ScalarType::f32) == static_cast<int>(supported_cases(*be, correctness_cases(ScalarType::f32)).size()));
}

TEST_CASE("cuda bf16 ops match the reference", "[cuda]") {
  Backend* be = cuda_or_skip();
  if (!be) return;
  for (BackendOp op : {BackendOp::gemm, BackendOp::attention, BackendOp::rms_norm, BackendOp::rope})
    CHECK(be->supports(op, ScalarType::bf16));
  CHECK(check_all(*be, ScalarType::bf16) > 40);
}

TEST_CASE("cuda memory, conversions and timers", "[cuda]") {
  Backend* be = cuda_or_skip();
  if (!be) return;
  const std::size_t before = be->memory().allocated_bytes;
  {
    const Tensor t = be->allocate({1000}, ScalarType::f32);
    const Tensor h = be->allocate({1000}, ScalarType::bf16);
    CHECK(be->memory().allocated_bytes == before + 6000);
    std::vector<float> x(1000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.25f;
    be->upload(t, x);
    auto timer = be->make_timer();
    timer->start();
    be->convert(t, h);
    be->convert(h, t);
    timer->stop();
    CHECK(timer->elapsed_ms() >= 0.0);
    CHECK(be->download_f32(t) == x);  // multiples of 1/4 below 250 are exact in bf16
  }
  CHECK(be->memory().allocated_bytes == before);
  const MemoryStats m = be->memory();
  CHECK(m.total_bytes > 0);
  CHECK_THROWS_AS(be->require_fits(m.total_bytes * 2), OutOfMemoryError);
  CHECK_THROWS_AS(be->allocate({static_cast<std::int64_t>(m.total_bytes)}, ScalarType::f32), OutOfMemoryError);
}

// Declared last, so running the executable by hand runs every test above first.
TEST_CASE("cuda device available (exit code 4 = skipped when none)", "[cuda]") {
  const CudaProbe probe = probe_cuda();
  if (probe.devices == 0) {
    std::cout << "SKIPPED: CUDA tests need a device: " << probe.reason << std::endl;
    std::exit(4);
  }
  SUCCEED("CUDA devices: " << probe.devices);
}
