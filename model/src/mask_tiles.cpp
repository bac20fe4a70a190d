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
#include <algorithm>
#include <string>
#include <utility>

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
// piece (o, len); pieces sorted and disjoint (adjacent only across periods). Runs in a list
// are sorted and disjoint too.
struct Run {
  std::int64_t base = 0;
  std::int64_t period = 1;
  std::int64_t count = 1;
  std::vector<Piece> pattern;
  std::int64_t first() const { return base + pattern.front().offset; }
  std::int64_t end() const { return base + (count - 1) * period + pattern.back().offset + pattern.back().length; }
};
using Runs = std::vector<Run>;

wide floors(std::int64_t count, std::int64_t period, std::int64_t first, std::int64_t div) {
  if (count == 1) return first / div;
  return floor_sum(count, period, first, div);
}

// Key blocks of width B (block c = [cB, (c+1)B)) meeting a sorted list of disjoint runs.
std::int64_t blocks_meeting(const Runs& runs, std::int64_t B) {
  wide blocks = 0;
  std::int64_t prev_last_block = -1;
  for (const Run& r : runs) {
    const std::int64_t m = r.count, P = r.period;
    const std::size_t Q = r.pattern.size();
    for (std::size_t q = 0; q < Q; ++q) {
      const std::int64_t lo = r.base + r.pattern[q].offset, hi = lo + r.pattern[q].length - 1;
      blocks += floors(m, P, hi, B) - floors(m, P, lo, B) + m;
    }
    // Consecutive intervals sharing a block: [floor(next/B) == floor(prev_last/B)], which is
    // 1 - (floor(next/B) - floor(prev_last/B)) when next - prev_last <= B, else 0.
    auto shared = [&](std::int64_t terms, std::int64_t prev_last, std::int64_t next) -> wide {
      if (terms <= 0 || next - prev_last > B) return 0;
      return terms - (floors(terms, P, next, B) - floors(terms, P, prev_last, B));
    };
    for (std::size_t q = 0; q + 1 < Q; ++q)
      blocks -= shared(m, r.base + r.pattern[q].offset + r.pattern[q].length - 1, r.base + r.pattern[q + 1].offset);
    blocks -= shared(m - 1, r.base + r.pattern.back().offset + r.pattern.back().length - 1,
                     r.base + P + r.pattern.front().offset);
    if (r.first() / B == prev_last_block) blocks -= 1;
    prev_last_block = (r.end() - 1) / B;
  }
  return static_cast<std::int64_t>(blocks);
}

Run interval_run(std::int64_t lo, std::int64_t hi) { return Run{lo, hi - lo, 1, {{0, hi - lo}}}; }

// [0, N) minus the runs, as runs: within a run, the gaps between its pieces and the gap
// that wraps into the next period; between runs, plain intervals.
Runs complement(const Runs& runs, std::int64_t N) {
  Runs out;
  std::int64_t cursor = 0;
  for (const Run& r : runs) {
    if (r.first() > cursor) out.push_back(interval_run(cursor, r.first()));
    std::vector<Piece> inner, wrapping;
    for (std::size_t q = 0; q + 1 < r.pattern.size(); ++q) {
      const std::int64_t from = r.pattern[q].offset + r.pattern[q].length;
      if (r.pattern[q + 1].offset > from) inner.push_back({from, r.pattern[q + 1].offset - from});
    }
    wrapping = inner;
    const std::int64_t tail = r.pattern.back().offset + r.pattern.back().length;
    if (r.period + r.pattern.front().offset > tail)
      wrapping.push_back({tail, r.period + r.pattern.front().offset - tail});
    if (r.count >= 2 && !wrapping.empty()) out.push_back(Run{r.base, r.period, r.count - 1, wrapping});
    if (!inner.empty()) out.push_back(Run{r.base + (r.count - 1) * r.period, r.period, 1, inner});
    cursor = r.end();
  }
  if (cursor < N) out.push_back(interval_run(cursor, N));
  return out;
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

void append_runs(const CellList& cells, const Axis& ax, Runs& out) {
  struct Rect {
    std::int64_t a, b, lo, hi;  // major [a, b], minor [lo, hi]
  };
  std::vector<Rect> rects;
  for (const Cells& c : cells) {
    if (c.i0 > c.i1 || c.k0 > c.k1) continue;
    if (ax.token_major)
      rects.push_back({c.i0, c.i1, c.k0 - ax.minor_shift, c.k1 - ax.minor_shift});
    else
      rects.push_back({c.k0, c.k1, c.i0, c.i1});
  }
  std::vector<std::int64_t> cuts;
  for (const Rect& r : rects) {
    cuts.push_back(r.a);
    cuts.push_back(r.b + 1);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> minors;
  for (std::size_t s = 0; s + 1 < cuts.size(); ++s) {
    minors.clear();
    for (const Rect& r : rects)
      if (r.a <= cuts[s] && r.b >= cuts[s]) minors.push_back({r.lo, r.hi});
    if (minors.empty()) continue;
    std::sort(minors.begin(), minors.end());
    Run run{ax.base + cuts[s] * ax.period, ax.period, cuts[s + 1] - cuts[s], {}};
    for (const auto& [lo, hi] : minors) {
      if (!run.pattern.empty() && run.pattern.back().offset + run.pattern.back().length >= lo)
        run.pattern.back().length = std::max(run.pattern.back().length, hi + 1 - run.pattern.back().offset);
      else
        run.pattern.push_back({lo, hi - lo + 1});
    }
    if (run.pattern.size() == 1 && run.pattern[0].offset == 0 && run.pattern[0].length == run.period) {
      run.period *= run.count;  // whole periods: one contiguous interval
      run.pattern[0].length = run.period;
      run.count = 1;
    }
    out.push_back(std::move(run));
  }
}

// Sweeping every segment against every rectangle is O(segments x rectangles); rectangles
// per block are few (at most ~20 outside CSWA), so this stays O(1) per block.
Runs runs_of(const CellList& cells, const MaskSpec& m, Layout l) {
  Runs out;
  const std::int64_t L = m.tokens, n = m.copies;
  switch (l) {
    case Layout::interleaved: append_runs(cells, {true, 0, n, 0}, out); break;
    case Layout::stream_major: append_runs(cells, {false, 0, L, 0}, out); break;
    case Layout::phd_split: {
      CellList origins, hidden;
      for (const Cells& c : cells) {
        if (c.k0 == 0) origins.push_back({c.i0, c.i1, 0, 0});
        if (c.k1 >= 1) hidden.push_back({c.i0, c.i1, std::max<std::int64_t>(c.k0, 1), c.k1});
      }
      append_runs(origins, {false, 0, L, 0}, out);
      if (n > 1) append_runs(hidden, {true, L, n - 1, 1}, out);
      break;
    }
  }
  return out;
}

// ---- query blocks ---------------------------------------------------------------------------

// The rows [r0, r1) of a block in layout l, as rectangles of (token, copy).
CellList block_rows(const MaskSpec& m, Layout l, std::int64_t r0, std::int64_t r1) {
  const std::int64_t L = m.tokens, n = m.copies;
  CellList rows;
  if (m.final_copy_queries_only) {
    rows.push_back({r0, r1 - 1, n - 1, n - 1});
    return rows;
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
  return rows;
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
CellList block_union(const MaskSpec& m, const CellList& rows) {
  const std::int64_t n = m.copies;
  CellList u;
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
  return u;
}

// I: keys every row of the block sees, from the block's extreme rows.
CellList block_intersection(const MaskSpec& m, const RowSummary& s) {
  const std::int64_t n = m.copies;
  CellList in;
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
  return in;
}

}  // namespace

TileCount visible_tiles(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk) {
  validate(m);
  if (Bq < 1 || Bk < 1)
    throw ConfigError("/tile", "tile sizes must be >= 1, got " + std::to_string(Bq) + "x" + std::to_string(Bk));
  const std::int64_t N = m.positions(), R = m.query_rows();
  // A tile larger than the grid counts exactly like one of the grid's size; clamping keeps
  // the arithmetic below far from overflow.
  Bq = std::min(Bq, R);
  Bk = std::min(Bk, N);
  const std::int64_t key_blocks = (N + Bk - 1) / Bk, last_block_start = (key_blocks - 1) * Bk;
  TileCount tc;
  tc.total = ((R + Bq - 1) / Bq) * key_blocks;
  for (std::int64_t r0 = 0; r0 < R; r0 += Bq) {
    const std::int64_t r1 = std::min(R, r0 + Bq);
    const CellList rows = block_rows(m, l, r0, r1);
    const Runs u = runs_of(block_union(m, rows), m, l);
    const Runs in = runs_of(block_intersection(m, summarize(rows, m.copies)), m, l);
    const std::int64_t meeting = blocks_meeting(u, Bk);
    tc.visible += meeting;
    tc.full += key_blocks - blocks_meeting(complement(in, N), Bk);
    // Executed keys: every met block in full, the last (short) block only its N - start keys.
    const bool meets_last = !u.empty() && u.back().end() - 1 >= last_block_start;
    tc.executed_pairs += (r1 - r0) * (meeting * Bk - (meets_last ? key_blocks * Bk - N : 0));
  }
  return tc;
}

}  // namespace hdlab::model
