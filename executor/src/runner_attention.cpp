// The attention sublayer of every design: norms, projections (KV-mirror layers from
// their source layer's input), QK-norm, RoPE (expanded or token-index positions), the
// masked attention call(s) with the KV cache, and the output projection.
#include <cmath>

#include "runner_internal.hpp"

namespace hdlab::executor {

using detail::Buf;
using detail::OpScope;
using detail::Pass;
using detail::PassKind;

namespace {

double dbl(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

// Attention masks of one layer run in execution order: one call over all rows, or (HD
// stream-major decode of an intra layer) one call per stream that issues a query.
std::vector<std::pair<AttentionMask, int>> Runner::Impl::attention_masks(const Pass& p, const LayerRun& r,
                                                                        bool final_only) const {
  const model::MaskSpec spec = mask_of(r.layer, p.tokens);
  std::vector<std::int64_t> queries;
  if (final_only)
    for (auto i : p.final_rows) queries.push_back(p.rows[static_cast<std::size_t>(i)]);
  else
    queries = p.rows;
  if (p.kind != PassKind::decode) return {{AttentionMask::decode(spec, std::move(queries), p.rows), -1}};
  const auto& slot = caches[static_cast<std::size_t>(r.cache_slot)];
  // Keys after this call appends its rows (a looped shared-KV iteration >= 1 overwrites
  // the same positions, so its keys are the same).
  if (!per_stream_kv(r.layer)) {
    std::vector<std::int64_t> keys = slot[0].positions();
    keys.insert(keys.end(), p.rows.begin(), p.rows.end());
    return {{AttentionMask::decode(spec, std::move(queries), std::move(keys)), -1}};
  }
  std::vector<std::pair<AttentionMask, int>> out;
  for (std::size_t s = 0; s < slot.size(); ++s) {
    const std::int64_t t = p.rows[s];  // decode rows are in stream order
    if (std::find(queries.begin(), queries.end(), t) == queries.end()) continue;
    std::vector<std::int64_t> keys = slot[s].positions();
    keys.push_back(t);
    out.push_back({AttentionMask::decode(spec, {t}, std::move(keys)), static_cast<int>(s)});
  }
  return out;
}

// y = x W^T (+ bias through a rank-1 product with a column of ones).
void Runner::Impl::project(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& y) {
  backend.gemm(x, false, weight, true, y);
  if (!bias.defined()) return;
  const std::int64_t rows = x.matrix_rows();
  if (!ones.defined() || ones.dim(0) < rows) {  // filled once per size, not per use
    ones = backend.allocate({rows + rows / 4, 1}, x.type());
    backend.upload(ones, std::vector<float>(static_cast<std::size_t>(ones.dim(0)), 1.0f));
  }
  backend.gemm(ones.slice_rows(0, rows), false, bias, false, y, 1.0f, 1.0f);
}

void Runner::Impl::attend(Pass& p, const LayerRun& r, const Tensor& q, const Tensor& k, const Tensor& v,
                          const Tensor& out, bool final_only, const Tensor& entries) {
  // What the cache keeps: k and v, or MLA's entries (a keys-only cache, values = keys).
  const Tensor& ck = entries.defined() ? entries : k;
  const Tensor& cv = entries.defined() ? entries : v;
  const int g = group_of_layer[static_cast<std::size_t>(r.layer)];
  const std::vector<detail::AttentionCall>& calls = p.calls.at(p.next_call++);
  double executed = 0, exact = 0;
  for (const auto& c : calls) {
    executed += dbl(c.plan->executed_pairs());
    exact += dbl(c.plan->visible_pairs());
  }
  const Tensor& sinks = w.layers[static_cast<std::size_t>(r.layer)].sinks;  // empty without attention sinks
  OpScope op(prof, g, OpKind::attention, dbl(static_cast<std::int64_t>(calls.size())));
  prof.current().pairs_exact += exact;
  prof.current().pairs_executed += executed;

  if (p.kind != PassKind::decode) {
    backend.attention(q, k, v, *calls[0].plan, out, scale, sinks);
    if (p.kind == PassKind::prefill && r.commits_kv)
      for (auto& c : caches[static_cast<std::size_t>(r.cache_slot)]) {
        const detail::CommitRows& rows = p.commits[static_cast<std::size_t>(p.commit_seq[p.next_commit++])];
        c.append_gathered(backend, ck, cv, rows.ids, rows.positions);
      }
    return;
  }
  auto& slot = caches[static_cast<std::size_t>(r.cache_slot)];
  if (!per_stream_kv(r.layer)) {
    if (r.overwrites_kv) slot[0].overwrite_tail(backend, ck, cv);
    else slot[0].append(backend, ck, cv, p.rows);
    backend.attention(q, slot[0].keys(), slot[0].values(), *calls[0].plan, out, scale, sinks);
    return;
  }
  for (std::size_t s = 0; s < slot.size(); ++s) {
    const Tensor ks = ck.slice_rows(static_cast<std::int64_t>(s), 1), vs = cv.slice_rows(static_cast<std::int64_t>(s), 1);
    if (r.overwrites_kv) slot[s].overwrite_tail(backend, ks, vs);
    else slot[s].append(backend, ks, vs, {p.rows[s]});
  }
  for (const auto& c : calls) {
    const auto s = static_cast<std::size_t>(c.stream);
    const std::int64_t row = final_only ? 0 : static_cast<std::int64_t>(s);
    backend.attention(q.slice_rows(row, 1), slot[s].keys(), slot[s].values(), *c.plan, out.slice_rows(row, 1), scale,
                      sinks);
  }
}

// RoPE on the first rotary dims of each query and key head (model::rotary_dims: as many as
// the frequencies have pairs), at the pass's positions (logical or, for token-index RoPE,
// the token's index), with the backbone's scaling unless it skips this layer.
void Runner::Impl::rotate(const Pass& p, std::int64_t l, const Tensor& q3, const Tensor& k3, bool final_only) {
  const bool tok = token_index_rope(l);
  const Tensor& qpos = final_only ? (tok ? p.pos_final_token : p.pos_final) : (tok ? p.pos_rows_token : p.pos_rows);
  const model::Backbone& bb = config.effective;
  const bool plain = bb.rope_scaling.full_attention_only &&
                     bb.layers[static_cast<std::size_t>(l)].kind != model::AttentionKind::full;
  const model::RotaryFrequencies& f = plain ? rope_plain : rope_freqs;
  OpScope op(prof, group_of_layer[static_cast<std::size_t>(l)], OpKind::rope, 2);
  backend.rope(q3, qpos, f.inv_freq, f.cos_sin_factor);
  backend.rope(k3, tok ? p.pos_rows_token : p.pos_rows, f.inv_freq, f.cos_sin_factor);
}

void Runner::Impl::attention_sublayer(Pass& p, const LayerRun& r, const Tensor& in, const Tensor& out,
                                      bool final_only) {
  if (config.effective.is_linear_layer(r.layer)) return linear_sublayer(p, r, in, out);  // runner_linear.cpp
  const std::int64_t l = r.layer;
  const int g = group_of_layer[static_cast<std::size_t>(l)];
  const LayerWeights& lw = w.layers[static_cast<std::size_t>(l)];
  const float eps = static_cast<float>(config.effective.norm_eps);
  const std::int64_t Rq = in.dim(0);
  Tensor normed = ws.get(Buf::normed, {Rq, D}, opt.dtype);
  {
    OpScope op(prof, g, OpKind::attn_norm);
    backend.rms_norm(in, lw.attn_norm, eps, normed);
  }
  // KV mirror: K/V from the source layer's input, normed with this layer's weights when
  // the source layer ran (runner_layers.cpp).
  const bool mirror = config.effective.is_mirrored(l);
  const Tensor kv_in = mirror ? mirror_inputs[static_cast<std::size_t>(l)] : normed;
  if (config.effective.mla) return mla_sublayer(p, r, normed, kv_in, out, final_only);  // runner_mla.cpp
  const std::int64_t Rk = kv_in.dim(0);
  Tensor q = ws.get(Buf::q, {Rq, H * hd}, opt.dtype);
  Tensor k = ws.get(Buf::k, {Rk, G * hd}, opt.dtype);
  Tensor v = ws.get(Buf::v, {Rk, G * hd}, opt.dtype);
  // Gated attention output (Qwen3-Next): the gate half of q_proj, applied before o_proj.
  const Tensor gate = lw.q_gate.defined() ? ws.get(Buf::attn_gate, {Rq, H * hd}, opt.dtype) : Tensor{};
  {
    const double products = gate.defined() ? 4 : 3;
    OpScope op(prof, g, OpKind::qkv_proj, lw.q_bias.defined() ? 2 * products : products);
    project(normed, lw.q, lw.q_bias, q);
    project(kv_in, lw.k, lw.k_bias, k);
    project(kv_in, lw.v, lw.v_bias, v);
    if (gate.defined()) project(normed, lw.q_gate, lw.q_gate_bias, gate);
  }
  if (lw.q_norm.defined()) {
    OpScope op(prof, g, OpKind::qk_norm, 2);
    backend.rms_norm(q.reshaped({Rq * H, hd}), lw.q_norm, eps, q.reshaped({Rq * H, hd}));
    backend.rms_norm(k.reshaped({Rk * G, hd}), lw.k_norm, eps, k.reshaped({Rk * G, hd}));
  }
  const Tensor q3 = q.reshaped({Rq, H, hd}), k3 = k.reshaped({Rk, G, hd}), v3 = v.reshaped({Rk, G, hd});
  // NoPE layers (Llama 4) and position-free backbones (Nemotron-H) rotate nothing; partial
  // RoPE (Qwen3-Next, GLM-4.5) the first rotary_dim dims of each head.
  const model::Backbone& bb = config.effective;
  if (!bb.layers[static_cast<std::size_t>(l)].nope && bb.positions == model::PositionKind::rope)
    rotate(p, l, q3, k3, final_only);
  Tensor att = ws.get(Buf::attn, {Rq, H, hd}, opt.dtype);
  attend(p, r, q3, k3, v3, att, final_only);
  {
    OpScope op(prof, g, OpKind::o_proj, (gate.defined() ? 2 : 1) + (lw.o_bias.defined() ? 1 : 0));
    const Tensor heads = att.reshaped({Rq, H * hd});
    if (gate.defined()) backend.sigmoid_gate(heads, gate, heads);
    project(heads, lw.o, lw.o_bias, out);
  }
  attn_post_norm(l, out);
}

// Gemma-style post-norm on the attention sublayer's output, where the layer has one.
void Runner::Impl::attn_post_norm(std::int64_t l, const Tensor& out) {
  const LayerWeights& lw = w.layers[static_cast<std::size_t>(l)];
  if (!lw.attn_post_norm.defined()) return;
  OpScope op(prof, group_of_layer[static_cast<std::size_t>(l)], OpKind::attn_norm);
  backend.rms_norm(out, lw.attn_post_norm, static_cast<float>(config.effective.norm_eps), out);
}

}  // namespace hdlab::executor
