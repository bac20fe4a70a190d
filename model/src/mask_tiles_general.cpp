// The general per-block method of the exact tile counts (method and complexity: see
// mask_tiles.cpp): runs (periodic intervals in physical key order) and the key blocks
// they meet, cells (rectangles in (token, copy) space) mapped to runs per layout, each
// query block's rows, union U and intersection I, and the block-by-block count; then the
// PHD partial prefill, whose tail blocks run the same method after a prefix of origins.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "hdlab/model/mask.hpp"
#include "mask_tiles_internal.hpp"

namespace hdlab::model::tiles {

namespace {

// ---- runs: the key blocks they meet, their complement ---------------------------------------

wide floors(std::int64_t count, std::int64_t period, std::int64_t first, std::int64_t div) {
  if (count == 1) return first / div;
  return floor_sum(count, period, first, div);
}

// Key blocks of width B (block c = [cB, (c+1)B)) meeting a sorted list of disjoint runs.
std::int64_t blocks_meeting(const RunList& list, std::int64_t B) {
  wide blocks = 0;
  std::int64_t prev_last_block = -1;
  for (const Run& r : list.runs) {
    const std::int64_t m = r.count, P = r.period;
    const std::span<const Piece> pattern = list.pattern(r);
    for (const Piece& p : pattern) {
      const std::int64_t lo = r.base + p.offset, hi = lo + p.length - 1;
      blocks += floors(m, P, hi, B) - floors(m, P, lo, B) + m;
    }
    // Consecutive intervals sharing a block: [floor(next/B) == floor(prev_last/B)], which is
    // 1 - (floor(next/B) - floor(prev_last/B)) when next - prev_last <= B, else 0.
    auto shared = [&](std::int64_t terms, std::int64_t prev_last, std::int64_t next) -> wide {
      if (terms <= 0 || next - prev_last > B) return 0;
      return terms - (floors(terms, P, next, B) - floors(terms, P, prev_last, B));
    };
    for (std::size_t q = 0; q + 1 < pattern.size(); ++q)
      blocks -= shared(m, r.base + pattern[q].offset + pattern[q].length - 1, r.base + pattern[q + 1].offset);
    blocks -= shared(m - 1, r.base + pattern.back().offset + pattern.back().length - 1,
                     r.base + P + pattern.front().offset);
    if (list.first(r) / B == prev_last_block) blocks -= 1;
    prev_last_block = (list.end(r) - 1) / B;
  }
  return static_cast<std::int64_t>(blocks);
}

// [0, N) minus the runs, as runs (into `out`, cleared first): within a run, the gaps between
// its pieces and the gap that wraps into the next period; between runs, plain intervals.
void complement(const RunList& in, std::int64_t N, RunList& out) {
  out.clear();
  std::int64_t cursor = 0;
  for (const Run& r : in.runs) {
    if (in.first(r) > cursor) out.add_interval(cursor, in.first(r));
    const std::span<const Piece> pattern = in.pattern(r);
    // The inner gaps, then the wrapping gap: every period but the last has both, the last
    // only the inner ones, so its run reuses the leading pieces.
    const std::size_t start = out.pieces.size();
    for (std::size_t q = 0; q + 1 < pattern.size(); ++q) {
      const std::int64_t from = pattern[q].offset + pattern[q].length;
      if (pattern[q + 1].offset > from) out.pieces.push_back({from, pattern[q + 1].offset - from});
    }
    const std::size_t inner = out.pieces.size() - start;
    const std::int64_t tail = pattern.back().offset + pattern.back().length;
    if (r.period + pattern.front().offset > tail) out.pieces.push_back({tail, r.period + pattern.front().offset - tail});
    if (r.count >= 2 && out.pieces.size() > start) out.add_run(r.base, r.period, r.count - 1, start);
    if (inner > 0) out.runs.push_back({r.base + (r.count - 1) * r.period, r.period, 1, start, inner});
    cursor = in.end(r);
  }
  if (cursor < N) out.add_interval(cursor, N);
}

// ---- cells to runs ----------------------------------------------------------------------------

// A contiguous stretch [x, y] of an order where token i holds `per_token` consecutive slots
// for copies first_copy.. (logical order: per_token = n, first_copy = 0; PHD hidden ranks:
// n-1 and 1), as at most three rectangles: partial token, whole tokens, partial token.
void add_stretch(std::int64_t x, std::int64_t y, std::int64_t per_token, std::int64_t first_copy, CellList& out) {
  if (x > y) return;
  const std::int64_t ix = x / per_token, kx = x % per_token + first_copy;
  const std::int64_t iy = y / per_token, ky = y % per_token + first_copy;
  const std::int64_t last_copy = first_copy + per_token - 1;
  if (ix == iy) {
    out.push_back({ix, ix, kx, ky});
    return;
  }
  out.push_back({ix, ix, kx, last_copy});
  if (iy > ix + 1) out.push_back({ix + 1, iy - 1, first_copy, last_copy});
  out.push_back({iy, iy, first_copy, ky});
}

// Cells mapped to runs along one axis: `major` ranges become periods of `period` slots
// starting at `base`, `minor` ranges the pieces inside a period. A sweep over major
// boundaries merges overlapping rectangles.
struct Axis {
  bool token_major;  // interleaved-like (token = period) or stream-major-like (copy = period)
  std::int64_t base, period;
  std::int64_t minor_shift;  // subtracted from the minor coordinate (phd_split hidden: copy-1)
};

// One run per major segment: the minor ranges of the rectangles covering it, merged.
void add_segment_run(const std::vector<std::pair<std::int64_t, std::int64_t>>& minors, const Axis& ax,
                     std::int64_t from, std::int64_t to, RunList& out) {
  const std::size_t start = out.pieces.size();
  for (const auto& [lo, hi] : minors) {
    if (out.pieces.size() > start && out.pieces.back().offset + out.pieces.back().length >= lo)
      out.pieces.back().length = std::max(out.pieces.back().length, hi + 1 - out.pieces.back().offset);
    else
      out.pieces.push_back({lo, hi - lo + 1});
  }
  out.add_run(ax.base + from * ax.period, ax.period, to - from, start);
  Run& run = out.runs.back();
  Piece& only = out.pieces[start];
  if (run.pieces == 1 && only.offset == 0 && only.length == run.period) {
    run.period *= run.count;  // whole periods: one contiguous interval
    only.length = run.period;
    run.count = 1;
  }
}

void append_runs(const CellList& cells, const Axis& ax, Scratch& s, RunList& out) {
  s.rects.clear();
  for (const Cells& c : cells) {
    if (c.i0 > c.i1 || c.k0 > c.k1) continue;
    if (ax.token_major)
      s.rects.push_back({c.i0, c.i1, c.k0 - ax.minor_shift, c.k1 - ax.minor_shift});
    else
      s.rects.push_back({c.k0, c.k1, c.i0, c.i1});
  }
  s.cuts.clear();
  for (const Rect& r : s.rects) {
    s.cuts.push_back(r.a);
    s.cuts.push_back(r.b + 1);
  }
  std::sort(s.cuts.begin(), s.cuts.end());
  s.cuts.erase(std::unique(s.cuts.begin(), s.cuts.end()), s.cuts.end());
  for (std::size_t seg = 0; seg + 1 < s.cuts.size(); ++seg) {
    s.minors.clear();
    for (const Rect& r : s.rects)
      if (r.a <= s.cuts[seg] && r.b >= s.cuts[seg]) s.minors.push_back({r.lo, r.hi});
    if (s.minors.empty()) continue;
    std::sort(s.minors.begin(), s.minors.end());
    add_segment_run(s.minors, ax, s.cuts[seg], s.cuts[seg + 1], out);
  }
}

// Sweeping every segment against every rectangle is O(segments x rectangles); rectangles
// per block are few (at most ~20 outside CSWA), so this stays O(1) per block.
void runs_of(const CellList& cells, const MaskSpec& m, Layout l, Scratch& s, RunList& out) {
  out.clear();
  const std::int64_t L = m.tokens, n = m.copies;
  switch (l) {
    case Layout::interleaved: append_runs(cells, {true, 0, n, 0}, s, out); break;
    case Layout::stream_major: append_runs(cells, {false, 0, L, 0}, s, out); break;
    case Layout::phd_split: {
      s.origins.clear();
      s.hidden.clear();
      for (const Cells& c : cells) {
        if (c.k0 == 0) s.origins.push_back({c.i0, c.i1, 0, 0});
        if (c.k1 >= 1) s.hidden.push_back({c.i0, c.i1, std::max<std::int64_t>(c.k0, 1), c.k1});
      }
      append_runs(s.origins, {false, 0, L, 0}, s, out);
      if (n > 1) append_runs(s.hidden, {true, L, n - 1, 1}, s, out);
      break;
    }
  }
}

// ---- query blocks ---------------------------------------------------------------------------

// The rows [r0, r1) of a block in layout l, as rectangles of (token, copy).
void block_rows(const MaskSpec& m, Layout l, std::int64_t r0, std::int64_t r1, CellList& rows) {
  const std::int64_t L = m.tokens, n = m.copies;
  rows.clear();
  if (m.final_copy_queries_only) {
    rows.push_back({r0, r1 - 1, n - 1, n - 1});
    return;
  }
  switch (l) {
    case Layout::interleaved: add_stretch(r0, r1 - 1, n, 0, rows); break;
    case Layout::stream_major:
      // p = k*L + i is the stretch order with copies as "tokens" of L slots: swap the axes.
      add_stretch(r0, r1 - 1, L, 0, rows);
      for (Cells& c : rows) c = {c.k0, c.k1, c.i0, c.i1};
      break;
    case Layout::phd_split:
      if (r0 < L) rows.push_back({r0, std::min(r1, L) - 1, 0, 0});
      if (r1 > L) add_stretch(std::max(r0, L) - L, r1 - 1 - L, n - 1, 1, rows);
      break;
  }
}

// Extremes of a block's rows that fix the intersection of their visible sets.
struct RowSummary {
  std::int64_t t_min, t_max;  // logical positions
  std::int64_t i_min;         // token
  bool has_origin = false;    // some row has copy 0
  bool single_copy = true;    // every row has the same copy
  std::int64_t copy = -1;
  std::int64_t rank_min = -1, rank_max = -1;  // PHD hidden ranks of the hidden rows (-1: none)
};

RowSummary summarize(const CellList& rows, std::int64_t n) {
  RowSummary s{rows[0].i0 * n + rows[0].k0, rows[0].i1 * n + rows[0].k1, rows[0].i0};
  s.copy = rows[0].k0;
  for (const Cells& c : rows) {
    s.t_min = std::min(s.t_min, c.i0 * n + c.k0);
    s.t_max = std::max(s.t_max, c.i1 * n + c.k1);
    s.i_min = std::min(s.i_min, c.i0);
    s.has_origin = s.has_origin || c.k0 == 0;
    s.single_copy = s.single_copy && c.k0 == c.k1 && c.k0 == s.copy;
    if (c.k1 >= 1 && n > 1) {
      const std::int64_t lo = c.i0 * (n - 1) + std::max<std::int64_t>(c.k0, 1) - 1;
      const std::int64_t hi = c.i1 * (n - 1) + c.k1 - 1;
      s.rank_min = s.rank_min < 0 ? lo : std::min(s.rank_min, lo);
      s.rank_max = std::max(s.rank_max, hi);
    }
  }
  return s;
}

// PHD hidden keys seen by hidden rows tokens [a, b] x copies [j0, j1] (j0 >= 1), none of
// whose windows reach below token `floor_token` (0, or the CSWA chunk start). Per token i
// the rows see ranks [i(K-1) + delta, i(K-1) + j1 - 1] with delta = min(0, j0-1-W):
// consecutive tokens' ranges touch when delta <= j1 - (K-1), else each is this token's
// copies [1, j1] plus the previous token's copies [K+delta, K-1].
void add_phd_window_union(const MaskSpec& m, std::int64_t a, std::int64_t b, std::int64_t j0, std::int64_t j1,
                          std::int64_t floor_token, CellList& out) {
  const std::int64_t K = m.copies, c = K - 1;
  const std::int64_t delta = std::min<std::int64_t>(0, j0 - 1 - m.phd_W);
  if (delta <= j1 - c) {
    add_stretch(std::max(floor_token * c, a * c + delta), b * c + j1 - 1, c, 1, out);
    return;
  }
  out.push_back({a, b, 1, j1});
  if (delta < 0 && b - 1 >= std::max(floor_token, a - 1)) out.push_back({std::max(floor_token, a - 1), b - 1, K + delta, K - 1});
}

void add_phd_union(const MaskSpec& m, const Cells& r, CellList& out) {
  out.push_back({0, r.i1, 0, 0});  // origins up to the row's token
  const std::int64_t j0 = std::max<std::int64_t>(r.k0, 1);
  if (r.k1 < 1 || m.copies < 2) return;
  if (m.phd_variant == PhdVariant::plain) {
    out.push_back({r.i0, r.i1, 1, r.k1});
  } else if (m.phd_variant == PhdVariant::swa) {
    add_phd_window_union(m, r.i0, r.i1, j0, r.k1, 0, out);
  } else {  // one piece per chunk the rows touch
    for (std::int64_t chunk = r.i0 / m.phd_C; chunk <= r.i1 / m.phd_C; ++chunk) {
      const std::int64_t start = chunk * m.phd_C;
      add_phd_window_union(m, std::max(r.i0, start), std::min(r.i1, start + m.phd_C - 1), j0, r.k1, start, out);
    }
  }
}

// U: keys some row of the block sees, per kind, as rectangles.
void block_union(const MaskSpec& m, const CellList& rows, CellList& u) {
  const std::int64_t n = m.copies;
  u.clear();
  for (const Cells& r : rows) {
    switch (m.kind) {
      case MaskSpec::Kind::causal: add_stretch(0, r.i1 * n + r.k1, n, 0, u); break;
      case MaskSpec::Kind::intra: u.push_back({0, r.i1, r.k0, r.k1}); break;
      case MaskSpec::Kind::phd: add_phd_union(m, r, u); break;
      case MaskSpec::Kind::sliding: {
        // Rows (i, k) see logical (t-w, t]. Per token the rectangle's rows see
        // (i*n + k0 - w, i*n + k1]; consecutive tokens' stretches touch iff k1-k0+w >= n.
        const std::int64_t w = m.window;
        if (r.k1 - r.k0 + w >= n) {
          add_stretch(std::max<std::int64_t>(0, r.i0 * n + r.k0 - w + 1), r.i1 * n + r.k1, n, 0, u);
        } else if (r.k0 - w + 1 >= 0) {
          u.push_back({r.i0, r.i1, r.k0 - w + 1, r.k1});
        } else {  // the window reaches into the previous token's last copies
          u.push_back({r.i0, r.i1, 0, r.k1});
          u.push_back({std::max<std::int64_t>(0, r.i0 - 1), r.i1 - 1, n + r.k0 - w + 1, n - 1});
        }
        break;
      }
    }
  }
}

// I: keys every row of the block sees, from the block's extreme rows.
void block_intersection(const MaskSpec& m, const RowSummary& s, CellList& in) {
  const std::int64_t n = m.copies;
  in.clear();
  switch (m.kind) {
    case MaskSpec::Kind::causal: add_stretch(0, s.t_min, n, 0, in); break;
    case MaskSpec::Kind::sliding: add_stretch(std::max<std::int64_t>(0, s.t_max - m.window + 1), s.t_min, n, 0, in); break;
    case MaskSpec::Kind::intra:
      if (s.single_copy) in.push_back({0, s.i_min, s.copy, s.copy});  // distinct copies share no key
      break;
    case MaskSpec::Kind::phd:
      in.push_back({0, s.i_min, 0, 0});
      // Hidden keys: origin rows see none; hidden rows see [low(rho), rho], both ends rising.
      if (!s.has_origin && s.rank_max >= 0) add_stretch(phd_low_rank(m, s.rank_max), s.rank_min, n - 1, 1, in);
      break;
  }
}

// ---- the tile grid, block by block ----------------------------------------------------------

// Counts one query block of `rows` rows from U and I as runs (s.u, s.in): key blocks
// meeting U are visible, those inside I full (the rest of the grid's blocks meet I's
// complement), every visible one executed in full but the short last key block.
void count_block(const Grid& g, std::int64_t rows, Scratch& s, TileCount& tc) {
  complement(s.in, g.N, s.outside);
  const std::int64_t meeting = blocks_meeting(s.u, g.Bk);
  tc.visible += meeting;
  tc.full += g.key_blocks - blocks_meeting(s.outside, g.Bk);
  const bool meets_last = !s.u.runs.empty() && s.u.end(s.u.runs.back()) - 1 >= g.last_block_start;
  tc.executed_pairs += rows * (meeting * g.Bk - (meets_last ? g.key_blocks * g.Bk - g.N : 0));
}

}  // namespace

// Adds the tiles of the query block starting at row r0 (the general method, see mask_tiles.cpp).
void add_block(const MaskSpec& m, Layout l, const Grid& g, std::int64_t r0, Scratch& s, TileCount& tc) {
  const std::int64_t r1 = std::min(g.R, r0 + g.Bq);
  block_rows(m, l, r0, r1, s.rows);
  block_union(m, s.rows, s.cells);
  runs_of(s.cells, m, l, s, s.u);
  block_intersection(m, summarize(s.rows, m.copies), s.cells);
  runs_of(s.cells, m, l, s, s.in);
  count_block(g, r1 - r0, s, tc);
}

TileCount general_tiles(const MaskSpec& m, Layout l, const Grid& g) {
  TileCount tc;
  tc.total = g.total();
  Scratch s;
  for (std::int64_t r0 = 0; r0 < g.R; r0 += g.Bq) add_block(m, l, g, r0, s, tc);
  return tc;
}

namespace {

// ---- PHD partial prefill: origins before the tail, then a whole mask ---------------------------

// The rows (and keys) are `prefix` origins of the tokens before the tail, which see each
// other causally, then every position of `tail` (the mask of the last tokens alone, in its
// own physical order), whose rows see every prefix key. So a block of prefix rows only is
// a causal block; a block holding tail rows has U = [0, prefix) + (prefix + the tail rows'
// U in `tail`), and I = [0, r0] when its first row r0 is a prefix row, else [0, prefix) +
// (prefix + the tail rows' I).

// `in` moved `prefix` keys on, after the interval [0, prefix).
void after_prefix(const RunList& in, std::int64_t prefix, RunList& out) {
  out.clear();
  if (prefix > 0) out.add_interval(0, prefix);
  for (const Run& r : in.runs) {
    const std::size_t first = out.pieces.size();
    for (const Piece& p : in.pattern(r)) out.pieces.push_back(p);
    out.add_run(r.base + prefix, r.period, r.count, first);
  }
}

// Query block [r0, r0 + Bq) holding at least one tail row (r0 + Bq > prefix).
void add_prefixed_block(const MaskSpec& tail, Layout l, const Grid& g, std::int64_t prefix, std::int64_t r0,
                        Scratch& s, TileCount& tc) {
  const std::int64_t r1 = std::min(g.R, r0 + g.Bq);
  RunList& tail_runs = s.outside;  // free until count_block fills it
  block_rows(tail, l, std::max(r0, prefix) - prefix, r1 - prefix, s.rows);
  block_union(tail, s.rows, s.cells);
  runs_of(s.cells, tail, l, s, tail_runs);
  after_prefix(tail_runs, prefix, s.u);
  if (r0 < prefix) {
    s.in.clear();
    s.in.add_interval(0, r0 + 1);
  } else {
    block_intersection(tail, summarize(s.rows, tail.copies), s.cells);
    runs_of(s.cells, tail, l, s, tail_runs);
    after_prefix(tail_runs, prefix, s.in);
  }
  count_block(g, r1 - r0, s, tc);
}

}  // namespace

TileCount prefixed_tiles(const MaskSpec& tail, Layout l, std::int64_t prefix, std::int64_t Bq, std::int64_t Bk) {
  const Grid g = grid_of(prefix + tail.query_rows(), prefix + tail.positions(), Bq, Bk);
  TileCount tc;
  tc.total = g.total();
  // Blocks of prefix rows only: the causal family over the whole grid (keys [0, t]).
  const std::int64_t M = prefix / g.Bq;
  add_causal_blocks(M, g, tc);
  Scratch s;
  for (std::int64_t r0 = M * g.Bq; r0 < g.R; r0 += g.Bq) add_prefixed_block(tail, l, g, prefix, r0, s, tc);
  return tc;
}

}  // namespace hdlab::model::tiles
