// The Mamba-2 SSD scan (executor/mamba2_ssd.hpp): the chunked CPU form against the double
// recurrent reference, a decode that carries the state equal to the full forward, and a
// recurrence worked by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "hdlab/executor/mamba2_ssd.hpp"

using namespace hdlab::executor;

namespace {

struct Inputs {
  Mamba2Shape s;
  std::vector<double> x, B, C, dt, dt_bias, a_log, d;
  Mamba2Params<double> params() const { return {dt_bias, a_log, d}; }
};

// Random x, B, C, dt; A_log, dt_bias and D around the values Mamba-2 initialises.
Inputs random_inputs(Mamba2Shape s, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  Inputs in{s, {}, {}, {}, {}, {}, {}, {}};
  const auto T = static_cast<std::size_t>(s.tokens), H = static_cast<std::size_t>(s.heads);
  for (std::size_t i = 0; i < T * H * static_cast<std::size_t>(s.head_dim); ++i) in.x.push_back(n(rng));
  for (std::size_t i = 0; i < T * static_cast<std::size_t>(s.groups * s.state); ++i) {
    in.B.push_back(n(rng));
    in.C.push_back(n(rng));
  }
  for (std::size_t i = 0; i < T * H; ++i) in.dt.push_back(n(rng));
  for (std::size_t h = 0; h < H; ++h) {
    in.dt_bias.push_back(-2 + u(rng));
    in.a_log.push_back(std::log(1 + 15 * u(rng)));
    in.d.push_back(u(rng));
  }
  return in;
}

std::vector<float> to_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

template <class V>
V rows(const V& v, std::int64_t width, std::int64_t from, std::int64_t count) {
  return V(v.begin() + from * width, v.begin() + (from + count) * width);
}

double max_rel_diff(const std::vector<float>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double m = 0, scale = 0;
  for (double v : b) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(static_cast<double>(a[i]) - b[i]));
  return m / std::max(scale, 1e-30);
}

}  // namespace

TEST_CASE("Mamba-2 SSD: one head, one state element, worked by hand", "[mamba2][executor]") {
  // x = 2, B = C = 1; dt' + dt_bias = 0 -> dt = ln 2; A_log = 0 -> a = exp(-ln 2) = 1/2; D = 0.5
  const Mamba2Shape s{2, 1, 1, 1, 1};
  const std::vector<double> x{2, 2}, B{1, 1}, C{1, 1}, dt{0, 0}, bias{0}, a_log{0}, d{0.5};
  std::vector<double> state{0}, y(2);
  mamba2_ssd_reference(x, B, C, dt, {bias, a_log, d}, s, state, y);
  const double step = std::log(2.0);
  // S1 = ln2 * 2, y1 = S1 + 1; S2 = S1 / 2 + ln2 * 2, y2 = S2 + 1
  CHECK(y[0] == Approx(2 * step + 1));
  CHECK(state[0] == Approx(3 * step));
  CHECK(y[1] == Approx(3 * step + 1));
}

TEST_CASE("Mamba-2 SSD: the chunked form equals the recurrence", "[mamba2][executor]") {
  for (std::int64_t chunk : {1, 4, 16, 64}) {
    INFO("chunk " << chunk);
    const Inputs in = random_inputs({37, 4, 8, 2, 6}, 7);  // 37 tokens: a partial last chunk
    std::vector<double> ref_state(4 * 8 * 6, 0.0), ref_y(in.x.size());
    mamba2_ssd_reference(in.x, in.B, in.C, in.dt, in.params(), in.s, ref_state, ref_y);
    const auto bias = to_float(in.dt_bias), a_log = to_float(in.a_log), d = to_float(in.d);
    std::vector<float> state(ref_state.size(), 0.f), y(in.x.size());
    mamba2_ssd_chunked(to_float(in.x), to_float(in.B), to_float(in.C), to_float(in.dt), {bias, a_log, d}, in.s, chunk,
                       state, y);
    CHECK(max_rel_diff(y, ref_y) < 1e-5);
    CHECK(max_rel_diff(state, ref_state) < 1e-5);
  }
}

TEST_CASE("Mamba-2 SSD: decode token by token carries the state to the full forward's outputs", "[mamba2][executor]") {
  const Inputs in = random_inputs({20, 2, 4, 1, 8}, 11);
  const Mamba2Shape& s = in.s;
  std::vector<double> full_state(2 * 4 * 8, 0.0), full_y(in.x.size());
  mamba2_ssd_reference(in.x, in.B, in.C, in.dt, in.params(), s, full_state, full_y);
  // a chunked prefill of 12 tokens, then 8 recurrent decode steps from its state
  const std::int64_t prompt = 12, xw = s.heads * s.head_dim, bw = s.groups * s.state;
  const auto bias = to_float(in.dt_bias), a_log = to_float(in.a_log), d = to_float(in.d);
  Mamba2Shape head = s;
  head.tokens = prompt;
  std::vector<float> state(full_state.size(), 0.f), y(static_cast<std::size_t>(prompt * xw));
  mamba2_ssd_chunked(to_float(rows(in.x, xw, 0, prompt)), to_float(rows(in.B, bw, 0, prompt)),
                     to_float(rows(in.C, bw, 0, prompt)), to_float(rows(in.dt, s.heads, 0, prompt)), {bias, a_log, d},
                     head, 8, state, y);
  CHECK(max_rel_diff(y, rows(full_y, xw, 0, prompt)) < 1e-5);
  std::vector<double> carried(state.begin(), state.end());
  Mamba2Shape one = s;
  one.tokens = 1;
  for (std::int64_t t = prompt; t < s.tokens; ++t) {
    std::vector<double> yt(static_cast<std::size_t>(xw));
    mamba2_ssd_reference(rows(in.x, xw, t, 1), rows(in.B, bw, t, 1), rows(in.C, bw, t, 1), rows(in.dt, s.heads, t, 1),
                         in.params(), one, carried, yt);
    const std::vector<double> want = rows(full_y, xw, t, 1);
    for (std::size_t i = 0; i < yt.size(); ++i) CHECK(yt[i] == Approx(want[i]).epsilon(1e-4).margin(1e-6));
  }
  for (std::size_t i = 0; i < carried.size(); ++i)
    CHECK(carried[i] == Approx(full_state[i]).epsilon(1e-4).margin(1e-6));
}

TEST_CASE("Mamba-2 SSD: bad shapes are refused", "[mamba2][executor]") {
  const Inputs in = random_inputs({3, 3, 2, 2, 2}, 1);  // 3 heads cannot share 2 groups
  std::vector<double> state(3 * 2 * 2), y(in.x.size());
  CHECK_THROWS_AS(mamba2_ssd_reference(in.x, in.B, in.C, in.dt, in.params(), in.s, state, y), std::invalid_argument);
}
