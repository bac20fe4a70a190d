// Op cases of the non-attention ops, the helpers all builders share, and the
// correctness table. Each builder states its tolerance and its analytic cost.
#include "hdlab/executor/op_cases.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "op_case_support.hpp"

namespace hdlab::executor {

namespace detail {

HostFloats host_floats(std::size_t count, std::uint64_t seed, ScalarType type, float lo, float hi) {
  auto v = random_floats(count, seed, lo, hi);
  if (type == ScalarType::bf16)
    for (auto& x : v) x = round_to_bf16(x);
  return std::make_shared<const std::vector<float>>(std::move(v));
}

HostInts host_ints(std::vector<std::int32_t> values) {
  return std::make_shared<const std::vector<std::int32_t>>(std::move(values));
}

Doubles to_doubles(const std::vector<float>& v) { return Doubles(v.begin(), v.end()); }

}  // namespace detail

OpCheck compare_to_reference(const std::vector<float>& out, const Doubles& ref, Tolerance tol,
                             const std::string& what) {
  OpCheck c;
  c.checked = static_cast<std::int64_t>(out.size());
  if (out.size() != ref.size()) {
    c.pass = false;
    c.worst = what + ": " + std::to_string(out.size()) + " values, reference has " + std::to_string(ref.size());
    return c;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double err = std::abs(static_cast<double>(out[i]) - ref[i]);
    const double allowed = tol.abs + tol.rel * std::abs(ref[i]);
    const double ratio = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
    if (std::isnan(out[i]) || ratio > c.worst_ratio || (c.worst.empty() && i == 0)) {
      std::ostringstream o;
      o << what << "[" << i << "] = " << out[i] << ", reference " << ref[i] << ", allowed +-" << allowed;
      c.worst = o.str();
      c.worst_ratio = std::isnan(out[i]) ? INFINITY : std::max(c.worst_ratio, ratio);
    }
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (!(err <= allowed)) c.pass = false;  // NaN fails too
  }
  return c;
}

namespace detail {

OpCheck compare_exact(const std::vector<std::int32_t>& out, const std::vector<std::int32_t>& ref,
                      const std::string& what) {
  OpCheck c;
  c.checked = static_cast<std::int64_t>(out.size());
  for (std::size_t i = 0; i < std::min(out.size(), ref.size()); ++i)
    if (out[i] != ref[i]) {
      c.pass = false;
      c.worst_ratio = INFINITY;
      c.worst = what + "[" + std::to_string(i) + "] = " + std::to_string(out[i]) + ", reference " + std::to_string(ref[i]);
      return c;
    }
  if (out.size() != ref.size()) {
    c.pass = false;
    c.worst = what + ": size differs";
  }
  return c;
}

OpCheck merge(OpCheck a, const OpCheck& b) {
  if (b.worst_ratio > a.worst_ratio || (!b.pass && a.pass)) a.worst = b.worst;
  a.pass = a.pass && b.pass;
  a.checked += b.checked;
  a.max_abs_error = std::max(a.max_abs_error, b.max_abs_error);
  a.worst_ratio = std::max(a.worst_ratio, b.worst_ratio);
  return a;
}

void PreparedLambda::restore() {
  for (auto& [t, v] : floats_) backend_.upload(t, std::span<const float>(*v));
  for (auto& [t, v] : ints_) backend_.upload(t, std::span<const std::int32_t>(*v));
  for (auto& t : zeroed_) backend_.fill_zero(t);
}

Tolerance vector_tolerance(ScalarType type) {
  // f32: a few roundings of O(1) values. bf16: the output's own rounding, 2^-9 relative,
  // plus rounding of intermediates kept in bf16 -> 8e-3 (about two bf16 ulps).
  return type == ScalarType::bf16 ? Tolerance{1e-3, 8e-3} : Tolerance{1e-6, 2e-5};
}

}  // namespace detail

using namespace detail;

std::string detail::shape_name(const char* op, std::initializer_list<std::pair<const char*, std::int64_t>> dims,
                               ScalarType type) {
  std::ostringstream o;
  o << op;
  for (auto& [k, v] : dims) o << ' ' << k << '=' << v;
  o << ' ' << to_string(type);
  return o.str();
}

OpCase gemm_case(model::OpKind kind, std::int64_t m, std::int64_t n, std::int64_t k, ScalarType type,
                 std::uint64_t seed, bool trans_a, bool trans_b, float alpha, float beta) {
  OpCase c;
  c.name = shape_name("gemm", {{"M", m}, {"N", n}, {"K", k}}, type) + (trans_a ? " At" : "") + (trans_b ? " Bt" : "") +
           (beta != 0 ? " beta" : "") + " (" + model::to_string(kind) + ")";
  c.op = BackendOp::gemm;
  c.kind = kind;
  c.type = type;
  c.cost.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  c.cost.weight_bytes = bytes_of(n * k, type);
  c.cost.act_bytes_in = bytes_of(m * k + (beta != 0 ? m * n : 0), type);
  c.cost.act_bytes_out = bytes_of(m * n, type);
  c.executed_flops = c.cost.flops;
  // Sums of K products of numbers below 1: f32 error grows about like K u; bf16 output
  // adds its rounding (2^-9 relative).
  c.tolerance = type == ScalarType::bf16 ? Tolerance{2e-5 * static_cast<double>(k), 8e-3}
                                         : Tolerance{1e-6 * static_cast<double>(k), 1e-5};
  auto a = host_floats(static_cast<std::size_t>(m * k), seed, type);
  auto b = host_floats(static_cast<std::size_t>(k * n), seed + 1, type);
  auto c0 = host_floats(static_cast<std::size_t>(m * n), seed + 2, type);
  auto ref = lazy<Doubles>([=] {
    return gemm_reference(to_doubles(*a), trans_a, to_doubles(*b), trans_b, m, n, k, alpha, beta, to_doubles(*c0));
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor ta = be.allocate(trans_a ? Shape{k, m} : Shape{m, k}, type);
    const Tensor tb = be.allocate(trans_b ? Shape{n, k} : Shape{k, n}, type);
    const Tensor tc = be.allocate({m, n}, type);
    p->input(ta, a);
    p->input(tb, b);
    p->input(tc, c0);
    p->set([bp = &be, ta, tb, tc, trans_a, trans_b, alpha, beta] { bp->gemm(ta, trans_a, tb, trans_b, tc, alpha, beta); },
           [bp = &be, tc, ref, tol] { return compare(bp->download_f32(tc), ref->get(), tol, "c"); });
    return p;
  };
  return c;
}

OpCase rms_norm_case(model::OpKind kind, std::int64_t rows, std::int64_t dim, ScalarType type, std::uint64_t seed) {
  OpCase c;
  c.name = shape_name("rms_norm", {{"rows", rows}, {"dim", dim}}, type) + " (" + model::to_string(kind) + ")";
  c.op = BackendOp::rms_norm;
  c.kind = kind;
  c.type = type;
  c.cost.flops = 4.0 * static_cast<double>(rows * dim);  // square, add, scale, weight
  c.cost.weight_bytes = bytes_of(dim, ScalarType::f32);
  c.cost.act_bytes_in = bytes_of(rows * dim, type);
  c.cost.act_bytes_out = bytes_of(rows * dim, type);
  c.executed_flops = c.cost.flops;
  c.tolerance = vector_tolerance(type);
  constexpr float eps = 1e-6f;
  auto x = host_floats(static_cast<std::size_t>(rows * dim), seed, type);
  auto w = host_floats(static_cast<std::size_t>(dim), seed + 1, ScalarType::f32, 0.5f, 1.5f);
  auto ref = lazy<Doubles>([=] { return rms_norm_reference(to_doubles(*x), to_doubles(*w), rows, dim, eps); });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tx = be.allocate({rows, dim}, type), tw = be.allocate({dim}, ScalarType::f32);
    const Tensor to = be.allocate({rows, dim}, type);
    p->input(tx, x);
    p->input(tw, w);
    p->set([bp = &be, tx, tw, to] { bp->rms_norm(tx, tw, eps, to); },
           [bp = &be, to, ref, tol] { return compare(bp->download_f32(to), ref->get(), tol, "out"); });
    return p;
  };
  return c;
}

OpCase group_norm_case(std::int64_t rows, std::int64_t groups, std::int64_t group_size, ScalarType type,
                       std::uint64_t seed) {
  OpCase c;
  const std::int64_t width = groups * group_size;
  c.name = shape_name("group_norm", {{"rows", rows}, {"groups", groups}, {"size", group_size}}, type);
  c.op = BackendOp::group_norm;
  c.kind = model::OpKind::vwn_reduce;
  c.type = type;
  c.cost.flops = 8.0 * static_cast<double>(rows * width);  // mean 1, variance 3, normalise and affine 4
  c.cost.weight_bytes = bytes_of(2 * width, ScalarType::f32);
  c.cost.act_bytes_in = bytes_of(rows * width, type);
  c.cost.act_bytes_out = bytes_of(rows * width, type);
  c.executed_flops = c.cost.flops;
  c.tolerance = vector_tolerance(type);
  constexpr float eps = 1e-5f;
  auto x = host_floats(static_cast<std::size_t>(rows * width), seed, type, -1.0f, 3.0f);  // off-centre
  auto w = host_floats(static_cast<std::size_t>(width), seed + 1, ScalarType::f32, 0.5f, 1.5f);
  auto b = host_floats(static_cast<std::size_t>(width), seed + 2, ScalarType::f32, -0.5f, 0.5f);
  auto ref = lazy<Doubles>([=] {
    return group_norm_reference(to_doubles(*x), to_doubles(*w), to_doubles(*b), rows, width, group_size, eps);
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tx = be.allocate({rows, width}, type), to = be.allocate({rows, width}, type);
    const Tensor tw = be.allocate({width}, ScalarType::f32), tb = be.allocate({width}, ScalarType::f32);
    p->input(tx, x);
    p->input(tw, w);
    p->input(tb, b);
    p->set([bp = &be, tx, tw, tb, to, group_size] { bp->group_norm(tx, group_size, tw, tb, eps, to); },
           [bp = &be, to, ref, tol] { return compare(bp->download_f32(to), ref->get(), tol, "out"); });
    return p;
  };
  return c;
}

OpCase rope_case(std::int64_t tokens, std::int64_t heads, std::int64_t head_dim, std::int32_t first_position,
                 std::int32_t position_step, ScalarType type, std::uint64_t seed, const model::RotaryFrequencies& f,
                 const std::string& label) {
  OpCase c;
  const auto rotated = 2 * static_cast<std::int64_t>(f.inv_freq.size());
  c.name = shape_name("rope", {{"T", tokens}, {"heads", heads}, {"hd", head_dim}, {"pos0", first_position}}, type);
  if (rotated != head_dim) c.name += " rotary=" + std::to_string(rotated);
  if (!label.empty()) c.name += " " + label;
  c.op = BackendOp::rope;
  c.kind = model::OpKind::rope;
  c.type = type;
  c.cost.flops = 3.0 * static_cast<double>(tokens * heads * rotated);  // per pair: 4 mul + 2 add
  c.cost.act_bytes_in = bytes_of(tokens * heads * head_dim, type);
  c.cost.act_bytes_out = c.cost.act_bytes_in;
  c.executed_flops = c.cost.flops;
  // Rotations keep |x| <= sqrt(2) |factor|; f32 loses a few ulps, bf16 rounds the result.
  c.tolerance = type == ScalarType::bf16 ? Tolerance{1e-2, 0} : Tolerance{1e-5, 0};
  auto x = host_floats(static_cast<std::size_t>(tokens * heads * head_dim), seed, type);
  std::vector<std::int32_t> pos(static_cast<std::size_t>(tokens));
  for (std::int64_t t = 0; t < tokens; ++t)
    pos[static_cast<std::size_t>(t)] = first_position + static_cast<std::int32_t>(t) * position_step;
  auto positions = host_ints(pos);
  auto freqs = std::make_shared<const std::vector<double>>(f.inv_freq);
  const double factor = f.cos_sin_factor;
  auto ref = lazy<Doubles>(
      [=] { return rope_reference(to_doubles(*x), *positions, heads, head_dim, *freqs, factor); });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tx = be.allocate({tokens, heads, head_dim}, type), tp = be.allocate({tokens}, ScalarType::i32);
    p->input(tx, x);
    p->input(tp, positions);
    p->set([bp = &be, tx, tp, freqs, factor] { bp->rope(tx, tp, *freqs, factor); },
           [bp = &be, tx, ref, tol] { return compare(bp->download_f32(tx), ref->get(), tol, "x"); });
    return p;
  };
  return c;
}

OpCase rope_case(std::int64_t tokens, std::int64_t heads, std::int64_t head_dim, std::int32_t first_position,
                 std::int32_t position_step, ScalarType type, std::uint64_t seed, std::int64_t rotary_dim) {
  model::RotaryFrequencies f;
  f.inv_freq = model::plain_inv_freq(1e6, rotary_dim > 0 ? rotary_dim : head_dim);
  return rope_case(tokens, heads, head_dim, first_position, position_step, type, seed, f, "");
}

OpCase swiglu_case(std::int64_t tokens, std::int64_t ffn, ScalarType type, std::uint64_t seed, SwigluClamp clamp) {
  OpCase c;
  const bool clamped = clamp.limit > 0;
  c.name = shape_name(clamped ? "swiglu clamped" : "swiglu", {{"T", tokens}, {"F", ffn}}, type);
  c.op = BackendOp::swiglu;
  c.kind = clamped ? model::OpKind::experts : model::OpKind::ffn_act;
  c.type = type;
  // 5 per output: negate, exp, add, divide (the sigmoid), product; the simulator's count
  // (clamped: 10, layer_program.cpp's expert_act_flops).
  c.cost.flops = (clamped ? 10.0 : 5.0) * static_cast<double>(tokens * ffn);
  c.cost.act_bytes_in = bytes_of(2 * tokens * ffn, type);
  c.cost.act_bytes_out = bytes_of(tokens * ffn, type);
  c.executed_flops = c.cost.flops;
  c.tolerance = vector_tolerance(type);
  auto gu = host_floats(static_cast<std::size_t>(2 * tokens * ffn), seed, type, -4.0f, 4.0f);
  auto ref = lazy<Doubles>([=] { return swiglu_reference(to_doubles(*gu), tokens, ffn, clamp); });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tg = be.allocate({tokens, 2 * ffn}, type), to = be.allocate({tokens, ffn}, type);
    p->input(tg, gu);
    p->set([bp = &be, tg, to, clamp] { bp->swiglu(tg, to, clamp); },
           [bp = &be, to, ref, tol] { return compare(bp->download_f32(to), ref->get(), tol, "out"); });
    return p;
  };
  return c;
}

OpCase relu2_case(std::int64_t tokens, std::int64_t ffn, ScalarType type, std::uint64_t seed) {
  OpCase c;
  c.name = shape_name("relu2", {{"T", tokens}, {"F", ffn}}, type);
  c.op = BackendOp::relu2;
  c.kind = model::OpKind::ffn_act;
  c.type = type;
  c.cost.flops = 2.0 * static_cast<double>(tokens * ffn);  // the max and the square (layer_ops.cpp)
  c.cost.act_bytes_in = bytes_of(tokens * ffn, type);
  c.cost.act_bytes_out = c.cost.act_bytes_in;
  c.executed_flops = c.cost.flops;
  c.tolerance = vector_tolerance(type);
  auto x = host_floats(static_cast<std::size_t>(tokens * ffn), seed, type, -2.0f, 2.0f);
  auto ref = lazy<Doubles>([=] { return relu2_reference(to_doubles(*x)); });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tx = be.allocate({tokens, ffn}, type), to = be.allocate({tokens, ffn}, type);
    p->input(tx, x);
    p->set([bp = &be, tx, to] { bp->relu2(tx, to); },
           [bp = &be, to, ref, tol] { return compare(bp->download_f32(to), ref->get(), tol, "out"); });
    return p;
  };
  return c;
}

OpCase add_case(std::int64_t tokens, std::int64_t width, ScalarType type, std::uint64_t seed) {
  OpCase c;
  c.name = shape_name("add", {{"T", tokens}, {"D", width}}, type);
  c.op = BackendOp::add;
  c.kind = model::OpKind::residual;
  c.type = type;
  c.cost.flops = static_cast<double>(tokens * width);
  c.cost.act_bytes_in = bytes_of(2 * tokens * width, type);
  c.cost.act_bytes_out = bytes_of(tokens * width, type);
  c.executed_flops = c.cost.flops;
  c.tolerance = vector_tolerance(type);
  auto a = host_floats(static_cast<std::size_t>(tokens * width), seed, type);
  auto b = host_floats(static_cast<std::size_t>(tokens * width), seed + 1, type);
  auto ref = lazy<Doubles>([=] { return add_reference(to_doubles(*a), to_doubles(*b)); });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor ta = be.allocate({tokens, width}, type), tb = be.allocate({tokens, width}, type);
    p->input(ta, a);
    p->input(tb, b);
    // In place, as the residual stream is updated.
    p->set([bp = &be, ta, tb] { bp->add(ta, tb, ta); },
           [bp = &be, ta, ref, tol] { return compare(bp->download_f32(ta), ref->get(), tol, "a"); });
    return p;
  };
  return c;
}

OpCase topk_routing_case(std::int64_t tokens, std::int64_t experts, std::int64_t k, model::RouterKind score,
                         bool normalize, ScalarType type, std::uint64_t seed) {
  OpCase c;
  c.name = shape_name("topk_routing", {{"T", tokens}, {"E", experts}, {"k", k}}, type) +
           (score == model::RouterKind::softmax ? " softmax" : " sigmoid") + (normalize ? " normalized" : "");
  c.op = BackendOp::topk_routing;
  c.kind = model::OpKind::router;
  c.type = type;
  // The router's FLOPs are its logits GEMM (a gemm case of kind router); like the
  // simulator, the scores and the top-k selection after it are not counted.
  c.cost.flops = 0;
  c.cost.act_bytes_in = bytes_of(tokens * experts, type);
  c.cost.act_bytes_out = bytes_of(2 * tokens * k, ScalarType::f32);
  c.executed_flops = c.cost.flops;
  c.tolerance = Tolerance{1e-6, 1e-5};  // weights are f32 from exact inputs
  // Logits: a shuffled ladder of distinct values 1/16 apart (exact in bf16 for |x| < 8),
  // so the k best are never a near tie and every backend must pick the same experts.
  std::vector<float> logits(static_cast<std::size_t>(tokens * experts));
  const auto noise = random_floats(logits.size(), seed);
  for (std::int64_t t = 0; t < tokens; ++t) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(experts));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) {
      return noise[static_cast<std::size_t>(t * experts + x)] < noise[static_cast<std::size_t>(t * experts + y)];
    });
    for (std::int64_t r = 0; r < experts; ++r)
      logits[static_cast<std::size_t>(t * experts + order[static_cast<std::size_t>(r)])] =
          static_cast<float>(r - experts / 2) / 16.0f;
  }
  auto lg = std::make_shared<const std::vector<float>>(std::move(logits));
  auto ref = lazy<Routing>(
      [=] { return topk_routing_reference(to_doubles(*lg), tokens, experts, k, score, normalize); });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tl = be.allocate({tokens, experts}, type);
    const Tensor ids = be.allocate({tokens, k}, ScalarType::i32), wt = be.allocate({tokens, k}, ScalarType::f32);
    p->input(tl, lg);
    p->set([bp = &be, tl, ids, wt, k, score, normalize] { bp->topk_routing(tl, k, score, normalize, ids, wt); },
           [bp = &be, ids, wt, ref, tol] {
             return merge(compare_exact(bp->download_i32(ids), ref->get().expert_ids, "expert_ids"),
                          compare(bp->download_f32(wt), ref->get().weights, tol, "weights"));
           });
    return p;
  };
  return c;
}

OpCase gather_rows_case(std::int64_t tokens, std::int64_t vocab, std::int64_t width, std::int64_t streams,
                        std::int64_t stream, ScalarType type, std::uint64_t seed) {
  OpCase c;
  c.name = shape_name("gather_rows", {{"T", tokens}, {"V", vocab}, {"W", width}, {"n", streams}, {"k", stream}}, type);
  c.op = BackendOp::gather_rows;
  c.kind = model::OpKind::embedding;
  c.type = type;
  c.cost.weight_bytes = bytes_of(tokens * width, type);  // the table rows read
  c.cost.act_bytes_in = bytes_of(tokens, ScalarType::i32);
  c.cost.act_bytes_out = bytes_of(tokens * width, type);
  c.tolerance = Tolerance{0, 0};  // a copy
  auto table = host_floats(static_cast<std::size_t>(vocab * width), seed, type);
  std::vector<std::int32_t> id(static_cast<std::size_t>(tokens));
  const auto r = random_floats(id.size(), seed + 1, 0.0f, static_cast<float>(vocab));
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = std::min(static_cast<std::int32_t>(r[i]), static_cast<std::int32_t>(vocab - 1));
  auto ids = host_ints(id);
  const RowMap map{stream, streams};
  const std::int64_t out_rows = tokens * streams;
  auto background = host_floats(static_cast<std::size_t>(out_rows * width), seed + 2, type);  // other streams' rows
  auto ref = lazy<Doubles>([=] {
    Doubles out = to_doubles(*background);
    gather_rows_reference(to_doubles(*table), width, *ids, map, out);
    return out;
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tt = be.allocate({vocab, width}, type), ti = be.allocate({tokens}, ScalarType::i32);
    const Tensor to = be.allocate({out_rows, width}, type);
    p->input(tt, table);
    p->input(ti, ids);
    p->input(to, background);
    p->set([bp = &be, tt, ti, to, map] { bp->gather_rows(tt, ti, to, map); },
           [bp = &be, to, ref, tol] { return compare(bp->download_f32(to), ref->get(), tol, "out"); });
    return p;
  };
  return c;
}

OpCase scatter_add_rows_case(std::int64_t routed, std::int64_t tokens, std::int64_t width, ScalarType type,
                             std::uint64_t seed) {
  OpCase c;
  c.name = shape_name("scatter_add_rows", {{"n", routed}, {"T", tokens}, {"W", width}}, type);
  c.op = BackendOp::scatter_add_rows;
  c.kind = model::OpKind::experts;
  c.type = type;
  c.cost.flops = 2.0 * static_cast<double>(routed * width);
  c.cost.act_bytes_in = bytes_of(2 * routed * width, type);  // src rows and the rows they add to
  c.cost.act_bytes_out = bytes_of(routed * width, type);
  c.executed_flops = c.cost.flops;
  c.tolerance = vector_tolerance(type);
  // Distinct destination rows: a seeded shuffle of the tokens, the first `routed` kept.
  std::vector<std::int32_t> perm(static_cast<std::size_t>(tokens));
  std::iota(perm.begin(), perm.end(), 0);
  const auto r = random_floats(perm.size(), seed + 1);
  for (std::size_t i = perm.size(); i > 1; --i)
    std::swap(perm[i - 1], perm[static_cast<std::size_t>((r[i - 1] + 1.0f) * 0.5f * static_cast<float>(i)) % i]);
  perm.resize(static_cast<std::size_t>(routed));
  auto ids = host_ints(perm);
  auto src = host_floats(static_cast<std::size_t>(routed * width), seed, type);
  auto wts = host_floats(static_cast<std::size_t>(routed), seed + 2, ScalarType::f32, 0.0f, 1.0f);
  auto acc = host_floats(static_cast<std::size_t>(tokens * width), seed + 3, type);
  auto ref = lazy<Doubles>([=] {
    Doubles out = to_doubles(*acc);
    scatter_add_rows_reference(to_doubles(*src), width, *ids, to_doubles(*wts), out);
    return out;
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor ts = be.allocate({routed, width}, type), ti = be.allocate({routed}, ScalarType::i32);
    const Tensor tw = be.allocate({routed}, ScalarType::f32), to = be.allocate({tokens, width}, type);
    p->input(ts, src);
    p->input(ti, ids);
    p->input(tw, wts);
    p->input(to, acc);
    p->set([bp = &be, ts, ti, tw, to] { bp->scatter_add_rows(ts, ti, tw, to); },
           [bp = &be, to, ref, tol] { return compare(bp->download_f32(to), ref->get(), tol, "out"); });
    return p;
  };
  return c;
}

}  // namespace hdlab::executor
