// `hdlab sweep` as a user runs it: a sweep killed with SIGKILL mid-run and started again
// finishes with the same results as an uninterrupted run and recomputes no finished row;
// each bad sweep file exits with 2 and names its place; a small sweep against a golden
// file (numbers within a relative tolerance).
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <thread>

#include <fcntl.h>

#include "cli_runner.hpp"

using hdlab::testing::json_diff;
using hdlab::testing::run_cli;
using hdlab::testing::slurp;
using hdlab::testing::source_path;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() / ("hdlab_test_cli_sweep_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string at(const std::string& name) const { return (path / name).string(); }
};

// Qwen3-8B on H100 (absolute paths, so the file can live anywhere) and `extra` keys.
std::string write_sweep(const TempDir& dir, const json& extra, const std::string& name = "sweep.json") {
  json doc = {{"model", source_path("profiles/models/qwen3-8b.json")},
              {"hardware", source_path("profiles/hardware/h100-sxm.json")}};
  for (const auto& [k, v] : extra.items()) doc[k] = v;
  std::ofstream(dir.at(name)) << doc.dump(2);
  return dir.at(name);
}

// Starts `hdlab args...` in the background, output discarded.
pid_t spawn_cli(const std::vector<std::string>& args) {
  std::vector<std::string> full = {std::string(HDLAB_BINARY_DIR) + "/cli/hdlab"};
  full.insert(full.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    std::vector<char*> argv;
    for (auto& a : full) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

std::size_t complete_lines(const std::string& path) {
  const std::string text = slurp(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("hdlab sweep killed mid-run resumes without losing or recomputing a finished row", "[cli][sweep][resume]") {
  TempDir dir;
  json batches = json::array();
  for (int b = 1; b <= 50; ++b) batches.push_back(b);
  const std::string sweep = write_sweep(
      dir, {{"axes",
             {{{"pointer", "/design"}, {"values", {"baseline", "hd:n=2", "phd:K=2", "vwn:m=2,n=3"}}},
              {{"pointer", "/scenario/decode/batch"}, {"values", batches}}}},
            {"columns", {"decode_step_s", "decode_tokens_per_s", "kv_bytes", "prefill_s"}},
            {"derived", {{{"name", "decode_ratio"}, {"column", "decode_tokens_per_s"}, {"baseline", {{"design", "baseline"}}}}}}});
  constexpr std::size_t points = 200;

  // 20 ms per point on 2 threads: 2 s in all; the kill comes after the first journal
  // flushes (about 0.1 s), far from the end even on a loaded machine.
  const std::string out = dir.at("out");
  const pid_t pid = spawn_cli({"sweep", sweep, "-o", out, "--threads", "2", "--test-point-delay-us", "20000"});
  REQUIRE(pid > 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (complete_lines(out + "/journal.tsv") < 20 && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, WNOHANG) == 0);  // still running
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  const std::size_t finished = complete_lines(out + "/journal.tsv");
  REQUIRE(finished >= 20);
  REQUIRE(finished < points);  // killed mid-sweep
  CHECK_FALSE(fs::exists(out + "/results.csv"));

  auto r = run_cli({"sweep", sweep, "-o", out, "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());  // no progress bar when stderr is not a terminal
  const json summary = json::parse(r.out);
  CHECK(summary["resumed"] == finished);
  CHECK(summary["evaluated"] == points - finished);
  CHECK(summary["dropped_journal_lines"].get<int>() <= 1);  // at most the line the kill cut
  CHECK(complete_lines(out + "/journal.tsv") == points);  // no row evaluated twice

  const std::string whole = dir.at("whole");
  r = run_cli({"sweep", sweep, "-o", whole, "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(out + "/results.csv") == slurp(whole + "/results.csv"));
  CHECK(slurp(out + "/results.json") == slurp(whole + "/results.json"));
}

TEST_CASE("hdlab sweep refuses a folder holding another sweep unless --fresh", "[cli][sweep]") {
  TempDir dir;
  const std::string a = write_sweep(dir, {{"axes", {{{"pointer", "/design"}, {"values", {"baseline"}}}}}}, "a.json");
  const std::string b = write_sweep(dir, {{"axes", {{{"pointer", "/design"}, {"values", {"hd:n=2"}}}}}}, "b.json");
  const std::string out = dir.at("out");
  REQUIRE(run_cli({"sweep", a, "-o", out}).exit_code == 0);
  auto r = run_cli({"sweep", b, "-o", out});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: " + out +
                     ": holds the journal of another sweep (\"a\": a different base document, axes or columns), whose "
                     "rows would not match this one; start fresh (--fresh) to discard it, or choose another output "
                     "folder\n");
  r = run_cli({"sweep", b, "-o", out, "--fresh"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("| hd:n=2 |") != std::string::npos);
}

TEST_CASE("bad sweep files exit with 2 and name the place", "[cli][sweep][errors]") {
  TempDir dir;
  struct Case {
    json extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{"axes", {{{"pointer", "/design/hd/n"}, {"values", {2}}}, {{"pointer", "/design/hd/nn"}, {"values", {1}}}}}},
       "/axes/1/pointer: /design/hd/nn does not exist in the base document and is not a field there (/design/hd/nn: "
       "unknown key (did you mean \"n\"?))"},
      {{{"axes", {{{"pointer", "/design/hd/n"}, {"values", json::array()}}}}},
       "/axes/0/values: is empty: an axis needs at least one value"},
      {{{"axes", {{{"pointer", "/scenario/decode/batch"}, {"values", {1, "16"}}}}}},
       "/axes/0/values/1: /scenario/decode/batch: must be an integer, got string \"16\""},
      {{{"axes", {{{"pointer", "/scenario/decode/batch"}, {"values", {1, 16}}}}}, {"exclude", {{{"decode_batc", 16}}}}},
       "/exclude/0/decode_batc: no axis is named \"decode_batc\" (did you mean \"decode_batch\"?); axes: decode_batch"},
      {{{"axes", {{{"pointer", "/scenario/decode/batch"}, {"values", {1, 16}}}}}, {"columns", {"prefill_ms"}}},
       "/columns/0: unknown column \"prefill_ms\" (did you mean \"prefill_s\"?)"},
  };
  for (const Case& c : cases) {
    const std::string sweep = write_sweep(dir, c.extra);
    const auto r = run_cli({"sweep", sweep, "-o", dir.at("out")});
    CHECK(r.exit_code == 2);
    CHECK(r.err == "hdlab: error: " + c.message + "\n");
    CHECK(r.out.empty());
  }
  auto r = run_cli({"sweep", "no/such/sweep.json", "-o", dir.at("out")});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: no/such/sweep.json: cannot open file: No such file or directory\n");
  std::ofstream(dir.at("broken.json")) << "{\"axes\": [";
  r = run_cli({"sweep", dir.at("broken.json"), "-o", dir.at("out")});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("hdlab: error: " + dir.at("broken.json")) == 0);
  r = run_cli({"sweep", dir.at("broken.json")});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--output is required") != std::string::npos);
  // A sweep in which every point fails is almost surely a bad base document: exit 2.
  const std::string all_fail = write_sweep(dir, {{"design", "vwn:m=3,n=6"}}, "fail.json");
  r = run_cli({"sweep", all_fail, "-o", dir.at("fail")});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: every point of the sweep failed; the first: point 0 (the base document): "
                 "/design/vwn/m: hidden size 4096 is not divisible by m = 3\n");
}

TEST_CASE("a small sweep matches its golden results", "[cli][sweep][golden]") {
  // Regenerate after a deliberate cost-model change:
  //   build/cli/hdlab sweep tests/cli/golden/sweep_small.sweep.json -o /tmp/s --fresh &&
  //   cp /tmp/s/results.json tests/cli/golden/sweep_small.results.json
  TempDir dir;
  const auto r = run_cli({"sweep", "tests/cli/golden/sweep_small.sweep.json", "-o", dir.at("out")});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("| baseline     |") != std::string::npos);
  const json got = json::parse(slurp(dir.at("out/results.json")));
  const json golden = json::parse(slurp(source_path("tests/cli/golden/sweep_small.results.json")));
  // Counts (parameters, FLOPs, bytes) are integers computed in doubles: relative 1e-12.
  CHECK(json_diff(got, golden, 1e-12) == "");
  // Hand checks: Qwen3-8B keeps 36 layers x (K, V) x 8 heads x 128 x 2 bytes = 147,456
  // bytes per token; HD n=2 keeps both streams.
  const json& rows = got["rows"];
  REQUIRE(rows.size() == 7);  // 4 designs x 2 contexts, VWN at 4096 excluded
  CHECK(rows[1]["kv_bytes_per_seq"] == 147456.0 * 32768);
  CHECK(rows[3]["kv_bytes_per_seq"] == 2 * 147456.0 * 32768);
  CHECK(rows[3]["kv_ratio"] == 2.0);
  // Exact attention FLOPs of a 4096-token causal prefill: 4 x hd x H x L(L+1)/2 x layers.
  CHECK(rows[0]["prefill_attention_flops_exact"] == 4.0 * 128 * 32 * (4096.0 * 4097 / 2) * 36);
}

TEST_CASE("hdlab sweep runs the shipped WeLM-80B serving sweep", "[cli][sweep][serve]") {
  TempDir dir;
  const auto r = run_cli({"sweep", "profiles/sweeps/welm80b-hd-serving-h20.json", "-o", dir.at("out")});
  REQUIRE(r.exit_code == 0);
  // The table: a row per batch x input, the ratio first.
  CHECK(r.out.find("| batch | input | HD n=4 / baseline decode | baseline decode tok/s | HD n=4 decode tok/s |") !=
        std::string::npos);
  CHECK(r.out.find("| 64    | 16384 |") != std::string::npos);
  const json rows = json::parse(slurp(dir.at("out/results.json")))["rows"];
  REQUIRE(rows.size() == 24);
  for (const json& row : rows) {
    if (row["design"] == "baseline") {
      CHECK_FALSE(row.contains("error"));  // every baseline batch fits
      CHECK(row["decode_ratio"] == 1.0);
    } else if (row.contains("error")) {  // only a batch HD n=4's 4x KV cannot hold whole fails, and says so
      CHECK(row["error"].get<std::string>().find("does not fit the KV cache at once") != std::string::npos);
    } else {
      CHECK(row["decode_ratio"].get<double>() < 1);
      CHECK(row["serve_max_running_requests"] == std::stod(row["batch"].get<std::string>()));
    }
  }
}

TEST_CASE("hdlab sweep refuses a folder of the user's own files unless --force", "[cli][sweep][bad-input]") {
  TempDir dir;
  const std::string sweep = write_sweep(dir, {{"axes", {{{"pointer", "/design"}, {"values", {"baseline", "hd:n=2"}}}}}});
  const std::string mine = dir.at("mine");
  fs::create_directories(mine);
  std::ofstream(mine + "/results.csv") << "my own results\n";
  std::ofstream(mine + "/notes.txt") << "notes\n";
  auto r = run_cli({"sweep", sweep, "-o", mine});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: " + mine +
                     ": is not empty and holds no sweep (no manifest.json): the sweep's files would be written among its "
                     "own (notes.txt, results.csv); choose a new or empty folder, or --force to write there anyway\n");
  CHECK(slurp(mine + "/results.csv") == "my own results\n");
  // --fresh removes only a sweep's files, and only in a sweep's folder.
  r = run_cli({"sweep", sweep, "-o", mine, "--fresh"});
  CHECK(r.exit_code == 2);
  CHECK(slurp(mine + "/results.csv") == "my own results\n");
  // "/" is no sweep's folder.
  r = run_cli({"sweep", sweep, "-o", "/"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("hdlab: error: /: is not empty and holds no sweep (no manifest.json)", 0) == 0);
  CHECK_FALSE(fs::exists("/manifest.json"));
  // Forced, the sweep writes its files there and leaves the others alone.
  r = run_cli({"sweep", sweep, "-o", mine, "--force"});
  CHECK(r.exit_code == 0);
  CHECK(slurp(mine + "/results.csv").rfind("point,design,", 0) == 0);
  CHECK(slurp(mine + "/notes.txt") == "notes\n");
  // Now it is a sweep's folder: resumed without --force.
  r = run_cli({"sweep", sweep, "-o", mine, "--json"});
  CHECK(r.exit_code == 0);
  CHECK(json::parse(r.out)["resumed"] == 2);
}

TEST_CASE("two sweeps cannot write one folder at once: the second names the first sweep pid", "[cli][sweep][bad-input]") {
  TempDir dir;
  json batches = json::array();
  for (int b = 1; b <= 100; ++b) batches.push_back(b);
  const std::string sweep = write_sweep(dir, {{"axes", {{{"pointer", "/scenario/decode/batch"}, {"values", batches}}}},
                                              {"columns", {"decode_step_s"}}});
  const std::string out = dir.at("out");
  // The first runs for about 2 s (20 ms a point on one thread).
  const pid_t first = spawn_cli({"sweep", sweep, "-o", out, "--threads", "1", "--test-point-delay-us", "20000"});
  REQUIRE(first > 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (complete_lines(out + "/journal.tsv") < 5 && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    REQUIRE(::waitpid(first, &status, WNOHANG) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  REQUIRE(complete_lines(out + "/journal.tsv") >= 5);
  const auto second = run_cli({"sweep", sweep, "-o", out});
  int status = 0;
  const bool first_still_running = ::waitpid(first, &status, WNOHANG) == 0;
  ::waitpid(first, &status, 0);
  REQUIRE(first_still_running);  // the second really ran while the first held the folder
  CHECK(second.exit_code == 2);
  CHECK(second.err == "hdlab: error: " + out + ": is in use by another hdlab sweep (pid " + std::to_string(first) +
                          "), which holds its lock (.hdlab-sweep.lock); two sweeps in one folder would write every row "
                          "twice: wait for it to finish, or choose another folder\n");
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(complete_lines(out + "/journal.tsv") == 100);  // every row once
  CHECK(complete_lines(out + "/results.csv") == 101);
  // The lock went with the process: the next sweep resumes.
  const auto again = run_cli({"sweep", sweep, "-o", out, "--json"});
  CHECK(again.exit_code == 0);
  CHECK(json::parse(again.out)["resumed"] == 100);
}

TEST_CASE("temporaries of a killed sweep writer are removed by the next run", "[cli][sweep][bad-input]") {
  TempDir dir;
  const std::string sweep = write_sweep(dir, {{"axes", {{{"pointer", "/design"}, {"values", {"baseline", "hd:n=2"}}}}}});
  const std::string out = dir.at("out");
  REQUIRE(run_cli({"sweep", sweep, "-o", out}).exit_code == 0);
  // A writer killed between writing its temporaries and renaming them: a process that
  // creates them under its own pid and dies by SIGKILL.
  const pid_t writer = ::fork();
  if (writer == 0) {
    for (const char* f : {"results.csv", "results.json", "table.txt", "summary.json"})
      std::ofstream(out + "/." + f + ".tmp." + std::to_string(::getpid())) << "half a file";
    ::pause();
  }
  REQUIRE(writer > 0);
  const std::string csv_temp = out + "/.results.csv.tmp." + std::to_string(writer);
  const std::string summary_temp = out + "/.summary.json.tmp." + std::to_string(writer);
  for (int i = 0; i < 2000 && !fs::exists(summary_temp); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(writer, SIGKILL);
  int status = 0;
  ::waitpid(writer, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(fs::exists(csv_temp));
  // The next run writes only results.json, yet every stale temporary goes.
  const auto r = run_cli({"sweep", sweep, "-o", out, "--format", "json"});
  CHECK(r.exit_code == 0);
  for (const auto& e : fs::directory_iterator(out)) CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("an axis error is reported at the axis that causes it", "[cli][sweep][bad-input]") {
  TempDir dir;
  // /axes/2 creates /design/hd/nn inside the designs of /axes/0: the error is /axes/2's
  // pointer, not /axes/0's value in which it shows.
  const std::string sweep =
      write_sweep(dir, {{"axes",
                         {{{"pointer", "/design"}, {"values", {"baseline", "hd:n=2"}}},
                          {{"pointer", "/scenario/decode/batch"}, {"values", {1}}},
                          {{"pointer", "/design/hd/nn"}, {"values", {1}}}}}});
  const auto r = run_cli({"sweep", sweep, "-o", dir.at("out")});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /axes/2/pointer: /design/hd/nn does not exist in the base document and is not a field "
                 "there (/design/hd/nn: unknown key (did you mean \"n\"?))\n");
  // An unknown key inside a whole design value is that value's error.
  const std::string value_error =
      write_sweep(dir, {{"axes", {{{"pointer", "/design"}, {"values", {"baseline", json{{"hd", {{"n", 2}, {"nn", 1}}}}}}},
                                  {{"pointer", "/design/hd/n"}, {"values", {2, 4}}}}}}, "value.json");
  const auto v = run_cli({"sweep", value_error, "-o", dir.at("out")});
  CHECK(v.exit_code == 2);
  CHECK(v.err == "hdlab: error: /axes/0/values/1: /design/hd/nn: unknown key (did you mean \"n\"?)\n");
}
