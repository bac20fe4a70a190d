// The bundled fitted profiles' decode models against the fit run again on the bundled
// kerneldb tables: where a discrete choice of the fit (the dispatch factor, whether the
// grouped splits span a window's context) was close, a stale profile or a fit that ranks
// its candidates otherwise fails here. And the bundled collectives against the measured
// order of GPU counts. (The synthetic recovery tests are in test_kernel_fit.cpp.)
#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "hdlab/calibration/kernel_fit.hpp"
#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/model/config_io.hpp"

#include "fit_test_support.hpp"

using namespace hdlab;
using namespace hdlab::calibration;
using simulator::HardwareProfile;
using simulator::KernelModels;

namespace {

using fit_test::profile;
using fit_test::source;

// A device's bundled kerneldb tables without what the decode fit does not read and the
// other fits would spend most of the time on: the GEMM rows but the m = 1 ones (bf16 GEMM
// rows are required; the GEMM fit is not what is checked), the MoE layers and the
// prefill rows.
KernelDb decode_tables(const std::string& device) {
  KernelDb db = read_kerneldb(source("profiles/kerneldb"), device);
  std::erase_if(db.gemm, [](const GemmRow& r) { return r.m > 1; });
  db.moe.clear();
  db.context_attention.clear();
  return db;
}

}  // namespace

TEST_CASE("kernel fit: the bundled A100 decode model is what the fit gives on the bundled table",
          "[kernel-models][fit]") {
  // Its decode rows set apart 351 rows faster than DRAM could read their cache, and its
  // full fits rank TensorRT-LLM's dispatch factor 4 below none (loss 0.1213 against 0.1224)
  // where a brief first run ranked them the other way. A stale bundled profile, or a fit
  // that chose otherwise, fails here.
  const HardwareProfile bundled = profile("a100-80gb-sxm");
  REQUIRE(bundled.kernel_models);
  const KernelModels km = fit_kernel_models(decode_tables("a100_sxm"), device_facts(profile("datasheet/a100-80gb-sxm")));
  REQUIRE(km.decode_attention.count(model::DType::bf16) == 1);
  const simulator::DecodeAttentionKernel& fitted = km.decode_attention.at(model::DType::bf16);
  CHECK(fitted == bundled.kernel_models->decode_attention.at(model::DType::bf16));
  CHECK(fitted.grouped_min_block_factor == 4);
  CHECK(bundled.kernel_models->fit["rows"]["generation_attention"]["faster_than_dram"] == 351);
}

TEST_CASE("kernel fit: the bundled H100 fp8 decode model is what the fit gives on the bundled table",
          "[kernel-models][fit]") {
  // The span candidates (whether the grouped splits cover a window's whole context) are
  // each fitted to the end, the per-head-dimension refinement included: on this table the
  // splits over the window alone win only after it (loss 0.1107 against 0.1143), where the
  // shared fits ranked them the other way (0.1524 against 0.1515). A stale bundled
  // profile, or a fit that chose before refining, fails here.
  const HardwareProfile bundled = profile("h100-sxm");
  REQUIRE(bundled.kernel_models);
  KernelDb db = decode_tables("h100_sxm");
  std::erase_if(db.generation_attention, [](const AttentionRow& r) { return r.kv_dtype != "fp8"; });
  const KernelModels km = fit_kernel_models(db, device_facts(profile("datasheet/h100-sxm")));
  REQUIRE(km.decode_attention.count(model::DType::fp8) == 1);
  const simulator::DecodeAttentionKernel& fitted = km.decode_attention.at(model::DType::fp8);
  CHECK(fitted == bundled.kernel_models->decode_attention.at(model::DType::fp8));
  CHECK_FALSE(fitted.grouped.splits_span_context);
  CHECK(fitted.grouped.head_dims.size() == 4);
}

TEST_CASE("kernel fit: the bundled collectives keep the measured order of GPU counts", "[kernel-models][collectives]") {
  // Over more GPUs of one node a collective of the same per-GPU message is usually slower,
  // but not always: NCCL picks other algorithms and channel counts per GPU count (NVLink
  // SHARP on 8 H100s, ...), and the measured tables have sizes where 8 GPUs beat 4. So the
  // model is held to the data's order only where the data is clear: where the larger
  // count is measured at least 15% slower (beyond the few-% error of the fits), and so at
  // the neighbouring sizes, the fitted models must not predict it faster.
  for (const auto& [file, device] : std::vector<std::pair<const char*, const char*>>{
           {"h100-sxm", "h100_sxm"}, {"a100-80gb-sxm", "a100_sxm"}, {"b200", "b200_sxm"}}) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    const KernelModels& km = *hw.kernel_models;
    const KernelDb db = read_kerneldb(source("profiles/kerneldb"), device);
    // (op, gpus, bytes) -> measured seconds, 2-byte NCCL rows (the ones fitted)
    std::map<std::tuple<int, int, double>, double> measured;
    for (const CollectiveRow& r : db.collectives) {
      if (r.library != "nccl" || r.dtype != "half") continue;
      const int op = r.op == "all_reduce" ? 0 : r.op == "all_gather" ? 1 : r.op == "reduce_scatter" ? 2 : 3;
      measured[{op, static_cast<int>(r.gpus), r.bytes}] = r.seconds;
    }
    REQUIRE(measured.size() > 200);
    // The data's order is clear at a size when the larger count is measured >= 15% slower
    // there and at the neighbouring sizes (half and twice, where measured): the tables
    // have single rows that spike to twice their neighbours (8-GPU all_to_all), which say
    // nothing about the order of the counts.
    auto clear = [&](int op, int p, double bytes) {
      const auto few = measured.find({op, p, bytes}), more = measured.find({op, 2 * p, bytes});
      return few != measured.end() && more != measured.end() && more->second >= 1.15 * few->second;
    };
    std::vector<std::string> wrong;
    int compared = 0;
    for (const auto& [key, t_few] : measured) {
      const auto& [op, p, bytes] = key;
      const int q = 2 * p;  // 2 -> 4, 4 -> 8
      if (!clear(op, p, bytes)) continue;
      bool neighbours = true;
      for (double b : {bytes / 2, bytes * 2})
        if (measured.count({op, p, b}) && measured.count({op, q, b})) neighbours = neighbours && clear(op, p, b);
      if (!neighbours) continue;
      ++compared;
      const double t_more = measured.at({op, q, bytes});
      const auto c = static_cast<simulator::Collective>(op);
      const auto& by_gpus = km.collectives[static_cast<std::size_t>(op)];
      const double model_few = simulator::collective_seconds(by_gpus.at(p), c, bytes, p);
      const double model_more = simulator::collective_seconds(by_gpus.at(q), c, bytes, q);
      // An inversion: the model puts the larger count clearly (> 2%) ahead. Two counts the
      // model times within 2% of each other are a tie, not a reversed order (the fits'
      // held-out median errors are 2-10%).
      if (model_more < 0.98 * model_few) {
        std::ostringstream o;
        o << simulator::to_string(c) << " " << p << " -> " << q << " GPUs at " << bytes << " B: measured "
          << t_few * 1e6 << " -> " << t_more * 1e6 << " us, model " << model_few * 1e6 << " -> " << model_more * 1e6
          << " us";
        wrong.push_back(o.str());
      }
    }
    INFO(file << ": " << compared << " pairs the data orders clearly");
    std::string list;
    for (const std::string& w : wrong) list += "\n  " + w;
    INFO(wrong.size() << " predicted in the wrong order:" << list);
    CHECK(compared > 50);
    CHECK(wrong.empty());
  }
}
