// Helpers shared by the mask tests (test_mask.cpp, test_mask_tiles.cpp): mask specs by
// kind, the materialised grid as text, tile counts of a materialised grid by brute force
// and by prefix sums, random small masks, and error capture.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/mask.hpp"

namespace mask_test {

using namespace hdlab::model;
using Kind = MaskSpec::Kind;

constexpr Layout all_layouts[] = {Layout::interleaved, Layout::stream_major, Layout::phd_split};

inline MaskSpec spec(Kind kind, std::int64_t tokens, std::int64_t copies) {
  MaskSpec m;
  m.kind = kind;
  m.tokens = tokens;
  m.copies = copies;
  return m;
}

inline MaskSpec sliding(std::int64_t tokens, std::int64_t copies, std::int64_t window) {
  MaskSpec m = spec(Kind::sliding, tokens, copies);
  m.window = window;
  return m;
}

inline MaskSpec phd(std::int64_t tokens, std::int64_t K, PhdVariant v, std::int64_t W = 0, std::int64_t C = 0) {
  MaskSpec m = spec(Kind::phd, tokens, K);
  m.phd_variant = v;
  m.phd_W = W;
  m.phd_C = C;
  return m;
}

inline std::string describe_spec(const MaskSpec& m) {
  std::ostringstream s;
  s << to_string(m.kind) << " L=" << m.tokens << " copies=" << m.copies << " window=" << m.window
    << " phd=" << to_string(m.phd_variant) << " W=" << m.phd_W << " C=" << m.phd_C
    << (m.final_copy_queries_only ? " final-copy-only" : "");
  return s.str();
}

// The materialised mask drawn as rows of '#' (visible) and '.' (masked).
inline std::string grid_text(const MaskSpec& m, Layout l) {
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
inline TileCount tiles_of_grid(const std::vector<std::uint8_t>& g, std::int64_t R, std::int64_t N, std::int64_t Bq,
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

inline bool same(const TileCount& a, const TileCount& b) {
  return a.visible == b.visible && a.full == b.full && a.total == b.total && a.executed_pairs == b.executed_pairs;
}

inline std::string show(const TileCount& t) {
  return "visible " + std::to_string(t.visible) + " full " + std::to_string(t.full) + " total " +
         std::to_string(t.total) + " executed " + std::to_string(t.executed_pairs);
}

// A random mask with small sizes: odd lengths, copies often above the tile, windows below
// and above the copies, every PHD variant, final-copy rows for HD kinds.
inline MaskSpec random_spec(std::mt19937_64& rng) {
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
inline std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

inline Config config_of(const char* backbone, const char* design) {
  return parse_config(Json{{"backbone", Json::parse(backbone)}, {"design", Json::parse(design)}});
}

constexpr const char* tiny_backbone = R"({
  "name": "tiny", "num_layers": 4, "hidden_size": 64, "num_heads": 4, "num_kv_heads": 2,
  "intermediate_size": 128, "vocab_size": 100,
  "attention": {"layers": ["sliding", "full", "sliding", "full"], "sliding_window": 3},
  "kv_mirror_layers": 1
})";

}  // namespace mask_test
