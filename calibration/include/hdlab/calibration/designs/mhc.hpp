#pragma once
// mHC's measured kernels (the design: model/src/designs/mhc.cpp), the table its cost is
// validated against (tests/calibration/test_mhc_module_cost.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "hdlab/calibration/kerneldb.hpp"

namespace hdlab::calibration {

// mhc_module_perf: DeepSeek-V4's mHC kernels (TensorRT-LLM) around the n = hc_mult
// streams of D = hidden_size, timed over num_sites hyper-connections (2: attention and
// FFN of a layer). op "pre": the coefficients (norm, projection, Sinkhorn) and the
// sublayer input; "post": the stream mixing plus the sublayer output written back.
struct MhcRow {
  std::string op;      // pre, post
  std::string kernel;  // kernel_source
  double tokens = 0, sites = 0, streams = 0, hidden = 0, sinkhorn_iters = 0;
  double seconds = 0;
  std::int64_t line = 0;
  bool operator==(const MhcRow&) const = default;
};

// The device's mhc_module_perf table (DB's folder, .csv or .csv.gz), every row from DB's
// device; empty where the device has none. ConfigError naming the file, line and column
// on bad input.
std::vector<MhcRow> read_mhc_module_perf(const KernelDb& db);

}  // namespace hdlab::calibration
