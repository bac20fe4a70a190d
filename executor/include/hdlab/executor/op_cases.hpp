#pragma once
// Op cases: one table of (op, shapes, element type, tolerance, analytic cost) that drives
// both the cross-backend correctness test (every case against its *_reference) and the
// benchmarks (the same cases, timed, at larger shapes). Calibration can time them too.
//
// Inputs are uniform in [-1, 1) from a seed (bf16 cases: rounded to bf16 first, so the
// reference sees exactly what the backend sees). Tolerances are elementwise:
// |out - ref| <= abs + rel * |ref|.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/executor/backend.hpp"
#include "hdlab/executor/reference.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/ops.hpp"

namespace hdlab::executor {

struct Tolerance {
  double abs = 0;
  double rel = 0;
};

struct OpCheck {
  bool pass = true;
  std::int64_t checked = 0;        // output elements compared
  double max_abs_error = 0;        // over all outputs
  double worst_ratio = 0;          // max |out - ref| / allowed (<= 1 passes)
  std::string worst;               // the worst element, or what failed
};

// |out - ref| <= tol.abs + tol.rel |ref| for every element (NaN fails); `what` names
// the output in the report of the worst element.
OpCheck compare_to_reference(const std::vector<float>& out, const Doubles& ref, Tolerance tol,
                             const std::string& what);

// One case made ready on one backend: inputs uploaded, outputs allocated.
class PreparedOp {
 public:
  virtual ~PreparedOp() = default;
  // Issues the op once (for timing; repeats leave in-place outputs drifting).
  virtual void run() = 0;
  // Restores the inputs, runs once, compares every output with the reference.
  virtual OpCheck check() = 0;
};

struct OpCase {
  std::string name;  // op and shapes, e.g. "attention intra n=4 stream_major L=40 H=4 G=2 hd=64"
  BackendOp op = BackendOp::gemm;
  const ModuleOp* module = nullptr;  // op == BackendOp::module: the design module's op it runs
  model::OpKind kind = model::OpKind::qkv_proj;  // the layer op it stands for (ops.hpp names)
  ScalarType type = ScalarType::f32;
  model::OpCost cost;             // analytic, methods.md section 6 conventions
  double executed_flops = 0;      // what the kernel computes (attention: whole visible tiles)
  Tolerance tolerance;
  std::function<std::unique_ptr<PreparedOp>(Backend&)> prepare;
};

// ---- builders (tests and benchmarks pick the shapes) ---------------------------------
// Weights are B stored [N, K] (trans_b), activations A [M, K]: y = x W^T.
OpCase gemm_case(model::OpKind kind, std::int64_t m, std::int64_t n, std::int64_t k, ScalarType type,
                 std::uint64_t seed, bool trans_a = false, bool trans_b = true, float alpha = 1.0f, float beta = 0.0f);

struct AttentionCaseShape {
  model::MaskSpec mask;
  model::Layout layout = model::Layout::interleaved;
  std::int64_t heads = 4, kv_heads = 2, head_dim = 64;
  // Decode step: the queries are the copies of the last token (one row under
  // final_copy_queries_only), the keys what the KV cache keeps (decode_key_positions).
  bool decode = false;
  bool sinks = false;  // a sink logit per query head (gpt-oss)
  // Multi-head latent attention: values of v_head_dim (0: head_dim), each the first
  // v_head_dim of a v row of v_row_dim (0: v_head_dim; the absorbed decode's cache entries).
  std::int64_t v_head_dim = 0, v_row_dim = 0;
};
OpCase attention_case(const AttentionCaseShape& shape, ScalarType type, std::uint64_t seed);
// Backend::attention_softmax on random f32 scores of `rows` rows from row0 and `keys` keys
// from key0 of the attention case's mask (its heads and sinks; scale 0.7).
struct AttentionSoftmaxCaseShape {
  AttentionCaseShape attention;
  std::int64_t row0 = 0, rows = 0, key0 = 0, keys = 0;
};
OpCase attention_softmax_case(const AttentionSoftmaxCaseShape& shape, std::uint64_t seed);
// The softmax's table (in correctness_cases' f32 table): sinks, partial tiles, a PHD decode
// step's keys from an offset, rows that see none of the keys.
std::vector<OpCase> attention_softmax_cases();
// The mask of a case: prefill in the layout, or the decode step of its last token.
AttentionMask attention_case_mask(const AttentionCaseShape& shape);
// Logical positions a KV cache holds for a decode step of the last token of `mask`,
// in cache (append) order: everything for causal/sliding/intra; PHD: origins plus the
// last W hidden tokens (swa, cswa) plus the current token's copies.
std::vector<std::int64_t> decode_key_positions(const model::MaskSpec& mask);

OpCase rms_norm_case(model::OpKind kind, std::int64_t rows, std::int64_t dim, ScalarType type, std::uint64_t seed);
// VWN output GroupNorm over D' = groups * group_size.
OpCase group_norm_case(std::int64_t rows, std::int64_t groups, std::int64_t group_size, ScalarType type,
                       std::uint64_t seed);
// rotary_dim > 0: partial RoPE over the first rotary_dim dims of each head (plain frequencies,
// theta 10^6).
OpCase rope_case(std::int64_t tokens, std::int64_t heads, std::int64_t head_dim, std::int32_t first_position,
                 std::int32_t position_step, ScalarType type, std::uint64_t seed, std::int64_t rotary_dim = 0);
// RoPE with given frequencies and cos/sin factor (a scaled RoPE's, model::rotary_frequencies);
// `label` names them in the case's name.
OpCase rope_case(std::int64_t tokens, std::int64_t heads, std::int64_t head_dim, std::int32_t first_position,
                 std::int32_t position_step, ScalarType type, std::uint64_t seed, const model::RotaryFrequencies& f,
                 const std::string& label);
OpCase swiglu_case(std::int64_t tokens, std::int64_t ffn, ScalarType type, std::uint64_t seed, SwigluClamp clamp = {});
OpCase relu2_case(std::int64_t tokens, std::int64_t ffn, ScalarType type, std::uint64_t seed);
OpCase add_case(std::int64_t tokens, std::int64_t width, ScalarType type, std::uint64_t seed);
OpCase topk_routing_case(std::int64_t tokens, std::int64_t experts, std::int64_t k, model::RouterKind score,
                         bool normalize, ScalarType type, std::uint64_t seed);
// HD embedding of stream `stream` of n (interleaved rows) from a table of `vocab` rows.
OpCase gather_rows_case(std::int64_t tokens, std::int64_t vocab, std::int64_t width, std::int64_t streams,
                        std::int64_t stream, ScalarType type, std::uint64_t seed);
OpCase scatter_add_rows_case(std::int64_t routed, std::int64_t tokens, std::int64_t width, ScalarType type,
                             std::uint64_t seed);
// VWN GHC with m, n and slot size s over `tokens` tokens.
OpCase ghc_dynamic_case(std::int64_t tokens, std::int64_t m, std::int64_t n, std::int64_t s, ScalarType type,
                        std::uint64_t seed);
OpCase ghc_width_case(std::int64_t tokens, std::int64_t m, std::int64_t n, std::int64_t s, bool static_alpha,
                      ScalarType type, std::uint64_t seed);
OpCase ghc_depth_case(std::int64_t tokens, std::int64_t m, std::int64_t n, std::int64_t s, bool static_beta,
                      ScalarType type, std::uint64_t seed);

// ---- linear attention (op_cases_linear.cpp): Gated DeltaNet and Mamba-2 sizes ----------
struct GdnCaseShape {
  std::int64_t rows = 0, hk = 1, hv = 1, dk = 8, dv = 8, kernel = 4;
  std::int64_t chunk = 64;  // gated_delta_rule: 0 token by token
  bool writes = false;      // some rows read only (every third row, from the second)
  bool bias = false;        // causal_conv1d: a bias per channel (Mamba-2's conv has one)
};
// The conv over q, k and v's 2 hk dk + hv dv channels, from a random history.
OpCase causal_conv1d_case(const GdnCaseShape& shape, ScalarType type, std::uint64_t seed);
// The rule from a random state; checks the output and the state it leaves.
OpCase gated_delta_rule_case(const GdnCaseShape& shape, ScalarType type, std::uint64_t seed);
OpCase gated_rms_norm_case(std::int64_t rows, std::int64_t dim, ScalarType type, std::uint64_t seed,
                           GatedNormForm form = {});
// Mamba-2's SSD scan (Backend::mamba2_ssd) over `rows` rows from a random state: H heads
// of P, G groups of state N; checks the output and the state it leaves.
struct Mamba2CaseShape {
  std::int64_t rows = 0, heads = 2, head_dim = 8, groups = 1, state = 8;
  std::int64_t chunk = 64;  // 0: row by row (decode)
};
OpCase mamba2_ssd_case(const Mamba2CaseShape& shape, ScalarType type, std::uint64_t seed);
// per_row: a [rows, 1] gate (shared experts) instead of one per element (gated attention).
OpCase sigmoid_gate_case(std::int64_t rows, std::int64_t width, bool per_row, ScalarType type, std::uint64_t seed);

// ---- strided batches (op_cases_strided.cpp): multi-head latent attention's layouts -----
// Backend::gemm_batched over tensors of a_size, b_size and c_size elements (random; c's
// elements outside the written matrices must come back unchanged).
struct StridedGemmCaseShape {
  std::int64_t batch = 1, m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = true;
  StridedBatch a, b, c;
  std::int64_t a_size = 0, b_size = 0, c_size = 0;
};
OpCase gemm_batched_case(model::OpKind kind, const StridedGemmCaseShape& s, ScalarType type, std::uint64_t seed);
struct StridedCopyCaseShape {
  std::int64_t batch = 1, rows = 1, cols = 1;
  StridedBatch src, dst;
  std::int64_t src_size = 0, dst_size = 0;
};
OpCase copy_strided_case(const StridedCopyCaseShape& s, ScalarType type, std::uint64_t seed);
// The strided products and copies of an MLA layer of H heads at small sizes (key
// assembly, the absorbed decode's query and output), and its attention shapes: prefill
// with values narrower than the keys, absorbed decode against [latent | rope] entries (also
// at DeepSeek-V2's 512 + 64, past what the CUDA kernel holds).
std::vector<OpCase> mla_correctness_cases(ScalarType type);

// ---- the correctness table -----------------------------------------------------------
// Small shapes (odd sizes, lengths that are not tile multiples, GQA, decode rows) of
// every op in `type`; the CPU test runs f32, the CUDA test f32 and bf16.
std::vector<OpCase> correctness_cases(ScalarType type);
// The attention part alone: every mask kind, layout and PHD variant.
std::vector<OpCase> attention_correctness_cases(ScalarType type);

// Whether the backend runs the case's op in its type (Backend::supports, for a module op
// the module's).
bool runs_on(const Backend& backend, const OpCase& c);
// Cases the backend can run (runs_on).
std::vector<OpCase> supported_cases(const Backend& backend, std::vector<OpCase> cases);

}  // namespace hdlab::executor
