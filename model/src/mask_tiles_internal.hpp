#pragma once
// Internals of the exact tile counts (mask_tiles.cpp has the method), shared by its pieces:
// mask_tiles_general.cpp (the per-block method over runs and cells), mask_tiles_closed.cpp
// (closed forms over all query blocks, PHD in phd_split order) and mask_tiles.cpp (choosing
// the method, the public entry points). Private to hdlab_model: not installed.
//
// The small functions the hot loops of several pieces call (floor_sum, phd_low_rank,
// grid_of) are defined here, inline, so that each piece can inline them as before the split.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hdlab/model/error.hpp"
#include "hdlab/model/mask.hpp"

namespace hdlab::model::tiles {

__extension__ typedef __int128 wide;  // floor sums of up to 2^31 terms of up to 2^31

// sum_{s=0}^{count-1} floor((first + s*step) / div), all arguments >= 0, div >= 1.
// Reduce step and first below div (their quotients contribute arithmetic series), then
// count the same lattice points under the line by columns instead of rows, which swaps the
// roles of step and div as in Euclid's algorithm.
inline wide floor_sum(wide count, wide step, wide first, wide div) {
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

// ---- cells: rectangles in (token, copy) space ---------------------------------------------

struct Cells {
  std::int64_t i0, i1;  // tokens, inclusive
  std::int64_t k0, k1;  // copies, inclusive
};
using CellList = std::vector<Cells>;

// ---- buffers of the per-block method ---------------------------------------------------------

// Cells in the (major, minor) coordinates of a layout's axis (Axis, append_runs).
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

// ---- the tile grid ----------------------------------------------------------------------

// The tiles of one call. A tile larger than the grid counts exactly like one of the grid's
// size; clamping keeps the arithmetic far from overflow.
struct Grid {
  std::int64_t N = 0, R = 0;  // keys (positions), query rows
  std::int64_t Bq = 0, Bk = 0;
  std::int64_t query_blocks = 0, key_blocks = 0, last_block_start = 0;
  std::int64_t total() const { return query_blocks * key_blocks; }
};

// The grid of R query rows x N keys (both >= 1) in tiles of Bq x Bk.
inline Grid grid_of(std::int64_t R, std::int64_t N, std::int64_t Bq, std::int64_t Bk) {
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

inline Grid grid_of(const MaskSpec& m, std::int64_t Bq, std::int64_t Bk) {
  validate(m);
  return grid_of(m.query_rows(), m.positions(), Bq, Bk);
}

// ---- PHD hidden ranks (the per-block method and phd_split blocks) -----------------------------

// PHD: lowest hidden rank visible to the hidden query of rank rho. Its visible hidden keys
// are exactly [phd_low_rank(rho), rho]: its own token's copies up to itself, extended back
// by the window (SWA), not past its chunk's first token (CSWA).
inline std::int64_t phd_low_rank(const MaskSpec& m, std::int64_t rho) {
  const std::int64_t c = m.copies - 1, token_start = (rho / c) * c;
  if (m.phd_variant == PhdVariant::plain) return token_start;
  const std::int64_t floor_rank = m.phd_variant == PhdVariant::cswa ? (rho / c / m.phd_C) * m.phd_C * c : 0;
  return std::min(token_start, std::max(floor_rank, rho - m.phd_W));
}

// ---- mask_tiles_general.cpp: the per-block method ---------------------------------------------

// Adds the tiles of the query block starting at row r0 (U and I as runs, counted).
void add_block(const MaskSpec& m, Layout l, const Grid& g, std::int64_t r0, Scratch& s, TileCount& tc);
// Every query block by add_block, one Scratch for all.
TileCount general_tiles(const MaskSpec& m, Layout l, const Grid& g);
// A PHD partial prefill: `prefix` origins, then the mask `tail` of the last tokens alone.
TileCount prefixed_tiles(const MaskSpec& tail, Layout l, std::int64_t prefix, std::int64_t Bq, std::int64_t Bk);

// ---- mask_tiles_closed.cpp: closed forms over all query blocks --------------------------------

// Causal and sliding masks in logical order, intra where its tiles are the causal ones:
// all query blocks in O(log N) (the window family); nullopt where the family does not apply.
std::optional<TileCount> window_family_tiles(const MaskSpec& m, Layout l, const Grid& g);
// Intra in stream-major order on tiles dividing L (Bq and Bk divide tokens), every row a
// query: n copies of the causal L x L tiles, O(log N).
TileCount stream_aligned_intra_tiles(const MaskSpec& m, const Grid& g);
// Adds query blocks [0, M) of Bq rows seeing keys [0, t] (the causal family over the grid).
void add_causal_blocks(std::int64_t M, const Grid& g, TileCount& tc);
// PHD (K >= 2) in phd_split order, O(1) per query block.
TileCount phd_split_tiles(const MaskSpec& m, const Grid& g);

}  // namespace hdlab::model::tiles
