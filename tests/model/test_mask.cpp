// Attention masks: the predicate against methods.md's rules on hand-drawn grids, the
// closed-form pair counts against brute force on random masks, the published pair
// formulas, the tile definition, the layouts' savings, the permutations, the masks of each
// design's layers, and every error path. The tile counts' closed forms are checked in
// test_mask_tiles.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mask_test_helpers.hpp"

using namespace mask_test;

TEST_CASE("the predicate follows methods.md on hand-drawn grids", "[mask]") {
  SECTION("PHD plain K=2, L=3: origins of earlier tokens and the own token's copies") {
    const MaskSpec m = phd(3, 2, PhdVariant::plain);
    // Logical order (o0 h0 o1 h1 o2 h2): hidden queries see their own origin and themselves.
    CHECK(grid_text(m, Layout::interleaved) ==
          "#.....\n"
          "##....\n"
          "#.#...\n"
          "#.##..\n"
          "#.#.#.\n"
          "#.#.##\n");
    // [o0 o1 o2 | h0 h1 h2]: the origin block is causal, the hidden block diagonal.
    CHECK(grid_text(m, Layout::phd_split) ==
          "#.....\n"
          "##....\n"
          "###...\n"
          "#..#..\n"
          "##..#.\n"
          "###..#\n");
  }
  SECTION("PHD-SWA K=3, W=2: a hidden query also sees the 2 hidden ranks before it") {
    const MaskSpec m = phd(3, 3, PhdVariant::swa, 2);
    // Ranks: (0,1)=0 (0,2)=1 (1,1)=2 (1,2)=3 (2,1)=4 (2,2)=5; logical t = 3i + j.
    CHECK(visible(m, 4, 1));   // (1,1) rank 2 sees rank 0
    CHECK(visible(m, 4, 2));   // ... and rank 1
    CHECK(visible(m, 7, 4));   // (2,1) rank 4 sees rank 2
    CHECK(!visible(m, 7, 2));  // ... but not rank 1 (distance 3 > W)
    CHECK(!visible(m, 6, 5));  // origin queries never see hidden keys
    CHECK(visible(m, 6, 3));   // ... only origins
    CHECK(!visible(m, 4, 5));  // causal: no later key
  }
  SECTION("PHD-CSWA C=1: the window stops at the chunk (token) boundary") {
    const MaskSpec m = phd(3, 3, PhdVariant::cswa, 4, 1);
    CHECK(!visible(m, 4, 1));
    CHECK(visible(m, 5, 4));  // same token
    CHECK(visible(m, 5, 3));  // origin of the own token
    CHECK(visible(m, 5, 0));  // earlier origin
  }
  SECTION("HD intra n=2, L=3, interleaved and stream-major") {
    const MaskSpec m = spec(Kind::intra, 3, 2);
    CHECK(grid_text(m, Layout::interleaved) ==
          "#.....\n"
          ".#....\n"
          "#.#...\n"
          ".#.#..\n"
          "#.#.#.\n"
          ".#.#.#\n");
    CHECK(grid_text(m, Layout::stream_major) ==
          "#.....\n"
          "##....\n"
          "###...\n"
          "...#..\n"
          "...##.\n"
          "...###\n");
  }
  SECTION("HD local(3), n=2: a window over expanded positions") {
    CHECK(grid_text(sliding(3, 2, 3), Layout::interleaved) ==
          "#.....\n"
          "##....\n"
          "###...\n"
          ".###..\n"
          "..###.\n"
          "...###\n");
  }
  SECTION("KV-mirror rows: only the final stream's queries, in token order") {
    MaskSpec m = spec(Kind::causal, 3, 2);
    m.final_copy_queries_only = true;
    CHECK(m.query_rows() == 3);
    CHECK(grid_text(m, Layout::interleaved) ==
          "##....\n"
          "####..\n"
          "######\n");
    CHECK(grid_text(m, Layout::stream_major) ==  // keys [stream 0 | stream 1]
          "#..#..\n"
          "##.##.\n"
          "######\n");
    CHECK(!visible(m, 2, 0));  // a stream-0 query issues no row
  }
}

TEST_CASE("layouts are permutations with both directions consistent", "[mask]") {
  for (std::int64_t L : {1, 2, 5, 7})
    for (std::int64_t n : {1, 2, 3, 8})
      for (Layout l : all_layouts) {
        const std::vector<std::int64_t> perm = physical_to_logical(L, n, l);
        std::vector<std::int64_t> sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        for (std::int64_t p = 0; p < L * n; ++p) {
          CHECK(sorted[static_cast<std::size_t>(p)] == p);
          CHECK(logical_of_physical(L, n, l, p) == perm[static_cast<std::size_t>(p)]);
          CHECK(physical_of_logical(L, n, l, perm[static_cast<std::size_t>(p)]) == p);
        }
      }
  // Token i, copy k: stream-major p = k*L + i; phd_split puts hidden copies by rank.
  CHECK(physical_of_logical(5, 3, Layout::stream_major, 2 * 3 + 1) == 1 * 5 + 2);
  CHECK(physical_of_logical(5, 3, Layout::phd_split, 2 * 3 + 0) == 2);
  CHECK(physical_of_logical(5, 3, Layout::phd_split, 2 * 3 + 2) == 5 + 2 * 2 + 1);
  CHECK(physical_to_logical(2, 3, Layout::phd_split) == std::vector<std::int64_t>{0, 3, 1, 2, 4, 5});
  CHECK(physical_to_logical(2, 3, Layout::stream_major) == std::vector<std::int64_t>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("pair counts: closed forms equal brute force on random masks", "[mask]") {
  std::mt19937_64 rng(20240611);
  for (int trial = 0; trial < 3000; ++trial) {
    const MaskSpec m = random_spec(rng);
    INFO(describe_spec(m));
    REQUIRE(visible_pairs(m) == visible_pairs_brute(m));
  }
}

TEST_CASE("pair counts: the published formulas", "[mask]") {
  for (std::int64_t n : {1, 2, 4, 8})
    for (std::int64_t L : {1, 7, 4096, 131072}) {
      CHECK(visible_pairs(spec(Kind::causal, L, n)) == n * L * (n * L + 1) / 2);
      CHECK(visible_pairs(spec(Kind::intra, L, n)) == n * L * (L + 1) / 2);
    }
  // local(w): about nL*w, exactly nL*w - w(w-1)/2 once the sequence is longer than w.
  CHECK(visible_pairs(sliding(4096, 4, 512)) == 4 * 4096 * 512 - 512 * 511 / 2);
  // PHD plain: K L(L+1)/2 origins seen + L K(K-1)/2 same-token hidden pairs.
  CHECK(visible_pairs(phd(1000, 3, PhdVariant::plain)) == 3 * 1000 * 1001 / 2 + 1000 * 3);
}

TEST_CASE("visible_tiles_brute is the tile definition", "[mask]") {
  // Two tiles of 2x2 over causal L=3: the top-right tile is empty and the rest visible.
  const TileCount t = visible_tiles_brute(spec(Kind::causal, 3, 1), Layout::interleaved, 2, 2);
  CHECK(t.total == 4);
  CHECK(t.visible == 3);
  CHECK(t.full == 2);  // row 2 x keys 0..1 and row 2 x key 2; rows 0..1 x keys 0..1 miss (0,1)
  CHECK(t.executed_pairs == 4 + 2 + 1);
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 200; ++trial) {
    const MaskSpec m = random_spec(rng);
    for (Layout l : all_layouts) {
      INFO(describe_spec(m) << " layout " << to_string(l));
      REQUIRE(same(visible_tiles_brute(m, l, 3, 5), visible_tiles(m, l, 3, 5)));
    }
  }
}

TEST_CASE("layouts: what intra and PHD layers save", "[mask]") {
  SECTION("HD intra runs ~1/n of a full layer's tiles stream-major, the same interleaved (n <= tile)") {
    for (std::int64_t n : {2, 4, 8}) {
      const std::int64_t L = 16384 / n, m = L / 64;  // m tile rows per stream
      const TileCount full = visible_tiles(spec(Kind::causal, L, n), Layout::interleaved, 64, 64);
      const TileCount intra_split = visible_tiles(spec(Kind::intra, L, n), Layout::stream_major, 64, 64);
      const TileCount intra_mixed = visible_tiles(spec(Kind::intra, L, n), Layout::interleaved, 64, 64);
      INFO("n=" << n << " full " << show(full) << " intra stream-major " << show(intra_split));
      CHECK(intra_mixed.visible == full.visible);
      const double ratio = static_cast<double>(intra_split.visible) / static_cast<double>(full.visible);
      CHECK(ratio == Approx(1.0 / static_cast<double>(n)).epsilon(0.05));
      CHECK(intra_split.visible * (n * m + 1) == full.visible * (m + 1));  // n m(m+1)/2 of nm(nm+1)/2
      // Intra tiles in stream-major order are the per-stream causal tiles, exactly.
      CHECK(intra_split.visible == n * visible_tiles(spec(Kind::causal, L, 1), Layout::interleaved, 64, 64).visible);
    }
  }
  SECTION("interleaved intra with n > tile touches fewer tiles than full (residue counting)") {
    const TileCount full = visible_tiles(spec(Kind::causal, 63, 100), Layout::interleaved, 16, 16);
    const TileCount intra = visible_tiles(spec(Kind::intra, 63, 100), Layout::interleaved, 16, 16);
    CHECK(intra.visible < full.visible);
  }
  SECTION("PHD in [origins | hidden] runs far fewer tiles than interleaved for large K") {
    for (PhdVariant v : {PhdVariant::plain, PhdVariant::swa, PhdVariant::cswa}) {
      const MaskSpec m = phd(512, 64, v, 16, 32);
      const TileCount mixed = visible_tiles(m, Layout::interleaved, 64, 64);
      const TileCount split = visible_tiles(m, Layout::phd_split, 64, 64);
      INFO(to_string(v) << ": interleaved " << show(mixed) << ", phd_split " << show(split));
      CHECK(split.visible * 10 < mixed.visible);
      CHECK(split.executed_pairs >= visible_pairs(m));
    }
  }
}

TEST_CASE("the mask of each design's layer", "[mask]") {
  SECTION("baseline: the backbone's kind and window") {
    const Config c = config_of(tiny_backbone, R"({"baseline": {}})");
    const MaskSpec s = layer_mask(c, 0, 10);
    CHECK(s.kind == Kind::sliding);
    CHECK(s.window == 3);
    CHECK(s.copies == 1);
    CHECK(layer_mask(c, 1, 10).kind == Kind::causal);
    CHECK(default_layout(c.design) == Layout::interleaved);
  }
  SECTION("HD: per-layer kinds, the expanded window, final-stream rows on mirrored layers") {
    const Config c = config_of(tiny_backbone, R"({"hd": {"n": 4, "layers": ["local", "intra", "full", "intra"]}})");
    CHECK(layer_mask(c, 0, 10).kind == Kind::sliding);
    CHECK(layer_mask(c, 0, 10).window == 12);  // backbone window 3 tokens x 4 streams
    CHECK(layer_mask(c, 1, 10).kind == Kind::intra);
    CHECK(layer_mask(c, 2, 10).kind == Kind::causal);
    CHECK(layer_mask(c, 2, 10).positions() == 40);
    CHECK(!layer_mask(c, 0, 10).final_copy_queries_only);
    CHECK(layer_mask(c, 3, 10).final_copy_queries_only);  // layer 3 mirrors layer 0
    CHECK(layer_mask(c, 3, 10).query_rows() == 10);
    const Config no_mirror =
        config_of(tiny_backbone, R"({"hd": {"n": 4, "layers": "full", "kv_mirror": false}})");
    CHECK(!layer_mask(no_mirror, 3, 10).final_copy_queries_only);
  }
  SECTION("PHD: its variant on every layer, default layout [origins | hidden]") {
    const Config c = config_of(tiny_backbone, R"({"phd": {"K": 3, "variant": "cswa", "W": 16, "C": 32}})");
    const MaskSpec s = layer_mask(c, 0, 10);
    CHECK(s.kind == Kind::phd);
    CHECK(s.copies == 3);
    CHECK(s.phd_variant == PhdVariant::cswa);
    CHECK(s.phd_W == 16);
    CHECK(s.phd_C == 32);
    CHECK(default_layout(c.design) == Layout::phd_split);
  }
  SECTION("VWN and looped keep the backbone's masks") {
    const Config v = config_of(tiny_backbone, R"({"vwn": {"m": 2, "n": 3}})");
    CHECK(layer_mask(v, 2, 5).kind == Kind::sliding);
    Json plain = Json::parse(tiny_backbone);
    plain.erase("kv_mirror_layers");  // looping a mirrored backbone is refused by validation
    const Config l = parse_config(Json{{"backbone", plain}, {"design", Json::parse(R"({"looped": {"iterations": 3}})")}});
    CHECK(layer_mask(l, 3, 5).kind == Kind::causal);
    CHECK(layer_mask(l, 3, 5).positions() == 5);
  }
  SECTION("errors name the layer and the range") {
    const Config c = config_of(tiny_backbone, R"({"baseline": {}})");
    CHECK(error_of([&] { layer_mask(c, 4, 10); }) == "/layer: layer 4 is out of range: the model has 4 layers (0..3)");
    CHECK(error_of([&] { layer_mask(c, -1, 10); }) == "/layer: layer -1 is out of range: the model has 4 layers (0..3)");
    CHECK(error_of([&] { layer_mask(c, 0, 0); }) == "/tokens: must be >= 1, got 0");
  }
}

TEST_CASE("mask errors name the field and the reason", "[mask]") {
  CHECK(error_of([] { materialize(spec(Kind::causal, 4097, 4), Layout::interleaved); }) ==
        "/mask/tokens: a mask of 16388 positions (4097 tokens x 4 copies) is too large to materialise (at most 16384)");
  CHECK(error_of([] { visible_pairs_brute(spec(Kind::causal, 20000, 1)); }).find("20000 positions") !=
        std::string::npos);
  CHECK(error_of([] { layout_from_string("diagonal"); }) ==
        "unknown layout \"diagonal\": expected interleaved, stream_major or phd_split");
  CHECK(layout_from_string("stream_major") == Layout::stream_major);
  CHECK(error_of([] { visible_tiles(spec(Kind::causal, 4, 1), Layout::interleaved, 0, 4); }) ==
        "/tile: tile sizes must be >= 1, got 0x4");
  CHECK(error_of([] { visible_tiles_brute(spec(Kind::causal, 4, 1), Layout::interleaved, 4, -1); }) ==
        "/tile: tile sizes must be >= 1, got 4x-1");
  CHECK(error_of([] { visible_pairs(spec(Kind::causal, 0, 1)); }) == "/mask/tokens: must be >= 1, got 0");
  CHECK(error_of([] { visible_pairs(spec(Kind::causal, 3, 0)); }) == "/mask/copies: must be >= 1, got 0");
  CHECK(error_of([] { visible_pairs(spec(Kind::causal, std::int64_t{1} << 30, 4)); }) ==
        "/mask/tokens: 1073741824 tokens x 4 copies exceed 2147483648 positions");
  CHECK(error_of([] { visible_pairs(sliding(4, 1, 0)); }) == "/mask/window: a sliding mask needs a window >= 1, got 0");
  CHECK(error_of([] { visible_pairs(phd(4, 2, PhdVariant::swa, 0)); }) == "/mask/phd_W: PHD-swa needs W >= 1, got 0");
  CHECK(error_of([] { visible_pairs(phd(4, 2, PhdVariant::cswa, 3, 0)); }) ==
        "/mask/phd_C: PHD-cswa needs a chunk C >= 1, got 0");
  CHECK(error_of([] { visible_tiles(phd(4, 2, PhdVariant::cswa, 3, 0), Layout::phd_split, 2, 2); }) ==
        "/mask/phd_C: PHD-cswa needs a chunk C >= 1, got 0");
  CHECK(error_of([] { phd_partial_prefill_tiles(phd(8, 3, PhdVariant::swa, 2), 1, Layout::phd_split, 4, 4); }) ==
        "/tail: PHD-swa computes every hidden copy: the tail must be all 8 tokens, got 1");
  CHECK(error_of([] { phd_partial_prefill_tiles(phd(8, 3, PhdVariant::cswa, 2, 3), 3, Layout::phd_split, 4, 4); }) ==
        "/tail: PHD-cswa: the tail must start at a chunk of 3 tokens, got 3 of 8");
  CHECK(error_of([] { phd_partial_prefill_tiles(phd(8, 3, PhdVariant::plain), 9, Layout::phd_split, 4, 4); }) ==
        "/tail: must be in [1, 8] tokens, got 9");
  CHECK(error_of([] { phd_partial_prefill_tiles(spec(Kind::causal, 8, 1), 1, Layout::interleaved, 4, 4); }) ==
        "/mask/kind: a PHD partial prefill needs a PHD mask with every row a query, got causal");
  CHECK(error_of([] { phd_partial_prefill_tiles(phd(8, 3, PhdVariant::plain), 1, Layout::phd_split, 0, 4); }) ==
        "/tile: tile sizes must be >= 1, got 0x4");
  CHECK(!visible(spec(Kind::causal, 3, 1), 3, 0));  // out of range: never visible
  CHECK(!visible(spec(Kind::causal, 3, 1), 1, -1));
}

TEST_CASE("best_layout picks the layout with the fewest executed pairs", "[mask][layout]") {
  // Total executed pairs of a design in one layout, straight from the per-layer counts.
  auto executed = [](const Config& c, Layout l, std::int64_t tokens, std::int64_t tile) {
    std::int64_t sum = 0;
    for (std::int64_t layer = 0; layer < c.effective.num_layers; ++layer)
      sum += visible_tiles(layer_mask(c, layer, tokens), l, tile, tile).executed_pairs;
    return sum;
  };
  SECTION("HD with intra layers: stream-major, and it really is cheaper") {
    const Config c = config_of(tiny_backbone, R"({"hd": {"n": 4, "layers": "intra"}})");
    CHECK(best_layout(c, 512, 64, 64) == Layout::stream_major);
    CHECK(executed(c, Layout::stream_major, 512, 64) < executed(c, Layout::interleaved, 512, 64));
  }
  SECTION("HD with only full layers: interleaved (stream-major scatters the causal triangle)") {
    const Config c = config_of(tiny_backbone, R"({"hd": {"n": 4, "layers": "full"}})");
    CHECK(best_layout(c, 512, 64, 64) == Layout::interleaved);
  }
  SECTION("HD mixes: the choice agrees with the summed counts either way") {
    for (const char* design : {R"({"hd": {"n": 4, "layers": ["full", "intra", "full", "full"]}})",
                               R"({"hd": {"n": 2, "layers": ["intra", "intra", "full", "intra"]}})",
                               R"({"hd": {"n": 8, "layers": ["local", "intra", "local", "full"], "window": 64}})"}) {
      INFO(design);
      const Config c = config_of(tiny_backbone, design);
      for (std::int64_t tokens : {37, 256, 1000}) {
        const Layout chosen = best_layout(c, tokens, 64, 64);
        const Layout other = chosen == Layout::interleaved ? Layout::stream_major : Layout::interleaved;
        CHECK(executed(c, chosen, tokens, 64) <= executed(c, other, tokens, 64));
      }
    }
  }
  SECTION("other designs keep their default") {
    CHECK(best_layout(config_of(tiny_backbone, R"({"baseline": {}})"), 512, 64, 64) == Layout::interleaved);
    CHECK(best_layout(config_of(tiny_backbone, R"({"phd": {"K": 3}})"), 512, 64, 64) == Layout::phd_split);
    CHECK(best_layout(config_of(tiny_backbone, R"({"hd": {"n": 1, "layers": "intra"}})"), 512, 64, 64) ==
          Layout::interleaved);
  }
}
