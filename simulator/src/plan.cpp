// Shapes and layer groups: what a pass is made of, derived once per (backbone, method).
#include <stdexcept>
#include <string>

#include "hdlab/simulator/op_table.hpp"

namespace hdlab::simulator {

using namespace hdlab::model;

namespace {

void set_attention_shape(const Backbone& b, ModelShape& s) {
  const AttentionShape a = attention_shape(b);
  s.qk_head_dim = static_cast<double>(a.qk_head_dim);
  s.v_head_dim = static_cast<double>(a.v_head_dim);
  s.kv_out = static_cast<double>(a.kv_cache_per_token);
  s.o_params = s.H * s.v_head_dim * s.D;
  s.o_bias = b.output_bias ? s.D : 0;
  if (b.mla) {
    // MLA (approximate costs): the query path, possibly low-rank with its RMSNorm; the
    // rest of the projection parameters form the latent K/V path.
    const MlaConfig& m = *b.mla;
    const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double ql = static_cast<double>(m.q_lora_rank);
    s.q_weights = ql > 0 ? s.D * ql + ql + ql * s.H * qk : s.D * s.H * qk;
    s.kv_weights = static_cast<double>(a.projection_params) - s.q_weights - s.o_params;
    s.rope_dim = static_cast<double>(m.qk_rope_head_dim);
    s.qk_norm = false;  // MLA's norms sit on the low-rank paths, counted with the weights
    return;
  }
  s.q_weights = s.D * s.H * s.qk_head_dim;
  s.kv_weights = 2 * s.D * s.G * s.qk_head_dim;
  if (b.attention_bias) {
    s.q_bias = s.H * s.qk_head_dim;
    s.kv_bias = 2 * s.G * s.qk_head_dim;
  }
  s.rope_dim = b.positions == PositionKind::rope ? s.qk_head_dim : 0;
  s.qk_norm = b.qk_norm;
}

}  // namespace

model::OpCost table_total(const OpTable& t) {
  model::OpCost c;
  for (const OpRow& r : t) c += r.cost;
  return c;
}

void set_precision(ModelShape& s, const TensorPrecision& p) {
  s.precision = p;
  s.bytes = dtype_bytes(p.activations);
  s.weight_el_bytes = dtype_bytes(p.weights);
  s.kv_el_bytes = dtype_bytes(p.kv_cache);
  s.comm_el_bytes = dtype_bytes(p.communication);
  const double state = dtype_bytes(p.optimizer_state);
  s.optimizer_bytes_per_param = 2 * state + (p.optimizer_state == p.weights ? 0 : state);
}

ModelShape model_shape(const Backbone& b, const Method& m) {
  ModelShape s;
  s.D = static_cast<double>(b.hidden);
  s.H = static_cast<double>(b.num_heads);
  s.G = static_cast<double>(b.num_kv_heads);
  set_attention_shape(b, s);
  // Gemma-style post-norms: the first half of the per-layer norms wrap attention.
  s.norms_attn = static_cast<double>((b.norms_per_layer + 1) / 2);
  s.norms_ffn = static_cast<double>(b.norms_per_layer) - s.norms_attn;
  s.layernorm = b.norm == NormKind::layernorm;
  s.F = static_cast<double>(b.intermediate);
  s.gelu = b.mlp == MlpKind::gelu;
  s.mlp_bias = b.mlp_bias;
  s.position_rows = static_cast<double>(b.position_rows());
  if (b.moe) {
    s.E = static_cast<double>(b.moe->num_experts);
    s.top_k = static_cast<double>(b.moe->top_k);
    s.Fe = static_cast<double>(b.moe->expert_intermediate);
    s.S = static_cast<double>(b.moe->num_shared_experts);
    s.Fs = static_cast<double>(b.moe->shared_expert_intermediate);
  }
  s.V = static_cast<double>(b.padded_vocab());
  s.V_in = static_cast<double>(b.padded_input_vocab());
  s.tied = b.tie_embeddings;
  set_precision(s, TensorPrecision{b.dtype, b.dtype, b.dtype, b.dtype, b.dtype, DType::fp32});
  // What the method changes, in the op table's terms (zero-effect values otherwise).
  const DesignFeatures f = design_features(m);
  s.hd_n = static_cast<double>(f.input_tables);
  if (f.hidden_copies) s.phd_K = static_cast<double>(f.copies);
  s.vwn = f.wide_residual;
  if (f.wide_residual) {
    s.vwn_m = static_cast<double>(f.width_m);
    s.vwn_n = static_cast<double>(f.width_n);
    s.vwn_dynamic = f.dynamic_mixing;
    s.vwn_projected = f.projected_embedding;
    s.vwn_mtp = f.mtp;
  }
  s.loop_iterations = static_cast<double>(f.loop_iterations);
  s.injection = f.input_injection;
  return s;
}

LayerSignature layer_signature(const Backbone& b, const Method& m, std::int64_t l, double* passes, double* kv_caches) {
  LayerSignature sig;
  const LayerAttentionRole role = layer_role(m, b, l);
  sig.base_kind = role.base_kind;
  sig.base_window = role.base_window;
  sig.moe = b.is_moe_layer(l);
  sig.kv_from_source = b.is_mirrored(l);
  sig.hd_kind = role.stream_kind;
  sig.final_queries_only = role.final_queries_only;
  const model::LayerSchedule schedule = model::layer_schedule(m, l);
  sig.role = schedule.role;
  const auto runs = static_cast<double>(schedule.passes), kv = static_cast<double>(schedule.kv_caches);
  if (passes) *passes = runs;
  if (kv_caches) *kv_caches = kv;
  return sig;
}

LayerPlan plan_layers(const Backbone& b, const Method& m) {
  LayerPlan plan;
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    double passes = 1, kv = 1;
    const LayerSignature sig = layer_signature(b, m, l, &passes, &kv);
    int g = 0;
    while (g < plan.count && !(plan.groups[static_cast<std::size_t>(g)].sig == sig)) ++g;
    if (g == plan.count) {
      if (plan.count == max_layer_groups)
        throw std::length_error("more than " + std::to_string(max_layer_groups) + " distinct layer shapes");
      plan.groups[static_cast<std::size_t>(g)] = LayerGroupPlan{sig, l, 0, 0, 0};
      ++plan.count;
    }
    LayerGroupPlan& group = plan.groups[static_cast<std::size_t>(g)];
    group.instances += 1;
    group.passes += passes;
    group.kv_caches += kv;
  }
  return plan;
}

model::OpCost PassCost::total() const {
  model::OpCost c = table_total(outside);
  for (int g = 0; g < count; ++g) {
    const LayerGroupCost& lg = groups[static_cast<std::size_t>(g)];
    const model::OpCost t = table_total(lg.ops);
    const double p = lg.plan.passes;
    c += model::OpCost{t.flops * p, t.weight_bytes * p, t.act_bytes_in * p, t.act_bytes_out * p, t.kv_bytes_read * p,
                       t.kv_bytes_written * p};
  }
  return c;
}

model::OpCost PassCost::op_total(model::OpKind k) const {
  model::OpCost c = row(outside, k).cost;
  for (int g = 0; g < count; ++g) {
    const LayerGroupCost& lg = groups[static_cast<std::size_t>(g)];
    const model::OpCost& t = row(lg.ops, k).cost;
    const double p = lg.plan.passes;
    c += model::OpCost{t.flops * p, t.weight_bytes * p, t.act_bytes_in * p, t.act_bytes_out * p, t.kv_bytes_read * p,
                       t.kv_bytes_written * p};
  }
  return c;
}

double PassCost::attention_pairs_exact() const {
  double p = 0;
  for (int g = 0; g < count; ++g) {
    const LayerGroupCost& lg = groups[static_cast<std::size_t>(g)];
    p += lg.plan.passes * lg.work.seqs * lg.work.pairs_exact;
  }
  return p;
}

double PassCost::attention_pairs_executed() const {
  double p = 0;
  for (int g = 0; g < count; ++g) {
    const LayerGroupCost& lg = groups[static_cast<std::size_t>(g)];
    p += lg.plan.passes * lg.work.seqs * lg.work.pairs_executed;
  }
  return p;
}

}  // namespace hdlab::simulator
