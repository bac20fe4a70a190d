// Sweeps (simulator/sweep.hpp): the grid, every row against a direct evaluate() call,
// derived columns, exclusions, per-point failures, the journal's resume (torn lines
// included), the pipeline and serve parts (rows against direct simulations, traces read
// at load, the shipped serving sweep), and each bad sweep document with its exact message.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "fixtures.hpp"
#include "hdlab/model/files.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"
#include "hdlab/simulator/pipeline_io.hpp"
#include "hdlab/simulator/serving.hpp"
#include "hdlab/simulator/sweep.hpp"

namespace fs = std::filesystem;
using hdlab::model::ConfigError;
using hdlab::model::Json;
using namespace hdlab::simulator;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() / ("hdlab_test_sweep_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string str() const { return path.string(); }
};

// The tiny dense backbone on the round device, short sequences: every point is cheap.
Json base_sweep() {
  return {{"name", "tiny"},
          {"backbone", fixtures::tiny_dense()},
          {"hardware", fixtures::device_json()},
          {"scenario",
           {{"train", {{"seq_len", 64}}},
            {"prefill", {{"tokens", 64}}},
            {"decode", {{"batch", 1}, {"context", 64}}},
            {"kv", {{"context", 128}}},
            {"serving", {{"batches", {1}}, {"input_lengths", {32}}, {"output_tokens", 8}}}}}};
}

Json with(Json doc, const Json& extra) {
  for (const auto& [k, v] : extra.items()) doc[k] = v;
  return doc;
}

SweepOptions quiet(unsigned threads = 2) {
  SweepOptions o;
  o.threads = threads;
  return o;
}

std::string error_of(const Json& doc) {
  try {
    parse_sweep(doc, ".");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::size_t stored(const SweepSpec& spec, const std::string& column) {
  for (std::size_t i = 0; i < spec.stored_columns.size(); ++i)
    if (spec.stored_columns[i] == column) return i;
  FAIL("no stored column " << column);
  return 0;
}

}  // namespace

TEST_CASE("sweep points are the Cartesian product, last axis fastest", "[sweep]") {
  const SweepSpec spec = parse_sweep(
      with(base_sweep(), {{"axes",
                           {{{"pointer", "/scenario/decode/batch"}, {"values", {1, 2, 4}}},
                            {{"pointer", "/design"}, {"values", {"baseline", "hd:n=2"}}}}}}),
      ".");
  REQUIRE(spec.point_count == 6);
  CHECK(spec.axes[0].name == "decode_batch");
  CHECK(spec.axes[1].name == "design");
  CHECK(spec.axes[0].labels == std::vector<std::string>{"1", "2", "4"});
  CHECK(spec.axes[1].labels == std::vector<std::string>{"baseline", "hd:n=2"});
  CHECK(spec.axes[1].values[1] == Json::parse(R"({"hd": {"n": 2}})"));  // shorthand expanded
  CHECK(spec.axes[0].cell(2) == Json(4));
  CHECK(spec.axes[1].cell(1) == Json("hd:n=2"));
  std::vector<std::size_t> v;
  spec.point_values(3, v);
  CHECK(v == std::vector<std::size_t>{1, 1});
  for (std::uint64_t p = 0; p < spec.point_count; ++p) {
    spec.point_values(p, v);
    CHECK(spec.point_index(v) == p);
  }
  CHECK(spec.describe_point(5) == "decode_batch=4, design=hd:n=2");
  // Default: every column the evaluator has for the base scenario (its one serving cell's three).
  CHECK(spec.columns == metric_columns(parse_scenario(base_sweep()["scenario"])));
}

TEST_CASE("every sweep row equals a direct evaluation of its point", "[sweep]") {
  const Json doc = with(base_sweep(), {{"axes",
                                        {{{"pointer", "/design"}, {"values", {"baseline", "hd:n=2", "phd:K=2"}}},
                                         {{"pointer", "/scenario/decode/batch"}, {"values", {1, 8}}}}},
                                       {"columns", {"train_step_s", "prefill_s", "decode_tokens_per_s",
                                                    "kv_bytes_per_seq", "serving_b1_in32_tokens_per_s"}}});
  const SweepSpec spec = parse_sweep(doc, ".");
  TempDir dir;
  const SweepOutcome out = run_sweep(spec, dir.str(), quiet());
  CHECK(out.summary.evaluated == 6);
  CHECK(out.summary.failed == 0);
  const HardwareProfile hw = parse_hardware_profile(fixtures::device_json());
  const char* designs[] = {"{}", R"({"hd": {"n": 2}})", R"({"phd": {"K": 2}})"};
  for (std::uint64_t p = 0; p < spec.point_count; ++p) {
    Json sj = base_sweep()["scenario"];
    sj["decode"]["batch"] = p % 2 ? 8 : 1;
    const Metrics m = evaluate(fixtures::config(fixtures::tiny_dense(), designs[p / 2]), hw, parse_scenario(sj));
    REQUIRE(out.results.state[p] == PointState::done);
    for (const std::string& c : spec.columns)  // same computation, so bit-identical
      CHECK(out.results.stored(p, stored(spec, c), spec.stored_columns.size()) == metric_value(m, c));
  }
  // The outputs hold the same rows.
  const Json results = Json::parse(hdlab::model::read_text_file(dir.str() + "/results.json"));
  REQUIRE(results["rows"].size() == 6);
  CHECK(results["rows"][3]["design"] == "hd:n=2");
  CHECK(results["rows"][3]["decode_batch"] == 8);
  CHECK(results["rows"][3]["kv_bytes_per_seq"].get<double>() ==
        out.results.stored(3, stored(spec, "kv_bytes_per_seq"), spec.stored_columns.size()));
  CHECK(fs::exists(dir.path / "results.csv"));
  CHECK(fs::exists(dir.path / "summary.json"));
}

TEST_CASE("derived ratios, exclusions and the pivoted table", "[sweep]") {
  const Json doc = with(
      base_sweep(),
      Json::parse(R"({
        "axes": [{"pointer": "/design", "name": "design", "values": ["baseline", "hd:n=2", "hd:n=4"]},
                 {"pointer": "/scenario/decode/batch", "name": "batch", "values": [1, 4]}],
        "exclude": [{"design": "hd:n=4", "batch": [4]}],
        "columns": ["decode_tokens_per_s", "kv_bytes_per_seq"],
        "derived": [{"name": "kv_ratio", "column": "kv_bytes_per_seq", "baseline": {"design": "baseline"}},
                    {"name": "vs_batch4", "column": "decode_tokens_per_s", "baseline": {"batch": 4}}],
        "table": {"rows": ["design"],
                  "columns": [{"header": "tok/s b=1", "column": "decode_tokens_per_s", "where": {"batch": 1}},
                              {"header": "tok/s b=4", "column": "decode_tokens_per_s", "where": {"batch": 4}},
                              {"header": "KV KiB", "column": "kv_bytes_per_seq", "unit": "KiB"},
                              {"column": "kv_ratio"}]}})"));
  const SweepSpec spec = parse_sweep(doc, ".");
  TempDir dir;
  const SweepOutcome out = run_sweep(spec, dir.str(), quiet());
  CHECK(out.summary.excluded == 1);
  CHECK(out.summary.evaluated == 5);
  CHECK(out.results.state[5] == PointState::excluded);
  const std::size_t kv = stored(spec, "kv_bytes_per_seq"), k = spec.stored_columns.size();
  // HD keeps n streams' KV: exactly n times the baseline's.
  CHECK(derived_value(spec, out.results, 0, 2) == 2.0);
  CHECK(derived_value(spec, out.results, 0, 4) == 4.0);
  CHECK(derived_value(spec, out.results, 0, 0) == 1.0);
  CHECK(derived_value(spec, out.results, 1, 0) ==
        out.results.stored(0, 0, k) / out.results.stored(1, 0, k));
  CHECK(std::isnan(derived_value(spec, out.results, 1, 4)));  // its baseline (hd:n=4, batch 4) is excluded
  // The tiny backbone: 2 layers x K,V x 1 head x 4 x 2 bytes x 128 tokens = 4096 bytes.
  CHECK(out.results.stored(0, kv, k) == 4096);

  const std::string table = format_table(spec, out.results, 10);
  CHECK(table.find("| design   | tok/s b=1 | tok/s b=4 | KV KiB | kv_ratio |") == 0);
  CHECK(table.find("| hd:n=4   |") != std::string::npos);
  CHECK(table.find("excluded") != std::string::npos);  // hd:n=4 at batch 4
  CHECK(table.find("|     16 |        4 |") != std::string::npos);  // hd:n=4: 4 x 4096 B = 16 KiB, whole KiB print whole
  CHECK(format_table(spec, out.results, 1).find("... 2 more rows") != std::string::npos);

  const std::string csv = hdlab::model::read_text_file(dir.str() + "/results.csv");
  CHECK(csv.rfind("point,design,batch,decode_tokens_per_s,kv_bytes_per_seq,kv_ratio,vs_batch4,error\n", 0) == 0);
  CHECK(csv.find("\n5,") == std::string::npos);  // no row for the excluded point
  CHECK(csv.find("\n4,hd:n=4,1,") != std::string::npos);
}

TEST_CASE("a point the model rejects is a failed row - the sweep goes on", "[sweep]") {
  // VWN needs m to divide the hidden size (8): m = 3 fails, m = 2 works.
  const Json doc = with(base_sweep(), {{"axes", {{{"pointer", "/design"}, {"values", {"vwn:m=2,n=4", "vwn:m=3,n=6"}}}}},
                                       {"columns", {"decode_step_s"}}});
  const SweepSpec spec = parse_sweep(doc, ".");
  TempDir dir;
  const SweepOutcome out = run_sweep(spec, dir.str(), quiet());
  CHECK(out.summary.failed == 1);
  CHECK(out.results.state[0] == PointState::done);
  REQUIRE(out.results.errors.size() == 1);
  CHECK(out.results.errors[0].first == 1);
  CHECK(out.results.errors[0].second.rfind("/design/vwn/m: ", 0) == 0);
  const std::string csv = hdlab::model::read_text_file(dir.str() + "/results.csv");
  CHECK(csv.find("\n1,\"vwn:m=3,n=6\",,/design/vwn/m: ") != std::string::npos);
  const std::string summary = describe(out.summary, spec, out.results);
  CHECK(summary.find("1 point(s) failed; the sweep went on") != std::string::npos);
  CHECK(summary.find("point 1 (design=vwn:m=3,n=6): /design/vwn/m: ") != std::string::npos);
}

TEST_CASE("an axis inside a whole-document axis - points whose value lacks it fail", "[sweep]") {
  const Json doc = with(
      base_sweep(),
      Json::parse(R"({"axes": [{"pointer": "/design", "values": ["baseline", {"name": "hd", "hd": {"n": 2}}]},
                               {"pointer": "/design/hd/n", "values": [2, 3]}],
                      "columns": ["params_total"]})"));
  const SweepSpec spec = parse_sweep(doc, ".");
  CHECK(spec.axes[1].enclosing_axis == 0);
  TempDir dir;
  const SweepOutcome out = run_sweep(spec, dir.str(), quiet());
  CHECK(out.results.state[0] == PointState::failed);
  CHECK(out.results.errors[0].second ==
        "axis hd_n (/design/hd/n): /design/hd does not exist where design = baseline (exclude these points)");
  // HD adds one input table (V x D = 80 parameters) per extra stream.
  const std::size_t k = spec.stored_columns.size();
  CHECK(out.results.stored(3, 0, k) - out.results.stored(2, 0, k) == 80);
}

TEST_CASE("a killed sweep resumes from its journal: torn lines dropped, nothing lost", "[sweep][resume]") {
  const Json doc = with(base_sweep(), {{"axes",
                                        {{{"pointer", "/design"}, {"values", {"baseline", "hd:n=2", "hd:n=4"}}},
                                         {{"pointer", "/scenario/decode/context"}, {"values", {8, 16, 32, 64, 128}}}}},
                                       {"columns", {"decode_step_s", "kv_bytes", "prefill_s"}}});
  const SweepSpec spec = parse_sweep(doc, ".");
  TempDir whole, resumed;
  run_sweep(spec, whole.str(), quiet());
  run_sweep(spec, resumed.str(), quiet(1));
  // Keep 6 of the 15 journal lines and cut the 7th in half, as a kill mid-write would.
  const fs::path journal = resumed.path / "journal.tsv";
  const std::string text = hdlab::model::read_text_file(journal.string());
  std::size_t cut = 0;
  for (int line = 0; line < 6; ++line) cut = text.find('\n', cut) + 1;
  hdlab::model::write_file_atomic(journal.string(), text.substr(0, cut + 10));
  fs::remove(resumed.path / "results.csv");

  const SweepOutcome again = run_sweep(spec, resumed.str(), quiet());
  CHECK(again.summary.resumed == 6);
  CHECK(again.summary.dropped_journal_lines == 1);
  CHECK(again.summary.evaluated == 9);
  CHECK(hdlab::model::read_text_file((resumed.path / "results.csv").string()) ==
        hdlab::model::read_text_file((whole.path / "results.csv").string()));
  // One line per point now: nothing was evaluated twice.
  const std::string after = hdlab::model::read_text_file(journal.string());
  CHECK(std::count(after.begin(), after.end(), '\n') == 15);

  // A corrupt line in the middle (a flipped digit) fails its checksum and is recomputed.
  std::string flipped = after;
  flipped[flipped.find('\t') + 1] ^= 1;
  hdlab::model::write_file_atomic(journal.string(), flipped);
  const SweepOutcome third = run_sweep(spec, resumed.str(), quiet());
  CHECK(third.summary.resumed == 14);
  CHECK(third.summary.evaluated == 1);
  CHECK(hdlab::model::read_text_file((resumed.path / "results.csv").string()) ==
        hdlab::model::read_text_file((whole.path / "results.csv").string()));
}

TEST_CASE("a folder holding another sweep is refused unless started fresh", "[sweep][resume]") {
  TempDir dir;
  const SweepSpec a = parse_sweep(with(base_sweep(), {{"axes", {{{"pointer", "/design"}, {"values", {"baseline"}}}}}}), ".");
  const SweepSpec b = parse_sweep(with(base_sweep(), {{"axes", {{{"pointer", "/design"}, {"values", {"hd:n=2"}}}}}}), ".");
  CHECK(a.identity != b.identity);
  run_sweep(a, dir.str(), quiet());
  CHECK_THROWS_WITH(run_sweep(b, dir.str(), quiet()),
                    dir.str() +
                        ": holds the journal of another sweep (\"tiny\": a different base document, axes or columns), "
                        "whose rows would not match this one; start fresh (--fresh) to discard it, or choose another "
                        "output folder");
  SweepOptions fresh = quiet();
  fresh.fresh = true;
  CHECK(run_sweep(b, dir.str(), fresh).summary.evaluated == 1);
  // Changing only the table or the derived columns keeps the rows.
  Json doc = with(base_sweep(), {{"axes", {{{"pointer", "/design"}, {"values", {"hd:n=2"}}}}},
                                 {"table", {{"columns", {{{"column", "kv_bytes"}}}}}}});
  CHECK(run_sweep(parse_sweep(doc, "."), dir.str(), quiet()).summary.resumed == 1);
  // Rows another build computed are not mixed with this one's.
  SweepOptions other_build = quiet();
  other_build.engine = "hdlab executable 0123";
  CHECK_THROWS_WITH(run_sweep(b, dir.str(), other_build),
                    dir.str() +
                        ": holds rows computed by another build of hdlab (unidentified; this one: hdlab executable 0123), which "
                        "may differ from this one's; start fresh (--fresh) to recompute them, or choose another output "
                        "folder");
}

TEST_CASE("the pipeline axis simulates each point's schedule", "[sweep][pipeline]") {
  const Json doc = with(base_sweep(), Json::parse(R"({
      "pipeline": {"pp": 2, "microbatches": 4, "schedule": "1f1b"},
      "axes": [{"pointer": "/pipeline/schedule", "values": ["gpipe", "1f1b"]},
               {"pointer": "/pipeline/microbatches", "values": [2, 8]}],
      "columns": ["train_step_s", "pipeline_makespan_s", "pipeline_bubble_fraction"]})"));
  const SweepSpec spec = parse_sweep(doc, ".");
  TempDir dir;
  const SweepOutcome out = run_sweep(spec, dir.str(), quiet());
  REQUIRE(out.summary.failed == 0);
  const auto config = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = parse_hardware_profile(fixtures::device_json());
  const Scenario scenario = parse_scenario(base_sweep()["scenario"]);
  const std::size_t k = spec.stored_columns.size();
  for (std::uint64_t p = 0; p < 4; ++p) {
    Json o = {{"pp", 2}, {"microbatches", p % 2 ? 8 : 2}, {"schedule", p / 2 ? "1f1b" : "gpipe"}};
    const PipelineResult r = simulate_pipeline(config, hw, scenario, parse_pipeline_options(o));
    CHECK(out.results.stored(p, 1, k) == r.metrics.makespan_s);
    CHECK(out.results.stored(p, 2, k) == r.metrics.bubble_fraction);
  }
  CHECK(error_of(with(base_sweep(), {{"axes", {{{"pointer", "/pipeline/pp"}, {"values", {2}}}}}})) ==
        "/axes/0/pointer: /pipeline/pp does not exist in the base document (its parts: /backbone, /design, "
        "/hardware, /scenario)");
}

namespace {

// A static batch of short requests on the tiny model (32 bytes of KV cache per token).
Json serve_sweep(const Json& axes) {
  return with(base_sweep(), {{"serve", Json::parse(R"({"workload": {"arrivals": "static", "requests": 2,
                                                                    "input_tokens": 16, "output_tokens": 4},
                                                       "engine": {"batching": "static", "max_running": 8}})")},
                             {"axes", axes}});
}

}  // namespace

TEST_CASE("serve sweep rows equal simulate_serving at the same point", "[sweep][serve]") {
  Json doc = serve_sweep(Json::parse(R"([{"pointer": "/design", "values": ["baseline", "hd:n=2"]},
                                          {"pointer": "/serve/workload/requests", "name": "batch", "values": [1, 3]}])"));
  doc["derived"] = Json::parse(R"([{"name": "decode_ratio", "column": "serve_decode_tokens_per_s",
                                    "baseline": {"design": "baseline"}}])");
  const SweepSpec spec = parse_sweep(doc, ".");
  const std::vector<std::string> serve_cols = serve_metric_columns();
  for (const std::string& c : serve_cols)  // default columns: the cost model's, then the serve simulation's
    CHECK(std::find(spec.columns.begin(), spec.columns.end(), c) != spec.columns.end());
  TempDir dir;
  const SweepOutcome out = run_sweep(spec, dir.str(), quiet());
  REQUIRE(out.summary.failed == 0);
  const HardwareProfile hw = parse_hardware_profile(fixtures::device_json());
  const Scenario scenario = parse_scenario(base_sweep()["scenario"]);
  const std::size_t k = spec.stored_columns.size();
  std::vector<double> row;
  for (std::uint64_t p = 0; p < 4; ++p) {
    Json sj = doc["serve"];
    sj["workload"]["requests"] = p % 2 ? 3 : 1;
    const ServeResult r =
        simulate_serving(fixtures::config(fixtures::tiny_dense(), p / 2 ? R"({"hd": {"n": 2}})" : "{}"), hw, scenario,
                         parse_serve_spec(sj));
    serve_metric_row(r, row);
    REQUIRE(row.size() == serve_cols.size());
    for (std::size_t c = 0; c < serve_cols.size(); ++c)  // same computation, so bit-identical
      CHECK(out.results.stored(p, stored(spec, serve_cols[c]), k) == row[c]);
    // The row's names read the fields they say.
    CHECK(out.results.stored(p, stored(spec, "serve_decode_tokens_per_s"), k) == r.decode_tokens_per_s);
    CHECK(out.results.stored(p, stored(spec, "serve_ttft_p99_s"), k) == r.ttft_s.p99);
    CHECK(out.results.stored(p, stored(spec, "serve_max_running_requests"), k) == (p % 2 ? 3 : 1));
    CHECK(out.results.stored(p, stored(spec, "serve_duration_s"), k) == r.duration_s());
  }
  // The requests axis changes the row: a batch of 3 decodes more tokens per second than one request.
  const std::size_t decode = stored(spec, "serve_decode_tokens_per_s");
  CHECK(out.results.stored(1, decode, k) > out.results.stored(0, decode, k));
  // A derived ratio reads serve columns: HD n=2 over the baseline at the same batch.
  for (std::uint64_t p : {2, 3})
    CHECK(derived_value(spec, out.results, 0, p) ==
          out.results.stored(p, decode, k) / out.results.stored(p - 2, decode, k));
  CHECK(derived_value(spec, out.results, 0, 2) < 1);  // HD decodes n rows per token
}

TEST_CASE("serve points that cannot run are failed rows", "[sweep][serve]") {
  // 10 GB x 1e-5 = 100 kB of cache, about 3,100 tokens of the tiny model's 32 B each.
  Json doc = serve_sweep(Json::parse(R"([{"pointer": "/serve/workload/input_tokens", "name": "input",
                                          "values": [16, 1000, 4000]}])"));
  doc["serve"]["workload"]["requests"] = 4;
  doc["serve"]["engine"]["memory_utilization"] = 1e-5;
  doc["columns"] = {"serve_decode_tokens_per_s"};
  const SweepSpec spec = parse_sweep(doc, ".");
  TempDir dir;
  const SweepOutcome out = run_sweep(spec, dir.str(), quiet());
  CHECK(out.results.state[0] == PointState::done);
  REQUIRE(out.results.errors.size() == 2);
  // Four prompts of 1000 tokens fit only three at a time: the batch would run in waves.
  CHECK(out.results.errors[0].first == 1);
  CHECK(out.results.errors[0].second.rfind("/serve/workload/requests: the static batch of 4 requests does not fit the "
                                           "KV cache at once (at most 3 ran together in ", 0) == 0);
  // One request of 4000 tokens never fits: simulate_serving's own error.
  CHECK(out.results.errors[1].first == 2);
  CHECK(out.results.errors[1].second.find("a request of 4000 input and 4 output tokens needs ") != std::string::npos);
}

TEST_CASE("a serve trace is read at load, relative to the sweep file", "[sweep][serve]") {
  TempDir dir;
  fs::create_directories(dir.path / "traces");
  const std::string trace = "arrival_s,input_tokens,output_tokens\n0,16,4\n0.001,32,2\n";
  hdlab::model::write_file_atomic((dir.path / "traces/a.csv").string(), trace);
  Json doc = with(base_sweep(), {{"serve", {{"workload", {{"arrivals", "trace"}, {"trace", "traces/a.csv"}}}}},
                                 {"columns", {"serve_requests_per_s", "serve_e2e_p50_s"}}});
  hdlab::model::write_file_atomic((dir.path / "sweep.json").string(), doc.dump());
  const SweepSpec spec = load_sweep((dir.path / "sweep.json").string());
  REQUIRE(spec.serve_traces.size() == 1);
  CHECK(spec.serve_traces[0].text == trace);
  hdlab::model::write_file_atomic((dir.path / "traces/a.csv").string(), trace + "0.002,8,8\n");
  // The sweep holds what it read; a changed trace is another sweep (a resume would refuse it).
  const SweepSpec changed = load_sweep((dir.path / "sweep.json").string());
  CHECK(changed.identity != spec.identity);
  const SweepOutcome out = run_sweep(spec, (dir.path / "out").string(), quiet());
  REQUIRE(out.summary.failed == 0);
  const ServeResult r = simulate_serving(fixtures::config(fixtures::tiny_dense(), "{}"),
                                         parse_hardware_profile(fixtures::device_json()),
                                         parse_scenario(base_sweep()["scenario"]), parse_serve_spec(doc["serve"]), {},
                                         trace, "a.csv");
  CHECK(r.requests == 2);
  CHECK(out.results.stored(0, 0, 2) == r.requests_per_s);
  CHECK(out.results.stored(0, 1, 2) == r.e2e_s.p50);
  // Every trace an axis names is read at load too: a missing one is named at its value.
  const Json two = with(doc, {{"axes", Json::parse(R"([{"pointer": "/serve/workload/trace",
                                                        "values": ["traces/a.csv", "traces/b.csv"]}])")}});
  CHECK_THROWS_WITH(parse_sweep(two, dir.str()), "/axes/0/values/1: " + (dir.path / "traces/b.csv").string() +
                                                     ": cannot open file: No such file or directory");
}

TEST_CASE("bad serve axes are named at load", "[sweep][serve][errors]") {
  const Json none = Json::array();
  CHECK(error_of(serve_sweep(Json::parse(R"([{"pointer": "/serve/workload/requestz", "values": [1]}])"))) ==
        "/axes/0/pointer: /serve/workload/requestz does not exist in the base document and is not a field there "
        "(/serve/workload/requestz: unknown key (did you mean \"requests\"?))");
  CHECK(error_of(serve_sweep(Json::parse(R"([{"pointer": "/serve/workload/requests", "values": [1, "8"]}])"))) ==
        "/axes/0/values/1: must be a number like /serve/workload/requests in the base document, got string");
  CHECK(error_of(serve_sweep(Json::parse(R"([{"pointer": "/serve/engine/batching", "values": ["static", "dynamic"]}])"))) ==
        "/axes/0/values/1: /serve/engine/batching: must be one of continuous, static, got \"dynamic\"");
  CHECK(error_of(serve_sweep(Json::parse(R"([{"pointer": "/serve/engine/chunked_prefill", "values": [true, 1]}])"))) ==
        "/axes/0/values/1: /serve/engine/chunked_prefill: must be true or false, got integer 1");
  CHECK(error_of(serve_sweep(Json::parse(R"([{"pointer": "/serve", "values": [{"workload": {"request": 2}}]}])"))) ==
        "/axes/0/values/0: /serve/workload/request: unknown key (did you mean \"requests\"?)");
  CHECK(error_of(with(base_sweep(), {{"axes", Json::parse(R"([{"pointer": "/serve/workload/requests", "values": [1]}])")}})) ==
        "/axes/0/pointer: /serve/workload/requests does not exist in the base document (its parts: /backbone, /design, "
        "/hardware, /scenario)");
  CHECK(error_of(with(base_sweep(), {{"serve", 3}})) == "/serve: must be an object, got integer");
  CHECK(error_of(with(serve_sweep(none), {{"columns", {"serve_decode_tokens_per_sec"}}})) ==
        "/columns/0: unknown column \"serve_decode_tokens_per_sec\" (did you mean \"serve_decode_tokens_per_s\"?)");
  CHECK(error_of(with(serve_sweep(none), {{"table", Json::parse(R"({"columns": [{"column": "serve_requests_per_s",
                                                                                  "unit": "ms"}]})")}})) ==
        "/table/columns/0/unit: \"ms\" does not apply to serve_requests_per_s (requests/s)");
}

TEST_CASE("the shipped WeLM-80B serving sweep runs its batch x input matrix", "[sweep][serve][profiles]") {
  const SweepSpec spec = load_sweep(fixtures::source_path("profiles/sweeps/welm80b-hd-serving-h20.json"));
  REQUIRE(spec.axes.size() == 3);
  CHECK(spec.axes[0].labels == std::vector<std::string>{"baseline", "HD n=4"});
  CHECK(spec.axes[1].labels == std::vector<std::string>{"1", "8", "32", "64"});
  CHECK(spec.point_count == 24);
  TempDir dir;
  const SweepOutcome out = run_sweep(spec, dir.str(), quiet());
  const std::size_t decode = stored(spec, "serve_decode_tokens_per_s"), k = spec.stored_columns.size();
  for (std::uint64_t p = 0; p < 12; ++p) {  // the baseline's points: every batch fits
    REQUIRE(out.results.state[p] == PointState::done);
    const double ratio = derived_value(spec, out.results, 0, p + 12);
    if (out.results.state[p + 12] == PointState::done) {
      CHECK(ratio > 0);
      CHECK(ratio < 1);  // HD n=4 decodes 4 rows per token and reads 4x the KV cache
    } else {
      CHECK(std::isnan(ratio));
    }
  }
  CHECK(out.results.stored(0, decode, k) > 0);
  const std::string table = format_table(spec, out.results, 100);
  CHECK(table.rfind("| batch | input | HD n=4 / baseline decode | baseline decode tok/s | HD n=4 decode tok/s |", 0) == 0);
  CHECK(std::count(table.begin(), table.end(), '\n') == 14);  // header, rule, 4 batches x 3 inputs
}

TEST_CASE("a part key space too large to memoize is parsed per point", "[sweep]") {
  // More hardware values than the hardware memo holds (4096): the one-entry cache path.
  Json values = Json::array();
  for (int i = 0; i < 4100; ++i) values.push_back(i);
  const Json doc = with(base_sweep(), {{"axes", {{{"pointer", "/hardware/kernel_launch_overhead_us"}, {"values", values}}}},
                                       {"columns", {"decode_step_s"}}});
  const SweepSpec spec = parse_sweep(doc, ".");
  TempDir dir;
  const SweepOutcome out = run_sweep(spec, dir.str(), quiet());
  REQUIRE(out.summary.evaluated == 4100);
  const Metrics m = evaluate(fixtures::config(fixtures::tiny_dense(), "{}"),
                             parse_hardware_profile(fixtures::device_json(4099)), parse_scenario(base_sweep()["scenario"]));
  CHECK(out.results.stored(4099, 0, 1) == m[Metric::decode_step_s]);
  CHECK(out.results.stored(4099, 0, 1) > out.results.stored(0, 0, 1));
}

TEST_CASE("bad sweep axes name their place in the sweep file", "[sweep][errors]") {
  auto axes = [](const char* json) { return with(base_sweep(), {{"axes", Json::parse(json)}}); };
  CHECK(error_of(axes(R"([{"pointer": "/design/hd/n", "values": [2]}, {"pointer": "/design/hd/nn", "values": [1]}])")) ==
        "/axes/1/pointer: /design/hd/nn does not exist in the base document and is not a field there "
        "(/design/hd/nn: unknown key (did you mean \"n\"?))");
  CHECK(error_of(axes(R"([{"pointer": "/scenario/decodee/batch", "values": [1]}])")) ==
        "/axes/0/pointer: /scenario/decodee/batch does not exist in the base document and is not a field there "
        "(/scenario/decodee: unknown key (did you mean \"decode\"?))");
  CHECK(error_of(axes(R"([{"pointer": "/foo", "values": [1]}])")) ==
        "/axes/0/pointer: /foo is outside the base document: pointers start with /model, /backbone, /design, "
        "/hardware, /scenario, /pipeline or /serve");
  CHECK(error_of(axes(R"([{"pointer": "design", "values": [1]}])")) ==
        "/axes/0/pointer: \"design\" is not a JSON pointer: it must start with \"/\"");
  CHECK(error_of(axes(R"([{"pointer": "/backbone/num_layers/x", "values": [1]}])")) ==
        "/axes/0/pointer: /backbone/num_layers/x does not exist in the base document, and /backbone/num_layers is a "
        "number, which cannot hold it");
  CHECK(error_of(axes(R"([{"pointer": "/scenario/decode/batch", "values": []}])")) ==
        "/axes/0/values: is empty: an axis needs at least one value");
  CHECK(error_of(axes(R"([{"pointer": "/scenario/decode/batch", "values": 4}])")) ==
        "/axes/0/values: must be a list of values, got integer");
  CHECK(error_of(axes(R"([{"pointer": "/scenario/decode/batch", "values": [1, "16"]}])")) ==
        "/axes/0/values/1: must be a number like /scenario/decode/batch in the base document, got string");
  CHECK(error_of(axes(R"([{"pointer": "/scenario/train/recompute", "values": ["full", "selectiv"]}])")) ==
        "/axes/0/values/1: /scenario/train/recompute: must be one of none, selective, full, got \"selectiv\"");
  CHECK(error_of(axes(R"([{"pointer": "/design", "values": [{"hd": {"n": 2, "windw": 3}}]}])")) ==
        "/axes/0/values/0: /design/hd/windw: unknown key (did you mean \"window\"?)");
  CHECK(error_of(axes(R"([{"pointer": "/design", "values": [1, 2]}])")) ==
        "/axes/0/values/0: must be a design object or a shorthand such as \"hd:n=4\", got integer");
  CHECK(error_of(axes(R"([{"pointer": "/scenario/decode/batch", "values": [1, 1]}])")) ==
        "/axes/0/values/1: \"1\" repeats /axes/0/values/0: each value needs its own label (give \"labels\")");
  CHECK(error_of(axes(R"([{"pointer": "/scenario/decode/batch", "values": [1, 2], "labels": ["one"]}])")) ==
        "/axes/0/labels: must be a list of 2 strings, one per value");
  CHECK(error_of(axes(R"([{"pointer": "/scenario/decode/batch", "values": [1]},
                          {"pointer": "/scenario/decode/batch", "values": [2]}])")) ==
        "/axes/1/pointer: /scenario/decode/batch is already swept by /axes/0");
  CHECK(error_of(axes(R"([{"pointer": "/design/hd/n", "values": [2]}, {"pointer": "/design", "values": ["baseline"]}])")) ==
        "/axes/1/pointer: /design encloses /design/hd/n swept by the earlier /axes/0 and would overwrite it: list the "
        "enclosing axis first");
  CHECK(error_of(axes(R"([{"pointer": "/design", "values": ["baseline"]}, {"pointer": "/design/hd/n", "values": [2]}])")) ==
        "/axes/1/pointer: /design/hd/n does not exist in any value of /axes/0 (design), which sets /design");
  CHECK(error_of(axes(R"([{"pointer": "/scenario/decode/batch", "values": [1]},
                          {"pointer": "/scenario/prefill/batch", "values": [1], "name": "decode_batch"}])")) ==
        "/axes/1/name: \"decode_batch\" is already the name of /axes/0 (give \"name\")");
  CHECK(error_of(axes(R"([{"pointer": "/design/hd/n", "value": [2]}])")) ==
        "/axes/0/value: unknown key (did you mean \"values\"?)");
}

TEST_CASE("bad sweep exclusions, columns, derived columns, tables and base documents name their place",
          "[sweep][errors]") {
  const Json one_axis = with(
      base_sweep(), {{"axes", Json::parse(R"([{"pointer": "/scenario/decode/batch", "name": "batch", "values": [1, 2]}])")}});
  CHECK(error_of(with(one_axis, {{"exclude", Json::parse(R"([{"bach": 1}])")}})) ==
        "/exclude/0/bach: no axis is named \"bach\" (did you mean \"batch\"?); axes: batch");
  CHECK(error_of(with(one_axis, {{"exclude", Json::parse(R"([{"batch": 3}])")}})) ==
        "/exclude/0/batch: 3 is not a value of axis batch; its values: 1, 2");
  CHECK(error_of(with(one_axis, {{"exclude", Json::parse(R"([{}])")}})) ==
        "/exclude/0: must be an object naming axes and their values, e.g. {\"design\": \"baseline\"}, got an empty "
        "object");
  CHECK(error_of(with(one_axis, {{"exclude", Json::parse(R"([{"batch": []}])")}})) ==
        "/exclude/0/batch: is an empty list: it would match nothing");
  CHECK(error_of(with(one_axis, {{"columns", {"decode_tokens_per_sec"}}})) ==
        "/columns/0: unknown column \"decode_tokens_per_sec\" (did you mean \"decode_tokens_per_s\"?)");
  CHECK(error_of(with(one_axis, {{"columns", {"serving_b8_in32_ratio"}}})) ==
        "/columns/0: \"serving_b8_in32_ratio\" is not a cell of this sweep's serving matrix (scenario/serving) (did "
        "you mean \"serving_b1_in32_ratio\"?)");
  CHECK(error_of(with(one_axis, {{"columns", {"kv_bytes", "kv_bytes"}}})) ==
        "/columns/1: \"kv_bytes\" is already listed at /columns/0");
  CHECK(error_of(with(one_axis, {{"derived", Json::parse(R"([{"name": "r", "column": "kv_bytes", "baseline": {"batch": 5}}])")}})) ==
        "/derived/0/baseline/batch: 5 is not a value of axis batch; its values: 1, 2");
  CHECK(error_of(with(one_axis, {{"derived", Json::parse(R"([{"name": "batch", "column": "kv_bytes", "baseline": {"batch": 1}}])")}})) ==
        "/derived/0/name: \"batch\" is already the name of an axis");
  CHECK(error_of(with(one_axis, {{"table", Json::parse(R"({"columns": [{"column": "prefill_flops", "unit": "ms"}]})")}})) ==
        "/table/columns/0/unit: \"ms\" does not apply to prefill_flops (FLOP); use FLOP, GFLOP, TFLOP, PFLOP");
  CHECK(error_of(with(one_axis, {{"table", Json::parse(R"({"columns": [{"column": "kv_bites"}]})")}})) ==
        "/table/columns/0/column: \"kv_bites\" is not an output or derived column of this sweep (did you mean "
        "\"kv_bytes\"?)");

  Json both = base_sweep();
  both["model"] = "no.json";
  CHECK(error_of(both) == "/backbone: give \"model\" or \"backbone\", not both");
  Json no_hw = base_sweep();
  no_hw.erase("hardware");
  CHECK(error_of(no_hw) == "/hardware: is required");
  Json missing_file = base_sweep();
  missing_file["hardware"] = "no/such/profile.json";
  CHECK(error_of(missing_file) == "/hardware: no/such/profile.json: cannot open file: No such file or directory");
  CHECK(error_of(with(base_sweep(), {{"axis", Json::array()}})) == "/axis: unknown key (did you mean \"axes\"?)");
}
