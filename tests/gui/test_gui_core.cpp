// The Qt-free helpers behind the GUI views: number formatting, mask pictures and tile
// grids, the layer strip, validation points, the profile catalog, error-field matching.
#include <catch2/catch.hpp>

#include "gui_test_support.hpp"
#include "hdlab/gui_core/catalog.hpp"
#include "hdlab/gui_core/field_errors.hpp"
#include "hdlab/gui_core/layer_strip.hpp"
#include "hdlab/gui_core/mask_picture.hpp"
#include "hdlab/gui_core/units.hpp"
#include "hdlab/gui_core/validation_points.hpp"

using namespace hdlab;

namespace {

const char* kTinyBackbone = R"({"name": "tiny", "num_layers": 4, "hidden_size": 64, "num_heads": 4,
  "num_kv_heads": 2, "intermediate_size": 128, "vocab_size": 100})";

model::Config tiny(const std::string& design) {
  const model::Backbone b = model::parse_backbone(model::Json::parse(kTinyBackbone));
  return model::make_config(b, model::parse_design(model::Json::parse(design), b));
}

}  // namespace

TEST_CASE("units: counts, seconds, bytes and metrics carry their units", "[gui][units]") {
  using namespace gui_core;
  CHECK(format_count(1234567) == "1,234,567");
  CHECK(format_count(-1000) == "-1,000");
  CHECK(format_count(999) == "999");
  CHECK(format_count(INT64_MIN) == "-9,223,372,036,854,775,808");
  CHECK(format_seconds(0.00335) == "3.35 ms");
  CHECK(format_seconds(1.2) == "1.20 s");
  CHECK(format_seconds(90) == "1.50 min");
  CHECK(format_bytes(16.1e9) == "16.1 GB");
  CHECK(format_bytes(96) == "96.0 B");
  CHECK(format_si(999.96, "B") == "1.00 kB");  // rounds up into the next prefix
  CHECK(format_si(12345, "tokens/s") == "12.3 k tokens/s");
  CHECK(format_si(0, "s") == "0 s");
  CHECK(format_params(8.19e9) == "8.19 B params");
  CHECK(format_ratio(1.234) == "1.23x");
  CHECK(format_metric(simulator::Metric::train_fits, 0) == "no");
  CHECK(format_metric(simulator::Metric::train_mfu_fraction, 0.577) == "57.7 %");
  CHECK(format_metric(simulator::Metric::kv_bytes, 2e9) == "2.00 GB");
  CHECK(unit_of_column("decode_tokens_per_s") == "tokens/s");
  CHECK(unit_of_column("prefill_s") == "s");
  CHECK(unit_of_column("serving_b8_in1024_fits") == "1");
  CHECK(unit_of_column("mystery").empty());
}

TEST_CASE("mask picture: HD intra cells hold the key's stream, physical order follows the layout", "[gui][mask]") {
  const model::Config c = tiny(R"({"hd": {"n": 2, "layers": ["full", "intra", "intra", "full"]}})");
  const model::MaskSpec spec = model::layer_mask(c, 1, 3);  // intra, 3 tokens x 2 streams
  REQUIRE(spec.kind == model::MaskSpec::Kind::intra);
  const gui_core::MaskPicture logical = gui_core::mask_picture(spec, model::Layout::interleaved);
  REQUIRE(logical.rows == 6);
  REQUIRE(logical.cols == 6);
  for (std::int64_t q = 0; q < 6; ++q)
    for (std::int64_t k = 0; k < 6; ++k) {
      const bool visible = k <= q && k % 2 == q % 2;  // same stream, causal
      CHECK(logical.at(q, k) == (visible ? k % 2 : -1));
    }
  const gui_core::MaskPicture physical = gui_core::mask_picture(spec, model::Layout::stream_major);
  CHECK(physical.col_logical == std::vector<std::int64_t>{0, 2, 4, 1, 3, 5});
  // Stream-major makes intra visibility two dense triangles: rows 0..2 see columns 0..2.
  CHECK(physical.at(2, 0) == 0);
  CHECK(physical.at(2, 3) == -1);
  CHECK(physical.at(5, 3) == 1);
  CHECK(physical.at(3, 0) == -1);
}

TEST_CASE("mask picture: KV-mirror rows are the final stream's queries", "[gui][mask]") {
  const model::Config c = test::profile_config("welm-80b.json");
  const model::MaskSpec spec = model::layer_mask(c, 48, 4);  // mirrors layer 0
  REQUIRE(spec.final_copy_queries_only);
  const gui_core::MaskPicture p = gui_core::mask_picture(spec, model::Layout::interleaved);
  CHECK(p.rows == 4);
  CHECK(p.cols == 16);
  CHECK(p.row_logical == std::vector<std::int64_t>{3, 7, 11, 15});
}

TEST_CASE("tile grid from the picture agrees with the closed-form tile counts", "[gui][mask]") {
  const model::Config hd = tiny(R"({"hd": {"n": 4, "layers": ["full", "intra", "local", "full"], "window": 6}})");
  const model::Config phd = tiny(R"({"phd": {"K": 3, "variant": "cswa", "W": 2, "C": 3}})");
  for (const model::Config* c : {&hd, &phd})
    for (std::int64_t layer = 0; layer < 4; ++layer)
      for (auto layout : {model::Layout::interleaved, model::Layout::stream_major, model::Layout::phd_split})
        for (std::int64_t B : {1, 3, 4, 7}) {
          const model::MaskSpec spec = model::layer_mask(*c, layer, 9);
          const gui_core::MaskPicture p = gui_core::mask_picture(spec, layout);
          const gui_core::TileGrid g = gui_core::tile_grid(p, B, B + 1);
          std::int64_t visible = 0, full = 0;
          for (auto s : g.tiles) {
            visible += s != gui_core::TileState::skipped;
            full += s == gui_core::TileState::full;
          }
          const model::TileCount expected = model::visible_tiles(spec, layout, B, B + 1);
          INFO("layer " << layer << " layout " << model::to_string(layout) << " B " << B);
          CHECK(visible == expected.visible);
          CHECK(full == expected.full);
          CHECK(static_cast<std::int64_t>(g.tiles.size()) == expected.total);
        }
}

TEST_CASE("mask picture refuses more positions than it can show, naming the field", "[gui][mask]") {
  const model::Config c = tiny(R"({"hd": {"n": 4, "layers": "full"}})");
  const model::MaskSpec spec = model::layer_mask(c, 0, gui_core::max_picture_tokens(4) + 1);
  try {
    gui_core::mask_picture(spec, model::Layout::interleaved);
    FAIL("expected a ConfigError");
  } catch (const model::ConfigError& e) {
    CHECK(e.pointer() == "/mask/tokens");
  }
  CHECK(gui_core::max_picture_tokens(4) * 4 == gui_core::max_picture_positions);
  CHECK(gui_core::max_picture_tokens(4096) == 1);
  const gui_core::MaskCounts n = gui_core::mask_counts(spec, model::Layout::interleaved, 128, 128);
  CHECK(n.visible_pairs == model::visible_pairs(spec));
  CHECK(n.all_pairs == spec.positions() * spec.positions());
}

TEST_CASE("layer strip: WeLM-80B's published HD layout and its KV-mirror pairs", "[gui][strip]") {
  const model::Config c = test::profile_config("welm-80b.json");
  const gui_core::LayerStrip s = gui_core::layer_strip(c);
  REQUIRE(s.layers.size() == 49);
  CHECK(s.method == "hd");
  CHECK(s.copies == 4);
  int intra = 0, local = 0, full = 0;
  for (const auto& l : s.layers) {
    intra += l.attention == gui_core::LayerAttentionKind::intra;
    local += l.attention == gui_core::LayerAttentionKind::local;
    full += l.attention == gui_core::LayerAttentionKind::full;
    CHECK(l.moe);
    CHECK(l.stage == -1);
  }
  CHECK(intra == 20);
  CHECK(local == 23);
  CHECK(full == 6);
  REQUIRE(s.mirror_pairs.size() == 16);
  for (std::int64_t x = 0; x < 16; ++x) {
    CHECK(s.mirror_pairs[static_cast<std::size_t>(x)].first == 15 - x);
    CHECK(s.mirror_pairs[static_cast<std::size_t>(x)].second == 33 + x);
    CHECK(s.layers[static_cast<std::size_t>(33 + x)].final_copy_only);
  }
  CHECK_FALSE(s.layers[32].final_copy_only);
  const auto& local_layer = s.layers[2];
  CHECK(local_layer.attention == gui_core::LayerAttentionKind::local);
  CHECK(local_layer.window == 4096 * 4);  // the backbone's 4096 tokens, in expanded positions
  CHECK(gui_core::describe(local_layer, 4).find("16,384 expanded positions") != std::string::npos);
}

TEST_CASE("layer strip: loop roles, grown layers and pipeline stages", "[gui][strip]") {
  const model::Config huginn = test::profile_config("huginn-3.5b.json");
  const gui_core::LayerStrip h = gui_core::layer_strip(huginn);
  REQUIRE(h.layers.size() == 8);
  CHECK(h.loop_iterations == 32);
  const gui_core::LoopRole expected[] = {gui_core::LoopRole::prelude,   gui_core::LoopRole::prelude,
                                         gui_core::LoopRole::recurrent, gui_core::LoopRole::recurrent,
                                         gui_core::LoopRole::recurrent, gui_core::LoopRole::recurrent,
                                         gui_core::LoopRole::coda,      gui_core::LoopRole::coda};
  for (int l = 0; l < 8; ++l) CHECK(h.layers[static_cast<std::size_t>(l)].loop == expected[l]);

  const model::Config grown =
      test::with_design(test::profile_config("growth-3b.json"), R"({"growth": {"depth_factor": 2}})");
  const gui_core::LayerStrip g = gui_core::layer_strip(grown, std::vector<std::int64_t>(40, 0));
  REQUIRE(g.layers.size() == 40);
  for (std::int64_t l = 0; l < 40; ++l) CHECK(g.layers[static_cast<std::size_t>(l)].grown_from == l / 2);
  CHECK(g.stages == 1);
  CHECK_THROWS_AS(gui_core::layer_strip(grown, {0, 1}), model::ConfigError);
}

TEST_CASE("validation points: parse, reject with pointers, summarize", "[gui][validation]") {
  const auto points = gui_core::parse_validation_points(model::Json::parse(R"({"points": [
      {"design": "hd n=4", "label": "decode", "predicted_s": 1.1, "measured_s": 1.0},
      {"design": "baseline", "predicted_s": 0.5, "measured_s": 1.0},
      {"design": "hd n=4", "predicted_s": 2.0, "measured_s": 2.0}]})"));
  REQUIRE(points.size() == 3);
  CHECK(points[0].label == "decode");
  const gui_core::ValidationSummary s = gui_core::summarize(points);
  CHECK(s.points == 3);
  CHECK(s.median_abs_error == Approx(0.1));
  CHECK(s.max_abs_error == Approx(0.5));
  CHECK(s.within_20_percent == Approx(2.0 / 3.0));
  CHECK(s.designs == std::vector<std::string>{"hd n=4", "baseline"});
  CHECK(gui_core::parse_validation_points(gui_core::to_json(points)).size() == 3);

  auto pointer_of = [](const char* text) {
    try {
      gui_core::parse_validation_points(model::Json::parse(text));
    } catch (const model::ConfigError& e) {
      return e.pointer();
    }
    return std::string("no error");
  };
  CHECK(pointer_of(R"([{"design": "a", "predicted_s": 1, "measured_s": 0}])") == "/0/measured_s");
  CHECK(pointer_of(R"({"points": [{"design": "a", "predicted_s": 1, "measured_s": 1, "unit": "s"}]})") ==
        "/points/0/unit");
  CHECK(pointer_of(R"({"points": [{"predicted_s": 1, "measured_s": 1}]})") == "/points/0/design");
  CHECK(pointer_of(R"({"pionts": []})") == "/pionts");
  CHECK(gui_core::summarize({}).points == 0);
}

TEST_CASE("catalog: the bundled profiles are listed by name - the profiles folder is found", "[gui][catalog]") {
  const auto root = gui_core::find_profiles_dir({"/nonexistent/profiles", test::profiles()});
  REQUIRE(root);
  const gui_core::Catalog c = gui_core::read_catalog(*root);
  // The file each needle finds (by label or by file name), not merely some entry.
  auto found = [](const std::vector<gui_core::CatalogEntry>& entries, const std::string& needle) {
    const int i = gui_core::find_entry(entries, needle);
    return i < 0 ? std::string("(none)") : entries[static_cast<std::size_t>(i)].path;
  };
  CHECK(found(c.models, "Qwen3-8B") == (*root / "models" / "qwen3-8b.json").string());
  CHECK(found(c.models, "qwen3-8b.config") == (*root / "models" / "hf" / "qwen3-8b.config.json").string());
  CHECK(c.models[static_cast<std::size_t>(gui_core::find_entry(c.models, "qwen3-8b.config"))].label.rfind("HF: ", 0) == 0);
  CHECK(found(c.hardware, "h100") == (*root / "hardware" / "h100-sxm.json").string());
  CHECK(found(c.designs, "hd-n4-full") == (*root / "designs" / "hd-n4-full.json").string());
  CHECK(gui_core::find_entry(c.models, "no such model") == -1);
  CHECK_FALSE(gui_core::find_profiles_dir({"/nonexistent"}));
}

TEST_CASE("error pointers land on the field with the longest whole-segment prefix", "[gui][errors]") {
  const std::vector<std::string> fields = {"/design/hd/n", "/design/hd/layers", "/design/looped", "/design/hd"};
  CHECK(gui_core::field_for_pointer("/design/hd/layers/3", fields) == 1);
  CHECK(gui_core::field_for_pointer("/design/hd/n", fields) == 0);
  CHECK(gui_core::field_for_pointer("/design/hd/nn", fields) == 3);  // not "/design/hd/n"
  CHECK(gui_core::field_for_pointer("/design/looped", fields) == 2);
  CHECK(gui_core::field_for_pointer("/scenario/parallel/tp", fields) == -1);
  CHECK(gui_core::is_pointer_prefix("/a/b", "/a/b/c"));
  CHECK_FALSE(gui_core::is_pointer_prefix("/a/b", "/a/bc"));
}
