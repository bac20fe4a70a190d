// The layer schedule every consumer reads (model/schedule.hpp): positions per token, each
// layer's loop role, passes per token and KV caches.
#include <catch2/catch.hpp>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/schedule.hpp"

using namespace hdlab::model;

namespace {

Config tiny_with(const char* design) {
  const Json backbone = Json::parse(R"({"name": "tiny", "num_layers": 6, "hidden_size": 64, "num_heads": 4,
    "num_kv_heads": 2, "intermediate_size": 128, "vocab_size": 100})");
  return parse_config(Json{{"backbone", backbone}, {"design", Json::parse(design)}});
}

}  // namespace

TEST_CASE("positions per token: HD's streams, PHD's copies, one otherwise", "[schedule]") {
  CHECK(copies_per_token(tiny_with(R"({"baseline": {}})").design.method) == 1);
  CHECK(copies_per_token(tiny_with(R"({"hd": {"n": 4}})").design.method) == 4);
  CHECK(copies_per_token(tiny_with(R"({"phd": {"K": 3}})").design.method) == 3);
  CHECK(copies_per_token(tiny_with(R"({"vwn": {"m": 2, "n": 3}})").design.method) == 1);
  CHECK(copies_per_token(tiny_with(R"({"looped": {"prelude": 1, "recurrent": 4, "coda": 1, "iterations": 3}})")
                             .design.method) == 1);
}

TEST_CASE("looped schedule: prelude once, the recurrent block K times, coda once", "[schedule][looped]") {
  const Config per_iteration =
      tiny_with(R"({"looped": {"prelude": 1, "recurrent": 4, "coda": 1, "iterations": 3, "kv": "per_iteration"}})");
  const Config shared = tiny_with(R"({"looped": {"prelude": 2, "recurrent": 3, "coda": 1, "iterations": 5, "kv": "shared"}})");
  const LoopRole roles[] = {LoopRole::prelude,   LoopRole::recurrent, LoopRole::recurrent,
                            LoopRole::recurrent, LoopRole::recurrent, LoopRole::coda};
  for (std::int64_t l = 0; l < 6; ++l) {
    INFO("layer " << l);
    const LayerSchedule s = layer_schedule(per_iteration.design.method, l);
    CHECK(s.role == roles[l]);
    CHECK(s.passes == (s.role == LoopRole::recurrent ? 3 : 1));
    CHECK(s.kv_caches == s.passes);  // a cache per iteration
  }
  // Shared KV: the block runs 5 times over one cache.
  CHECK(layer_schedule(shared.design.method, 1).role == LoopRole::prelude);
  const LayerSchedule r = layer_schedule(shared.design.method, 2);
  CHECK((r.role == LoopRole::recurrent && r.passes == 5 && r.kv_caches == 1));
  CHECK(layer_schedule(shared.design.method, 5).role == LoopRole::coda);
  CHECK(std::string(to_string(LoopRole::recurrent)) == "recurrent");
}

TEST_CASE("designs without a loop run every layer once with one cache", "[schedule]") {
  for (const char* d : {R"({"baseline": {}})", R"({"hd": {"n": 2}})", R"({"phd": {"K": 2}})", R"({"vwn": {"m": 2, "n": 3}})"}) {
    const Config c = tiny_with(d);
    for (std::int64_t l = 0; l < 6; ++l) {
      const LayerSchedule s = layer_schedule(c.design.method, l);
      CHECK((s.role == LoopRole::none && s.passes == 1 && s.kv_caches == 1));
    }
  }
}

TEST_CASE("layer runs: execution order, iterations and cache slots", "[schedule][looped]") {
  SECTION("a straight design runs each layer once into its own cache") {
    const auto runs = layer_runs(tiny_with(R"({"hd": {"n": 2}})").design.method, 6);
    REQUIRE(runs.size() == 6);
    for (std::int64_t l = 0; l < 6; ++l) {
      const LayerRun& r = runs[static_cast<std::size_t>(l)];
      CHECK((r.layer == l && r.iteration == 0 && r.cache_slot == l && r.commits_kv && !r.overwrites_kv &&
             !r.iteration_start));
    }
  }
  SECTION("per-iteration KV: a cache set per iteration, the coda's slots after them") {
    const auto runs = layer_runs(
        tiny_with(R"({"looped": {"prelude": 1, "recurrent": 4, "coda": 1, "iterations": 3, "kv": "per_iteration",
                               "input_injection": true}})")
            .design.method,
        6);
    REQUIRE(runs.size() == 1 + 4 * 3 + 1);
    CHECK((runs[0].layer == 0 && runs[0].cache_slot == 0));
    // iteration 1, second recurrent layer (layer 2): slot P + 1*R + 1 = 6
    const LayerRun& r = runs[1 + 4 + 1];
    CHECK((r.layer == 2 && r.iteration == 1 && r.cache_slot == 6 && r.commits_kv && !r.overwrites_kv));
    CHECK(runs[1 + 4].iteration_start);   // layer 1 starts iteration 1: the adapter runs
    CHECK_FALSE(runs[1 + 4 + 1].iteration_start);
    CHECK((runs.back().layer == 5 && runs.back().cache_slot == 1 + 3 * 4));
  }
  SECTION("shared KV: one cache set, the last iteration commits, later ones overwrite") {
    const auto runs =
        layer_runs(tiny_with(R"({"looped": {"prelude": 1, "recurrent": 4, "coda": 1, "iterations": 3, "kv": "shared"}})")
                       .design.method,
                   6);
    REQUIRE(runs.size() == 14);
    for (std::size_t i = 1; i < 13; ++i) {
      const LayerRun& r = runs[i];
      INFO("run " << i);
      CHECK(r.cache_slot == r.layer);  // the block's slots are its layers' own
      CHECK(r.commits_kv == (r.iteration == 2));
      CHECK(r.overwrites_kv == (r.iteration > 0));
    }
    CHECK(runs.back().cache_slot == 5);
  }
}
