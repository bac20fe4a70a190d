#pragma once
// The CPU backend: f32 compute, OpenBLAS for GEMM, our own attention kernel and vector
// ops on a thread pool. Ops are synchronous: each returns when its work is done.
#include <memory>
#include <string>
#include <vector>

#include "attention_cpu.hpp"
#include "hdlab/executor/backend.hpp"
#include "hdlab/executor/backends.hpp"
#include "thread_pool.hpp"

namespace hdlab::executor::cpu {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const CpuOptions& options);

  std::string name() const override { return "cpu"; }
  std::string description() const override;
  bool supports(BackendOp op, ScalarType type) const override;
  bool supports(const ModuleOp& op, ScalarType type) const override;
  bool fused_attention_fits(std::int64_t qk_dim, std::int64_t v_dim) const override;  // cpu_attention.cpp
  void synchronize() override {}
  std::unique_ptr<EventTimer> make_timer() override;

 protected:
  void* raw_allocate(std::size_t bytes) override;
  void raw_free(void* ptr, std::size_t bytes) noexcept override;
  std::size_t available_bytes() const override;
  std::size_t total_bytes() const override;
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
  void run_impl(const ModuleOp& op, const ModuleOpCall& call) override;  // the op's own CPU kernel
  // cpu_linear.cpp
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
                              float scale, const Tensor& sinks) override;  // cpu_attention.cpp

 private:
  // Splits `n` items of `cost_per_item` flops-ish into chunks worth spreading over threads.
  void parallel_for(std::int64_t n, double cost_per_item, const std::function<void(std::int64_t, std::int64_t)>& body);

  int threads_;
  std::int64_t fused_max_dims_;  // CpuOptions::fused_attention_max_dims
  ThreadPool pool_;
  std::string attention_isa_;  // set by resolve_isa while attend_tile_ is initialised
  AttendTileFn attend_tile_;
};

// Run attention over plain pointers (the CPU backend's attention_impl).
void run_attention(ThreadPool& pool, AttendTileFn attend_tile, AttentionProblem problem, const TilePlan& plan);

// Host memory facts from /proc/meminfo (MemAvailable, MemTotal), sysconf as a fallback.
std::size_t host_available_bytes();
std::size_t host_total_bytes();

}  // namespace hdlab::executor::cpu
