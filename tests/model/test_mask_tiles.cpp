// Attention masks' tile counts: the closed forms against brute force on thousands of
// random masks (every kind x layout, odd lengths, tiles bigger than the sequence, n or K
// bigger than the tile, final-copy-only rows), over all query blocks against brute force
// over the ranges they cover, against the per-block method on long sequences, and PHD's
// partial prefill over the computed rows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mask_test_helpers.hpp"

using namespace mask_test;

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
