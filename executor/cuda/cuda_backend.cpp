// The CUDA backend's host side (see cuda_backend.hpp): memory, transfers, cuBLAS, launches
// of our kernels, and the checks that make it refuse what the CPU backend refuses.
#include "cuda_backend.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <sstream>
#include <utility>

#include "../src/op_errors.hpp"
#include "cuda_check.hpp"
#include "cuda_module_ops.hpp"

namespace hdlab::executor::cuda {

static_assert(kCudaAttentionRows == kTileQ && kCudaAttentionKeys == kTileK,
              "the CUDA attention kernel walks the executor's tiles");

[[noreturn]] void throw_cuda_error(const char* file, int line, const char* call, const char* error_name,
                                   const char* error_text) {
  std::ostringstream o;
  o << file << ":" << line << ": " << call << " failed: " << error_name << " (" << error_text << ")";
  throw BackendError(o.str());
}

void bind_device(int device) {
  int current = -1;
  HDLAB_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) HDLAB_CUDA_CHECK(cudaSetDevice(device));
}

bool usable(const cudaDeviceProp& p) { return p.major >= 8; }

namespace {

int as_int(std::int64_t x, const char* what) {
  if (x > INT_MAX) throw BackendError(std::string("cuda backend: ") + what + " exceeds cuBLAS's int range");
  return static_cast<int>(x);
}

class EventTimerCuda final : public EventTimer {
 public:
  EventTimerCuda(int device, cudaStream_t stream) : device_(device), stream_(stream) {
    bind_device(device_);
    HDLAB_CUDA_CHECK(cudaEventCreate(&start_));
    HDLAB_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimerCuda() override {
    cudaSetDevice(device_);    // destructors do not throw; a failure here leaks the events
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() override {
    bind_device(device_);
    HDLAB_CUDA_CHECK(cudaEventRecord(start_, stream_));
  }
  void stop() override {
    bind_device(device_);
    HDLAB_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  }
  double elapsed_ms() override {
    bind_device(device_);
    HDLAB_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    HDLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  int device_;
  cudaStream_t stream_;
  cudaEvent_t start_{}, stop_{};
};

// Device plans kept: every distinct plan of a runner call (its host cache keeps 64) while
// they stay below a quarter GiB; the plan just staged always stays.
constexpr std::size_t kKeepPlans = 64;
constexpr std::size_t kKeepPlanBytes = std::size_t{256} << 20;

}  // namespace

// ---- set-up ------------------------------------------------------------------------------

CudaBackend::CudaBackend(int device) : device_(device) {
  HDLAB_CUDA_CHECK(cudaSetDevice(device_));
  HDLAB_CUDA_CHECK(cudaGetDeviceProperties(&props_, device_));
  if (!usable(props_))
    throw BackendError("cuda backend: " + std::string(props_.name) + " has compute capability " +
                       std::to_string(props_.major) + "." + std::to_string(props_.minor) + ", need 8.0+");
  int optin = 0;
  HDLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device_));
  shared_per_block_optin_ = static_cast<std::size_t>(optin);
  HDLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  HDLAB_CUBLAS_CHECK(cublasCreate(&blas_));
  HDLAB_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
  void* fault = nullptr;
  HDLAB_CUDA_CHECK(cudaMalloc(&fault, sizeof(unsigned)));
  fault_ = static_cast<unsigned*>(fault);
  HDLAB_CUDA_CHECK(cudaMallocHost(&fault, sizeof(unsigned)));
  fault_host_ = static_cast<unsigned*>(fault);
}

CudaBackend::~CudaBackend() {
  cudaSetDevice(device_);
  plans_.clear();  // device copies of plans are tensors of this backend
  if (fault_host_) cudaFreeHost(fault_host_);
  if (fault_) cudaFree(fault_);
  if (blas_) cublasDestroy(blas_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::string CudaBackend::description() const {
  std::ostringstream o;
  o << "cuda: device " << device_ << " " << props_.name << " (sm_" << props_.major << props_.minor << ", "
    << props_.multiProcessorCount << " SMs, " << static_cast<double>(props_.totalGlobalMem) / (1 << 30) << " GiB, "
    << shared_per_block_optin_ / 1024 << " KiB shared memory per block)";
  return o.str();
}

bool CudaBackend::supports(BackendOp op, ScalarType type) const {
  (void)op;
  return type == ScalarType::f32 || type == ScalarType::bf16;
}

bool CudaBackend::supports(const ModuleOp& op, ScalarType type) const {
  return module_kernel(op.name) != nullptr && (type == ScalarType::f32 || type == ScalarType::bf16);
}

void CudaBackend::synchronize() {
  bind_device(device_);
  HDLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

std::unique_ptr<EventTimer> CudaBackend::make_timer() { return std::make_unique<EventTimerCuda>(device_, stream_); }

// ---- memory and transfers ------------------------------------------------------------------

void* CudaBackend::raw_allocate(std::size_t bytes) {
  bind_device(device_);
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

void CudaBackend::raw_free(void* ptr, std::size_t) noexcept {
  cudaSetDevice(device_);
  cudaFree(ptr);
}

std::size_t CudaBackend::available_bytes() const {
  bind_device(device_);  // cudaMemGetInfo reports the current device
  std::size_t free = 0, total = 0;
  HDLAB_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

void CudaBackend::copy_from_host(const Tensor& dst, const void* src) {
  bind_device(device_);
  HDLAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src, dst.bytes(), cudaMemcpyHostToDevice, stream_));
  synchronize();  // the host buffer may go away when we return
}

void CudaBackend::copy_to_host(const Tensor& src, void* dst) {
  bind_device(device_);
  HDLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.bytes(), cudaMemcpyDeviceToHost, stream_));
  synchronize();
}

void CudaBackend::copy_impl(const Tensor& src, const Tensor& dst) {
  bind_device(device_);
  HDLAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice, stream_));
}

void CudaBackend::fill_zero_impl(const Tensor& t) {
  bind_device(device_);
  HDLAB_CUDA_CHECK(cudaMemsetAsync(t.data(), 0, t.bytes(), stream_));
}

void CudaBackend::convert_impl(const Tensor& src, const Tensor& dst) {
  bind_device(device_);
  launch_convert(elem_of(src), src.data(), elem_of(dst), dst.data(), src.numel(), stream_);
}

// ---- GEMM ------------------------------------------------------------------------------------

void CudaBackend::gemm_impl(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c, float alpha,
                            float beta) {
  bind_device(device_);
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

void CudaBackend::matrix_product(Elem elem, const void* a, const void* b, void* c, std::int64_t m, std::int64_t n,
                                 std::int64_t k) {
  bind_device(device_);
  // Row-major C [m, n] = A [m, k] B [n, k]^T is column-major C^T = B A^T (B^T is [k, n]).
  const int mi = as_int(m, "M"), ni = as_int(n, "N"), ki = as_int(k, "K");
  const cudaDataType_t type = elem == Elem::f32 ? CUDA_R_32F : elem == Elem::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.0f, beta = 0.0f;
  HDLAB_CUBLAS_CHECK(cublasGemmEx(blas_, CUBLAS_OP_T, CUBLAS_OP_N, ni, mi, ki, &alpha, b, type, ki, a, type, ki, &beta,
                                  c, type, ni, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// ---- attention -------------------------------------------------------------------------------

const DeviceTilePlan& CudaBackend::device_plan(const TilePlan& plan) {
  for (auto it = plans_.begin(); it != plans_.end(); ++it)
    if (it->id == plan.id()) {
      plans_.splice(plans_.begin(), plans_, it);
      return plans_.front().view;
    }
  bind_device(device_);
  DevicePlan d;
  d.id = plan.id();
  // Stored as i32 words: the byte arrays are padded up to whole words.
  auto upload_bytes = [&](const void* src, std::size_t bytes) {
    const Tensor t = allocate({static_cast<std::int64_t>((bytes + 3) / 4)}, ScalarType::i32);
    if (bytes) HDLAB_CUDA_CHECK(cudaMemcpyAsync(t.data(), src, bytes, cudaMemcpyHostToDevice, stream_));
    d.bytes += t.bytes();
    return t;
  };
  d.classes = upload_bytes(plan.classes().data(), plan.classes().size());
  d.partial_index = upload_bytes(plan.partial_index().data(), plan.partial_index().size() * sizeof(std::int32_t));
  d.bits = upload_bytes(plan.bits().data(), plan.bits().size() * sizeof(std::uint64_t));
  synchronize();  // the host vectors belong to the caller's plan
  d.view = DeviceTilePlan{d.classes.data_as<const std::uint8_t>(), d.partial_index.data_as<const std::int32_t>(),
                          d.bits.data_as<const std::uint64_t>(), plan.q_tiles(), plan.k_tiles()};
  plan_bytes_ += d.bytes;
  plans_.push_front(std::move(d));
  while (plans_.size() > 1 && (plans_.size() > kKeepPlans || plan_bytes_ > kKeepPlanBytes)) {
    plan_bytes_ -= plans_.back().bytes;
    plans_.pop_back();
  }
  return plans_.front().view;
}

bool CudaBackend::fused_attention_fits(std::int64_t qk_dim, std::int64_t v_dim) const {
  return cuda_attention_fused(qk_dim, v_dim, shared_per_block_optin_);
}

void CudaBackend::attention_softmax_impl(const Tensor& scores, const TilePlan& plan, std::int64_t row0,
                                         std::int64_t key0, float scale, const Tensor& sinks) {
  bind_device(device_);
  SoftmaxLaunch a;
  a.scores = scores.data_as<float>();
  a.heads = scores.dim(0);
  a.rows = scores.dim(1);
  a.keys = scores.dim(2);
  a.row0 = row0;
  a.key0 = key0;
  a.scale = scale;
  a.sinks = sinks.defined() ? sinks.data_as<const float>() : nullptr;
  a.plan = device_plan(plan);
  launch_attention_softmax(a, stream_);
}

void CudaBackend::attention_impl(const Tensor& q, const Tensor& k, const Tensor& v, const TilePlan& plan,
                                 const Tensor& out, float scale, const Tensor& sinks) {
  const std::int64_t hd = q.dim(2), dv = out.dim(2);
  if (std::max(hd, dv) > kCudaAttentionMaxHeadDim)
    throw BackendError("cuda attention: head dims " + std::to_string(hd) + " (q, k) and " + std::to_string(dv) +
                       " (v), above " + std::to_string(kCudaAttentionMaxHeadDim) +
                       " (the kernel holds a row's dims in registers)");
  if (cuda_attention_shared_bytes(hd, dv) > shared_per_block_optin_)
    throw BackendError("cuda attention: head dims " + std::to_string(hd) + " / " + std::to_string(dv) + " need " +
                       std::to_string(cuda_attention_shared_bytes(hd, dv)) + " bytes of shared memory per block, " +
                       props_.name + " allows " + std::to_string(shared_per_block_optin_) + " (head dim at most " +
                       std::to_string(cuda_attention_max_head_dim(shared_per_block_optin_)) + ")");
  bind_device(device_);
  AttentionLaunch a;
  a.elem = elem_of(q);
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.out = out.data();
  a.sinks = sinks.defined() ? sinks.data_as<const float>() : nullptr;
  a.query_rows = q.dim(0);
  a.key_rows = k.dim(0);
  a.heads = q.dim(1);
  a.kv_heads = k.dim(1);
  a.head_dim = hd;
  a.v_head_dim = dv;
  a.v_row_dim = v.dim(2);
  a.scale = scale;
  a.plan = device_plan(plan);
  launch_attention(a, stream_);
}

// ---- strided batches (multi-head latent attention) -------------------------------------------

void CudaBackend::gemm_batched_impl(const Tensor& a, StridedBatch av, bool trans_a, const Tensor& b, StridedBatch bv,
                                    bool trans_b, const Tensor& c, StridedBatch cv, std::int64_t batch, std::int64_t m,
                                    std::int64_t n, std::int64_t k) {
  bind_device(device_);
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands. A
  // leading dimension is at least the stored row's width (cuBLAS's rule, also for one row).
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int lda = as_int(std::max(av.row_stride, trans_a ? m : k), "lda");
  const int ldb = as_int(std::max(bv.row_stride, trans_b ? k : n), "ldb");
  const int ldc = as_int(std::max(cv.row_stride, n), "ldc");
  const int mi = as_int(m, "M"), ni = as_int(n, "N"), ki = as_int(k, "K"), count = as_int(batch, "batch");
  const std::size_t e = scalar_bytes(a.type());
  const auto* pa = static_cast<const char*>(a.data()) + static_cast<std::size_t>(av.offset) * e;
  const auto* pb = static_cast<const char*>(b.data()) + static_cast<std::size_t>(bv.offset) * e;
  auto* pc = static_cast<char*>(c.data()) + static_cast<std::size_t>(cv.offset) * e;
  const cudaDataType_t type = a.type() == ScalarType::f32 ? CUDA_R_32F : CUDA_R_16BF;
  const float alpha = 1.0f, beta = 0.0f;
  HDLAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(blas_, op_b, op_a, ni, mi, ki, &alpha, pb, type, ldb,
                                                bv.batch_stride, pa, type, lda, av.batch_stride, &beta, pc, type, ldc,
                                                cv.batch_stride, count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void CudaBackend::copy_strided_impl(const Tensor& src, StridedBatch sv, const Tensor& dst, StridedBatch dv,
                                    std::int64_t batch, std::int64_t rows, std::int64_t cols) {
  bind_device(device_);
  launch_copy_strided(elem_of(src), src.data(), {sv.offset, sv.row_stride, sv.batch_stride}, dst.data(),
                      {dv.offset, dv.row_stride, dv.batch_stride}, batch, rows, cols, stream_);
}

// ---- vector ops ------------------------------------------------------------------------------

void CudaBackend::rms_norm_impl(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
  bind_device(device_);
  launch_rms_norm(elem_of(x), x.data(), weight.data_as<const float>(), out.data(), x.matrix_rows(), x.matrix_cols(),
                  eps, stream_);
}

void CudaBackend::group_norm_impl(const Tensor& x, std::int64_t group_size, const Tensor& weight, const Tensor& bias,
                                  float eps, const Tensor& out) {
  bind_device(device_);
  launch_group_norm(elem_of(x), x.data(), group_size, weight.data_as<const float>(), bias.data_as<const float>(),
                    out.data(), x.matrix_rows(), x.matrix_cols(), eps, stream_);
}

void CudaBackend::rope_impl(const Tensor& x, const Tensor& positions, std::span<const double> inv_freq,
                            double cos_sin_factor) {
  const auto half = static_cast<std::int64_t>(inv_freq.size());
  if (half > kMaxRopeHalfDim)
    throw BackendError("cuda rope: " + std::to_string(2 * half) + " rotated dims, above " +
                       std::to_string(2 * kMaxRopeHalfDim));
  bind_device(device_);
  launch_rope(elem_of(x), x.data(), positions.data_as<const std::int32_t>(), x.dim(0), x.dim(1), x.dim(2), 2 * half,
              inv_freq.data(), static_cast<float>(cos_sin_factor), stream_);
}

void CudaBackend::relu2_impl(const Tensor& x, const Tensor& out) {
  bind_device(device_);
  launch_relu2(elem_of(x), x.data(), out.data(), x.numel(), stream_);
}

void CudaBackend::swiglu_impl(const Tensor& gate_up, const Tensor& out, SwigluClamp clamp) {
  bind_device(device_);
  launch_swiglu(elem_of(out), gate_up.data(), out.data(), out.matrix_rows(), out.matrix_cols(), clamp.limit,
                clamp.alpha, stream_);
}

// ---- linear attention (kernels in cuda_linear.cu) ---------------------------------------------

namespace {

const std::int32_t* writes_of(const Tensor& writes) {
  return writes.defined() ? writes.data_as<const std::int32_t>() : nullptr;
}

}  // namespace

void CudaBackend::causal_conv1d_impl(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& state,
                                     const Tensor& out, const Tensor& writes) {
  const std::int64_t K = weight.dim(1);
  if (K > kMaxConvTaps)
    throw BackendError("cuda causal_conv1d: " + std::to_string(K) + " taps, the kernel holds at most " +
                       std::to_string(kMaxConvTaps));
  bind_device(device_);
  launch_causal_conv1d(elem_of(x), x.data(), weight.data(), bias.defined() ? bias.data_as<const float>() : nullptr,
                       K > 1 ? state.data() : nullptr, out.data(), writes_of(writes), x.dim(0), x.dim(1), K, stream_);
}

void CudaBackend::gated_delta_rule_impl(const Tensor& qkv, const Tensor& ba, const Tensor& a_log, const Tensor& dt_bias,
                                        const Tensor& state, const Tensor& out, std::int64_t chunk,
                                        const Tensor& writes) {
  (void)chunk;  // the recurrent form either way (cuda_linear.cu)
  GdnLaunch a;
  a.elem = elem_of(qkv);
  a.qkv = qkv.data();
  a.ba = ba.data();
  a.a_log = a_log.data_as<const float>();
  a.dt_bias = dt_bias.data_as<const float>();
  a.state = state.data();
  a.out = out.data();
  a.writes = writes_of(writes);
  a.rows = qkv.dim(0);
  a.hv = state.dim(0);
  a.dk = state.dim(1);
  a.dv = state.dim(2);
  a.hk = (qkv.dim(1) - a.hv * a.dv) / (2 * a.dk);
  if (a.dk > kMaxGdnKeyDim || a.dv > kMaxGdnValueDim)
    throw BackendError("cuda gated_delta_rule: key dim " + std::to_string(a.dk) + " / value dim " +
                       std::to_string(a.dv) + " above the kernel's " + std::to_string(kMaxGdnKeyDim) + " / " +
                       std::to_string(kMaxGdnValueDim));
  bind_device(device_);
  launch_gated_delta_rule(a, stream_);
}

void CudaBackend::gated_rms_norm_impl(const Tensor& x, const Tensor& gate, const Tensor& weight, float eps,
                                      const Tensor& out, GatedNormForm form) {
  bind_device(device_);
  launch_gated_rms_norm(elem_of(x), x.data(), gate.data(), weight.data_as<const float>(), out.data(), x.matrix_rows(),
                        x.matrix_cols(), form.group, form.gate_before_norm, eps, stream_);
}

void CudaBackend::mamba2_ssd_impl(const Tensor& xbc, const Tensor& dt, const Tensor& a_log, const Tensor& dt_bias,
                                  const Tensor& d, const Tensor& state, const Tensor& y, std::int64_t chunk) {
  (void)chunk;  // the recurrent form either way (cuda_linear.cu)
  Mamba2Launch a;
  a.elem = elem_of(xbc);
  a.xbc = xbc.data();
  a.dt = dt.data();
  a.a_log = a_log.data_as<const float>();
  a.dt_bias = dt_bias.data_as<const float>();
  a.d = d.data_as<const float>();
  a.state = state.data();
  a.y = y.data();
  a.rows = xbc.dim(0);
  a.heads = state.dim(0);
  a.head_dim = state.dim(1);
  a.state_size = state.dim(2);
  a.groups = (xbc.dim(1) - a.heads * a.head_dim) / (2 * a.state_size);
  if (a.head_dim * a.state_size + a.head_dim + 2 * a.state_size > kMaxMamba2SharedFloats)
    throw BackendError("cuda mamba2_ssd: a head's state " + std::to_string(a.head_dim) + " x " +
                       std::to_string(a.state_size) + " does not fit the kernel's 48 KiB of shared memory");
  bind_device(device_);
  launch_mamba2_ssd(a, stream_);
}

void CudaBackend::sigmoid_gate_impl(const Tensor& x, const Tensor& gate, const Tensor& out) {
  bind_device(device_);
  launch_sigmoid_gate(elem_of(x), x.data(), gate.data(), out.data(), x.matrix_rows(), x.matrix_cols(),
                      gate.matrix_cols(), stream_);
}

void CudaBackend::add_impl(const Tensor& a, const Tensor& b, const Tensor& out) {
  bind_device(device_);
  launch_add(elem_of(out), a.data(), b.data(), out.data(), out.numel(), stream_);
}

// ---- routing, gathers, scatters: data the kernels check ----------------------------------------

void CudaBackend::arm_fault() { HDLAB_CUDA_CHECK(cudaMemsetAsync(fault_, 0xff, sizeof(unsigned), stream_)); }

unsigned CudaBackend::read_fault() {
  HDLAB_CUDA_CHECK(cudaMemcpyAsync(fault_host_, fault_, sizeof(unsigned), cudaMemcpyDeviceToHost, stream_));
  synchronize();
  return *fault_host_;
}

std::int32_t CudaBackend::id_at(const Tensor& ids, unsigned at) {
  std::int32_t id = 0;
  HDLAB_CUDA_CHECK(
      cudaMemcpyAsync(&id, ids.data_as<const std::int32_t>() + at, sizeof id, cudaMemcpyDeviceToHost, stream_));
  synchronize();
  return id;
}

void CudaBackend::topk_routing_impl(const Tensor& logits, std::int64_t k, model::RouterKind score, bool normalize,
                                    const Tensor& expert_ids, const Tensor& weights) {
  if (logits.matrix_cols() > kMaxRoutedExperts)
    throw BackendError("cuda topk_routing: " + std::to_string(logits.matrix_cols()) + " experts, the kernel takes " +
                       std::to_string(kMaxRoutedExperts));
  bind_device(device_);
  arm_fault();
  launch_topk_routing(elem_of(logits), logits.data(), logits.matrix_rows(), logits.matrix_cols(), k,
                      score == model::RouterKind::sigmoid, normalize, expert_ids.data_as<std::int32_t>(),
                      weights.data_as<float>(), fault_, stream_);
  if (const unsigned token = read_fault(); token != kNoFault) throw_nan_router_scores(token);
}

void CudaBackend::gather_rows_impl(const Tensor& table, const Tensor& ids, const Tensor& out, RowMap map) {
  bind_device(device_);
  arm_fault();
  launch_gather_rows(elem_of(table), table.data(), table.matrix_rows(), table.matrix_cols(),
                     ids.data_as<const std::int32_t>(), ids.numel(), out.data(), map.first, map.stride, fault_,
                     stream_);
  if (const unsigned at = read_fault(); at != kNoFault)
    throw_row_id_out_of_range("gather_rows", id_at(ids, at), table.matrix_rows());
}

void CudaBackend::scatter_add_rows_impl(const Tensor& src, const Tensor& ids, const Tensor& weights,
                                        const Tensor& out) {
  bind_device(device_);
  arm_fault();
  launch_scatter_add_rows(elem_of(src), src.data(), ids.data_as<const std::int32_t>(), weights.data_as<const float>(),
                          src.matrix_rows(), src.matrix_cols(), out.data(), out.matrix_rows(), fault_, stream_);
  if (const unsigned at = read_fault(); at != kNoFault)
    throw_row_id_out_of_range("scatter_add_rows", id_at(ids, at), out.matrix_rows());
}

// ---- VWN GHC ---------------------------------------------------------------------------------

void CudaBackend::ghc_dynamic_impl(const Tensor& hn, const Tensor& w_dyn, const Tensor& scale, const Tensor& static_a,
                                   const Tensor& static_b, const Tensor& alpha, const Tensor& beta) {
  bind_device(device_);
  launch_ghc_dynamic(elem_of(hn), hn.data(), w_dyn.data(), scale.data_as<const float>(),
                     static_a.data_as<const float>(), static_b.data_as<const float>(), alpha.data_as<float>(),
                     beta.data_as<float>(), hn.dim(0), hn.dim(1), hn.dim(2), static_b.dim(0), stream_);
}

void CudaBackend::ghc_width_impl(const Tensor& h, const Tensor& alpha, const Tensor& x, const Tensor& carry) {
  bind_device(device_);
  const bool per_token = alpha.dim(0) == h.dim(0) && h.dim(0) != 1;
  launch_ghc_width(elem_of(h), h.data(), alpha.data_as<const float>(), per_token, x.data(), carry.data(), h.dim(0),
                   h.dim(1), h.dim(2), alpha.dim(2) - h.dim(1), stream_);
}

void CudaBackend::ghc_depth_impl(const Tensor& z, const Tensor& beta, const Tensor& carry, const Tensor& out) {
  bind_device(device_);
  const bool per_token = beta.dim(0) == z.dim(0) && z.dim(0) != 1;
  launch_ghc_depth(elem_of(z), z.data(), beta.data_as<const float>(), per_token, carry.data(), out.data(), z.dim(0),
                   z.dim(1), z.dim(2), carry.dim(1), stream_);
}

void CudaBackend::run_impl(const ModuleOp& op, const ModuleOpCall& call) {
  bind_device(device_);
  module_kernel(op.name)(call, stream_);  // supports() found it
}

}  // namespace hdlab::executor::cuda
