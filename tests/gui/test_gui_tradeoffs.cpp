// The trade-off curves the charts show: size axes, resizing a design, evaluation over
// the grids against the baseline, progress and cancel.
#include <catch2/catch.hpp>

#include "gui_test_support.hpp"
#include "hdlab/gui_core/tradeoffs.hpp"

using namespace hdlab;

TEST_CASE("size axes per method include the design's own size", "[gui][tradeoffs]") {
  const model::Config qwen = test::profile_config("qwen3-8b.json");
  auto axis = [&](const char* design) { return gui_core::size_axis(test::with_design(qwen, design)); };
  REQUIRE(axis(R"({"hd": {"n": 3}})"));
  CHECK(axis(R"({"hd": {"n": 3}})")->values == std::vector<double>{1, 2, 3, 4, 8, 16});
  CHECK(axis(R"({"phd": {"K": 2}})")->symbol == "K");
  CHECK(axis(R"({"looped": {"iterations": 4}})")->values == std::vector<double>{1, 2, 4, 8, 16, 32});
  // m = 4: every standard ratio gives a whole n.
  CHECK(axis(R"({"vwn": {"m": 4, "n": 6}})")->values == std::vector<double>{1, 1.5, 2, 3, 4, 8});
  // m = 1: 1.5 would need n = 1.5; the design's own 5/1 joins the list.
  CHECK(axis(R"({"vwn": {"m": 1, "n": 5}})")->values == std::vector<double>{1, 2, 3, 4, 5, 8});
  CHECK_FALSE(axis(R"({"baseline": {}})"));
  CHECK_FALSE(axis(R"({"growth": {"depth_factor": 1}})"));
}

TEST_CASE("with_size: HD keeps the local window's span in tokens - bad VWN sizes are refused", "[gui][tradeoffs]") {
  model::Design d;
  model::HdDesign hd;
  hd.n = 4;
  hd.window = 4 * 512;
  d.method = hd;
  d.name = "old name";
  const model::Design two = gui_core::with_size(d, 2);
  CHECK(std::get<model::HdDesign>(two.method).n == 2);
  CHECK(std::get<model::HdDesign>(two.method).window == 2 * 512);
  CHECK(two.name.empty());

  model::Design v;
  v.method = model::VwnDesign{2, 3};
  CHECK(std::get<model::VwnDesign>(gui_core::with_size(v, 4).method).n == 8);
  try {
    gui_core::with_size(v, 1.25);
    FAIL("expected a ConfigError");
  } catch (const model::ConfigError& e) {
    CHECK(e.pointer() == "/design/vwn/n");
  }
  CHECK(gui_core::short_label(d) == "HD n=4");
  CHECK(gui_core::short_label(v) == "VWN n/m=3/2");
  model::Design g;
  g.growth = model::GrowthDesign{};
  CHECK(gui_core::short_label(g) == "baseline grown");
}

TEST_CASE("trade-offs of Qwen3-8B + HD n=4 on an H100 against the backbone alone", "[gui][tradeoffs]") {
  const model::Config c = test::with_design(test::profile_config("qwen3-8b.json"), R"({"hd": {"n": 4, "layers": "full"}})");
  const simulator::HardwareProfile hw = test::h100();
  const simulator::Scenario s;
  gui_core::TradeoffGrid grid{{1, 8, 1024}, {4096, 32768}};
  std::vector<std::pair<int, int>> calls;
  const gui_core::Tradeoffs t = gui_core::compute_tradeoffs(c, hw, s, grid, [&](int done, int total) {
    calls.emplace_back(done, total);
    return true;
  });
  CHECK_FALSE(t.cancelled);
  // One call per evaluation step: the scenario point, 5 sizes, 3 batches, 2 contexts.
  REQUIRE(calls.size() == 11);
  CHECK(calls.back() == std::make_pair(11, 11));

  REQUIRE(t.axis);
  REQUIRE(t.by_size.size() == 5);
  const gui_core::SizePoint& n1 = t.by_size[0];
  const gui_core::SizePoint& n4 = t.by_size[2];
  REQUIRE(n1.x == 1);
  REQUIRE(n4.x == 4);
  CHECK(n1.error.empty());
  CHECK(n1.params_ratio == Approx(1.0));    // one embedding table: the backbone itself
  CHECK(n1.kv_bytes_ratio == Approx(1.0));
  CHECK(n4.kv_bytes_ratio == Approx(4.0));  // every stream's K/V is kept
  CHECK(n4.params_ratio > 1.0);
  CHECK(n4.prefill_ratio > n1.prefill_ratio);

  REQUIRE(t.decode_vs_batch.size() == 3);
  CHECK(t.decode_vs_batch[0].design_fits);
  CHECK_FALSE(t.decode_vs_batch[2].design_fits);  // 1024 sequences x 4 streams of KV at 4k
  CHECK(t.decode_vs_batch[1].design > t.decode_vs_batch[0].design);
  CHECK(t.decode_vs_batch[0].baseline > t.decode_vs_batch[0].design);
  REQUIRE(t.kv_vs_context.size() == 2);
  CHECK(t.kv_vs_context[1].design / t.kv_vs_context[1].baseline == Approx(4.0));
  CHECK(t.kv_vs_context[1].design / t.kv_vs_context[0].design == Approx(8.0));  // linear in context
  CHECK(t.design[simulator::Metric::params_total] > t.baseline[simulator::Metric::params_total]);
}

TEST_CASE("trade-offs stop when the progress callback says so, and scenario errors name their field",
          "[gui][tradeoffs]") {
  const model::Config c = test::with_design(test::profile_config("qwen3-8b.json"), R"({"hd": {"n": 2}})");
  const gui_core::TradeoffGrid grid{{1, 2}, {4096}};
  const gui_core::Tradeoffs t = gui_core::compute_tradeoffs(
      c, test::h100(), simulator::Scenario{}, grid, [](int done, int) { return done < 3; });
  CHECK(t.cancelled);
  CHECK(t.by_size.size() == 2);
  CHECK(t.decode_vs_batch.empty());

  simulator::Scenario bad;
  bad.parallel.tp = 3;  // 32 query heads cannot be split 3 ways
  try {
    gui_core::compute_tradeoffs(c, test::h100(), bad, grid);
    FAIL("expected a ConfigError");
  } catch (const model::ConfigError& e) {
    CHECK(e.pointer() == "/scenario/parallel/tp");
  }
  const gui_core::TradeoffGrid g = gui_core::default_grid(c, simulator::Scenario{});
  CHECK(g.batches.front() == 1);
  CHECK(g.batches.back() == 1024);
  CHECK(g.contexts.back() == 32768);  // Qwen3-8B's native context
}
