// The sizes a model's ops are made of, and a pass's program assembled from the nodes of
// layer_ops.cpp.
#include "hdlab/model/layer_program.hpp"

#include "hdlab/model/designs/interface.hpp"

#include <stdexcept>
#include <string>

namespace hdlab::model {

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

void set_attention_dims(const Backbone& b, OpDims& s) {
  const AttentionShape a = attention_shape(b);
  s.qk_head_dim = d(a.qk_head_dim);
  s.v_head_dim = d(a.v_head_dim);
  s.kv_out = d(a.kv_cache_per_token);
  s.o_params = s.H * s.v_head_dim * s.D;
  s.o_bias = b.output_bias ? s.D : 0;
  if (b.mla) {
    // MLA (approximate costs): the query path, possibly low-rank with its RMSNorm; the
    // rest of the projection parameters form the latent K/V path.
    const MlaConfig& m = *b.mla;
    const double qk = d(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double ql = d(m.q_lora_rank);
    s.q_weights = ql > 0 ? s.D * ql + ql + ql * s.H * qk : s.D * s.H * qk;
    s.kv_weights = d(a.projection_params) - s.q_weights - s.o_params;
    s.rope_dim = d(m.qk_rope_head_dim);
    s.mla_latent = d(m.kv_lora_rank);
    s.mla_q_lora = ql;
    s.qk_norm = false;  // MLA's norms sit on the low-rank paths, counted with the weights
    return;
  }
  s.output_gate = b.attention_output_gate;
  s.q_weights = s.D * s.H * s.qk_head_dim * (b.attention_output_gate ? 2 : 1);  // the gate half of q_proj
  s.kv_weights = 2 * s.D * s.G * s.qk_head_dim;
  if (b.attention_bias) {
    s.q_bias = s.H * s.qk_head_dim * (b.attention_output_gate ? 2 : 1);
    s.kv_bias = 2 * s.G * s.qk_head_dim;
  }
  // Partial RoPE (rotary_dim < head_dim) rotates only the first rotary_dim of each head.
  s.rope_dim = b.positions == PositionKind::rope ? d(b.rope_dims()) : 0;
  s.qk_norm = b.qk_norm;
  s.qk_norm_weights = d(b.qk_norm_params());
}

}  // namespace

OpCost nodes_total(const OpNodes& t) {
  OpCost c;
  for (const OpNode& n : t) c += n.cost;
  return c;
}

OpDims op_dims(const Backbone& b, const Method& m) {
  OpDims s;
  s.D = d(b.hidden);
  s.H = d(b.num_heads);
  s.G = d(b.num_kv_heads);
  set_attention_dims(b, s);
  // Gemma-style post-norms: the first half of the per-layer norms wrap attention.
  s.norms_attn = d(b.mixer_norms());
  s.norms_ffn = d(b.ffn_norms());
  s.layernorm = b.norm == NormKind::layernorm;
  s.F = d(b.intermediate);
  s.gelu = b.mlp == MlpKind::gelu;
  s.relu2 = b.mlp == MlpKind::relu2;
  s.mlp_bias = b.mlp_bias;
  s.position_rows = d(b.position_rows());
  if (b.moe) {
    s.E = d(b.moe->num_experts);
    s.top_k = d(b.moe->top_k);
    s.Fe = d(b.moe->expert_intermediate);
    s.S = d(b.moe->num_shared_experts);
    s.Fs = d(b.moe->shared_expert_intermediate);
    s.router_bias = b.moe->router_bias ? s.E : 0;
    s.shared_gate = b.moe->shared_expert_gate;
    s.expert_bias = d(b.expert_params() - 3 * b.hidden * b.moe->expert_intermediate);
    // clamped SwiGLU: two clamps (3), alpha * gate (1), sigmoid (3: exp, add, divide),
    // gate * sigmoid (1), up + 1 (1), the product (1)
    if (b.moe->swiglu_limit > 0) s.expert_act_flops = 10;
  }
  s.sinks = d(b.sink_params());
  s.V = d(b.padded_vocab());
  s.V_in = d(b.padded_input_vocab());
  s.tied = b.tie_embeddings;
  s.bytes = s.weight_el_bytes = s.kv_el_bytes = dtype_bytes(b.dtype);
  // What the design adds, from its module (the registry's one answer per design).
  const DesignFeatures f = design_features(m);
  s.hd_n = d(f.input_tables);
  if (f.hidden_copies) s.phd_K = d(f.copies);
  s.vwn = f.wide_residual;
  if (f.wide_residual) {
    s.vwn_m = d(f.width_m);
    s.vwn_n = d(f.width_n);
    s.vwn_dynamic = f.dynamic_mixing;
    s.vwn_projected = f.projected_embedding;
    s.vwn_mtp = f.mtp;
    s.copied_embedding = f.copied_embedding;
    s.summed_readout = f.summed_readout;
    s.module_mixing = f.module_mixing;
  }
  if (b.gdn) {
    const GatedDeltaNetConfig& g = *b.gdn;
    s.gdn.hk = d(g.num_key_heads);
    s.gdn.hv = d(g.num_value_heads);
    s.gdn.dk = d(g.key_head_dim);
    s.gdn.dv = d(g.value_head_dim);
    s.gdn.kernel = d(g.conv_kernel);
    s.gdn.state_el_bytes = s.kv_el_bytes;
  }
  if (b.mamba) {
    const Mamba2Config& mb = *b.mamba;
    s.mamba.heads = d(mb.num_heads);
    s.mamba.head_dim = d(mb.head_dim);
    s.mamba.groups = d(mb.n_groups);
    s.mamba.state = d(mb.state_size);
    s.mamba.kernel = d(mb.conv_kernel);
    s.mamba.chunk = d(mb.chunk_size);
    s.mamba.conv_bias = mb.conv_bias;
    s.mamba.state_el_bytes = s.kv_el_bytes;
  }
  s.loop_iterations = d(f.loop_iterations);
  s.injection = f.input_injection;
  s.method = m;
  return s;
}

double recurrent_states(const Method& m, const LayerAttentionRole& role) {
  const DesignFeatures f = design_features(m);
  return f.streams && role.stream_kind == HdLayerKind::intra ? d(f.copies) : 1;
}

LayerFeatures layer_features(const Backbone& b, std::int64_t layer) {
  LayerFeatures f{b.is_moe_layer(layer), b.is_mirrored(layer), b.mixer(layer)};
  f.nope = b.layers[static_cast<std::size_t>(layer)].nope;
  f.ffn = b.has_ffn(layer);
  return f;
}

OpCost PassProgram::total() const {
  OpCost c = nodes_total(outside);
  for (const RunOps& r : runs) c += nodes_total(r.ops);
  return c;
}

OpCost PassProgram::op_total(OpKind k) const {
  OpCost c = node(outside, k).cost;
  for (const RunOps& r : runs) c += node(r.ops, k).cost;
  return c;
}

PassProgram pass_program(const Config& c, const OpDims& s, const std::vector<LayerRun>& runs,
                         const std::vector<LayerWork>& work, const OutsideWork& outside, bool count_executed) {
  if (work.size() != runs.size())
    throw std::invalid_argument("pass_program: " + std::to_string(work.size()) + " works for " +
                                std::to_string(runs.size()) + " layer runs");
  PassProgram p;
  p.runs.resize(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    p.runs[i].run = runs[i];
    layer_ops(s, layer_features(c.effective, runs[i].layer), work[i], count_executed, p.runs[i].ops,
              &p.runs[i].tensors);
  }
  outside_ops(s, outside, p.outside, &p.outside_tensors);
  return p;
}

}  // namespace hdlab::model
