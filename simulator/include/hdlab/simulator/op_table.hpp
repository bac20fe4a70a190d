#pragma once
// Op tables: the cost of every op of every layer in one pass (a training forward, a
// prefill, a decode step), in the shared names and record of model/ops.hpp.
//
// Identical layers are grouped and costed once: a group carries how many times its ops
// run per pass (layers x loop iterations), how many distinct layers hold weights, and
// how many KV caches it keeps. Tables are fixed arrays indexed by OpKind, so building one
// allocates nothing (the hot path of a sweep).
//
// Counting conventions (methods.md section 6, plus the choices below):
//  - 2 FLOPs per multiply-add; RMSNorm 4 FLOPs per element (square-accumulate, scale,
//    weight), the published VWN norm count; RoPE 3 per rotated element (2 multiplies, 1
//    add); SiLU(gate)*up 5 per element (SiLU as 4: exp, add, divide, multiply); a
//    residual add 1 per element; biases 1 per output element.
//  - Attention 4*hd*H FLOPs per visible pair (MLA: 2*H*(qk_head_dim + v_head_dim));
//    softmax FLOPs are not counted. Both the exact and the tile-executed pair counts are
//    kept; the op's flops use the one the scenario chooses (executed by default).
//  - Bytes: weights read once per pass, activations written and read by each op (an op
//    reads its inputs and writes its outputs to device memory: no fusion is assumed),
//    KV cache read and written by the attention op.
//  - Costs in a table are logical: the whole model replica, unsharded. The roofline
//    divides them over tensor/expert-parallel devices.
#include <array>
#include <cstdint>

#include "hdlab/model/design.hpp"
#include "hdlab/model/ops.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::simulator {

// How tensor parallelism cuts a matrix product [m, k] x [k, n]: a column-parallel weight
// splits n, a row-parallel one k (its partial sums are all-reduced); a replicated one
// (the router) neither.
// A per-head product (unfused attention's Q K^T and P V: one group per sequence and head)
// splits its groups: heads over tp, sequences over ep.
enum class GemmSplit : std::uint8_t { column, row, replicated, heads };

// One matrix product an op runs, as the kernels see it: `groups` products of
// [m, k] x [k, n] in one launch (the routed experts: one group per expert hit, m its
// tokens). Logical (unsharded) sizes; the roofline shards them.
struct OpGemm {
  double m = 0, n = 0, k = 0;
  double groups = 0;  // 0: no product
  GemmSplit split = GemmSplit::column;
};

// One op in one pass of one layer (or outside the layers).
struct OpRow {
  model::OpCost cost;         // logical cost of one run of the op
  double params = 0;          // parameters the op owns (resident weights, per layer)
  double calls = 0;           // kernel launches per run
  double rows = 0;            // GEMM M: tokens through the op (experts: expected tokens per expert)
  double weight_dim_min = 0;  // GEMM: the smaller weight dimension (min(N, K))
  // For profiles with fitted kernel models (kernel_models.hpp): the op's products, and the
  // bytes and launches of the element-wise steps between them (SwiGLU's activation, the
  // experts' token permutes), timed as streaming kernels.
  std::array<OpGemm, 2> gemms{};
  double inner_vector_bytes = 0;
  double inner_vector_calls = 0;
};
using OpTable = std::array<OpRow, model::op_kind_count>;

inline OpRow& row(OpTable& t, model::OpKind k) { return t[static_cast<std::size_t>(k)]; }
inline const OpRow& row(const OpTable& t, model::OpKind k) { return t[static_cast<std::size_t>(k)]; }
// Sum of the cost records of a table.
model::OpCost table_total(const OpTable& t);

// The dtype of each tensor class (evaluate.hpp's PrecisionScenario says what each covers).
struct TensorPrecision {
  model::DType weights = model::DType::bf16;
  model::DType activations = model::DType::bf16;
  model::DType kv_cache = model::DType::bf16;
  model::DType compute = model::DType::bf16;  // the weight products' matrix precision
  model::DType communication = model::DType::bf16;
  model::DType optimizer_state = model::DType::fp32;
  bool operator==(const TensorPrecision&) const = default;
};

// The sizes a layer's ops are made of, derived once per (backbone, method).
struct ModelShape {
  double D = 0, H = 0, G = 0;
  double qk_head_dim = 0, v_head_dim = 0, rope_dim = 0;
  double q_weights = 0, q_bias = 0;    // query projection (MLA: with its low-rank path)
  double kv_weights = 0, kv_bias = 0;  // key/value projections (MLA: the latent path)
  double o_params = 0, o_bias = 0;     // output projection (its bias: D or 0)
  double kv_out = 0;                   // K/V elements written per position (= cache entry size)
  bool qk_norm = false;
  double qk_norm_weights = 0;            // per layer: 2 hd (per head) or (H + G) hd (whole projection)
  double norms_attn = 0, norms_ffn = 0;  // norms of size D around each sublayer
  bool layernorm = false;                // LayerNorm (weight and bias) instead of RMSNorm
  double F = 0;                          // dense FFN width
  bool gelu = false;                     // dense FFN: GELU (up, down) instead of SwiGLU
  bool mlp_bias = false;                 // dense FFN biases
  double position_rows = 0;              // learned position table rows (0: none)
  double E = 0, top_k = 0, Fe = 0, S = 0, Fs = 0;  // MoE
  double V = 0;                          // padded vocabulary of the head
  double V_in = 0;                       // padded rows of the input table (backbone input_vocab_size)
  bool tied = false;
  // Precision per tensor class (set_precision), and its bytes per element.
  TensorPrecision precision;
  double bytes = 2;                       // activations
  double weight_el_bytes = 2;             // weights
  double kv_el_bytes = 2;                 // KV cache
  double comm_el_bytes = 2;               // collectives, pipeline transfers, gradients
  double optimizer_bytes_per_param = 12;  // fp32 master copy + two fp32 Adam moments
  // Method parameters (zero when the method is another).
  double hd_n = 1;                       // HD streams (input tables)
  double phd_K = 1;
  bool vwn = false, vwn_dynamic = false, vwn_projected = false, vwn_mtp = false;
  double vwn_m = 1, vwn_n = 1;           // D' = (n/m) D
  double loop_iterations = 1;
  bool injection = false;
};
// Every tensor class in the backbone's dtype, the optimizer state in fp32.
ModelShape model_shape(const model::Backbone& b, const model::Method& m);
// Sets the precision and the bytes per element derived from it. Optimizer state per
// parameter: two Adam moments, plus a master copy of the weights when the state's dtype
// differs from theirs (bf16 weights, fp32 state: 12 bytes; fp32 both: 8).
void set_precision(ModelShape& s, const TensorPrecision& p);

// What makes two layers cost the same.
using model::LoopRole;
struct LayerSignature {
  model::AttentionKind base_kind = model::AttentionKind::full;
  std::int64_t base_window = 0;
  model::HdLayerKind hd_kind = model::HdLayerKind::full;  // HD only
  bool moe = false;
  bool kv_from_source = false;      // KV mirror: K/V projected from an early layer's input
  bool final_queries_only = false;  // HD KV mirror: only the final stream issues queries
  LoopRole role = LoopRole::none;
  bool operator==(const LayerSignature&) const = default;
};

struct LayerGroupPlan {
  LayerSignature sig;
  std::int64_t first_layer = 0;  // a representative layer index (for masks and reports)
  double instances = 0;          // distinct layers: weights resident
  double passes = 0;             // runs per pass through the model (recurrent: x iterations)
  double kv_caches = 0;          // KV caches kept (looped per-iteration: x iterations)
};

// More distinct layer shapes than this is refused (a config has at most a few dozen).
inline constexpr int max_layer_groups = 48;
struct LayerPlan {
  int count = 0;
  std::array<LayerGroupPlan, max_layer_groups> groups{};
};
LayerPlan plan_layers(const model::Backbone& b, const model::Method& m);
// The signature of layer `l`; `passes` and `kv_caches` (when given) receive how often it
// runs per pass and how many KV caches it keeps.
LayerSignature layer_signature(const model::Backbone& b, const model::Method& m, std::int64_t l,
                               double* passes = nullptr, double* kv_caches = nullptr);

// The work one layer does in a pass, per sequence.
struct LayerWork {
  double seqs = 0;            // sequences in the pass
  double rows_q = 0;          // rows through q, o, the FFN and the residual
  double rows_kv = 0;         // rows whose K/V are projected
  double pairs_exact = 0;     // visible (query, key) pairs
  double pairs_executed = 0;  // pairs inside visible kernel tiles
  double kv_read = 0;         // KV-cache entries read (decode)
  double kv_written = 0;      // KV-cache entries written per layer pass (a prefill of a cache
                              // shared by K loop iterations: written once, 1/K per pass)
  bool reads_cache = false;   // decode: K/V come from the cache, not from activations
  double longest_keys = 0;    // keys the query row that sees the most sees (a kernel's longest unit)
  bool scores_materialised = false;  // unfused attention: every (query, key) score written (pairs_executed = rows_q * rows_kv)
  // Training dropout (layer_ops): on the two sublayer outputs before their residual adds
  // (fused into the add: each writes a mask of a byte an element, kept for the backward),
  // and on unfused attention's probabilities (a kernel reading them and writing the dropped
  // ones and a byte-a-score mask; fused kernels drop inside, not costed).
  bool hidden_dropout = false;
  bool attention_dropout = false;  // only with scores_materialised
};
// Fills the table of one layer of signature `sig` doing `w`.
void layer_ops(const ModelShape& s, const LayerSignature& sig, const LayerWork& w, bool count_executed,
               OpTable& out);

// Work outside the layers, per sequence.
struct OutsideWork {
  double seqs = 0;
  double embed_rows = 0;      // positions looked up (HD: one row per stream from its table)
  double logit_rows = 0;      // rows through the final norm and the head (loss / sampling rows)
  double recurrent_rows = 0;  // looped: rows through the injection adapter per iteration
  double mtp_rows = 0;        // VWN multi-token prediction rows: training's loss rows, else 0
};
void outside_ops(const ModelShape& s, const OutsideWork& w, OpTable& out);

struct LayerGroupCost {
  LayerGroupPlan plan;
  LayerWork work;
  OpTable ops{};  // one run of one layer
};

// One pass through the model: groups of identical layers plus the ops outside them.
struct PassCost {
  int count = 0;
  std::array<LayerGroupCost, max_layer_groups> groups{};
  OpTable outside{};
  // Summed over groups (x passes) and the outside ops.
  model::OpCost total() const;
  model::OpCost op_total(model::OpKind k) const;
  double attention_pairs_exact() const;     // summed over layer passes
  double attention_pairs_executed() const;
};

}  // namespace hdlab::simulator
