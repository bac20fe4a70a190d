#pragma once
// Kernel-level validation: a profile's kernel models (fitted on the 80% of kerneldb rows
// that held_out() leaves in) predict every row, and the held-out 20% are compared with
// their measured times. Reported per op class and precision: median, p90 and max
// |relative error|, the median signed error (predicted / measured - 1: negative = the
// model is too fast) and the worst rows; as JSON, CSV (one line per row) and a PNG
// scatter per class (predicted against measured, log-log).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::calibration {

// One measured row and its prediction.
struct KernelCase {
  std::string op_class;   // "gemm", "prefill_attention", "decode_attention", "all_reduce",
                          // "all_gather", "reduce_scatter", "all_to_all", "moe"
  std::string precision;  // "bf16", "fp8", "bf16/kv fp8", ...
  std::string label;      // the shape, readable: "m=8192 n=4096 k=4096"
  std::string source;     // "gemm_perf.csv:1234" (file and line)
  double measured_s = 0;
  double predicted_s = 0;
  bool held_out = false;
  double error() const { return predicted_s / measured_s - 1; }
};

// Errors are fractions (0.05 = 5 %). p90 interpolates linearly between the order
// statistics around rank (n - 1) x 0.9 (numpy's default): of |errors| {0.01 .. 0.10} it is 0.091.
struct KernelClassStats {
  std::string op_class, precision;
  std::int64_t rows = 0;  // held-out rows compared
  double median_abs_error = 0, p90_abs_error = 0, max_abs_error = 0;
  double median_signed_error = 0;
  std::vector<KernelCase> worst;  // largest |error| first
};

struct KernelValidation {
  std::string device, profile;            // set by the caller (summarize leaves them empty)
  std::vector<KernelCase> cases;          // every row (held-out and fitted)
  std::vector<KernelClassStats> classes;  // held-out rows, per (op class, precision)
  KernelClassStats all;                   // every held-out row (op_class and precision "all")
};

// Predicts every row of `db` with the profile's kernel models. ConfigError when the
// profile has no kernel models for a table's class and precision it is asked to predict.
std::vector<KernelCase> predict_kerneldb(const KernelDb& db, const simulator::HardwareProfile& profile);

// Statistics over the held-out cases, per (op class, precision) in sorted order, keeping
// the `worst` rows each (largest |error| first, ties in source order). ConfigError naming
// the case's source when a measured or predicted time is not a finite positive number.
KernelValidation summarize_kernel_cases(std::vector<KernelCase> cases, int worst = 10);

// The summary: device, profile, row counts, "all" and "classes" (each with its worst
// rows); not every case (kernel_cases_csv has those: a device has ~10^5 rows).
nlohmann::json to_json(const KernelValidation& v);
// One line per case, held-out and fitted:
// op_class,precision,label,source,held_out (1/0),measured_s,predicted_s,error
std::string kernel_cases_csv(const KernelValidation& v);

}  // namespace hdlab::calibration
