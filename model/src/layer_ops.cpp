// The op nodes of one layer run: with outside_ops.cpp (the ops outside the layers), the
// one place the FLOPs and bytes of every op are written. Shapes in comments are per pass:
// N rows of width D, e bytes per element; conventions in layer_program.hpp. The tensors
// the nodes read and write are listed beside them in layer_tensors.cpp.
#include <array>
#include <cmath>

#include "hdlab/model/layer_program.hpp"
#include "layer_ops_internal.hpp"

namespace hdlab::model {

namespace {

using detail::gemm_op;
using detail::norm_op;
using detail::vector_op;

// Expected distinct experts hit by `tokens` tokens each picking top_k of E experts,
// under balanced (uniform) routing: E * (1 - (1 - k/E)^tokens).
double experts_hit(double E, double k, double tokens) {
  if (E <= 0 || tokens <= 0) return 0;
  if (k >= E) return E;
  return E * (1 - std::exp(tokens * std::log1p(-k / E)));
}

// The q, k and v projections: [Nq, D] -> q [Nq, H*qk] (and the output gate's half,
// gate_el elements); [Nkv, D] -> k, v [Nkv, kv_out]. kv_b: MLA's absorbed up-projection
// multiply-adds, moved from the key rows to the query rows.
void qkv_projection(const OpDims& s, const LayerFeatures& f, double Nq, double Nkv, double kv_b, double gate_el,
                    OpNode& qkv) {
  const double e = s.bytes;
  qkv.cost.flops = 2 * (Nq * (s.q_weights + kv_b) + Nkv * (s.kv_weights - kv_b)) + Nq * s.q_bias + Nkv * s.kv_bias;
  qkv.params = s.q_weights + s.q_bias + s.kv_weights + s.kv_bias;
  qkv.cost.weight_bytes = qkv.params * s.weight_el_bytes;
  qkv.cost.act_bytes_in = (f.kv_from_source ? Nq + Nkv : Nq) * s.D * e;
  qkv.cost.act_bytes_out = (Nq * s.H * s.qk_head_dim + gate_el + Nkv * s.kv_out) * e;
  qkv.calls = 1;
  qkv.rows = Nq;
  qkv.weight_dim_min = s.D < s.G * s.qk_head_dim ? s.D : s.G * s.qk_head_dim;
  // q and the K/V projections as their products (MLA's low-rank paths as one product of
  // the same multiply-adds per row). Where q, k and v project the same rows of the same
  // input, engines run them as one product of the concatenated weights (Megatron's
  // linear_qkv, TensorRT-LLM's and vLLM's fused QKV), as the gate and up halves are.
  if (s.mla_latent == 0 && !f.kv_from_source && Nq == Nkv)
    qkv.gemms = {OpGemm{Nq, (s.q_weights + s.kv_weights) / s.D, s.D, 1, GemmSplit::column}, OpGemm{}};
  else
    qkv.gemms = {OpGemm{Nq, s.q_weights / s.D, s.D, 1, GemmSplit::column},
                 OpGemm{Nkv, s.kv_weights / s.D, s.D, 1, GemmSplit::column}};
}

// Unfused attention: Q K^T and P V as per-(sequence, head) products, and the scores
// [seqs, H, rows_q, rows_kv] written, read and written by the softmax, read by P V.
void unfused_attention(const OpDims& s, const LayerWork& w, double qk, double vd, OpNode& att) {
  const double e = s.bytes;
  const double heads = w.seqs * s.H;
  att.gemms = {OpGemm{w.rows_q, w.rows_kv, qk, heads, GemmSplit::heads},
               OpGemm{w.rows_q, vd, w.rows_kv, heads, GemmSplit::heads}};
  att.inner_vector_bytes = 4 * heads * w.pairs_executed * e;
  att.inner_vector_calls = 1;
  att.calls = 3;
  if (w.attention_dropout) {  // reads the probabilities, writes the dropped ones and the mask
    att.inner_vector_bytes += heads * w.pairs_executed * (2 * e + 1);
    att.inner_vector_calls += 1;
    att.calls += 1;
  }
}

void attention_ops(const OpDims& s, const LayerFeatures& f, const LayerWork& w, bool executed, OpNodes& t) {
  const double e = s.bytes;
  const double Nq = w.seqs * w.rows_q, Nkv = w.seqs * w.rows_kv;
  // KV mirror: K/V come from an early layer's input, normalised here with this layer's
  // own norm weights, so the norm runs over both inputs.
  const double norm_rows = f.kv_from_source ? Nq + Nkv : Nq;
  const double post = s.norms_attn > 1 ? (s.norms_attn - 1) * Nq : 0;  // post-norms on the output
  if (s.norms_attn > 0) norm_op(node(t, OpKind::attn_norm), s, norm_rows + post, s.norms_attn);

  // MLA: a decode attends in the latent (absorbed weights); kv_b's multiply-adds then run
  // on the query rows (W_UK on each query, W_UV on each output) rather than the key rows.
  const bool absorbed = s.mla_latent > 0 && w.reads_cache;
  const double kv_b = absorbed ? s.mla_latent * s.H * (s.qk_head_dim - s.rope_dim + s.v_head_dim) : 0;

  const double gate_el = s.output_gate ? Nq * s.H * s.v_head_dim : 0;  // gated attention: the gate half of q_proj
  qkv_projection(s, f, Nq, Nkv, kv_b, gate_el, node(t, OpKind::qkv_proj));

  // MLA: one RoPE key per row, shared by the heads; a decode scores the cached latents
  // with absorbed queries [q_nope W_UK | q_rope] and sums latent values.
  const double qk = absorbed ? s.mla_latent + s.rope_dim : s.qk_head_dim;
  const double vd = absorbed ? s.mla_latent : s.v_head_dim;
  const double q_el = Nq * s.H * qk, k_el = Nkv * s.G * s.qk_head_dim;
  if (s.qk_norm) vector_op(node(t, OpKind::qk_norm), 4 * (q_el + k_el), s.qk_norm_weights, q_el + k_el, q_el + k_el, s);
  const double rope_el = f.nope ? 0 : (Nq * s.H + Nkv * (s.mla_latent > 0 ? 1 : s.G)) * s.rope_dim;
  vector_op(node(t, OpKind::rope), 3 * rope_el, 0, rope_el, rope_el, s);

  // softmax(q k^T) v over the visible pairs: [Nq, H, qk] x keys -> [Nq, H, v]
  OpNode& att = node(t, OpKind::attention);
  const double per_pair = 2 * s.H * (qk + vd);  // 4*hd*H for GQA
  att.cost.flops = per_pair * w.seqs * (executed ? w.pairs_executed : w.pairs_exact);
  att.cost.act_bytes_in = (q_el + (w.reads_cache ? 0 : Nkv * s.kv_out)) * e;
  att.cost.act_bytes_out = Nq * s.H * vd * e;
  att.cost.kv_bytes_read = w.seqs * w.kv_read * s.kv_out * s.kv_el_bytes;
  att.cost.kv_bytes_written = w.seqs * w.kv_written * s.kv_out * s.kv_el_bytes;
  att.calls = 1;
  att.rows = w.rows_q;
  // Attention sinks: H learned logits read by the kernel; each joins the softmax's
  // denominator of its head (exp and add per query row and head: softmax work, not
  // counted like the rest of the softmax).
  att.params = s.sinks;
  att.cost.weight_bytes = s.sinks * s.weight_el_bytes;
  if (w.scores_materialised) unfused_attention(s, w, qk, vd, att);

  OpNode& o = node(t, OpKind::o_proj);
  gemm_op(o, Nq, s.H * s.v_head_dim, s.D, s.o_bias, s, GemmSplit::row);
  if (s.output_gate) {  // attention * sigmoid(gate) [Nq, H*v]: 5 FLOPs an element, fused before o_proj
    o.cost.flops += 5 * gate_el;
    o.cost.act_bytes_in += gate_el * e;
    o.inner_vector_bytes = 3 * gate_el * e;
    o.inner_vector_calls = 1;
    o.calls = 2;
  }
}

// A linear mixer's output: RMSNorm(out) * w * SiLU(z) over [N, width] (4 + 5 FLOPs an
// element, z read, a norm weight of `norm_weight`), fused before out_proj [N, width] -> [N, D].
void gated_norm_out_proj(const OpDims& s, double N, double width, double norm_weight, OpNode& o) {
  gemm_op(o, N, width, s.D, 0, s, GemmSplit::row);
  const double out_el = N * width;
  o.cost.flops += 9 * out_el;
  o.cost.act_bytes_in += out_el * s.bytes;  // z
  o.cost.weight_bytes += norm_weight * s.weight_el_bytes;
  o.params += norm_weight;
  o.inner_vector_bytes = 3 * out_el * s.bytes;
  o.inner_vector_calls = 1;
  o.calls = 2;
}

// A Gated DeltaNet layer's mixer in place of attention: [N, D] -> in_proj_qkvz and
// in_proj_ba [N, 2 qk + 2 v + 2 hv]; the conv and the gated delta rule (gdn_*_cost) over
// `recurrent_states` state sequences of rows_q / states tokens; the SiLU(z)-gated RMSNorm
// of d_v and out_proj [N, v] -> [N, D]. Its recurrent and conv states are the layer's
// "KV" traffic (kv_bytes_*), no positions, no QK-norm weights (the L2 norm of q and k is
// counted inside the rule, where the kernels run it).
void gdn_ops(const OpDims& s, const LayerWork& w, OpNodes& t) {
  const GdnDims& g = s.gdn;
  const double e = s.bytes, N = w.seqs * w.rows_q;
  const double post = s.norms_attn > 1 ? (s.norms_attn - 1) * N : 0;
  if (s.norms_attn > 0) norm_op(node(t, OpKind::attn_norm), s, N + post, s.norms_attn);
  gemm_op(node(t, OpKind::qkv_proj), N, s.D, 2 * g.qk() + 2 * g.v() + 2 * g.hv, 0, s);

  OpNode& mix = node(t, OpKind::attention);
  const double states = w.recurrent_states > 0 ? w.recurrent_states : 1;
  const double seqs = w.seqs * states, tokens = w.rows_q / states;
  mix.cost = gdn_conv_cost(g, seqs, tokens, w.reads_cache, e);
  mix.cost += gdn_rule_cost(g, seqs, tokens, w.reads_cache, e);
  mix.params = g.conv_channels() * g.kernel + 2 * g.hv;  // conv1d, A_log, dt_bias
  mix.cost.weight_bytes = mix.params * s.weight_el_bytes;
  mix.calls = 2;
  mix.rows = w.rows_q;

  gated_norm_out_proj(s, N, g.v(), g.dv, node(t, OpKind::o_proj));
}

// A Mamba-2 layer's mixer in place of attention: [N, D] -> in_proj [N, 2 I + 2 G N + H]
// (z, x, B, C, dt); the conv and the SSD scan (mamba2_*_cost) over `recurrent_states`
// state sequences of rows_q / states tokens; the SiLU(z)-gated RMSNorm (a weight of I)
// and out_proj [N, I] -> [N, D]. Like Gated DeltaNet: state traffic as kv_bytes_*, no
// positions.
void mamba2_ops(const OpDims& s, const LayerWork& w, OpNodes& t) {
  const Mamba2Dims& m = s.mamba;
  const double e = s.bytes, N = w.seqs * w.rows_q;
  const double post = s.norms_attn > 1 ? (s.norms_attn - 1) * N : 0;
  if (s.norms_attn > 0) norm_op(node(t, OpKind::attn_norm), s, N + post, s.norms_attn);
  gemm_op(node(t, OpKind::qkv_proj), N, s.D, m.in_proj_width(), 0, s);

  OpNode& mix = node(t, OpKind::attention);
  const double states = w.recurrent_states > 0 ? w.recurrent_states : 1;
  const double seqs = w.seqs * states, tokens = w.rows_q / states;
  mix.cost = mamba2_conv_cost(m, seqs, tokens, w.reads_cache, e);
  mix.cost += mamba2_ssd_cost(m, seqs, tokens, w.reads_cache, e);
  mix.params = m.conv_channels() * (m.kernel + (m.conv_bias ? 1 : 0)) + 3 * m.heads;  // conv1d, A_log, dt_bias, D
  mix.cost.weight_bytes = mix.params * s.weight_el_bytes;
  mix.calls = 2;
  mix.rows = w.rows_q;

  gated_norm_out_proj(s, N, m.inner(), m.inner(), node(t, OpKind::o_proj));
}

// `groups` experts of width F, each given tokens / groups of the T token copies.
// `act` FLOPs per element of the activation; `bias`: bias elements per token (2F + D or 0).
void swiglu(OpNode& r, double tokens, double D, double F, double e, double groups = 1, double act = 5,
            double bias = 0) {  // e: activation bytes
  // gate/up [T, D] -> [T, 2F]; SiLU(gate)*up -> [T, F]; down [T, F] -> [T, D]
  r.cost.flops = tokens * (2 * D * 2 * F + act * F + 2 * F * D + bias);
  r.cost.act_bytes_in = tokens * (D + 2 * F + F) * e;
  r.cost.act_bytes_out = tokens * (2 * F + F + D) * e;
  r.calls = 3;
  const double per_group = groups > 0 ? tokens / groups : 0;
  r.gemms = {OpGemm{per_group, 2 * F, D, groups, GemmSplit::column}, OpGemm{per_group, D, F, groups, GemmSplit::row}};
  r.inner_vector_bytes = tokens * 3 * F * e;  // the activation reads gate and up, writes one
  r.inner_vector_calls = 1;
}

void ffn_ops(const OpDims& s, const LayerFeatures& f, const LayerWork& w, OpNodes& t) {
  const double e = s.bytes, N = w.seqs * w.rows_q;  // e: activation bytes
  if (s.norms_ffn > 0) norm_op(node(t, OpKind::ffn_norm), s, N * s.norms_ffn, s.norms_ffn);
  if (!f.moe) {
    const double bias_in = s.mlp_bias ? (s.gelu || s.relu2 ? 1 : 2) * s.F : 0, bias_out = s.mlp_bias ? s.D : 0;
    if (s.gelu || s.relu2) {  // up [N, D] -> [N, F]; GELU (tanh form, ~8 FLOPs an element) or
                              // relu(x)^2 (2: the max and the square); down
      gemm_op(node(t, OpKind::ffn_gate_up), N, s.D, s.F, bias_in, s);
      vector_op(node(t, OpKind::ffn_act), (s.gelu ? 8 : 2) * N * s.F, 0, N * s.F, N * s.F, s);
    } else {  // gate and up [N, D] -> [N, 2F]; SiLU(gate) * up -> [N, F]; down
      OpNode& gate_up = node(t, OpKind::ffn_gate_up);
      gemm_op(gate_up, N, s.D, 2 * s.F, bias_in, s);
      if (w.separate_gate_up) {  // two launches of [N, D] x [D, F], the input read by each
        gate_up.gemms = {OpGemm{N, s.F, s.D, 1, GemmSplit::column}, OpGemm{N, s.F, s.D, 1, GemmSplit::column}};
        gate_up.calls = 2;
        gate_up.cost.act_bytes_in *= 2;
      }
      vector_op(node(t, OpKind::ffn_act), 5 * N * s.F, 0, 2 * N * s.F, N * s.F, s);
    }
    gemm_op(node(t, OpKind::ffn_down), N, s.F, s.D, bias_out, s, GemmSplit::row);
    return;
  }
  // Router logits [N, D] x [D, E]; top-k selection not counted.
  OpNode& router = node(t, OpKind::router);
  vector_op(router, 2 * N * s.D * s.E + N * s.router_bias, s.E * s.D + s.router_bias, N * s.D, N * s.E, s);
  router.gemms = {OpGemm{N, s.E, s.D, 1, GemmSplit::replicated}, OpGemm{}};
  router.inner_vector_bytes = N * s.E * e;  // the top-k reads the logits
  router.inner_vector_calls = 1;
  // Routed experts: N*k token copies, balanced over E experts; weights of the experts hit.
  OpNode& ex = node(t, OpKind::experts);
  const double expert_params = 3 * s.D * s.Fe + s.expert_bias, hit = experts_hit(s.E, s.top_k, N);
  swiglu(ex, N * s.top_k, s.D, s.Fe, e, hit, s.expert_act_flops, s.expert_bias);
  ex.params = s.E * expert_params;
  ex.cost.weight_bytes = hit * expert_params * s.weight_el_bytes;
  // The token copies are permuted to their experts and back (read and written each way).
  ex.inner_row_bytes = 4 * N * s.top_k * s.D * e;
  ex.inner_vector_calls += 2;
  ex.rows = N * s.top_k / s.E;
  ex.weight_dim_min = s.D < s.Fe ? s.D : s.Fe;
  if (s.S > 0) {
    OpNode& sh = node(t, OpKind::shared_experts);
    swiglu(sh, N * s.S, s.D, s.Fs, e);
    sh.gemms = {OpGemm{N, 2 * s.S * s.Fs, s.D, 1, GemmSplit::column}, OpGemm{N, s.D, s.S * s.Fs, 1, GemmSplit::row}};
    sh.params = s.S * 3 * s.D * s.Fs;
    sh.cost.weight_bytes = sh.params * s.weight_el_bytes;
    sh.rows = N;
    sh.weight_dim_min = s.D < s.Fs ? s.D : s.Fs;
    if (s.shared_gate) {
      // sigmoid(x w_g) [N, 1] scales the shared output: the gate's product (2D a row), its
      // sigmoid (4 a row, as the attention output gate counts it) and the scaling (1 an
      // element); the logit written and read.
      sh.cost.flops += N * (2 * s.D + 4 + s.D);
      sh.params += s.D;
      sh.cost.weight_bytes += s.D * s.weight_el_bytes;
      sh.cost.act_bytes_out += N * e;
      sh.cost.act_bytes_in += N * e;
      sh.inner_vector_bytes += 2 * N * s.D * e;  // the scaling reads and writes the shared output
      sh.inner_vector_calls += 2;
      sh.calls += 2;
    }
  }
}

// The two hyper-connections of a wide residual (around attention and FFN), per-token
// FLOPs as VWN publishes them: norm 4rD, dynamic 2(2m+n)rD, width 2(m+n)rD, depth 2nD
// (r = n/m). A design computing its coefficients with its own op (mHC's Sinkhorn
// projection, module_mixing) costs that node itself; its width and depth connections
// are these with no static coefficients to read.
void ghc_ops(const OpDims& s, const LayerWork& w, OpNodes& t) {
  const double N = w.seqs * w.rows_q, m = s.vwn_m, n = s.vwn_n, D = s.D;
  const double r = n / m, slot = D / m, wide = r * D;
  const double coefficients = n * (m + n) + m * n;  // alpha and beta per token
  // Static m = n starts as the residual connection, but its A and B are trained: the
  // width and depth connections run as for any m, n.
  if (s.module_mixing) {
    design_mixing_ops(s.method, s, N, t);
  } else if (s.vwn_dynamic) {
    vector_op(node(t, OpKind::ghc_norm), 2 * N * 4 * wide, 2 * slot, 2 * N * wide, 2 * N * wide, s);
    vector_op(node(t, OpKind::ghc_dynamic), 2 * N * 2 * (2 * m + n) * wide, 2 * (slot * (m + n) + slot * m + 2),
              2 * N * wide, 2 * N * coefficients, s);
  }
  const double static_width = s.module_mixing ? 0 : 2 * n * (m + n), static_depth = s.module_mixing ? 0 : 2 * m * n;
  // H' [N, n, D/m] -> sublayer input [N, m, D/m] and carried state [N, n, D/m]
  vector_op(node(t, OpKind::ghc_width), 2 * N * 2 * (m + n) * wide, static_width, 2 * N * (wide + coefficients),
            2 * N * (m + n) * slot, s);
  // Z [N, m, D/m] and carried state -> new H' [N, n, D/m]
  vector_op(node(t, OpKind::ghc_depth), 2 * N * 2 * n * D, static_depth, 2 * N * (D + wide), 2 * N * wide, s);
}

}  // namespace

OpCost gdn_conv_cost(const GdnDims& g, double seqs, double tokens, bool decode, double act_bytes) {
  return causal_conv_cost(g.conv_channels(), g.kernel, false, seqs, tokens, decode, act_bytes, g.state_el_bytes);
}

OpCost gdn_rule_cost(const GdnDims& g, double seqs, double tokens, bool decode, double act_bytes) {
  const double dk = g.dk, dv = g.dv, N = seqs * tokens, state = seqs * g.state_elements() * g.state_el_bytes;
  const double gates = 10 * N * g.hv + 3 * N * 2 * g.qk();  // decay and beta; L2 norm of q and k
  OpCost c;
  if (decode) {
    c.flops = N * g.hv * 7 * dk * dv + gates;
    c.kv_bytes_read = state;
  } else {
    const double C = g.chunk, chunks = std::ceil(tokens / C);
    const double per_chunk = C * C * (6 * dk + 4 * dv) + 2 * C * C * C / 3 + 6 * C * dk * dv;
    c.flops = seqs * chunks * g.hv * per_chunk + gates;
    // The chunked form runs as several kernels that hand each other, through memory, the
    // chunk's decay-masked k k^T (fp32, [N, hv, C]), the W and U of its WY form and the
    // corrected values ([N, hv, dk], 2 x [N, hv, dv]) and the state entering every chunk
    // ([seqs * chunks, hv, dk, dv]): each written once and read once.
    const double handed = N * g.hv * (4 * C + (dk + 2 * dv) * act_bytes) + seqs * chunks * g.state_elements() * act_bytes;
    c.act_bytes_out += handed;
    c.act_bytes_in += handed;
  }
  c.kv_bytes_written = state;
  // q, k [N, qk], v [N, v], the gate inputs a, b [N, hv] in; the output [N, v] out
  c.act_bytes_in += N * (2 * g.qk() + g.v() + 2 * g.hv) * act_bytes;
  c.act_bytes_out += N * g.v() * act_bytes;
  return c;
}

void layer_ops(const OpDims& s, const LayerFeatures& f, const LayerWork& w, bool count_executed, OpNodes& out,
               TensorUses* tensors) {
  out = OpNodes{};
  if (tensors) layer_tensors(s, f, w, *tensors);
  switch (f.mixer) {
    case MixerKind::attention: attention_ops(s, f, w, count_executed, out); break;
    case MixerKind::gated_deltanet: gdn_ops(s, w, out); break;
    case MixerKind::mamba2: mamba2_ops(s, w, out); break;
    case MixerKind::none: break;  // an FFN-only layer
  }
  if (f.ffn) ffn_ops(s, f, w, out);
  const double N = w.seqs * w.rows_q;
  const double sublayers = (f.mixer != MixerKind::none ? 1 : 0) + (f.ffn ? 1 : 0);
  if (s.vwn)  // the depth connections carry the residual
    ghc_ops(s, w, out);
  else  // a residual add per sublayer [N, D] + [N, D] -> [N, D]
    vector_op(node(out, OpKind::residual), sublayers * N * s.D, 0, 2 * sublayers * N * s.D, sublayers * N * s.D, s);
  // hidden dropout, fused into the op that adds each sublayer's output: a mask [N, D] each
  if (w.hidden_dropout)
    node(out, s.vwn ? OpKind::ghc_depth : OpKind::residual).cost.act_bytes_out += sublayers * N * s.D;
}

}  // namespace hdlab::model
