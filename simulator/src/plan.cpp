// Shapes and layer groups: what a pass is made of, derived once per (backbone, method).
#include <stdexcept>
#include <string>

#include "hdlab/model/designs/interface.hpp"
#include "hdlab/simulator/op_table.hpp"

namespace hdlab::simulator {

using namespace hdlab::model;

void set_precision(ModelShape& s, const TensorPrecision& p) {
  s.precision = p;
  s.bytes = dtype_bytes(p.activations);
  s.weight_el_bytes = dtype_bytes(p.weights);
  s.kv_el_bytes = dtype_bytes(p.kv_cache);
  s.gdn.state_el_bytes = s.kv_el_bytes;  // linear layers keep their recurrent state in the cache precision
  s.mamba.state_el_bytes = s.kv_el_bytes;
  s.comm_el_bytes = dtype_bytes(p.communication);
  const double state = dtype_bytes(p.optimizer_state);
  s.optimizer_bytes_per_param = 2 * state + (p.optimizer_state == p.weights ? 0 : state);
}

ModelShape model_shape(const Backbone& b, const Method& m) {
  ModelShape s;
  static_cast<OpDims&>(s) = op_dims(b, m);
  set_precision(s, TensorPrecision{b.dtype, b.dtype, b.dtype, b.dtype, b.dtype, DType::fp32});
  return s;
}

namespace {

// The signature of the layer `v` describes (its view holds what the design says of it).
LayerSignature signature_of(const Backbone& b, const LayerView& v) {
  LayerSignature sig;
  const std::int64_t l = v.layer;
  const LayerAttention& att = b.layers[static_cast<std::size_t>(l)];
  sig.base_kind = att.kind;
  sig.base_window = att.kind == AttentionKind::sliding ? att.window : att.kind == AttentionKind::chunked ? att.chunk : 0;
  sig.nope = att.nope;
  sig.moe = b.is_moe_layer(l);
  sig.kv_from_source = b.is_mirrored(l);
  sig.mixer = v.mixer;
  sig.ffn = b.has_ffn(l);
  // Under HD, the kind the layer's streams use and whether only the final stream queries
  // (full and false for every other design).
  sig.hd_kind = v.role.stream_kind;
  sig.final_queries_only = v.role.final_queries_only;
  sig.role = v.loop;
  return sig;
}

}  // namespace

LayerSignature layer_signature(const Backbone& b, const Method& m, std::int64_t l, double* passes, double* kv_caches) {
  const LayerView v = layer_view(b, m, l);
  if (passes) *passes = v.passes;
  if (kv_caches) *kv_caches = v.kv_caches;
  return signature_of(b, v);
}

LayerPlan plan_layers(const Backbone& b, const Method& m) {
  LayerPlan plan;
  plan_layers(b, m, plan);
  return plan;
}

void plan_layers(const Backbone& b, const Method& m, LayerPlan& plan) {
  plan.count = 0;
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    const LayerView v = layer_view(b, m, l);
    const LayerSignature sig = signature_of(b, v);
    int g = 0;
    while (g < plan.count && !(plan.groups[static_cast<std::size_t>(g)].sig == sig)) ++g;
    if (g == plan.count) {
      if (plan.count == max_layer_groups)
        throw std::length_error("more than " + std::to_string(max_layer_groups) + " distinct layer shapes");
      plan.groups[static_cast<std::size_t>(g)] = LayerGroupPlan{sig, v, l, 0, 0, 0};
      ++plan.count;
    }
    LayerGroupPlan& group = plan.groups[static_cast<std::size_t>(g)];
    group.instances += 1;
    group.passes += v.passes;
    group.kv_caches += v.kv_caches;
  }
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
