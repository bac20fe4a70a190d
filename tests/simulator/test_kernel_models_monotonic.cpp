// Fitted kernel models (simulator/kernel_models.hpp) on the bundled profiles: monotonicity
// of every model in every shape dimension, collectives within what a launch and NVLink
// allow, and extrapolation far outside the fitted data against the datasheet peak.
//
// Monotonicity is checked exactly, up to rounding: where a model is flat in a dimension
// (the decode model's per-block rate makes the memory time independent of the sequence
// count until the device's bandwidth is reached) the two times are computed along
// different routes and may differ in the last bits, so a step may be shorter by at most
// 1e-12 of the time. Anything larger is a model that says more work takes less time.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernel_test_helpers.hpp"

using namespace kernel_test;

TEST_CASE("kernel models: GEMM time never falls as the footprint crosses the L2-resident size",
          "[kernel-models][monotonic]") {
  // Around the shapes whose footprint A + W + C equals the resident size, in steps of one
  // row, column or step of k: the activation moves from L2 to DRAM, which only adds time.
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    for (const auto& [dtype, g] : km.gemm) {
      const double e = g.element_bytes, l2 = g.l2_resident_mb * 1e6;
      auto t = [&](double m, double n, double k) { return gemm_seconds(g, km.sms, {m, n, k}); };
      Violations v;
      for (double n : {32.0, 512.0, 4096.0})
        for (double k : {256.0, 1024.0, 4096.0}) {
          // m at which the footprint reaches l2 (the other two fixed)
          const double m0 = std::floor((l2 - k * n * e) / (k * e + 2 * n));
          if (m0 < 2) continue;
          for (double m = std::max(1.0, m0 - 600); m < m0 + 600; ++m)
            v.check(t(m, n, k), t(m + 1, n, k),
                    describe(file, dtype, "gemm m+1") + " m " + num(m) + " n " + num(n) + " k " + num(k));
        }
      for (double m : {256.0, 2048.0, 8192.0})
        for (double n : {32.0, 512.0}) {
          const double k0 = std::floor((l2 - 2 * m * n) / ((m + n) * e));
          if (k0 < 2) continue;
          for (double k = std::max(1.0, k0 - 600); k < k0 + 600; ++k)
            v.check(t(m, n, k), t(m, n, k + 1),
                    describe(file, dtype, "gemm k+1") + " m " + num(m) + " n " + num(n) + " k " + num(k));
        }
      INFO(v.first());
      CHECK(v.cases.empty());
    }
  }
}

TEST_CASE("kernel models: GEMM time never falls when m, n or k doubles", "[kernel-models][monotonic]") {
  const std::vector<double> others = {1, 16, 256, 4096, 65536};
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    CHECK(km.gemm.count(DType::bf16) == 1);
    for (const auto& [dtype, g] : km.gemm) {
      auto t = [&](const double* s) { return gemm_seconds(g, km.sms, {s[0], s[1], s[2]}); };
      Violations v;
      // Each dimension doubled from 1 to 65536, the other two on a grid from 1 to 65536.
      for (int dim = 0; dim < 3; ++dim)
        for (double a : others)
          for (double b : others)
            for (double x : doubling(1, 32768)) {
              double lo[3] = {a, b, x}, hi[3] = {a, b, 2 * x};
              std::swap(lo[2], lo[dim]);
              std::swap(hi[2], hi[dim]);
              v.check(t(lo), t(hi),
                      describe(file, dtype, "gemm") + " m " + num(lo[0]) + "->" + num(hi[0]) + " n " + num(lo[1]) +
                          "->" + num(hi[1]) + " k " + num(lo[2]) + "->" + num(hi[2]));
            }
      INFO(v.first());
      CHECK(v.cases.empty());
    }
  }
}

TEST_CASE("kernel models: GEMM time never falls by one more row, column or step of k", "[kernel-models][monotonic]") {
  // Steps of one through every tile edge (m, n) and every split-K threshold (k / split >=
  // 128: k = 256, 512, 1024, 2048) up to 4200. More work in one dimension can always be
  // run the way the larger shape is (padding), so the fastest kernel never gets faster.
  const std::vector<std::pair<double, double>> others = {{1, 1}, {64, 32}, {16, 4096}, {128, 128}, {1024, 1024}};
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    for (const auto& [dtype, g] : km.gemm) {
      auto t = [&](double m, double n, double k) { return gemm_seconds(g, km.sms, {m, n, k}); };
      Violations v;
      for (const auto& [a, b] : others)
        for (double x = 1; x < 4200; ++x) {
          v.check(t(x, a, b), t(x + 1, a, b),
                  describe(file, dtype, "gemm m+1") + " m " + num(x) + " n " + num(a) + " k " + num(b));
          v.check(t(a, x, b), t(a, x + 1, b),
                  describe(file, dtype, "gemm n+1") + " m " + num(a) + " n " + num(x) + " k " + num(b));
          v.check(t(a, b, x), t(a, b, x + 1),
                  describe(file, dtype, "gemm k+1") + " m " + num(a) + " n " + num(b) + " k " + num(x));
        }
      INFO(v.first());
      CHECK(v.cases.empty());
    }
  }
}

TEST_CASE("kernel models: prefill attention is never faster with more rows, pairs, heads or sequences",
          "[kernel-models][monotonic]") {
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    REQUIRE(km.prefill_attention.count(DType::bf16) == 1);
    Violations v;
    for (const auto& [dtype, a] : km.prefill_attention) {
      auto t = [&](const PrefillAttentionShape& s) { return prefill_attention_seconds(a, km.sms, s); };
      for (const auto& [h, g] : head_layouts) {
        const std::string heads = " heads " + num(h) + "/" + num(g);
        for (double seqs : {1.0, 8.0, 64.0})
          for (double rows : doubling(1, 65536)) {
            v.check(t(prefill(seqs, rows, h, g)), t(prefill(seqs, 2 * rows, h, g)),
                    describe(file, dtype, "prefill rows") + " " + num(rows) + " seqs " + num(seqs) + heads);
            // more pairs at the same rows (a longer window; exact against executed counting)
            v.check(t(prefill(seqs, rows, h, g, rows)), t(prefill(seqs, rows, h, g, rows * rows)),
                    describe(file, dtype, "prefill pairs") + " rows " + num(rows) + " seqs " + num(seqs) + heads);
          }
        for (double rows : {1.0, 100.0, 4096.0, 32768.0})
          for (double seqs : doubling(1, 512))
            v.check(t(prefill(seqs, rows, h, g)), t(prefill(2 * seqs, rows, h, g)),
                    describe(file, dtype, "prefill seqs") + " " + num(seqs) + " rows " + num(rows) + heads);
        for (double rows : {1.0, 4096.0})
          v.check(t(prefill(4, rows, h, g)), t(prefill(4, rows, 2 * h, 2 * g)),
                  describe(file, dtype, "prefill heads x2") + " rows " + num(rows) + heads);
      }
    }
    INFO(v.first());
    CHECK(v.cases.empty());
  }
}

TEST_CASE("kernel models: decode attention is never faster with twice the keys or sequences",
          "[kernel-models][monotonic]") {
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    REQUIRE(km.decode_attention.count(DType::bf16) == 1);
    Violations v;
    for (const auto& [dtype, a] : km.decode_attention) {
      auto t = [&](const DecodeAttentionShape& s) { return decode_attention_seconds(a, km.sms, s); };
      for (const auto& [h, g] : head_layouts) {
        const std::string heads = " heads " + num(h) + "/" + num(g);
        for (double seqs : {1.0, 8.0, 64.0, 256.0})
          for (double keys : doubling(1, 524288))
            v.check(t(decode(seqs, keys, h, g)), t(decode(seqs, 2 * keys, h, g)),
                    describe(file, dtype, "decode keys") + " " + num(keys) + " seqs " + num(seqs) + heads);
        for (double keys : {1.0, 100.0, 4096.0, 131072.0})
          for (double seqs : doubling(1, 512))
            v.check(t(decode(seqs, keys, h, g)), t(decode(2 * seqs, keys, h, g)),
                    describe(file, dtype, "decode seqs") + " " + num(seqs) + " keys " + num(keys) + heads);
      }
    }
    INFO(v.first());
    CHECK(v.cases.empty());
  }
}

TEST_CASE("kernel models: decode attention is never faster by one more key (split and pass edges)",
          "[kernel-models][monotonic]") {
  // One key more never removes a split (TensorRT-LLM's 128 keys a split, a one-row
  // block's pass): the keys 1 .. 1200 cross every such edge of the fitted kernels.
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    Violations v;
    for (const auto& [dtype, a] : km.decode_attention) {
      auto t = [&](const DecodeAttentionShape& s) { return decode_attention_seconds(a, km.sms, s); };
      for (const auto& [h, g] : head_layouts)
        for (double seqs : {1.0, 8.0, 64.0, 256.0})
          for (double keys = 1; keys < 1200; ++keys)
            v.check(t(decode(seqs, keys, h, g)), t(decode(seqs, keys + 1, h, g)),
                    describe(file, dtype, "decode keys+1") + " " + num(keys) + " seqs " + num(seqs) + " heads " +
                        num(h) + "/" + num(g));
    }
    INFO(v.first());
    CHECK(v.cases.empty());
  }
}

// Decode attention by hand, across the dispatch switch and under windows: test_decode_attention.cpp.

TEST_CASE("kernel models: collectives are never faster for a larger message", "[kernel-models][monotonic]") {
  const std::vector<double> sizes = doubling(512, 1024.0 * 1024 * 1024);  // 512 B (kerneldb's smallest) .. 1 GiB
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    Violations v;
    int fitted = 0;
    auto sweep = [&](const std::vector<CollectiveRegime>& regimes, Collective c, int p, const std::string& what) {
      for (std::size_t s = 1; s < sizes.size(); ++s)
        v.check(collective_seconds(regimes, c, sizes[s - 1], p), collective_seconds(regimes, c, sizes[s], p),
                std::string(file) + " " + what + " " + std::to_string(p) + " GPUs " + num(sizes[s - 1]) + " B");
    };
    for (int i = 0; i < collective_count; ++i) {
      const Collective c = static_cast<Collective>(i);
      for (const auto& [p, regimes] : km.collectives[static_cast<std::size_t>(i)]) {
        ++fitted;
        sweep(regimes, c, p, to_string(c));
      }
    }
    for (const auto& [p, regimes] : km.custom_all_reduce)
      sweep(regimes, Collective::all_reduce, p, "custom all_reduce");
    CHECK(fitted == 12);  // 4 ops x {2, 4, 8} GPUs
    CHECK(km.custom_all_reduce.size() == 3);
    INFO(v.first());
    CHECK(v.cases.empty());
  }
}

TEST_CASE("kernel models: a collective extrapolated to more GPUs is never faster", "[kernel-models][monotonic]") {
  // Between fitted counts the measured tables themselves are not monotone (NCCL picks
  // other algorithms per count: test_kernel_fit holds the models to the data's order
  // where the data is clear). Beyond them regimes_for scales the nearest count's
  // latencies by (p-1)/(p0-1) and keeps its bandwidths: 8 -> 16 -> 32 GPUs must never
  // get faster at any size.
  const std::vector<double> sizes = doubling(512, 1024.0 * 1024 * 1024);
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    Violations v;
    auto sweep = [&](const std::map<int, std::vector<CollectiveRegime>>& by_gpus, Collective c,
                     const std::string& what) {
      REQUIRE_FALSE(by_gpus.empty());
      const int largest = by_gpus.rbegin()->first;
      for (int q : {2 * largest, 4 * largest}) {
        const int p = q / 2;
        for (double bytes : sizes)
          v.check(collective_seconds(regimes_for(by_gpus, p), c, bytes, p),
                  collective_seconds(regimes_for(by_gpus, q), c, bytes, q),
                  std::string(file) + " " + what + " " + std::to_string(p) + " -> " + std::to_string(q) + " GPUs at " +
                      num(bytes) + " B");
      }
    };
    for (int i = 0; i < collective_count; ++i)
      sweep(km.collectives[static_cast<std::size_t>(i)], static_cast<Collective>(i),
            to_string(static_cast<Collective>(i)));
    sweep(km.custom_all_reduce, Collective::all_reduce, "custom all_reduce");
    INFO(v.first());
    CHECK(v.cases.empty());
  }
}

TEST_CASE("kernel models: collectives stay within what a launch and NVLink allow", "[kernel-models][collectives]") {
  // Two physical bounds on every fitted collective, at every size from 1 B to 1 GiB:
  //  - no faster than a kernel launch: the profile's own fitted launch latency (the
  //    vector model's, the bf16 GEMM fit's latency; 2.1 to 3.6 us); the smallest measured
  //    collectives take 5 to 15 us (NCCL) and 2.7 to 5 us (TensorRT-LLM's one-shot);
  //  - a bus bandwidth (bus bytes / time) at most 1.2 x the datasheet NVLink bandwidth per
  //    direction: a ring moves at most that per GPU; NVLink SHARP's in-switch reduction
  //    reaches a little above it (nccl-tests: about 480 GB/s on 8 H100s against 450), the
  //    20% leaves room for that and no more.
  std::vector<double> sizes = doubling(1, 1024.0 * 1024 * 1024);
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    REQUIRE(hw.nvlink_bandwidth_gb_per_s);
    const KernelModels& km = *hw.kernel_models;
    const double floor_s = km.vector.latency_us * 1e-6, cap = 1.2 * *hw.nvlink_bandwidth_gb_per_s * 1e9;
    std::vector<std::string> wrong;
    auto check = [&](const std::vector<CollectiveRegime>& regimes, Collective c, int p, const std::string& what) {
      for (double bytes : sizes) {
        const double t = collective_seconds(regimes, c, bytes, p), bus = bus_bytes(c, bytes, p) / t;
        if (t < floor_s || bus > cap) {
          std::ostringstream o;
          o << file << " " << what << " " << p << " GPUs at " << bytes << " B: " << t * 1e6 << " us, bus " << bus / 1e9
            << " GB/s (floor " << floor_s * 1e6 << " us, cap " << cap / 1e9 << " GB/s)";
          wrong.push_back(o.str());
          break;  // one line per regime list
        }
      }
    };
    for (int i = 0; i < collective_count; ++i)
      for (const auto& [p, regimes] : km.collectives[static_cast<std::size_t>(i)])
        check(regimes, static_cast<Collective>(i), p, to_string(static_cast<Collective>(i)));
    for (const auto& [p, regimes] : km.custom_all_reduce)
      check(regimes, Collective::all_reduce, p, "custom all_reduce");
    std::string list;
    for (const std::string& w : wrong) list += "\n  " + w;
    INFO(wrong.size() << " regime list(s) out of bounds:" << list);
    CHECK(wrong.empty());
  }
}

TEST_CASE("kernel models: a streaming kernel's time grows with its bytes", "[kernel-models][monotonic]") {
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const VectorKernel& v = hw.kernel_models->vector;
    INFO(file);
    CHECK(vector_seconds(v, 0) == 0);
    for (double bytes : doubling(1, 1e12)) CHECK(vector_seconds(v, 2 * bytes) > vector_seconds(v, bytes));
    CHECK(vector_seconds(v, 1) >= v.latency_us * 1e-6);
  }
}

TEST_CASE("kernel models: GEMMs far outside the data stay below the datasheet peak", "[kernel-models][extrapolation]") {
  // m = n = k = 65536 (the data stops near 16k per side): fully compute bound. The fit
  // bounds the tensor peak to [0.3, 1.0] of the datasheet's, and tiles and waves only add
  // time, so the achieved rate must lie in [0.3, 1.0] of the datasheet peak; a model whose
  // extrapolation ran away (or collapsed) fails here. A 1 x 1 x 1 product is a launch: at
  // least the fitted latency (and the quantisation pass's, fp8), and under 20 us (the
  // smallest kerneldb GEMMs take 3 to 12 us).
  const double side = 65536;
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    for (const auto& [dtype, g] : km.gemm) {
      INFO(file << " " << model::to_string(dtype));
      const double peak = hw.matrix_peak_flop_per_s(dtype);
      const double achieved = 2 * side * side * side / gemm_seconds(g, km.sms, {side, side, side});
      INFO("achieved " << achieved / 1e12 << " TFLOP/s of " << peak / 1e12);
      CHECK(achieved <= peak);
      CHECK(achieved >= 0.3 * peak);
      // And no faster than the fitted tensor rate itself.
      CHECK(achieved <= g.tensor_tflop_per_s * 1e12 * (1 + kRounding));
      const double tiny = gemm_seconds(g, km.sms, {1, 1, 1});
      INFO("1x1x1: " << tiny * 1e6 << " us, latency " << g.latency_us << " us");
      CHECK(tiny >= (g.latency_us + g.quant_latency_us) * 1e-6);
      CHECK(tiny < 20e-6);
    }
  }
}
