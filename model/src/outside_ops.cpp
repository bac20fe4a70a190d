// The op nodes outside the layers (embeddings, injection, the output path, VWN's
// multi-token prediction) and the tensors they read and write; conventions in
// layer_program.hpp, the layers' nodes in layer_ops.cpp.
#include <array>
#include <cmath>

#include "hdlab/model/layer_program.hpp"
#include "layer_ops_internal.hpp"

namespace hdlab::model {

namespace {

using detail::gemm_op;
using detail::norm_op;
using detail::vector_op;

// A summed readout (mHC's) on `rows` rows: the n slots of D summed into a zeroed D-wide
// row (a zero fill, then the depth connection with all-one coefficients): 2nD FLOPs a row.
void summed_readout_op(OpNode& r, double rows, const OpDims& s) {
  const double n = s.vwn_n, D = s.D;
  vector_op(r, 2 * rows * n * D, 0, rows * (n * D + D), 2 * rows * D, s);
  r.calls = 2;
}

// Lookups of `rows` positions in tables of `table_rows` rows of `width`: the weight
// bytes are the distinct rows gathered (at most every table row), the ids int32.
void lookup_op(OpNode& r, double rows, double table_rows, double width, const OpDims& s) {
  r.cost.weight_bytes = std::fmin(rows, table_rows) * width * s.weight_el_bytes;
  r.cost.act_bytes_in = rows * 4;
  r.cost.act_bytes_out = rows * width * s.bytes;
  r.calls = 1;
}

// VWN's output reduce on `rows` rows: GroupNorm over D' (an affine weight and bias per
// channel), then the linear D' -> D.
void vwn_reduce_op(OpNode& red, double rows, double wide, double D, const OpDims& s) {
  gemm_op(red, rows, wide, D, 0, s);
  red.cost.flops += 4 * rows * wide;
  red.cost.weight_bytes += 2 * wide * s.weight_el_bytes;
  red.params += 2 * wide;
  red.calls = 2;
  red.inner_vector_bytes = 2 * rows * wide * s.bytes;  // the GroupNorm
  red.inner_vector_calls = 1;
}

// VWN multi-token prediction on the `rows` loss rows of a training pass. The auxiliary
// loss needs logits, so besides the mixing linear (one 2D/m -> D/m shared across the n
// blocks: [rows, n, 2D/m] -> [rows, n, D/m]) it runs the next token's over-width
// embedding (a lookup, or the normal one projected D -> D') and the output path again
// (GroupNorm + reduce, final norm, head): all of it one row, as the executor times it.
// Only the mixing linear's weights are its own; the rest are the main path's.
void mtp_op(const OpDims& s, double rows, OpNode& mtp) {
  const double D = s.D, slot = D / s.vwn_m, wide = s.vwn_n / s.vwn_m * D;
  mtp = OpNode{};
  mtp.params = 2 * slot * slot;
  if (rows <= 0) return;  // prefill and decode: resident, not run
  std::array<OpNode, 6> parts{};
  lookup_op(parts[0], rows, s.V_in, s.vwn_projected ? D : wide, s);
  if (s.vwn_projected) gemm_op(parts[1], rows, D, wide, 0, s);
  gemm_op(parts[2], rows * s.vwn_n, 2 * slot, slot, 0, s);
  vwn_reduce_op(parts[3], rows, wide, D, s);
  norm_op(parts[4], s, rows, 1);  // final norm
  gemm_op(parts[5], rows, D, s.V, 0, s);                         // head
  for (const OpNode& p : parts) {
    mtp.cost += p.cost;
    mtp.calls += p.calls;
  }
  mtp.rows = rows;  // the head's GEMM dominates: M = the loss rows, and the logits it keeps
  mtp.weight_dim_min = std::fmin(D, s.V);
  // Kernel models: the head and the mixing linear as products, the rest streamed.
  mtp.gemms = {parts[5].gemms[0], parts[2].gemms[0]};
  mtp.gemms[1].split = GemmSplit::replicated;
  mtp.inner_vector_bytes = parts[0].cost.bytes() + parts[1].cost.bytes() + parts[3].cost.bytes() + parts[4].cost.bytes();
  mtp.inner_vector_calls = 4;
}

}  // namespace

void outside_ops(const OpDims& s, const OutsideWork& w, OpNodes& out, TensorUses* tensors) {
  out = OpNodes{};
  if (tensors) outside_tensors(s, w, *tensors);
  const double e = s.bytes, D = s.D;
  const double wide = s.vwn ? s.vwn_n / s.vwn_m * D : D;
  const double embed_rows = w.seqs * w.embed_rows, logits = w.seqs * w.logit_rows;
  const bool wide_table = s.vwn && !s.vwn_projected && !s.copied_embedding;  // VWN's over-width table

  // Resident parameters are every table; HD looks up one row per stream from its table.
  OpNode& emb = node(out, OpKind::embedding);
  lookup_op(emb, embed_rows, s.hd_n * s.V_in, wide_table ? wide : D, s);
  emb.params = wide_table ? s.V_in * wide : s.hd_n * s.V_in * D;
  if (s.copied_embedding) {  // the D-wide row looked up once per slot, written into each of the n slots
    emb.cost.act_bytes_in *= s.vwn_n;
    emb.cost.act_bytes_out *= s.vwn_n;
    emb.calls = s.vwn_n;
  }
  if (s.position_rows > 0) {  // learned positions: a row per position, read and added
    emb.params += s.position_rows * D;
    emb.cost.weight_bytes += std::fmin(w.embed_rows, s.position_rows) * D * s.weight_el_bytes;
    emb.cost.act_bytes_in += embed_rows * D * e;
    emb.cost.flops += embed_rows * D;
  }
  if (s.vwn && s.vwn_projected) gemm_op(node(out, OpKind::vwn_embed_proj), embed_rows, D, wide, 0, s);
  if (s.summed_readout)
    summed_readout_op(node(out, OpKind::vwn_reduce), logits, s);
  else if (s.vwn)
    vwn_reduce_op(node(out, OpKind::vwn_reduce), logits, wide, D, s);
  if (s.injection) {
    // [h; e] [N, 2D] -> [N, D] once per iteration; one adapter shared by the iterations.
    OpNode& inj = node(out, OpKind::injection);
    gemm_op(inj, w.seqs * w.recurrent_rows, 2 * D, D, 0, s);
    const double k = s.loop_iterations;
    inj.cost = OpCost{inj.cost.flops * k, inj.cost.weight_bytes * k, inj.cost.act_bytes_in * k,
                             inj.cost.act_bytes_out * k, 0, 0};
    inj.calls = k;
    inj.gemms[0].groups = k;  // k launches of one shape, timed as k groups of one
  }
  if (s.vwn && s.vwn_mtp) mtp_op(s, w.seqs * w.mtp_rows, node(out, OpKind::mtp));
  norm_op(node(out, OpKind::final_norm), s, logits, 1);
  OpNode& head = node(out, OpKind::lm_head);
  gemm_op(head, logits, D, s.V, 0, s);
  if (s.tied) head.params = 0;  // the input table's weights, counted there
}

}  // namespace hdlab::model
