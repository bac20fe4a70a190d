// CPU backend: memory, transfers, GEMM through OpenBLAS, timers, and the factory.
#include "cpu_backend.hpp"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <thread>

namespace hdlab::executor {

namespace cpu {

namespace {

constexpr std::size_t kAlignment = 64;  // one cache line, the widest vector load

class SteadyTimer final : public EventTimer {
 public:
  void start() override { start_ = std::chrono::steady_clock::now(); }
  void stop() override { stop_ = std::chrono::steady_clock::now(); }
  double elapsed_ms() override { return std::chrono::duration<double, std::milli>(stop_ - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_{}, stop_{};
};

// "MemAvailable:  123456 kB" -> bytes; 0 when the key is missing.
std::size_t meminfo_bytes(const char* key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  const std::string prefix = std::string(key) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream fields(line.substr(prefix.size()));
    std::size_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

AttendTileFn resolve_isa(const std::string& requested, std::string& chosen) {
  const auto available = isas_available();
  chosen = requested == "auto" ? available.front() : requested;
  AttendTileFn fn = attend_tile_for(chosen);
  if (!fn) throw BackendError("cpu backend: attention kernel '" + requested + "' is not available on this build/CPU");
  return fn;
}

}  // namespace

std::size_t host_available_bytes() {
  if (auto b = meminfo_bytes("MemAvailable")) return b;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

std::size_t host_total_bytes() {
  if (auto b = meminfo_bytes("MemTotal")) return b;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

CpuBackend::CpuBackend(const CpuOptions& options)
    : threads_(resolve_threads(options.threads)),
      fused_max_dims_(options.fused_attention_max_dims),
      pool_(threads_),
      attend_tile_(resolve_isa(options.attention_isa, attention_isa_)) {
  if (fused_max_dims_ < 0)
    throw BackendError("cpu: fused_attention_max_dims " + std::to_string(fused_max_dims_) + " is negative");
  // OpenBLAS keeps one process-wide thread count; the backend's is the one that applies.
  openblas_set_num_threads(threads_);
}

std::string CpuBackend::description() const {
  std::ostringstream o;
  o << "cpu: " << threads_ << (threads_ == 1 ? " thread" : " threads") << ", attention kernel " << attention_isa_ << ", " << openblas_get_config();
  return o.str();
}

bool CpuBackend::supports(BackendOp op, ScalarType type) const {
  if (op == BackendOp::convert) return type == ScalarType::f32 || type == ScalarType::bf16;
  return type == ScalarType::f32;  // the CPU computes in f32 only
}

bool CpuBackend::supports(const ModuleOp& op, ScalarType type) const {
  return op.cpu != nullptr && type == ScalarType::f32;
}

void CpuBackend::run_impl(const ModuleOp& op, const ModuleOpCall& call) {
  struct Workers final : CpuWorkers {
    explicit Workers(CpuBackend& b) : backend(b) {}
    void parallel_for(std::int64_t n, double cost_per_item,
                      const std::function<void(std::int64_t, std::int64_t)>& body) override {
      backend.parallel_for(n, cost_per_item, body);
    }
    CpuBackend& backend;
  } workers(*this);
  op.cpu(call, workers);
}

std::unique_ptr<EventTimer> CpuBackend::make_timer() { return std::make_unique<SteadyTimer>(); }

void* CpuBackend::raw_allocate(std::size_t bytes) {
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (!p)
    throw OutOfMemoryError("cpu: allocating " + std::to_string(bytes) + " bytes failed", bytes, host_available_bytes());
  return p;
}

void CpuBackend::raw_free(void* ptr, std::size_t) noexcept { std::free(ptr); }
std::size_t CpuBackend::available_bytes() const { return host_available_bytes(); }
std::size_t CpuBackend::total_bytes() const { return host_total_bytes(); }

void CpuBackend::copy_from_host(const Tensor& dst, const void* src) { std::memcpy(dst.data(), src, dst.bytes()); }
void CpuBackend::copy_to_host(const Tensor& src, void* dst) { std::memcpy(dst, src.data(), src.bytes()); }
void CpuBackend::copy_impl(const Tensor& src, const Tensor& dst) { std::memcpy(dst.data(), src.data(), src.bytes()); }
void CpuBackend::fill_zero_impl(const Tensor& t) { std::memset(t.data(), 0, t.bytes()); }

void CpuBackend::convert_impl(const Tensor& src, const Tensor& dst) {
  const std::int64_t n = src.numel();
  if (src.type() == dst.type()) return copy_impl(src, dst);
  if (src.type() == ScalarType::f32) {
    const float* s = src.data_as<float>();
    auto* d = dst.data_as<std::uint16_t>();
    for (std::int64_t i = 0; i < n; ++i) d[i] = f32_to_bf16(s[i]);
  } else {
    const auto* s = src.data_as<std::uint16_t>();
    float* d = dst.data_as<float>();
    for (std::int64_t i = 0; i < n; ++i) d[i] = bf16_to_f32(s[i]);
  }
}

void CpuBackend::gemm_impl(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c,
                           float alpha, float beta) {
  const auto m = static_cast<blasint>(c.matrix_rows()), n = static_cast<blasint>(c.matrix_cols());
  const auto k = static_cast<blasint>(trans_a ? a.matrix_rows() : a.matrix_cols());
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha,
              a.data_as<const float>(), static_cast<blasint>(a.matrix_cols()), b.data_as<const float>(),
              static_cast<blasint>(b.matrix_cols()), beta, c.data_as<float>(), n);
}

// One OpenBLAS product per matrix of the batch, each with its leading dimensions (MLA's
// per-head products: a few to a hundred heads, each large enough for OpenBLAS's threads).
void CpuBackend::gemm_batched_impl(const Tensor& a, StridedBatch av, bool trans_a, const Tensor& b, StridedBatch bv,
                                   bool trans_b, const Tensor& c, StridedBatch cv, std::int64_t batch, std::int64_t m,
                                   std::int64_t n, std::int64_t k) {
  const float* as = a.data_as<const float>();
  const float* bs = b.data_as<const float>();
  float* cs = c.data_as<float>();
  // BLAS wants a leading dimension of at least the stored row's width, also for one row.
  const auto ld = [](StridedBatch s, std::int64_t cols) { return static_cast<blasint>(std::max(s.row_stride, cols)); };
  const blasint lda = ld(av, trans_a ? m : k), ldb = ld(bv, trans_b ? k : n), ldc = ld(cv, n);
  for (std::int64_t g = 0; g < batch; ++g)
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f,
                as + av.offset + g * av.batch_stride, lda, bs + bv.offset + g * bv.batch_stride, ldb, 0.0f,
                cs + cv.offset + g * cv.batch_stride, ldc);
}

void CpuBackend::copy_strided_impl(const Tensor& src, StridedBatch sv, const Tensor& dst, StridedBatch dv,
                                   std::int64_t batch, std::int64_t rows, std::int64_t cols) {
  const float* s = src.data_as<const float>();
  float* d = dst.data_as<float>();
  parallel_for(batch * rows, static_cast<double>(cols), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t g = i / rows, r = i % rows;
      std::memcpy(d + dv.offset + g * dv.batch_stride + r * dv.row_stride,
                  s + sv.offset + g * sv.batch_stride + r * sv.row_stride, static_cast<std::size_t>(cols) * 4);
    }
  });
}

void CpuBackend::attention_impl(const Tensor& q, const Tensor& k, const Tensor& v, const TilePlan& plan,
                                const Tensor& out, float scale, const Tensor& sinks) {
  AttentionProblem p;
  p.sinks = sinks.defined() ? sinks.data_as<const float>() : nullptr;
  p.q = q.data_as<const float>();
  p.k = k.data_as<const float>();
  p.v = v.data_as<const float>();
  p.out = out.data_as<float>();
  p.query_rows = q.dim(0);
  p.key_rows = k.dim(0);
  p.heads = q.dim(1);
  p.kv_heads = k.dim(1);
  p.head_dim = q.dim(2);
  p.v_head_dim = out.dim(2);
  p.v_row_dim = v.dim(2);
  p.scale = scale;
  run_attention(pool_, attend_tile_, p, plan);
}

void CpuBackend::parallel_for(std::int64_t n, double cost_per_item,
                              const std::function<void(std::int64_t, std::int64_t)>& body) {
  // About 32k element-ops per chunk: small ops (a decode step's few rows) stay on the
  // calling thread, where waking the pool would cost more than the work.
  constexpr double kChunkCost = 32768;
  const auto grain = static_cast<std::int64_t>(std::max(1.0, kChunkCost / std::max(cost_per_item, 1.0)));
  pool_.parallel_for(n, grain, body);
}

}  // namespace cpu

std::unique_ptr<Backend> make_cpu_backend(const CpuOptions& options) {
  return std::make_unique<cpu::CpuBackend>(options);
}

std::vector<std::string> cpu_attention_isas() { return cpu::isas_available(); }

std::unique_ptr<Backend> make_backend(const std::string& name) {
  if (name == "cpu") return make_cpu_backend();
  if (name == "cuda") return make_cuda_backend(0);
  throw BackendError("unknown backend '" + name + "' (cpu or cuda)");
}

}  // namespace hdlab::executor
