// hdlab run: real forward passes measured op by op. Exit codes, the JSON's structure
// and its numbers (FLOPs against a count by hand, op times inside the call's time, op
// names the cost model's, rows per design and phase), the same run on CUDA where a device
// is, weights saved and loaded, and every refusal with its message. Small models
// (tiny-*.json scaled down further) keep this fast.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "cli_runner.hpp"
#include "hdlab/executor/backends.hpp"

using hdlab::testing::run_cli;
using nlohmann::json;

namespace {

const std::vector<std::string> kSmall = {"--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2",
                                         "--ffn", "96", "--vocab", "300", "--repeats", "2", "--warmup", "1"};

std::vector<std::string> args(std::vector<std::string> a, const std::vector<std::string>& more = kSmall) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

json run_json(const std::vector<std::string>& a) {
  const auto r = run_cli(args(a));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

const std::set<std::string> kOpNames = {
    "embedding", "vwn_embed_proj", "attn_norm", "qkv_proj", "qk_norm", "rope", "attention", "o_proj", "ffn_norm",
    "ffn_gate_up", "ffn_act", "ffn_down", "router", "experts", "shared_experts", "residual", "ghc_norm", "ghc_dynamic",
    "ghc_width", "ghc_depth", "vwn_reduce", "injection", "mtp", "final_norm", "lm_head"};

// The run every backend must reproduce: tiny-dense scaled to 2 layers (sliding, full) of
// D 64, 4 query / 2 KV heads of 16, SwiGLU 96, vocabulary 300 (padded to 320); HD n=2,
// prefill of 40 tokens: 80 rows per layer.
const std::vector<std::string> kHdPrefill = {"run", "profiles/models/tiny-dense.json", "--design", "hd:n=2",
                                             "--phase", "prefill", "--tokens", "40", "--json"};

// FLOPs of that run, by hand (methods.md section 6; N = 80 rows, D 64, H 2 x 2 heads of 16):
//   attn_norm, ffn_norm 4 N D = 20480 each; qkv_proj 2 N D (H + 2 G) hd = 1310720;
//   qk_norm 4 N (H + G) hd = 30720; rope 3 N (H + G) hd = 23040;
//   attention 4 hd H x 5376 executed pairs = 1376256 (80 causal rows on 64 x 64 tiles:
//     64 x 64 + 16 x 64 + 16 x 16; the local window of 512 covers all 80 positions);
//   o_proj 2 N (H hd) D = 655360; ffn_gate_up 2 N D 2F = 1966080; ffn_act 5 N F = 38400;
//   ffn_down 2 N F D = 983040; residual 2 N D = 10240.
//   Per layer 6434816, two layers; then one loss row: final norm 4 D = 256, head 2 D 320 = 40960.
constexpr double kHdPrefillFlops = 2 * 6434816.0 + 256 + 40960;
constexpr double kHdPrefillAttentionPairs = 64 * 64 + 16 * 64 + 16 * 16;

// What every backend's --json of kHdPrefill must say.
void check_hd_prefill(const json& j, const std::string& backend) {
  CHECK(j["phase"] == "prefill");
  CHECK(j["backend"] == backend);
  CHECK(j["rows"] == 80);  // HD n=2: 2 x 40 positions
  CHECK(j["loss_rows"] == 1);
  CHECK(j["repeats"] == 2);
  REQUIRE(j["time_ms"]["each"].size() == 2);
  const double first = j["time_ms"]["each"][0], second = j["time_ms"]["each"][1];
  CHECK(j["time_ms"]["median"].get<double>() == Approx((first + second) / 2).epsilon(1e-12));
  CHECK(j["time_ms"]["max"].get<double>() == std::max(first, second));
  CHECK(j["tile"] == json::array({64, 64}));
  CHECK(j["flops"].get<double>() == kHdPrefillFlops);
  double flops = 0, op_ms = 0;
  std::set<std::string> seen;
  for (const auto& op : j["ops"]) {
    INFO(op.dump());
    CHECK(kOpNames.count(op["op"].get<std::string>()) == 1);
    // Each op's timer runs inside the call's own: more than nothing, less than the slowest call.
    CHECK(op["ms"].get<double>() > 0);
    CHECK(op["ms"].get<double>() <= j["time_ms"]["max"].get<double>());
    if (op["op"] == "attention") CHECK(op["pairs_executed"] == kHdPrefillAttentionPairs);
    flops += op["flops"].get<double>();
    op_ms += op["ms"].get<double>();
    seen.insert(op["op"].get<std::string>());
  }
  CHECK(flops == kHdPrefillFlops);
  // Medians of two repeats are their means, so the ops' times sum to the mean of what
  // their timers measured inside each call: at most the calls' median (up to 1 us of
  // timer resolution per op).
  CHECK(op_ms <= j["time_ms"]["median"].get<double>() + 1e-3 * static_cast<double>(j["ops"].size()));
  for (const char* must : {"embedding", "qkv_proj", "attention", "ffn_gate_up", "lm_head"}) CHECK(seen.count(must) == 1);
  // Two layers of the sliding/full pattern: a local and a full group.
  CHECK(j["groups"].size() == 2);
  CHECK(j["memory"]["peak_bytes"].get<double>() <= j["memory"]["estimate_bytes"].get<double>());
  // f32 (4 bytes); KV: K and V of 2 heads of 16 at all 80 positions in both layers (the
  // local window of 512 keeps them all); weights: per layer q, k, v, o (64 x 64, 32 x 64,
  // 32 x 64, 64 x 64), QK-norm 2 x 16, 2 norms of 64 and SwiGLU 3 x 64 x 96; the final norm;
  // 3 tables of 320 x 64 (HD's two input tables and the head).
  CHECK(j["memory"]["kv_cache_bytes"] == 2 * 80 * (2 * 2 * 16) * 4);
  CHECK(j["memory"]["weights_bytes"] == 4 * (2 * (4096 + 2048 + 2048 + 4096 + 32 + 128 + 3 * 64 * 96) + 64 + 3 * 320 * 64));
}

}  // namespace

TEST_CASE("hdlab run --json: medians, per-op rows with the cost model's names, FLOPs by hand", "[cli][run]") {
  check_hd_prefill(run_json(kHdPrefill), "cpu");
}

TEST_CASE("hdlab run --backend cuda: the same run on a GPU, else exit 2 naming --backend and why", "[cli][run][cuda]") {
  // The test asks the driver itself, as `hdlab run` does, and asserts on both paths.
  const hdlab::executor::CudaProbe probe = hdlab::executor::probe_cuda();
  const auto r = run_cli(args(kHdPrefill, args({"--backend", "cuda"})));
  INFO(r.err);
  if (probe.devices > 0) {
    REQUIRE(r.exit_code == 0);
    check_hd_prefill(json::parse(r.out), "cuda");
  } else {
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--backend") != std::string::npos);
    CHECK(r.err.find(probe.reason) != std::string::npos);
  }
}

TEST_CASE("hdlab run: every phase of every design", "[cli][run]") {
  struct Case {
    const char* model;
    const char* design;
    const char* phase;
    std::int64_t rows;  // per layer pass, tokens = 24
  };
  for (const Case& c : {Case{"profiles/models/tiny-dense.json", "baseline", "train-forward", 24},
                        Case{"profiles/models/tiny-dense.json", "hd:n=3", "decode", 3},
                        Case{"profiles/models/tiny-dense.json", "{\"phd\":{\"K\":3,\"variant\":\"cswa\",\"W\":4,\"C\":8}}",
                             "prefill", 24 + 8 * 2},
                        Case{"profiles/models/tiny-dense.json", "{\"phd\":{\"K\":2}}", "decode", 2},
                        Case{"profiles/models/tiny-dense.json", "{\"vwn\":{\"m\":2,\"n\":4,\"mtp\":true}}", "train-forward", 24},
                        Case{"profiles/models/tiny-dense.json", "mhc:n=4", "prefill", 24},
                        Case{"profiles/models/tiny-dense.json", "profiles/designs/mhc-n4.json", "decode", 1},
                        Case{"profiles/models/tiny-dense.json", "{\"looped\":{\"iterations\":3,\"input_injection\":true}}",
                             "decode", 1},
                        Case{"profiles/models/tiny-moe.json", "{\"growth\":{\"width_factor\":2,\"depth_factor\":2}}",
                             "prefill", 24},
                        // multi-head latent attention (runner_mla.cpp), executed since issue 15
                        Case{"profiles/models/tiny-mla.json", "baseline", "prefill", 24},
                        Case{"profiles/models/tiny-mla.json", "hd:n=2", "decode", 2}}) {
    INFO(c.design << " " << c.phase);
    const json j = run_json({"run", c.model, "--design", c.design, "--phase", c.phase, "--tokens", "24", "--json"});
    CHECK(j["rows"] == c.rows);
    CHECK(j["flops"].get<double>() > 0);
  }
}

namespace {

struct RunCase {
  const char* design;
  const char* phase;
  std::int64_t rows;  // per layer pass
};

// `hdlab run --json` of `profile` at its own size on `tokens` tokens, once per case: exit 0,
// the rows the case says, some FLOPs.
void check_runs(const char* profile, int tokens, const std::vector<RunCase>& cases) {
  for (const RunCase& c : cases) {
    INFO(profile << " " << c.design << " " << c.phase);
    const auto r = run_cli({"run", profile, "--design", c.design, "--phase", c.phase, "--tokens",
                            std::to_string(tokens), "--repeats", "1", "--warmup", "0", "--json", "--backend", "cpu"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["rows"] == c.rows);
    CHECK(j["flops"].get<double>() > 0);
  }
}

}  // namespace

TEST_CASE("hdlab run: today's backbones - a Qwen3-Next-shaped hybrid and a gpt-oss-shaped MoE", "[cli][run][linear]") {
  // tiny-hybrid at its own size (Gated DeltaNet in 3 of 4 layers, gated attention, gated
  // shared expert) in every phase, under the baseline, HD and PHD; gpt-oss-20b scaled down
  // (sinks, alternating windows, biases, the clamped SwiGLU experts).
  check_runs("profiles/models/tiny-hybrid.json", 24,
             {{"baseline", "decode", 1}, {"baseline", "train-forward", 24}, {"hd:n=2", "prefill", 48},
              {"{\"hd\":{\"n\":2,\"layers\":\"intra\"}}", "decode", 2}, {"{\"phd\":{\"K\":3}}", "prefill", 24 + 2},
              {"{\"phd\":{\"K\":3,\"linear_state\":\"all_copies\"}}", "prefill", 72}});
  const auto oss = run_cli(args({"run", "profiles/models/gpt-oss-20b.json", "--phase", "decode", "--tokens", "16",
                                 "--experts", "8", "--top-k", "2", "--expert-ffn", "64", "--window", "8"}));
  INFO(oss.err);
  CHECK(oss.exit_code == 0);
  CHECK(oss.out.find("experts") != std::string::npos);
}

TEST_CASE("hdlab run: Nemotron-H's blocks and Qwen3-Next's partial RoPE", "[cli][run][mamba2]") {
  // tiny-nemotron-h at its own size (Mamba-2 mixers, mixer-only and MLP-only blocks, relu2,
  // attention without positions) in every phase, under the baseline and HD.
  check_runs("profiles/models/tiny-nemotron-h.json", 40,
             {{"baseline", "train-forward", 40}, {"baseline", "prefill", 40}, {"baseline", "decode", 1},
              {"hd:n=2", "train-forward", 80}, {"{\"hd\":{\"n\":3,\"layers\":\"intra\"}}", "decode", 3}});
  // The bundled Qwen3-Next scaled down (its Gated DeltaNet sizes kept, head dim 256 with
  // the first 64 dims rotated) and Nemotron-H-8B's first blocks.
  const std::vector<std::string> once = {"--repeats", "1", "--warmup", "0", "--phase", "decode", "--tokens", "12"};
  const auto next = run_cli(args({"run", "profiles/models/qwen3-next-80b-a3b.json", "--layers", "4", "--hidden", "256",
                                  "--experts", "8", "--top-k", "2", "--expert-ffn", "64", "--vocab", "1024"},
                                 once));
  INFO(next.err);
  CHECK(next.exit_code == 0);
  const auto nemotron = run_cli(args({"run", "profiles/models/nemotron-h-8b.json", "--layers", "4", "--hidden", "256",
                                      "--heads", "4", "--kv-heads", "2", "--head-dim", "32", "--ffn", "256", "--vocab",
                                      "1024"},
                                     once));
  INFO(nemotron.err);
  CHECK(nemotron.exit_code == 0);
}

namespace {

struct BadConfig {
  std::function<void(json&)> edit;  // applied to the profile's document
  const char* design;
  const char* pointer;  // the error must name it
};

// `hdlab run` on the profile edited by each case, under its design: exit 2 naming the pointer.
void check_bad_configs(const char* profile, const std::vector<BadConfig>& cases) {
  namespace fs = std::filesystem;
  const json doc = json::parse(std::ifstream(hdlab::testing::source_path(profile)));
  const fs::path file = fs::temp_directory_path() / ("hdlab_cli_bad_" + std::to_string(::getpid()) + ".json");
  for (const BadConfig& c : cases) {
    json d = doc;
    c.edit(d);
    std::ofstream(file) << d.dump();
    const auto r = run_cli({"run", file.string(), "--design", c.design, "--tokens", "8"});
    INFO(profile << " " << c.pointer << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.pointer) != std::string::npos);
  }
  fs::remove(file);
}

}  // namespace

TEST_CASE("hdlab run: bad hybrid configs are named by pointer, exit 2", "[cli][run][linear][bad-input]") {
  check_bad_configs(
      "profiles/models/tiny-hybrid.json",
      {{[](json& d) { d["backbone"]["layer_types"] = {"linear_attention", "attention"}; }, "baseline",
        "/backbone/layer_types"},
       {[](json& d) { d["backbone"].erase("linear_attention"); }, "baseline", "/backbone/linear_attention"},
       {[](json& d) { d["backbone"]["linear_attention"]["num_value_heads"] = 6; }, "baseline",
        "/backbone/linear_attention/num_value_heads"},
       {[](json& d) { d["backbone"]["rotary_dim"] = 7; }, "baseline", "/backbone/rotary_dim"},
       {[](json&) {}, "{\"phd\":{\"K\":2,\"linear_state\":\"sometimes\"}}", "/design/phd/linear_state"},
       {[](json&) {}, "{\"looped\":{\"iterations\":2}}", "/design/looped"},
       {[](json&) {}, "{\"hd\":{\"n\":2,\"layers\":\"local\",\"window\":8}}", "/design/hd/layers"}});
  // linear_state on a backbone without linear layers
  const auto dense = run_cli(args({"run", "profiles/models/tiny-dense.json", "--design",
                                   "{\"phd\":{\"K\":2,\"linear_state\":\"origins\"}}"}));
  CHECK(dense.exit_code == 2);
  CHECK(dense.err.find("/design/phd/linear_state") != std::string::npos);
}

TEST_CASE("hdlab run: bad Nemotron-H configs are named by pointer, exit 2", "[cli][run][mamba2][bad-input]") {
  check_bad_configs(
      "profiles/models/tiny-nemotron-h.json",
      {{[](json& d) { d["backbone"]["ffn_types"] = {"none", "dense"}; }, "baseline", "/backbone/ffn_types"},
       {[](json& d) { d["backbone"]["mamba2"].erase("state_size"); }, "baseline", "/backbone/mamba2"},
       {[](json& d) { d["backbone"]["mamba2"]["n_groups"] = 3; }, "baseline", "/backbone/mamba2/n_groups"},
       {[](json& d) { d["backbone"]["norms_per_layer"] = 4; }, "baseline", "/backbone/norms_per_layer"},
       {[](json& d) { d["backbone"]["mlp"] = "gelu"; }, "baseline", "/backbone/mlp"},
       {[](json&) {}, "{\"phd\":{\"K\":2}}", "/design/phd"},
       {[](json&) {}, "{\"vwn\":{\"m\":2,\"n\":3}}", "/design/vwn"},
       {[](json&) {}, "{\"hd\":{\"n\":2,\"layers\":\"local\",\"window\":8}}", "/design/hd/layers"}});
}

TEST_CASE("hdlab run: the summary names the model, phase and ops", "[cli][run]") {
  const auto r = run_cli(args({"run", "profiles/models/tiny-moe.json", "--phase", "decode", "--tokens", "16"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("hdlab run: tiny-moe (scaled), baseline") != std::string::npos);
  CHECK(r.out.find("phase decode: 16 tokens -> 1 rows") != std::string::npos);
  for (const char* s : {"time: median", "memory: weights", "experts", "router", "shared_experts", "GFLOP/s"})
    CHECK(r.out.find(s) != std::string::npos);
}

TEST_CASE("hdlab run: weights saved, loaded, and bad weight files refused naming the tensor", "[cli][run]") {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / ("hdlab_cli_run_" + std::to_string(::getpid()) + ".safetensors");
  const std::vector<std::string> base = {"run", "profiles/models/tiny-dense.json", "--tokens", "8", "--json"};
  auto saved = run_cli(args(base, {"--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2", "--ffn", "96",
                                   "--vocab", "300", "--repeats", "1", "--save-weights", file.string()}));
  INFO(saved.err);
  REQUIRE(saved.exit_code == 0);
  REQUIRE(fs::exists(file));
  auto loaded = run_cli(args(base, {"--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2", "--ffn",
                                    "96", "--vocab", "300", "--repeats", "1", "--weights", file.string()}));
  INFO(loaded.err);
  CHECK(loaded.exit_code == 0);
  // The same file for another shape: the first tensor that disagrees is named.
  auto wrong = run_cli(args(base, {"--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2", "--ffn",
                                   "128", "--vocab", "300", "--repeats", "1", "--weights", file.string()}));
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.err.find("model.layers.0.mlp.gate_proj.weight") != std::string::npos);
  CHECK(wrong.err.find("[128, 64]") != std::string::npos);
  fs::resize_file(file, fs::file_size(file) - 4);
  auto cut = run_cli(args(base, {"--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2", "--ffn", "96",
                                 "--vocab", "300", "--repeats", "1", "--weights", file.string()}));
  CHECK(cut.exit_code == 2);
  CHECK(cut.err.find("truncated") != std::string::npos);
  CHECK(cut.err.find("lm_head.weight") != std::string::npos);
  fs::remove(file);
}

TEST_CASE("hdlab run: refusals and bad options exit 2 with a message", "[cli][run]") {
  // The 617B MoE cannot fit in host memory: refused before allocating, with both numbers.
  auto huge = run_cli({"run", "profiles/models/welm-617b.json", "--tokens", "16"});
  CHECK(huge.exit_code == 2);
  CHECK(huge.err.find("refused before allocating") != std::string::npos);
  CHECK(huge.err.find("available") != std::string::npos);
  auto phase = run_cli(args({"run", "profiles/models/tiny-dense.json", "--phase", "backward"}));
  CHECK(phase.exit_code == 2);
  CHECK(phase.err.find("prefill, decode, train-forward") != std::string::npos);
  auto bf16 = run_cli(args({"run", "profiles/models/tiny-dense.json", "--dtype", "bf16"}));
  CHECK(bf16.exit_code == 2);
  CHECK(bf16.err.find("cpu backend does not run bf16") != std::string::npos);
  auto layout = run_cli(args({"run", "profiles/models/tiny-dense.json", "--layout", "diagonal"}));
  CHECK(layout.exit_code == 2);
  auto scale = run_cli(args({"run", "profiles/models/tiny-dense.json", "--experts", "4"}));
  CHECK(scale.exit_code == 2);
  CHECK(scale.err.find("MoE") != std::string::npos);
  auto mhc = run_cli(args({"run", "profiles/models/tiny-dense.json", "--design", "mhc:n=0"}));
  CHECK(mhc.exit_code == 2);
  CHECK(mhc.err.find("/design/mhc/n") != std::string::npos);
}
