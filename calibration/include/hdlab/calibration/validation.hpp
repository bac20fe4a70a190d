#pragma once
// Validation: run held-out cases (designs x sizes x phases) on an executor backend,
// predict each with the simulator on a calibrated profile, and compare time and memory.
//
// A validation file (JSON; every key checked, errors name the JSON pointer):
//   {"description": "...",
//    "hardware": "cpu-NAME",            // profile to predict with (a bundled name or a path
//                                       // relative to this file); `--hw` overrides
//    "backend": "cpu",                  // cpu | cuda; `--backend` overrides
//    "threads": 0,                      // cpu threads (0: all); should match the profile's
//    "measure": {"warmup": 2, "repeats": 7, "seed": 1, "rounds": 1},  // rounds: the case
//                                       // list is measured this many times; each case keeps
//                                       // its fastest round (a co-tenant of a shared machine
//                                       // can slow every case measured for seconds)
//    "attention": {"tile_q": 64, "tile_k": 64},   // the executor's kernel tiles
//    "models": {"NAME": {"path": "../models/tiny-dense.json",
//                        "scale": {"hidden": 384, "heads": 6, ...}}},  // executor::BackboneScale fields
//    "designs": {"NAME": {"design": {...} | "hd:n=4", "layout": "stream_major"}},  // layout optional
//    "cases": [{"model": "NAME", "designs": ["NAME", ...],
//               "phases": ["prefill", "decode", "train-forward"], "tokens": [320, ...]}]}
// Each case entry expands to designs x phases x tokens. The models must store fp32 on
// the cpu backend ("dtype": "fp32"), so that the simulator's bytes are the executor's.
//
// What is compared per case (the simulator side uses only simulator code):
//   time    the median of `repeats` whole calls after `warmup` (executor::measure; the
//           round with the least median) against
//           the roofline time of the same pass (prefill_pass, decode_pass at the measured
//           steps' median context, train_forward_pass) on the profile, one sequence;
//   memory  the backend's peak bytes over the run against model::forward_memory;
//   ops     the measured time of each op class (gemm, attention, vector, memory) and of
//           the executor's glue between ops, against the predicted per-op times.
// Statistics: the median and maximum |relative error| of time and memory; Spearman's
// rho of predicted against measured time over all cases, and across the designs of each
// group (same model, phase and tokens): does the model order the designs correctly?
//
// Held out: a case is held out when none of its GEMMs (M, N, K) and attention shapes
// (query rows, key rows, H, G, hd) is a shape the profile's calibration measured
// (profile "calibration"/"samples"). overlaps() lists those that are.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/calibration/microbench.hpp"
#include "hdlab/calibration/stats.hpp"
#include "hdlab/executor/backend.hpp"
#include "hdlab/executor/runner.hpp"
#include "hdlab/model/design.hpp"
#include "hdlab/model/forward_memory.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::calibration {

struct ValidationCase {
  std::string label;   // "m384 hd4-intra-sm prefill L=320"
  std::string model, design;
  std::string group;   // "m384 prefill L=320": the designs ranked against each other
  std::string pointer;  // the case entry it came from ("/cases/2")
  model::Config config;
  std::optional<model::Layout> layout;  // empty: the design's default
  executor::Phase phase = executor::Phase::prefill;
  std::int64_t tokens = 0;
  model::Layout effective_layout() const;
};

struct ValidationSpec {
  std::string description;
  std::string hardware;  // as written (a name or a path relative to the file's folder)
  std::string backend = "cpu";
  int threads = 0;
  int warmup = 2, repeats = 7, rounds = 1;
  std::uint64_t seed = 1;
  std::int64_t tile_q = 64, tile_k = 64;
  std::vector<ValidationCase> cases;
};

// `base_dir`: the validation file's folder (model paths are relative to it).
ValidationSpec parse_validation(const nlohmann::json& j, const std::string& base_dir);

struct CaseMeasurement {
  double seconds = 0;       // median whole call
  double min_seconds = 0, max_seconds = 0;
  double setup_seconds = 0;  // host setup before the timed call (not predicted)
  std::array<double, model::op_kind_count> op_s{};  // median per op, summed over groups
  double peak_bytes = 0, weight_bytes = 0, kv_bytes = 0;
  std::int64_t context = 0;  // tokens in the sequence after the last measured call
};
// Runs the case on the backend (seeded random weights). Throws executor::OutOfMemoryError
// before allocating when it would not fit.
CaseMeasurement measure_case(executor::Backend& backend, const ValidationCase& c, const ValidationSpec& spec);

struct CasePrediction {
  double seconds = 0;
  std::array<double, model::op_kind_count> op_s{};
  model::ForwardMemory memory;
  std::int64_t context = 0;  // decode: the context the step was predicted at
};
CasePrediction predict_case(const ValidationCase& c, const simulator::HardwareProfile& hw, const ValidationSpec& spec);

// GEMM and attention shapes of a case that equal a calibration sample's shape.
std::vector<std::string> overlaps(const ValidationCase& c, const std::vector<Sample>& calibration);
// The samples a profile's calibration recorded (empty for a datasheet profile).
std::vector<Sample> calibration_samples(const simulator::HardwareProfile& hw);

struct CaseResult {
  ValidationCase spec;
  CaseMeasurement measured;
  CasePrediction predicted;
  std::vector<std::string> overlaps;  // empty: held out
  double time_error() const { return relative_error(predicted.seconds, measured.seconds); }
  double memory_error() const { return relative_error(predicted.memory.total(), measured.peak_bytes); }
};

struct GroupRank {
  std::string group;
  std::vector<std::string> designs;
  double spearman = 0;  // NaN with fewer than 3 designs or constant times
};

struct ValidationReport {
  std::vector<CaseResult> cases;
  ErrorStats time, memory;
  double spearman_all = 0;         // predicted vs measured time over every case
  std::vector<GroupRank> groups;   // across designs, per (model, phase, tokens)
  double spearman_designs_mean = 0, spearman_designs_min = 0;  // over groups of >= 3 designs
  std::map<std::string, ErrorStats> by_design, by_phase;
  // Per op class ("gemm", "attention", "vector", "memory") over the cases where the class
  // takes at least 2% of the measured time; "glue" is the measured call time the op
  // timers do not see (predicted: 0).
  std::map<std::string, ErrorStats> by_op_class;
  std::map<std::string, double> measured_share;  // mean share of the call time per class
};
ValidationReport summarize(std::vector<CaseResult> cases);

nlohmann::json to_json(const ValidationReport& r);
std::string to_csv(const ValidationReport& r);
// {"points": [{"design", "label", "predicted_s", "measured_s"}]}: what the GUI's
// validation view loads (gui_core::parse_validation_points).
nlohmann::json points_json(const ValidationReport& r);

}  // namespace hdlab::calibration
