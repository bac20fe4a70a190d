// Validation files: expansion into cases, errors that name the JSON pointer, the
// held-out check, and the bundled files (parse, cover every design family, held out
// from the bundled calibrated profile).
#include <catch2/catch.hpp>

#include <set>

#include "hdlab/calibration/validation.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"

using namespace hdlab;
using namespace hdlab::calibration;
using nlohmann::json;

namespace {

const std::string kDir = std::string(HDLAB_SOURCE_DIR) + "/profiles/validation";

json valid() {
  return json::parse(R"({
    "description": "test",
    "models": {"small": {"path": "../models/tiny-dense.json", "scale": {"hidden": 96, "heads": 3, "kv_heads": 1, "head_dim": 32}}},
    "designs": {"base": {}, "hd": {"design": "hd:n=2", "layout": "stream_major"}, "phd": {"design": {"phd": {"K": 2}}}},
    "cases": [{"model": "small", "designs": ["base", "hd", "phd"], "phases": ["prefill", "decode"], "tokens": [40, 72]}]
  })");
}

std::string error_of(const json& j) {
  try {
    parse_validation(j, kDir);
  } catch (const model::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a validation file expands into designs x phases x tokens", "[validation]") {
  const ValidationSpec s = parse_validation(valid(), kDir);
  REQUIRE(s.cases.size() == 3 * 2 * 2);
  CHECK(s.cases[0].label == "small base prefill L=40");
  CHECK(s.cases[0].group == "small prefill L=40");
  CHECK(s.cases[0].config.effective.hidden == 96);
  CHECK(s.cases[4].design == "hd");
  CHECK(s.cases[4].effective_layout() == model::Layout::stream_major);
  CHECK(s.cases[8].effective_layout() == model::Layout::phd_split);  // PHD's default
  CHECK(s.warmup == 2);
  CHECK(s.repeats == 7);
  CHECK(s.rounds == 1);
  CHECK(s.tile_q == 64);
}

TEST_CASE("validation file errors name the JSON pointer", "[validation][errors]") {
  json j = valid();
  j["colour"] = "red";
  CHECK(error_of(j) == "/colour: unknown key");
  j = valid();
  j["cases"][0]["designs"][1] = "hdd";
  CHECK(error_of(j) == "/cases/0/designs/1: unknown design \"hdd\" (known: base, hd, phd)");
  j = valid();
  j["cases"] = json::array();
  CHECK(error_of(j) == "/cases: must list at least one case");
  j = valid();
  j["cases"][0]["phases"][1] = "decod";
  CHECK(error_of(j) == "/cases/0/phases/1: must be one of prefill, decode, train-forward, got \"decod\"");
  j = valid();
  j["cases"][0]["model"] = "big";
  CHECK(error_of(j) == "/cases/0/model: unknown model \"big\" (known: small)");
  j = valid();
  j["attention"] = {{"tile_q", 128}};
  CHECK(error_of(j) == "/attention/tile_q: the executor's attention tiles are 64 query rows");
  j = valid();
  j["designs"]["hd"]["layout"] = "diagonal";
  CHECK(error_of(j).rfind("/designs/hd/layout: ", 0) == 0);
  j = valid();
  j["designs"]["hd"]["design"] = {{"hd", {{"n", 0}}}};
  CHECK(error_of(j).rfind("/cases/0/designs/1: design \"hd\" on model \"small\": /design/hd/n", 0) == 0);
  j = valid();
  j["models"]["small"]["scale"]["hiden"] = 64;
  CHECK(error_of(j) == "/models/small/scale/hiden: unknown key (did you mean \"hidden\"?)");
  j = valid();
  j["models"]["small"]["path"] = "../models/qwen3-8b.json";  // bf16: the CPU runs fp32 only
  CHECK(error_of(j).rfind("/models/small/path: the cpu backend runs fp32 only", 0) == 0);
  j = valid();
  j["measure"] = {{"rounds", 0}};
  CHECK(error_of(j) == "/measure/rounds: must be >= 1, got 0");
  j = valid();
  j["cases"].push_back(j["cases"][0]);
  CHECK(error_of(j) == "/cases/1: case \"small base prefill L=40\" appears twice");
}

TEST_CASE("a case that shares a GEMM or attention shape with the calibration is not held out", "[validation]") {
  const ValidationSpec s = parse_validation(valid(), kDir);
  const ValidationCase& c = s.cases[0];  // base prefill of 40 tokens: q projection 40 x 96 x 96
  Sample g;
  g.bench = BenchKind::gemm;
  g.name = "gemm M=40 N=96 K=96";
  g.shape = {40, 96, 96};
  Sample other = g;
  other.shape = {41, 96, 96};
  CHECK(overlaps(c, {other}).empty());
  const auto hits = overlaps(c, {other, g});
  REQUIRE(hits.size() == 1);
  CHECK(hits[0] == "GEMM 40x96x96 (M x N x K) is calibration sample \"gemm M=40 N=96 K=96\"");
  Sample a;
  a.bench = BenchKind::attention;
  a.name = "attention L=40";
  a.shape = {40, 40, 3, 1, 32};  // rows, keys, H, G, hd of the scaled model
  CHECK(overlaps(c, {a}).size() == 1);
}

TEST_CASE("the bundled validation files cover every design family and are held out", "[validation][profiles]") {
  const auto hw = simulator::parse_hardware_profile(
      model::read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/hardware/cpu-xeon-2c.json"));
  const std::vector<Sample> calibration = calibration_samples(hw);
  REQUIRE_FALSE(calibration.empty());
  for (const char* file : {"cpu.json", "cpu-ci.json"}) {
    INFO(file);
    const ValidationSpec s = parse_validation(model::read_json_file(kDir + "/" + file), kDir);
    std::set<std::string> families, phases, hd_layouts, hd_kinds, phd_variants;
    for (const ValidationCase& c : s.cases) {
      CHECK(overlaps(c, calibration).empty());
      const model::Method& m = c.config.design.method;
      families.insert(std::holds_alternative<model::BaselineDesign>(m) ? "baseline"
                      : std::holds_alternative<model::HdDesign>(m)     ? "hd"
                      : std::holds_alternative<model::PhdDesign>(m)    ? "phd"
                      : std::holds_alternative<model::VwnDesign>(m)    ? "vwn"
                                                                       : "looped");
      if (c.config.effective.moe) families.insert("moe");
      phases.insert(executor::to_string(c.phase));
      if (const auto* hd = std::get_if<model::HdDesign>(&m)) {
        hd_layouts.insert(model::to_string(c.effective_layout()));
        for (auto k : hd->layer_kinds) hd_kinds.insert(model::to_string(k));
      }
      if (const auto* phd = std::get_if<model::PhdDesign>(&m); phd && c.phase != executor::Phase::train_forward)
        phd_variants.insert(std::string(model::to_string(phd->variant)) + " " + executor::to_string(c.phase));
    }
    CHECK(phases == std::set<std::string>{"prefill", "decode", "train-forward"});
    if (std::string(file) == "cpu.json") {
      CHECK(families == std::set<std::string>{"baseline", "hd", "phd", "vwn", "looped", "moe"});
      CHECK(hd_layouts == std::set<std::string>{"interleaved", "stream_major"});
      CHECK(hd_kinds == std::set<std::string>{"full", "local", "intra"});
      CHECK(phd_variants == std::set<std::string>{"plain prefill", "plain decode", "swa prefill", "swa decode",
                                                  "cswa prefill", "cswa decode"});
    }
  }
}
