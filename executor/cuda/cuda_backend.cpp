// The CUDA backend: device memory, transfers, cuBLAS GEMM (f32 and bf16 with f32
// accumulation), our kernels (cuda_kernels.hpp) on one stream, CUDA events for timing,
// and the device probe. Host code only; kernels live in the .cu files.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <climits>
#include <cmath>
#include <list>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include "cuda_check.hpp"
#include "cuda_kernels.hpp"
#include "hdlab/executor/backends.hpp"

namespace hdlab::executor {

namespace cuda {

[[noreturn]] void throw_cuda_error(const char* file, int line, const char* call, const char* error_name,
                                   const char* error_text) {
  std::ostringstream o;
  o << file << ":" << line << ": " << call << " failed: " << error_name << " (" << error_text << ")";
  throw BackendError(o.str());
}

namespace {

Elem elem_of(const Tensor& t) { return t.type() == ScalarType::bf16 ? Elem::bf16 : Elem::f32; }

int as_int(std::int64_t x, const char* what) {
  if (x > INT_MAX) throw BackendError(std::string("cuda backend: ") + what + " exceeds cuBLAS's int range");
  return static_cast<int>(x);
}

class EventTimerCuda final : public EventTimer {
 public:
  explicit EventTimerCuda(cudaStream_t stream) : stream_(stream) {
    HDLAB_CUDA_CHECK(cudaEventCreate(&start_));
    HDLAB_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimerCuda() override {
    cudaEventDestroy(start_);  // destructors do not throw; a failure here leaks an event
    cudaEventDestroy(stop_);
  }
  void start() override { HDLAB_CUDA_CHECK(cudaEventRecord(start_, stream_)); }
  void stop() override { HDLAB_CUDA_CHECK(cudaEventRecord(stop_, stream_)); }
  double elapsed_ms() override {
    HDLAB_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    HDLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_{}, stop_{};
};

// Devices this build can run on: compute capability 8.0 or newer (built for sm_80, sm_90).
bool usable(const cudaDeviceProp& p) { return p.major >= 8; }

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device) : device_(device) {
    HDLAB_CUDA_CHECK(cudaSetDevice(device_));
    HDLAB_CUDA_CHECK(cudaGetDeviceProperties(&props_, device_));
    if (!usable(props_))
      throw BackendError("cuda backend: " + std::string(props_.name) + " has compute capability " +
                         std::to_string(props_.major) + "." + std::to_string(props_.minor) + ", need 8.0+");
    HDLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    HDLAB_CUBLAS_CHECK(cublasCreate(&blas_));
    HDLAB_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
  }
  ~CudaBackend() override {
    plans_.clear();  // device copies of plans are tensors of this backend
    if (blas_) cublasDestroy(blas_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "cuda"; }
  std::string description() const override {
    std::ostringstream o;
    o << "cuda: device " << device_ << " " << props_.name << " (sm_" << props_.major << props_.minor << ", "
      << props_.multiProcessorCount << " SMs, " << static_cast<double>(props_.totalGlobalMem) / (1 << 30) << " GiB)";
    return o.str();
  }
  bool supports(BackendOp op, ScalarType type) const override {
    (void)op;
    return type == ScalarType::f32 || type == ScalarType::bf16;
  }
  void synchronize() override { HDLAB_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  std::unique_ptr<EventTimer> make_timer() override { return std::make_unique<EventTimerCuda>(stream_); }

 protected:
  void* raw_allocate(std::size_t bytes) override {
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear it: an allocation failure does not poison the context
      const std::size_t available = available_bytes();
      throw OutOfMemoryError("cuda: allocating " + std::to_string(bytes) + " bytes failed, " +
                                 std::to_string(available) + " free",
                             bytes, available);
    }
    HDLAB_CUDA_CHECK(status);
    return p;
  }
  void raw_free(void* ptr, std::size_t) noexcept override { cudaFree(ptr); }
  std::size_t available_bytes() const override {
    std::size_t free = 0, total = 0;
    HDLAB_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return free;
  }
  std::size_t total_bytes() const override { return props_.totalGlobalMem; }

  void copy_from_host(const Tensor& dst, const void* src) override {
    HDLAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src, dst.bytes(), cudaMemcpyHostToDevice, stream_));
    synchronize();  // the host buffer may go away when we return
  }
  void copy_to_host(const Tensor& src, void* dst) override {
    HDLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.bytes(), cudaMemcpyDeviceToHost, stream_));
    synchronize();
  }
  void copy_impl(const Tensor& src, const Tensor& dst) override {
    HDLAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice, stream_));
  }
  void fill_zero_impl(const Tensor& t) override { HDLAB_CUDA_CHECK(cudaMemsetAsync(t.data(), 0, t.bytes(), stream_)); }
  void convert_impl(const Tensor& src, const Tensor& dst) override {
    launch_convert(elem_of(src), src.data(), elem_of(dst), dst.data(), src.numel(), stream_);
  }

  void gemm_impl(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c, float alpha,
                 float beta) override;
  void attention_impl(const Tensor& q, const Tensor& k, const Tensor& v, const TilePlan& plan, const Tensor& out,
                      float scale) override;
  void rms_norm_impl(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) override {
    launch_rms_norm(elem_of(x), x.data(), weight.data_as<const float>(), out.data(), x.matrix_rows(), x.matrix_cols(),
                    eps, stream_);
  }
  void group_norm_impl(const Tensor& x, std::int64_t group_size, const Tensor& weight, const Tensor& bias, float eps,
                       const Tensor& out) override {
    launch_group_norm(elem_of(x), x.data(), group_size, weight.data_as<const float>(), bias.data_as<const float>(),
                      out.data(), x.matrix_rows(), x.matrix_cols(), eps, stream_);
  }
  void rope_impl(const Tensor& x, const Tensor& positions, double theta) override;
  void swiglu_impl(const Tensor& gate_up, const Tensor& out) override {
    launch_swiglu(elem_of(out), gate_up.data(), out.data(), out.matrix_rows(), out.matrix_cols(), stream_);
  }
  void add_impl(const Tensor& a, const Tensor& b, const Tensor& out) override {
    launch_add(elem_of(out), a.data(), b.data(), out.data(), out.numel(), stream_);
  }
  void topk_routing_impl(const Tensor& logits, std::int64_t k, model::RouterKind score, bool normalize,
                         const Tensor& expert_ids, const Tensor& weights) override {
    if (logits.matrix_cols() > 1024) throw BackendError("cuda topk_routing: more than 1024 experts");
    launch_topk_routing(elem_of(logits), logits.data(), logits.matrix_rows(), logits.matrix_cols(), k,
                        score == model::RouterKind::sigmoid, normalize, expert_ids.data_as<std::int32_t>(),
                        weights.data_as<float>(), stream_);
  }
  void gather_rows_impl(const Tensor& table, const Tensor& ids, const Tensor& out, RowMap map) override {
    launch_gather_rows(elem_of(table), table.data(), table.matrix_rows(), table.matrix_cols(),
                       ids.data_as<const std::int32_t>(), ids.numel(), out.data(), map.first, map.stride, stream_);
  }
  void scatter_add_rows_impl(const Tensor& src, const Tensor& ids, const Tensor& weights, const Tensor& out) override {
    launch_scatter_add_rows(elem_of(src), src.data(), ids.data_as<const std::int32_t>(),
                            weights.data_as<const float>(), src.matrix_rows(), src.matrix_cols(), out.data(),
                            out.matrix_rows(), stream_);
  }
  void ghc_dynamic_impl(const Tensor& hn, const Tensor& w_dyn, const Tensor& scale, const Tensor& static_a,
                        const Tensor& static_b, const Tensor& alpha, const Tensor& beta) override {
    launch_ghc_dynamic(elem_of(hn), hn.data(), w_dyn.data(), scale.data_as<const float>(),
                       static_a.data_as<const float>(), static_b.data_as<const float>(), alpha.data_as<float>(),
                       beta.data_as<float>(), hn.dim(0), hn.dim(1), hn.dim(2), static_b.dim(0), stream_);
  }
  void ghc_width_impl(const Tensor& h, const Tensor& alpha, const Tensor& x, const Tensor& carry) override {
    const bool per_token = alpha.dim(0) == h.dim(0) && h.dim(0) != 1;
    launch_ghc_width(elem_of(h), h.data(), alpha.data_as<const float>(), per_token, x.data(), carry.data(), h.dim(0),
                     h.dim(1), h.dim(2), alpha.dim(2) - h.dim(1), stream_);
  }
  void ghc_depth_impl(const Tensor& z, const Tensor& beta, const Tensor& carry, const Tensor& out) override {
    const bool per_token = beta.dim(0) == z.dim(0) && z.dim(0) != 1;
    launch_ghc_depth(elem_of(z), z.data(), beta.data_as<const float>(), per_token, carry.data(), out.data(), z.dim(0),
                     z.dim(1), z.dim(2), carry.dim(1), stream_);
  }

 private:
  // A plan's arrays on the device, kept for the last few plans (a runner reuses one plan
  // for every layer of a kind), keyed by TilePlan::id().
  struct DevicePlan {
    std::uint64_t id = 0;
    Tensor classes, partial_index, bits;
    DeviceTilePlan view;
  };
  const DeviceTilePlan& device_plan(const TilePlan& plan);

  int device_;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::list<DevicePlan> plans_;  // most recent first
};

void CudaBackend::gemm_impl(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c, float alpha,
                            float beta) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
  const int m = as_int(c.matrix_rows(), "M"), n = as_int(c.matrix_cols(), "N");
  const int k = as_int(trans_a ? a.matrix_rows() : a.matrix_cols(), "K");
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int lda = as_int(a.matrix_cols(), "lda"), ldb = as_int(b.matrix_cols(), "ldb");
  if (a.type() == ScalarType::f32) {
    HDLAB_CUBLAS_CHECK(cublasSgemm(blas_, op_b, op_a, n, m, k, &alpha, b.data_as<const float>(), ldb,
                                   a.data_as<const float>(), lda, &beta, c.data_as<float>(), n));
  } else {  // bf16 in and out, f32 accumulation
    HDLAB_CUBLAS_CHECK(cublasGemmEx(blas_, op_b, op_a, n, m, k, &alpha, b.data(), CUDA_R_16BF, ldb, a.data(),
                                    CUDA_R_16BF, lda, &beta, c.data(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT));
  }
}

const DeviceTilePlan& CudaBackend::device_plan(const TilePlan& plan) {
  for (auto it = plans_.begin(); it != plans_.end(); ++it)
    if (it->id == plan.id()) {
      plans_.splice(plans_.begin(), plans_, it);
      return plans_.front().view;
    }
  constexpr std::size_t kKeep = 8;
  if (plans_.size() >= kKeep) plans_.pop_back();
  DevicePlan d;
  d.id = plan.id();
  // Stored as i32 words: the byte arrays are padded up to whole words.
  auto upload_bytes = [&](const void* src, std::size_t bytes) {
    const Tensor t = allocate({static_cast<std::int64_t>((bytes + 3) / 4)}, ScalarType::i32);
    if (bytes) HDLAB_CUDA_CHECK(cudaMemcpyAsync(t.data(), src, bytes, cudaMemcpyHostToDevice, stream_));
    return t;
  };
  d.classes = upload_bytes(plan.classes().data(), plan.classes().size());
  d.partial_index = upload_bytes(plan.partial_index().data(), plan.partial_index().size() * sizeof(std::int32_t));
  d.bits = upload_bytes(plan.bits().data(), plan.bits().size() * sizeof(std::uint64_t));
  synchronize();  // the host vectors belong to the caller's plan
  d.view = DeviceTilePlan{d.classes.data_as<const std::uint8_t>(), d.partial_index.data_as<const std::int32_t>(),
                          d.bits.data_as<const std::uint64_t>(), plan.q_tiles(), plan.k_tiles()};
  plans_.push_front(std::move(d));
  return plans_.front().view;
}

void CudaBackend::attention_impl(const Tensor& q, const Tensor& k, const Tensor& v, const TilePlan& plan,
                                 const Tensor& out, float scale) {
  if (q.dim(2) > kMaxAttentionHeadDim)
    throw BackendError("cuda attention: head dim " + std::to_string(q.dim(2)) + " above " +
                       std::to_string(kMaxAttentionHeadDim));
  AttentionLaunch a;
  a.elem = elem_of(q);
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.out = out.data();
  a.query_rows = q.dim(0);
  a.key_rows = k.dim(0);
  a.heads = q.dim(1);
  a.kv_heads = k.dim(1);
  a.head_dim = q.dim(2);
  a.scale = scale;
  a.plan = device_plan(plan);
  launch_attention(a, stream_);
}

void CudaBackend::rope_impl(const Tensor& x, const Tensor& positions, double theta) {
  const std::int64_t hd = x.dim(2);
  if (hd / 2 > kMaxRopeHalfDim) throw BackendError("cuda rope: head dim " + std::to_string(hd) + " above 256");
  double inv_freq[kMaxRopeHalfDim];
  for (std::int64_t j = 0; j < hd / 2; ++j)
    inv_freq[j] = std::pow(theta, -2.0 * static_cast<double>(j) / static_cast<double>(hd));
  launch_rope(elem_of(x), x.data(), positions.data_as<const std::int32_t>(), x.dim(0), x.dim(1), hd, inv_freq,
              stream_);
}

}  // namespace

}  // namespace cuda

bool cuda_compiled() { return true; }

CudaProbe probe_cuda() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return CudaProbe{0, std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" +
                            cudaGetErrorString(status) + ")"};
  }
  int usable = 0;
  std::string reason = count == 0 ? "no CUDA device" : "";
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) == cudaSuccess && cuda::usable(p))
      ++usable;
    else
      reason = "device " + std::to_string(d) + " is below compute capability 8.0";
  }
  return CudaProbe{usable, usable ? "" : reason};
}

std::unique_ptr<Backend> make_cuda_backend(int device) {
  const CudaProbe probe = probe_cuda();
  if (device < 0 || device >= probe.devices)
    throw BackendError("cuda backend: no usable device " + std::to_string(device) +
                       (probe.reason.empty() ? "" : " (" + probe.reason + ")"));
  return std::make_unique<cuda::CudaBackend>(device);
}

}  // namespace hdlab::executor
