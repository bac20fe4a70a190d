#pragma once
// Pieces shared by the sweep sources (sweep_spec, sweep_grid, sweep_journal, sweep_run,
// sweep_output, sweep_serve); not part of the library's interface.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/model/design.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/pipeline.hpp"
#include "hdlab/simulator/serving.hpp"
#include "hdlab/simulator/sweep.hpp"

namespace hdlab::simulator::sweep_detail {

using nlohmann::json;

// ---- JSON pointers -----------------------------------------------------------------

// "/design/hd/n" -> {"design", "hd", "n"}; ConfigError at `where` when malformed.
std::vector<std::string> parse_pointer(const std::string& text, const std::string& where);
// Tokens [0, end) back to a pointer ("" for none).
std::string join_pointer(const std::vector<std::string>& tokens, std::size_t end);
// The value at tokens [begin, end) below `doc`, or nullptr.
const json* resolve(const json& doc, const std::vector<std::string>& tokens, std::size_t begin, std::size_t end);
// Writes `value` at tokens [begin, end()) below `doc`. Missing objects on the way are
// created when `create_objects`; otherwise the parent must exist. Array items are
// replaced, never appended. Returns "" or the pointer (tokens [0, k)) that is missing.
std::string set_at(json& doc, const std::vector<std::string>& tokens, std::size_t begin, const json& value,
                   bool create_objects);

// The base document's top-level keys that make up a part.
bool part_of_key(const std::string& key, SweepPart& part);
const char* to_string(SweepPart p);

// ---- grid points --------------------------------------------------------------------

// The base keys of `part` with every axis of that part applied at `values`; "" or the
// reason the point cannot be built (an enclosed axis whose parent its value lacks).
std::string build_part(const SweepSpec& spec, SweepPart part, const std::vector<std::size_t>& values, json& out);
model::Config parse_config_part(const json& part);
HardwareProfile parse_hardware_part(const json& part);
Scenario parse_scenario_part(const json& part);
PipelineOptions parse_pipeline_part(const json& part);
ServeSpec parse_serve_part(const json& part);
// Every column a point of this base document can produce: metric_columns(scenario), then
// pipeline_metric_columns() when the base has a pipeline, then serve_metric_columns()
// when it has a serve part.
std::vector<std::string> point_columns(const SweepSpec& spec, const Scenario& scenario);

// A parsed part of one point, or why it failed. Scenario entries also map each stored
// column to its index in metric_columns(scenario) (-1: not produced at this point).
template <class T>
struct Parsed {
  std::optional<T> value;
  std::vector<int> columns;
  std::string error;
};

// Parsed parts by key, each parsed once and shared by every thread (lock-free: a slot
// is filled by compare-and-swap; a thread that loses the race drops its copy).
template <class T>
class PartMemo {
 public:
  explicit PartMemo(std::uint64_t keys) : slots_(new std::atomic<const Parsed<T>*>[keys]), size_(keys) {
    for (std::uint64_t i = 0; i < keys; ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
  }
  ~PartMemo() {
    for (std::uint64_t i = 0; i < size_; ++i) delete slots_[i].load(std::memory_order_relaxed);
  }
  PartMemo(const PartMemo&) = delete;
  PartMemo& operator=(const PartMemo&) = delete;

  template <class Make>
  const Parsed<T>& get(std::uint64_t key, Make&& make) {
    std::atomic<const Parsed<T>*>& slot = slots_[key];
    if (const Parsed<T>* p = slot.load(std::memory_order_acquire)) return *p;
    auto fresh = std::make_unique<const Parsed<T>>(make());
    const Parsed<T>* expected = nullptr;
    if (slot.compare_exchange_strong(expected, fresh.get(), std::memory_order_acq_rel)) return *fresh.release();
    return *expected;
  }

 private:
  std::unique_ptr<std::atomic<const Parsed<T>*>[]> slots_;
  std::uint64_t size_;
};

// Evaluates points: memoizes every part by the value indices of the axes that change it
// (a key space too large to hold gets a one-entry cache per thread instead).
class PointEvaluator {
 public:
  explicit PointEvaluator(const SweepSpec& spec);
  ~PointEvaluator();

  // Per-thread state: reused buffers, so a point allocates nothing once parts are parsed.
  struct Worker {
    Metrics metrics;
    std::vector<double> row;
    std::vector<double> pipeline_row;
    std::vector<double> serve_row;
    std::vector<std::size_t> values;
    // One-entry caches for parts whose key space is too large to memoize.
    std::uint64_t last_key[sweep_part_count] = {~0ull, ~0ull, ~0ull, ~0ull, ~0ull};
    std::unique_ptr<const Parsed<model::Config>> last_config;
    std::unique_ptr<const Parsed<HardwareProfile>> last_hardware;
    std::unique_ptr<const Parsed<Scenario>> last_scenario;
    std::unique_ptr<const Parsed<PipelineOptions>> last_pipeline;
    std::unique_ptr<const Parsed<ServeSpec>> last_serve;
  };

  // Writes the stored columns of `point` to `out` (NaN where a column is not produced);
  // false with `error` set when the point fails. Thread-safe with one Worker per thread.
  bool evaluate(Worker& w, std::uint64_t point, double* out, std::string& error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- serve ----------------------------------------------------------------------------

// Reads every trace file the serve part can name (the base's and each axis value's
// /serve/workload/trace) into spec.serve_traces; ConfigError at its place in the sweep
// file when one cannot be read (sweep_serve.cpp).
void load_serve_traces(SweepSpec& spec, const std::string& base_dir);
// Runs the serving simulation of one point into `row` (serve_metric_row); false with
// `error` set when the point fails (sweep_serve.cpp).
bool serve_point(const SweepSpec& spec, const model::Config& config, const HardwareProfile& hw, const Scenario& scenario,
                 const ServeSpec& serve, std::vector<double>& row, std::string& error);

// ---- numbers and text ---------------------------------------------------------------

// 64-bit FNV-1a: the journal's line checksum and the sweep identity (not cryptographic:
// it detects torn lines and changed sweeps).
std::uint64_t fnv1a64(std::string_view bytes);
std::string hex64(std::uint64_t v);
// Shortest text that reads back to the same double ("nan", "inf" for those).
void append_double(std::string& out, double v);
// "4.125", "412.3", "1.234e+12": about `digits` significant digits for people.
std::string format_significant(double v, int digits);
std::size_t edit_distance(const std::string& a, const std::string& b);
// The closest of `names` to `name`, when close enough to be a likely typo.
std::optional<std::string> closest(const std::string& name, const std::vector<std::string>& names);
// Unit of a metric column ("s", "B", ...; serving and pipeline columns included).
std::string column_unit(const std::string& column);
// True when `name` is a metric column some point can produce (scalar metric names,
// serving_b<B>_in<I>_{tokens_per_s,ratio,fits}, pipeline_metric_columns()).
bool is_metric_column(const std::string& name);

}  // namespace hdlab::simulator::sweep_detail
