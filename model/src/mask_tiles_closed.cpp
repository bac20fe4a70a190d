// Closed forms of the exact tile counts (see "Speed" in mask_tiles.cpp): all query blocks
// of a window family (causal and sliding masks in logical order, intra where its tiles are
// the causal ones) by floor sums in O(log N), intra in stream-major order on stream-aligned
// tiles (n diagonal copies of the causal grid), and PHD in [origins | hidden] order in O(1)
// per query block.
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>

#include "hdlab/model/mask.hpp"
#include "mask_tiles_internal.hpp"

namespace hdlab::model::tiles {

namespace {

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

}  // namespace

std::optional<TileCount> window_family_tiles(const MaskSpec& m, Layout l, const Grid& g) {
  if (const std::optional<WindowBlocks> b = window_blocks(m, l, g)) return window_tiles(m, l, g, *b);
  return std::nullopt;
}

TileCount stream_aligned_intra_tiles(const MaskSpec& m, const Grid& g) {
  // No tile straddles two streams and rows see only their own stream: the grid is n
  // copies of the causal L x L grid on its diagonal, empty elsewhere.
  MaskSpec one;
  one.kind = MaskSpec::Kind::causal;
  one.tokens = m.tokens;
  const Grid g1 = grid_of(one, g.Bq, g.Bk);
  const TileCount c = window_tiles(one, Layout::interleaved, g1, *window_blocks(one, Layout::interleaved, g1));
  const std::int64_t n = m.copies;
  return TileCount{n * c.visible, n * c.full, g.total(), n * c.executed_pairs};
}

void add_causal_blocks(std::int64_t M, const Grid& g, TileCount& tc) {
  const WindowBlocks causal{0, g.Bq - 1, g.Bq, g.N};
  add_union_sums(causal.u(), M, g, tc);
  add_intersection_sums(causal.in(), M, g, tc);
}

namespace {

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

}  // namespace

TileCount phd_split_tiles(const MaskSpec& m, const Grid& g) {
  TileCount tc;
  tc.total = g.total();
  for (std::int64_t r0 = 0; r0 < g.R; r0 += g.Bq) add_phd_split_block(m, g, r0, std::min(g.R, r0 + g.Bq), tc);
  return tc;
}

}  // namespace hdlab::model::tiles
