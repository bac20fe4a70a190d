// The bundled profiles: every model and design file parses with our strict loader and
// round-trips; each model reproduces its published figures; every hardware number has a
// source or an explicit assumption.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <set>
#include <tuple>
#include <utility>
#include <string>
#include <vector>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/params.hpp"

using namespace hdlab::model;
using i64 = std::int64_t;

namespace {

std::string profiles_dir() { return std::string(HDLAB_SOURCE_DIR) + "/profiles"; }

// *.json files directly in profiles/<sub>, sorted.
std::vector<std::string> json_files(const std::string& sub) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(profiles_dir() + "/" + sub))
    if (entry.is_regular_file() && entry.path().extension() == ".json") out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

Config model(const std::string& name) {
  return parse_config(read_json_file(profiles_dir() + "/models/" + name + ".json"));
}

ParamCounts baseline_params(const Backbone& b) { return count_params(make_config(b, Design{})); }

// Kinds of an HD design, counted.
struct HdCounts {
  i64 intra = 0, local = 0, full = 0;
};
HdCounts hd_counts(const HdDesign& hd) {
  HdCounts c;
  for (auto k : hd.layer_kinds) {
    if (k == HdLayerKind::intra) ++c.intra;
    if (k == HdLayerKind::local) ++c.local;
    if (k == HdLayerKind::full) ++c.full;
  }
  return c;
}

// The file names of json_files(sub), for comparing with the list a test expects.
std::set<std::string> names_of(const std::vector<std::string>& files) {
  std::set<std::string> out;
  for (const auto& f : files) out.insert(std::filesystem::path(f).filename().string());
  return out;
}

bool within(double value, double published, double rel) { return std::abs(value - published) <= rel * published; }

bool rounds_to(i64 value, double published, double unit) {
  return std::llround(static_cast<double>(value) / unit) == std::llround(published / unit);
}

}  // namespace

TEST_CASE("every model profile parses with the strict loader and round-trips", "[profiles]") {
  const auto files = json_files("models");
  // Exactly the bundled models: a profile lost in a merge fails here, a new one is added here.
  CHECK(names_of(files) == std::set<std::string>{
      "flashattn-gpt3-1.3b-2k.json", "flashattn-gpt3-1.3b-8k.json", "flashattn-gpt3-2.7b-2k.json",
      "flashattn-gpt3-2.7b-8k.json", "gpt-oss-20b.json", "gpt2-small.json", "growth-17b.json", "growth-3b.json", "huginn-3.5b.json",
      "llama-4-scout.json", "llama2-70b-fp16.json", "llama2-7b-fp16.json", "llama3-405b.json",
      "megatron-gpt-1.7b.json", "megatron-gpt-145.6b.json", "megatron-gpt-175b.json", "megatron-gpt-18.4b.json",
      "megatron-gpt-1t.json", "megatron-gpt-22b.json", "megatron-gpt-3.6b.json", "megatron-gpt-310.1b.json",
      "megatron-gpt-39.1b.json", "megatron-gpt-530b.json", "megatron-gpt-7.5b.json", "megatron-gpt-76.1b.json",
      "ouro-1.4b.json", "ouro-2.6b.json", "phd-1.2b.json", "phd-550m.json",
      "nemotron-h-8b.json", "qwen3-8b.json", "qwen3-next-80b-a3b.json", "tiny-dense.json",
      "tiny-hybrid.json", "tiny-mla.json", "tiny-moe.json", "tiny-nemotron-h.json", "welm-617b.json", "welm-80b.json"});
  for (const auto& f : files) {
    INFO(f);
    const Json doc = read_json_file(f);
    const Config c = parse_config(doc);
    CHECK(parse_config(to_json(c)) == c);
    CHECK(load_backbone(doc) == c.base);
    CHECK(doc.contains("description"));
    CHECK(c.base.name != "unnamed");
    CHECK_FALSE(c.base.source.empty());
    for (const auto& [field, note] : c.base.assumptions) {
      INFO(field);
      CHECK(note.size() > 10);  // says what was assumed and why
    }
  }
}

TEST_CASE("every design profile parses against a fitting backbone and round-trips", "[profiles]") {
  const Backbone dense = model("qwen3-8b").base;
  const Backbone moe = model("growth-3b").base;
  const auto files = json_files("designs");
  CHECK(names_of(files) == std::set<std::string>{"growth-depth2.json", "growth-width2.json", "hd-n4-full.json",
                                                 "hd-n4-intra.json", "looped-x4.json", "mhc-n4.json",
                                                 "phd-cswa-k3.json", "phd-swa-k3.json", "vwn-r1.5.json"});
  std::set<std::string> methods;
  for (const auto& f : files) {
    INFO(f);
    const Json j = read_json_file(f);
    const Backbone& base = j.contains("growth") ? moe : dense;
    const Design d = parse_design(j, base);
    CHECK(parse_design(to_json(d), base) == d);
    const Config c = make_config(base, d);
    CHECK(c.design == d);
    methods.insert(method_name(d.method));
    if (d.growth) methods.insert("growth");
  }
  for (const char* m : {"hd", "phd", "vwn", "looped", "mhc", "growth"}) CHECK(methods.count(m) == 1);
}

TEST_CASE("Qwen3-8B profile agrees with its HF config.json", "[profiles]") {
  const Backbone b = model("qwen3-8b").base;
  const Backbone hf = load_backbone(read_json_file(profiles_dir() + "/models/hf/qwen3-8b.config.json"));
  CHECK(b.name == "Qwen3-8B");
  CHECK(b.num_layers == hf.num_layers);
  CHECK(b.hidden == hf.hidden);
  CHECK(b.num_heads == hf.num_heads);
  CHECK(b.num_kv_heads == hf.num_kv_heads);
  CHECK(b.head_dim == hf.head_dim);
  CHECK(b.qk_norm == hf.qk_norm);
  CHECK(b.intermediate == hf.intermediate);
  CHECK(b.vocab_size == hf.vocab_size);
  CHECK(b.tie_embeddings == hf.tie_embeddings);
  CHECK(b.layers == hf.layers);
  CHECK(b.rope_theta == hf.rope_theta);
  CHECK(b.norm_eps == hf.norm_eps);
  CHECK(b.max_context == 32768);  // the card's native context (config.json says 40960 positions)
  CHECK(baseline_params(b).total == baseline_params(hf).total);
}

TEST_CASE("Llama-2 profiles of the published TensorRT-LLM rows: the HF parameter counts", "[profiles]") {
  // meta-llama/Llama-2-{7b,70b}-hf: 6,738,415,616 and 68,976,648,192 parameters (untied
  // embeddings, no biases); the H100 rows' fp8 weights and cache are the cases' precision.
  for (const auto& [name, total] : {std::pair{"llama2-7b", i64{6'738'415'616}}, std::pair{"llama2-70b", i64{68'976'648'192}}}) {
    INFO(name);
    const Backbone fp16 = model(std::string(name) + "-fp16").base;
    CHECK(baseline_params(fp16).total == total);
    CHECK(fp16.dtype == DType::fp16);
  }
}

TEST_CASE("WeLM-80B: 49 layers, HD n=4 20 intra / 23 local / 6 full, ~80B / ~3B active", "[profiles][welm]") {
  const Config c = model("welm-80b");
  const Backbone& b = c.base;
  CHECK(b.name == "WeLM-80B");
  CHECK(b.num_layers == 49);
  CHECK(b.hidden == 2048);
  CHECK(b.num_heads == 24);
  CHECK(b.num_kv_heads == 2);
  CHECK(b.head_dim == 256);
  REQUIRE(b.moe.has_value());
  CHECK(b.moe->num_experts == 512);
  CHECK(b.moe->num_shared_experts == 1);
  CHECK(b.moe->top_k == 10);
  CHECK(b.kv_mirror_layers == 16);
  CHECK(b.max_context == 262144);
  for (const char* field : {"attention", "vocab_size", "expert_intermediate_size", "tie_embeddings"})
    CHECK(b.assumptions.count(field) == 1);

  // Published: 80B parameters, 3B active, embeddings excluded. Tolerance: 1% / 5%
  // (the expert size is derived from these very totals; 80.46B and 3.08B result).
  const ParamCounts p = baseline_params(b);
  CHECK(within(static_cast<double>(p.non_embedding()), 80e9, 0.01));
  CHECK(within(static_cast<double>(p.active_per_token), 3e9, 0.05));
  // Input embedding 6.05B at n = 1 (the vocabulary is derived from it).
  CHECK(rounds_to(p.embedding_input, 6.05e9, 1e7));

  const auto* hd = std::get_if<HdDesign>(&c.design.method);
  REQUIRE(hd != nullptr);
  CHECK(hd->n == 4);
  const HdCounts k = hd_counts(*hd);
  CHECK(k.intra == 20);
  CHECK(k.local == 23);
  CHECK(k.full == 6);
  CHECK(hd->kv_mirror);
  // The local layers sit exactly on the backbone's sliding layers.
  for (std::size_t l = 0; l < hd->layer_kinds.size(); ++l) {
    INFO("layer " << l);
    CHECK((hd->layer_kinds[l] == HdLayerKind::local) == (b.layers[l].kind == AttentionKind::sliding));
  }
  CHECK(hd->window == 4 * b.layers[2].window);  // the token window covers n expanded positions each
  CHECK(count_params(c).embedding_input == 4 * p.embedding_input);
}

TEST_CASE("WeLM-617B: 94 layers, HD n=4 69 intra / 25 full, ~617B / ~23B active", "[profiles][welm]") {
  const Config c = model("welm-617b");
  const Backbone& b = c.base;
  CHECK(b.name == "WeLM-617B");
  CHECK(b.num_layers == 94);
  CHECK(b.hidden == 4096);
  CHECK(b.num_heads == 96);
  CHECK(b.num_kv_heads == 8);
  CHECK(b.head_dim == 128);
  CHECK(b.kv_mirror_layers == 30);
  CHECK(b.num_sliding_layers() == 0);
  CHECK(b.max_context == 32768);
  // Published: 617B / 23B active, embeddings excluded. Tolerance 0.5% / 3% (617.2B, 23.46B).
  const ParamCounts p = baseline_params(b);
  CHECK(within(static_cast<double>(p.non_embedding()), 617e9, 0.005));
  CHECK(within(static_cast<double>(p.active_per_token), 23e9, 0.03));
  // Input embedding 26.9B at n = 1 and 107.4B at n = 4.
  CHECK(rounds_to(p.embedding_input, 26.9e9, 1e8));
  CHECK(rounds_to(count_params(c).embedding_input, 107.4e9, 1e8));

  const auto* hd = std::get_if<HdDesign>(&c.design.method);
  REQUIRE(hd != nullptr);
  const HdCounts k = hd_counts(*hd);
  CHECK(k.intra == 69);
  CHECK(k.local == 0);
  CHECK(k.full == 25);
  CHECK(hd->kv_mirror);
}

TEST_CASE("PHD profiles: OLMo2 vocabulary, halved FFN hidden, published PHD settings", "[profiles][phd]") {
  SECTION("1.2B, PHD-CSWA K=3 W=16 C=32") {
    const Config c = model("phd-1.2b");
    const Backbone& b = c.base;
    CHECK(b.num_layers == 16);
    CHECK(b.hidden == 2048);
    CHECK(b.intermediate == 16384 / 2);
    CHECK(b.num_heads == 32);
    CHECK(b.num_kv_heads == 8);
    CHECK(b.head_dim == 64);
    CHECK(b.vocab_size == 100278);
    const auto& phd = std::get<PhdDesign>(c.design.method);
    CHECK(phd.K == 3);
    CHECK(phd.variant == PhdVariant::cswa);
    CHECK(phd.W == 16);
    CHECK(phd.C == 32);
    CHECK(within(static_cast<double>(baseline_params(b).total), 1.2e9, 0.03));
  }
  SECTION("550M, PHD-SWA K=3 W=16") {
    const Config c = model("phd-550m");
    const Backbone& b = c.base;
    CHECK(b.num_layers == 16);
    CHECK(b.hidden == 1536);
    CHECK(b.intermediate == 8192 / 2);
    CHECK(b.num_heads == 16);
    CHECK(b.num_kv_heads == 4);
    CHECK(b.vocab_size == 100278);
    const auto& phd = std::get<PhdDesign>(c.design.method);
    CHECK(phd.K == 3);
    CHECK(phd.variant == PhdVariant::swa);
    CHECK(phd.W == 16);
    CHECK(within(static_cast<double>(baseline_params(b).total), 550e6, 0.01));
  }
}

TEST_CASE("growth bases: sigmoid routers, and the grown variants of the study", "[profiles][growth]") {
  const Json width = read_json_file(profiles_dir() + "/designs/growth-width2.json");
  const Json depth = read_json_file(profiles_dir() + "/designs/growth-depth2.json");
  struct Case {
    const char* name;
    i64 layers, hidden, experts, top_k, expert_f;
    double size;
  };
  for (const Case& k : {Case{"growth-3b", 20, 1024, 64, 4, 768, 3e9}, Case{"growth-17b", 28, 2048, 96, 6, 1024, 17e9}}) {
    INFO(k.name);
    const Backbone b = model(k.name).base;
    REQUIRE(b.moe.has_value());
    CHECK(b.moe->router == RouterKind::sigmoid);
    CHECK(b.num_layers == k.layers);
    CHECK(b.hidden == k.hidden);
    CHECK(b.num_heads == 16);
    CHECK(b.num_kv_heads == 4);
    CHECK(b.moe->num_experts == k.experts);
    CHECK(b.moe->top_k == k.top_k);
    CHECK(b.moe->expert_intermediate == k.expert_f);
    CHECK(b.vocab_size == 200019);
    CHECK_FALSE(b.tie_embeddings);
    // "3B" / "17B" name the non-embedding size: 3.07B and 17.2B.
    CHECK(within(static_cast<double>(baseline_params(b).non_embedding()), k.size, 0.03));
    const Config wide = make_config(b, parse_design(width, b));
    CHECK(wide.effective.moe->num_experts == 2 * k.experts);
    CHECK(wide.effective.moe->top_k == 2 * k.top_k);
    const Config deep = make_config(b, parse_design(depth, b));
    CHECK(deep.effective.num_layers == 2 * k.layers);
  }
}

TEST_CASE("looped profiles: Huginn 2 + 4 x 32 + 2 with injection, Ouro whole stack x 4", "[profiles][looped]") {
  SECTION("Huginn-3.5B") {
    const Config c = model("huginn-3.5b");
    const Backbone& b = c.base;
    CHECK(b.num_layers == 8);
    CHECK(b.hidden == 5280);
    CHECK(b.num_heads == 55);
    CHECK(b.head_dim == 96);
    CHECK(b.intermediate == 17920);
    CHECK(b.vocab_size == 65536);
    CHECK(b.tie_embeddings);
    CHECK(b.norms_per_layer == 4);  // sandwich blocks
    const auto& loop = std::get<LoopedDesign>(c.design.method);
    CHECK(loop.prelude == 2);
    CHECK(loop.recurrent == 4);
    CHECK(loop.coda == 2);
    CHECK(loop.iterations == 32);
    CHECK(loop.input_injection);
    CHECK(loop.layer_passes() == 2 + 4 * 32 + 2);
    const ParamCounts p = count_params(c);
    CHECK(p.adapters == 2 * 5280 * 5280);
    CHECK(within(static_cast<double>(p.total), 3.5e9, 0.03));  // "3.5B": 3.565B with the adapter
  }
  SECTION("Ouro-1.4B and Ouro-2.6B") {
    for (const auto& [name, layers, size] : {std::tuple{"ouro-1.4b", 24, 1.4e9}, std::tuple{"ouro-2.6b", 48, 2.6e9}}) {
      INFO(name);
      const Config c = model(name);
      CHECK(c.base.num_layers == layers);
      CHECK(c.base.num_heads == 16);
      CHECK(c.base.num_kv_heads == 16);
      CHECK(c.base.hidden == 2048);
      const auto& loop = std::get<LoopedDesign>(c.design.method);
      CHECK(loop.prelude == 0);
      CHECK(loop.coda == 0);
      CHECK(loop.recurrent == layers);
      CHECK(loop.iterations == 4);
      CHECK(within(static_cast<double>(count_params(c).total), size, 0.03));  // 1.43B / 2.67B
    }
  }
}

namespace {

// Every numeric (or null: "none") leaf of a hardware profile, nested ones as
// "efficiency.gemm", has a source or an assumption; every note is of a number that exists
// (or of the fitted curves or kernel models, documented by their own records) and says
// something.
void check_every_number_noted(const Json& hw, bool calibrated) {
  std::vector<std::string> numbers;
  for (const auto& [key, value] : hw.items()) {
    if (key == "sources" || key == "assumptions" || key == "efficiency_curves" || key == "calibration" ||
        key == "kernel_models")
      continue;
    if (value.is_object()) {
      for (const auto& [sub, v] : value.items()) {
        CHECK((v.is_number() || v.is_null()));
        numbers.push_back(key + "." + sub);
      }
    } else if (value.is_number() || value.is_null()) {
      numbers.push_back(key);
    }
  }
  for (const auto& n : numbers) {
    INFO(n);
    const bool sourced = hw["sources"].contains(n) || hw["assumptions"].contains(n);
    CHECK(sourced);
  }
  // No note for a number that does not exist, and every note says something.
  for (const char* section : {"sources", "assumptions"})
    for (const auto& [key, note] : hw[section].items()) {
      INFO(section << ": " << key);
      const bool curves_note = calibrated && key == "efficiency_curves";
      const bool kernels_note = hw.contains("kernel_models") && key.rfind("kernel_models", 0) == 0;
      CHECK((curves_note || kernels_note || std::find(numbers.begin(), numbers.end(), key) != numbers.end()));
      CHECK((note.is_string() && note.get<std::string>().size() > 10));
    }
}

}  // namespace

TEST_CASE("every hardware profile: fixed schema, and a source or assumption for every number", "[profiles][hardware]") {
  const std::set<std::string> keys = {"name", "kind", "peak_bf16_tflop_per_s", "peak_fp16_tflop_per_s",
                                      "peak_fp8_tflop_per_s", "peak_fp32_tflop_per_s", "memory_gb",
                                      "memory_bandwidth_gb_per_s", "l2_cache_mb", "nvlink_bandwidth_gb_per_s",
                                      "nvlink_latency_us", "network_bandwidth_gb_per_s", "network_latency_us",
                                      "pcie_bandwidth_gb_per_s", "kernel_launch_overhead_us", "efficiency",
                                      "measured", "sources", "assumptions", "efficiency_curves", "calibration",
                                      "sms", "kernel_models"};
  // A calibrated profile (hdlab calibrate) adds fitted curves and a record of the run they
  // came from; the curves are documented by that record rather than per number.
  // A GPU profile fitted to measured kernels (hdlab calibrate --from-kerneldb) or derived
  // from one adds its SM count and the kernel models, documented by their own fit record.
  const std::set<std::string> optional = {"measured", "efficiency_curves", "calibration", "sms", "kernel_models"};
  const std::set<std::string> efficiency = {"gemm", "attention", "vector", "memory", "communication"};
  auto files = json_files("hardware");
  // The GPU profiles (fitted to kerneldb, or derived from a fitted sibling) and the
  // calibrated profile of the development machine; then the datasheet profiles the GPU
  // ones were made from.
  CHECK(names_of(files) == std::set<std::string>{"a100-80gb-sxm.json", "b200.json", "cpu-xeon-2c.json",
                                                 "h100-sxm.json", "h20.json", "h200.json"});
  const auto datasheets = json_files("hardware/datasheet");
  CHECK(names_of(datasheets) ==
        std::set<std::string>{"a100-80gb-sxm.json", "b200.json", "h100-sxm.json", "h20.json", "h200.json"});
  files.insert(files.end(), datasheets.begin(), datasheets.end());
  for (const auto& f : files) {
    INFO(f);
    const Json hw = read_json_file(f);
    REQUIRE(hw.is_object());
    for (const auto& [key, value] : hw.items()) CHECK(keys.count(key) == 1);
    for (const auto& key : keys)
      if (!optional.count(key)) CHECK(hw.contains(key));
    REQUIRE(hw["sources"].is_object());
    REQUIRE(hw["assumptions"].is_object());
    // Datasheet profiles describe GPUs; a calibrated one (hdlab calibrate) describes the
    // device it measured, CPU or GPU, and notes its own provenance.
    const bool calibrated = hw.contains("calibration");
    if (calibrated)
      CHECK(hw["kind"] == (hw["calibration"]["run"]["backend"] == "cuda" ? "gpu" : "cpu"));
    else
      CHECK(hw["kind"] == "gpu");

    if (hw.contains("efficiency_curves")) CHECK(hw.contains("calibration"));
    check_every_number_noted(hw, calibrated);

    for (const auto& [key, value] : hw["efficiency"].items()) {
      INFO(key);
      CHECK(efficiency.count(key) == 1);
      CHECK(value.get<double>() > 0.0);
      CHECK(value.get<double>() <= 1.0);
    }
    CHECK(hw["efficiency"].size() == efficiency.size());
    for (const char* key : {"peak_bf16_tflop_per_s", "peak_fp16_tflop_per_s", "peak_fp32_tflop_per_s", "memory_gb",
                            "memory_bandwidth_gb_per_s", "nvlink_bandwidth_gb_per_s", "pcie_bandwidth_gb_per_s"}) {
      INFO(key);
      if (calibrated && hw[key].is_null()) continue;  // a single device's calibration measures no links
      CHECK(hw[key].get<double>() > 0.0);
    }
    // NVLink is per direction: the profile must say so where it cites the figure.
    if (hw["sources"].contains("nvlink_bandwidth_gb_per_s"))
      CHECK(hw["sources"]["nvlink_bandwidth_gb_per_s"].get<std::string>().find("per direction") != std::string::npos);
    // Measurements come from models.md (which gives them for H100 and H200) or from hdlab
    // calibrate on the machine itself.
    if (hw.contains("measured"))
      for (const auto& [key, value] : hw["measured"].items())
        CHECK(hw["sources"]["measured." + key].get<std::string>().find(calibrated ? "hdlab calibrate" : "models.md") !=
              std::string::npos);
  }
}

TEST_CASE("the bundled GPU profiles are fitted to kerneldb or derived from a fitted sibling", "[profiles][hardware]") {
  auto hw = [](const char* name) { return read_json_file(profiles_dir() + "/hardware/" + name + ".json"); };
  // H100, A100 and B200: fitted on their own kerneldb folder, with held-out errors per class.
  for (const auto& [file, device] : std::vector<std::pair<const char*, const char*>>{
           {"h100-sxm", "h100_sxm"}, {"a100-80gb-sxm", "a100_sxm"}, {"b200", "b200_sxm"}}) {
    INFO(file);
    const Json h = hw(file);
    REQUIRE(h.contains("kernel_models"));
    const Json& fit = h["kernel_models"]["fit"];
    CHECK(fit["data"]["device"] == device);
    CHECK(fit["data"]["folder"] == std::string("profiles/kerneldb/") + device);
    REQUIRE(fit["held_out_errors"].is_array());
    std::set<std::string> classes;
    for (const auto& e : fit["held_out_errors"]) {
      classes.insert(e["class"].get<std::string>());
      CHECK(e["held_out_rows"].get<int>() > 0);
      CHECK(e["median_abs_error"].get<double>() <= e["p90_abs_error"].get<double>());
      CHECK(e["p90_abs_error"].get<double>() <= e["max_abs_error"].get<double>());
    }
    for (const char* c : {"gemm", "prefill_attention", "decode_attention", "all_reduce", "all_gather",
                          "reduce_scatter", "all_to_all"})
      CHECK(classes.count(c) == 1);
    CHECK(h["sources"]["kernel_models"].get<std::string>().find("--from-kerneldb") != std::string::npos);
  }
  // H200 and H20: no measured kernels; derived from the H100's and say so.
  for (const char* file : {"h200", "h20"}) {
    INFO(file);
    const Json h = hw(file);
    REQUIRE(h.contains("kernel_models"));
    CHECK(h["kernel_models"]["fit"]["derived_from"] == "h100_sxm");
    CHECK(h["sources"]["kernel_models"].get<std::string>().find("derived") != std::string::npos);
  }
}

TEST_CASE("hardware profiles carry the datasheet leads of models.md", "[profiles][hardware]") {
  auto hw = [](const char* name) { return read_json_file(profiles_dir() + "/hardware/" + name + ".json"); };
  struct Lead {
    const char* file;
    double bf16, fp32, memory_gb, hbm_gb_per_s, nvlink_bidirectional;
  };
  for (const Lead& l : {Lead{"h100-sxm", 989, 67, 80, 3350, 900}, Lead{"h200", 989, 67, 141, 4800, 900},
                        Lead{"h20", 148, 44, 96, 4000, 900}, Lead{"a100-80gb-sxm", 312, 19.5, 80, 2039, 600},
                        Lead{"b200", 2250, 75, 180, 8000, 1800}}) {
    INFO(l.file);
    const Json h = hw(l.file);
    CHECK(h["peak_bf16_tflop_per_s"].get<double>() == l.bf16);
    CHECK(h["peak_fp32_tflop_per_s"].get<double>() == l.fp32);
    CHECK(h["memory_gb"].get<double>() == l.memory_gb);
    CHECK(h["memory_bandwidth_gb_per_s"].get<double>() == l.hbm_gb_per_s);
    CHECK(h["nvlink_bandwidth_gb_per_s"].get<double>() * 2 == l.nvlink_bidirectional);
  }
  CHECK(hw("a100-80gb-sxm")["peak_fp8_tflop_per_s"].is_null());
  CHECK(hw("h100-sxm")["measured"]["gemm_bf16_tflop_per_s"] == 798);
  CHECK(hw("h200")["measured"]["gemm_bf16_tflop_per_s"] == 788);
}
