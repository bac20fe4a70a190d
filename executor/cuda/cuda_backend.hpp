#pragma once
// The CUDA backend: device memory, transfers, cuBLAS GEMM (f32 and bf16 with f32
// accumulation), our kernels (cuda_kernels.hpp) on one stream, CUDA events for timing.
// Host code only; kernels live in the .cu files. Part of the CUDA module (libhdlab_cuda.so).
//
// CUDA's current device belongs to the calling host thread: every entry point makes the
// backend's device current first (bind_device), so a backend made on one thread works on
// another (one thread at a time, as every backend).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "cuda_kernels.hpp"
#include "hdlab/executor/backends.hpp"

namespace hdlab::executor::cuda {

// Makes `device` current in the calling thread (a no-op where it already is).
void bind_device(int device);

// Devices this build can run on: compute capability 8.0 or newer (built for sm_80, sm_90).
bool usable(const cudaDeviceProp& p);

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device);
  ~CudaBackend() override;

  std::string name() const override { return "cuda"; }
  std::string description() const override;
  bool supports(BackendOp op, ScalarType type) const override;
  bool supports(const ModuleOp& op, ScalarType type) const override;
  bool fused_attention_fits(std::int64_t qk_dim, std::int64_t v_dim) const override;
  void synchronize() override;
  std::unique_ptr<EventTimer> make_timer() override;
  void stage_plan(const TilePlan& plan) override { device_plan(plan); }

  // C[m, n] = A[m, k] B[n, k]^T over raw device operands in one storage type (the
  // matrix-rate products of cuda_module.cpp; gemm_impl for tensors).
  void matrix_product(Elem elem, const void* a, const void* b, void* c, std::int64_t m, std::int64_t n,
                      std::int64_t k);
  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }

 protected:
  void* raw_allocate(std::size_t bytes) override;
  void raw_free(void* ptr, std::size_t bytes) noexcept override;
  std::size_t available_bytes() const override;
  std::size_t total_bytes() const override { return props_.totalGlobalMem; }
  void copy_from_host(const Tensor& dst, const void* src) override;
  void copy_to_host(const Tensor& src, void* dst) override;
  void copy_impl(const Tensor& src, const Tensor& dst) override;
  void fill_zero_impl(const Tensor& t) override;
  void convert_impl(const Tensor& src, const Tensor& dst) override;

  void gemm_impl(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c, float alpha,
                 float beta) override;
  void attention_impl(const Tensor& q, const Tensor& k, const Tensor& v, const TilePlan& plan, const Tensor& out,
                      float scale, const Tensor& sinks) override;
  void rms_norm_impl(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) override;
  void group_norm_impl(const Tensor& x, std::int64_t group_size, const Tensor& weight, const Tensor& bias, float eps,
                       const Tensor& out) override;
  void rope_impl(const Tensor& x, const Tensor& positions, std::span<const double> inv_freq, double cos_sin_factor) override;
  void relu2_impl(const Tensor& x, const Tensor& out) override;
  void swiglu_impl(const Tensor& gate_up, const Tensor& out, SwigluClamp clamp) override;
  void add_impl(const Tensor& a, const Tensor& b, const Tensor& out) override;
  void topk_routing_impl(const Tensor& logits, std::int64_t k, model::RouterKind score, bool normalize,
                         const Tensor& expert_ids, const Tensor& weights) override;
  void gather_rows_impl(const Tensor& table, const Tensor& ids, const Tensor& out, RowMap map) override;
  void scatter_add_rows_impl(const Tensor& src, const Tensor& ids, const Tensor& weights, const Tensor& out) override;
  void ghc_dynamic_impl(const Tensor& hn, const Tensor& w_dyn, const Tensor& scale, const Tensor& static_a,
                        const Tensor& static_b, const Tensor& alpha, const Tensor& beta) override;
  void ghc_width_impl(const Tensor& h, const Tensor& alpha, const Tensor& x, const Tensor& carry) override;
  void ghc_depth_impl(const Tensor& z, const Tensor& beta, const Tensor& carry, const Tensor& out) override;
  void run_impl(const ModuleOp& op, const ModuleOpCall& call) override;  // the kernel registered for it
  void causal_conv1d_impl(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& state,
                          const Tensor& out, const Tensor& writes) override;
  void gated_delta_rule_impl(const Tensor& qkv, const Tensor& ba, const Tensor& a_log, const Tensor& dt_bias,
                             const Tensor& state, const Tensor& out, std::int64_t chunk, const Tensor& writes) override;
  void gated_rms_norm_impl(const Tensor& x, const Tensor& gate, const Tensor& weight, float eps, const Tensor& out,
                           GatedNormForm form) override;
  void mamba2_ssd_impl(const Tensor& xbc, const Tensor& dt, const Tensor& a_log, const Tensor& dt_bias, const Tensor& d,
                       const Tensor& state, const Tensor& y, std::int64_t chunk) override;
  void sigmoid_gate_impl(const Tensor& x, const Tensor& gate, const Tensor& out) override;
  void gemm_batched_impl(const Tensor& a, StridedBatch av, bool trans_a, const Tensor& b, StridedBatch bv, bool trans_b,
                         const Tensor& c, StridedBatch cv, std::int64_t batch, std::int64_t m, std::int64_t n,
                         std::int64_t k) override;
  void copy_strided_impl(const Tensor& src, StridedBatch sv, const Tensor& dst, StridedBatch dv, std::int64_t batch,
                         std::int64_t rows, std::int64_t cols) override;
  void attention_softmax_impl(const Tensor& scores, const TilePlan& plan, std::int64_t row0, std::int64_t key0,
                              float scale, const Tensor& sinks) override;

 private:
  // A plan's arrays on the device, keyed by TilePlan::id(), most recently used first.
  struct DevicePlan {
    std::uint64_t id = 0;
    std::size_t bytes = 0;
    Tensor classes, partial_index, bits;
    DeviceTilePlan view;
  };
  const DeviceTilePlan& device_plan(const TilePlan& plan);

  // Bad data found by a kernel (ids out of range, NaN router scores): the fault word is
  // set to kNoFault before the kernel and read right after it, which waits for the kernel.
  void arm_fault();
  unsigned read_fault();
  std::int32_t id_at(const Tensor& ids, unsigned at);  // one id, read back for the message

  int device_;
  cudaDeviceProp props_{};
  std::size_t shared_per_block_optin_ = 0;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  unsigned* fault_ = nullptr;       // device word the kernels report into
  unsigned* fault_host_ = nullptr;  // pinned host word it is read back into
  std::list<DevicePlan> plans_;
  std::size_t plan_bytes_ = 0;  // device bytes of plans_
};

}  // namespace hdlab::executor::cuda
