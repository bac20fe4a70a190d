#pragma once
// Op tables: the cost of every op of every layer in one pass (a training forward, a
// prefill, a decode step), in the shared names and record of model/ops.hpp.
//
// Identical layers are grouped and costed once: a group carries how many times its ops
// run per pass (layers x loop iterations), how many distinct layers hold weights, and
// how many KV caches it keeps. Tables are fixed arrays indexed by OpKind, so building one
// allocates nothing (the hot path of a sweep).
//
// The FLOPs and bytes of every op are model::layer_ops' (model/layer_program.hpp, with
// its counting conventions): this header groups the layers and names the simulator's
// view of the nodes.
#include <array>
#include <cstdint>

#include "hdlab/model/design.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/layer_work.hpp"
#include "hdlab/model/ops.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::simulator {

// The nodes of model/layer_program.hpp, under the simulator's names: a table is the
// nodes of one layer (or of the ops outside the layers), its rows their costs.
using model::GemmSplit;
using model::OpGemm;
using OpRow = model::OpNode;
using OpTable = model::OpNodes;

inline OpRow& row(OpTable& t, model::OpKind k) { return model::node(t, k); }
inline const OpRow& row(const OpTable& t, model::OpKind k) { return model::node(t, k); }
// Sum of the cost records of a table.
inline model::OpCost table_total(const OpTable& t) { return model::nodes_total(t); }

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

// The sizes a layer's ops are made of (model::OpDims, derived once per (backbone,
// method)), with the precision of every tensor class and the bytes the simulator's memory
// and communication models need besides.
struct ModelShape : model::OpDims {
  TensorPrecision precision;              // set_precision: also sets OpDims' element bytes
  double comm_el_bytes = 2;               // collectives, pipeline transfers, gradients
  double optimizer_bytes_per_param = 12;  // fp32 master copy + two fp32 Adam moments
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
  std::int64_t base_window = 0;  // sliding: the window; chunked: the chunk (tokens)
  bool nope = false;             // no RoPE in this layer (Llama 4's global layers)
  model::HdLayerKind hd_kind = model::HdLayerKind::full;  // HD only
  bool moe = false;
  bool kv_from_source = false;      // KV mirror: K/V projected from an early layer's input
  bool final_queries_only = false;  // HD KV mirror: only the final stream issues queries
  LoopRole role = LoopRole::none;
  // The token mixer: attention, a linear-attention one (Gated DeltaNet, Mamba-2: a recurrent
  // state, no KV cache) or none (an FFN-only layer); and whether the layer has its FFN.
  model::MixerKind mixer = model::MixerKind::attention;
  bool ffn = true;
  bool linear() const { return mixer == model::MixerKind::gated_deltanet || mixer == model::MixerKind::mamba2; }
  bool operator==(const LayerSignature&) const = default;
};

struct LayerGroupPlan {
  LayerSignature sig;
  model::LayerView view;         // the first layer's, as model/layer_work.hpp derives its work from
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
// The same, into `out`: only its first `count` groups are written (an evaluation's
// context plans twice per call; the 6 KB array zeroed and copied each time crowded a
// fitted profile's evaluation out of the L1 cache: README's bench_evaluate).
void plan_layers(const model::Backbone& b, const model::Method& m, LayerPlan& out);
// The signature of layer `l`; `passes` and `kv_caches` (when given) receive how often it
// runs per pass and how many KV caches it keeps.
LayerSignature layer_signature(const model::Backbone& b, const model::Method& m, std::int64_t l,
                               double* passes = nullptr, double* kv_caches = nullptr);

using model::LayerWork;
// Fills the table of one layer of signature `sig` doing `w` (model::layer_ops).
void layer_ops(const ModelShape& s, const LayerSignature& sig, const LayerWork& w, bool count_executed,
               OpTable& out);

using model::OutsideWork;
void outside_ops(const ModelShape& s, const OutsideWork& w, OpTable& out);  // model::outside_ops

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
