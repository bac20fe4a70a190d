// Attention masks: the predicate against methods.md's rules on hand-drawn grids, the
// closed-form pair and tile counts against brute force on thousands of random masks (every
// kind x layout, odd lengths, tiles bigger than the sequence, n or K bigger than the tile,
// final-copy-only rows), the closed forms over all query blocks against brute force over
// the ranges they cover and against the per-block method on long sequences, the published
// pair formulas, the layouts' savings, the permutations, the masks of each design's
// layers, and every error path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/mask.hpp"

using namespace hdlab::model;
using Kind = MaskSpec::Kind;

namespace {

constexpr Layout all_layouts[] = {Layout::interleaved, Layout::stream_major, Layout::phd_split};

MaskSpec spec(Kind kind, std::int64_t tokens, std::int64_t copies) {
  MaskSpec m;
  m.kind = kind;
  m.tokens = tokens;
  m.copies = copies;
  return m;
}

MaskSpec sliding(std::int64_t tokens, std::int64_t copies, std::int64_t window) {
  MaskSpec m = spec(Kind::sliding, tokens, copies);
  m.window = window;
  return m;
}

MaskSpec phd(std::int64_t tokens, std::int64_t K, PhdVariant v, std::int64_t W = 0, std::int64_t C = 0) {
  MaskSpec m = spec(Kind::phd, tokens, K);
  m.phd_variant = v;
  m.phd_W = W;
  m.phd_C = C;
  return m;
}

std::string describe_spec(const MaskSpec& m) {
  std::ostringstream s;
  s << to_string(m.kind) << " L=" << m.tokens << " copies=" << m.copies << " window=" << m.window
    << " phd=" << to_string(m.phd_variant) << " W=" << m.phd_W << " C=" << m.phd_C
    << (m.final_copy_queries_only ? " final-copy-only" : "");
  return s.str();
}

// The materialised mask drawn as rows of '#' (visible) and '.' (masked).
std::string grid_text(const MaskSpec& m, Layout l) {
  const std::vector<std::uint8_t> g = materialize(m, l);
  std::string out;
  for (std::int64_t r = 0; r < m.query_rows(); ++r) {
    for (std::int64_t c = 0; c < m.positions(); ++c) out += g[static_cast<std::size_t>(r * m.positions() + c)] ? '#' : '.';
    out += '\n';
  }
  return out;
}

// Tile counts from an already materialised grid (the same definition as
// visible_tiles_brute, reused for several tile sizes per grid to keep the test fast).
TileCount tiles_of_grid(const std::vector<std::uint8_t>& g, std::int64_t R, std::int64_t N, std::int64_t Bq,
                        std::int64_t Bk) {
  TileCount tc;
  for (std::int64_t r0 = 0; r0 < R; r0 += Bq)
    for (std::int64_t c0 = 0; c0 < N; c0 += Bk) {
      const std::int64_t r1 = std::min(R, r0 + Bq), c1 = std::min(N, c0 + Bk);
      std::int64_t seen = 0;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c) seen += g[static_cast<std::size_t>(r * N + c)];
      ++tc.total;
      if (seen > 0) {
        ++tc.visible;
        tc.executed_pairs += (r1 - r0) * (c1 - c0);
      }
      if (seen == (r1 - r0) * (c1 - c0)) ++tc.full;
    }
  return tc;
}

// The materialised mask's tile counts in O(1) per tile from 2-D prefix sums of the grid:
// the same definition as tiles_of_grid, fast enough to check many tile sizes per mask.
class GridSums {
 public:
  GridSums(const MaskSpec& m, Layout l) : R_(m.query_rows()), N_(m.positions()) {
    const std::vector<std::uint8_t> g = materialize(m, l);
    sum_.assign(static_cast<std::size_t>((R_ + 1) * (N_ + 1)), 0);
    for (std::int64_t r = 0; r < R_; ++r)
      for (std::int64_t c = 0; c < N_; ++c)
        at(r + 1, c + 1) = g[static_cast<std::size_t>(r * N_ + c)] + at(r, c + 1) + at(r + 1, c) - at(r, c);
  }
  TileCount tiles(std::int64_t Bq, std::int64_t Bk) const {
    TileCount tc;
    for (std::int64_t r0 = 0; r0 < R_; r0 += Bq)
      for (std::int64_t c0 = 0; c0 < N_; c0 += Bk) {
        const std::int64_t r1 = std::min(R_, r0 + Bq), c1 = std::min(N_, c0 + Bk);
        const std::int64_t seen = at(r1, c1) - at(r0, c1) - at(r1, c0) + at(r0, c0), area = (r1 - r0) * (c1 - c0);
        ++tc.total;
        if (seen > 0) {
          ++tc.visible;
          tc.executed_pairs += area;
        }
        if (seen == area) ++tc.full;
      }
    return tc;
  }

 private:
  std::int64_t& at(std::int64_t r, std::int64_t c) { return sum_[static_cast<std::size_t>(r * (N_ + 1) + c)]; }
  std::int64_t at(std::int64_t r, std::int64_t c) const { return sum_[static_cast<std::size_t>(r * (N_ + 1) + c)]; }
  std::int64_t R_, N_;
  std::vector<std::int64_t> sum_;
};

bool same(const TileCount& a, const TileCount& b) {
  return a.visible == b.visible && a.full == b.full && a.total == b.total && a.executed_pairs == b.executed_pairs;
}

std::string show(const TileCount& t) {
  return "visible " + std::to_string(t.visible) + " full " + std::to_string(t.full) + " total " +
         std::to_string(t.total) + " executed " + std::to_string(t.executed_pairs);
}

// A random mask with small sizes: odd lengths, copies often above the tile, windows below
// and above the copies, every PHD variant, final-copy rows for HD kinds.
MaskSpec random_spec(std::mt19937_64& rng) {
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  const Kind kind = static_cast<Kind>(pick(0, 3));
  const std::int64_t copies = pick(0, 3) == 0 ? 1 : pick(2, 9);
  std::int64_t tokens = pick(1, 25);
  while (tokens * copies > 160) --tokens;
  MaskSpec m = spec(kind, tokens, copies);
  if (kind == Kind::sliding) m.window = pick(0, 2) == 0 ? pick(1, copies) : pick(1, tokens * copies + 3);
  if (kind == Kind::phd) {
    m.phd_variant = static_cast<PhdVariant>(pick(0, 2));
    if (m.phd_variant != PhdVariant::plain) m.phd_W = pick(0, 1) ? pick(1, copies + 1) : pick(1, 3 * copies + 4);
    if (m.phd_variant == PhdVariant::cswa) m.phd_C = pick(1, 6);
  }
  m.final_copy_queries_only = pick(0, 4) == 0;
  return m;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

Config config_of(const char* backbone, const char* design) {
  return parse_config(Json{{"backbone", Json::parse(backbone)}, {"design", Json::parse(design)}});
}

constexpr const char* tiny_backbone = R"({
  "name": "tiny", "num_layers": 4, "hidden_size": 64, "num_heads": 4, "num_kv_heads": 2,
  "intermediate_size": 128, "vocab_size": 100,
  "attention": {"layers": ["sliding", "full", "sliding", "full"], "sliding_window": 3},
  "kv_mirror_layers": 1
})";

}  // namespace

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

TEST_CASE("tile counts: closed forms equal brute force on random masks, every kind x layout", "[mask]") {
  std::mt19937_64 rng(7);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  int checked = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const MaskSpec m = random_spec(rng);
    const std::int64_t N = m.positions(), R = m.query_rows();
    for (Layout l : all_layouts) {
      const std::vector<std::uint8_t> g = materialize(m, l);
      // Tiles of 1, below the copies, odd, and bigger than the whole sequence.
      const std::pair<std::int64_t, std::int64_t> tiles[] = {
          {pick(1, 3), pick(1, 3)}, {pick(1, 9), pick(1, 9)}, {pick(2, 24), pick(2, 24)}, {N + pick(0, 5), pick(1, N + 5)}};
      for (const auto& [Bq, Bk] : tiles) {
        INFO(describe_spec(m) << " layout " << to_string(l) << " tile " << Bq << "x" << Bk);
        const TileCount want = tiles_of_grid(g, R, N, Bq, Bk);
        const TileCount got = visible_tiles(m, l, Bq, Bk);
        INFO("closed form: " << show(got) << "; brute force: " << show(want));
        REQUIRE(same(got, want));
        ++checked;
      }
    }
  }
  CHECK(checked == 4000 * 3 * 4);
}

TEST_CASE("tile counts: the closed forms equal brute force over the ranges they cover", "[mask]") {
  // Causal, sliding and intra masks in logical order (any layout with one copy), plain and
  // final-copy rows, odd lengths, windows around n and past the sequence, tiles of 1,
  // below and above n, odd, and bigger than the sequence.
  // Which closed forms were compared: kind, one stream or several, plain or final-copy rows.
  std::set<std::string> compared;
  for (std::int64_t n : {1, 2, 3, 4, 7})
    for (std::int64_t L : {1, 2, 3, 5, 8, 13, 24}) {
      const std::int64_t N = L * n;
      std::vector<MaskSpec> masks = {spec(Kind::causal, L, n), spec(Kind::intra, L, n)};
      for (std::int64_t w : {std::int64_t{1}, std::int64_t{2}, n - 1, n, n + 1, 2 * n + 1, std::int64_t{11}, N - 1, N,
                             N + 7, std::numeric_limits<std::int64_t>::max()})
        if (w >= 1) masks.push_back(sliding(L, n, w));
      for (MaskSpec m : masks)
        for (bool final_rows : {false, true}) {
          m.final_copy_queries_only = final_rows;
          for (Layout l : all_layouts) {
            if (l != Layout::interleaved && n > 1) continue;
            const GridSums grid(m, l);
            for (std::int64_t Bq : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{5}, std::int64_t{8}, N, N + 3})
              for (std::int64_t Bk : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{5}, std::int64_t{8}, N, N + 3}) {
                INFO(describe_spec(m) << " layout " << to_string(l) << " tile " << Bq << "x" << Bk);
                const std::optional<TileCount> got = detail::visible_tiles_fast(m, l, Bq, Bk);
                // Where a closed form must apply: causal; sliding unless final-copy rows leave
                // gaps (w < n); intra once the copies fit a key tile or a query block.
                const bool covered = m.kind == Kind::causal || (m.kind == Kind::sliding && (!final_rows || m.window >= n)) ||
                                     (m.kind == Kind::intra && (n == 1 || n <= std::min(Bk, N) || (!final_rows && std::min(Bq, m.query_rows()) >= n)));
                REQUIRE(got.has_value() == covered);
                if (!got) continue;
                const TileCount want = grid.tiles(Bq, Bk);
                INFO("closed form: " << show(*got) << "; brute force: " << show(want));
                REQUIRE(same(*got, want));
                compared.insert(std::string(to_string(m.kind)) + (n > 1 ? " n>1" : " n=1") + (final_rows ? " final-copy" : ""));
              }
          }
        }
    }
  std::set<std::string> every;
  for (const char* kind : {"causal", "sliding", "intra"})
    for (const char* n : {" n=1", " n>1"})
      for (const char* rows : {"", " final-copy"}) every.insert(std::string(kind) + n + rows);
  CHECK(compared == every);
}

TEST_CASE("tile counts: HD intra in stream-major order on stream-aligned tiles equals brute force", "[mask]") {
  int closed = 0;
  for (std::int64_t n : {1, 2, 3, 5, 9})
    for (std::int64_t L : {1, 4, 6, 12, 15, 24}) {
      const MaskSpec m = spec(Kind::intra, L, n);
      const GridSums grid(m, Layout::stream_major);
      for (std::int64_t Bq = 1; Bq <= L + 2; ++Bq)
        for (std::int64_t Bk = 1; Bk <= L + 2; ++Bk) {
          INFO(describe_spec(m) << " tile " << Bq << "x" << Bk);
          const std::optional<TileCount> got = detail::visible_tiles_fast(m, Layout::stream_major, Bq, Bk);
          // With one stream every tile size is aligned (the layout is the identity).
          const bool aligned = n == 1 || (Bq <= L && Bk <= L && L % Bq == 0 && L % Bk == 0);
          REQUIRE(got.has_value() == aligned);
          if (!got) continue;
          REQUIRE(same(*got, grid.tiles(Bq, Bk)));
          ++closed;
        }
    }
  // n = 1: all (L + 2)^2 tile pairs of each L; n > 1 (4 values): the d(L)^2 pairs of
  // divisors of L (d = 1, 3, 4, 6, 4, 8 for L = 1, 4, 6, 12, 15, 24).
  CHECK(closed == (9 + 36 + 64 + 196 + 289 + 676) + 4 * (1 + 9 + 16 + 36 + 16 + 64));
}

TEST_CASE("tile counts: PHD in phd_split order, block by block in O(1), equals brute force", "[mask]") {
  // Every variant, windows around the hidden copies per token, chunks of 1 token and more,
  // mixed origin / hidden blocks, final-copy rows, tiles of 1, odd and past the sequence.
  int checked = 0;
  for (std::int64_t K : {2, 3, 4, 6})
    for (std::int64_t L : {1, 2, 3, 5, 8, 13}) {
      const std::int64_t c = K - 1, N = L * K;
      std::vector<MaskSpec> masks = {phd(L, K, PhdVariant::plain)};
      for (std::int64_t W : {std::int64_t{1}, c - 1, c, c + 1, 2 * c + 1, 3 * c + 4})
        if (W >= 1) {
          masks.push_back(phd(L, K, PhdVariant::swa, W));
          for (std::int64_t C : {1, 2, 3, 5}) masks.push_back(phd(L, K, PhdVariant::cswa, W, C));
        }
      for (MaskSpec m : masks)
        for (bool final_rows : {false, true}) {
          m.final_copy_queries_only = final_rows;
          const GridSums grid(m, Layout::phd_split);
          for (std::int64_t Bq : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{5}, std::int64_t{8}, N, N + 3})
            for (std::int64_t Bk : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{5}, std::int64_t{8}, N, N + 3}) {
              INFO(describe_spec(m) << " tile " << Bq << "x" << Bk);
              const std::optional<TileCount> got = detail::visible_tiles_fast(m, Layout::phd_split, Bq, Bk);
              REQUIRE(got.has_value());
              const TileCount want = grid.tiles(Bq, Bk);
              INFO("fast: " << show(*got) << "; brute force: " << show(want));
              REQUIRE(same(*got, want));
              ++checked;
            }
        }
    }
  // 6 lengths x 2 row sets x 7 x 7 tiles x masks: 1 + 5 W x 5 (SWA, 4 CSWA) at K = 2
  // (W = c - 1 = 0 is dropped), 1 + 6 x 5 at K = 3, 4, 6.
  CHECK(checked == 6 * 2 * 49 * ((1 + 5 * 5) + 3 * (1 + 6 * 5)));
}

TEST_CASE("tile counts: the shortcuts equal the general per-block method on long sequences", "[mask]") {
  const std::pair<std::int64_t, std::int64_t> tiles[] = {{128, 128}, {64, 128}, {128, 64}, {100, 37}, {16, 16}};
  int compared = 0;
  auto compare = [&](const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk) {
    INFO(describe_spec(m) << " layout " << to_string(l) << " tile " << Bq << "x" << Bk);
    const std::optional<TileCount> fast = detail::visible_tiles_fast(m, l, Bq, Bk);
    REQUIRE(fast.has_value());
    const TileCount general = detail::visible_tiles_general(m, l, Bq, Bk);
    INFO("shortcut: " << show(*fast) << "; general: " << show(general));
    REQUIRE(same(*fast, general));
    REQUIRE(same(visible_tiles(m, l, Bq, Bk), general));
    ++compared;
  };
  for (std::int64_t n : {1, 3, 4, 8})
    for (std::int64_t L : {4096, 4097, 20011}) {
      std::vector<MaskSpec> masks = {spec(Kind::causal, L, n), spec(Kind::intra, L, n)};
      for (std::int64_t w : {std::int64_t{1}, n, std::int64_t{1000}, L * n / 2 + 1, std::int64_t{1} << 40})
        masks.push_back(sliding(L, n, w));
      for (MaskSpec m : masks)
        for (bool final_rows : {false, true}) {
          m.final_copy_queries_only = final_rows;
          if (m.kind == Kind::sliding && final_rows && m.window < n) continue;
          for (const auto& [Bq, Bk] : tiles)
            if (L < 20000 || Bq >= 64) compare(m, Layout::interleaved, Bq, Bk);
        }
      // Intra in stream-major order on tiles that divide the stream.
      if (L % 128 == 0)
        for (const auto& [Bq, Bk] : {std::pair<std::int64_t, std::int64_t>{128, 128}, {64, 128}, {128, 16}})
          compare(spec(Kind::intra, L, n), Layout::stream_major, Bq, Bk);
    }
  // PHD in phd_split order: every variant, plain and final-copy rows.
  for (std::int64_t K : {2, 3, 5})
    for (std::int64_t L : {4096, 4097}) {
      MaskSpec masks[] = {phd(L, K, PhdVariant::plain), phd(L, K, PhdVariant::swa, 16), phd(L, K, PhdVariant::swa, 1000),
                          phd(L, K, PhdVariant::cswa, 16, 32), phd(L, K, PhdVariant::cswa, 100, 7)};
      for (MaskSpec m : masks)
        for (bool final_rows : {false, true}) {
          m.final_copy_queries_only = final_rows;
          for (const auto& [Bq, Bk] : tiles) compare(m, Layout::phd_split, Bq, Bk);
        }
    }
  // Intra with more copies than a key tile: a closed form once a query block covers them.
  for (std::int64_t Bq : {100, 128, 1000})
    for (std::int64_t Bk : {16, 64, 99}) compare(spec(Kind::intra, 1001, 100), Layout::interleaved, Bq, Bk);
  // Per n and L: 7 masks x 2 row sets (13 at n > 1: window 1 < n with final-copy rows has
  // no closed form) x 5 tiles (4 at L = 20011), + 3 stream-major at L = 4096; then PHD
  // 3 K x 2 L x 5 masks x 2 x 5 tiles, and the 3 x 3 intra tiles.
  const int per_n1 = 14 * 5 + 14 * 5 + 14 * 4 + 3, per_n = 13 * 5 + 13 * 5 + 13 * 4 + 3;
  CHECK(compared == per_n1 + 3 * per_n + 3 * 2 * 5 * 2 * 5 + 9);
}

namespace {

// The rows of a PHD partial prefill: origins of every token, hidden copies of the last
// `tail` tokens only, as logical positions in the physical order of `l` of the whole sequence.
std::vector<std::int64_t> partial_prefill_rows(const MaskSpec& m, std::int64_t tail, Layout l) {
  std::vector<std::int64_t> rows;
  for (std::int64_t t = 0; t < m.positions(); ++t)
    if (t % m.copies == 0 || t / m.copies >= m.tokens - tail) rows.push_back(t);
  std::sort(rows.begin(), rows.end(), [&](std::int64_t a, std::int64_t b) {
    return physical_of_logical(m.tokens, m.copies, l, a) < physical_of_logical(m.tokens, m.copies, l, b);
  });
  return rows;
}

// Brute force: the computed rows x themselves, visibility from the predicate of the whole mask.
std::vector<std::uint8_t> partial_prefill_grid(const MaskSpec& m, const std::vector<std::int64_t>& rows) {
  std::vector<std::uint8_t> g;
  for (std::int64_t q : rows)
    for (std::int64_t k : rows) g.push_back(visible(m, q, k) ? 1 : 0);
  return g;
}

}  // namespace

TEST_CASE("tile counts: PHD partial prefill over the computed rows equals brute force", "[mask][phd]") {
  // Plain (any tail) and CSWA (tails from a chunk boundary) in every layout: tails of one
  // token to all of them, prefixes shorter and longer than a tile, tiles of 1 to past the grid.
  int checked = 0;
  for (std::int64_t K : {1, 2, 3, 5})
    for (std::int64_t L : {1, 2, 7, 12, 23}) {
      std::vector<std::pair<MaskSpec, std::int64_t>> cases;
      for (std::int64_t tail = 1; tail <= L; ++tail) cases.push_back({phd(L, K, PhdVariant::plain), tail});
      for (std::int64_t C : {1, 3, 5})
        for (std::int64_t W : {1, 2, 7})
          for (std::int64_t start = 0; start < L; start += C) cases.push_back({phd(L, K, PhdVariant::cswa, W, C), L - start});
      cases.push_back({phd(L, K, PhdVariant::swa, 3), L});
      for (const auto& [m, tail] : cases)
        for (Layout l : all_layouts) {
          const std::vector<std::int64_t> rows = partial_prefill_rows(m, tail, l);
          const std::vector<std::uint8_t> grid = partial_prefill_grid(m, rows);
          const auto n = static_cast<std::int64_t>(rows.size());
          for (std::int64_t Bq : {std::int64_t{1}, std::int64_t{2}, std::int64_t{4}, std::int64_t{7}, n + 1})
            for (std::int64_t Bk : {std::int64_t{1}, std::int64_t{3}, std::int64_t{8}, n + 1}) {
              INFO(describe_spec(m) << " tail " << tail << " layout " << to_string(l) << " tile " << Bq << "x" << Bk);
              const TileCount got = phd_partial_prefill_tiles(m, tail, l, Bq, Bk);
              const TileCount want = tiles_of_grid(grid, n, n, Bq, Bk);
              INFO("counted: " << show(got) << "; brute force: " << show(want));
              REQUIRE(same(got, want));
              ++checked;
            }
        }
    }
  // Cases per L: L plain tails + 3 W x (ceil(L/1) + ceil(L/3) + ceil(L/5)) CSWA tails + 1
  // SWA = 11, 15, 44, 70, 132 for L = 1, 2, 7, 12, 23; x 4 K x 3 layouts x 5 x 4 tiles.
  CHECK(checked == (11 + 15 + 44 + 70 + 132) * 4 * 3 * 5 * 4);
  // The whole prompt as the tail is the whole mask.
  const MaskSpec m = phd(300, 3, PhdVariant::cswa, 16, 32);
  CHECK(same(phd_partial_prefill_tiles(m, 300, Layout::phd_split, 64, 64), visible_tiles(m, Layout::phd_split, 64, 64)));
}

TEST_CASE("tile counts: PHD partial prefill on long prompts against the brute-force grid", "[mask][phd]") {
  // The executor's case (plain, L 150, K 3, 64 x 64 tiles) and prompts of thousands of
  // tokens whose origin-only blocks take the closed form, pair by pair.
  struct Case {
    MaskSpec m;
    std::int64_t tail, Bq, Bk;
  };
  const Case cases[] = {{phd(150, 3, PhdVariant::plain), 1, 64, 64},
                        {phd(2049, 3, PhdVariant::plain), 1, 128, 128},
                        {phd(2048, 2, PhdVariant::cswa, 16, 32), 32, 128, 64},
                        {phd(2001, 4, PhdVariant::cswa, 16, 32), 2001 - 2000 / 32 * 32, 100, 37}};
  for (const Case& c : cases)
    for (Layout l : all_layouts) {
      INFO(describe_spec(c.m) << " tail " << c.tail << " layout " << to_string(l));
      const std::vector<std::int64_t> rows = partial_prefill_rows(c.m, c.tail, l);
      const auto n = static_cast<std::int64_t>(rows.size());
      TileCount want;
      for (std::int64_t r0 = 0; r0 < n; r0 += c.Bq)
        for (std::int64_t c0 = 0; c0 < n; c0 += c.Bk) {
          const std::int64_t r1 = std::min(n, r0 + c.Bq), c1 = std::min(n, c0 + c.Bk);
          std::int64_t seen = 0;
          for (std::int64_t r = r0; r < r1; ++r)
            for (std::int64_t k = c0; k < c1; ++k)
              seen += visible(c.m, rows[static_cast<std::size_t>(r)], rows[static_cast<std::size_t>(k)]) ? 1 : 0;
          ++want.total;
          if (seen > 0) {
            ++want.visible;
            want.executed_pairs += (r1 - r0) * (c1 - c0);
          }
          if (seen == (r1 - r0) * (c1 - c0)) ++want.full;
        }
      const TileCount got = phd_partial_prefill_tiles(c.m, c.tail, l, c.Bq, c.Bk);
      INFO("counted: " << show(got) << "; brute force: " << show(want));
      CHECK(same(got, want));
    }
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

TEST_CASE("tile counts stay consistent on long sequences", "[mask]") {
  // Far beyond brute force: counts must respect full <= visible <= total and
  // pairs <= executed <= visible * Bq * Bk, and cost O(blocks), not O(L^2).
  const MaskSpec masks[] = {spec(Kind::causal, 131072, 8), spec(Kind::intra, 131072, 8), sliding(131071, 8, 4096),
                            phd(65536, 3, PhdVariant::cswa, 16, 32), phd(65537, 5, PhdVariant::swa, 16)};
  for (const MaskSpec& m : masks)
    for (Layout l : all_layouts) {
      INFO(describe_spec(m) << " layout " << to_string(l));
      const TileCount t = visible_tiles(m, l, 128, 64);
      CHECK(t.full <= t.visible);
      CHECK(t.visible <= t.total);
      CHECK(t.executed_pairs >= visible_pairs(m));
      CHECK(t.executed_pairs <= t.visible * 128 * 64);
    }
  // A tile bigger than everything is the one whole grid, even at the int64 limit.
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  const TileCount whole = visible_tiles(spec(Kind::causal, 1000, 3), Layout::stream_major, huge, huge);
  CHECK(same(whole, TileCount{1, 0, 1, 3000 * 3000}));
  CHECK(same(visible_tiles_brute(spec(Kind::intra, 10, 3), Layout::interleaved, huge, 7),
             visible_tiles(spec(Kind::intra, 10, 3), Layout::interleaved, 30, 7)));
  // Causal in logical order, exactly: query block b meets blocks 0..b (Bq = Bk).
  const std::int64_t blocks = 131072 * 8 / 128;
  CHECK(visible_tiles(spec(Kind::causal, 131072, 8), Layout::interleaved, 128, 128).visible == blocks * (blocks + 1) / 2);
  CHECK(visible_tiles(spec(Kind::causal, 131072, 8), Layout::interleaved, 128, 128).full == blocks * (blocks - 1) / 2);
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
