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
// Euclid-like reduction floor_sum evaluates in O(log) steps: this is where residue counting
// enters (e.g. HD intra in interleaved order with n > Bk, where U is every n-th column).
//
// Per (kind, layout) the rectangles are derived by block_union / block_intersection;
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
//
// Files: mask_tiles_internal.hpp (shared types: floor sums, runs, cells, Scratch, Grid),
// mask_tiles_general.cpp (runs, cells, query blocks, the per-block method, PHD partial
// prefill), mask_tiles_closed.cpp (closed forms over all query blocks, PHD in phd_split
// order), this file (choosing the method, the public entry points).
#include <optional>
#include <string>

#include "hdlab/model/error.hpp"
#include "hdlab/model/mask.hpp"
#include "mask_tiles_internal.hpp"

namespace hdlab::model {

namespace tiles {
namespace {

// ---- choosing the method ----------------------------------------------------------------------

// The counts by a shortcut where one applies (see "Speed" at the top), else nullopt.
std::optional<TileCount> fast_tiles(const MaskSpec& m, Layout l, const Grid& g) {
  if (std::optional<TileCount> tc = window_family_tiles(m, l, g)) return tc;
  const std::int64_t L = m.tokens, n = m.copies;
  if (m.kind == MaskSpec::Kind::intra && l == Layout::stream_major && !m.final_copy_queries_only &&
      L % g.Bq == 0 && L % g.Bk == 0)
    return stream_aligned_intra_tiles(m, g);
  if (m.kind == MaskSpec::Kind::phd && l == Layout::phd_split && n >= 2) return phd_split_tiles(m, g);
  return std::nullopt;
}

}  // namespace
}  // namespace tiles

TileCount visible_tiles(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk) {
  if (m.chunk > 0) return detail::chunked_tiles(m, l, Bq, Bk);
  const tiles::Grid g = tiles::grid_of(m, Bq, Bk);
  if (std::optional<TileCount> tc = tiles::fast_tiles(m, l, g)) return *tc;
  return tiles::general_tiles(m, l, g);
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
  return tiles::prefixed_tiles(t, l, prefix, Bq, Bk);
}

namespace detail {

std::optional<TileCount> visible_tiles_fast(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk) {
  if (m.chunk > 0) return chunked_tiles(m, l, Bq, Bk);
  return tiles::fast_tiles(m, l, tiles::grid_of(m, Bq, Bk));
}

TileCount visible_tiles_general(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk) {
  if (m.chunk > 0) return chunked_tiles(m, l, Bq, Bk);
  return tiles::general_tiles(m, l, tiles::grid_of(m, Bq, Bk));
}

}  // namespace detail

}  // namespace hdlab::model
