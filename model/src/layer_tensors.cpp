// The tensors every node of the layer program reads and writes (tensors.hpp), beside the
// costs of layer_ops.cpp and outside_ops.cpp: shapes [rows, width] over all sequences of
// a run, N = seqs x rows_q rows (KV: seqs x rows_kv), the sizes of OpDims.
#include "hdlab/model/layer_program.hpp"

namespace hdlab::model {

namespace {

using K = TensorKind;

// Appends a node's uses; element bytes default to the activations'.
struct Log {
  const OpDims& s;
  TensorUses& out;
  void use(OpKind op, K t, bool write, double rows, double width, double el_bytes) const {
    if (rows * width > 0) out.push_back(TensorUse{op, t, write, rows, width, el_bytes});
  }
  void read(OpKind op, K t, double rows, double width) const { use(op, t, false, rows, width, s.bytes); }
  void write(OpKind op, K t, double rows, double width) const { use(op, t, true, rows, width, s.bytes); }
  void update(OpKind op, K t, double rows, double width) const {  // read and written in place
    read(op, t, rows, width);
    write(op, t, rows, width);
  }
};

// What a sublayer reads: the residual stream, or the width connection's output under
// hyper-connections.
K sublayer_input(const OpDims& s) { return s.vwn ? K::ghc_x : K::hidden; }

// A pre-norm [N, D] -> normed, and its post-norms on the sublayer's output.
void norm_tensors(const Log& log, OpKind op, double N, double norms) {
  if (norms <= 0) return;
  log.read(op, sublayer_input(log.s), N, log.s.D);
  log.write(op, K::normed, N, log.s.D);
  if (norms > 1) log.update(op, K::sub_out, (norms - 1) * N, log.s.D);
}

// MLA's projections, RoPE and attention as the runner keeps them (runner_mla.cpp): the
// cache entries [c | rope key] from the latent and its RoPE key; training and prefill
// expand the latents per head through kv_b, a decode absorbs the queries into the latent.
void mla_tensors(const Log& log, const LayerFeatures& f, const LayerWork& w, K kv_input) {
  const OpDims& s = log.s;
  const double Nq = w.seqs * w.rows_q, Nkv = w.seqs * w.rows_kv;
  const double r = s.mla_latent, rope = s.rope_dim, nope = s.qk_head_dim - rope, q = s.H * s.qk_head_dim;
  if (s.mla_q_lora > 0) log.update(OpKind::qkv_proj, K::mla_q_latent, Nq, s.mla_q_lora);
  log.write(OpKind::qkv_proj, K::q, Nq, q);
  if (kv_input != K::normed) log.read(OpKind::qkv_proj, kv_input, Nkv, s.D);
  log.write(OpKind::qkv_proj, K::mla_latent, Nkv, r);
  log.write(OpKind::qkv_proj, K::mla_rope_key, Nkv, rope);
  if (!f.nope && rope > 0) {
    log.update(OpKind::rope, K::q, Nq, q);
    log.update(OpKind::rope, K::mla_rope_key, Nkv, rope);
  }
  log.write(OpKind::qkv_proj, K::mla_entries, Nkv, r + rope);
  if (w.reads_cache) {
    log.write(OpKind::qkv_proj, K::mla_q_absorbed, Nq, s.H * (r + rope));
    log.read(OpKind::attention, K::mla_q_absorbed, Nq, s.H * (r + rope));
    log.write(OpKind::attention, K::mla_o_latent, Nq, s.H * r);
    return;
  }
  log.write(OpKind::qkv_proj, K::mla_kv, Nkv, s.H * (s.v_head_dim + nope));
  log.write(OpKind::qkv_proj, K::mla_keys, Nkv, s.H * s.qk_head_dim);
  log.read(OpKind::attention, K::q, Nq, q);
  log.read(OpKind::attention, K::mla_keys, Nkv, s.H * s.qk_head_dim);
  log.read(OpKind::attention, K::mla_kv, Nkv, s.H * (s.v_head_dim + nope));
}

// Q, K and V [Nq, H qk], [Nkv, G qk], [Nkv, G v] from the normed input (and the KV
// source's), QK-norm and RoPE in place, attention reading them.
void qkv_tensors(const Log& log, const LayerFeatures& f, const LayerWork& w, K kv_input) {
  const OpDims& s = log.s;
  const double Nq = w.seqs * w.rows_q, Nkv = w.seqs * w.rows_kv;
  const double q = s.H * s.qk_head_dim, out = s.H * s.v_head_dim;
  const double k = s.G * s.qk_head_dim, v = s.kv_out - k;
  if (kv_input != K::normed) log.read(OpKind::qkv_proj, kv_input, Nkv, s.D);
  log.write(OpKind::qkv_proj, K::q, Nq, q);
  log.write(OpKind::qkv_proj, K::k, Nkv, k);
  log.write(OpKind::qkv_proj, K::v, Nkv, v);
  if (s.output_gate) log.write(OpKind::qkv_proj, K::attn_gate, Nq, out);
  for (OpKind op : {OpKind::qk_norm, OpKind::rope}) {
    if ((op == OpKind::qk_norm && !s.qk_norm) || (op == OpKind::rope && (f.nope || s.rope_dim <= 0))) continue;
    log.update(op, K::q, Nq, q);
    log.update(op, K::k, Nkv, k);
  }
  log.read(OpKind::attention, K::q, Nq, q);
  if (!w.reads_cache) {
    log.read(OpKind::attention, K::k, Nkv, k);
    log.read(OpKind::attention, K::v, Nkv, v);
  }
}

void attention_tensors(const Log& log, const LayerFeatures& f, const LayerWork& w) {
  const OpDims& s = log.s;
  const double Nq = w.seqs * w.rows_q, Nkv = w.seqs * w.rows_kv, D = s.D;
  const double out = s.H * s.v_head_dim;
  norm_tensors(log, OpKind::attn_norm, Nq, s.norms_attn);
  if (f.kv_from_source) log.write(OpKind::attn_norm, K::mirror_input, Nkv, D);  // the source's input, normed
  log.read(OpKind::qkv_proj, K::normed, Nq, D);
  const K kv_input = f.kv_from_source ? K::mirror_input : K::normed;
  if (s.mla_latent > 0) mla_tensors(log, f, w, kv_input);
  else qkv_tensors(log, f, w, kv_input);
  log.use(OpKind::attention, K::kv_cache, false, w.seqs * w.kv_read, s.kv_out, s.kv_el_bytes);
  log.use(OpKind::attention, K::kv_cache, true, w.seqs * w.kv_written, s.kv_out, s.kv_el_bytes);
  if (w.scores_materialised) log.update(OpKind::attention, K::scores, w.seqs * s.H * w.rows_q, w.rows_kv);
  if (w.attention_dropout) log.use(OpKind::attention, K::dropout_mask, true, w.seqs * s.H * w.rows_q, w.rows_kv, 1);
  log.write(OpKind::attention, K::attn, Nq, out);
  log.read(OpKind::o_proj, K::attn, Nq, out);
  if (s.output_gate) log.read(OpKind::o_proj, K::attn_gate, Nq, out);
  log.write(OpKind::o_proj, K::sub_out, Nq, D);
}

// A linear mixer (Gated DeltaNet, Mamba-2): the input projections [N, D] -> q k v (Mamba-2:
// x B C) [N, conv], z [N, out] and the gates b a (Mamba-2: dt) [N, gates]; the conv and the
// state update read those and their states and write [N, conv] and [N, out]; the gated
// norm and out_proj read the update's output and z.
void linear_tensors(const Log& log, MixerKind mixer, const LayerWork& w) {
  const OpDims& s = log.s;
  const double N = w.seqs * w.rows_q;
  const bool gdn = mixer == MixerKind::gated_deltanet;
  const double conv = gdn ? s.gdn.conv_channels() : s.mamba.conv_channels();
  const double out = gdn ? s.gdn.v() : s.mamba.inner(), gates = gdn ? 2 * s.gdn.hv : s.mamba.heads;
  norm_tensors(log, OpKind::attn_norm, N, s.norms_attn);
  log.read(OpKind::qkv_proj, K::normed, N, s.D);
  log.write(OpKind::qkv_proj, K::lin_qkv, N, conv);
  log.write(OpKind::qkv_proj, K::lin_z, N, out);
  log.write(OpKind::qkv_proj, K::lin_ba, N, gates);
  log.read(OpKind::attention, K::lin_qkv, N, conv);
  log.read(OpKind::attention, K::lin_ba, N, gates);
  log.write(OpKind::attention, K::lin_conv, N, conv);
  log.write(OpKind::attention, K::lin_o, N, out);
  // The states: read when decoding, written by every pass (a prefill from zero states).
  const LayerCache c = layer_cache(s, mixer, 0, w.seqs * (w.recurrent_states > 0 ? w.recurrent_states : 1));
  for (const TensorUse& u : {c.state, c.conv}) {
    if (w.reads_cache) log.use(OpKind::attention, u.tensor, false, u.rows, u.width, u.el_bytes);
    log.use(OpKind::attention, u.tensor, true, u.rows, u.width, u.el_bytes);
  }
  log.read(OpKind::o_proj, K::lin_o, N, out);
  log.read(OpKind::o_proj, K::lin_z, N, out);
  log.write(OpKind::o_proj, K::sub_out, N, s.D);
}

// Routed experts: the router's logits and top-k, the token copies grouped by expert
// (int32 ids, fp32 weights), and per expert its tokens [N k / E, .] through gate/up, the
// activation and down, added into the sublayer's output.
void moe_tensors(const Log& log, double N) {
  const OpDims& s = log.s;
  log.read(OpKind::router, K::normed, N, s.D);
  log.write(OpKind::router, K::router_logits, N, s.E);
  for (K t : {K::route_ids, K::route_weights}) log.use(OpKind::router, t, true, N, s.top_k, 4);
  for (K t : {K::moe_ids, K::moe_weights}) log.use(OpKind::router, t, true, N * s.top_k, 1, 4);
  log.read(OpKind::experts, K::normed, N, s.D);
  for (K t : {K::moe_ids, K::moe_weights}) log.use(OpKind::experts, t, false, N * s.top_k, 1, 4);
  const double per_expert = s.E > 0 ? N * s.top_k / s.E : 0;
  log.write(OpKind::experts, K::expert_x, per_expert, s.D);
  log.update(OpKind::experts, K::expert_gate_up, per_expert, 2 * s.Fe);
  log.update(OpKind::experts, K::expert_act, per_expert, s.Fe);
  log.update(OpKind::experts, K::expert_out, per_expert, s.D);
  log.write(OpKind::experts, K::sub_out, N, s.D);
  if (s.S <= 0) return;
  // Each shared expert in turn through the dense FFN's buffers, summed (gated: apart,
  // then scaled by sigmoid of its logit) into the output.
  log.read(OpKind::shared_experts, K::normed, N, s.D);
  log.update(OpKind::shared_experts, K::gate_up, N, 2 * s.Fs);
  log.update(OpKind::shared_experts, K::act, N, s.Fs);
  if (s.shared_gate) {
    log.update(OpKind::shared_experts, K::shared_out, N, s.D);
    log.update(OpKind::shared_experts, K::shared_gate, N, 1);
  }
  log.update(OpKind::shared_experts, K::sub_out, N, s.D);
}

void ffn_tensors(const Log& log, const LayerFeatures& f, const LayerWork& w) {
  const OpDims& s = log.s;
  const double N = w.seqs * w.rows_q;
  norm_tensors(log, OpKind::ffn_norm, N, s.norms_ffn);
  if (f.moe) return moe_tensors(log, N);
  const double up = s.gelu || s.relu2 ? s.F : 2 * s.F;  // SwiGLU: gate and up
  log.read(OpKind::ffn_gate_up, K::normed, N, s.D);
  log.write(OpKind::ffn_gate_up, K::gate_up, N, up);
  log.read(OpKind::ffn_act, K::gate_up, N, up);
  log.write(OpKind::ffn_act, K::act, N, s.F);
  log.read(OpKind::ffn_down, K::act, N, s.F);
  log.write(OpKind::ffn_down, K::sub_out, N, s.D);
}

// The residual around each sublayer: an add [N, D], or under hyper-connections the
// width connection (the wide state [N, D'] -> the sublayer input [N, D] and the carried
// state [N, D']) and the depth connection (sublayer output and carried state -> the wide
// state), with VWN's per-slot norm and the dynamic coefficients (fp32) where they run.
void residual_tensors(const Log& log, const LayerWork& w, double sublayers) {
  const OpDims& s = log.s;
  const double N = w.seqs * w.rows_q, D = s.D;
  const OpKind add = s.vwn ? OpKind::ghc_depth : OpKind::residual;
  if (w.hidden_dropout) log.use(add, K::dropout_mask, true, sublayers * N, D, 1);
  if (!s.vwn) {
    log.read(add, K::sub_out, N, D);
    log.update(add, K::hidden, N, D);
    return;
  }
  const double m = s.vwn_m, n = s.vwn_n, wide = n / s.vwn_m * D;
  const bool dynamic = s.vwn_dynamic || s.module_mixing;
  if (s.vwn_dynamic) {
    log.read(OpKind::ghc_norm, K::hidden, N, wide);
    log.write(OpKind::ghc_norm, K::ghc_hn, N, wide);
  }
  if (dynamic) {
    log.read(OpKind::ghc_dynamic, s.module_mixing ? K::hidden : K::ghc_hn, N, wide);
    log.use(OpKind::ghc_dynamic, K::ghc_alpha, true, N, n * (m + n), 4);
    log.use(OpKind::ghc_dynamic, K::ghc_beta, true, N, m * n, 4);
    log.use(OpKind::ghc_width, K::ghc_alpha, false, N, n * (m + n), 4);
    log.use(OpKind::ghc_depth, K::ghc_beta, false, N, m * n, 4);
  }
  log.read(OpKind::ghc_width, K::hidden, N, wide);
  log.write(OpKind::ghc_width, K::ghc_x, N, D);
  log.write(OpKind::ghc_width, K::ghc_carry, N, wide);
  log.read(OpKind::ghc_depth, K::sub_out, N, D);
  log.read(OpKind::ghc_depth, K::ghc_carry, N, wide);
  log.write(OpKind::ghc_depth, K::hidden, N, wide);
}

}  // namespace

void layer_tensors(const OpDims& s, const LayerFeatures& f, const LayerWork& w, TensorUses& out) {
  const Log log{s, out};
  switch (f.mixer) {
    case MixerKind::attention: attention_tensors(log, f, w); break;
    case MixerKind::gated_deltanet:
    case MixerKind::mamba2: linear_tensors(log, f.mixer, w); break;
    case MixerKind::none: break;
  }
  if (f.ffn) ffn_tensors(log, f, w);
  residual_tensors(log, w, (f.mixer != MixerKind::none ? 1 : 0) + (f.ffn ? 1 : 0));
}

void outside_tensors(const OpDims& s, const OutsideWork& w, TensorUses& out) {
  const Log log{s, out};
  const double D = s.D, rows = w.seqs * w.embed_rows, loss = w.seqs * w.logit_rows;
  const bool projected = s.vwn && s.vwn_projected;
  const double wide = s.vwn ? s.vwn_n / s.vwn_m * D : D;
  log.use(OpKind::embedding, K::token_ids, false, rows, 1, 4);
  // VWN's own table writes D' a row; a copied embedding the D-wide row into each of n slots
  log.write(OpKind::embedding, projected ? K::embed_tmp : K::hidden, rows, projected ? D : wide);
  if (projected) {
    log.read(OpKind::vwn_embed_proj, K::embed_tmp, rows, D);
    log.write(OpKind::vwn_embed_proj, K::hidden, rows, wide);
  }
  if (s.injection) {  // [h; e] -> the adapter's output, once per iteration
    const double r = w.seqs * w.recurrent_rows;
    log.read(OpKind::injection, K::hidden, r, D);
    log.read(OpKind::injection, K::inject_e, r, D);
    log.write(OpKind::injection, K::hidden_b, r, D);
  }
  K final_in = K::hidden;
  if (s.vwn) {  // VWN: GroupNorm over D' and the reduce to D; a summed readout: the slots summed
    log.read(OpKind::vwn_reduce, K::hidden, loss, wide);
    if (!s.summed_readout) log.update(OpKind::vwn_reduce, K::out_norm, loss, wide);
    log.write(OpKind::vwn_reduce, K::out_reduce, loss, D);
    final_in = K::out_reduce;
  }
  if (s.vwn && s.vwn_mtp && w.mtp_rows > 0) {  // the next token's embedding, mix and output path
    const double r = w.seqs * w.mtp_rows;
    for (K t : {K::mtp_e, K::mtp_mix, K::mtp_norm}) log.update(OpKind::mtp, t, r, wide);
    for (K t : {K::mtp_reduce, K::mtp_final}) log.update(OpKind::mtp, t, r, D);
    log.write(OpKind::mtp, K::mtp_logits, r, s.V);
    log.use(OpKind::mtp, K::mtp_ids, false, r, 1, 4);
  }
  log.read(OpKind::final_norm, final_in, loss, D);
  log.write(OpKind::final_norm, K::out_final, loss, D);
  log.read(OpKind::lm_head, K::out_final, loss, D);
  log.write(OpKind::lm_head, K::logits, loss, s.V);
}

}  // namespace hdlab::model
