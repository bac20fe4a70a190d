// The prefill-attention fit (calibration/kernel_fit.hpp): every parameter of a known
// kernel recovered from synthetic context_attention rows it generated (two head
// dimensions, full and windowed masks, bf16 and an fp8 cache), and the rows each kernel
// precision is fitted on.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hdlab/calibration/kernel_fit.hpp"
#include "hdlab/calibration/kernel_validation.hpp"
#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/model/config_io.hpp"

using namespace hdlab;
using namespace hdlab::calibration;
using simulator::HardwareProfile;
using simulator::KernelModels;
using simulator::PrefillAttentionKernel;

namespace {

HardwareProfile datasheet() {
  return simulator::parse_hardware_profile(
      model::read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/hardware/datasheet/h100-sxm.json"));
}

// The truth: about what the H100's bf16 fit finds, moved off it (so a fit cannot return a
// start), inside the fit's bounds.
PrefillAttentionKernel truth() {
  PrefillAttentionKernel a;
  a.tensor_tflop_per_s = 700;  // bounds 0.1 .. 1.0 x 989
  a.softmax_flops = 150;
  a.memory_gb_per_s = 1500;
  a.kv_gb_per_s = 1900;
  a.window_us = 2.5;
  a.head_dims = {{64, 13, 3.2}, {128, 10.5, 2.7}};
  return a;
}

// Rows of every shape on the grid, bf16 activations with a `cache` cache, and a few bf16
// GEMM rows (the fit needs a bf16 GEMM to anchor the profile).
KernelDb grid(const std::string& cache) {
  KernelDb db;
  db.device = "synthetic";
  db.device_name = "synthetic H100";
  db.folder = "synthetic";
  std::int64_t line = 2;
  for (double batch : {1.0, 4.0, 16.0, 64.0})
    for (double isl : {1.0, 16.0, 128.0, 200.0, 512.0, 1024.0, 3000.0, 8192.0})
      for (const auto& [heads, kv] : std::vector<std::pair<double, double>>{{8, 8}, {32, 8}, {64, 2}})
        for (double hd : {64.0, 128.0})
          for (double window : {0.0, 256.0}) {
            AttentionRow r;
            r.batch = batch;
            r.isl = isl;
            r.heads = heads;
            r.kv_heads = kv;
            r.head_dim = hd;
            r.window = window;
            r.attn_dtype = "bfloat16";
            r.kv_dtype = cache;
            r.line = line++;
            db.context_attention.push_back(r);
          }
  simulator::GemmKernel g;
  g.tensor_tflop_per_s = 800;
  g.memory_gb_per_s = 3000;
  g.operand_tb_per_s = 100;
  for (double m : {1.0, 64.0, 1024.0, 8192.0})
    for (double n : {1024.0, 8192.0})
      db.gemm.push_back({"bfloat16", m, n, 4096, simulator::gemm_seconds(g, 132, {m, n, 4096}), line++});
  return db;
}

// Every attention row timed by kernel `a` of precision `d` on 132 SMs, through
// predict_kerneldb: the shapes the fit will see.
void time_rows(KernelDb& db, model::DType d, const PrefillAttentionKernel& a) {
  KernelDb attention = db;
  attention.gemm.clear();
  HardwareProfile hw = datasheet();
  KernelModels km;
  km.sms = 132;
  km.prefill_attention[d] = a;
  hw.kernel_models = km;
  const std::vector<KernelCase> cases = predict_kerneldb(attention, hw);
  REQUIRE(cases.size() == db.context_attention.size());
  for (std::size_t i = 0; i < cases.size(); ++i) db.context_attention[i].seconds = cases[i].predicted_s;
}

double rel(double a, double b) { return std::abs(a / b - 1); }

// Exact data and a model that can reproduce it. What the rows fix: a pair's cost at each
// head dimension ((4 hd + softmax) / F) within 0.5%, the two rates (told apart by the KV
// heads), the fixed costs (the small shapes) and the window's cost (the windowed rows)
// within 1%. The tensor rate and the softmax work apart only within 5%: they trade along
// a flat valley that the two head dimensions tilt only a little (measured: bf16 F 0.04%
// off, softmax 0.1%, everything else under 0.02%; fp8 F 0.7%, softmax 1.9%, a pair's cost
// 0.23%, the rest under 0.3%).
void check_recovered(const PrefillAttentionKernel& fit, const PrefillAttentionKernel& t) {
  INFO("fitted: F " << fit.tensor_tflop_per_s << ", softmax " << fit.softmax_flops << ", B " << fit.memory_gb_per_s
                    << ", B_kv " << fit.kv_gb_per_s << ", window " << fit.window_us << " us; hd 64: "
                    << fit.head_dims[0].latency_us << " / " << fit.head_dims[0].unit_us << " us; hd 128: "
                    << fit.head_dims[1].latency_us << " / " << fit.head_dims[1].unit_us << " us");
  REQUIRE(fit.head_dims.size() == t.head_dims.size());
  for (std::size_t i = 0; i < t.head_dims.size(); ++i) {
    const double hd = t.head_dims[i].head_dim;
    INFO("head dim " << hd);
    CHECK(fit.head_dims[i].head_dim == hd);
    const double pair = (4 * hd + fit.softmax_flops) / fit.tensor_tflop_per_s;
    CHECK(rel(pair, (4 * hd + t.softmax_flops) / t.tensor_tflop_per_s) <= 0.005);
    CHECK(rel(fit.head_dims[i].latency_us, t.head_dims[i].latency_us) <= 0.01);
    CHECK(rel(fit.head_dims[i].unit_us, t.head_dims[i].unit_us) <= 0.01);
  }
  CHECK(rel(fit.memory_gb_per_s, t.memory_gb_per_s) <= 0.02);
  CHECK(rel(fit.kv_gb_per_s, t.kv_gb_per_s) <= 0.01);
  CHECK(rel(fit.window_us, t.window_us) <= 0.01);
  CHECK(rel(fit.tensor_tflop_per_s, t.tensor_tflop_per_s) <= 0.05);
  CHECK(rel(fit.softmax_flops, t.softmax_flops) <= 0.05);
}

}  // namespace

TEST_CASE("kernel fit: a prefill-attention kernel is recovered from rows it generated",
          "[kernel-models][fit][prefill]") {
  const PrefillAttentionKernel t = truth();
  KernelDb db = grid("bfloat16");
  time_rows(db, model::DType::bf16, t);
  std::size_t fitted = 0, windowed = 0;
  for (const AttentionRow& r : db.context_attention)
    if (!held_out(r)) {
      ++fitted;
      windowed += r.window > 0 && r.window < r.isl ? 1 : 0;
    }
  INFO("rows left in: " << fitted << " of " << db.context_attention.size() << ", " << windowed << " windowed");
  REQUIRE(fitted > 250);
  REQUIRE(windowed > 60);

  const KernelModels km = fit_kernel_models(db, device_facts(datasheet()));
  REQUIRE(km.prefill_attention.size() == 1);  // bf16 rows only: no fp8 kernel
  REQUIRE(km.prefill_attention.count(model::DType::bf16) == 1);
  check_recovered(km.prefill_attention.at(model::DType::bf16), t);
}

TEST_CASE("kernel fit: an fp8 cache's rows fit the fp8 prefill kernel", "[kernel-models][fit][prefill]") {
  // bf16 rows with an fp8 cache run TensorRT-LLM's FP8 context attention: they are the fp8
  // kernel's rows (no bf16 kernel is fitted from them), and the fit recovers it.
  PrefillAttentionKernel t = truth();
  t.tensor_tflop_per_s = 1200;  // bounds 0.1 .. 1.0 x 1979
  KernelDb db = grid("fp8");
  time_rows(db, model::DType::fp8, t);

  const KernelModels fitted = fit_kernel_models(db, device_facts(datasheet()));
  REQUIRE(fitted.prefill_attention.size() == 1);
  REQUIRE(fitted.prefill_attention.count(model::DType::fp8) == 1);
  check_recovered(fitted.prefill_attention.at(model::DType::fp8), t);
}
