// Ops timed by fitted kernel models (roofline.hpp's kernel_op_time): the products an op
// records (OpRow::gemms) and its attention, as one device runs them after sharding.
//
// Sharding (as roofline.hpp describes it): the dense part runs data-parallel over the ep
// ranks, so a product's rows are split by ep, its n by tp for a column-parallel weight and
// its k by tp for a row-parallel one; the routed experts are split over the ep ranks by
// expert (groups / ep) and over tp by width. Element-wise ops and the element-wise steps
// inside composite ops stream their per-device bytes: split as the products split, except
// the routed copies' permutes (OpNode::inner_row_bytes, whole model-width rows that every
// tensor-parallel rank moves), split by ep alone, as kerneldb's MoE layers measure them.
//
// Backward (training):
//   a product Y[m,n] = X[m,k] W[k,n] runs dX = dY W^T ([m,n] x [n,k]: shape m, k, n) and
//   dW = X^T dY ([k,m] x [m,n]: shape k, n, m), each timed by the GEMM model (dW is the
//   weight-gradient part, OpTime::backward_weight_s; unfused attention's per-head products
//   multiply activations by activations and have none);
//   attention: 2.5 x 73 / 63 = 2.9 x its forward. kerneldb times no backward attention.
//   FlashAttention's backward runs five matrix products per tile to the forward's two (2.5
//   times the FLOPs) and at a lower rate: FlashAttention-2 (Dao 2023, arXiv:2307.08691,
//   section 4, A100) reaches up to 73% of the tensor-core peak in its forward and up to 63%
//   in its backward. That ratio is taken for every device, as no backward attention kernel
//   of the H100 or B200 is timed in the data (an assumption, stated here and in the README);
//   element-wise ops and lookups: 2 x their forward (the upstream gradient read besides
//   the saved input, a gradient written); so is the MoE layer's own routing cost
//   (MoeLayerKernel: the gradients permuted back through the same sort).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hdlab/simulator/roofline.hpp"

#include "kernel_memo.hpp"

namespace hdlab::simulator {

using model::OpClass;
using model::OpKind;

namespace {

constexpr double kAttentionBackward = 2.5 * 0.73 / 0.63;  // FLOPs x (forward / backward rate)
constexpr double kVectorBackward = 2;

// A product as one device runs it.
GemmShape device_gemm(OpKind k, const OpGemm& g, const Roofline& rl, double& groups) {
  const Sharding& s = rl.sharding;
  GemmShape out{g.m, g.n, g.k};
  groups = g.groups;
  if (k == OpKind::experts) groups = std::max(1.0, g.groups / s.ep);  // experts / ep each
  else if (g.split == GemmSplit::heads) groups = std::max(1.0, g.groups / (s.ep * s.tp));  // sequences, heads
  else out.m = g.m / s.ep;                                              // data-parallel rows
  if (g.split == GemmSplit::column) out.n = g.n / s.tp;
  if (g.split == GemmSplit::row) out.k = g.k / s.tp;
  return out;
}

// Bytes an element-wise op streams on one device (roofline.cpp's device share).
double device_bytes(OpKind k, const OpRow& r, const Roofline& rl) {
  const model::OpCost& c = r.cost;
  const double weight_split = k == OpKind::experts ? rl.inv_group : rl.inv_tp;
  const Sharding& s = rl.sharding;  // (activation_ways without the call where every op splits alike)
  const double ways = s.sequence_parallel ? s.tp * s.ep : s.activation_ways(k);
  return (c.act_bytes_in + c.act_bytes_out) / ways + c.weight_bytes * weight_split +
         (c.kv_bytes_read + c.kv_bytes_written) * rl.inv_kv;
}

double streaming_s(const VectorKernel& v, double bytes, double calls) {
  if (bytes <= 0 || calls <= 0) return 0;
  return calls * v.latency_us * 1e-6 + bytes / (v.memory_gb_per_s * 1e9);
}

OpTime attention_time(const OpRow& r, const Roofline& rl, const LayerWork& w, Timing timing) {
  const ModelShape& m = rl.shape;
  const Sharding& s = rl.sharding;
  const double seqs = w.seqs / s.ep, heads = m.H / s.tp;
  const double head_dim = (m.qk_head_dim + m.v_head_dim) / 2;  // 4 hd FLOPs per pair = 2 (qk + v)
  // K/V heads one device reads (MLA: its latent cache as one head of the entry's width)
  const double kv_heads = std::max(1.0, rl.kv_group), kv_dim = m.kv_out / std::max(1.0, m.G) / 2;
  OpTime t;
  if (w.reads_cache) {
    DecodeAttentionShape d;
    d.seqs = seqs;
    d.heads = heads;
    d.kv_heads = kv_heads;
    d.head_dim = kv_dim;
    d.query_rows = w.rows_q;
    d.keys = w.kv_read;
    d.context = w.kv_context;
    d.element_bytes = m.bytes;
    d.kv_bytes = m.kv_el_bytes;
    d.kernel = rl.decode_kernel;
    t.seconds = rl.decode ? decode_attention_seconds(*rl.decode, rl.kernels->sms, rl.decode_key, d) : 0;
  } else {
    PrefillAttentionShape p;
    p.seqs = seqs;
    p.heads = heads;
    p.kv_heads = kv_heads;
    p.head_dim = head_dim;
    p.rows = w.rows_q;
    // the pairs the op's FLOPs count (exact or executed, as the scenario asks), per sequence
    p.pairs = w.seqs > 0 ? r.cost.flops / (2 * m.H * (m.qk_head_dim + m.v_head_dim) * w.seqs) : 0;
    p.longest_row_keys = w.longest_keys > 0 ? w.longest_keys : w.rows_kv;
    p.kv_positions = w.rows_kv;
    p.element_bytes = m.bytes;
    p.kv_bytes = m.kv_el_bytes;  // written to the cache in its precision
    t.seconds = rl.prefill ? prefill_attention_seconds(*rl.prefill, rl.kernels->sms, p) : 0;
  }
  t.compute_bound = !w.reads_cache;
  if (timing == Timing::training) t.backward_s = kAttentionBackward * t.seconds;
  return t;
}

}  // namespace

OpTime kernel_op_time(OpKind k, const OpRow& r, const Roofline& rl, const LayerWork* work, Timing timing) {
  OpTime t;
  if (r.calls <= 0) return t;
  const KernelModels& km = *rl.kernels;
  if (k == OpKind::attention) {
    if (!work) throw std::logic_error("kernel_op_time: attention timed without its layer's work");
    if (!work->scores_materialised) return attention_time(r, rl, *work, timing);
  }  // unfused attention: its two products and the score traffic, as any composite op
  const bool products = r.gemms[0].groups > 0, training = timing == Timing::training;
  if (!products) {  // element-wise, normalisation, lookups
    t.seconds = streaming_s(km.vector, device_bytes(k, r, rl), r.calls);
    t.memory_s = t.seconds;
    if (training) t.backward_s = kVectorBackward * t.seconds;
    return t;
  }
  for (const OpGemm& g : r.gemms) {
    if (g.groups <= 0) continue;
    double groups = 0;
    const GemmShape s = device_gemm(k, g, rl, groups);
    const double forward = grouped_gemm_seconds(*rl.gemm, km.sms, rl.gemm_key, s, groups);
    t.seconds += forward;
    t.compute_s += forward;
    if (!training) continue;
    const double weight_grad = grouped_gemm_seconds(*rl.gemm, km.sms, rl.gemm_key, {s.k, s.n, s.m}, groups);  // dW = X^T dY
    t.backward_s += grouped_gemm_seconds(*rl.gemm, km.sms, rl.gemm_key, {s.m, s.k, s.n}, groups) +  // dX = dY W^T
                    weight_grad;
    if (g.split != GemmSplit::heads) t.backward_weight_s += weight_grad;
  }
  const double inner_bytes = r.inner_vector_bytes * rl.inv_group + r.inner_row_bytes / rl.sharding.ep;
  double inner = streaming_s(km.vector, inner_bytes, r.inner_vector_calls);
  if (k == OpKind::experts && rl.moe_layer && rl.shape.top_k > 0) {
    // The tokens one device routes: the layer's N (rows = N top_k / E) split by ep, as
    // the dense part's rows are; tensor-parallel ranks route them all.
    const double tokens = r.rows * rl.shape.E / rl.shape.top_k / rl.sharding.ep;
    inner += moe_layer_seconds(*rl.moe_layer, tokens * rl.shape.D * rl.shape.bytes);
  }
  t.seconds += inner;
  t.memory_s += inner;
  if (training) t.backward_s += kVectorBackward * inner;
  t.compute_bound = t.compute_s > t.memory_s;
  return t;
}

}  // namespace hdlab::simulator
