// The gated delta rule (executor/gated_delta_rule.hpp): the chunked CPU form against the
// double recurrent reference, and a decode that carries the state equal to the full forward.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "hdlab/executor/gated_delta_rule.hpp"

using namespace hdlab::executor;

namespace {

struct Inputs {
  GdnShape s;
  std::vector<double> q, k, v, g, beta;
};

// Random q, k, v; log decays in (-1, 0), write strengths in (0, 1), as the layer's
// -exp(A_log) softplus(.) and sigmoid(.) give.
Inputs random_inputs(GdnShape s, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, 1);
  std::uniform_real_distribution<double> u(0.02, 0.98);
  Inputs in{s, {}, {}, {}, {}, {}};
  const auto T = static_cast<std::size_t>(s.tokens);
  for (std::size_t i = 0; i < T * static_cast<std::size_t>(s.hk * s.dk); ++i) {
    in.q.push_back(n(rng));
    in.k.push_back(n(rng));
  }
  for (std::size_t i = 0; i < T * static_cast<std::size_t>(s.hv * s.dv); ++i) in.v.push_back(n(rng));
  for (std::size_t i = 0; i < T * static_cast<std::size_t>(s.hv); ++i) {
    in.g.push_back(-u(rng));
    in.beta.push_back(u(rng));
  }
  return in;
}

std::vector<float> to_float(const std::vector<double>& x) { return {x.begin(), x.end()}; }

// Rows [from, from + count) of a [T, width] tensor.
template <class V>
V rows(const V& x, std::int64_t width, std::int64_t from, std::int64_t count) {
  return V(x.begin() + from * width, x.begin() + (from + count) * width);
}

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::fmax(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST_CASE("gated delta rule: the chunked form equals the recurrent reference", "[gdn][linear]") {
  // 150 tokens: chunks of 64, 64 and a partial 22; 2 q/k heads shared by 4 value heads.
  const GdnShape s{150, 2, 4, 16, 8};
  const Inputs in = random_inputs(s, 7);
  std::vector<double> state(4 * 16 * 8, 0.0), out(in.v.size());
  gated_delta_rule_reference(in.q, in.k, in.v, in.g, in.beta, s, state, out);
  std::vector<float> fstate(state.size(), 0.f), fout(out.size());
  gated_delta_rule_chunked(to_float(in.q), to_float(in.k), to_float(in.v), to_float(in.g), to_float(in.beta), s, 64,
                           fstate, fout);
  // float against double over 150 steps: 1e-4 of outputs of order 1
  CHECK(max_abs_diff(fout, out) < 1e-4);
  CHECK(max_abs_diff(fstate, state) < 1e-4);
  // another chunk size, the same numbers
  std::vector<float> fstate7(state.size(), 0.f), fout7(out.size());
  gated_delta_rule_chunked(to_float(in.q), to_float(in.k), to_float(in.v), to_float(in.g), to_float(in.beta), s, 7,
                           fstate7, fout7);
  CHECK(max_abs_diff(fout7, out) < 1e-4);
}

TEST_CASE("gated delta rule: prefill then decode steps carrying the state equal the full forward", "[gdn][linear]") {
  const GdnShape whole{40, 1, 2, 8, 8};
  const Inputs in = random_inputs(whole, 11);
  std::vector<double> state(2 * 8 * 8, 0.0), out(in.v.size());
  gated_delta_rule_reference(in.q, in.k, in.v, in.g, in.beta, whole, state, out);

  // prefill the first 30 tokens chunked, then 10 decode steps of one token each
  const std::int64_t P = 30, qk = 8, vw = 2 * 8, hv = 2;
  GdnShape pre = whole;
  pre.tokens = P;
  std::vector<float> st(state.size(), 0.f), o(static_cast<std::size_t>(P * vw));
  gated_delta_rule_chunked(rows(to_float(in.q), qk, 0, P), rows(to_float(in.k), qk, 0, P),
                           rows(to_float(in.v), vw, 0, P), rows(to_float(in.g), hv, 0, P),
                           rows(to_float(in.beta), hv, 0, P), pre, 64, st, o);
  std::vector<float> all = o;
  GdnShape one = whole;
  one.tokens = 1;
  for (std::int64_t t = P; t < whole.tokens; ++t) {
    std::vector<float> step(static_cast<std::size_t>(vw));
    gated_delta_rule_chunked(rows(to_float(in.q), qk, t, 1), rows(to_float(in.k), qk, t, 1),
                             rows(to_float(in.v), vw, t, 1), rows(to_float(in.g), hv, t, 1),
                             rows(to_float(in.beta), hv, t, 1), one, 64, st, step);
    all.insert(all.end(), step.begin(), step.end());
  }
  CHECK(max_abs_diff(all, out) < 1e-4);
  CHECK(max_abs_diff(st, state) < 1e-4);
}

TEST_CASE("gated delta rule: shapes that do not fit are refused", "[gdn][linear][errors]") {
  const GdnShape s{4, 2, 3, 4, 4};  // 3 value heads cannot share 2 q/k heads
  std::vector<double> x(64), st(48), out(48);
  CHECK_THROWS_AS(gated_delta_rule_reference(x, x, out, st, st, s, st, out), std::invalid_argument);
}
