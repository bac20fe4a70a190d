// Op cases of the VWN generalized hyper-connection ops (methods.md section 3). Shapes: T
// tokens, n slots of s = D/m, m slots make the D-wide sublayer input/output.
#include <cmath>
#include <sstream>

#include "hdlab/model/layer_program.hpp"
#include "op_case_support.hpp"

namespace hdlab::executor {

using namespace detail;

namespace {

std::string ghc_name(const char* op, std::int64_t tokens, std::int64_t m, std::int64_t n, std::int64_t s,
                     ScalarType type, const char* extra = "") {
  std::ostringstream o;
  o << op << " T=" << tokens << " m=" << m << " n=" << n << " s=" << s << ' ' << to_string(type) << extra;
  return o.str();
}

// The static part of methods.md's init: A = [[I_m I_m 0], [0 0 I_{n-m}]] (n x (m+n)) and
// B[i, j] = 1 iff i = j mod m (m x n), plus a seeded perturbation so that every
// coefficient is exercised (pure 0/1 matrices would hide transposition mistakes).
std::vector<float> static_a_init(std::int64_t m, std::int64_t n, std::uint64_t seed) {
  auto a = random_floats(static_cast<std::size_t>(n * (m + n)), seed, -0.25f, 0.25f);
  for (std::int64_t i = 0; i < n; ++i) {
    if (i < m) {
      a[static_cast<std::size_t>(i * (m + n) + i)] += 1.0f;      // width: slot i -> input slot i
      a[static_cast<std::size_t>(i * (m + n) + m + i)] += 1.0f;  // carry: slot i kept
    } else {
      a[static_cast<std::size_t>(i * (m + n) + m + i)] += 1.0f;
    }
  }
  return a;
}

std::vector<float> static_b_init(std::int64_t m, std::int64_t n, std::uint64_t seed) {
  auto b = random_floats(static_cast<std::size_t>(m * n), seed, -0.25f, 0.25f);
  for (std::int64_t j = 0; j < n; ++j) b[static_cast<std::size_t>((j % m) * n + j)] += 1.0f;
  return b;
}

std::shared_ptr<const std::vector<float>> shared(std::vector<float> v) {
  return std::make_shared<const std::vector<float>>(std::move(v));
}

}  // namespace

OpCase ghc_dynamic_case(std::int64_t tokens, std::int64_t m, std::int64_t n, std::int64_t s, ScalarType type,
                        std::uint64_t seed) {
  OpCase c;
  c.name = ghc_name("ghc_dynamic", tokens, m, n, s, type);
  c.op = BackendOp::ghc_dynamic;
  c.kind = model::OpKind::ghc_dynamic;
  c.type = type;
  const std::int64_t cols = 2 * m + n;
  // methods.md: 2(2m+n)(n/m)D per token = 2 n s (2m+n); tanh and scaling not counted.
  c.cost.flops = 2.0 * static_cast<double>(tokens * n * s * cols);
  c.cost.weight_bytes = bytes_of(s * cols, type) + bytes_of(cols + n * (m + n) + m * n, ScalarType::f32);
  c.cost.act_bytes_in = bytes_of(tokens * n * s, type);
  c.cost.act_bytes_out = bytes_of(tokens * (n * (m + n) + m * n), ScalarType::f32);
  c.executed_flops = c.cost.flops;
  // Coefficients are f32 sums of s products of exact inputs through tanh.
  c.tolerance = Tolerance{2e-6 * static_cast<double>(s), 1e-5};
  auto hn = host_floats(static_cast<std::size_t>(tokens * n * s), seed, type, -2.0f, 2.0f);
  auto w = host_floats(static_cast<std::size_t>(s * cols), seed + 1, type, -0.5f, 0.5f);
  auto scale = host_floats(static_cast<std::size_t>(cols), seed + 2, ScalarType::f32, 0.5f, 1.5f);
  auto a0 = shared(static_a_init(m, n, seed + 3));
  auto b0 = shared(static_b_init(m, n, seed + 4));
  auto ref = lazy<GhcCoefficients>([=] {
    return ghc_dynamic_reference(to_doubles(*hn), tokens, n, s, m, to_doubles(*w), to_doubles(*scale),
                                 to_doubles(*a0), to_doubles(*b0));
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor th = be.allocate({tokens, n, s}, type), tw = be.allocate({s, cols}, type);
    const Tensor ts = be.allocate({cols}, ScalarType::f32), ta0 = be.allocate({n, m + n}, ScalarType::f32);
    const Tensor tb0 = be.allocate({m, n}, ScalarType::f32);
    const Tensor ta = be.allocate({tokens, n, m + n}, ScalarType::f32), tb = be.allocate({tokens, m, n}, ScalarType::f32);
    p->input(th, hn);
    p->input(tw, w);
    p->input(ts, scale);
    p->input(ta0, a0);
    p->input(tb0, b0);
    p->set([bp = &be, th, tw, ts, ta0, tb0, ta, tb] { bp->ghc_dynamic(th, tw, ts, ta0, tb0, ta, tb); },
           [bp = &be, ta, tb, ref, tol] {
             return merge(compare(bp->download_f32(ta), ref->get().alpha, tol, "alpha"),
                          compare(bp->download_f32(tb), ref->get().beta, tol, "beta"));
           });
    return p;
  };
  return c;
}

OpCase ghc_width_case(std::int64_t tokens, std::int64_t m, std::int64_t n, std::int64_t s, bool static_alpha,
                      ScalarType type, std::uint64_t seed) {
  OpCase c;
  c.name = ghc_name("ghc_width", tokens, m, n, s, type, static_alpha ? " static" : " dynamic");
  c.op = BackendOp::ghc_width;
  c.kind = model::OpKind::ghc_width;
  c.type = type;
  c.cost.flops = 2.0 * static_cast<double>(tokens * (m + n) * n * s);  // methods.md: 2(m+n)(n/m)D per token
  const std::int64_t alpha_tokens = static_alpha ? 1 : tokens;
  c.cost.weight_bytes = static_alpha ? bytes_of(n * (m + n), ScalarType::f32) : 0;
  c.cost.act_bytes_in = bytes_of(tokens * n * s, type) + (static_alpha ? 0 : bytes_of(tokens * n * (m + n), ScalarType::f32));
  c.cost.act_bytes_out = bytes_of(tokens * (m + n) * s, type);
  c.executed_flops = c.cost.flops;
  // n products of O(1) terms per output.
  c.tolerance = type == ScalarType::bf16 ? Tolerance{4e-3, 8e-3} : Tolerance{2e-6 * static_cast<double>(n), 1e-5};
  auto h = host_floats(static_cast<std::size_t>(tokens * n * s), seed, type);
  std::vector<float> al;
  for (std::int64_t t = 0; t < alpha_tokens; ++t) {
    const auto one = static_a_init(m, n, seed + 1 + static_cast<std::uint64_t>(t));
    al.insert(al.end(), one.begin(), one.end());
  }
  auto alpha = shared(std::move(al));
  auto ref = lazy<GhcWidthOut>(
      [=] { return ghc_width_reference(to_doubles(*h), tokens, n, s, m, to_doubles(*alpha), alpha_tokens); });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor th = be.allocate({tokens, n, s}, type), ta = be.allocate({alpha_tokens, n, m + n}, ScalarType::f32);
    const Tensor tx = be.allocate({tokens, m, s}, type), tc = be.allocate({tokens, n, s}, type);
    p->input(th, h);
    p->input(ta, alpha);
    p->set([bp = &be, th, ta, tx, tc] { bp->ghc_width(th, ta, tx, tc); },
           [bp = &be, tx, tc, ref, tol] {
             return merge(compare(bp->download_f32(tx), ref->get().x, tol, "x"),
                          compare(bp->download_f32(tc), ref->get().carry, tol, "carry"));
           });
    return p;
  };
  return c;
}

OpCase ghc_depth_case(std::int64_t tokens, std::int64_t m, std::int64_t n, std::int64_t s, bool static_beta,
                      ScalarType type, std::uint64_t seed) {
  OpCase c;
  c.name = ghc_name("ghc_depth", tokens, m, n, s, type, static_beta ? " static" : " dynamic");
  c.op = BackendOp::ghc_depth;
  c.kind = model::OpKind::ghc_depth;
  c.type = type;
  c.cost.flops = 2.0 * static_cast<double>(tokens * n * m * s);  // methods.md: 2nD per token
  const std::int64_t beta_tokens = static_beta ? 1 : tokens;
  c.cost.weight_bytes = static_beta ? bytes_of(m * n, ScalarType::f32) : 0;
  c.cost.act_bytes_in = bytes_of(tokens * (m + n) * s, type) + (static_beta ? 0 : bytes_of(tokens * m * n, ScalarType::f32));
  c.cost.act_bytes_out = bytes_of(tokens * n * s, type);
  c.executed_flops = c.cost.flops;
  c.tolerance = type == ScalarType::bf16 ? Tolerance{4e-3, 8e-3} : Tolerance{2e-6 * static_cast<double>(m + 1), 1e-5};
  auto z = host_floats(static_cast<std::size_t>(tokens * m * s), seed, type);
  auto carry = host_floats(static_cast<std::size_t>(tokens * n * s), seed + 1, type);
  std::vector<float> be_all;
  for (std::int64_t t = 0; t < beta_tokens; ++t) {
    const auto one = static_b_init(m, n, seed + 2 + static_cast<std::uint64_t>(t));
    be_all.insert(be_all.end(), one.begin(), one.end());
  }
  auto beta = shared(std::move(be_all));
  auto ref = lazy<Doubles>([=] {
    return ghc_depth_reference(to_doubles(*z), tokens, m, s, n, to_doubles(*beta), beta_tokens, to_doubles(*carry));
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tz = be.allocate({tokens, m, s}, type), tb = be.allocate({beta_tokens, m, n}, ScalarType::f32);
    const Tensor tc = be.allocate({tokens, n, s}, type);
    p->input(tz, z);
    p->input(tb, beta);
    p->input(tc, carry);
    // In place on the carried state, as the runner updates the wide residual stream.
    p->set([bp = &be, tz, tb, tc] { bp->ghc_depth(tz, tb, tc, tc); },
           [bp = &be, tc, ref, tol] { return compare(bp->download_f32(tc), ref->get(), tol, "out"); });
    return p;
  };
  return c;
}

}  // namespace hdlab::executor
