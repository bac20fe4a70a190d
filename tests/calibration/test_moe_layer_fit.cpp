// The MoE layer fit (kernel_fit.hpp's fit_moe_layer): its latency and token rate are
// recovered from synthetic moe_perf rows made by a known layer on top of the bundled
// H100's composition, from balanced rows where there are any (power-law rows and other
// precisions then left out), else from power-law rows; and the collector's power-law
// load on the rank it times (kerneldb.hpp's power_law_rank_load).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/calibration/kernel_fit.hpp"
#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/model/config_io.hpp"

using namespace hdlab;
using namespace hdlab::calibration;
using simulator::MoeLayerKernel;

namespace {

simulator::KernelModels h100() {
  const simulator::HardwareProfile hw = simulator::parse_hardware_profile(
      model::read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/hardware/h100-sxm.json"));
  return *hw.kernel_models;
}

// Rows over the collector's grid of tokens for four layer shapes (Mixtral-, DeepSeek-V3-,
// Qwen3-30B- and Qwen3-235B-like) at several tp x ep, timed by `truth` on top of the
// composition (the same shapes the kerneldb reader would build from the CSV).
std::vector<MoeRow> synthetic_rows(const simulator::KernelModels& k, const MoeLayerKernel& truth,
                                   const std::string& distribution, double scale) {
  const std::optional<double> alpha = power_law_alpha(distribution);
  struct Layer {
    double D, F, topk, E;
  };
  const simulator::GemmKernel& g = k.gemm.at(model::DType::bf16);
  std::vector<MoeRow> rows;
  std::int64_t line = 2;
  for (const Layer& l : {Layer{4096, 14336, 2, 8}, Layer{7168, 2048, 8, 256}, Layer{2048, 768, 8, 128},
                         Layer{4096, 1536, 8, 128}})
    for (const auto& [tp, ep] : {std::pair{1.0, 1.0}, std::pair{2.0, 4.0}, std::pair{1.0, 8.0}})
      for (double t = 1; t <= 16384; t *= 4) {
        MoeRow r;
        r.dtype = "bfloat16";
        r.kernel = "moe_torch_flow_cutlass";
        r.distribution = distribution;
        r.tokens = t;
        r.hidden = l.D;
        r.inter = l.F;
        r.topk = l.topk;
        r.experts = l.E;
        r.tp = tp;
        r.ep = ep;
        r.line = line++;
        simulator::MoeShape s;  // as kernel_shapes.cpp builds it (checked below by the fit itself)
        s.tokens = t * l.topk / ep;
        s.layer_tokens = t;
        const double local = l.E / ep;
        s.experts_hit = std::max(1.0, local * (1 - std::exp(t * std::log1p(-l.topk / l.E))));
        if (alpha) {  // the timed rank's skewed load
          const RankLoad load = power_law_rank_load(t, l.E, l.topk, ep, *alpha);
          s.tokens = load.copies;
          s.experts_hit = std::clamp(load.experts_hit, 1.0, local);
        }
        s.hidden = l.D;
        s.inter = l.F / tp;
        r.seconds = scale * simulator::moe_seconds(g, k.vector, k.sms, s, &truth);
        rows.push_back(r);
      }
  return rows;
}

}  // namespace

TEST_CASE("moe layer fit: the layer's latency and token rate are recovered from rows they made",
          "[kernel-models][fit][moe]") {
  const simulator::KernelModels k = h100();
  const MoeLayerKernel truth{17, 1300};  // us, GB/s: inside the fit's bounds, away from its start
  std::vector<MoeRow> rows = synthetic_rows(k, truth, "balanced", 1);
  // Power-law rows (the collector's skewed load, here three times slower) and fp8 rows
  // must not move the bf16 fit.
  for (MoeRow r : synthetic_rows(k, truth, "power_law_1.2", 3)) rows.push_back(r);
  for (MoeRow r : synthetic_rows(k, truth, "balanced", 2)) {
    r.dtype = "fp8";
    rows.push_back(r);
  }
  const auto fitted =
      fit_moe_layer(rows, model::DType::bf16, k.gemm.at(model::DType::bf16), k.vector, k.sms);
  REQUIRE(fitted);
  INFO("fitted " << fitted->latency_us << " us, " << fitted->token_gb_per_s << " GB/s");
  // Exact data and two parameters that each govern a regime (few tokens: the latency; many
  // tokens of a small layer: the rate): within 1% (measured: 1e-4 and better).
  CHECK(std::abs(fitted->latency_us / truth.latency_us - 1) <= 0.01);
  CHECK(std::abs(fitted->token_gb_per_s / truth.token_gb_per_s - 1) <= 0.01);

  // Balanced rows present: the fit takes them (the routing the cost model assumes); none
  // of the precision: nothing to fit.
  CHECK(moe_fit_routing(rows, model::DType::bf16) == MoeFitRouting::balanced);
  CHECK_FALSE(fit_moe_layer(rows, model::DType::fp16, k.gemm.at(model::DType::bf16), k.vector, k.sms));
}

TEST_CASE("moe layer fit: a table with power-law rows only is fitted on them, their skew modelled",
          "[kernel-models][fit][moe]") {
  const simulator::KernelModels k = h100();
  const MoeLayerKernel truth{30, 250};
  std::vector<MoeRow> rows = synthetic_rows(k, truth, "power_law_1.01", 1);
  for (MoeRow r : synthetic_rows(k, truth, "power_law_1.2", 1)) rows.push_back(r);
  CHECK(moe_fit_routing(rows, model::DType::bf16) == MoeFitRouting::power_law);
  CHECK(moe_fit_routing(rows, model::DType::fp8) == MoeFitRouting::none);
  const auto fitted = fit_moe_layer(rows, model::DType::bf16, k.gemm.at(model::DType::bf16), k.vector, k.sms);
  REQUIRE(fitted);
  INFO("fitted " << fitted->latency_us << " us, " << fitted->token_gb_per_s << " GB/s");
  CHECK(std::abs(fitted->latency_us / truth.latency_us - 1) <= 0.01);
  CHECK(std::abs(fitted->token_gb_per_s / truth.token_gb_per_s - 1) <= 0.01);
}

TEST_CASE("moe routing: the collector's power-law load on the rank it times", "[kerneldb][moe]") {
  CHECK(power_law_alpha("power_law_1.2") == 1.2);
  CHECK(power_law_alpha("power_law_1.01") == 1.01);
  CHECK_FALSE(power_law_alpha("balanced"));
  CHECK_FALSE(power_law_alpha("power_law_1"));     // the inverse CDF divides by 1 - alpha
  CHECK_FALSE(power_law_alpha("power_law_1.2x"));
  CHECK_FALSE(power_law_alpha("power_law_"));
  CHECK_FALSE(power_law_alpha("power_law_-2"));

  // One rank (ep 1): every copy is on it. 4096 tokens, top-8 of 128: the largest draw
  // (0.8 T) scaled to 32768 copies stays under T, so none is capped.
  const RankLoad all = power_law_rank_load(4096, 128, 8, 1, 1.01);
  CHECK(all.copies == 4096 * 8);
  CHECK(all.experts_hit <= 128);
  CHECK(all.experts_hit >= 100);  // a draw is at least 1 before scaling: few experts go empty

  // Eight ranks: the timed one is the most loaded, so above the mean share and below all.
  for (double alpha : {1.01, 1.2}) {
    INFO("alpha " << alpha);
    const RankLoad r = power_law_rank_load(4096, 128, 8, 8, alpha);
    CHECK(r.copies > 4096 * 8 / 8.0);
    CHECK(r.copies < 4096 * 8);
    CHECK(r.experts_hit <= 16);
    // The same question, the same answer: seeded by the question, not by what came before.
    (void)power_law_rank_load(64, 256, 8, 4, alpha);
    const RankLoad again = power_law_rank_load(4096, 128, 8, 8, alpha);
    CHECK(again.copies == r.copies);
    CHECK(again.experts_hit == r.experts_hit);
  }
  // Few copies (1 token, top-22 of 512, ep 16): each expert at most once, and the rounded-
  // away copies spread over the ranks rather than all landing on one (the measured rows:
  // 96 us, where 22 experts' weights would take 830 us).
  const RankLoad few = power_law_rank_load(1, 512, 22, 16, 1.2);
  CHECK(few.copies == few.experts_hit);
  CHECK(few.copies >= 1);
  CHECK(few.copies <= 11);
}
