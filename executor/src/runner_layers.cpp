// Everything of a forward but attention: embeddings (HD: a table per stream; VWN: over
// width or projected; mHC: copied into each stream), the layer's residual scheme
// (pre-norm residual per sublayer present, or two hyper-connections), dense
// (SwiGLU or squared ReLU) and MoE FFNs, looped
// injection, and the output path (VWN GroupNorm and reduce, mHC's stream sum, final norm,
// head; VWN MTP). Ops are timed here; their FLOPs come from the
// call's layer program (model/layer_program.hpp), as the simulator counts them.
#include <algorithm>
#include <numeric>

#include "hdlab/executor/designs/registry.hpp"
#include "runner_internal.hpp"

namespace hdlab::executor {

using detail::Buf;
using detail::OpScope;
using detail::Pass;

namespace {

double dbl(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

Tensor Runner::Impl::embed(const std::vector<detail::EmbedGroup>& groups_of_rows, const Tensor& ids,
                           std::int64_t rows, Buf out, model::OpKind kind) {
  Tensor x = ws.get(out, {rows, wide}, opt.dtype);
  if (features.copied_embedding) {  // row r of the table into each slot j (row r*n + j of [rows*n, D])
    const std::int64_t n = features.width_n;
    const Tensor streams = x.reshaped({rows * n, D});
    OpScope op(prof, -1, kind, dbl(static_cast<std::int64_t>(groups_of_rows.size()) * n));
    for (const auto& g : groups_of_rows)
      for (std::int64_t j = 0; j < n; ++j)
        backend.gather_rows(w.embed[static_cast<std::size_t>(g.table)], ids.slice_rows(g.id_offset, g.count), streams,
                            RowMap{g.map.first * n + j, g.map.stride * n});
    return x;
  }
  const bool projected = features.projected_embedding;
  Tensor target = projected ? ws.get(Buf::embed_tmp, {rows, D}, opt.dtype) : x;
  {
    OpScope op(prof, -1, kind, dbl(static_cast<std::int64_t>(groups_of_rows.size())));
    for (const auto& g : groups_of_rows)
      backend.gather_rows(w.embed[static_cast<std::size_t>(g.table)], ids.slice_rows(g.id_offset, g.count), target,
                          g.map);
  }
  if (projected) {
    OpScope op(prof, -1, kind == OpKind::embedding ? OpKind::vwn_embed_proj : kind);
    backend.gemm(target, false, w.embed_proj, true, x);
  }
  return x;
}

Tensor Runner::Impl::select_rows(const Tensor& x, const Tensor& ids, const std::vector<std::int64_t>& idx, Buf buf,
                                 int group, model::OpKind kind) {
  const std::int64_t n = static_cast<std::int64_t>(idx.size());
  bool contiguous = true;
  for (std::size_t i = 1; i < idx.size(); ++i) contiguous = contiguous && idx[i] == idx[i - 1] + 1;
  if (contiguous && n > 0) return x.slice_rows(idx[0], n);
  Tensor out = ws.get(buf, {n, x.matrix_cols()}, x.type());
  OpScope op(prof, group, kind);
  backend.gather_rows(x, ids, out);
  return out;
}

void Runner::Impl::residual_add(int group, const Tensor& x, const Tensor& y) {
  OpScope op(prof, group, OpKind::residual);
  backend.add(x, y, x);
}

void Runner::Impl::layer(Pass& p, const LayerRun& r, Tensor& x, bool& final_only) {
  const std::int64_t l = r.layer;
  const int g = group_of_layer[static_cast<std::size_t>(l)];
  const float eps = static_cast<float>(config.effective.norm_eps);
  // A KV-mirror source: its input, normed with the mirror layer's own weights, is what
  // the mirror layer projects its K/V from (counted in the mirror layer's attn_norm).
  if (const std::int64_t ml = mirror_of_source[static_cast<std::size_t>(l)]; ml >= 0 && r.iteration == 0) {
    Tensor& store = mirror_storage[static_cast<std::size_t>(ml)];
    if (!store.defined() || store.numel() < x.numel()) store = backend.allocate({x.numel()}, x.type());
    Tensor& view = mirror_inputs[static_cast<std::size_t>(ml)];
    view = store.slice_rows(0, x.numel()).reshaped(x.shape());
    OpScope op(prof, group_of_layer[static_cast<std::size_t>(ml)], OpKind::attn_norm);
    backend.rms_norm(x, w.layers[static_cast<std::size_t>(ml)].attn_norm, eps, view);
  }
  if (hd_mirror_queries(l) && !final_only) {
    // From here on only the final stream's rows run (methods.md section 1, KV mirror).
    x = select_rows(x, p.final_ids, p.final_rows, Buf::hidden_b, g, OpKind::residual);
    final_only = true;
  }
  if (features.wide_residual) {
    ghc_sublayer(p, r, x, true);
    ghc_sublayer(p, r, x, false);
    return;
  }
  // A layer of one sublayer (Nemotron-H's blocks) skips the other, and its residual add.
  Tensor sub = ws.get(Buf::sub_out, {x.dim(0), D}, opt.dtype);
  if (config.effective.has_mixer(l)) {
    attention_sublayer(p, r, x, sub, final_only);
    residual_add(g, x, sub);
  } else {
    ++p.next_call;  // its (empty) entry of the pass's mixer calls
  }
  if (config.effective.has_ffn(l)) {
    ffn_sublayer(r, x, sub);
    residual_add(g, x, sub);
  }
}

void Runner::Impl::ffn_sublayer(const LayerRun& r, const Tensor& in, const Tensor& out) {
  const std::int64_t l = r.layer, R = in.dim(0);
  const int g = group_of_layer[static_cast<std::size_t>(l)];
  const LayerWeights& lw = w.layers[static_cast<std::size_t>(l)];
  const float eps = static_cast<float>(config.effective.norm_eps);
  Tensor normed = ws.get(Buf::normed, {R, D}, opt.dtype);
  {
    OpScope op(prof, g, OpKind::ffn_norm);
    backend.rms_norm(in, lw.ffn_norm, eps, normed);
  }
  if (lw.moe) {
    moe_ffn(r, normed, out);
  } else {  // SwiGLU: gate and up in one product; relu2 (Nemotron-H): up alone; mlp_bias: biased
    const std::int64_t F = config.effective.intermediate;
    const bool relu2 = config.effective.mlp == model::MlpKind::relu2;
    const double products = lw.dense.down_bias.defined() ? 2 : 1;  // a bias is a rank-1 product
    Tensor gu = ws.get(Buf::gate_up, {R, (relu2 ? 1 : 2) * F}, opt.dtype);
    Tensor act = ws.get(Buf::act, {R, F}, opt.dtype);
    {
      OpScope op(prof, g, OpKind::ffn_gate_up, products);
      project(normed, lw.dense.gate_up, lw.dense.gate_up_bias, gu);
    }
    {
      OpScope op(prof, g, OpKind::ffn_act);
      if (relu2) backend.relu2(gu, act);
      else backend.swiglu(gu, act);
    }
    OpScope op(prof, g, OpKind::ffn_down, products);
    project(act, lw.dense.down, lw.dense.down_bias, out);
  }
  if (lw.ffn_post_norm.defined()) {
    OpScope op(prof, g, OpKind::ffn_norm);
    backend.rms_norm(out, lw.ffn_post_norm, eps, out);
  }
}

void Runner::Impl::moe_ffn(const LayerRun& r, const Tensor& in, const Tensor& out) {
  const std::int64_t l = r.layer, R = in.dim(0);
  const int g = group_of_layer[static_cast<std::size_t>(l)];
  const MoeWeights& mw = *w.layers[static_cast<std::size_t>(l)].moe;
  const model::MoeConfig& mc = *config.effective.moe;
  const std::int64_t E = mc.num_experts, k = mc.top_k, Fe = mc.expert_intermediate;
  Tensor logits = ws.get(Buf::router_logits, {R, E}, opt.dtype);
  Tensor ids = ws.get(Buf::route_ids, {R, k}, ScalarType::i32);
  Tensor weights = ws.get(Buf::route_weights, {R, k}, ScalarType::f32);
  Tensor moe_ids = ws.get(Buf::moe_ids, {R * k}, ScalarType::i32);
  Tensor moe_w = ws.get(Buf::moe_weights, {R * k}, ScalarType::f32);
  std::vector<std::int64_t> offset;
  {
    OpScope op(prof, g, OpKind::router, mw.router_bias.defined() ? 5 : 4);
    project(in, mw.router, mw.router_bias, logits);
    backend.topk_routing(logits, k, mc.router, opt.normalize_topk, ids, weights);
    offset = route(ids, weights, moe_ids, moe_w, E, k);
  }
  {
    // gpt-oss: biases on the experts' projections and the clamped SwiGLU.
    const SwigluClamp clamp{static_cast<float>(mc.swiglu_limit), static_cast<float>(mc.swiglu_alpha)};
    OpScope op(prof, g, OpKind::experts);
    backend.fill_zero(out);
    for (std::int64_t e = 0; e < E; ++e) {
      const std::int64_t first = offset[static_cast<std::size_t>(e)], n = offset[static_cast<std::size_t>(e) + 1] - first;
      if (n == 0) continue;
      const Tensor ide = moe_ids.slice_rows(first, n), we = moe_w.slice_rows(first, n);
      Tensor xe = ws.get(Buf::expert_x, {n, D}, opt.dtype);
      Tensor gu = ws.get(Buf::expert_gate_up, {n, 2 * Fe}, opt.dtype);
      Tensor act = ws.get(Buf::expert_act, {n, Fe}, opt.dtype);
      Tensor ye = ws.get(Buf::expert_out, {n, D}, opt.dtype);
      const FfnWeights& ex = mw.experts[static_cast<std::size_t>(e)];
      backend.gather_rows(in, ide, xe);
      project(xe, ex.gate_up, ex.gate_up_bias, gu);
      backend.swiglu(gu, act, clamp);
      project(act, ex.down, ex.down_bias, ye);
      backend.scatter_add_rows(ye, ide, we, out);
      prof.current().calls += ex.down_bias.defined() ? 7 : 5;
    }
  }
  if (!mw.shared.empty()) shared_experts(r, in, out);
}

// The shared experts, added onto the routed output `out`; Qwen3-Next's gate scales their
// sum by sigmoid(x w_g^T) per token first.
void Runner::Impl::shared_experts(const LayerRun& r, const Tensor& in, const Tensor& out) {
  const std::int64_t R = in.dim(0);
  const int g = group_of_layer[static_cast<std::size_t>(r.layer)];
  const MoeWeights& mw = *w.layers[static_cast<std::size_t>(r.layer)].moe;
  const std::int64_t Fs = config.effective.moe->shared_expert_intermediate;
  const bool gated = mw.shared_gate.defined();
  const double calls = 3.0 * dbl(static_cast<std::int64_t>(mw.shared.size())) + (gated ? 3 : 0);
  OpScope op(prof, g, OpKind::shared_experts, calls);
  const Tensor sum = gated ? ws.get(Buf::shared_out, {R, D}, opt.dtype) : out;
  for (std::size_t i = 0; i < mw.shared.size(); ++i) {
    const FfnWeights& sh = mw.shared[i];
    Tensor gu = ws.get(Buf::gate_up, {R, 2 * Fs}, opt.dtype);
    Tensor act = ws.get(Buf::act, {R, Fs}, opt.dtype);
    backend.gemm(in, false, sh.gate_up, true, gu);
    backend.swiglu(gu, act);
    // ungated: accumulates onto the routed output; gated: into their own sum
    backend.gemm(act, false, sh.down, true, sum, 1.0f, gated && i == 0 ? 0.0f : 1.0f);
  }
  if (!gated) return;
  Tensor logit = ws.get(Buf::shared_gate, {R, 1}, opt.dtype);
  backend.gemm(in, false, mw.shared_gate, true, logit);
  backend.sigmoid_gate(sum, logit, sum);
  backend.add(out, sum, out);
}

// Tokens of each expert, grouped on the host (counting sort): rows and weights of expert
// e at [offset[e], offset[e+1]) of moe_ids / moe_w.
std::vector<std::int64_t> Runner::Impl::route(const Tensor& ids, const Tensor& weights, const Tensor& moe_ids,
                                              const Tensor& moe_w, std::int64_t experts, std::int64_t k) {
  const std::vector<std::int32_t> hid = backend.download_i32(ids);
  const std::vector<float> hw = backend.download_f32(weights);
  std::vector<std::int64_t> offset(static_cast<std::size_t>(experts + 1), 0);
  for (auto e : hid) ++offset[static_cast<std::size_t>(e) + 1];
  for (std::size_t e = 0; e < static_cast<std::size_t>(experts); ++e) offset[e + 1] += offset[e];
  std::vector<std::int64_t> fill(offset.begin(), offset.end() - 1);
  std::vector<std::int32_t> rows(hid.size());
  std::vector<float> wts(hid.size());
  for (std::size_t i = 0; i < hid.size(); ++i) {
    const auto at = static_cast<std::size_t>(fill[static_cast<std::size_t>(hid[i])]++);
    rows[at] = static_cast<std::int32_t>(static_cast<std::int64_t>(i) / k);
    wts[at] = hw[i];
  }
  backend.upload(moe_ids, rows);
  backend.upload(moe_w, wts);
  return offset;
}

// One sublayer of a wide residual wrapped by its hyper-connection (VWN's GHC, methods.md
// section 3; or one whose coefficients come from the design's own op, as mHC's do):
// width connection to the D-wide input, the sublayer, depth connection back into the n
// slots of h [R, D'].
void Runner::Impl::ghc_sublayer(Pass& p, const LayerRun& r, Tensor& h, bool attention) {
  const std::int64_t l = r.layer, R = h.dim(0), m = features.width_m, n = features.width_n, s = D / features.width_m;
  const int g = group_of_layer[static_cast<std::size_t>(l)];
  const LayerWeights& lw = w.layers[static_cast<std::size_t>(l)];
  const GhcWeights& gw = attention ? lw.ghc_attn : lw.ghc_ffn;
  const Tensor h3 = h.reshaped({R, n, s});
  Tensor alpha, beta;
  if (features.module_mixing) {  // the design's own op (mHC's Sinkhorn coefficients)
    alpha = ws.get(Buf::ghc_alpha, {R, n, m + n}, ScalarType::f32);
    beta = ws.get(Buf::ghc_beta, {R, m, n}, ScalarType::f32);
    OpScope op(prof, g, OpKind::ghc_dynamic);
    design_mixing(config.design.method, backend, lw.design, attention, h3,
                  static_cast<float>(config.effective.norm_eps), alpha, beta);
  } else if (!features.dynamic_mixing) {
    alpha = gw.static_a.reshaped({1, n, m + n});
    beta = gw.static_b.reshaped({1, m, n});
  } else {
    Tensor hn = ws.get(Buf::ghc_hn, {R * n, s}, opt.dtype);
    {
      OpScope op(prof, g, OpKind::ghc_norm);
      backend.rms_norm(h.reshaped({R * n, s}), gw.norm, static_cast<float>(config.effective.norm_eps), hn);
    }
    alpha = ws.get(Buf::ghc_alpha, {R, n, m + n}, ScalarType::f32);
    beta = ws.get(Buf::ghc_beta, {R, m, n}, ScalarType::f32);
    OpScope op(prof, g, OpKind::ghc_dynamic);
    backend.ghc_dynamic(hn.reshaped({R, n, s}), gw.w_dyn, gw.scale, gw.static_a, gw.static_b, alpha, beta);
  }
  Tensor x = ws.get(Buf::ghc_x, {R, m, s}, opt.dtype);
  Tensor carry = ws.get(Buf::ghc_carry, {R, n, s}, opt.dtype);
  {
    OpScope op(prof, g, OpKind::ghc_width);
    backend.ghc_width(h3, alpha, x, carry);
  }
  Tensor z = ws.get(Buf::sub_out, {R, D}, opt.dtype);
  if (attention) attention_sublayer(p, r, x.reshaped({R, D}), z, false);
  else ffn_sublayer(r, x.reshaped({R, D}), z);
  OpScope op(prof, g, OpKind::ghc_depth);
  backend.ghc_depth(z.reshaped({R, m, s}), beta, carry, h3);
}

// Looped input injection: x <- [x; e] W^T = x W_h^T + e W_e^T.
void Runner::Impl::inject(Pass&, Tensor& x, const Tensor& e) {
  Tensor next = ws.get(Buf::hidden_b, x.shape(), x.type());
  if (next.overlaps(x)) next = ws.get(Buf::hidden_a, x.shape(), x.type());
  OpScope op(prof, -1, OpKind::injection, 2);
  backend.gemm(x, false, w.inject_h, true, next);
  backend.gemm(e, false, w.inject_e, true, next, 1.0f, 1.0f);
  x = next;
}

Tensor Runner::Impl::output_path(const Tensor& rows, Buf norm, Buf reduce, Buf fin, Buf logits, model::OpKind kind) {
  const std::int64_t r = rows.dim(0);
  const float eps = static_cast<float>(config.effective.norm_eps);
  const bool mtp_path = kind == OpKind::mtp;
  Tensor h = rows;
  if (features.summed_readout) {  // the n slots summed (a depth connection of all-one coefficients)
    const std::int64_t n = features.width_n;
    if (!stream_ones.defined()) {
      stream_ones = backend.allocate({1, n, 1}, ScalarType::f32);
      backend.upload(stream_ones, std::vector<float>(static_cast<std::size_t>(n), 1.0f));
    }
    Tensor sum = ws.get(reduce, {r, D}, opt.dtype);
    OpScope op(prof, -1, mtp_path ? kind : OpKind::vwn_reduce, 2);
    backend.fill_zero(sum);
    backend.ghc_depth(rows.reshaped({r, n, D}), stream_ones, sum.reshaped({r, 1, D}), sum.reshaped({r, 1, D}));
    h = sum;
  } else if (features.wide_residual) {
    Tensor gn = ws.get(norm, {r, wide}, opt.dtype);
    Tensor red = ws.get(reduce, {r, D}, opt.dtype);
    OpScope op(prof, -1, mtp_path ? kind : OpKind::vwn_reduce, 2);
    // Groups of D (methods.md); when D' = (n/m) D is not a whole number of them (n/m
    // fractional, e.g. 3/2), groups of gcd(D, D').
    backend.group_norm(rows, std::gcd(D, wide), w.group_norm_weight, w.group_norm_bias, eps, gn);
    backend.gemm(gn, false, w.reduce, true, red);
    h = red;
  }
  Tensor f = ws.get(fin, {r, D}, opt.dtype);
  {
    OpScope op(prof, -1, mtp_path ? kind : OpKind::final_norm);
    backend.rms_norm(h, w.final_norm, eps, f);
  }
  Tensor out = ws.get(logits, {r, V}, opt.dtype);
  OpScope op(prof, -1, mtp_path ? kind : OpKind::lm_head);
  backend.gemm(f, false, w.lm_head, true, out);
  return out;
}

ForwardResult Runner::Impl::output(Pass& p, const Tensor& x, bool final_only) {
  std::vector<std::int64_t> idx;
  for (auto i : p.loss_rows) idx.push_back(final_only ? i : p.final_rows[static_cast<std::size_t>(i)]);
  ForwardResult res;
  res.hidden = select_rows(x, p.loss_ids, idx, Buf::out_rows, -1, OpKind::final_norm);
  res.logits = output_path(res.hidden, Buf::out_norm, Buf::out_reduce, Buf::out_final, Buf::logits, OpKind::lm_head);
  return res;
}

// VWN multi-token prediction (training): each loss row's last wide state mixed, block by
// block, with the next token's over-width embedding by one linear 2D/m -> D/m, then the
// shared output path; all of it timed as `mtp`.
void Runner::Impl::mtp(Pass& p, const Tensor&, ForwardResult& res) {
  const std::int64_t L = res.hidden.dim(0), n = features.width_n, s = D / features.width_m;
  const std::vector<detail::EmbedGroup> one{{0, 0, L, RowMap{0, 1}}};
  Tensor e = embed(one, p.mtp_ids, L, Buf::mtp_e, OpKind::mtp);
  Tensor mix = ws.get(Buf::mtp_mix, {L * n, s}, opt.dtype);
  {
    OpScope op(prof, -1, OpKind::mtp, 2);
    backend.gemm(res.hidden.reshaped({L * n, s}), false, w.mtp_h, true, mix);
    backend.gemm(e.reshaped({L * n, s}), false, w.mtp_e, true, mix, 1.0f, 1.0f);
  }
  res.mtp_logits = output_path(mix.reshaped({L, wide}), Buf::mtp_norm, Buf::mtp_reduce, Buf::mtp_final,
                               Buf::mtp_logits, OpKind::mtp);
}

}  // namespace hdlab::executor
