// The Backend interface on the CPU backend: memory accounting, its timer, transfers, views,
// shape checks; and the references themselves on cases worked by hand.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <numbers>
#include <thread>

#include "hdlab/executor/backends.hpp"
#include "hdlab/executor/designs/mhc_op.hpp"
#include "hdlab/executor/designs/registry.hpp"
#include "hdlab/executor/reference.hpp"

using namespace hdlab::executor;

TEST_CASE("the backend accounts for its memory", "[executor][memory]") {
  auto be = make_cpu_backend(CpuOptions{1, "generic"});
  CHECK(be->memory().allocated_bytes == 0);
  {
    const Tensor a = be->allocate({10, 10}, ScalarType::f32);
    const Tensor b = be->allocate({5}, ScalarType::bf16);
    CHECK(be->memory().allocated_bytes == 400 + 10);
    const Tensor view = a.slice_rows(2, 3);  // a view holds the allocation, adds nothing
    CHECK(be->memory().allocated_bytes == 410);
  }
  CHECK(be->memory().allocated_bytes == 0);
  CHECK(be->memory().peak_bytes == 410);
  be->reset_peak();
  CHECK(be->memory().peak_bytes == 0);
  const MemoryStats m = be->memory();
  CHECK(m.total_bytes > 0);
  CHECK(m.available_bytes > 0);
  CHECK(m.available_bytes <= m.total_bytes);
  CHECK_NOTHROW(be->require_fits(1024));
  try {
    be->require_fits(m.total_bytes * 4);
    FAIL("require_fits accepted four times the machine's memory");
  } catch (const OutOfMemoryError& e) {
    CHECK(e.needed_bytes() == m.total_bytes * 4);
    CHECK(e.available_bytes() > 0);
    CHECK(std::string(e.what()).find("needs") != std::string::npos);
  }
}

TEST_CASE("the CPU timer measures the time between start and stop", "[executor][timer]") {
  // A 20 ms sleep between start and stop: at least 20 ms (sleep_for never returns early),
  // and far less than 5 s even on a loaded machine; a stopped timer keeps its reading.
  auto be = make_cpu_backend(CpuOptions{1, "generic"});
  const auto timer = be->make_timer();
  timer->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  timer->stop();
  const double ms = timer->elapsed_ms();
  CHECK(ms >= 20.0);
  CHECK(ms < 5000.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(timer->elapsed_ms() == ms);
}

TEST_CASE("uploads, downloads, views and conversions", "[executor]") {
  auto be = make_cpu_backend(CpuOptions{2, "auto"});
  const Tensor t = be->allocate({3, 2}, ScalarType::f32);
  be->upload(t, std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(be->download_f32(t.slice_rows(1, 2)) == std::vector<float>{3, 4, 5, 6});
  CHECK(t.reshaped({2, 3}).matrix_rows() == 2);
  CHECK_THROWS_AS(t.slice_rows(2, 2), BackendError);
  CHECK_THROWS_AS(t.reshaped({4}), BackendError);
  const Tensor h = be->allocate({6}, ScalarType::bf16);
  be->convert(t.reshaped({6}), h);
  CHECK(be->download_f32(h) == std::vector<float>{1, 2, 3, 4, 5, 6});  // exact in bf16
  be->upload(h, std::vector<float>{1.0f + 1.0f / 256, 0, 0, 0, 0, 0});
  CHECK(be->download_f32(h)[0] == 1.0f);  // ties round to even: 1 + 2^-8 -> 1
  CHECK(round_to_bf16(1.0f + 3.0f / 256) == 1.0f + 1.0f / 64);
  CHECK(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
  const Tensor z = be->allocate({2, 2}, ScalarType::f32);
  be->fill_zero(z);
  be->copy(t.slice_rows(0, 2).reshaped({2, 2}), z);
  CHECK(be->download_f32(z) == std::vector<float>{1, 2, 3, 4});
  CHECK_THROWS_AS(be->copy(t.slice_rows(0, 2), t.slice_rows(1, 2)), BackendError);  // overlap
}

TEST_CASE("ops check shapes and owners before running", "[executor]") {
  auto be = make_cpu_backend(CpuOptions{1, "generic"});
  auto other = make_cpu_backend(CpuOptions{1, "generic"});
  const Tensor a = be->allocate({4, 8}, ScalarType::f32), w = be->allocate({6, 8}, ScalarType::f32);
  CHECK_THROWS_AS(be->gemm(a, false, w, false, be->allocate({4, 6}, ScalarType::f32)), BackendError);
  CHECK_NOTHROW(be->gemm(a, false, w, true, be->allocate({4, 6}, ScalarType::f32)));
  CHECK_THROWS_AS(be->gemm(a, false, w, true, other->allocate({4, 6}, ScalarType::f32)), BackendError);
  CHECK_THROWS_AS(be->rms_norm(a, be->allocate({7}, ScalarType::f32), 1e-6f, a), BackendError);
  const Tensor ids = be->allocate({2}, ScalarType::i32);
  be->upload(ids, std::vector<std::int32_t>{0, 4});
  CHECK_THROWS_AS(be->gather_rows(a, ids, be->allocate({2, 8}, ScalarType::f32)), BackendError);  // id 4 of 4 rows
  // An error inside the thread pool reaches the caller (NaN router scores on some token).
  auto pooled = make_cpu_backend(CpuOptions{3, "generic"});
  const Tensor logits = pooled->allocate({4096, 4}, ScalarType::f32);
  std::vector<float> lv(4096 * 4, 0.5f);
  for (std::size_t i = 3000 * 4; i < 3001 * 4; ++i) lv[i] = NAN;
  pooled->upload(logits, lv);
  CHECK_THROWS_AS(pooled->topk_routing(logits, 2, hdlab::model::RouterKind::softmax, true,
                                       pooled->allocate({4096, 2}, ScalarType::i32),
                                       pooled->allocate({4096, 2}, ScalarType::f32)),
                  BackendError);
  const Tensor q = be->allocate({3, 4, 8}, ScalarType::f32), kv = be->allocate({3, 3, 8}, ScalarType::f32);
  hdlab::model::MaskSpec m;
  m.tokens = 3;
  const TilePlan plan(AttentionMask::prefill(m, hdlab::model::Layout::interleaved));
  CHECK_THROWS_AS(be->attention(q, kv, kv, plan, be->allocate({3, 4, 8}, ScalarType::f32), 1.0f),
                  BackendError);  // 4 query heads over 3 kv heads
}

// A design module's op goes through the same gate: owners, the op's own checks (named by
// the op and operand), the type the backend runs, and zero tokens as a no-op.
TEST_CASE("module ops check owners, shapes and types before running", "[executor][mhc]") {
  auto be = make_cpu_backend(CpuOptions{1, "generic"});
  auto other = make_cpu_backend(CpuOptions{1, "generic"});
  const std::int64_t T = 3, n = 2, D = 4, c = n * n + 2 * n;
  auto f32 = [&](Backend& b, Shape s) { return b.allocate(std::move(s), ScalarType::f32); };
  const Tensor h = f32(*be, {T, n, D}), phi = f32(*be, {n * D, c}), bias = f32(*be, {c}), scale = f32(*be, {3});
  const Tensor alpha = f32(*be, {T, n, 1 + n}), beta = f32(*be, {T, 1, n});
  for (const Tensor* t : {&h, &phi, &bias, &scale}) be->fill_zero(*t);
  CHECK_NOTHROW(mhc_coefficients(*be, h, phi, bias, scale, 2, 1e-6f, alpha, beta));
  CHECK(be->download_f32(beta)[0] == 1.0f);  // 2 sigmoid(0)
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const BackendError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(message([&] { mhc_coefficients(*be, h, phi, bias, scale, 2, 1e-6f, f32(*be, {T, n, n}), beta); }),
             Catch::Contains("mhc_dynamic") && Catch::Contains("alpha"));
  CHECK_THAT(message([&] { mhc_coefficients(*be, h, phi, bias, scale, 0, 1e-6f, alpha, beta); }),
             Catch::Contains("Sinkhorn"));
  CHECK_THAT(message([&] { mhc_coefficients(*be, h, phi, bias, scale, 2, 1e-6f, alpha, f32(*other, {T, 1, n})); }),
             Catch::Contains("another backend"));
  const Tensor h16 = be->allocate({T, n, D}, ScalarType::bf16), phi16 = be->allocate({n * D, c}, ScalarType::bf16);
  CHECK_FALSE(be->supports(mhc_coefficients_op(), ScalarType::bf16));
  CHECK_THAT(message([&] { mhc_coefficients(*be, h16, phi16, bias, scale, 2, 1e-6f, alpha, beta); }),
             Catch::Contains("does not support mhc_dynamic in bf16"));
  // The executor's design registry runs it for mHC's layers, and refuses a design that has
  // no mixing op of its own.
  const DesignTensors layer = {{"ffn.phi", phi}, {"ffn.bias", bias}, {"ffn.scale", scale}};
  CHECK_NOTHROW(design_mixing(hdlab::model::MhcDesign{n, 2}, *be, layer, false, h, 1e-6f, alpha, beta));
  CHECK_THAT(message([&] { design_mixing(hdlab::model::MhcDesign{n, 2}, *be, layer, true, h, 1e-6f, alpha, beta); }),
             Catch::Contains("attn.phi"));
  CHECK_THROWS_AS(design_mixing(hdlab::model::VwnDesign{}, *be, layer, false, h, 1e-6f, alpha, beta), std::logic_error);
  const Tensor none = f32(*be, {0, n, D});
  CHECK_NOTHROW(mhc_coefficients(*be, none, phi, bias, scale, 2, 1e-6f, f32(*be, {0, n, 1 + n}), f32(*be, {0, 1, n})));
}

TEST_CASE("references agree with hand-worked values", "[executor][reference]") {
  SECTION("gemm") {
    // [1 2; 3 4] x [5 6; 7 8]^T = [17 23; 39 53]
    const Doubles c = gemm_reference(Doubles{1, 2, 3, 4}, false, Doubles{5, 6, 7, 8}, true, 2, 2, 2, 1, 0, {});
    CHECK(c == Doubles{17, 23, 39, 53});
  }
  SECTION("attention: one visible key returns its value; two equal scores average") {
    hdlab::model::MaskSpec m;
    m.tokens = 2;
    const AttentionMask mask = AttentionMask::prefill(m, hdlab::model::Layout::interleaved);
    // q = k = 0: equal scores. Row 0 sees key 0 only; row 1 sees both.
    const Doubles zeros(4, 0.0), v = {1, 2, 3, 4};  // [2 keys, 1 head, hd 2]
    const Doubles out = attention_reference(zeros, zeros, v, 1, 1, 2, mask, 1.0);
    CHECK(out == Doubles{1, 2, 2, 3});
  }
  SECTION("rms_norm, group_norm, rope, swiglu") {
    const Doubles n = rms_norm_reference(Doubles{3, -3, 3, -3}, Doubles{1, 1, 2, 2}, 1, 4, 0.0);
    CHECK(n == Doubles{1, -1, 2, -2});
    // Groups {1, 3} (mean 2, variance 1) and {2, 6} (mean 4, variance 4); bias 0.5.
    const Doubles g = group_norm_reference(Doubles{1, 3, 2, 6}, Doubles{1, 1, 1, 1}, Doubles(4, 0.5), 1, 4, 2, 0.0);
    CHECK(g == Doubles{-0.5, 1.5, -0.5, 1.5});
    // Position 1 with pair 0 at 1 rad per position: (1, 0) -> (cos 1, sin 1); a cos/sin
    // factor of 2 doubles both.
    const std::vector<std::int32_t> pos = {1};
    const Doubles r = rope_reference(Doubles{1, 0}, pos, 1, 2, std::vector<double>{1.0});
    CHECK(r[0] == Approx(std::cos(1.0)));
    CHECK(r[1] == Approx(std::sin(1.0)));
    const Doubles r2 = rope_reference(Doubles{1, 0}, pos, 1, 2, std::vector<double>{1.0}, 2.0);
    CHECK(r2[0] == Approx(2 * std::cos(1.0)));
    CHECK(r2[1] == Approx(2 * std::sin(1.0)));
    const Doubles s = swiglu_reference(Doubles{0, 2, 5, 7}, 1, 2);  // silu(0)*5 = 0
    CHECK(s[0] == 0);
    CHECK(s[1] == Approx(2.0 / (1 + std::exp(-2.0)) * 7));
  }
  SECTION("routing keeps the best k, best first") {
    const Routing r = topk_routing_reference(Doubles{0, 2, 1, 2}, 1, 4, 2, hdlab::model::RouterKind::softmax, true);
    CHECK(r.expert_ids == std::vector<std::int32_t>{1, 3});  // tie: lower id first
    CHECK(r.weights[0] == Approx(0.5));
  }
}

TEST_CASE("hyper-connection references (GHC, mHC) agree with hand-worked values", "[executor][reference]") {
  SECTION("GHC at its static init with n = m is a residual connection") {
    const std::int64_t m = 2, n = 2, s = 3;
    // A = [[I I]], B = I: x = h, out = z + h.
    const Doubles a = {1, 0, 1, 0, 0, 1, 0, 1}, b = {1, 0, 0, 1};
    const Doubles h = {1, 2, 3, 4, 5, 6}, z = {10, 20, 30, 40, 50, 60};
    const GhcWidthOut w = ghc_width_reference(h, 1, n, s, m, a, 1);
    CHECK(w.x == h);
    CHECK(w.carry == h);
    CHECK(ghc_depth_reference(z, 1, m, s, n, b, 1, w.carry) == Doubles{11, 22, 33, 44, 55, 66});
    // Zero dynamic weights leave the static coefficients.
    const GhcCoefficients c = ghc_dynamic_reference(h, 1, n, s, m, Doubles(s * (2 * m + n), 0.0),
                                                    Doubles(2 * m + n, 1.0), a, b);
    CHECK(c.alpha == a);
    CHECK(c.beta == b);
  }
  SECTION("mHC coefficients: sigmoids, and a doubly-stochastic mixing by Sinkhorn") {
    const std::int64_t n = 2, D = 2, c = n * n + 2 * n;  // state [1, 2, 2]
    const Doubles h = {1, -1, 2, 0.5};
    // Zero phi: the coefficients are the biases' alone. Mixing logits [[0, ln 3], [0, 0]]:
    // exp -> [[1, 3], [1, 1]]; one iteration: rows -> [[1/4, 3/4], [1/2, 1/2]], columns
    // (sums 3/4, 5/4) -> [[1/3, 3/5], [2/3, 2/5]].
    Doubles bias = {0, std::log(3.0), 0, -std::log(3.0), 0, std::log(3.0), 0, 0};
    const GhcCoefficients one =
        mhc_coefficients_reference(h, 1, n, D, Doubles(n * D * c, 0.0), bias, Doubles{1, 1, 1}, 1, 1e-6);
    CHECK(one.alpha[0] == Approx(0.5));                          // H_pre[0] = sigmoid(0)
    CHECK(one.alpha[3] == Approx(0.75));                         // H_pre[1] = sigmoid(ln 3)
    CHECK(one.beta[0] == Approx(1.0));                           // H_post[0] = 2 sigmoid(0)
    CHECK(one.beta[1] == Approx(0.5));                           // 2 sigmoid(-ln 3) = 2/4
    CHECK(one.alpha[1] == Approx(1.0 / 3));                      // alpha[0, 1] = H_res[0, 0]
    CHECK(one.alpha[2] == Approx(2.0 / 3));                      // alpha[0, 2] = H_res[1, 0]
    CHECK(one.alpha[4] == Approx(3.0 / 5));                      // alpha[1, 1] = H_res[0, 1]
    CHECK(one.alpha[5] == Approx(2.0 / 5));                      // alpha[1, 2] = H_res[1, 1]
    // Twenty iterations: rows and columns of H_res sum to 1.
    const GhcCoefficients many =
        mhc_coefficients_reference(h, 1, n, D, Doubles(n * D * c, 0.0), bias, Doubles{1, 1, 1}, 20, 1e-6);
    CHECK(many.alpha[1] + many.alpha[4] == Approx(1.0).epsilon(1e-9));  // row 0 of H_res
    CHECK(many.alpha[1] + many.alpha[2] == Approx(1.0).epsilon(1e-9));  // column 0
    CHECK(many.alpha[4] + many.alpha[5] == Approx(1.0).epsilon(1e-9));  // column 1
    // The logits are the RMS-normalised state times phi: phi's column 0 = 1 on element 0
    // gives g_pre[0] = h[0] / rms(h) = 1 / sqrt((1 + 1 + 4 + 0.25) / 4 + eps).
    Doubles phi(n * D * c, 0.0);
    phi[0] = 1;
    const GhcCoefficients g =
        mhc_coefficients_reference(h, 1, n, D, phi, Doubles(c, 0.0), Doubles{2, 1, 1}, 1, 1e-6);
    const double g0 = 1 / std::sqrt(6.25 / 4 + 1e-6);
    CHECK(g.alpha[0] == Approx(1 / (1 + std::exp(-2 * g0))));  // the pre scale 2 applied
  }
}
