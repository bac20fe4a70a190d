// The cross-backend op test, CPU side: every op of the correctness table against its
// double-precision reference (tolerances are stated by each case in op_cases), the
// attention under every mask kind and layout with each instruction set this CPU runs,
// and the cases' analytic FLOP counts against methods.md's conventions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "hdlab/executor/backends.hpp"
#include "hdlab/executor/designs/registry.hpp"
#include "hdlab/model/mask.hpp"
#include "op_test_support.hpp"

using namespace hdlab::executor;
using hdlab::executor::testing::check_cases;

namespace {

// Built once: the references are computed on first use and shared by every test below.
const std::vector<OpCase>& f32_cases() {
  static const std::vector<OpCase> cases = correctness_cases(ScalarType::f32);
  return cases;
}

Backend& cpu() {
  static const auto backend = make_cpu_backend();
  return *backend;
}

// Rows of `op` in the table, counted here rather than by the harness: the CPU runs every
// f32 case, so check_cases must run each one of them (none skipped as unsupported).
int rows_of(const std::vector<OpCase>& cases, BackendOp op) {
  const auto n = static_cast<int>(std::count_if(cases.begin(), cases.end(), [&](const OpCase& c) { return c.op == op; }));
  REQUIRE(n > 0);
  return n;
}

}  // namespace

TEST_CASE("cpu gemm matches the reference", "[executor][cpu][gemm]") {
  CHECK(check_cases(cpu(), f32_cases(), BackendOp::gemm) == rows_of(f32_cases(), BackendOp::gemm));
}

TEST_CASE("cpu vector ops match the reference", "[executor][cpu]") {
  for (BackendOp op : {BackendOp::rms_norm, BackendOp::group_norm, BackendOp::rope, BackendOp::swiglu, BackendOp::add,
                       BackendOp::relu2}) {
    INFO(to_string(op));
    CHECK(check_cases(cpu(), f32_cases(), op) == rows_of(f32_cases(), op));
  }
}

TEST_CASE("cpu routing, gathers and scatters match the reference", "[executor][cpu]") {
  for (BackendOp op : {BackendOp::topk_routing, BackendOp::gather_rows, BackendOp::scatter_add_rows}) {
    INFO(to_string(op));
    CHECK(check_cases(cpu(), f32_cases(), op) == rows_of(f32_cases(), op));
  }
}

TEST_CASE("cpu GHC ops match the reference", "[executor][cpu][vwn]") {
  for (BackendOp op : {BackendOp::ghc_dynamic, BackendOp::ghc_width, BackendOp::ghc_depth}) {
    INFO(to_string(op));
    CHECK(check_cases(cpu(), f32_cases(), op) == rows_of(f32_cases(), op));
  }
}

// The design modules' own ops (mHC's coefficients), listed by the executor's design
// registry: the table holds every module's cases, and the CPU runs each of them.
TEST_CASE("cpu design module ops match the reference", "[executor][cpu][mhc]") {
  const auto modules = rows_of(f32_cases(), BackendOp::module);
  CHECK(modules == static_cast<int>(design_op_cases(ScalarType::f32).size()));
  CHECK(check_cases(cpu(), f32_cases(), BackendOp::module) == modules);
}

TEST_CASE("cpu linear-attention ops and sigmoid gates match the reference", "[executor][cpu][linear]") {
  for (BackendOp op : {BackendOp::causal_conv1d, BackendOp::gated_delta_rule, BackendOp::gated_rms_norm,
                       BackendOp::mamba2_ssd, BackendOp::sigmoid_gate}) {
    INFO(to_string(op));
    CHECK(check_cases(cpu(), f32_cases(), op) == rows_of(f32_cases(), op));
  }
}

TEST_CASE("cpu strided-batch ops (multi-head latent attention) match the reference", "[executor][cpu][mla]") {
  for (BackendOp op : {BackendOp::gemm_batched, BackendOp::copy_strided}) {
    INFO(to_string(op));
    CHECK(check_cases(cpu(), f32_cases(), op) == rows_of(f32_cases(), op));
    CHECK(rows_of(f32_cases(), op) >= 3);
  }
  // MLA's attention shapes: values narrower than the keys; the absorbed decode's entries
  const auto mla = mla_correctness_cases(ScalarType::f32);
  CHECK(check_cases(cpu(), mla, BackendOp::attention) == 3);
  for (const char* part : {" dv=12 of 28", " dv=24 of 32", " dv=512 of 576"}) {
    INFO(part);
    CHECK(std::any_of(mla.begin(), mla.end(), [&](const OpCase& c) { return c.name.find(part) != std::string::npos; }));
  }
}

TEST_CASE("cpu attention matches the reference with every instruction set", "[executor][cpu][attention]") {
  const auto isas = cpu_attention_isas();
  REQUIRE_FALSE(isas.empty());
  CHECK(isas.back() == "generic");
  for (const auto& isa : isas) {
    INFO("attention kernel " << isa);
    // 3 threads on any machine: more threads than work items in small cases, too.
    auto backend = make_cpu_backend(CpuOptions{3, isa});
    CHECK(check_cases(*backend, f32_cases(), BackendOp::attention) == rows_of(f32_cases(), BackendOp::attention));
  }
}

TEST_CASE("cpu masked softmax of the unfused attention matches the reference", "[executor][cpu][attention]") {
  CHECK(check_cases(cpu(), f32_cases(), BackendOp::attention_softmax) ==
        rows_of(f32_cases(), BackendOp::attention_softmax));
  CHECK(rows_of(f32_cases(), BackendOp::attention_softmax) == 3);
  // rows or keys outside the plan are refused, naming the op
  AttentionCaseShape shape;
  shape.mask.tokens = 1;
  const TilePlan plan(attention_case_mask(shape));  // causal, 1 token: 1 x 1
  const Tensor scores = cpu().allocate({2, 1, 2}, ScalarType::f32);
  CHECK_THROWS_WITH(cpu().attention_softmax(scores, plan, 0, 0, 1.0f),
                    Catch::Matchers::Contains("attention_softmax: rows 0 + 1 and keys 0 + 2 must lie in the plan's 1 x 1"));
}

TEST_CASE("cpu attention composed of other ops (the path past CUDA's head dims) matches the reference",
          "[executor][cpu][attention][mla]") {
  // Past fused_attention_max_dims the backend runs Backend::attention_in_parts: products
  // per KV head, the masked softmax, products with the values. With the limit at 1 every
  // case of the table goes that way: every mask kind, layout, GQA, sinks, decode steps,
  // MLA's narrower values and DeepSeek's 576 / 512 decode.
  auto parts = make_cpu_backend(CpuOptions{2, "auto", 1});
  CHECK_FALSE(parts->fused_attention_fits(8, 8));
  CHECK(cpu().fused_attention_fits(576, 512));
  CHECK(check_cases(*parts, f32_cases(), BackendOp::attention) == rows_of(f32_cases(), BackendOp::attention));
  // at DeepSeek's width the kernel and the composition agree (the CUDA kernel's limit, 256)
  auto at_cuda_limit = make_cpu_backend(CpuOptions{2, "auto", 256});
  CHECK(at_cuda_limit->fused_attention_fits(192, 128));
  CHECK_FALSE(at_cuda_limit->fused_attention_fits(576, 512));
  CHECK(check_cases(*at_cuda_limit, mla_correctness_cases(ScalarType::f32), BackendOp::attention) == 3);
  CHECK_THROWS_WITH(make_cpu_backend(CpuOptions{1, "auto", -1}),
                    Catch::Matchers::Contains("fused_attention_max_dims -1 is negative"));
}

TEST_CASE("cpu attention on one thread matches the reference", "[executor][cpu][attention]") {
  auto backend = make_cpu_backend(CpuOptions{1, "auto"});
  const auto cases = attention_correctness_cases(ScalarType::f32);
  CHECK(check_cases(*backend, cases, BackendOp::attention) == rows_of(cases, BackendOp::attention));
  // The table covers every mask kind and PHD variant, every layout, decode steps and the
  // KV mirror's final-copy queries (read from the case names, mask_name in op_cases_attention.cpp).
  for (const char* part : {"attention causal ", "attention sliding ", "attention intra ", "attention phd-plain ",
                           "attention phd-swa ", "attention phd-cswa ", " interleaved ", " stream_major ",
                           " phd_split ", " decode ", " final-copy-queries "}) {
    INFO(part);
    CHECK(std::any_of(cases.begin(), cases.end(), [&](const OpCase& c) { return c.name.find(part) != std::string::npos; }));
  }
}

TEST_CASE("the CPU backend refuses bf16 compute but converts bf16", "[executor][cpu]") {
  CHECK_FALSE(cpu().supports(BackendOp::gemm, ScalarType::bf16));
  CHECK(cpu().supports(BackendOp::convert, ScalarType::bf16));
  const auto bf16 = correctness_cases(ScalarType::bf16);
  CHECK(supported_cases(cpu(), bf16).empty());
  const Tensor a = cpu().allocate({2, 2}, ScalarType::bf16);
  CHECK_THROWS_AS(cpu().gemm(a, false, a, true, cpu().allocate({2, 2}, ScalarType::bf16)), BackendError);
}

TEST_CASE("partial RoPE by hand: the first rotary_dim dims turn with frequencies over rotary_dim", "[executor][cpu]") {
  // One head of 6, position 1, theta 100, rotary_dim 4: pairs (x0, x2) by 1 rad and (x1,
  // x3) by 100^(-2/4) = 0.1 rad (rotate-half within the rotated dims, as transformers'
  // Qwen3-Next and GLM-4.5 apply partial RoPE); x4, x5 pass. Worked out with cos and sin
  // of 1 and 0.1 to 10 digits.
  const Tensor x = cpu().allocate({1, 1, 6}, ScalarType::f32), pos = cpu().allocate({1}, ScalarType::i32);
  cpu().upload(x, std::vector<float>{1, 2, 3, 4, 5, 6});
  cpu().upload(pos, std::vector<std::int32_t>{1});
  const std::vector<double> freqs = hdlab::model::plain_inv_freq(100.0, 4);
  REQUIRE(freqs == std::vector<double>{1.0, 0.1});
  cpu().rope(x, pos, freqs);
  const std::vector<double> want = {-1.9841106486, 1.5906746640, 2.4623779024, 4.1796834944, 5, 6};
  const std::vector<float> got = cpu().download_f32(x);
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-6));
  // the same in double, and refused: over-wide rotated dims, bad frequencies or factor
  const Doubles in = {1, 2, 3, 4, 5, 6};
  const Doubles ref = rope_reference(in, std::vector<std::int32_t>{1}, 1, 6, freqs);
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(ref[i] == Approx(want[i]).margin(1e-9));
  CHECK_THROWS_AS(cpu().rope(x, pos, std::vector<double>{}), BackendError);
  CHECK_THROWS_AS(cpu().rope(x, pos, std::vector<double>(4, 0.5)), BackendError);
  CHECK_THROWS_AS(cpu().rope(x, pos, std::vector<double>{1.0, 0.0}), BackendError);
  CHECK_THROWS_AS(cpu().rope(x, pos, freqs, 0.0), BackendError);
  CHECK_THROWS_AS(cpu().rope(x, pos, freqs, std::nan("")), BackendError);
}

TEST_CASE("RoPE's cos/sin factor scales the rotated dims only (YaRN's, LongRoPE's attention factor)",
          "[executor][cpu]") {
  // One head of 4, position 2, pair 0 at 0.5 rad per position (1 rad), factor 1.5, the
  // second pair (dims 2, 3) left alone by a one-frequency rotation: (1, 0) ->
  // 1.5 (cos 1, sin 1) = (0.8104534588, 1.2622064772).
  const Tensor x = cpu().allocate({1, 1, 4}, ScalarType::f32), pos = cpu().allocate({1}, ScalarType::i32);
  cpu().upload(x, std::vector<float>{1, 0, 7, 8});
  cpu().upload(pos, std::vector<std::int32_t>{2});
  cpu().rope(x, pos, std::vector<double>{0.5}, 1.5);
  const std::vector<float> got = cpu().download_f32(x);
  CHECK(got[0] == Approx(0.8104534588).margin(1e-6));
  CHECK(got[1] == Approx(1.2622064772).margin(1e-6));
  CHECK(got[2] == 7);
  CHECK(got[3] == 8);
}

TEST_CASE("op cases count FLOPs by methods.md section 6", "[executor][cost]") {
  using hdlab::model::OpKind;
  SECTION("GEMM: 2 FLOPs per multiply-add") {
    const OpCase c = gemm_case(OpKind::qkv_proj, 3, 5, 7, ScalarType::f32, 1);
    CHECK(c.cost.flops == 2.0 * 3 * 5 * 7);
    CHECK(c.cost.weight_bytes == 5 * 7 * 4);
  }
  SECTION("attention: 4 hd H per visible pair; executed = whole visible tiles") {
    for (const OpCase& c : attention_correctness_cases(ScalarType::f32)) {
      INFO(c.name);
      CHECK(c.executed_flops >= c.cost.flops);
      CHECK(c.cost.flops > 0);
    }
    AttentionCaseShape s;
    s.mask.kind = hdlab::model::MaskSpec::Kind::intra;
    s.mask.tokens = 100;
    s.mask.copies = 4;
    s.layout = hdlab::model::Layout::stream_major;
    s.heads = 8;
    s.head_dim = 64;
    const OpCase c = attention_case(s, ScalarType::f32, 1);
    const double per_pair = 4.0 * 64 * 8;
    CHECK(c.cost.flops == per_pair * static_cast<double>(hdlab::model::visible_pairs(s.mask)));
    CHECK(c.cost.flops == per_pair * 4 * 100 * 101 / 2);  // intra: n L (L+1) / 2 pairs
    const auto tiles = hdlab::model::visible_tiles(s.mask, s.layout, kTileQ, kTileK);
    CHECK(c.executed_flops == per_pair * static_cast<double>(tiles.executed_pairs));
  }
  SECTION("vector ops: the simulator's per-element counts") {
    CHECK(rms_norm_case(OpKind::attn_norm, 3, 8, ScalarType::f32, 1).cost.flops == 4.0 * 3 * 8);
    CHECK(rope_case(3, 2, 8, 0, 1, ScalarType::f32, 1).cost.flops == 3.0 * 3 * 2 * 8);
    CHECK(swiglu_case(3, 8, ScalarType::f32, 1).cost.flops == 5.0 * 3 * 8);
    CHECK(topk_routing_case(3, 8, 2, hdlab::model::RouterKind::softmax, true, ScalarType::f32, 1).cost.flops == 0);
  }
  SECTION("GHC: methods.md's per-token figures") {
    const std::int64_t m = 2, n = 3, s = 32, d = m * s, tokens = 5;
    CHECK(ghc_dynamic_case(tokens, m, n, s, ScalarType::f32, 1).cost.flops ==
          tokens * 2.0 * (2 * m + n) * (static_cast<double>(n) / m) * d);
    CHECK(ghc_width_case(tokens, m, n, s, false, ScalarType::f32, 1).cost.flops ==
          tokens * 2.0 * (m + n) * (static_cast<double>(n) / m) * d);
    CHECK(ghc_depth_case(tokens, m, n, s, false, ScalarType::f32, 1).cost.flops == tokens * 2.0 * n * d);
    CHECK(rms_norm_case(OpKind::ghc_norm, tokens * n, s, ScalarType::f32, 1).cost.flops ==
          tokens * 4.0 * (static_cast<double>(n) / m) * d);
  }
}

TEST_CASE("the comparison fails outputs outside tolerance", "[executor][cost]") {
  // The harness must be able to fail: one element off by more than allowed, or NaN.
  const Doubles ref = {1.0, -2.0, 3.0};
  const Tolerance tol{1e-3, 1e-2};  // allowed: 1e-3 + 1e-2 |ref|
  CHECK(compare_to_reference({1.0f, -2.02f, 3.0f}, ref, tol, "x").pass);
  const OpCheck off = compare_to_reference({1.0f, -2.03f, 3.0f}, ref, tol, "x");
  CHECK_FALSE(off.pass);
  CHECK(off.worst.find("x[1]") != std::string::npos);
  CHECK(off.worst_ratio > 1.0);
  CHECK_FALSE(compare_to_reference({1.0f, NAN, 3.0f}, ref, tol, "x").pass);
  CHECK_FALSE(compare_to_reference({1.0f, -2.0f}, ref, tol, "x").pass);
}
