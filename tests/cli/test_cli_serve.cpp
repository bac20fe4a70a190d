// `hdlab serve` as a user runs it: bad workloads exit with 2 naming the flag or the
// pointer; --json, --requests-csv and --plots write what they say; a trace is read
// relative to the workload file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "cli_runner.hpp"

using hdlab::testing::run_cli;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> serve(std::vector<std::string> extra) {
  std::vector<std::string> a = {"serve", "profiles/models/qwen3-8b.json", "--hw", "h100-sxm"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("hdlab_serve_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

TEST_CASE("hdlab serve: bad workloads exit with 2 and name the flag or the pointer", "[cli][serve]") {
  const fs::path dir = scratch("bad");
  write(dir / "empty.csv", "arrival_s,input_tokens,output_tokens\n");
  write(dir / "w.json", R"({"workload": {"input_tokens": {"distribution": "zipf"}}})");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--arrivals", "poisson", "--rate", "-1"}, "--rate: "},
      {{"--output-tokens", "0"}, "--output-tokens: "},
      {{"--arrivals", "sometimes"}, "--arrivals: must be one of static, closed, poisson, trace"},
      {{"--arrivals", "trace", "--trace", (dir / "empty.csv").string()}, "empty.csv: has no requests"},
      {{"--workload", (dir / "w.json").string()}, "/workload/input_tokens/distribution: must be one of"},
      {{"--max-running", "0"}, "--max-running: "},
      {{"--input-tokens", "400000", "--output-tokens", "400000"}, "more than the"},
      {{"--requests-csv", (dir / "missing" / "r.csv").string()}, "--requests-csv"},
  };
  for (const auto& [extra, message] : cases) {
    CAPTURE(extra);
    const auto r = run_cli(serve(extra));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
  }
  fs::remove_all(dir);
}

TEST_CASE("hdlab serve: --json and --requests-csv write the run", "[cli][serve]") {
  const fs::path dir = scratch("out");
  const auto r = run_cli(serve({"--arrivals", "closed", "--users", "4", "--requests", "12", "--input-tokens", "512",
                                "--output-tokens", "32", "--json", "--requests-csv", (dir / "requests.csv").string()}));
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);  // stdout is the JSON alone
  CHECK(j["spec"]["workload"]["users"] == 4);
  const json& res = j["result"];
  CHECK(res["requests"] == 12);
  CHECK(res["output_tokens"] == 12 * 32);
  CHECK(res["max_running_requests"] == 4);
  CHECK(res["ttft_s"]["count"] == 12);
  CHECK(res["ttft_s"]["p50"].get<double>() <= res["ttft_s"]["p99"].get<double>());
  // One CSV row per request, in the order they finished, with the header.
  std::ifstream csv(dir / "requests.csv");
  std::string line;
  std::getline(csv, line);
  CHECK(line.rfind("id,arrival_s,input_tokens,output_tokens,", 0) == 0);
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 12);
  fs::remove_all(dir);
}

TEST_CASE("hdlab serve: --plots draws the latency CDFs and the KV cache, where the build has Qt Charts", "[cli][serve]") {
  const fs::path dir = scratch("plots");
  const auto r = run_cli(serve({"--requests", "4", "--input-tokens", "256", "--output-tokens", "8", "--plots",
                                (dir / "plots").string()}));
#ifdef HDLAB_TEST_HAVE_CHARTS
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("wrote " + (dir / "plots").string()));
  CHECK(fs::file_size(dir / "plots" / "latency_cdf.png") > 1000);
  CHECK(fs::file_size(dir / "plots" / "kv_cache.png") > 1000);
#else  // a build without the GUI (the sanitizer build) refuses the flag rather than ignore it
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--plots: this hdlab was built without Qt Charts"));
#endif
  fs::remove_all(dir);
}

TEST_CASE("hdlab serve: a trace named in a workload file is read next to it", "[cli][serve]") {
  const fs::path dir = scratch("trace");
  write(dir / "t.csv", "arrival_s,input_tokens,output_tokens\n0,300,4\n0.25,100,8\n");
  write(dir / "w.json", R"({"workload": {"arrivals": "trace", "trace": "t.csv"}, "engine": {"max_running": 8}})");
  const auto r = run_cli(serve({"--workload", (dir / "w.json").string(), "--json"}));
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["result"]["requests"] == 2);
  CHECK(j["result"]["input_tokens"] == 400);
  CHECK(j["result"]["start_s"] == 0.0);
  // A bad row is named by file, row and column.
  write(dir / "t.csv", "arrival_s,input_tokens,output_tokens\n0,300,4\n0.25,-100,8\n");
  const auto bad = run_cli(serve({"--workload", (dir / "w.json").string()}));
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("t.csv:3: column input_tokens: must be an integer from 1"));
  fs::remove_all(dir);
}
