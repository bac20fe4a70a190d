// Op cases of the linear-attention ops (Gated DeltaNet: causal_conv1d, gated_delta_rule,
// gated_rms_norm; Mamba-2: mamba2_ssd and the gate-first grouped gated_rms_norm) and of the
// sigmoid gate (gated attention output, shared experts' gate). Costs are the layer
// program's (model::gdn_conv_cost / gdn_rule_cost / mamba2_ssd_cost, layer_ops.cpp).
#include <cmath>

#include "hdlab/model/layer_program.hpp"
#include "op_case_support.hpp"

namespace hdlab::executor {

using namespace detail;

namespace {

std::string gdn_name(const char* op, const GdnCaseShape& s, ScalarType type) {
  std::string n = shape_name(op, {{"R", s.rows}, {"hk", s.hk}, {"hv", s.hv}, {"dk", s.dk}, {"dv", s.dv}}, type);
  if (s.writes) n += " readers";
  return n;
}

model::GdnDims dims_of(const GdnCaseShape& s) {
  model::GdnDims g;
  g.hk = static_cast<double>(s.hk);
  g.hv = static_cast<double>(s.hv);
  g.dk = static_cast<double>(s.dk);
  g.dv = static_cast<double>(s.dv);
  g.kernel = static_cast<double>(s.kernel);
  if (s.chunk > 0) g.chunk = static_cast<double>(s.chunk);
  return g;
}

// 0 for rows 1, 4, 7, ... (they read only), else 1; empty unless the case has readers.
HostInts writes_of(const GdnCaseShape& s) {
  std::vector<std::int32_t> w;
  if (s.writes)
    for (std::int64_t r = 0; r < s.rows; ++r) w.push_back(r % 3 == 1 ? 0 : 1);
  return host_ints(std::move(w));
}

struct Stateful {
  Doubles out, state;
};

}  // namespace

OpCase causal_conv1d_case(const GdnCaseShape& shape, ScalarType type, std::uint64_t seed) {
  OpCase c;
  const std::int64_t R = shape.rows, C = 2 * shape.hk * shape.dk + shape.hv * shape.dv, K = shape.kernel;
  c.name = gdn_name("causal_conv1d", shape, type) + " K=" + std::to_string(K) + (shape.bias ? " bias" : "");
  c.op = BackendOp::causal_conv1d;
  c.kind = model::OpKind::attention;  // the linear mixer's first kernel
  c.type = type;
  c.cost = model::gdn_conv_cost(dims_of(shape), 1, static_cast<double>(R), shape.chunk == 0,
                                static_cast<double>(scalar_bytes(type)));
  if (shape.bias) c.cost.flops += static_cast<double>(R * C);
  c.executed_flops = c.cost.flops;
  // K products of O(1) terms through SiLU; bf16: the output's rounding.
  c.tolerance = type == ScalarType::bf16 ? Tolerance{4e-3, 8e-3} : Tolerance{2e-6 * static_cast<double>(K), 2e-5};
  auto x = host_floats(static_cast<std::size_t>(R * C), seed, type);
  auto w = host_floats(static_cast<std::size_t>(C * K), seed + 1, type, -0.8f, 0.8f);
  auto bias = host_floats(shape.bias ? static_cast<std::size_t>(C) : 0, seed + 2, ScalarType::f32);
  auto history = host_floats(static_cast<std::size_t>((K - 1) * C), seed + 3, type);
  const HostInts writes = writes_of(shape);
  auto ref = lazy<Stateful>([=] {
    Stateful r{{}, to_doubles(*history)};
    r.out = causal_conv1d_reference(to_doubles(*x), R, C, to_doubles(*w), K, to_doubles(*bias), r.state, *writes);
    return r;
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tx = be.allocate({R, C}, type), tw = be.allocate({C, K}, type), to = be.allocate({R, C}, type);
    const Tensor ts = be.allocate({K - 1, C}, type);
    const Tensor tb = shape.bias ? be.allocate({C}, ScalarType::f32) : Tensor{};
    const Tensor twr = shape.writes ? be.allocate({R}, ScalarType::i32) : Tensor{};
    p->input(tx, x);
    p->input(tw, w);
    p->input(ts, history);
    if (shape.bias) p->input(tb, bias);
    if (shape.writes) p->input(twr, writes);
    p->set([bp = &be, tx, tw, tb, ts, to, twr] { bp->causal_conv1d(tx, tw, tb, ts, to, twr); },
           [bp = &be, to, ts, K, ref, tol] {
             OpCheck out = compare(bp->download_f32(to), ref->get().out, tol, "out");
             if (K > 1) out = merge(out, compare(bp->download_f32(ts), ref->get().state, tol, "state"));
             return out;
           });
    return p;
  };
  return c;
}

OpCase gated_delta_rule_case(const GdnCaseShape& shape, ScalarType type, std::uint64_t seed) {
  OpCase c;
  const std::int64_t R = shape.rows, hv = shape.hv, dk = shape.dk, dv = shape.dv;
  const std::int64_t C = 2 * shape.hk * dk + hv * dv;
  c.name = gdn_name("gated_delta_rule", shape, type) + " chunk=" + std::to_string(shape.chunk);
  c.op = BackendOp::gated_delta_rule;
  c.kind = model::OpKind::attention;
  c.type = type;
  c.cost = model::gdn_rule_cost(dims_of(shape), 1, static_cast<double>(R), shape.chunk == 0,
                                static_cast<double>(scalar_bytes(type)));
  c.executed_flops = c.cost.flops;
  // Outputs and state entries are sums of O(1) terms over the rows (decays keep them
  // bounded): f32 within 1e-4 of the double recurrence (test_gated_delta_rule.cpp's
  // bound); bf16 stores the state, so each row's update is rounded to 2^-9 on the way.
  c.tolerance = type == ScalarType::bf16 ? Tolerance{3e-2, 2e-2} : Tolerance{1e-4, 1e-4};
  auto qkv = host_floats(static_cast<std::size_t>(R * C), seed, type);
  auto ba = host_floats(static_cast<std::size_t>(R * 2 * hv), seed + 1, type, -2.0f, 2.0f);
  auto a_log = host_floats(static_cast<std::size_t>(hv), seed + 2, ScalarType::f32, -1.0f, 1.5f);
  auto dt_bias = host_floats(static_cast<std::size_t>(hv), seed + 3, ScalarType::f32, -1.0f, 1.0f);
  auto state0 = host_floats(static_cast<std::size_t>(hv * dk * dv), seed + 4, type, -0.5f, 0.5f);
  const HostInts writes = writes_of(shape);
  const GdnShape gs{R, shape.hk, hv, dk, dv};
  auto ref = lazy<Stateful>([=] {
    Stateful r{{}, to_doubles(*state0)};
    r.out = gated_delta_rule_op_reference(to_doubles(*qkv), to_doubles(*ba), to_doubles(*a_log), to_doubles(*dt_bias),
                                          gs, r.state, *writes);
    return r;
  });
  const Tolerance tol = c.tolerance;
  const std::int64_t chunk = shape.chunk;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tq = be.allocate({R, C}, type), tba = be.allocate({R, 2 * hv}, type);
    const Tensor ta = be.allocate({hv}, ScalarType::f32), tdt = be.allocate({hv}, ScalarType::f32);
    const Tensor ts = be.allocate({hv, dk, dv}, type), to = be.allocate({R, hv, dv}, type);
    const Tensor twr = shape.writes ? be.allocate({R}, ScalarType::i32) : Tensor{};
    p->input(tq, qkv);
    p->input(tba, ba);
    p->input(ta, a_log);
    p->input(tdt, dt_bias);
    p->input(ts, state0);
    if (shape.writes) p->input(twr, writes);
    p->set([bp = &be, tq, tba, ta, tdt, ts, to, chunk, twr] {
             bp->gated_delta_rule(tq, tba, ta, tdt, ts, to, chunk, twr);
           },
           [bp = &be, to, ts, ref, tol] {
             return merge(compare(bp->download_f32(to), ref->get().out, tol, "out"),
                          compare(bp->download_f32(ts), ref->get().state, tol, "state"));
           });
    return p;
  };
  return c;
}

OpCase gated_rms_norm_case(std::int64_t rows, std::int64_t dim, ScalarType type, std::uint64_t seed,
                           GatedNormForm form) {
  OpCase c;
  c.name = shape_name("gated_rms_norm", {{"rows", rows}, {"dim", dim}, {"group", form.group}}, type) +
           (form.gate_before_norm ? " gate-first" : "");
  c.op = BackendOp::gated_rms_norm;
  c.kind = model::OpKind::o_proj;  // fused before out_proj (layer_ops.cpp's gdn_ops)
  c.type = type;
  c.cost.flops = 9.0 * static_cast<double>(rows * dim);  // RMSNorm 4 + SiLU-gate 5 an element
  c.cost.weight_bytes = bytes_of(dim, ScalarType::f32);
  c.cost.act_bytes_in = bytes_of(2 * rows * dim, type);
  c.cost.act_bytes_out = bytes_of(rows * dim, type);
  c.executed_flops = c.cost.flops;
  c.tolerance = vector_tolerance(type);
  auto x = host_floats(static_cast<std::size_t>(rows * dim), seed, type);
  auto gate = host_floats(static_cast<std::size_t>(rows * dim), seed + 1, type, -3.0f, 3.0f);
  auto w = host_floats(static_cast<std::size_t>(dim), seed + 2, ScalarType::f32, 0.5f, 1.5f);
  auto ref = lazy<Doubles>([=] {
    return gated_rms_norm_reference(to_doubles(*x), to_doubles(*gate), to_doubles(*w), rows, dim, 1e-6, form);
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tx = be.allocate({rows, dim}, type), tg = be.allocate({rows, dim}, type);
    const Tensor tw = be.allocate({dim}, ScalarType::f32), to = be.allocate({rows, dim}, type);
    p->input(tx, x);
    p->input(tg, gate);
    p->input(tw, w);
    p->set([bp = &be, tx, tg, tw, to, form] { bp->gated_rms_norm(tx, tg, tw, 1e-6f, to, form); },
           [bp = &be, to, ref, tol] { return compare(bp->download_f32(to), ref->get(), tol, "out"); });
    return p;
  };
  return c;
}

OpCase mamba2_ssd_case(const Mamba2CaseShape& shape, ScalarType type, std::uint64_t seed) {
  OpCase c;
  const std::int64_t R = shape.rows, H = shape.heads, P = shape.head_dim, G = shape.groups, N = shape.state;
  const std::int64_t C = H * P + 2 * G * N;
  c.name = shape_name("mamba2_ssd", {{"R", R}, {"H", H}, {"P", P}, {"G", G}, {"N", N}, {"chunk", shape.chunk}}, type);
  c.op = BackendOp::mamba2_ssd;
  c.kind = model::OpKind::attention;  // the linear mixer's second kernel
  c.type = type;
  model::Mamba2Dims m;
  m.heads = static_cast<double>(H);
  m.head_dim = static_cast<double>(P);
  m.groups = static_cast<double>(G);
  m.state = static_cast<double>(N);
  m.chunk = static_cast<double>(shape.chunk > 0 ? shape.chunk : 1);
  c.cost = model::mamba2_ssd_cost(m, 1, static_cast<double>(R), shape.chunk == 0,
                                  static_cast<double>(scalar_bytes(type)));
  c.executed_flops = c.cost.flops;
  // Decayed sums of O(1) terms over the rows, as the gated delta rule's: f32 within 1e-4
  // of the double recurrence; bf16 rounds the inputs (the reference sees them rounded) and
  // the outputs and the state it leaves.
  c.tolerance = type == ScalarType::bf16 ? Tolerance{3e-2, 2e-2} : Tolerance{1e-4, 1e-4};
  auto xbc = host_floats(static_cast<std::size_t>(R * C), seed, type);
  auto dt = host_floats(static_cast<std::size_t>(R * H), seed + 1, type, -3.0f, 1.0f);
  auto a_log = host_floats(static_cast<std::size_t>(H), seed + 2, ScalarType::f32, -1.0f, 1.5f);
  auto dt_bias = host_floats(static_cast<std::size_t>(H), seed + 3, ScalarType::f32, -1.0f, 1.0f);
  auto d = host_floats(static_cast<std::size_t>(H), seed + 4, ScalarType::f32, 0.5f, 1.5f);
  auto state0 = host_floats(static_cast<std::size_t>(H * P * N), seed + 5, type, -0.5f, 0.5f);
  const Mamba2Shape ms{R, H, P, G, N};
  auto ref = lazy<Stateful>([=] {
    Stateful r{{}, to_doubles(*state0)};
    r.out = mamba2_ssd_op_reference(to_doubles(*xbc), to_doubles(*dt), to_doubles(*a_log), to_doubles(*dt_bias),
                                    to_doubles(*d), ms, r.state);
    return r;
  });
  const Tolerance tol = c.tolerance;
  const std::int64_t chunk = shape.chunk;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tx = be.allocate({R, C}, type), tdt = be.allocate({R, H}, type);
    const Tensor ta = be.allocate({H}, ScalarType::f32), tb = be.allocate({H}, ScalarType::f32);
    const Tensor td = be.allocate({H}, ScalarType::f32);
    const Tensor ts = be.allocate({H, P, N}, type), ty = be.allocate({R, H, P}, type);
    p->input(tx, xbc);
    p->input(tdt, dt);
    p->input(ta, a_log);
    p->input(tb, dt_bias);
    p->input(td, d);
    p->input(ts, state0);
    p->set([bp = &be, tx, tdt, ta, tb, td, ts, ty, chunk] { bp->mamba2_ssd(tx, tdt, ta, tb, td, ts, ty, chunk); },
           [bp = &be, ty, ts, ref, tol] {
             return merge(compare(bp->download_f32(ty), ref->get().out, tol, "y"),
                          compare(bp->download_f32(ts), ref->get().state, tol, "state"));
           });
    return p;
  };
  return c;
}

OpCase sigmoid_gate_case(std::int64_t rows, std::int64_t width, bool per_row, ScalarType type, std::uint64_t seed) {
  OpCase c;
  c.name = shape_name("sigmoid_gate", {{"rows", rows}, {"W", width}}, type) + (per_row ? " per-row" : "");
  c.op = BackendOp::sigmoid_gate;
  c.kind = per_row ? model::OpKind::shared_experts : model::OpKind::o_proj;
  c.type = type;
  const std::int64_t gate_cols = per_row ? 1 : width;
  // sigmoid 4 per gate element, product 1 per output (layer_ops.cpp)
  c.cost.flops = static_cast<double>(4 * rows * gate_cols + rows * width);
  c.cost.act_bytes_in = bytes_of(rows * (width + gate_cols), type);
  c.cost.act_bytes_out = bytes_of(rows * width, type);
  c.executed_flops = c.cost.flops;
  c.tolerance = vector_tolerance(type);
  auto x = host_floats(static_cast<std::size_t>(rows * width), seed, type);
  auto gate = host_floats(static_cast<std::size_t>(rows * gate_cols), seed + 1, type, -4.0f, 4.0f);
  auto ref =
      lazy<Doubles>([=] { return sigmoid_gate_reference(to_doubles(*x), to_doubles(*gate), rows, width, gate_cols); });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tx = be.allocate({rows, width}, type), tg = be.allocate({rows, gate_cols}, type);
    const Tensor to = be.allocate({rows, width}, type);
    p->input(tx, x);
    p->input(tg, gate);
    p->set([bp = &be, tx, tg, to] { bp->sigmoid_gate(tx, tg, to); },
           [bp = &be, to, ref, tol] { return compare(bp->download_f32(to), ref->get(), tol, "out"); });
    return p;
  };
  return c;
}

}  // namespace hdlab::executor
