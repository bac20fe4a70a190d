// Chunked local attention (Llama 4's attention_chunk_size): a causal mask cut into
// independent chunks. With copies n per token (HD streams), a chunk of C tokens is the
// contiguous run of P = C n logical positions [j P, (j + 1) P), and a query at t sees keys
// [floor(t / P) P, t]: the mask is block-diagonal, causal inside each block.
#include <algorithm>
#include <string>

#include "hdlab/model/error.hpp"
#include "hdlab/model/mask.hpp"
#include "mask_tiles_internal.hpp"

namespace hdlab::model::detail {

std::int64_t chunked_pairs(const MaskSpec& m) {
  validate(m);
  const std::int64_t P = m.chunk * m.copies, N = m.positions();
  const std::int64_t whole = N / P, rest = N % P;
  return whole * (P * (P + 1) / 2) + rest * (rest + 1) / 2;
}

// Per query block of rows [r0, r1] (logical = physical in interleaved order): the union of
// its rows' keys is [start of r0's chunk, r1] (each row's interval reaches back to its
// chunk's start, and consecutive rows' intervals touch), the intersection [start, r0]
// when the block lies in one chunk, else empty. Key blocks meeting the union are visible;
// those inside the intersection are full.
TileCount chunked_tiles(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk) {
  const tiles::Grid g = tiles::grid_of(m, Bq, Bk);
  if (m.copies > 1 && l != Layout::interleaved)
    throw ConfigError("/mask/layout", std::string("chunked masks with several copies per token are counted in "
                                                  "interleaved order only, got ") + to_string(l));
  const std::int64_t P = m.chunk * m.copies, N = g.N;
  TileCount tc;
  tc.total = g.total();
  for (std::int64_t r0 = 0; r0 < g.R; r0 += g.Bq) {
    const std::int64_t r1 = std::min(g.R, r0 + g.Bq) - 1, rows = r1 - r0 + 1;
    const std::int64_t lo = r0 / P * P;
    const std::int64_t kb0 = lo / g.Bk, kb1 = r1 / g.Bk;
    tc.visible += kb1 - kb0 + 1;
    tc.executed_pairs += rows * (std::min(N, (kb1 + 1) * g.Bk) - kb0 * g.Bk);
    if (r1 / P != r0 / P) continue;  // the rows span two chunks: no key is seen by all
    // key blocks [b Bk, min(N, (b+1) Bk)) inside [lo, r0]: the whole ones from the first
    // starting at or after lo, plus the grid's short last block when r0 is the last key
    const std::int64_t first = (lo + g.Bk - 1) / g.Bk;
    tc.full += std::max<std::int64_t>(0, (r0 + 1) / g.Bk - first);
    if (r0 == N - 1 && N % g.Bk != 0 && N / g.Bk * g.Bk >= lo) ++tc.full;
  }
  return tc;
}

}  // namespace hdlab::model::detail
