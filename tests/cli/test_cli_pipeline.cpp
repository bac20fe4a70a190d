// `hdlab pipeline` as a user runs it: every bad input exits with 2 and names its flag;
// --json carries the whole timeline; HD keeps the one-pass bubble while a loop's passes
// are every one a task.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cli_runner.hpp"

using hdlab::testing::run_cli;
using nlohmann::json;

namespace {

const std::vector<std::string> kQwen = {"pipeline", "profiles/models/qwen3-8b.json", "--hw", "h100-sxm"};

std::vector<std::string> args(std::vector<std::string> extra) {
  std::vector<std::string> a = kQwen;
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

json run_json(std::vector<std::string> extra) {
  extra.push_back("--json");
  const auto r = run_cli(args(extra));
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("hdlab pipeline: bad input exits with 2 and names the flag", "[cli][pipeline]") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--pp", "37", "--microbatches", "8"}, "--pp: pp = 37 stages need at least as many layers; the model has 36"},
      {{"--pp", "4", "--microbatches", "0"}, "--microbatches: must be >= 1"},
      {{"--pp", "4", "--microbatches", "8", "--schedule", "interleaved:5"}, "--schedule: v = 5 does not divide the 36 layers"},
      {{"--pp", "4", "--microbatches", "8", "--schedule", "zero-bubble"}, "--schedule: unknown schedule \"zero-bubble\""},
      {{"--pp", "4", "--microbatches", "8", "--schedule", "gpipe:2"}, "--schedule: only the interleaved schedule"},
      {{"--pp", "4", "--microbatches", "8", "--partition", "9,9,9"}, "--partition: explicit partition has 3 entries"},
      {{"--pp", "4", "--microbatches", "8", "--group", "9"}, "--group: must be in [0, microbatches = 8]"},
  };
  for (const auto& [extra, message] : cases) {
    const auto r = run_cli(args(extra));
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(r.out.empty());
  }
  CHECK(run_cli(args({"--pp", "4"})).exit_code == 2);  // --microbatches is required
}

TEST_CASE("hdlab pipeline --json: the timeline covers every task", "[cli][pipeline]") {
  const json j = run_json({"--pp", "4", "--microbatches", "6", "--schedule", "interleaved:3"});
  const json& p = j["pipeline"];
  const json& timeline = p["timeline"];
  CHECK(p["options"]["schedule"] == "interleaved:3");
  CHECK(p["path"].size() == 12);  // 4 x 3 chunks, one pass each
  REQUIRE(timeline.size() == 2 * 6 * 12);
  double makespan = 0;
  for (const json& t : timeline) {
    CHECK(t["end_s"].get<double>() >= t["start_s"].get<double>());
    CHECK(t["device"].get<int>() < 4);
    makespan = std::max(makespan, t["end_s"].get<double>());
  }
  CHECK(makespan == p["metrics"]["makespan_s"].get<double>());
  // The optimizer step comes after the makespan: each stage's update (dp 1: no reduction).
  const json& m = p["metrics"];
  CHECK(m["update_s"].get<double>() > 0);
  CHECK(m["step_s"].get<double>() == makespan + m["update_s"].get<double>());
  CHECK(m["dp_reduce_s"].get<double>() == 0);
  CHECK(run_json({"--pp", "4", "--microbatches", "6", "--no-timeline"})["pipeline"].count("timeline") == 0);
}

TEST_CASE("hdlab pipeline: HD keeps the one-pass bubble - a loop makes K passes", "[cli][pipeline]") {
  auto metrics = [](const std::string& design) {
    return run_json({"--pp", "4", "--microbatches", "8", "--design", design})["pipeline"]["metrics"];
  };
  const json base = metrics("baseline"), hd = metrics("hd:n=4"), looped = metrics("looped:iterations=4");
  CHECK(base["steps_per_microbatch"] == 4);
  CHECK(hd["steps_per_microbatch"] == 4);
  // Longer sequences scale every stage alike: the bubble share barely moves.
  CHECK(std::abs(hd["bubble_fraction"].get<double>() - base["bubble_fraction"].get<double>()) < 0.01);
  CHECK(hd["makespan_s"].get<double>() > 3 * base["makespan_s"].get<double>());
  // The whole stack looped 4 times over 4 stages: 16 steps, 15 boundaries each way.
  CHECK(looped["steps_per_microbatch"] == 16);
  CHECK(looped["transfers_per_microbatch"] == 30);
}

TEST_CASE("hdlab pipeline: text report with a Gantt chart for small cases", "[cli][pipeline]") {
  const auto r = run_cli(args({"--pp", "2", "--microbatches", "3", "--schedule", "gpipe"}));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("makespan") != std::string::npos);
  CHECK(r.out.find("dev 0 |a") != std::string::npos);  // the first stage starts at once
  CHECK(r.out.find("dev 1 |.") != std::string::npos);  // the second waits for its input
  const auto big = run_cli(args({"--pp", "2", "--microbatches", "64"}));
  REQUIRE(big.exit_code == 0);
  CHECK(big.out.find("no Gantt chart") != std::string::npos);
}

TEST_CASE("hdlab pipeline --schedule zb-h1: weight gradients fill the bubble", "[cli][pipeline][zb-h1]") {
  // Qwen3-8B, 4 stages, 8 micro-batches: the same work as 1F1B in a shorter step, each
  // backward's dW products run as W tasks of their own.
  const json one = run_json({"--pp", "4", "--microbatches", "8", "--no-timeline"})["pipeline"];
  const json zb = run_json({"--pp", "4", "--microbatches", "8", "--schedule", "zb-h1"})["pipeline"];
  CHECK(zb["options"]["schedule"] == "zb-h1");
  const double makespan = zb["metrics"]["makespan_s"].get<double>(), makespan_1f1b = one["metrics"]["makespan_s"].get<double>();
  INFO("zb-h1 " << makespan << " s, 1f1b " << makespan_1f1b << " s");
  CHECK(makespan < makespan_1f1b);
  CHECK(zb["metrics"]["bubble_fraction"].get<double>() < one["metrics"]["bubble_fraction"].get<double>());
  CHECK(zb["metrics"]["ideal_makespan_s"].get<double>() == Approx(one["metrics"]["ideal_makespan_s"].get<double>()));
  CHECK(zb["metrics"]["backward_weight_s_per_microbatch"].get<double>() > 0);
  int weights = 0;
  for (const json& t : zb["timeline"]) weights += t["pass"] == "weight";
  CHECK(weights == 8 * 4);
  CHECK(zb["timeline"].size() == 3 * 8 * 4);

  const auto text = run_cli(args({"--pp", "2", "--microbatches", "3", "--schedule", "zb-h1"}));
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("pipeline: zb-h1") != std::string::npos);
  CHECK(text.out.find("its W: the digit") != std::string::npos);
  const auto refused = run_cli(args({"--pp", "4", "--microbatches", "8", "--schedule", "zb-h1:2"}));
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("--schedule: only the interleaved schedule takes virtual stages") != std::string::npos);
}

TEST_CASE("hdlab pipeline: the precision flags reach the optimizer step", "[cli][pipeline][precision]") {
  // The update streams weights (read and written), gradients and the optimizer state:
  // bf16 weights, gradients and fp32 state are 2 x 2 + 2 + 2 x 12 = 30 bytes a parameter;
  // bf16 state without a master copy 2 x 2 + 2 + 2 x 4 = 14.
  const json fp32_state = run_json({"--pp", "2", "--microbatches", "2"});
  const json bf16_state = run_json({"--pp", "2", "--microbatches", "2", "--optimizer-dtype", "bf16"});
  const double a = fp32_state["pipeline"]["metrics"]["optimizer_s"].get<double>();
  const double b = bf16_state["pipeline"]["metrics"]["optimizer_s"].get<double>();
  CHECK(b < a);
  CHECK(b / a == Approx(14.0 / 30).epsilon(0.01));  // a fixed launch latency on top of the streaming
  const auto bad = run_cli(args({"--pp", "2", "--microbatches", "2", "--comm-dtype", "fp4"}));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("/scenario/precision/communication: must be one of model, bf16, fp16, fp32, fp8") !=
        std::string::npos);
}
