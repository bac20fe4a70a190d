#pragma once
// Sweeps: a grid of cost-model runs over any field of one base document, one row per run
// (style.md item 7: a list per axis, a Cartesian product, explicit exclusions).
//
// A sweep document (JSON; paths are relative to the sweep file):
//   {"name": "default", "description": "...",
//    // the base document: what one run is made of
//    "model": "../models/qwen3-8b.json"  |  "backbone": {...},
//    "design": {...},                 // absent: the model file's design, else baseline
//    "hardware": "../hardware/h100-sxm.json" | {...profile...},
//    "scenario": {...},               // parse_scenario's input (evaluate.hpp)
//    "pipeline": {"pp": 4, "microbatches": 16, "schedule": "1f1b"},  // optional
//    "serve": {"workload": {...}, "engine": {...}, "slo": {...}},      // optional
//    // the grid
//    "axes": [{"pointer": "/design/hd/n", "values": [2, 4, 8],
//              "name": "hd_n", "labels": ["n=2", "n=4", "n=8"]}, ...],
//    "exclude": [{"design": "VWN r=8", "decode_batch": [16, 64]}, ...],
//    "columns": ["train_step_s", "prefill_s", ...],           // default: every metric column
//    "derived": [{"name": "train_step_ratio", "column": "train_step_s",
//                 "baseline": {"design": "baseline"}}],
//    "table": {"rows": ["design"],
//              "columns": [{"header": "prefill 4k ms", "column": "prefill_s", "unit": "ms",
//                           "where": {"decode_batch": 1}}, ...]}}
//
// Base document. "model" and "hardware" may be file paths: they are read once, at load,
// and replaced by the documents they name, so pointers reach inside them
// ("/hardware/memory_gb", "/model/backbone/num_layers"). The same holds for string
// values of an axis on "/model" or "/hardware" (a list of files). Design values may be
// CLI shorthands ("hd:n=4", "baseline"), expanded at load.
//
// Axes. Points are the Cartesian product in row-major order: the last axis varies
// fastest and the point index is the mixed-radix number of the value indices (it names a
// row for good: resume and derived columns use it). Axes apply in order; an axis may
// replace a whole sub-document ("/design" with whole designs as values) and a later axis
// may set a field inside it ("/design/hd/window").
// What "exists" means for a pointer, checked at load:
//  - it starts with a part of the base document: /model or /backbone (whichever the base
//    has), /design, /hardware, /scenario, /pipeline and /serve (when the base has them);
//  - if no earlier axis's pointer encloses it, it resolves in the base document, or it is
//    created there: missing objects on the way are created when the deepest existing
//    ancestor is an object;
//  - if an earlier axis encloses it, its parent must exist in at least one of that
//    axis's values (no objects are created inside an axis value); at points whose value
//    lacks it the row fails with a message saying so (exclude those points).
//  - where the field exists, each value has its JSON type (numbers of any kind match;
//    a null in the base matches anything).
// Then every axis value is parsed once with the other axes at their first value: a key
// an axis creates that its part's parser does not know ("/design/hd/nn") is an error at
// /axes/i/pointer, and a value of the wrong type, a name outside a fixed set or an
// unknown key inside a value is an error at /axes/i/values/k, not a million failed rows.
// Any other failure (a range, a combination) is left to the rows, where it may depend on
// the other axes.
// Labels name values in the outputs, in exclusions and in baselines: given, or the
// value's "name" (objects), the path (files), or the value itself. Labels are unique.
//
// Exclusions: a point is dropped (no row) when, for every axis named in one condition,
// its value matches: a condition value is a label, a value, or a list of either (a
// value that is itself a list is written [[...]]).
//
// Pipeline: when the base has "pipeline" (pipeline_io.hpp's options: pp, microbatches,
// schedule, ...), every point also simulates the training step's pipeline schedule
// (simulate_pipeline of pipeline_cost.hpp) and pipeline_metric_columns() are columns
// too; axes such as /pipeline/pp, /pipeline/microbatches, /pipeline/schedule sweep it.
//
// Serve: when the base has "serve" (serving.hpp's ServeSpec: workload, engine, slo), every
// point also runs the serving simulation (simulate_serving with the point's model,
// hardware and scenario) and serve_metric_columns() are columns too (serve_requests_per_s,
// serve_decode_tokens_per_s, serve_ttft_p99_s, ...: see serving.hpp); axes such as
// /serve/workload/requests, /serve/workload/input_tokens, /serve/engine/max_running sweep
// it, checked at load as the other parts' axes are. A trace workload's file
// ("trace": "traces/a.csv", in the base or in an axis value) is relative to the sweep
// file and read once, at load (a missing file is an error at its place in the sweep
// file; its contents are part of the sweep's identity). Per-point failures of the
// simulation (a request whose KV cache can never fit, a prompt over the token budget
// without chunked prefill) are that row's error. So is a static batch (static arrivals
// and static batching) that the KV cache cannot hold whole: the engine would run it in
// waves of fewer requests, which is no longer the batch the row names.
//
// Columns: metric_columns() names (units in the names); default: every column point 0
// produces. Derived columns are ratios row / baseline row, where the baseline row is the
// same point with the named axes set to the named values; empty when that row is
// excluded or failed.
//
// Table (what the CLI prints and table.txt holds): one printed row per value of the
// "rows" axes (default: every axis), at its first point not excluded; a column reads a
// metric or derived column at the point that differs from the row's in its "where" axes
// (so one column per batch pivots a batch axis), scaled to "unit" (ms, us, GiB, GB,
// TFLOP, billion, %, ... where the column's unit allows it). Default: every output
// column, one row per point.
//
// Per-point failures (a combination the model rejects, e.g. VWN m not dividing the
// hidden size) are rows with an error column; the sweep goes on and the summary counts
// them. Errors in the sweep file itself are ConfigErrors naming their pointer in the
// sweep file ("/axes/2/pointer: ...").
//
// Output folder (run_sweep): manifest.json (the sweep's identity), journal.tsv (one line
// per finished point, appended as points finish; see sweep_journal.hpp), and at the
// end, each written atomically: results.csv, results.json, summary.json, table.txt;
// .hdlab-sweep.lock, locked while a sweep runs there (see sweep_folder.hpp).
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hdlab::simulator {

// The part of the base document an axis changes: model/backbone/design make one
// model::Config, hardware one HardwareProfile, scenario one Scenario, pipeline one
// PipelineOptions, serve one ServeSpec.
enum class SweepPart { config, hardware, scenario, pipeline, serve };
inline constexpr int sweep_part_count = 5;

struct SweepAxis {
  std::string name;                    // column name in the outputs
  std::string pointer;                 // JSON pointer into the base document
  std::vector<std::string> tokens;     // pointer, unescaped
  std::vector<nlohmann::json> values;  // files read, shorthands expanded
  std::vector<std::string> labels;     // one per value, unique
  SweepPart part = SweepPart::config;
  int enclosing_axis = -1;             // an earlier axis whose pointer encloses this one
  std::size_t size() const { return values.size(); }
  // The value as the JSON output shows it: numbers, booleans and strings as they are,
  // anything else by its label.
  nlohmann::json cell(std::size_t value) const;
};

// Axis index -> the value indices that match (every other axis matches anything).
struct SweepCondition {
  std::vector<std::pair<int, std::vector<bool>>> terms;
};

struct SweepDerived {
  std::string name;
  std::string column;   // a stored metric column
  int stored_index = 0;  // its index in SweepSpec::stored_columns
  std::vector<std::pair<int, std::size_t>> baseline;  // (axis, value index)
};

struct SweepTableColumn {
  std::string header;  // printed as given (units belong in it)
  std::string column;  // a metric or derived column
  double scale = 1;    // printed value = value * scale
  std::vector<std::pair<int, std::size_t>> where;  // (axis, value index) the cell is read at
};

struct SweepTable {
  std::vector<int> row_axes;  // axes that make a printed row; default: every axis
  std::vector<SweepTableColumn> columns;  // empty: the output columns as they are
};

// A serve trace file the sweep names, read at load.
struct SweepServeTrace {
  std::string path;  // as the sweep file writes it (what ServeSpec::workload.trace holds)
  std::string file;  // resolved against the sweep file's folder (named in row errors)
  std::string text;  // its contents
};

struct SweepSpec {
  std::string name;
  std::string description;
  nlohmann::json base;  // {"model" | "backbone", "design", "hardware", "scenario"[, "pipeline"][, "serve"]}
  std::vector<SweepServeTrace> serve_traces;  // every trace the serve part can name
  std::vector<SweepAxis> axes;
  std::vector<SweepCondition> exclude;
  std::vector<std::string> columns;         // metric columns in the outputs, in order
  std::vector<std::string> stored_columns;  // columns + derived sources: what a run keeps
  std::vector<int> output_stored_index;     // columns[i] == stored_columns[output_stored_index[i]]
  std::vector<SweepDerived> derived;
  SweepTable table;
  std::uint64_t point_count = 1;
  // Identity of the runs (base, axes, exclusions, stored columns, serve traces' contents;
  // not the table or the derived columns, which are computed from stored values): a
  // resumed run checks it.
  std::uint64_t identity = 0;

  // Value index per axis of a point (row-major, last axis fastest).
  void point_values(std::uint64_t point, std::vector<std::size_t>& out) const;
  std::uint64_t point_index(const std::vector<std::size_t>& values) const;
  bool excluded(const std::vector<std::size_t>& values) const;
  // "design=HD n=4, decode_batch=16"
  std::string describe_point(std::uint64_t point) const;
};

// Parses and checks a sweep document; `base_dir` resolves relative file paths. Every
// error is a ConfigError naming its pointer in the sweep document.
SweepSpec parse_sweep(const nlohmann::json& doc, const std::string& base_dir);
// Reads and parses a sweep file (errors about the file itself name the path).
SweepSpec load_sweep(const std::string& path);

// ---- running ----------------------------------------------------------------------

struct SweepProgress {
  std::uint64_t done = 0;     // points finished, resumed ones included
  std::uint64_t total = 0;    // points to finish (excluded ones not counted)
  std::uint64_t resumed = 0;  // finished by an earlier run (read from the journal)
  double elapsed_s = 0;       // since this run started evaluating
};

struct SweepOptions {
  unsigned threads = 0;       // 0: every core (std::thread::hardware_concurrency)
  bool fresh = false;         // discard an earlier run's journal in the folder, even another sweep's
  bool force = false;         // write into a non-empty folder that holds no sweep (its files may be overwritten)
  bool write_csv = true;      // results.csv
  bool write_json = true;     // results.json
  // What computes the rows (the CLI passes a hash of its own executable): a journal
  // written by another engine is refused like another sweep's, since a changed cost
  // model would mix old and new rows.
  std::string engine;
  // Called on the calling thread about ten times a second while points are evaluated,
  // and once at the end.
  std::function<void(const SweepProgress&)> on_progress;
  // Tests only: each point sleeps this long, so that a kill lands mid-sweep.
  std::chrono::microseconds point_delay{0};
};

enum class PointState : std::uint8_t { pending, done, failed, excluded };

// Every row of a finished sweep, in point order.
struct SweepResults {
  std::vector<PointState> state;   // per point
  std::vector<double> values;      // point-major: point * stored_columns.size() + column
  std::vector<std::pair<std::uint64_t, std::string>> errors;  // failed points, sorted by point
  double stored(std::uint64_t point, std::size_t column, std::size_t stride) const {
    return values[point * stride + column];
  }
};

struct SweepSummary {
  std::string name;
  std::uint64_t points = 0;     // the Cartesian product
  std::uint64_t excluded = 0;
  std::uint64_t evaluated = 0;  // by this run
  std::uint64_t resumed = 0;    // read back from the journal of an earlier run
  std::uint64_t failed = 0;     // rows with an error (this run and resumed)
  std::uint64_t dropped_journal_lines = 0;  // torn or corrupt lines found and recomputed
  unsigned threads = 0;
  double seconds = 0;           // this run, end to end (outputs included)
  std::vector<std::string> files;  // outputs written
};

struct SweepOutcome {
  SweepSummary summary;
  SweepResults results;
};

// Runs (or resumes) a sweep in `dir` (created if missing). Refused with a ConfigError
// naming the folder: a non-empty folder that holds no sweep (no manifest.json) unless
// options.force; a folder another sweep is writing (it holds the folder's lock,
// .hdlab-sweep.lock, which names its pid); a folder holding another sweep's journal
// unless options.fresh. Results that would not fit in memory are refused at "/axes"
// before anything is allocated.
SweepOutcome run_sweep(const SweepSpec& spec, const std::string& dir, const SweepOptions& options);

// A derived column's value at a point (NaN when the baseline row is missing).
double derived_value(const SweepSpec& spec, const SweepResults& r, std::size_t derived, std::uint64_t point);

// The printed table (the spec's "table", or every output column when it has none), as
// aligned text with a header line; at most `max_rows` rows, then a line saying how many
// more there are.
std::string format_table(const SweepSpec& spec, const SweepResults& r, std::size_t max_rows);

// Keys in reading order (sweep, counts, timing, files).
nlohmann::ordered_json to_json(const SweepSummary& s);
// Human summary lines: counts, failures (with the first few messages), files, time.
std::string describe(const SweepSummary& s, const SweepSpec& spec, const SweepResults& r);

}  // namespace hdlab::simulator
