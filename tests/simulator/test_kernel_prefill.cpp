// The prefill-attention kernel model (simulator/kernel_models.hpp): its formula by hand,
// the kernel picked per head dimension and precision, its JSON form and the errors of a
// bad one, and on the bundled fitted profiles: never faster with one more row, head or
// sequence (through every block and wave edge), with a window, or far outside the tables.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/simulator/kernel_models.hpp"
#include "hdlab/simulator/roofline.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using model::DType;

namespace {

HardwareProfile profile(const std::string& file) {
  return parse_hardware_profile(model::read_json_file(fixtures::source_path("profiles/hardware/" + file + ".json")));
}
const char* const fitted_files[] = {"h100-sxm", "a100-80gb-sxm", "b200"};

// F 100 TFLOP/s and no softmax work: a pair of head dim 128 costs one SM of 10 512 x 10 /
// 1e14 s = 51.2 ps. Queries at 1000 GB/s, K/V at 500 GB/s; a window's edge 2 us a block.
PrefillAttentionKernel by_hand() {
  PrefillAttentionKernel a;
  a.tensor_tflop_per_s = 100;
  a.softmax_flops = 0;
  a.memory_gb_per_s = 1000;
  a.kv_gb_per_s = 500;
  a.window_us = 2;
  a.head_dims = {{64, 10, 1}, {128, 5, 2}};
  return a;
}
constexpr double kSms = 10;

// Tile-executed pairs of one causal (window 0) or sliding sequence, as the calibration
// counts them (128 x 128 tiles).
double executed(std::int64_t tokens, std::int64_t window) {
  model::MaskSpec m;
  m.tokens = tokens;
  if (window > 0 && window < tokens) {
    m.kind = model::MaskSpec::Kind::sliding;
    m.window = window;
  }
  return static_cast<double>(model::visible_tiles(m, model::Layout::interleaved, 128, 128).executed_pairs);
}

PrefillAttentionShape shape(double seqs, double rows, double heads, double kv_heads, double head_dim,
                            std::int64_t window = 0) {
  PrefillAttentionShape p;
  p.seqs = seqs;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.head_dim = head_dim;
  p.rows = p.kv_positions = rows;
  p.pairs = executed(static_cast<std::int64_t>(rows), window);
  p.longest_row_keys = window > 0 ? std::min<double>(window, rows) : rows;
  return p;
}

std::string num(double x) {
  std::ostringstream o;
  o << x;
  return o.str();
}

// Violations of "more work never takes less time" (1e-12 relative: rounding).
struct Violations {
  std::vector<std::string> cases;
  void check(double smaller, double larger, const std::string& what) {
    if (!(larger >= smaller * (1 - 1e-12)))
      cases.push_back(what + ": " + num(smaller * 1e6) + " -> " + num(larger * 1e6) + " us");
  }
  std::string first() const {
    std::string out = std::to_string(cases.size()) + " violation(s)";
    for (std::size_t i = 0; i < cases.size() && i < 8; ++i) out += "\n  " + cases[i];
    return out;
  }
};

}  // namespace

TEST_CASE("prefill attention by hand: memory pass, units, waves, window edges", "[kernel-models][prefill]") {
  const PrefillAttentionKernel a = by_hand();
  auto us = [&](const PrefillAttentionShape& s) { return prefill_attention_seconds(a, kSms, s) * 1e6; };
  // 1 sequence x 2 heads (1 KV head) x 256 rows, head dim 128: 2 blocks a head (3 tiles of
  // 128 x 128: 49152 executed pairs). Memory: queries 256 x 2 x 128 x 2 x 2 B / 1000 GB/s
  // = 0.262144 us, K/V 256 x 128 x 2 x 2 B / 500 GB/s = 0.262144 us. 4 units on 10 SMs:
  // the longest, the last block: 2 us + 128 rows x 256 keys x 51.2 ps = 3.6777216 us.
  CHECK(us(shape(1, 256, 2, 1, 128)) == Approx(5 + 0.524288 + 3.6777216).epsilon(1e-12));
  // 8 sequences: 32 units on 10 SMs. Mean unit 2 + 24576 x 51.2 ps = 3.2582912 us, work
  // 32 x 3.2582912 / 10 = 10.42653184 us; spread 0.4194304 us about the mean, so the mean
  // residual R = (3.2582912^2 + 0.4194304^2 / 3) / (2 x 3.2582912) = 1.638144277 us; the
  // kernel: 10.42653184 + 3.6777216 - 1.638144277 = 12.466109163 us.
  CHECK(us(shape(8, 256, 2, 1, 128)) == Approx(5 + 8 * 0.524288 + 12.466109163).epsilon(1e-9));
  // An fp8 cache: the fp8 kernel reads its queries in fp8 too: every byte halves.
  PrefillAttentionShape fp8 = shape(1, 256, 2, 1, 128);
  fp8.kv_bytes = 1;
  CHECK(us(fp8) == Approx(5 + 0.262144 + 3.6777216).epsilon(1e-12));
  // A window of 128 over 1024 rows, head dim 64 (its kernel: 10 us, 1 us a block): 8
  // blocks, 15 tiles (245760 pairs), 7 of 8 blocks at the window's edge (1 - 128 / 1024).
  // A pair: 256 x 10 / 1e14 s = 25.6 ps. The last block spans 128 + 128 keys: 1 + 2 +
  // 128 x 256 x 25.6 ps = 3.8388608 us, the longest of 8 units (mean 1 + 0.875 x 2 +
  // 30720 x 25.6 ps = 3.536432 us). Memory 0.262144 + 0.524288 us.
  CHECK(us(shape(1, 1024, 1, 1, 64, 128)) == Approx(10 + 0.786432 + 3.8388608).epsilon(1e-12));
  CHECK(prefill_attention_seconds(a, kSms, shape(0, 1024, 1, 1, 64)) == 0);
  PrefillAttentionShape no_rows = shape(1, 16, 1, 1, 64);
  no_rows.rows = 0;
  CHECK(prefill_attention_seconds(a, kSms, no_rows) == 0);
}

TEST_CASE("prefill attention: the kernel of a head dimension and of a precision", "[kernel-models][prefill]") {
  const PrefillAttentionKernel a = by_hand();
  // The next fitted head dimension up (blocks padded to it), the largest beyond.
  CHECK(prefill_head_dim(a, 32).head_dim == 64);
  CHECK(prefill_head_dim(a, 64).head_dim == 64);
  CHECK(prefill_head_dim(a, 80).head_dim == 128);
  CHECK(prefill_head_dim(a, 128).head_dim == 128);
  CHECK(prefill_head_dim(a, 256).head_dim == 128);
  CHECK_THROWS_AS(prefill_head_dim(PrefillAttentionKernel{}, 128), std::logic_error);
  // fp8 when the activations or the cache are; else the activations' precision.
  CHECK(prefill_kernel_dtype(DType::bf16, DType::bf16) == DType::bf16);
  CHECK(prefill_kernel_dtype(DType::bf16, DType::fp8) == DType::fp8);
  CHECK(prefill_kernel_dtype(DType::fp8, DType::fp8) == DType::fp8);
  CHECK(prefill_kernel_dtype(DType::fp16, DType::fp16) == DType::fp16);
  CHECK(prefill_kernel_dtype(DType::fp16, DType::fp8) == DType::fp8);

  // The cost model picks it the same way: a bf16 model with an fp8 cache on the H100.
  const HardwareProfile hw = profile("h100-sxm");
  REQUIRE(hw.kernel_models);
  ModelShape s;
  s.D = 4096;
  s.H = 32;
  s.G = 8;
  s.qk_head_dim = s.v_head_dim = 128;
  CHECK(make_roofline(hw, DType::bf16, Sharding{}, &s).prefill == &hw.kernel_models->prefill_attention.at(DType::bf16));
  TensorPrecision p;
  p.kv_cache = DType::fp8;
  set_precision(s, p);
  const Roofline rl = make_roofline(hw, DType::bf16, Sharding{}, &s);
  CHECK(rl.prefill == &hw.kernel_models->prefill_attention.at(DType::fp8));
  CHECK(rl.decode == &hw.kernel_models->decode_attention.at(DType::fp8));
}

TEST_CASE("prefill attention: JSON round trip and the errors of a bad kernel", "[kernel-models][prefill][json]") {
  const HardwareProfile hw = profile("h100-sxm");
  REQUIRE(hw.kernel_models);
  KernelModels km = *hw.kernel_models;
  km.prefill_attention[DType::bf16] = by_hand();
  const model::Json j = to_json(km);
  CHECK(j["prefill_attention"]["bf16"]["head_dims"].size() == 2);
  CHECK(j["prefill_attention"]["bf16"]["kv_gb_per_s"] == 500);
  CHECK(j["prefill_attention"]["bf16"]["window_us"] == 2);
  CHECK(parse_kernel_models(j, "/kernel_models") == km);

  auto error = [&](const std::function<void(model::Json&)>& edit) -> std::string {
    model::Json bad = j;
    edit(bad["prefill_attention"]["bf16"]);
    try {
      parse_kernel_models(bad, "/kernel_models");
    } catch (const model::ConfigError& e) {
      return e.what();
    }
    return "accepted";
  };
  const std::string at = "/kernel_models/prefill_attention/bf16";
  // Keys of the previous model are refused, not ignored.
  CHECK(error([](model::Json& a) { a["overlap"] = 4; }) == at + "/overlap: unknown key");
  CHECK(error([](model::Json& a) { a["unit_us"] = 3; }) == at + "/unit_us: unknown key");
  CHECK(error([](model::Json& a) { a["head_dims"][0]["overlap"] = 4; }) == at + "/head_dims/0/overlap: unknown key");
  CHECK(error([](model::Json& a) { a.erase("kv_gb_per_s"); }).rfind(at + "/kv_gb_per_s: ", 0) == 0);
  CHECK(error([](model::Json& a) { a.erase("head_dims"); }).rfind(at + "/head_dims: ", 0) == 0);
  CHECK(error([](model::Json& a) { a["head_dims"] = model::Json::array(); }) ==
        at + "/head_dims: must be a non-empty list of {head_dim, latency_us, unit_us}, by increasing head_dim");
  CHECK(error([](model::Json& a) { std::swap(a["head_dims"][0], a["head_dims"][1]); }) ==
        at + "/head_dims/1/head_dim: must be larger than the previous entry's (the list goes by increasing head_dim)");
  CHECK(error([](model::Json& a) { a["head_dims"][1]["unit_us"] = -1; }).rfind(at + "/head_dims/1/unit_us: ", 0) == 0);
  CHECK(error([](model::Json& a) { a["window_us"] = -1; }).rfind(at + "/window_us: ", 0) == 0);
}

TEST_CASE("prefill attention is never faster by one more row, head or sequence",
          "[kernel-models][prefill][monotonic]") {
  // Every block edge (128 rows) up to 1100 rows, causal and windowed (executed tiles as
  // the calibration counts them), and every wave edge of heads and sequences up to 300
  // units (the SMs: 108 to 148), for each fitted kernel and head dimension.
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    Violations v;
    for (const auto& [dtype, a] : km.prefill_attention)
      for (const PrefillHeadDim& k : a.head_dims) {
        auto t = [&](const PrefillAttentionShape& s) { return prefill_attention_seconds(a, km.sms, s); };
        const std::string what = std::string(file) + " " + model::to_string(dtype) + " hd " + num(k.head_dim);
        for (std::int64_t window : {0, 128, 1024})
          for (double seqs : {1.0, 8.0})
            for (double rows = 1; rows < 1100; ++rows)
              v.check(t(shape(seqs, rows, 32, 8, k.head_dim, window)),
                      t(shape(seqs, rows + 1, 32, 8, k.head_dim, window)),
                      what + " window " + num(static_cast<double>(window)) + " seqs " + num(seqs) + " rows " +
                          num(rows));
        for (double rows : {1.0, 128.0, 1000.0, 4096.0})
          for (double n = 1; n < 300; ++n) {
            v.check(t(shape(1, rows, n, 1, k.head_dim)), t(shape(1, rows, n + 1, 1, k.head_dim)),
                    what + " heads " + num(n) + " rows " + num(rows));
            v.check(t(shape(n, rows, 4, 1, k.head_dim)), t(shape(n + 1, rows, 4, 1, k.head_dim)),
                    what + " seqs " + num(n) + " rows " + num(rows));
          }
        for (double rows = 1; rows <= 65536; rows *= 2)  // long windowed sequences
          v.check(t(shape(2, rows, 16, 2, k.head_dim, 4096)), t(shape(2, 2 * rows, 16, 2, k.head_dim, 4096)),
                  what + " window 4096 rows x2 " + num(rows));
      }
    INFO(v.first());
    CHECK(v.cases.empty());
  }
}

TEST_CASE("prefill attention far outside the tables stays below the fitted and datasheet peaks",
          "[kernel-models][prefill][extrapolation]") {
  // 131072 causal rows of 64 heads (the tables stop at 16384): the achieved rate of the
  // matrix work (4 hd FLOPs a pair) lies in [0.1, 1] of the fitted tensor rate and under
  // the datasheet peak. One row of one head is a launch: at least the kernel's latency
  // and under 30 us (the smallest measured take 11 to 17 us).
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    for (const auto& [dtype, a] : km.prefill_attention)
      for (const PrefillHeadDim& k : a.head_dims) {
        INFO(file << " " << model::to_string(dtype) << " hd " << k.head_dim);
        const double rows = 131072;
        PrefillAttentionShape s;
        s.seqs = 1;
        s.heads = 64;
        s.kv_heads = 8;
        s.head_dim = k.head_dim;
        s.rows = s.kv_positions = s.longest_row_keys = rows;
        s.pairs = rows * (rows + 128) / 2;  // tile-executed: the diagonal tiles whole
        const double achieved = 4 * k.head_dim * s.pairs * s.heads / prefill_attention_seconds(a, km.sms, s);
        INFO("achieved " << achieved / 1e12 << " TFLOP/s, fitted " << a.tensor_tflop_per_s);
        CHECK(achieved <= a.tensor_tflop_per_s * 1e12);
        CHECK(achieved >= 0.1 * a.tensor_tflop_per_s * 1e12);
        CHECK(achieved <= hw.matrix_peak_flop_per_s(dtype));
        s.heads = s.kv_heads = 1;
        s.rows = s.kv_positions = s.longest_row_keys = s.pairs = 1;
        const double tiny = prefill_attention_seconds(a, km.sms, s);
        CHECK(tiny >= k.latency_us * 1e-6);
        CHECK(tiny < 30e-6);
      }
  }
}
