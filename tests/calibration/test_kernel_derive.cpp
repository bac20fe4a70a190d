// A sibling device's kernel models derived from a fitted one by datasheet ratios
// (calibration/kernel_fit.hpp, derive_kernel_models): every rate scales by its ratio,
// latencies and shapes are kept, the bundled H200 and H20 are that derivation of the
// bundled H100, and targets without SMs or an L2 size are handled as documented.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>

#include "hdlab/calibration/kernel_fit.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"

#include "fit_test_support.hpp"

using namespace hdlab;
using namespace hdlab::calibration;
using simulator::GemmKernel;
using simulator::HardwareProfile;
using simulator::KernelModels;

namespace {

using fit_test::profile;

// Rates scale by their ratio to rounding (one multiplication); latencies and shapes are
// kept exactly.
constexpr double eps = 1e-14;

// The datasheet ratios a derivation scales by, target over source.
struct Ratios {
  const HardwareProfile& from;
  const HardwareProfile& to;
  double memory() const { return to.memory_bandwidth_gb_per_s / from.memory_bandwidth_gb_per_s; }
  double sms() const { return *to.sms / *from.sms; }
  double link() const { return *to.nvlink_bandwidth_gb_per_s / *from.nvlink_bandwidth_gb_per_s; }
  double l2() const { return *to.l2_cache_mb / *from.l2_cache_mb; }
  double peak(model::DType d) const { return to.matrix_peak_flop_per_s(d) / from.matrix_peak_flop_per_s(d); }
};

void check_gemms(const KernelModels& fitted, const KernelModels& k, const Ratios& r) {
  REQUIRE(k.gemm.size() == fitted.gemm.size());
  for (const auto& [d, g] : fitted.gemm) {
    INFO(model::to_string(d));
    const GemmKernel& x = k.gemm.at(d);
    CHECK(x.memory_gb_per_s == Approx(g.memory_gb_per_s * r.memory()).epsilon(eps));
    CHECK(x.tensor_tflop_per_s == Approx(g.tensor_tflop_per_s * r.peak(d)).epsilon(eps));
    CHECK(x.operand_tb_per_s == Approx(g.operand_tb_per_s * r.sms()).epsilon(eps));
    CHECK(x.latency_us == g.latency_us);
    CHECK(x.k_step_ns == g.k_step_ns);
    CHECK(x.split_k_us == g.split_k_us);
    CHECK(x.stream_k_us == g.stream_k_us);
    CHECK(x.epilogue_share == g.epilogue_share);
    CHECK(x.l2_gb_per_s == Approx(g.l2_gb_per_s * r.memory()).epsilon(eps));  // keeps its ratio to the DRAM
    CHECK(x.l2_resident_mb == Approx(g.l2_resident_mb * r.l2()).epsilon(eps));
    CHECK(x.l2_gb_per_s >= x.memory_gb_per_s);
    CHECK(x.overlap == g.overlap);
    CHECK(x.quant_latency_us == g.quant_latency_us);
    CHECK(x.quant_passes == g.quant_passes);
    CHECK(x.element_bytes == g.element_bytes);
  }
}

void check_attention(const KernelModels& fitted, const KernelModels& k, const Ratios& r) {
  REQUIRE(k.prefill_attention.size() == fitted.prefill_attention.size());
  for (const auto& [d, a] : fitted.prefill_attention) {
    const auto& x = k.prefill_attention.at(d);
    CHECK(x.memory_gb_per_s == Approx(a.memory_gb_per_s * r.memory()).epsilon(eps));
    CHECK(x.kv_gb_per_s == Approx(a.kv_gb_per_s * r.memory()).epsilon(eps));
    CHECK(x.tensor_tflop_per_s == Approx(a.tensor_tflop_per_s * r.peak(d)).epsilon(eps));
    CHECK(x.head_dims == a.head_dims);  // fixed costs of each head dimension's kernel: kept
    CHECK(x.window_us == a.window_us);
    CHECK(x.softmax_flops == a.softmax_flops);
  }
  REQUIRE(k.decode_attention.size() == fitted.decode_attention.size());
  for (const auto& [d, a] : fitted.decode_attention) {
    const auto& x = k.decode_attention.at(d);
    CHECK(x.memory_gb_per_s == Approx(a.memory_gb_per_s * r.memory()).epsilon(eps));
    CHECK(x.tensor_tflop_per_s == Approx(a.tensor_tflop_per_s * r.peak(model::DType::bf16)).epsilon(eps));
    CHECK(x.latency_us == a.latency_us);
    CHECK(x.grouped_min_block_factor == a.grouped_min_block_factor);
    CHECK(x.one_row.l2_gb_per_s == Approx(a.one_row.l2_gb_per_s * r.sms()).epsilon(eps));  // L2: with the SMs
    simulator::DecodeOneRow one_row = x.one_row;
    one_row.l2_gb_per_s = a.one_row.l2_gb_per_s;
    CHECK(one_row == a.one_row);  // per-block costs and rates: an SM's, kept
    CHECK(x.grouped == a.grouped);
    CHECK(x.overlap == a.overlap);
  }
}

void check_streams_and_collectives(const KernelModels& fitted, const KernelModels& k, const Ratios& r) {
  CHECK(k.vector.memory_gb_per_s == Approx(fitted.vector.memory_gb_per_s * r.memory()).epsilon(eps));
  CHECK(k.vector.latency_us == fitted.vector.latency_us);
  REQUIRE(k.moe_layer.size() == fitted.moe_layer.size());
  REQUIRE(fitted.moe_layer.count(model::DType::bf16) == 1);
  for (const auto& [d, m] : fitted.moe_layer) {  // a stream, like the vector kernels; its latency kept
    CHECK(k.moe_layer.at(d).token_gb_per_s == Approx(m.token_gb_per_s * r.memory()).epsilon(eps));
    CHECK(k.moe_layer.at(d).latency_us == m.latency_us);
  }
  for (int c = 0; c < simulator::collective_count; ++c) {
    const auto& mine = k.collectives[static_cast<std::size_t>(c)];
    const auto& theirs = fitted.collectives[static_cast<std::size_t>(c)];
    REQUIRE(mine.size() == theirs.size());
    for (const auto& [p, regimes] : theirs)
      for (std::size_t i = 0; i < regimes.size(); ++i) {
        CHECK(mine.at(p)[i].alpha_us == regimes[i].alpha_us);
        CHECK(mine.at(p)[i].bus_gb_per_s == Approx(regimes[i].bus_gb_per_s * r.link()).epsilon(eps));
      }
  }
}

}  // namespace

TEST_CASE("kernel fit: a sibling device derived by datasheet ratios", "[kernel-models][derive]") {
  const HardwareProfile fitted = profile("h100-sxm");
  REQUIRE(fitted.kernel_models);
  const KernelModels& h100 = *fitted.kernel_models;
  const HardwareProfile from = profile("datasheet/h100-sxm");
  CHECK(profile("datasheet/h200").memory_bandwidth_gb_per_s / from.memory_bandwidth_gb_per_s ==
        Approx(4800.0 / 3350.0));
  for (const char* target_file : {"h200", "h20"}) {
    INFO(target_file);
    const HardwareProfile to = profile(std::string("datasheet/") + target_file);
    REQUIRE(to.sms);
    const KernelModels k = derive_kernel_models(h100, from, to);
    CHECK(k.sms == *to.sms);
    CHECK(k.device == "derived from h100_sxm");
    CHECK(k.fit["derived_from"] == "h100_sxm");
    const Ratios ratios{from, to};  // H200: memory 4800 / 3350, L2 50 / 50; H20: L2 60 / 50
    check_gemms(h100, k, ratios);
    check_attention(h100, k, ratios);
    check_streams_and_collectives(h100, k, ratios);

    // The bundled derived profile is this derivation of the bundled fitted one (a refit of
    // the H100 that left its siblings stale fails here).
    const HardwareProfile bundled = profile(target_file);
    REQUIRE(bundled.kernel_models);
    KernelModels bundled_models = *bundled.kernel_models, derived = k;
    bundled_models.fit = derived.fit = nullptr;  // the provenance text is compared by test_profiles
    CHECK(simulator::to_json(derived) == simulator::to_json(bundled_models));
  }
}

TEST_CASE("kernel fit: a derived target without SMs is refused, one without an L2 size keeps the footprint",
          "[kernel-models][derive]") {
  const HardwareProfile fitted = profile("h100-sxm");
  REQUIRE(fitted.kernel_models);
  const KernelModels& h100 = *fitted.kernel_models;
  const HardwareProfile from = profile("datasheet/h100-sxm");

  // A target without "sms" is refused at /sms (the waves need them).
  HardwareProfile no_sms = profile("datasheet/h200");
  no_sms.sms.reset();
  try {
    derive_kernel_models(h100, from, no_sms);
    FAIL("no ConfigError");
  } catch (const model::ConfigError& e) {
    CHECK(e.pointer() == "/sms");
    CHECK(std::string(e.what()).find("sms") != std::string::npos);
  }
  no_sms.sms = 0;
  CHECK_THROWS_AS(derive_kernel_models(h100, from, no_sms), model::ConfigError);

  // A target without an L2 size keeps the fitted GEMM's resident footprint (nothing to
  // scale it by); its rates scale as ever.
  HardwareProfile no_l2 = profile("datasheet/h20");
  no_l2.l2_cache_mb.reset();
  const GemmKernel& fitted_bf16 = h100.gemm.at(model::DType::bf16);
  const GemmKernel derived_bf16 = derive_kernel_models(h100, from, no_l2).gemm.at(model::DType::bf16);
  CHECK(derived_bf16.l2_resident_mb == fitted_bf16.l2_resident_mb);
  CHECK(derived_bf16.l2_gb_per_s == Approx(fitted_bf16.l2_gb_per_s * 4000 / 3350).epsilon(1e-14));
}
