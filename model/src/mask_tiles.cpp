// Exact tile counts of every mask kind in every physical layout, for any sequence length
// and tile size, without enumerating pairs.
//
// Method. Query rows are cut into blocks of Bq rows. For one block, a key tile (Bk keys)
// is visible iff it meets U, the union of the block's rows' visible key sets, and full iff
// it lies inside I, their intersection. So per block we need
//   visible += #key blocks meeting U,   full += #key blocks inside I
//            = #key blocks - #key blocks meeting (complement of I).
// U and I are built in (token, copy) space as a few rectangles of cells (Cells), mapped to
// the physical layout as "runs": a pattern of intervals repeated `count` times with a
// period (interleaved: period n, pattern = copies; stream-major: period L, pattern =
// tokens; phd_split: copy 0 as plain intervals, then period n-1 over hidden ranks). The
// number of key blocks a sorted list of disjoint intervals meets is
//   sum over intervals of (last block - first block + 1)
//   - #(consecutive intervals whose gap lies inside one block),
// and over a periodic run each term is a floor sum sum_s floor((a + s*P) / B), which the
// Euclid-like reduction below evaluates in O(log) steps: this is where residue counting
// enters (e.g. HD intra in interleaved order with n > Bk, where U is every n-th column).
//
// Per (kind, layout) the rectangles are derived below (block_union / block_intersection);
// the row blocks of each layout are at most 6 rectangles (block_rows): interleaved and
// final-copy rows a logical stretch (<= 3), stream-major <= 3 (partial stream, whole
// streams, partial stream), phd_split origins + a hidden-rank stretch (<= 4).
// Work per query block, by case (total = that x ceil(rows / Bq)):
//   causal   U = logical prefix [0, t_max], I = [0, t_min]. Interleaved: one interval, O(1).
//            Stream-major: every stream a prefix, <= 3 runs of period L, O(log N).
//            phd_split: a copy-0 prefix and a hidden-rank prefix, O(1).
//   sliding  U = a logical stretch when the rows' windows overlap (w >= n, or the block's
//            copy span + w >= n), else one window per token: <= 2 rectangles, a run of
//            period n (interleaved) or per-stream intervals (stream-major); I = the stretch
//            (t_max - w, t_min]. O(log N) in every layout.
//   intra    U = [0, i_max] x the block's copies. Interleaved: a run of period n whose
//            pattern is those copies -- equal to the causal count once the copies cover a
//            tile, otherwise residue counting by floor sums, O(log N). Stream-major: per
//            stream prefixes, O(log N). I is non-empty only for single-copy blocks.
//   phd      U = origins [0, i_max] plus, per row rectangle, a hidden-rank stretch or (short
//            windows) <= 2 rectangles of period K; I = origins [0, i_min] plus the rank
//            interval [low(rho_max), rho_min] when the block has no origin row.
//            plain / SWA: O(log N) in every layout. CSWA: the same per chunk the block's
//            rows touch, O(1 + tokens spanned / C) -- O(1) in interleaved and phd_split
//            blocks of a few tokens, up to Bq / C in stream-major blocks.
//
// Speed. The cost model asks for new shapes at every point of a sweep, so (fast_tiles)
//  - where every block but the last has the same shape up to a shift, one closed form
//    covers all of them in O(log N) per call (window_tiles): causal and sliding masks in
//    logical order, where U and I are intervals whose ends are affine in the block index
//    (the sums over blocks are floor sums); intra in logical order where its tiles are the
//    causal ones (n <= Bk, or query blocks of >= n rows); intra in stream-major order on
//    tiles dividing L (n diagonal copies of the causal L x L grid). The last, possibly
//    short block is counted on its own;
//  - PHD in phd_split order: U and I are two key intervals per block (origins, hidden
//    ranks), counted in O(1) per block (add_phd_split_block);
//  - the rest (stream-major causal / sliding, PHD in other orders, ...) runs the general
//    per-block method above, where no block allocates: one Scratch of buffers serves every
//    block of a call. The tests hold every shortcut to brute force and to the general method.
#include <algorithm>
#include <cassert>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hdlab/model/error.hpp"
#include "hdlab/model/mask.hpp"

namespace hdlab::model {

namespace {

__extension__ typedef __int128 wide;  // floor sums of up to 2^31 terms of up to 2^31

// sum_{s=0}^{count-1} floor((first + s*step) / div), all arguments >= 0, div >= 1.
// Reduce step and first below div (their quotients contribute arithmetic series), then
// count the same lattice points under the line by columns instead of rows, which swaps the
// roles of step and div as in Euclid's algorithm.
wide floor_sum(wide count, wide step, wide first, wide div) {
  wide total = 0;
  while (count > 0) {
    if (step >= div) {
      total += count * (count - 1) / 2 * (step / div);
      step %= div;
    }
    if (first >= div) {
      total += count * (first / div);
      first %= div;
    }
    const wide top = step * count + first;  // the line's value just past the last term
    if (top < div) break;
    count = top / div;
    first = top % div;
    std::swap(step, div);
  }
  return total;
}

// ---- runs: periodic sets of intervals in physical key order ------------------------------

struct Piece {
  std::int64_t offset;  // from the run's base, within [pattern[0].offset, pattern[0].offset + period)
  std::int64_t length;  // >= 1
};
// Intervals [base + s*period + o, base + s*period + o + len) for s in [0, count) and each
// piece (o, len) of its pattern; pieces sorted and disjoint (adjacent only across periods).
// Runs in a list are sorted and disjoint too. The pattern lives in the list's `pieces`
// (see RunList), so that a list can be refilled for every query block without allocating.
struct Run {
  std::int64_t base = 0;
  std::int64_t period = 1;
  std::int64_t count = 1;
  std::size_t first_piece = 0, pieces = 0;  // pattern = RunList::pieces[first_piece, +pieces)
};

// A sorted list of runs and their patterns, stored back to back. Two runs may share
// pieces (complement() gives the last period a prefix of the other periods' pattern).
struct RunList {
  std::vector<Run> runs;
  std::vector<Piece> pieces;

  void clear() {
    runs.clear();  // keeps the capacity: the next block reuses it
    pieces.clear();
  }
  std::span<const Piece> pattern(const Run& r) const { return {pieces.data() + r.first_piece, r.pieces}; }
  std::int64_t first(const Run& r) const { return r.base + pieces[r.first_piece].offset; }
  std::int64_t end(const Run& r) const {
    const Piece& last = pieces[r.first_piece + r.pieces - 1];
    return r.base + (r.count - 1) * r.period + last.offset + last.length;
  }
  // A run over the pieces pushed since `first_piece`.
  void add_run(std::int64_t base, std::int64_t period, std::int64_t count, std::size_t first_piece) {
    runs.push_back({base, period, count, first_piece, pieces.size() - first_piece});
  }
  void add_interval(std::int64_t lo, std::int64_t hi) {
    pieces.push_back({0, hi - lo});
    add_run(lo, hi - lo, 1, pieces.size() - 1);
  }
};

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

// ---- cells: rectangles in (token, copy) space ---------------------------------------------

struct Cells {
  std::int64_t i0, i1;  // tokens, inclusive
  std::int64_t k0, k1;  // copies, inclusive
};
using CellList = std::vector<Cells>;

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

struct Rect {
  std::int64_t a, b, lo, hi;  // major [a, b], minor [lo, hi]
};

// Buffers one visible_tiles call reuses for all its query blocks. clear() keeps their
// capacity, so only the first blocks allocate. (Fixed-size arrays would not do: a CSWA
// block in stream-major order has one rectangle per chunk its rows span.)
struct Scratch {
  CellList rows, cells, origins, hidden;
  std::vector<Rect> rects;
  std::vector<std::int64_t> cuts;
  std::vector<std::pair<std::int64_t, std::int64_t>> minors;
  RunList u, in, outside;
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

// PHD: lowest hidden rank visible to the hidden query of rank rho. Its visible hidden keys
// are exactly [phd_low_rank(rho), rho]: its own token's copies up to itself, extended back
// by the window (SWA), not past its chunk's first token (CSWA).
std::int64_t phd_low_rank(const MaskSpec& m, std::int64_t rho) {
  const std::int64_t c = m.copies - 1, token_start = (rho / c) * c;
  if (m.phd_variant == PhdVariant::plain) return token_start;
  const std::int64_t floor_rank = m.phd_variant == PhdVariant::cswa ? (rho / c / m.phd_C) * m.phd_C * c : 0;
  return std::min(token_start, std::max(floor_rank, rho - m.phd_W));
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

// The tiles of one call. A tile larger than the grid counts exactly like one of the grid's
// size; clamping keeps the arithmetic far from overflow.
struct Grid {
  std::int64_t N = 0, R = 0;  // keys (positions), query rows
  std::int64_t Bq = 0, Bk = 0;
  std::int64_t query_blocks = 0, key_blocks = 0, last_block_start = 0;
  std::int64_t total() const { return query_blocks * key_blocks; }
};

// The grid of R query rows x N keys (both >= 1) in tiles of Bq x Bk.
Grid grid_of(std::int64_t R, std::int64_t N, std::int64_t Bq, std::int64_t Bk) {
  if (Bq < 1 || Bk < 1)
    throw ConfigError("/tile", "tile sizes must be >= 1, got " + std::to_string(Bq) + "x" + std::to_string(Bk));
  Grid g;
  g.N = N;
  g.R = R;
  g.Bq = std::min(Bq, g.R);
  g.Bk = std::min(Bk, g.N);
  g.query_blocks = (g.R + g.Bq - 1) / g.Bq;
  g.key_blocks = (g.N + g.Bk - 1) / g.Bk;
  g.last_block_start = (g.key_blocks - 1) * g.Bk;
  return g;
}

Grid grid_of(const MaskSpec& m, std::int64_t Bq, std::int64_t Bk) {
  validate(m);
  return grid_of(m.query_rows(), m.positions(), Bq, Bk);
}

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

// Adds the tiles of the query block starting at row r0 (the general method, see the top).
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

// ---- closed forms over all query blocks -------------------------------------------------------

// An end a + s*b of an interval of query block b (s >= 0: the ends rise with b).
struct Affine {
  std::int64_t a = 0, s = 0;
  std::int64_t at(std::int64_t b) const { return a + s * b; }
};
// The key intervals [max(0, lo(b)), hi(b)] of query blocks b = 0, 1, ...; hi(b) >= 0.
struct Stretch {
  Affine lo, hi;
};

// How many of the blocks b in [0, M) have lo(b) <= 0 (their interval starts at key 0): a prefix.
std::int64_t from_zero(Affine lo, std::int64_t M) {
  if (lo.a > 0) return 0;
  if (lo.s == 0) return M;
  return std::min(M, -lo.a / lo.s + 1);
}

// sum_{b=b0}^{b1-1} floor((e(b) + add) / B), all terms >= 0.
wide sum_floor(Affine e, std::int64_t add, std::int64_t b0, std::int64_t b1, std::int64_t B) {
  if (b1 <= b0) return 0;
  return floor_sum(b1 - b0, e.s, e.at(b0) + add, B);
}

// Blocks [0, M) of Bq rows with union U(b): key blocks meeting [lo, hi] are
// floor(hi/Bk) - floor(lo/Bk) + 1, each executed in full except the short last key block,
// which lacks key_blocks*Bk - N keys and is met from the first block whose hi reaches it.
void add_union_sums(const Stretch& u, std::int64_t M, const Grid& g, TileCount& tc) {
  const wide meeting = sum_floor(u.hi, 0, 0, M, g.Bk) - sum_floor(u.lo, 0, from_zero(u.lo, M), M, g.Bk) + M;
  std::int64_t reach = M;  // first block with hi(b) >= last_block_start
  if (u.hi.a >= g.last_block_start)
    reach = 0;
  else if (u.hi.s > 0)
    reach = std::min(M, (g.last_block_start - u.hi.a + u.hi.s - 1) / u.hi.s);
  tc.visible += static_cast<std::int64_t>(meeting);
  tc.executed_pairs += static_cast<std::int64_t>(wide{g.Bq} * (meeting * g.Bk - wide{M - reach} * (g.key_blocks * g.Bk - g.N)));
}

// Blocks [0, M) with intersection I(b) = [lo, hi]: the key blocks inside are the block
// boundaries (multiples of Bk) in [lo, hi + 1] less one, or none (hi + 1 < N on these
// blocks, so the short last key block never counts). From key 0 that is floor((hi+1)/Bk).
// Past that, lo and hi rise together and [lo, hi + 1] holds len = hi - lo + 2 integers:
// len <= Bk holds at most one boundary (no block inside); len > Bk at least one, giving
// floor((hi+1)/Bk) - ceil(lo/Bk).
void add_intersection_sums(const Stretch& in, std::int64_t M, const Grid& g, TileCount& tc) {
  const std::int64_t z = from_zero(in.lo, M);
  wide full = sum_floor(in.hi, 1, 0, z, g.Bk);
  if (z < M && in.hi.a - in.lo.a + 2 > g.Bk) {
    assert(in.lo.s == in.hi.s);
    full += sum_floor(in.hi, 1, z, M, g.Bk) - sum_floor(in.lo, g.Bk - 1, z, M, g.Bk);
  }
  tc.full += static_cast<std::int64_t>(full);
}

// Query blocks whose rows (logical t) see the window (t - w, t] (causal: w = N), as a
// family: block b's rows run from t_first = f + s*b to t_last = e + s*b (the last block
// ends at N - 1 instead), so U = (t_first - w, t_last] and I = (t_last - w, t_first].
struct WindowBlocks {
  std::int64_t f = 0, e = 0, s = 0, w = 0;
  // false (intra, n > 1): U's key blocks are the causal ones, and no key block lies inside
  // I on the uniform blocks (window_tiles counts the last block).
  bool exact_i = true;
  Stretch u() const { return {{f - w + 1, s}, {e, s}}; }
  Stretch in() const { return {{e - w + 1, s}, {f, s}}; }
};

// The window family of causal and sliding masks in logical key order, and of intra masks
// where their tiles are the causal ones; nullopt otherwise.
std::optional<WindowBlocks> window_blocks(const MaskSpec& m, Layout l, const Grid& g) {
  const std::int64_t n = m.copies;
  if (l != Layout::interleaved && n > 1) return std::nullopt;  // with one copy every layout is the identity
  const bool final_rows = m.final_copy_queries_only;         // rows are n apart
  WindowBlocks b;
  b.s = final_rows ? g.Bq * n : g.Bq;
  b.f = final_rows ? n - 1 : 0;
  b.e = final_rows ? b.s - 1 : g.Bq - 1;
  b.w = g.N;  // t - N < 0: every earlier key
  switch (m.kind) {
    case MaskSpec::Kind::causal: return b;
    case MaskSpec::Kind::sliding:
      // U is one interval when consecutive rows' windows touch: always for consecutive
      // positions, for final-copy rows (n apart) when w >= n.
      b.w = std::min(m.window, g.N);
      if (final_rows && b.w < n) return std::nullopt;
      return b;
    case MaskSpec::Kind::intra:
      // n <= Bk: every key block before the last row's holds all copies of tokens the
      // rows see, so the met blocks are the causal ones; Bq >= n: U is the causal prefix.
      // No key block lies inside I: a block of >= 2 rows spans several copies, and a
      // single row's I holds one key in n >= 2 while Bk >= 2 (the short last key block
      // is N - 1, seen by the last row only).
      if (n == 1) return b;
      b.exact_i = false;
      if (n <= g.Bk || (!final_rows && g.Bq >= n)) return b;
      return std::nullopt;
    case MaskSpec::Kind::phd: return std::nullopt;
  }
  return std::nullopt;
}

// Key blocks inside [lo, hi] (none when lo > hi), all within [0, N): blocks c with
// c*Bk >= lo whose end min(N, (c+1)*Bk) is <= hi + 1.
std::int64_t blocks_inside(std::int64_t lo, std::int64_t hi, const Grid& g) {
  if (lo > hi) return 0;
  const std::int64_t ending_by = hi + 1 >= g.N ? g.key_blocks : (hi + 1) / g.Bk;
  return std::max<std::int64_t>(0, ending_by - (lo + g.Bk - 1) / g.Bk);
}

// One query block of `rows` rows with U = [u_lo, u_hi] and I = [i_lo, i_hi], within [0, N).
void add_interval_block(std::int64_t u_lo, std::int64_t u_hi, std::int64_t i_lo, std::int64_t i_hi,
                        std::int64_t rows, const Grid& g, TileCount& tc) {
  const std::int64_t first = u_lo / g.Bk, last = u_hi / g.Bk;
  tc.visible += last - first + 1;
  tc.executed_pairs += rows * (std::min(g.N, (last + 1) * g.Bk) - first * g.Bk);
  tc.full += blocks_inside(i_lo, i_hi, g);
}

// All query blocks of a window family: the uniform ones by floor sums, the last one alone.
TileCount window_tiles(const MaskSpec& m, Layout l, const Grid& g, const WindowBlocks& b) {
  TileCount tc;
  tc.total = g.total();
  const std::int64_t M = g.query_blocks - 1;  // blocks of exactly Bq rows; then the last one
  add_union_sums(b.u(), M, g, tc);
  const std::int64_t rows = g.R - M * g.Bq, t_first = b.f + b.s * M, t_last = g.N - 1;
  if (b.exact_i) {
    add_intersection_sums(b.in(), M, g, tc);
    add_interval_block(std::max<std::int64_t>(0, t_first - b.w + 1), t_last, std::max<std::int64_t>(0, t_last - b.w + 1),
                       t_first, rows, g, tc);
  } else if (m.copies <= g.Bk || rows >= m.copies) {
    // Intra, n > 1, the argument of window_blocks holds for the last block too: the
    // causal key blocks, and inside I only a short last key block of the one key N - 1,
    // when the block is the single row that sees it (N - 1, or the final copy's L - 1).
    add_interval_block(0, t_last, 1, 0, rows, g, tc);
    if (rows == 1 && g.N % g.Bk == 1) ++tc.full;
  } else {  // a last block of fewer than n rows, n > Bk: its U has gaps
    Scratch s;
    add_block(m, l, g, M * g.Bq, s, tc);
  }
  return tc;
}

// ---- PHD in [origins | hidden] order: two key intervals per block ----------------------------

// A query block sees origins [0, i] (physical [0, i]) for each row's token i, and a hidden
// row of rank rho the hidden ranks [low(rho), rho] (physical L + rank). low() rises with
// rho and low(rho + 1) <= rho + 1 (final-copy rows, c ranks apart: low(rho + c) <= rho + 1,
// the next token's start), so over a block's ranks [p0, p1]:
//   U = origins [0, top token] + hidden [low(p0), p1],
//   I = origins [0, bottom token] + hidden [low(p1), p0] when no row is an origin (origin
//       rows see no hidden key).
// The origin interval ends at L - 1 at most, before the hidden one starts: they share a
// key block at most, and only touch when the first ends at L - 1 and the second starts at L.
struct KeySpan {
  std::int64_t lo = 0, hi = -1;  // empty when lo > hi
};

void add_two_span_block(KeySpan u0, KeySpan u1, KeySpan i0, KeySpan i1, std::int64_t rows, const Grid& g,
                        TileCount& tc) {
  std::int64_t meeting = u0.hi / g.Bk - u0.lo / g.Bk + 1, last_hi = u0.hi;
  if (u1.lo <= u1.hi) {
    meeting += u1.hi / g.Bk - u1.lo / g.Bk + 1 - (u0.hi / g.Bk == u1.lo / g.Bk ? 1 : 0);
    last_hi = u1.hi;
  }
  tc.visible += meeting;
  tc.executed_pairs += rows * (meeting * g.Bk - (last_hi >= g.last_block_start ? g.key_blocks * g.Bk - g.N : 0));
  if (i1.lo <= i1.hi && i0.hi + 1 == i1.lo)  // one interval: a key block may straddle L
    tc.full += blocks_inside(i0.lo, i1.hi, g);
  else
    tc.full += blocks_inside(i0.lo, i0.hi, g) + blocks_inside(i1.lo, i1.hi, g);
}

// Query block [r0, r1) of a PHD mask (K >= 2) in phd_split order.
void add_phd_split_block(const MaskSpec& m, const Grid& g, std::int64_t r0, std::int64_t r1, TileCount& tc) {
  const std::int64_t L = m.tokens, c = m.copies - 1;
  bool origins = false, hidden = true;
  std::int64_t o0 = 0, o1 = -1, p0 = 0, p1 = -1;  // origin rows' tokens, hidden rows' ranks
  if (m.final_copy_queries_only) {  // rows are tokens, each the rank of its last copy
    p0 = r0 * c + c - 1;
    p1 = (r1 - 1) * c + c - 1;
  } else {  // origin rows [r0, L), hidden rows from L on
    origins = r0 < L;
    hidden = r1 > L;
    if (origins) {
      o0 = r0;
      o1 = std::min(r1, L) - 1;
    }
    p0 = std::max(r0, L) - L;
    p1 = r1 - 1 - L;
  }
  // The rows' highest and lowest tokens.
  const std::int64_t top = hidden ? std::max(o1, p1 / c) : o1;
  const std::int64_t bottom = !origins ? p0 / c : hidden ? std::min(o0, p0 / c) : o0;
  const KeySpan u1 = hidden ? KeySpan{L + phd_low_rank(m, p0), L + p1} : KeySpan{};
  const KeySpan i1 = hidden && !origins ? KeySpan{L + phd_low_rank(m, p1), L + p0} : KeySpan{};
  add_two_span_block({0, top}, u1, {0, bottom}, i1, r1 - r0, g, tc);
}

TileCount phd_split_tiles(const MaskSpec& m, const Grid& g) {
  TileCount tc;
  tc.total = g.total();
  for (std::int64_t r0 = 0; r0 < g.R; r0 += g.Bq) add_phd_split_block(m, g, r0, std::min(g.R, r0 + g.Bq), tc);
  return tc;
}

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

TileCount prefixed_tiles(const MaskSpec& tail, Layout l, std::int64_t prefix, std::int64_t Bq, std::int64_t Bk) {
  const Grid g = grid_of(prefix + tail.query_rows(), prefix + tail.positions(), Bq, Bk);
  TileCount tc;
  tc.total = g.total();
  // Blocks of prefix rows only: the causal family over the whole grid (keys [0, t]).
  const std::int64_t M = prefix / g.Bq;
  const WindowBlocks causal{0, g.Bq - 1, g.Bq, g.N};
  add_union_sums(causal.u(), M, g, tc);
  add_intersection_sums(causal.in(), M, g, tc);
  Scratch s;
  for (std::int64_t r0 = M * g.Bq; r0 < g.R; r0 += g.Bq) add_prefixed_block(tail, l, g, prefix, r0, s, tc);
  return tc;
}

// ---- choosing the method ----------------------------------------------------------------------

// The counts by a shortcut where one applies (see "Speed" at the top), else nullopt.
std::optional<TileCount> fast_tiles(const MaskSpec& m, Layout l, const Grid& g) {
  if (const std::optional<WindowBlocks> b = window_blocks(m, l, g)) return window_tiles(m, l, g, *b);
  const std::int64_t L = m.tokens, n = m.copies;
  if (m.kind == MaskSpec::Kind::intra && l == Layout::stream_major && !m.final_copy_queries_only &&
      L % g.Bq == 0 && L % g.Bk == 0) {
    // No tile straddles two streams and rows see only their own stream: the grid is n
    // copies of the causal L x L grid on its diagonal, empty elsewhere.
    MaskSpec one;
    one.kind = MaskSpec::Kind::causal;
    one.tokens = L;
    const Grid g1 = grid_of(one, g.Bq, g.Bk);
    const TileCount c = window_tiles(one, Layout::interleaved, g1, *window_blocks(one, Layout::interleaved, g1));
    return TileCount{n * c.visible, n * c.full, g.total(), n * c.executed_pairs};
  }
  if (m.kind == MaskSpec::Kind::phd && l == Layout::phd_split && n >= 2) return phd_split_tiles(m, g);
  return std::nullopt;
}

}  // namespace

TileCount visible_tiles(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk) {
  const Grid g = grid_of(m, Bq, Bk);
  if (std::optional<TileCount> tc = fast_tiles(m, l, g)) return *tc;
  return general_tiles(m, l, g);
}

TileCount phd_partial_prefill_tiles(const MaskSpec& m, std::int64_t tail, Layout l, std::int64_t Bq, std::int64_t Bk) {
  validate(m);
  const std::string what = "a PHD partial prefill";
  if (m.kind != MaskSpec::Kind::phd || m.final_copy_queries_only)
    throw ConfigError("/mask/kind", what + " needs a PHD mask with every row a query, got " + to_string(m.kind));
  if (tail < 1 || tail > m.tokens)
    throw ConfigError("/tail", "must be in [1, " + std::to_string(m.tokens) + "] tokens, got " + std::to_string(tail));
  const std::int64_t prefix = m.tokens - tail;
  // The tail's hidden rows must see no skipped hidden key: SWA's window reaches back to
  // every earlier token, CSWA's to its chunk's start.
  if (m.phd_variant == PhdVariant::swa && prefix > 0)
    throw ConfigError("/tail", "PHD-swa computes every hidden copy: the tail must be all " +
                                   std::to_string(m.tokens) + " tokens, got " + std::to_string(tail));
  if (m.phd_variant == PhdVariant::cswa && prefix % m.phd_C != 0)
    throw ConfigError("/tail", "PHD-cswa: the tail must start at a chunk of " + std::to_string(m.phd_C) +
                                   " tokens, got " + std::to_string(tail) + " of " + std::to_string(m.tokens));
  if (prefix == 0) return visible_tiles(m, l, Bq, Bk);
  MaskSpec t = m;  // the tail alone: same rule, offsets cancel (its chunks align for CSWA)
  t.tokens = tail;
  return prefixed_tiles(t, l, prefix, Bq, Bk);
}

namespace detail {

std::optional<TileCount> visible_tiles_fast(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk) {
  return fast_tiles(m, l, grid_of(m, Bq, Bk));
}

TileCount visible_tiles_general(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk) {
  return general_tiles(m, l, grid_of(m, Bq, Bk));
}

}  // namespace detail

}  // namespace hdlab::model
