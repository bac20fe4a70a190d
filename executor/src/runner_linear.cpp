// Linear-attention layers in the runner (Gated DeltaNet, Mamba-2): their recurrent states
// in place of a KV cache, the order their rows run in under each design (executor/README.md
// "Linear attention under the designs", "Mamba-2 ... under the designs"), and the mixers:
// norm, projections, per state the causal conv and the recurrence (the gated delta rule or
// the SSD scan), the gated RMSNorm and out_proj.
//
// Rows of one state run in logical order: an HD intra-stream layer has one state per
// stream (stream k's rows i*n + k), every other layer one state over all rows (HD
// cross-stream: the interleaved sequence; PHD: every copy, hidden copies only reading
// under linear_state "origins"). A layout whose physical order differs is permuted into
// state order and back around the mixer (row gathers, timed as the layer's attention).
#include <algorithm>
#include <numeric>

#include "runner_internal.hpp"

namespace hdlab::executor {

using detail::Buf;
using detail::OpScope;
using detail::Pass;
using detail::PassKind;

namespace {

Tensor upload_ids(Backend& b, const std::vector<std::int32_t>& v) {
  Tensor t = b.allocate({static_cast<std::int64_t>(v.size())}, ScalarType::i32);
  if (!v.empty()) b.upload(t, v);
  return t;
}

}  // namespace

std::int64_t Runner::Impl::linear_states_of(std::int64_t l) const {
  return static_cast<std::int64_t>(model::recurrent_states(config.design.method, roles[static_cast<std::size_t>(l)]));
}

detail::LinearShape Runner::Impl::linear_shape(std::int64_t l) const {
  const model::Backbone& b = config.effective;
  if (b.mixer(l) == model::MixerKind::mamba2) {
    const model::Mamba2Config& m = *b.mamba;
    return {{m.num_heads, m.head_dim, m.state_size}, m.conv_channels(), m.conv_kernel};
  }
  const model::GatedDeltaNetConfig& g = *b.gdn;
  return {{g.num_value_heads, g.key_head_dim, g.value_head_dim}, g.conv_channels(), g.conv_kernel};
}

void Runner::Impl::reset_linear_states(const std::vector<std::int64_t>& slot_layer) {
  linear_states.resize(slot_layer.size());
  for (std::size_t s = 0; s < slot_layer.size(); ++s) {
    auto& states = linear_states[s];
    const std::int64_t l = slot_layer[s];
    if (!config.effective.is_linear_layer(l)) {
      states.clear();
      continue;
    }
    // The shapes follow from the config alone: kept across sequences (a prefill zeroes them).
    const auto n = static_cast<std::size_t>(linear_states_of(l));
    if (states.size() == n) continue;
    const detail::LinearShape shape = linear_shape(l);
    states.clear();
    for (std::size_t i = 0; i < n; ++i)
      states.push_back({backend.allocate(shape.state, opt.dtype),
                        backend.allocate({shape.kernel - 1, shape.channels}, opt.dtype)});
  }
}

std::size_t Runner::Impl::linear_state_bytes() const {
  std::size_t n = 0;
  for (const auto& slot : linear_states)
    for (const auto& s : slot) n += s.state.bytes() + s.conv.bytes();
  return n;
}

// The layer run's plan, shared by every linear layer run of the pass with as many states.
void Runner::Impl::plan_linear(Pass& p, const LayerRun& r) {
  const std::int64_t states = linear_states_of(r.layer);
  for (std::size_t i = 0; i < p.linear_plans.size(); ++i)
    if (p.linear_plans[i].states == states) {
      p.linear_plan_of_run.push_back(static_cast<int>(i));
      return;
    }
  detail::LinearPlan plan;
  plan.states = states;
  const auto state_of = [&](std::int64_t t) { return states > 1 ? t % copies : 0; };
  std::vector<std::int32_t> order(p.rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    const std::int64_t ta = p.rows[static_cast<std::size_t>(a)], tb = p.rows[static_cast<std::size_t>(b)];
    return state_of(ta) != state_of(tb) ? state_of(ta) < state_of(tb) : ta < tb;
  });
  std::vector<std::int32_t> back(order.size()), writes;
  plan.begin.assign(static_cast<std::size_t>(states) + 1, 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    back[static_cast<std::size_t>(order[i])] = static_cast<std::int32_t>(i);
    plan.permuted = plan.permuted || order[i] != static_cast<std::int32_t>(i);
    const std::int64_t t = p.rows[static_cast<std::size_t>(order[i])];
    ++plan.begin[static_cast<std::size_t>(state_of(t)) + 1];
    if (features.hidden_copies_read_only) writes.push_back(t % copies == 0 ? 1 : 0);  // origins write
  }
  std::partial_sum(plan.begin.begin(), plan.begin.end(), plan.begin.begin());
  if (plan.permuted) {
    plan.to_state = upload_ids(backend, order);
    plan.to_physical = upload_ids(backend, back);
  }
  if (!writes.empty()) plan.writes = upload_ids(backend, writes);
  p.linear_plan_of_run.push_back(static_cast<int>(p.linear_plans.size()));
  p.linear_plans.push_back(std::move(plan));
}

void Runner::Impl::linear_sublayer(Pass& p, const LayerRun& r, const Tensor& in, const Tensor& out) {
  const std::int64_t l = r.layer, R = in.dim(0);
  const int g = group_of_layer[static_cast<std::size_t>(l)];
  const LayerWeights& lw = w.layers[static_cast<std::size_t>(l)];
  const float eps = static_cast<float>(config.effective.norm_eps);
  const detail::LinearPlan& plan = p.linear_plans.at(static_cast<std::size_t>(p.linear_plan_of_run.at(p.next_call++)));
  if (static_cast<std::size_t>(R) != p.rows.size())
    throw std::logic_error("runner: a linear-attention layer runs on a subset of the pass's rows");
  Tensor normed = ws.get(Buf::normed, {R, D}, opt.dtype);
  {
    OpScope op(prof, g, OpKind::attn_norm);
    backend.rms_norm(in, lw.attn_norm, eps, normed);
  }
  Tensor x = normed;
  if (plan.permuted) {  // into state order
    x = ws.get(Buf::lin_in, {R, D}, opt.dtype);
    OpScope op(prof, g, OpKind::attention);
    backend.gather_rows(normed, plan.to_state, x);
  }
  const Tensor y = plan.permuted ? ws.get(Buf::lin_y, {R, D}, opt.dtype) : out;
  if (config.effective.mixer(l) == model::MixerKind::mamba2) mamba2_mixer(p, r, plan, x, y);
  else gdn_mixer(p, r, plan, x, y);
  if (plan.permuted) {  // back into the physical order
    OpScope op(prof, g, OpKind::attention);
    backend.gather_rows(y, plan.to_physical, out);
  }
  if (lw.attn_post_norm.defined()) {
    OpScope op(prof, g, OpKind::attn_norm);
    backend.rms_norm(out, lw.attn_post_norm, eps, out);
  }
}

// Gated DeltaNet on the normed rows x (state order) into y [R, D]: in_proj_qkvz and
// in_proj_ba as three products, per state the conv and the gated delta rule, the gated
// RMSNorm (per value head, gated after the norm) and out_proj.
void Runner::Impl::gdn_mixer(Pass& p, const LayerRun& r, const detail::LinearPlan& plan, const Tensor& x,
                             const Tensor& y) {
  const std::int64_t R = x.dim(0);
  const int g = group_of_layer[static_cast<std::size_t>(r.layer)];
  const LinearAttentionWeights& lw = w.layers[static_cast<std::size_t>(r.layer)].linear;
  const model::GatedDeltaNetConfig& gdn = *config.effective.gdn;
  const std::int64_t hv = gdn.num_value_heads, dv = gdn.value_head_dim;
  Tensor qkv = ws.get(Buf::lin_qkv, {R, gdn.conv_channels()}, opt.dtype);
  Tensor z = ws.get(Buf::lin_z, {R, gdn.v_width()}, opt.dtype);
  Tensor ba = ws.get(Buf::lin_ba, {R, 2 * hv}, opt.dtype);
  {
    OpScope op(prof, g, OpKind::qkv_proj, 3);
    backend.gemm(x, false, lw.qkv, true, qkv);
    backend.gemm(x, false, lw.z, true, z);
    backend.gemm(x, false, lw.ba, true, ba);
  }
  Tensor conv = ws.get(Buf::lin_conv, {R, gdn.conv_channels()}, opt.dtype);
  Tensor o = ws.get(Buf::lin_o, {R, hv, dv}, opt.dtype);
  const std::int64_t chunk = p.kind == PassKind::decode ? 0 : static_cast<std::int64_t>(dims.gdn.chunk);
  scan_states(p, r, plan, [&](const detail::LinearState& st, std::int64_t first, std::int64_t n, const Tensor& writes) {
    const Tensor c = conv.slice_rows(first, n);
    backend.causal_conv1d(qkv.slice_rows(first, n), lw.conv, Tensor{}, st.conv, c, writes);
    backend.gated_delta_rule(c, ba.slice_rows(first, n), lw.a_log, lw.dt_bias, st.state, o.slice_rows(first, n), chunk,
                             writes);
  });
  OpScope op(prof, g, OpKind::o_proj, 2);
  const Tensor heads = o.reshaped({R * hv, dv});
  backend.gated_rms_norm(heads, z.reshaped({R * hv, dv}), lw.norm, static_cast<float>(config.effective.norm_eps),
                         heads);
  backend.gemm(o.reshaped({R, hv * dv}), false, lw.out, true, y);
}

// Mamba-2 on the normed rows x (state order) into y [R, D]: in_proj as three products (z,
// the conv's x | B | C, dt), per state the conv (with its bias) and the SSD scan, the
// grouped gated RMSNorm (gated before the norm, n_groups groups) and out_proj.
void Runner::Impl::mamba2_mixer(Pass& p, const LayerRun& r, const detail::LinearPlan& plan, const Tensor& x,
                                const Tensor& y) {
  const std::int64_t R = x.dim(0);
  const int g = group_of_layer[static_cast<std::size_t>(r.layer)];
  const Mamba2Weights& mw = w.layers[static_cast<std::size_t>(r.layer)].mamba;
  const model::Mamba2Config& m = *config.effective.mamba;
  const std::int64_t I = m.inner(), C = m.conv_channels(), heads = m.num_heads;
  Tensor xbc = ws.get(Buf::lin_qkv, {R, C}, opt.dtype);
  Tensor z = ws.get(Buf::lin_z, {R, I}, opt.dtype);
  Tensor dt = ws.get(Buf::lin_ba, {R, heads}, opt.dtype);
  {
    OpScope op(prof, g, OpKind::qkv_proj, 3);
    backend.gemm(x, false, mw.xbc, true, xbc);
    backend.gemm(x, false, mw.z, true, z);
    backend.gemm(x, false, mw.dt, true, dt);
  }
  Tensor conv = ws.get(Buf::lin_conv, {R, C}, opt.dtype);
  Tensor o = ws.get(Buf::lin_o, {R, heads, m.head_dim}, opt.dtype);
  const std::int64_t chunk = p.kind == PassKind::decode ? 0 : static_cast<std::int64_t>(dims.mamba.chunk);
  scan_states(p, r, plan, [&](const detail::LinearState& st, std::int64_t first, std::int64_t n, const Tensor&) {
    const Tensor c = conv.slice_rows(first, n);
    backend.causal_conv1d(xbc.slice_rows(first, n), mw.conv, mw.conv_bias, st.conv, c);
    backend.mamba2_ssd(c, dt.slice_rows(first, n), mw.a_log, mw.dt_bias, mw.d, st.state, o.slice_rows(first, n), chunk);
  });
  OpScope op(prof, g, OpKind::o_proj, 2);
  const Tensor rows = o.reshaped({R, I});
  backend.gated_rms_norm(rows, z, mw.norm, static_cast<float>(config.effective.norm_eps), rows,
                         GatedNormForm{I / m.n_groups, true});
  backend.gemm(rows, false, mw.out, true, y);
}

// The recurrence of each state over its rows (state order), timed as the layer's
// attention: from zero states in a training pass (workspace states) and a prefill (the
// layer's own, kept for decode), from the kept states in a decode step. `scan` runs the
// conv and the recurrence on one state's rows [first, first + n) (two backend calls).
void Runner::Impl::scan_states(Pass& p, const LayerRun& r, const detail::LinearPlan& plan, const LinearScan& scan) {
  const detail::LinearShape shape = linear_shape(r.layer);
  const std::int64_t S = plan.states, K = shape.kernel;
  const bool decode = p.kind == PassKind::decode;
  std::vector<detail::LinearState> scratch;
  if (p.kind == PassKind::train) {
    const Tensor st = ws.get(Buf::lin_state, {S * shape.state[0], shape.state[1], shape.state[2]}, opt.dtype);
    const Tensor cs = ws.get(Buf::lin_conv_state, {S * (K - 1), shape.channels}, opt.dtype);
    for (std::int64_t s = 0; s < S; ++s)
      scratch.push_back({st.slice_rows(s * shape.state[0], shape.state[0]), cs.slice_rows(s * (K - 1), K - 1)});
  }
  const std::vector<detail::LinearState>& states =
      scratch.empty() ? linear_states[static_cast<std::size_t>(r.cache_slot)] : scratch;
  OpScope op(prof, group_of_layer[static_cast<std::size_t>(r.layer)], OpKind::attention,
             static_cast<double>(S * (decode ? 2 : 4)));
  for (std::int64_t s = 0; s < S; ++s) {
    const detail::LinearState& st = states[static_cast<std::size_t>(s)];
    if (!decode) {  // a sequence starts from a zero state and an empty (zero) conv history
      backend.fill_zero(st.state);
      backend.fill_zero(st.conv);
    }
    const std::int64_t first = plan.begin[static_cast<std::size_t>(s)];
    const std::int64_t n = plan.begin[static_cast<std::size_t>(s) + 1] - first;
    if (n == 0) continue;
    scan(st, first, n, plan.writes.defined() ? plan.writes.slice_rows(first, n) : Tensor{});
  }
}

}  // namespace hdlab::executor
