// `hdlab check` and `hdlab params` as a user runs them: exit codes 0 / 2, messages naming
// the field, and parameter counts against a golden file.
#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using hdlab::testing::run_cli;
using hdlab::testing::source_path;
using nlohmann::json;

TEST_CASE("hdlab check prints the normalised config of every bundled model", "[cli]") {
  auto r = run_cli({"check", "profiles/models/qwen3-8b.json", "--json"});
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["backbone"]["num_layers"] == 36);
  CHECK(j["design"].contains("baseline"));

  r = run_cli({"check", "profiles/models/qwen3-8b.json", "-d", "hd:n=4,layers=intra", "--json"});
  REQUIRE(r.exit_code == 0);
  j = json::parse(r.out);
  CHECK(j["design"]["hd"]["n"] == 4);
  CHECK(j["design"]["hd"]["layers"].size() == 36);
}

TEST_CASE("bad input exits with 2 and names the place", "[cli][errors]") {
  auto r = run_cli({"check", "profiles/models/qwen3-8b.json", "-d", "hd:n=0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /design/hd/n: must be >= 1, got 0\n");
  CHECK(r.out.empty());

  r = run_cli({"check", "no/such/model.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: no/such/model.json: cannot open file: No such file or directory\n");

  r = run_cli({"check"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("model is required") != std::string::npos);

  r = run_cli({"frobnicate"});
  CHECK(r.exit_code == 2);

  r = run_cli({"params", "profiles/models/qwen3-8b.json", "-d", "{\"hd\": {\"n\": 2, \"nn\": 3}}"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /design/hd/nn: unknown key (did you mean \"n\"?)\n");
}

TEST_CASE("hdlab params matches the golden counts for Qwen3-8B under HD", "[cli][golden]") {
  auto r = run_cli({"params", "profiles/models/qwen3-8b.json", "-d", "baseline", "-d", "hd:n=2", "-d", "hd:n=4",
                    "-d", "hd:n=8", "--json"});
  REQUIRE(r.exit_code == 0);
  const json got = json::parse(r.out);
  const json golden = json::parse(hdlab::testing::slurp(source_path("tests/cli/golden/params_qwen3_8b_hd.json")));
  // Parameter counts are exact integers: no tolerance.
  CHECK(hdlab::testing::json_diff(got, golden, 0.0) == "");
}
