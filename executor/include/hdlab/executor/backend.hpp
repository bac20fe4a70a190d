#pragma once
// The one interface every executor backend fills (CPU: OpenBLAS + own kernels; CUDA:
// cuBLAS + own kernels). The public op functions check shapes and types once, here,
// then call the backend's *_impl; a backend says which (op, element type) pairs it
// supports and refuses the others with BackendError.
//
// Shapes use T = tokens (rows), D = hidden width, H/G = query/kv heads, hd = head dim,
// E = experts, F = FFN width, and for VWN (methods.md section 3) n slots of s = D/m.
// Ops a design module brings with it (module_op.hpp) go through run(), not a method here.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "hdlab/executor/attention_mask.hpp"
#include "hdlab/executor/module_op.hpp"
#include "hdlab/executor/tensor.hpp"
#include "hdlab/model/backbone.hpp"

namespace hdlab::executor {

enum class BackendOp {
  gemm,
  attention,
  rms_norm,
  group_norm,
  rope,
  swiglu,
  add,
  topk_routing,
  gather_rows,
  scatter_add_rows,
  ghc_dynamic,
  ghc_width,
  ghc_depth,
  module,  // an op a design module brings (module_op.hpp), run through Backend::run
  causal_conv1d,
  gated_delta_rule,
  gated_rms_norm,
  sigmoid_gate,
  mamba2_ssd,
  relu2,
  convert,
  gemm_batched,
  copy_strided,
  attention_softmax,
  count_
};
inline constexpr int backend_op_count = static_cast<int>(BackendOp::count_);
const char* to_string(BackendOp op);

class BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run that would not fit: what it needs and what the backend can still give.
class OutOfMemoryError : public BackendError {
 public:
  OutOfMemoryError(std::string what, std::size_t needed, std::size_t available);
  std::size_t needed_bytes() const { return needed_; }
  std::size_t available_bytes() const { return available_; }

 private:
  std::size_t needed_, available_;
};

struct MemoryStats {
  std::size_t allocated_bytes = 0;  // live allocations of this backend
  std::size_t peak_bytes = 0;       // high-water mark since construction or reset_peak()
  std::size_t available_bytes = 0;  // what the host (MemAvailable) or device (free) can still give
  std::size_t total_bytes = 0;      // physical memory of the host or the device
};

// Times work issued to a backend between start() and stop() (CUDA: events on the
// backend's stream; CPU: a steady clock, its ops being synchronous).
class EventTimer {
 public:
  virtual ~EventTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double elapsed_ms() = 0;  // waits for the stop event
};

// gpt-oss's clamped SwiGLU (Backend::swiglu): limit 0 is the plain SwiGLU.
struct SwigluClamp {
  float limit = 0;  // > 0: gate clamped above at limit, up to [-limit, limit]
  float alpha = 0;  // the sigmoid's slope on the clamped gate (gpt-oss: 1.702)
};

// The gated RMSNorm's two forms (Backend::gated_rms_norm): Gated DeltaNet's, normed then
// gated, one group per row; Mamba-2's (mamba_ssm's norm_before_gate = false), gated first,
// then normed over groups of `group` channels of a row (n_groups of I / n_groups).
struct GatedNormForm {
  std::int64_t group = 0;         // channels per normalised group; 0: the whole row
  bool gate_before_norm = false;  // true: norm(x * silu(gate)) * w; false: norm(x) * w * silu(gate)
};

// A batch of matrices inside one tensor, in elements: matrix b's element (r, c) sits at
// offset + b * batch_stride + r * row_stride + c. batch_stride 0: one matrix serves the
// whole batch (an operand broadcast to every product, or a source copied to every block).
// Multi-head latent attention's per-head products and its key assembly read and write
// heads inside rows this way (runner_mla.cpp).
struct StridedBatch {
  std::int64_t offset = 0;
  std::int64_t row_stride = 0;
  std::int64_t batch_stride = 0;
};

// Where gathered row i lands in the output: row first + i * stride.
struct RowMap {
  std::int64_t first = 0;
  std::int64_t stride = 1;
};

class Backend {
 public:
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  // Every Tensor this backend allocated must be gone before the backend is.
  virtual ~Backend() = default;

  virtual std::string name() const = 0;         // "cpu", "cuda"
  virtual std::string description() const = 0;  // device, threads, library versions
  virtual bool supports(BackendOp op, ScalarType type) const = 0;

  // ---- memory --------------------------------------------------------------------
  Tensor allocate(Shape shape, ScalarType type);
  MemoryStats memory() const;
  void reset_peak();
  // Throws OutOfMemoryError (needed, available) unless `bytes` more would fit now.
  void require_fits(std::size_t bytes) const;

  // Host <-> backend. Floats are converted to the tensor's type (f32 or bf16).
  void upload(const Tensor& dst, std::span<const float> host);
  void upload(const Tensor& dst, std::span<const std::int32_t> host);
  std::vector<float> download_f32(const Tensor& src);
  std::vector<std::int32_t> download_i32(const Tensor& src);
  void copy(const Tensor& src, const Tensor& dst);  // same type and element count
  void fill_zero(const Tensor& t);
  void convert(const Tensor& src, const Tensor& dst);  // f32 <-> bf16, same element count

  // ---- ops (outputs are views written through; `const` is the handle's) ------------
  // C = alpha op(A) op(B) + beta C, tensors seen as matrices (Tensor::matrix_rows/cols).
  // op(A) [M, K], op(B) [K, N], C [M, N]. Weights stored [out, in] use trans_b = true.
  void gemm(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c, float alpha = 1.0f,
            float beta = 0.0f);

  // out = softmax(scale q k^T + mask) v per query head; q [Lq, H, dk], k [Lk, G, dk],
  // v [Lk, G, dw], out [Lq, H, dv] with dv <= dw: each value is the first dv of its v row
  // (dw = dv = dk for ordinary attention; multi-head latent attention scores over
  // qk_nope + qk_rope dims and sums v_head_dim values, and its absorbed decode reads the
  // cache entries [latent | rope key] as keys and their latent as values, v = k).
  // Query head h reads kv head h / (H/G). Rows are in the plan's
  // order; a row with no visible key gets zeros. `sinks` (f32 [H], or empty: none): a
  // learned logit per query head that joins every row's softmax denominator with no value
  // (gpt-oss): out = sum_j exp(s_j) v_j / (sum_j exp(s_j) + exp(sink_h)).
  // A backend whose fused kernel cannot hold the head dims (fused_attention_fits) gets the
  // same op composed of others (attention_in_parts: gemm_batched, attention_softmax).
  void attention(const Tensor& q, const Tensor& k, const Tensor& v, const TilePlan& plan, const Tensor& out,
                 float scale, const Tensor& sinks = Tensor{});
  // Whether the backend's fused attention kernel takes q/k rows of `qk_dim` and values of
  // `v_dim` (CUDA: registers and shared memory per block, cuda_limits.hpp).
  virtual bool fused_attention_fits(std::int64_t qk_dim, std::int64_t v_dim) const = 0;
  // The masked softmax of the unfused attention, in place on f32 scores [H, R, K] = q k^T:
  // row i of every head is plan row row0 + i, column j plan key key0 + j; a visible pair
  // gets p = exp(scale s - m) / (sum over the row's visible pairs of exp(scale s - m) +
  // exp(sinks[h] - m)) with m the row's largest visible scale s (no sink: its term is 0),
  // a masked pair 0, a row with no visible pair zeros. The rows lie in the plan's query
  // rows and the columns in its keys. sinks: f32 [H] or empty.
  void attention_softmax(const Tensor& scores, const TilePlan& plan, std::int64_t row0, std::int64_t key0,
                         float scale, const Tensor& sinks = Tensor{});
  // Makes the backend's own copy of a plan ahead of the attention calls that use it, so
  // that timed ops do not pay for it (the runner stages every plan of a call in its
  // untimed setup). CUDA keeps device copies of the last 64 plans (attention stages a
  // plan it lacks, then and there); the CPU reads the plan where it is.
  virtual void stage_plan(const TilePlan& plan) { (void)plan; }

  // out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight; x, out [R, dim], weight [dim] f32.
  // QK-norm: R = T*heads, dim = hd. VWN per-slot norm: R = T*n, dim = s. out may be x.
  void rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out);

  // VWN output GroupNorm: each row's groups of `group_size` elements normalised to zero
  // mean and unit variance, then out = norm * weight + bias. x, out [R, groups*group_size];
  // weight, bias [groups*group_size] f32. out may be x.
  void group_norm(const Tensor& x, std::int64_t group_size, const Tensor& weight, const Tensor& bias, float eps,
                  const Tensor& out);

  // In place, rotate-half convention (HF Llama/Qwen) over the first r = 2 inv_freq.size()
  // dimensions of each head: for j < r/2 the pair (x[j], x[j + r/2]) turns by angle
  // positions[t] * inv_freq[j] (radians per position, model::rotary_frequencies: plain
  // theta^(-2j/r) or a scaled RoPE's), and both are multiplied by cos_sin_factor (YaRN's and
  // LongRoPE's attention factor; 1 otherwise); dimensions r..hd-1 pass unchanged (partial
  // RoPE as transformers' Qwen3-Next and GLM-4.5 apply it).
  // x [T, heads, hd], positions [T] i32 (expanded index or token index: caller's choice);
  // 1 <= r/2, r <= hd; frequencies and factor finite and > 0.
  void rope(const Tensor& x, const Tensor& positions, std::span<const double> inv_freq, double cos_sin_factor = 1.0);

  // Nemotron-H's squared ReLU: out = max(x, 0)^2; x, out [T, F] (the non-gated MLP's
  // activation between up_proj and down_proj). out may be x.
  void relu2(const Tensor& x, const Tensor& out);

  // out = silu(gate) * up with gate_up [T, 2F] = [gate | up], out [T, F]. With
  // clamp.limit L > 0 (gpt-oss): g = min(gate, L), u = max(-L, min(up, L)),
  // out = (u + 1) * g * sigmoid(clamp.alpha * g).
  void swiglu(const Tensor& gate_up, const Tensor& out, SwigluClamp clamp = {});

  // out = a + b, same shapes; out may be a or b.
  void add(const Tensor& a, const Tensor& b, const Tensor& out);

  // Router: logits [T, E] -> the k best experts per token, best first (ties: lower id),
  // expert_ids [T, k] i32, weights [T, k] f32. softmax: weights = softmax over all E;
  // sigmoid: weights = sigmoid(logit). normalize: weights of the k divided by their sum.
  // NaN scores are never picked; a token with fewer than k others throws BackendError.
  void topk_routing(const Tensor& logits, std::int64_t k, model::RouterKind score, bool normalize,
                    const Tensor& expert_ids, const Tensor& weights);

  // out[map.first + i*map.stride] = table[ids[i]]; table [V, W], ids [n] i32, out [*, W].
  // Embedding lookups (HD stream k interleaved: first = k, stride = n) and MoE dispatch.
  // ids outside [0, V) throw BackendError (CPU and CUDA alike, executor/src/op_errors.hpp).
  void gather_rows(const Tensor& table, const Tensor& ids, const Tensor& out, RowMap map = {});

  // out[ids[i]] += weights[i] * src[i]; src [n, W], ids [n] i32 distinct, weights [n] f32,
  // out [T, W]. MoE combine, one expert at a time. ids outside [0, T) throw BackendError.
  void scatter_add_rows(const Tensor& src, const Tensor& ids, const Tensor& weights, const Tensor& out);

  // VWN dynamic GHC coefficients from the normed wide state hn [T, n, s]:
  //   alpha[t] = scale_a * tanh(hn[t] W_a / tau) + A         [n, m+n]
  //   beta[t]  = (scale_b * tanh(hn[t] W_b / tau))^T + B     [m, n],   tau = sqrt(s).
  // w_dyn [s, 2m+n] = [W_a | W_b], scale [2m+n] f32 = [scale_a | scale_b] (per column),
  // static_a [n, m+n] f32, static_b [m, n] f32; alpha [T, n, m+n], beta [T, m, n] f32.
  void ghc_dynamic(const Tensor& hn, const Tensor& w_dyn, const Tensor& scale, const Tensor& static_a,
                   const Tensor& static_b, const Tensor& alpha, const Tensor& beta);

  // Width connection: [x | carry][t] = alpha[t]^T h[t] over the n slots, i.e.
  // x[t, j] = sum_i alpha[t,i,j] h[t,i] (j < m, the D-wide sublayer input) and
  // carry[t, j] = sum_i alpha[t,i,m+j] h[t,i] (j < n). h [T, n, s], alpha [T or 1, n, m+n]
  // f32 (1: static, shared by all tokens), x [T, m, s], carry [T, n, s].
  void ghc_width(const Tensor& h, const Tensor& alpha, const Tensor& x, const Tensor& carry);

  // Depth connection: out[t, j] = sum_i beta[t,i,j] z[t,i] + carry[t,j]; z [T, m, s]
  // sublayer output as m slots, beta [T or 1, m, n] f32, carry, out [T, n, s]; out may be carry.
  void ghc_depth(const Tensor& z, const Tensor& beta, const Tensor& carry, const Tensor& out);

  // A design module's op (module_op.hpp): the operands must be this backend's, then the
  // op checks the call and the backend runs its kernel for it (CPU: the op's own; CUDA:
  // the one registered under the op's name). Refused with BackendError where the backend
  // has no kernel for it or not in the typed operand's type (supports).
  void run(const ModuleOp& op, const ModuleOpCall& call);
  virtual bool supports(const ModuleOp& op, ScalarType type) const = 0;

  // ---- linear attention (Gated DeltaNet; executor/README.md "Linear attention") ------
  // Rows are one sequence's positions in order. `writes` (i32 [R] of 0/1, or empty: all
  // 1): a row with 0 reads the state (and the conv history) as the rows before it left it
  // and changes neither (PHD's hidden copies under linear_state "origins").

  // Causal depthwise conv then SiLU: out[r, c] = silu(bias[c] + sum_j weight[c, j] *
  // h_r[j] (c)), h_r = the K-1 latest written inputs before row r (the history `state`
  // [K-1, C], oldest first, then the written rows of x before r) followed by x[r], j < K.
  // Afterwards `state` holds the K-1 latest written inputs. x, out [R, C], weight [C, K]
  // (x's type), bias f32 [C] or empty, state [K-1, C] (x's type; nothing when K = 1).
  void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& state,
                     const Tensor& out, const Tensor& writes = Tensor{});

  // The gated delta rule (gated_delta_rule.hpp) on the conv's output qkv [R, 2 hk dk + hv dv]
  // (q | k | v, heads contiguous) and the gate inputs ba [R, 2 hv] (b | a): per row and
  // value head h, g = -exp(a_log[h]) softplus(a + dt_bias[h]), beta = sigmoid(b) (0 and 0
  // where the row does not write), then the recurrence on state [hv, dk, dv] (read as S_0,
  // written as S_R), out [R, hv, dv]. a_log, dt_bias f32 [hv]; hk = (C - hv dv) / (2 dk).
  // `chunk` > 0: the chunked form, `chunk` rows at a time; 0: token by token (decode).
  // The same numbers either way, up to rounding.
  void gated_delta_rule(const Tensor& qkv, const Tensor& ba, const Tensor& a_log, const Tensor& dt_bias,
                        const Tensor& state, const Tensor& out, std::int64_t chunk, const Tensor& writes = Tensor{});

  // Per row r and group g of its channels (form.group of them; 0: the whole row):
  //   norm before gate (Gated DeltaNet): out = x / sqrt(mean_g(x^2) + eps) * weight * silu(gate)
  //   gate before norm (Mamba-2):        u = x * silu(gate); out = u / sqrt(mean_g(u^2) + eps) * weight
  // x, gate, out [R, W] (Gated DeltaNet: R = rows * value heads, W = d_v; Mamba-2: W = H P
  // in n_groups groups), weight f32 [W]. out may be x.
  void gated_rms_norm(const Tensor& x, const Tensor& gate, const Tensor& weight, float eps, const Tensor& out,
                      GatedNormForm form = {});

  // The Mamba-2 SSD scan (mamba2_ssd.hpp) on the conv's output xbc [R, H P + 2 G N] (per
  // row x of H heads of P, then B and C of G groups of N) and the raw step dt [R, H]: per
  // row and head h (group h / (H / G)), step = softplus(dt + dt_bias[h]), a = exp(-exp(
  // a_log[h]) step), S <- a S + step x B^T, y = S C + d[h] x. state [H, P, N] (read as S_0,
  // written as S_R) and y [R, H, P] of xbc's type; a_log, dt_bias, d f32 [H].
  // `chunk` > 0: the chunked form, `chunk` rows at a time; 0: row by row (decode). The
  // same numbers either way, up to rounding.
  void mamba2_ssd(const Tensor& xbc, const Tensor& dt, const Tensor& a_log, const Tensor& dt_bias, const Tensor& d,
                  const Tensor& state, const Tensor& y, std::int64_t chunk);

  // out = x * sigmoid(gate); x, out [R, W], gate [R, W] (gated attention output) or [R, 1]
  // (a per-row gate: the shared experts' output). out may be x.
  void sigmoid_gate(const Tensor& x, const Tensor& gate, const Tensor& out);

  // ---- strided batches (backend_strided.cpp; multi-head latent attention) -----------
  // C_b = op(A_b) op(B_b) for b < batch, each matrix where its StridedBatch puts it:
  // op(A_b) [m, k] (A_b stored [m, k], or [k, m] when trans_a), op(B_b) [k, n] (B_b stored
  // [k, n], or [n, k] when trans_b: weights [out, in]), C_b [m, n]. Elements of c outside
  // the C_b are left as they are. The C_b may not share an element; c may not overlap a or b.
  void gemm_batched(const Tensor& a, StridedBatch av, bool trans_a, const Tensor& b, StridedBatch bv, bool trans_b,
                    const Tensor& c, StridedBatch cv, std::int64_t batch, std::int64_t m, std::int64_t n,
                    std::int64_t k);
  // dst_b[r, c] = src_b[r, c] for b < batch, r < rows, c < cols (same type; the dst blocks
  // may not share an element; src and dst apart). Elements of dst outside them stay.
  void copy_strided(const Tensor& src, StridedBatch sv, const Tensor& dst, StridedBatch dv, std::int64_t batch,
                    std::int64_t rows, std::int64_t cols);

  // ---- timing --------------------------------------------------------------------
  virtual void synchronize() = 0;
  virtual std::unique_ptr<EventTimer> make_timer() = 0;

 protected:
  // Raw memory of this backend; accounting is done by the base class.
  virtual void* raw_allocate(std::size_t bytes) = 0;
  virtual void raw_free(void* ptr, std::size_t bytes) noexcept = 0;
  virtual std::size_t available_bytes() const = 0;
  virtual std::size_t total_bytes() const = 0;
  virtual void copy_from_host(const Tensor& dst, const void* src) = 0;  // dst.bytes() bytes
  virtual void copy_to_host(const Tensor& src, void* dst) = 0;          // src.bytes() bytes
  virtual void copy_impl(const Tensor& src, const Tensor& dst) = 0;
  virtual void fill_zero_impl(const Tensor& t) = 0;
  virtual void convert_impl(const Tensor& src, const Tensor& dst) = 0;

  virtual void gemm_impl(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c, float alpha,
                         float beta) = 0;
  virtual void attention_impl(const Tensor& q, const Tensor& k, const Tensor& v, const TilePlan& plan,
                              const Tensor& out, float scale, const Tensor& sinks) = 0;
  virtual void rms_norm_impl(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) = 0;
  virtual void group_norm_impl(const Tensor& x, std::int64_t group_size, const Tensor& weight, const Tensor& bias,
                               float eps, const Tensor& out) = 0;
  virtual void rope_impl(const Tensor& x, const Tensor& positions, std::span<const double> inv_freq, double cos_sin_factor) = 0;
  virtual void relu2_impl(const Tensor& x, const Tensor& out) = 0;
  virtual void swiglu_impl(const Tensor& gate_up, const Tensor& out, SwigluClamp clamp) = 0;
  virtual void add_impl(const Tensor& a, const Tensor& b, const Tensor& out) = 0;
  virtual void topk_routing_impl(const Tensor& logits, std::int64_t k, model::RouterKind score, bool normalize,
                                 const Tensor& expert_ids, const Tensor& weights) = 0;
  virtual void gather_rows_impl(const Tensor& table, const Tensor& ids, const Tensor& out, RowMap map) = 0;
  virtual void scatter_add_rows_impl(const Tensor& src, const Tensor& ids, const Tensor& weights,
                                     const Tensor& out) = 0;
  virtual void ghc_dynamic_impl(const Tensor& hn, const Tensor& w_dyn, const Tensor& scale, const Tensor& static_a,
                                const Tensor& static_b, const Tensor& alpha, const Tensor& beta) = 0;
  virtual void ghc_width_impl(const Tensor& h, const Tensor& alpha, const Tensor& x, const Tensor& carry) = 0;
  virtual void ghc_depth_impl(const Tensor& z, const Tensor& beta, const Tensor& carry, const Tensor& out) = 0;
  virtual void run_impl(const ModuleOp& op, const ModuleOpCall& call) = 0;
  virtual void causal_conv1d_impl(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& state,
                                  const Tensor& out, const Tensor& writes) = 0;
  virtual void gated_delta_rule_impl(const Tensor& qkv, const Tensor& ba, const Tensor& a_log, const Tensor& dt_bias,
                                     const Tensor& state, const Tensor& out, std::int64_t chunk,
                                     const Tensor& writes) = 0;
  virtual void gated_rms_norm_impl(const Tensor& x, const Tensor& gate, const Tensor& weight, float eps,
                                   const Tensor& out, GatedNormForm form) = 0;
  virtual void mamba2_ssd_impl(const Tensor& xbc, const Tensor& dt, const Tensor& a_log, const Tensor& dt_bias,
                               const Tensor& d, const Tensor& state, const Tensor& y, std::int64_t chunk) = 0;
  virtual void sigmoid_gate_impl(const Tensor& x, const Tensor& gate, const Tensor& out) = 0;
  virtual void gemm_batched_impl(const Tensor& a, StridedBatch av, bool trans_a, const Tensor& b, StridedBatch bv,
                                 bool trans_b, const Tensor& c, StridedBatch cv, std::int64_t batch, std::int64_t m,
                                 std::int64_t n, std::int64_t k) = 0;
  virtual void copy_strided_impl(const Tensor& src, StridedBatch sv, const Tensor& dst, StridedBatch dv,
                                 std::int64_t batch, std::int64_t rows, std::int64_t cols) = 0;
  virtual void attention_softmax_impl(const Tensor& scores, const TilePlan& plan, std::int64_t row0,
                                      std::int64_t key0, float scale, const Tensor& sinks) = 0;

 private:
  friend struct Storage;
  void release(void* ptr, std::size_t bytes) noexcept;
  void check_owned(const Tensor& t, const char* what) const;
  void check_supported(BackendOp op, ScalarType type) const;
  // attention() past fused_attention_fits (backend_attention_parts.cpp).
  void attention_in_parts(const Tensor& q, const Tensor& k, const Tensor& v, const TilePlan& plan, const Tensor& out,
                          float scale, const Tensor& sinks);

  // Tensors may die on any thread (the CPU backend's workers never allocate).
  std::atomic<std::size_t> allocated_{0};
  std::atomic<std::size_t> peak_{0};
};

// Floats in [lo, hi), a fixed function of the seed (tests and benchmarks).
std::vector<float> random_floats(std::size_t count, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f);

}  // namespace hdlab::executor
