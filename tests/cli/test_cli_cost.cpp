// `hdlab cost` as a user runs it: the --json report of Qwen3-8B under each kind of design
// on the bundled H100 against golden files (numbers within a relative tolerance), a few
// of its numbers worked out by hand, and bad input exiting with 2 and naming the place.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.hpp"

using hdlab::testing::json_diff;
using hdlab::testing::run_cli;
using hdlab::testing::slurp;
using hdlab::testing::source_path;
using nlohmann::json;

namespace {

constexpr const char* kModel = "profiles/models/qwen3-8b.json";

struct Design {
  const char* name;  // golden file: tests/cli/golden/cost_qwen3_8b_<name>.json
  const char* design;
};
constexpr Design kDesigns[] = {{"baseline", "baseline"},
                               {"hd4", "hd:n=4"},
                               {"phd_cswa_k3", "profiles/designs/phd-cswa-k3.json"},
                               {"vwn_r1.5", "profiles/designs/vwn-r1.5.json"},
                               {"looped_x4", "profiles/designs/looped-x4.json"}};

// Regenerate a golden file after a deliberate change of the cost model, the h100-sxm
// profile or the roofline, from the source tree's root (one line):
//   build/cli/hdlab cost profiles/models/qwen3-8b.json -d DESIGN --hw h100-sxm
//     --kv-contexts 4096,4100,32768 --json > tests/cli/golden/cost_qwen3_8b_NAME.json
std::vector<std::string> cost_args(const char* design) {
  return {"cost", kModel, "-d", design, "--hw", "h100-sxm", "--kv-contexts", "4096,4100,32768", "--json"};
}

json cost_json(const char* design) {
  const auto r = run_cli(cost_args(design));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

double kv_at(const json& report, double context) {
  for (const json& row : report["kv_vs_context"])
    if (row["context_tokens"].get<double>() == context) return row["kv_bytes_per_seq"].get<double>();
  FAIL("no KV row at context " << context);
  return 0;
}

}  // namespace

TEST_CASE("hdlab cost --json matches its golden reports for Qwen3-8B on the H100", "[cli][cost][golden]") {
  for (const Design& d : kDesigns) {
    INFO(d.name);
    const json got = cost_json(d.design);
    const json golden =
        json::parse(slurp(source_path(std::string("tests/cli/golden/cost_qwen3_8b_") + d.name + ".json")));
    // Counts are integers computed in doubles; times go through the roofline's curves.
    CHECK(json_diff(got, golden, 1e-9) == "");
  }
}

TEST_CASE("hdlab cost: numbers worked out by hand", "[cli][cost]") {
  const json base = cost_json("baseline");
  const json& m = base["metrics"];
  // KV per token: K and V x 8 KV heads x 128 x 36 layers x 2 bytes (bf16).
  const double per_token = 2.0 * 8 * 128 * 36 * 2;
  REQUIRE(per_token == 147456);
  CHECK(m["kv_bytes_per_seq"] == per_token * 32768);  // at the default kv.context
  CHECK(kv_at(base, 4096) == per_token * 4096);
  CHECK(m["kv_bytes"] == 32 * per_token * 4096);  // decode batch 32 at context 4096
  // Weights: every parameter once in bf16 on one device; a decode step reads all but the
  // input table (151936 x 4096), of which it gathers one row per sequence of its batch (32).
  CHECK(m["params_total"] == 8190735360.0);
  CHECK(m["inference_weight_bytes"] == 2 * 8190735360.0);
  CHECK(m["decode_weight_bytes"] == 2 * (8190735360.0 - 151936.0 * 4096) + 32 * 4096 * 2);
  // Exact prefill attention of 4096 tokens: 4 hd H per pair x L(L+1)/2 pairs x 36 layers.
  CHECK(m["prefill_attention_flops_exact"] == 4.0 * 128 * 32 * (4096.0 * 4097 / 2) * 36);
  // Executed: whole visible 128 x 128 tiles, 32 x 33 / 2 of them.
  CHECK(m["prefill_attention_flops_executed"] == 4.0 * 128 * 32 * (32 * 33 / 2 * 128.0 * 128) * 36);

  // HD n=4 keeps all four streams; looped x4 one cache per loop.
  CHECK(kv_at(cost_json("hd:n=4"), 4096) == 4 * per_token * 4096);
  const json looped = cost_json("profiles/designs/looped-x4.json");
  CHECK(kv_at(looped, 4096) == 4 * per_token * 4096);
  // ... and runs every layer 4 times per decode step; the final norm and head once.
  double outside = 0;
  for (const json& op : base["phases"]["decode"]["outside"]) outside += op["flops"].get<double>();
  CHECK(looped["metrics"]["decode_flops"].get<double>() - m["decode_flops"].get<double>() ==
        Approx(3 * (m["decode_flops"].get<double>() - outside)).epsilon(1e-12));

  // PHD-CSWA K=3 W=16 C=32 keeps the origins plus the hidden keys of the tokens already in
  // the next token's chunk, at most W: none at 4096 (a chunk boundary), 4 x 2 at 4100.
  const json phd = cost_json("profiles/designs/phd-cswa-k3.json");
  CHECK(kv_at(phd, 4096) == per_token * 4096);
  CHECK(kv_at(phd, 4100) == per_token * (4100 + 4 * 2));

  // VWN r = 1.5 adds no KV; its decode step reads the GHC and output-path weights too.
  const json vwn = cost_json("profiles/designs/vwn-r1.5.json");
  CHECK(kv_at(vwn, 4096) == per_token * 4096);
  CHECK(vwn["metrics"]["decode_weight_bytes"].get<double>() > m["decode_weight_bytes"].get<double>());
}

TEST_CASE("hdlab cost: a phase whose memory does not fit says so with the smallest change that fits",
          "[cli][cost][fit]") {
  // HD n=4 at decode batch 32 x 4096 tokens: 20.1 GB of weights + 32 x 2.42 GB of KV cache
  // (36 layers x 4 x 4096 positions x 2 x 8 x 128 x 2 B) against 0.9 x 80 GB.
  const auto r = run_cli({"cost", kModel, "-d", "hd:n=4", "--hw", "h100-sxm"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("warning: decode at batch 32 x 4096 tokens does not fit: 97.4 GB per device "
                                    "(weights 20.1 GB + KV cache 77.3 GB) > 72.0 GB usable (0.9 x 80.0 GB). "
                                    "Fits at batch 21 (70.8 GB), or tp 2 (2 devices, 48.7 GB each)."));
  CHECK_THAT(r.out, Catch::Contains("warning: training at micro-batch 1 x 4096 tokens does not fit: 254.0 GB"));
  CHECK_THAT(r.out, !Catch::Contains("warning: prefill"));
  // At tp 4 every phase fits: no warning.
  const auto fits = run_cli({"cost", kModel, "-d", "hd:n=4", "--hw", "h100-sxm", "--tp", "4"});
  REQUIRE(fits.exit_code == 0);
  CHECK_THAT(fits.out, !Catch::Contains("warning:"));
}

TEST_CASE("hdlab cost: the precision flags set each tensor class", "[cli][cost][precision]") {
  const auto cost = [](std::vector<std::string> flags) {
    std::vector<std::string> args{"cost", kModel, "--hw", "h100-sxm", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = run_cli(args);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
  };
  const json base = cost({});
  const json fp8 = cost({"--weights-dtype", "fp8", "--kv-cache-dtype", "fp8"});
  CHECK(fp8["scenario"]["precision"]["weights"] == "fp8");
  CHECK(fp8["scenario"]["precision"]["activations"] == "model");
  const json &a = base["metrics"], &b = fp8["metrics"];
  CHECK(b["inference_weight_bytes"].get<double>() == a["inference_weight_bytes"].get<double>() / 2);
  CHECK(b["kv_bytes_per_seq"].get<double>() == a["kv_bytes_per_seq"].get<double>() / 2);
  CHECK(b["train_activation_bytes"].get<double>() == a["train_activation_bytes"].get<double>());
}

TEST_CASE("hdlab cost: bad input exits with 2 and names the place", "[cli][cost][errors]") {
  // An unknown --hw lists the bundled profiles (whatever profiles/hardware holds).
  auto r = run_cli({"cost", kModel, "--hw", "h999"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  std::vector<std::string> bundled;
  for (const auto& e : std::filesystem::directory_iterator(source_path("profiles/hardware")))
    if (e.path().extension() == ".json") bundled.push_back(e.path().stem().string());
  std::sort(bundled.begin(), bundled.end());
  REQUIRE(std::find(bundled.begin(), bundled.end(), "h100-sxm") != bundled.end());
  std::string names;
  for (const auto& n : bundled) names += (names.empty() ? "" : ", ") + n;
  CHECK(r.err.rfind("hdlab: error: --hw: no file \"h999\" and no bundled profile of that name (bundled in ", 0) == 0);
  CHECK(r.err.find(": " + names + ")\n") != std::string::npos);

  r = run_cli({"cost", kModel, "--hw", "h100-sxm", "--tp", "3"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /scenario/parallel/tp: must divide the 32 query heads, got 3\n");
  CHECK(r.out.empty());

  // context parallelism that does not cut the training sequence into 2 x cp chunks
  r = run_cli({"cost", kModel, "--hw", "h100-sxm", "--seq-len", "4096", "--cp", "3"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /scenario/parallel/cp: must split the training sequence into 2 x cp equal chunks (two "
                 "per rank, balancing the causal mask): seq_len 4096 is not a multiple of 6\n");
  CHECK(r.out.empty());
  r = run_cli({"cost", kModel, "--hw", "h100-sxm", "--zero-stage", "4"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /scenario/train/zero_stage: must be <= 3, got 4\n");
  r = run_cli({"cost", kModel, "--hw", "h100-sxm", "--cp-comm", "ring"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /scenario/parallel/cp_comm: needs cp > 1: with one context-parallel rank no K/V is "
                 "exchanged\n");

  // precision per tensor class: a dtype hdlab does not know, fp8 products on a device without fp8
  r = run_cli({"cost", kModel, "--hw", "h100-sxm", "--kv-cache-dtype", "int4"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /scenario/precision/kv_cache: must be one of model, bf16, fp16, fp32, fp8, got "
                 "\"int4\"\n");
  r = run_cli({"cost", kModel, "--hw", "a100-80gb-sxm", "--compute-dtype", "fp8"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /scenario/precision/compute: is fp8, but NVIDIA A100 SXM4 80GB has no fp8 matrix rate\n");

  r = run_cli({"cost", kModel, "--hw", "h100-sxm", "--tp", "two"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /scenario/parallel/tp: must be an integer, got string \"two\"\n");

  r = run_cli({"cost", kModel, "--hw", "h100-sxm", "--kv-contexts", "0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: --kv-contexts: entry 0 (0 tokens): must be >= 1, got 0\n");
  CHECK(r.out.empty());

  r = run_cli({"cost", kModel});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--hw: is required") != std::string::npos);
}
