// Kernel-level validation statistics on a hand-made case list: medians, p90, maxima and
// signed medians per (op class, precision) computed by hand, fitted rows left out, the
// worst rows in order; the JSON summary and the CSV of every case; bad cases refused.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hdlab/calibration/kernel_validation.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/simulator/hardware.hpp"

using namespace hdlab::calibration;

namespace {

// A case whose error (predicted / measured - 1) is `error`, measured 1 ms.
KernelCase with_error(const std::string& op_class, const std::string& precision, double error, bool held_out, int line) {
  return KernelCase{op_class, precision, "row " + std::to_string(line), "gemm_perf.csv:" + std::to_string(line),
                    1e-3, 1e-3 * (1 + error), held_out};
}

std::vector<KernelCase> hand_cases() {
  std::vector<KernelCase> c;
  int line = 2;
  for (double e : {0.10, -0.20, 0.05, -0.40, 0.30}) c.push_back(with_error("gemm", "bfloat16", e, true, line++));
  for (double e : {-0.10, -0.30, 0.20, -0.50}) c.push_back(with_error("gemm", "fp8", e, true, line++));
  // Fitted rows (not held out): in the cases and the CSV, never in the statistics.
  c.push_back(with_error("gemm", "bfloat16", 5.0, false, line++));
  c.push_back(with_error("moe", "fp8", -0.9, false, line++));
  return c;
}

}  // namespace

TEST_CASE("kernel validation: per-class statistics by hand, over held-out rows only", "[kerneldb]") {
  const KernelValidation v = summarize_kernel_cases(hand_cases(), 2);
  CHECK(v.cases.size() == 11);
  REQUIRE(v.classes.size() == 2);  // moe has no held-out row: no class

  const KernelClassStats& bf16 = v.classes[0];
  CHECK(bf16.op_class == "gemm");
  CHECK(bf16.precision == "bfloat16");
  CHECK(bf16.rows == 5);
  // |e| sorted {0.05, 0.10, 0.20, 0.30, 0.40}; signed sorted {-0.40, -0.20, 0.05, 0.10, 0.30}
  CHECK(bf16.median_abs_error == Approx(0.20));
  CHECK(bf16.p90_abs_error == Approx(0.36));  // rank 0.9 x 4 = 3.6: 0.30 + 0.6 x 0.10
  CHECK(bf16.max_abs_error == Approx(0.40));
  CHECK(bf16.median_signed_error == Approx(0.05));
  REQUIRE(bf16.worst.size() == 2);
  CHECK(bf16.worst[0].error() == Approx(-0.40));
  CHECK(bf16.worst[0].source == "gemm_perf.csv:5");
  CHECK(bf16.worst[1].error() == Approx(0.30));

  const KernelClassStats& fp8 = v.classes[1];
  CHECK(fp8.precision == "fp8");
  CHECK(fp8.rows == 4);
  // |e| sorted {0.1, 0.2, 0.3, 0.5}; signed sorted {-0.5, -0.3, -0.1, 0.2}
  CHECK(fp8.median_abs_error == Approx(0.25));
  CHECK(fp8.p90_abs_error == Approx(0.44));  // rank 2.7: 0.3 + 0.7 x 0.2
  CHECK(fp8.max_abs_error == Approx(0.50));
  CHECK(fp8.median_signed_error == Approx(-0.20));

  // All nine held-out rows: |e| {0.05, 0.1, 0.1, 0.2, 0.2, 0.3, 0.3, 0.4, 0.5}
  CHECK(v.all.op_class == "all");
  CHECK(v.all.rows == 9);
  CHECK(v.all.median_abs_error == Approx(0.20));
  CHECK(v.all.p90_abs_error == Approx(0.42));  // rank 7.2: 0.4 + 0.2 x 0.1
  CHECK(v.all.max_abs_error == Approx(0.50));
  CHECK(v.all.median_signed_error == Approx(-0.10));  // {-0.5, -0.4, -0.3, -0.2, -0.1, 0.05, 0.1, 0.2, 0.3}
  REQUIRE(v.all.worst.size() == 2);
  CHECK(v.all.worst[0].source == "gemm_perf.csv:10");  // fp8 -0.50
  CHECK(v.all.worst[1].source == "gemm_perf.csv:5");   // bf16 -0.40

  // The header's own example: |errors| 0.01 .. 0.10 have p90 0.091.
  std::vector<KernelCase> ten;
  for (int i = 1; i <= 10; ++i) ten.push_back(with_error("gemm", "fp8", 0.01 * i, true, i));
  CHECK(summarize_kernel_cases(ten).all.p90_abs_error == Approx(0.091));
  // No held-out rows at all: zero rows, no classes.
  const KernelValidation none = summarize_kernel_cases({with_error("gemm", "fp8", 0.1, false, 2)});
  CHECK(none.all.rows == 0);
  CHECK(none.classes.empty());
}

TEST_CASE("kernel validation: JSON summary and the CSV of every case", "[kerneldb]") {
  std::vector<KernelCase> cases = hand_cases();
  cases.push_back(KernelCase{"gemm", "fp8", "m=1, n=2", "gemm_perf.csv.gz:99", 0.25, 0.375, false});
  KernelValidation v = summarize_kernel_cases(cases, 1);
  v.device = "h100_sxm";
  v.profile = "H100 fitted";
  const nlohmann::json j = to_json(v);
  CHECK(j["device"] == "h100_sxm");
  CHECK(j["profile"] == "H100 fitted");
  CHECK(j["rows"] == 12);
  CHECK(j["held_out_rows"] == 9);
  CHECK(j["all"]["median_signed_error"].get<double>() == Approx(-0.10));
  REQUIRE(j["classes"].size() == 2);
  CHECK(j["classes"][1]["precision"] == "fp8");
  CHECK(j["classes"][1]["p90_abs_error"].get<double>() == Approx(0.44));
  CHECK(j["classes"][1]["worst"][0]["source"] == "gemm_perf.csv:10");
  CHECK(j["classes"][1]["worst"][0]["measured_s"] == 1e-3);
  CHECK(j["classes"][1]["worst"][0]["held_out"] == true);
  CHECK(!j.contains("cases"));  // every case is in the CSV

  const std::string csv = kernel_cases_csv(v);
  CHECK(csv.rfind("op_class,precision,label,source,held_out,measured_s,predicted_s,error\n", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 13);  // header + 12 cases, fitted ones included
  CHECK(csv.find("\ngemm,fp8,\"m=1, n=2\",gemm_perf.csv.gz:99,0,0.25,0.375,0.5\n") != std::string::npos);
  CHECK(csv.find("\nmoe,fp8,row 12,gemm_perf.csv:12,0,0.001,") != std::string::npos);
}

TEST_CASE("kernel validation: a case without a finite positive time is refused naming its source", "[kerneldb][bad-input]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Bad {
    double measured, predicted;
    const char* reason;
  };
  for (const Bad& b : {Bad{1e-3, nan, "predicted time nan s is not a positive number"},
                       Bad{1e-3, 0, "predicted time 0 s is not a positive number"},
                       Bad{1e-3, -1e-3, "predicted time -0.001 s is not a positive number"},
                       Bad{0, 1e-3, "measured time 0 s is not a positive number"}}) {
    CAPTURE(b.reason);
    std::vector<KernelCase> cases = hand_cases();
    cases.push_back(KernelCase{"gemm", "fp8", "m=1", "gemm_perf.csv:77", b.measured, b.predicted, true});
    try {
      summarize_kernel_cases(cases);
      FAIL("no error");
    } catch (const hdlab::model::ConfigError& e) {
      CHECK(e.pointer() == "gemm_perf.csv:77");
      CHECK(std::string(e.reason()).find(b.reason) != std::string::npos);
    }
  }
}

TEST_CASE("kernel validation: decode rows faster than the device's DRAM can read their cache are a class apart",
          "[kerneldb]") {
  // The bundled A100 profile's datasheet: 2039 GB/s of HBM, 40 MB of L2. 32 sequences x
  // 131072 keys x 1 KV head x 128 x 2 (K, V) x 2 bytes = 2.147 GB: read in 0.674 ms (a
  // time the A100 table holds for it) that is 3.19 TB/s, more than HBM delivers; in 1.2 ms
  // 1.79 TB/s, possible. 1 sequence x 1024 keys x 8 KV heads = 4.2 MB fits in L2: any time.
  const auto hw = hdlab::simulator::parse_hardware_profile(
      hdlab::model::read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/hardware/a100-80gb-sxm.json"));
  REQUIRE(hw.memory_bandwidth_gb_per_s == 2039);
  REQUIRE(hw.l2_cache_mb == 40);
  KernelDb db;
  db.device = "a100_sxm";
  db.gemm.push_back({"bfloat16", 64, 64, 64, 1e-5, 2});
  db.generation_attention = {{32, 1, 131071, 32, 1, 128, 0, "bfloat16", "bfloat16", 0.674e-3, 2},
                             {32, 1, 131071, 32, 1, 128, 0, "bfloat16", "bfloat16", 1.2e-3, 3},
                             {1, 1, 1023, 64, 8, 128, 0, "bfloat16", "bfloat16", 1e-7, 4},
                             {32, 1, 131071, 32, 1, 128, 1024, "bfloat16", "bfloat16", 1e-5, 5}};
  std::vector<std::string> classes;
  for (const KernelCase& c : predict_kerneldb(db, hw))
    if (c.op_class != "gemm") classes.push_back(c.op_class);
  // The windowed row reads 32 x 1024 keys (16.8 MB, in L2): a possible step.
  CHECK(classes == std::vector<std::string>{"decode_attention (faster than DRAM)", "decode_attention",
                                            "decode_attention", "decode_attention (sliding window)"});
}
