// RoPE scaling: the frequencies rotary_frequencies computes for each type at small sizes,
// worked out by hand from transformers' formulas, and the backbone format's rope_scaling
// object (round trip, refusals by JSON pointer).
#include <catch2/catch.hpp>

#include <cmath>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/rope.hpp"

using namespace hdlab::model;

namespace {

// A backbone of one head of `rotary` dims with base theta and the given scaling.
Backbone rope_backbone(std::int64_t rotary, double theta, RopeScaling s, std::int64_t max_context = 0) {
  Backbone b;
  b.head_dim = rotary;
  b.rope_theta = theta;
  b.max_context = max_context;
  b.rope_scaling = std::move(s);
  return b;
}

RopeScaling scaling(RopeScalingKind kind, double factor, std::int64_t original = 0) {
  RopeScaling s;
  s.kind = kind;
  s.factor = factor;
  s.original_context = original;
  return s;
}

void check_freqs(const RotaryFrequencies& f, const std::vector<double>& want) {
  REQUIRE(f.inv_freq.size() == want.size());
  for (std::size_t j = 0; j < want.size(); ++j) {
    INFO("pair " << j);
    CHECK(f.inv_freq[j] == Approx(want[j]).epsilon(1e-12));
  }
}

std::string error_of(const Json& backbone) {
  try {
    (void)parse_backbone(backbone);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

Json tiny() {
  return Json::parse(R"({"name": "tiny", "num_layers": 2, "hidden_size": 64, "num_heads": 4, "intermediate_size": 128,
                         "vocab_size": 100, "max_context": 4096})");
}

std::string scaling_error(const char* rope_scaling, std::int64_t max_context = 4096) {
  Json j = tiny();
  j["rope_scaling"] = Json::parse(rope_scaling);
  j["max_context"] = max_context;
  return error_of(j);
}

}  // namespace

TEST_CASE("RoPE frequencies of every scaling type, worked out by hand", "[rope]") {
  using K = RopeScalingKind;
  // Plain, r = 4, theta 100: 100^(-2j/4) = 1, 0.1. Linear by 4: 0.25, 0.025.
  check_freqs(rotary_frequencies(rope_backbone(4, 100, {}), 100, 0), {1, 0.1});
  check_freqs(rotary_frequencies(rope_backbone(4, 100, scaling(K::linear, 4)), 100, 0), {0.25, 0.025});
  // Dynamic NTK, factor 2 past max_context 10: 20 positions make the base
  // 100 (2 x 20 / 10 - 1)^(4 / 2) = 900, so 1, 900^(-1/2) = 1/30; 10 positions or fewer: plain.
  const Backbone dyn = rope_backbone(4, 100, scaling(K::dynamic, 2), 10);
  check_freqs(rotary_frequencies(dyn, 100, 20), {1, 1.0 / 30});
  check_freqs(rotary_frequencies(dyn, 100, 10), {1, 0.1});
  // YaRN, r = 8, theta 10^4, factor 4 over 64 positions, betas 32 / 1: the pair index at
  // which a frequency turns b times in 64 positions is 8 ln(64 / (2 pi b)) / (2 ln 10^4):
  // -0.497 for 32 (floor, then 0) and 1.008 for 1 (ceil: 2), so the ramp is j / 2: pairs
  // 10^-j keep 1, blend 0.1 (1/2 + 1/8) = 0.0625, and divide 0.01, 0.001 by 4. cos/sin x
  // 0.1 ln 4 + 1 = 1.1386294361.
  RotaryFrequencies y = rotary_frequencies(rope_backbone(8, 1e4, scaling(K::yarn, 4, 64)), 1e4, 0);
  check_freqs(y, {1, 0.0625, 0.0025, 0.00025});
  CHECK(y.cos_sin_factor == Approx(1.138629436111989).epsilon(1e-12));
  CHECK(y.softmax_factor == 1);  // not MLA
  // Untruncated (gpt-oss): the ramp is j / 1.0080001056, pair 1 = 0.1 - 0.075 / 1.008 = 0.0255952459.
  RopeScaling untruncated = scaling(K::yarn, 4, 64);
  untruncated.truncate = false;
  check_freqs(rotary_frequencies(rope_backbone(8, 1e4, untruncated), 1e4, 0),
              {1, 0.02559524589192421, 0.0025, 0.00025});
  // DeepSeek's mscale 1 / mscale_all_dim 0.5: cos/sin x (0.1 ln 4 + 1) / (0.05 ln 4 + 1) =
  // 1.0648216254; an MLA backbone's softmax scale x (0.05 ln 4 + 1)^2 = 1.1434339663.
  RopeScaling deepseek = scaling(K::yarn, 4, 64);
  deepseek.mscale = 1;
  deepseek.mscale_all_dim = 0.5;
  Backbone mla = rope_backbone(16, 1e4, deepseek);
  mla.mla = MlaConfig{0, 32, 8, 8, 8};
  y = rotary_frequencies(mla, 1e4, 0);
  check_freqs(y, {1, 0.0625, 0.0025, 0.00025});  // MLA rotates qk_rope_head_dim = 8
  CHECK(y.cos_sin_factor == Approx(1.0648216253695715).epsilon(1e-12));
  CHECK(y.softmax_factor == Approx(1.143433966251171).epsilon(1e-12));
  // An explicit attention_factor wins.
  deepseek.attention_factor = 0.75;
  CHECK(rotary_frequencies(rope_backbone(8, 1e4, deepseek), 1e4, 0).cos_sin_factor == 0.75);
}

TEST_CASE("RoPE frequencies: Llama 3.1's bands and LongRoPE's factors, by hand", "[rope]") {
  using K = RopeScalingKind;
  // Llama 3: r = 8, theta 10^4 (frequencies 10^-j, wavelengths 2 pi 10^j), factor 8, original
  // 1000, low 1, high 4: wavelengths below 1000 / 4 = 250 keep (6.28, 62.8), above 1000 / 1
  // divide by 8 (6283: 0.000125), 628.3 blends with smooth = (1000 / 628.3185 - 1) / 3 =
  // 0.1971831436: 0.01 ((1 - smooth) / 8 + smooth) = 0.0029753525.
  RopeScaling llama3 = scaling(K::llama3, 8, 1000);
  llama3.low_freq_factor = 1;
  llama3.high_freq_factor = 4;
  const RotaryFrequencies l = rotary_frequencies(rope_backbone(8, 1e4, llama3), 1e4, 0);
  check_freqs(l, {1, 0.1, 0.002975352506846947, 0.000125});
  CHECK(l.cos_sin_factor == 1);
  // LongRoPE: r = 4, theta 100, factor 4 over 16 positions: short_factor [1, 2] for
  // sequences of up to 16 positions (1, 0.05), long_factor [4, 8] past (0.25, 0.0125);
  // cos/sin x sqrt(1 + ln 4 / ln 16) = sqrt(1.5) either way.
  RopeScaling lr = scaling(K::longrope, 4, 16);
  lr.short_factor = {1, 2};
  lr.long_factor = {4, 8};
  const Backbone b = rope_backbone(4, 100, lr);
  const RotaryFrequencies shrt = rotary_frequencies(b, 100, 16), lng = rotary_frequencies(b, 100, 17);
  check_freqs(shrt, {1, 0.05});
  check_freqs(lng, {0.25, 0.0125});
  CHECK(shrt.cos_sin_factor == Approx(std::sqrt(1.5)).epsilon(1e-12));
  CHECK(lng.cos_sin_factor == Approx(std::sqrt(1.5)).epsilon(1e-12));
  // Partial RoPE: the frequencies spread over rotary_dim (2 of a head of 4): one pair.
  Backbone partial = rope_backbone(4, 100, {});
  partial.rotary_dim = 2;
  check_freqs(rotary_frequencies(partial, 100, 0), {1});
}

TEST_CASE("rope_scaling round-trips through the backbone JSON, defaults written out", "[rope][config]") {
  for (const char* s :
       {R"({"type": "linear", "factor": 2})", R"({"type": "dynamic", "factor": 4})",
        R"({"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "mscale": 0.707,
            "mscale_all_dim": 0.707})",
        R"({"type": "yarn", "factor": 32, "truncate": false, "attention_factor": 1.2, "full_attention_only": true})",
        R"({"type": "llama3", "factor": 8, "original_max_position_embeddings": 8192, "low_freq_factor": 1,
            "high_freq_factor": 4})",
        R"({"type": "longrope", "short_factor": [1, 1, 1, 1, 1, 1, 1, 1], "long_factor": [1, 2, 3, 4, 5, 6, 7, 8],
            "original_max_position_embeddings": 1024, "factor": 4})"}) {
    INFO(s);
    Json j = tiny();
    j["rope_scaling"] = Json::parse(s);
    const Backbone b = parse_backbone(j);
    CHECK(b.rope_scaling.kind != RopeScalingKind::none);
    const Json out = to_json(b);
    CHECK(parse_backbone(out) == b);
    const Json written = Json::parse(s);
    for (const auto& [key, value] : written.items()) CHECK(out["rope_scaling"][key] == value);
  }
  // YaRN's defaults are written; a backbone without scaling writes no rope_scaling.
  Json j = tiny();
  j["rope_scaling"] = Json::parse(R"({"type": "yarn", "factor": 4})");
  const Json out = to_json(parse_backbone(j));
  CHECK(out["rope_scaling"] == Json::parse(R"({"type": "yarn", "factor": 4.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                              "truncate": true})"));
  CHECK_FALSE(to_json(parse_backbone(tiny())).contains("rope_scaling"));
  j["rope_scaling"] = Json::parse(R"({"type": "none"})");
  CHECK(parse_backbone(j).rope_scaling == RopeScaling{});
}

TEST_CASE("bad rope_scaling is refused by JSON pointer", "[rope][config][errors]") {
  CHECK(scaling_error(R"({"type": "ntk", "factor": 2})") ==
        "/backbone/rope_scaling/type: must be one of none, linear, dynamic, yarn, llama3, longrope, got \"ntk\"");
  CHECK(scaling_error(R"({"factor": 2})") == "/backbone/rope_scaling/type: is required");
  CHECK(scaling_error(R"({"type": "linear"})") == "/backbone/rope_scaling/factor: is required");
  CHECK(scaling_error(R"({"type": "linear", "factor": 0.5})") ==
        "/backbone/rope_scaling/factor: must be >= 1.0, got 0.5");
  CHECK(scaling_error(R"({"type": "linear", "factor": 2, "beta_fast": 32})") ==
        "/backbone/rope_scaling/beta_fast: unknown key");
  CHECK(scaling_error(R"({"type": "yarn", "factor": 2, "beta_fast": 1, "beta_slow": 2})") ==
        "/backbone/rope_scaling/beta_fast: must be >= beta_slow (2.0)");
  CHECK(scaling_error(R"({"type": "yarn", "factor": 2, "attention_factor": 0})") ==
        "/backbone/rope_scaling/attention_factor: must be > 0");
  CHECK(scaling_error(R"({"type": "yarn", "factor": 2})", 0) ==
        "/backbone/rope_scaling/original_max_position_embeddings: is required (>= 2) with yarn scaling when "
        "max_context is not stated");
  CHECK(scaling_error(R"({"type": "dynamic", "factor": 2})", 0) ==
        "/backbone/max_context: is required (>= 1) with dynamic RoPE scaling: the base grows past it");
  CHECK(scaling_error(R"({"type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4})") ==
        "/backbone/rope_scaling/original_max_position_embeddings: is required");
  CHECK(scaling_error(R"({"type": "llama3", "factor": 8, "original_max_position_embeddings": 8192,
                          "low_freq_factor": 4, "high_freq_factor": 4})") ==
        "/backbone/rope_scaling/high_freq_factor: must be greater than low_freq_factor (4.0)");
  CHECK(scaling_error(R"({"type": "longrope", "short_factor": [1, 1], "long_factor": [1, 1]})") ==
        "/backbone/rope_scaling/short_factor: must have one number per rotated pair, 8, got 2");
  CHECK(scaling_error(R"({"type": "longrope", "short_factor": [1, 1, 1, 1, 1, 1, 1, 0], "long_factor": [1]})") ==
        "/backbone/rope_scaling/short_factor/7: must be > 0");
  Json learned = tiny();
  learned["positions"] = "learned";
  learned["rope_scaling"] = Json::parse(R"({"type": "linear", "factor": 2})");
  CHECK(error_of(learned) == "/backbone/rope_scaling: applies to rope positions only, the backbone has learned");
}
