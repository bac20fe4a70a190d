// `hdlab validate --published` as a user runs it: the bundled set end to end, the check
// flags' exit 3, and bad files and flags exit 2 naming the place.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "../cli/cli_runner.hpp"

using namespace hdlab::testing;
namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("hdlab_published_cli_" + name + "_" + std::to_string(::getpid()))).string();
}

}  // namespace

TEST_CASE("hdlab validate --published: the bundled set, its report files and per-source statistics", "[published][cli]") {
  const std::string out = temp_path("out");
  fs::remove_all(out);
  const CliResult r = run_cli({"validate", "--published", source_path("profiles/validation/published"), "-o", out});
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("trtllm-llama2            h100-7b-b768-tp1-in128-out128") != std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(slurp(out + "/published.json"));
  // One report per source file, in name order, each with all its cases.
  const std::vector<std::pair<std::string, std::size_t>> expected = {
      {"flashattention2-table1", 8}, {"llama3-405b-pretraining", 3}, {"megatron-gpt-table5", 8},
      {"megatron-ptdp-table1", 10},  {"trtllm-llama2", 23}};
  REQUIRE(j["sources"].size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(j["sources"][i]["id"] == expected[i].first);
    CHECK(j["sources"][i]["cases"].size() == expected[i].second);
  }
  const nlohmann::json& trt = j["sources"][4];
  REQUIRE(trt["metrics"].size() == 2);
  for (const auto& m : trt["metrics"]) {
    CHECK(m["median_abs_error"].get<double>() >= 0);
    CHECK(m["max_abs_error"].get<double>() >= m["median_abs_error"].get<double>());
    CHECK(m["spearman_value"].is_number());
    CHECK(m["spearman_mfu"].is_number());
  }
  // Every case carries its setup, the profile it was predicted with, and its error.
  for (const auto& c : trt["cases"]) {
    const double e = c["predicted"].get<double>() / c["published"].get<double>() - 1;
    CHECK(c["error"].get<double>() == Approx(e));
    CHECK(c["profile"].get<std::string>().size() > 0);
  }
  // Training cases carry hdlab's memory need; the table flags each one above its device's
  // memory, with the need in whole GB, and no other.
  for (const auto& src : j["sources"])
    for (const auto& c : src["cases"]) {
      if (!c.contains("train_memory_gb") || c["train_memory_gb"].get<double>() == 0) continue;
      const double need = c["train_memory_gb"].get<double>(), have = c["device_memory_gb"].get<double>();
      CHECK(have == 80);
      const std::string flag = " [needs " + std::to_string(std::lround(need)) + " of 80 GB]";
      const std::size_t row = r.out.find(" " + c["id"].get<std::string>() + " ");
      REQUIRE(row != std::string::npos);
      const std::string line = r.out.substr(row, r.out.find('\n', row) - row);
      CAPTURE(line);
      CHECK((line.find(flag) != std::string::npos) == (need > have));
    }
  const std::string csv = slurp(out + "/published.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 53);  // header + 52 rows
#ifdef HDLAB_TEST_HAVE_CHARTS
  CHECK(fs::file_size(out + "/trtllm-llama2.png") > 10000);
  CHECK(fs::file_size(out + "/llama3-405b-pretraining.png") > 10000);
  CHECK(fs::file_size(out + "/megatron-gpt-table5.png") > 10000);
#endif
  // The datasheet profiles for comparison: same cases, other predictions.
  const std::string out2 = temp_path("out2");
  const CliResult d = run_cli({"validate", "--published", source_path("profiles/validation/published/trtllm-llama2.json"),
                               "--hw-dir", source_path("profiles/hardware/datasheet"), "-o", out2});
  REQUIRE(d.exit_code == 0);
  const nlohmann::json k = nlohmann::json::parse(slurp(out2 + "/published.json"));
  CHECK(k["sources"][0]["id"] == "trtllm-llama2");
  CHECK(k["sources"][0]["cases"][0]["predicted"] != trt["cases"][0]["predicted"]);
  fs::remove_all(out);
  fs::remove_all(out2);
}

TEST_CASE("hdlab validate --published: the check flags exit 3 naming what failed", "[published][cli]") {
  const std::string out = temp_path("check");
  const std::string set = source_path("profiles/validation/published/trtllm-llama2.json");
  CliResult r = run_cli({"validate", "--published", set, "-o", out, "--max-signed-error", "0"});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("hdlab: validate FAILED: trtllm-llama2 output_tokens_per_s_per_gpu: signed median error ") !=
        std::string::npos);
  r = run_cli({"validate", "--published", set, "-o", out, "--max-median-error", "0"});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("hdlab: validate FAILED: median |error| ") != std::string::npos);
  r = run_cli({"validate", "--published", set, "-o", out, "--max-median-error", "10", "--max-signed-error", "10"});
  CHECK(r.exit_code == 0);
  fs::remove_all(out);
}

TEST_CASE("hdlab validate --published: bad files and flags exit 2 naming the place", "[published][cli][bad-input]") {
  const std::string dir = temp_path("bad");
  const std::string out = temp_path("bad_out");
  fs::remove_all(dir);
  fs::create_directories(dir);
  nlohmann::json j = nlohmann::json::parse(slurp(source_path("profiles/validation/published/trtllm-llama2.json")));
  for (auto& [name, path] : j["models"].items()) path = source_path("profiles/models/" + name + ".json");
  j["cases"][3]["tp"] = 0;
  std::ofstream(dir + "/bad.json") << j.dump();
  fs::create_directories(dir + "/empty");
  struct Bad {
    const char* what;
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {"tp 0", {"validate", "--published", dir + "/bad.json", "-o", out}, dir + "/bad.json:/cases/3/tp: must be >= 1"},
      {"a folder without sources", {"validate", "--published", dir + "/empty", "-o", out},
       "--published: " + dir + "/empty holds no *.json published-source files"},
      {"no such path", {"validate", "--published", dir + "/nowhere.json", "-o", out}, "--published: Path does not exist"},
      {"with --hw", {"validate", "--published", dir + "/bad.json", "--hw", "h100-sxm", "-o", out}, "excludes"},
      {"with --kerneldb", {"validate", "--published", dir, "--kerneldb", dir, "-o", out}, "excludes"},
      {"--hw-dir alone", {"validate", "profiles/validation/cpu.json", "--hw-dir", dir, "-o", out}, "--hw-dir requires --published"},
      {"no profile in --hw-dir",
       {"validate", "--published", source_path("profiles/validation/published"), "--hw-dir", dir, "-o", out},
       "flashattention2-table1.json:/devices/A100: \"" + dir + "/a100-80gb-sxm.json\": No such file or directory"},
      {"negative share", {"validate", "--published", dir, "--max-signed-error", "-1", "-o", out}, "--max-signed-error"},
      {"no -o", {"validate", "--published", dir + "/bad.json"}, "-o: give the folder"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.what);
    const CliResult r = run_cli(b.args);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(b.message) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(out));  // nothing written on bad input
  fs::remove_all(dir);
}
