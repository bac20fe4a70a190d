// Multi-head latent attention (DeepSeek-V2/V3), methods.md's MLA shapes: queries
// [H, nope + rope] (directly, or through q_a, its RMSNorm and q_b), a per-token latent
// c = RMSNorm(x W_a) [r_kv] and one RoPE key [rope] shared by every head, expanded by
// kv_b into per-head keys [k nope] and values [v]. The KV cache keeps the entries
// [c | rotated rope key] (kv_lora_rank + qk_rope_head_dim per token, what the cost and
// memory models assume), not the expanded keys and values:
//   - training forward and prefill expand the pass's latents through kv_b and attend over
//     per-head keys [rope key | k nope] and values as ordinary attention (qk = nope + rope
//     dims scored, v summed);
//   - decode attends in the latent ("absorbed" weights): each head's query becomes
//     [q_nope W_UK,h | q_rope] against the cached entries (one KV head), the values are the
//     entries' latents, and each head's latent output goes through W_UV,h. The scores equal
//     the expanded ones (q_nope . W_UK,h c = (W_UK,h^T q_nope) . c).
// Head layouts are regrouped at upload (weights.hpp MlaWeights): a query head is
// [rope | nope] (RoPE turns a head's first dims), a kv_b head [v | k nope], and the rope
// rows of q and kv_a de-interleaved (DeepSeek rotates pairs (2i, 2i+1), the runner
// (i, i + r/2)), so the scores equal DeepSeek's. Softmax scale 1/sqrt(nope + rope), times
// mscale(factor, mscale_all_dim)^2 under YaRN (model::rotary_frequencies' softmax_factor).
#include "runner_internal.hpp"

namespace hdlab::executor {

using detail::Buf;
using detail::OpScope;
using detail::Pass;
using detail::PassKind;

// The sublayer after its norm: projections, RoPE, the pass's cache entries
// [Rk, 1, r_kv + rope], attention (expanded or absorbed), o_proj and any post-norm.
void Runner::Impl::mla_sublayer(Pass& p, const LayerRun& r, const Tensor& normed, const Tensor& kv_in,
                                const Tensor& out, bool final_only) {
  const std::int64_t l = r.layer, Rq = normed.dim(0), Rk = kv_in.dim(0);
  const int g = group_of_layer[static_cast<std::size_t>(l)];
  const LayerWeights& lw = w.layers[static_cast<std::size_t>(l)];
  const MlaWeights& mw = *lw.mla;
  const model::MlaConfig& m = *config.effective.mla;
  const std::int64_t rope = m.qk_rope_head_dim, kvl = m.kv_lora_rank, qk = m.qk_nope_head_dim + rope;
  const float eps = static_cast<float>(config.effective.norm_eps);
  Tensor q = ws.get(Buf::q, {Rq, H * qk}, opt.dtype);
  Tensor latent = ws.get(Buf::mla_latent, {Rk, kvl}, opt.dtype);
  Tensor rope_key = ws.get(Buf::mla_rope_key, {Rk, rope}, opt.dtype);
  {
    // q (q_lora: q_a, its norm, q_b), the latent and its norm, the RoPE key: the model's
    // q_weights and the kv_a part of its kv_weights
    OpScope op(prof, g, OpKind::qkv_proj, mw.q_a.defined() ? 6 : 4);
    if (mw.q_a.defined()) {
      Tensor ql = ws.get(Buf::mla_q_latent, {Rq, mw.q_a.dim(0)}, opt.dtype);
      backend.gemm(normed, false, mw.q_a, true, ql);
      backend.rms_norm(ql, mw.q_a_norm, eps, ql);
      backend.gemm(ql, false, mw.q, true, q);
    } else {
      backend.gemm(normed, false, mw.q, true, q);
    }
    backend.gemm(kv_in, false, mw.kv_a_latent, true, latent);
    backend.rms_norm(latent, mw.kv_a_norm, eps, latent);
    backend.gemm(kv_in, false, mw.kv_a_rope, true, rope_key);
  }
  const Tensor q3 = q.reshaped({Rq, H, qk});
  rotate(p, l, q3, rope_key.reshaped({Rk, 1, rope}), final_only);
  Tensor entries = ws.get(Buf::mla_entries, {Rk, 1, kvl + rope}, opt.dtype);
  {
    OpScope op(prof, g, OpKind::qkv_proj, 2);  // data movement: the cache entries [c | rope key]
    backend.copy_strided(latent, {0, kvl, 0}, entries, {0, kvl + rope, 0}, 1, Rk, kvl);
    backend.copy_strided(rope_key, {0, rope, 0}, entries, {kvl, kvl + rope, 0}, 1, Rk, rope);
  }
  Tensor att = ws.get(Buf::attn, {Rq, H, m.v_head_dim}, opt.dtype);
  if (p.kind == PassKind::decode) mla_absorbed(p, r, q3, entries, att, final_only);
  else mla_expanded(p, r, q3, latent, rope_key, entries, att, final_only);
  {
    OpScope op(prof, g, OpKind::o_proj, lw.o_bias.defined() ? 2 : 1);
    project(att.reshaped({Rq, H * m.v_head_dim}), lw.o, lw.o_bias, out);
  }
  attn_post_norm(l, out);
}

// Training forward and prefill: per-head keys [rope key | k nope] and values from kv_b,
// attended as ordinary attention; the cache keeps the entries.
void Runner::Impl::mla_expanded(Pass& p, const LayerRun& r, const Tensor& q3, const Tensor& latent,
                                const Tensor& rope_key, const Tensor& entries, const Tensor& att, bool final_only) {
  const int g = group_of_layer[static_cast<std::size_t>(r.layer)];
  const model::MlaConfig& m = *config.effective.mla;
  const std::int64_t Rk = latent.dim(0), nope = m.qk_nope_head_dim, rope = m.qk_rope_head_dim;
  const std::int64_t dv = m.v_head_dim, qk = nope + rope, row = dv + nope;
  Tensor kv = ws.get(Buf::mla_kv, {Rk, H * row}, opt.dtype);  // per head [v | k nope]
  Tensor keys = ws.get(Buf::mla_keys, {Rk, H, qk}, opt.dtype);
  {
    OpScope op(prof, g, OpKind::qkv_proj, 3);  // kv_b: the rest of the model's kv_weights
    backend.gemm(latent, false, w.layers[static_cast<std::size_t>(r.layer)].mla->kv_b, true, kv);
    // every head's key: the shared rope key (batch stride 0), then its k nope
    backend.copy_strided(rope_key, {0, rope, 0}, keys, {0, H * qk, qk}, H, Rk, rope);
    backend.copy_strided(kv, {dv, H * row, row}, keys, {rope, H * qk, qk}, H, Rk, nope);
  }
  // values: the first v of each head's [v | k nope]
  attend(p, r, q3, keys, kv.reshaped({Rk, H, row}), att, final_only, entries);
}

// Decode: each head's query absorbed into the latent, [q_nope W_UK,h | q_rope], attended
// over the cached entries (values: their latents), then W_UV,h per head.
void Runner::Impl::mla_absorbed(Pass& p, const LayerRun& r, const Tensor& q3, const Tensor& entries,
                                const Tensor& att, bool final_only) {
  const int g = group_of_layer[static_cast<std::size_t>(r.layer)];
  const model::MlaConfig& m = *config.effective.mla;
  const Tensor& kv_b = w.layers[static_cast<std::size_t>(r.layer)].mla->kv_b;  // [H (v + nope), r_kv]
  const std::int64_t Rq = q3.dim(0), nope = m.qk_nope_head_dim, rope = m.qk_rope_head_dim, kvl = m.kv_lora_rank;
  const std::int64_t dv = m.v_head_dim, qk = nope + rope, row = dv + nope, width = kvl + rope;
  Tensor qa = ws.get(Buf::mla_q_absorbed, {Rq, H, width}, opt.dtype);
  {
    OpScope op(prof, g, OpKind::qkv_proj, 2);
    // head h: q_nope [Rq, nope] x W_UK,h [nope, r_kv] (kv_b rows h row + dv ..)
    backend.gemm_batched(q3, {rope, H * qk, qk}, false, kv_b, {dv * kvl, kvl, row * kvl}, false, qa,
                         {0, H * width, width}, H, Rq, kvl, nope);
    backend.copy_strided(q3, {0, H * qk, qk}, qa, {kvl, H * width, width}, H, Rq, rope);
  }
  Tensor latent_out = ws.get(Buf::mla_o_latent, {Rq, H, kvl}, opt.dtype);
  attend(p, r, qa, entries, entries, latent_out, final_only, entries);
  // head h: [Rq, r_kv] x W_UV,h^T (kv_b rows h row .. + dv, [dv, r_kv]); timed with the
  // projections, where the cost model counts kv_b's multiply-adds
  OpScope op(prof, g, OpKind::qkv_proj);
  backend.gemm_batched(latent_out, {0, H * kvl, kvl}, false, kv_b, {0, kvl, row * kvl}, true, att, {0, H * dv, dv},
                       H, Rq, dv, kvl);
}

}  // namespace hdlab::executor
