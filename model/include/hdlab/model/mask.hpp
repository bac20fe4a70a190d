#pragma once
// Attention masks of every design and layer kind, exactly.
//
// Logical order is the interleaved one of methods.md: token i, copy k at t = i*copies + k
// (HD streams, PHD copies; copies = 1 for the baseline). A physical layout is an
// explicit permutation of those positions (what a kernel sees). Counts of visible pairs
// are closed forms; counts of visible tiles are exact for any length (not only tile
// multiples) and never enumerate the L^2 pairs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/model/design.hpp"

namespace hdlab::model {

struct MaskSpec {
  enum class Kind {
    causal,   // t' <= t
    sliding,  // t - window < t' <= t (HD local(w); the backbone's sliding layers)
    intra,    // t' <= t and same copy (HD intra-stream)
    phd,      // PHD visibility (plain / swa / cswa), copies = K
  };
  Kind kind = Kind::causal;
  std::int64_t tokens = 0;   // L
  std::int64_t copies = 1;   // n or K
  std::int64_t window = 0;   // sliding: positions
  PhdVariant phd_variant = PhdVariant::plain;
  std::int64_t phd_W = 0;
  std::int64_t phd_C = 0;
  // HD KV-mirror layers: only the final copy (k = copies-1) issues queries. Their rows,
  // compacted to `tokens` rows in token order, face all positions() keys.
  bool final_copy_queries_only = false;
  // Chunked local attention (Llama 4): > 0 restricts a causal mask to keys whose token lies
  // in the query's chunk of `chunk` tokens, floor(i_k / chunk) == floor(i_q / chunk). In
  // tokens, so under HD every stream of the chunk's tokens stays visible. Causal masks
  // only, every row a query; tiles are counted in interleaved order (any layout when
  // copies = 1, where the layouts coincide).
  std::int64_t chunk = 0;

  std::int64_t positions() const { return tokens * copies; }
  std::int64_t query_rows() const { return final_copy_queries_only ? tokens : positions(); }
};
const char* to_string(MaskSpec::Kind k);

// Largest positions() the exact counts accept: pair and tile counts then stay below 2^62.
inline constexpr std::int64_t max_count_positions = std::int64_t{1} << 31;
// Checks a spec (tokens, copies >= 1; sliding window >= 1; PHD W >= 1 for swa/cswa, C >= 1
// for cswa; positions() <= max_count_positions). ConfigError naming the field otherwise.
void validate(const MaskSpec& m);

// "May logical query position q see logical key position k?" Positions outside
// [0, positions()) are never visible; with final_copy_queries_only, only queries of the
// final copy see anything. `m` must pass validate() (hot path: not re-checked here).
bool visible(const MaskSpec& m, std::int64_t q, std::int64_t k);

enum class Layout {
  interleaved,   // physical = logical (token-major)
  stream_major,  // all of copy 0, then copy 1, ...: physical p = k*L + i
  phd_split,     // [all origins (copy 0) in token order | hidden copies ordered by hidden rank]:
                 // p = i for copy 0, p = L + i*(copies-1) + (k-1) otherwise (any copies, HD too)
};
const char* to_string(Layout l);
Layout layout_from_string(const std::string& s);  // throws ConfigError("", ...)

// Permutations between physical and logical positions for `tokens` x `copies`.
std::int64_t logical_of_physical(std::int64_t tokens, std::int64_t copies, Layout l, std::int64_t p);
std::int64_t physical_of_logical(std::int64_t tokens, std::int64_t copies, Layout l, std::int64_t t);
std::vector<std::int64_t> physical_to_logical(std::int64_t tokens, std::int64_t copies, Layout l);

// Exact number of visible (query, key) pairs, O(1).
std::int64_t visible_pairs(const MaskSpec& m);

struct TileCount {
  std::int64_t visible = 0;  // tiles with at least one visible pair (a kernel runs them)
  std::int64_t full = 0;     // of those, tiles whose every pair is visible (no masking needed)
  std::int64_t total = 0;    // all tiles of the query_rows() x positions() grid
  // Pairs a kernel computes: the area of every visible tile (edge tiles are smaller).
  std::int64_t executed_pairs = 0;
};
// Tiles of Bq query rows x Bk keys in the given physical layout. Query rows follow the
// same layout (for final_copy_queries_only: the final copy's rows in token order).
// Every (kind, layout) pair is supported; the work is O(log N) per query block, except
// PHD-CSWA whose blocks cost O(1 + tokens the block spans / C); shortcuts: O(log N) in all
// for causal / sliding / intra in logical order and stream-aligned intra in stream-major
// order, O(1) per block for PHD in phd_split order (see mask_tiles.cpp).
// ConfigError for Bq or Bk < 1 or an invalid spec.
TileCount visible_tiles(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk);

// A PHD prefill that computes every origin but the hidden copies of only the last `tail`
// tokens (methods.md section 2: plain computes the last token's, CSWA the last chunk's).
// Its query rows and keys are the computed positions in the physical order of `l`, the
// skipped copies taking no rows (what a kernel over the computed rows runs): the origins
// of the tokens before the tail, then the tail tokens' positions in the order of `l` (in
// every layout the same order as in the whole sequence). Exact like visible_tiles:
// O(log N) for the blocks of origins alone, the per-block method for blocks holding tail
// rows. ConfigError for bad tiles, an invalid spec, a spec other than PHD with every row
// a query, or a tail whose hidden rows would see a skipped copy: plain takes any tail in
// [1, tokens], CSWA one starting at a chunk boundary, SWA only tail = tokens.
TileCount phd_partial_prefill_tiles(const MaskSpec& m, std::int64_t tail, Layout l, std::int64_t Bq, std::int64_t Bk);

namespace detail {
// Chunked causal masks: pairs O(1), tiles O(query blocks) (mask_chunked.cpp).
std::int64_t chunked_pairs(const MaskSpec& m);
TileCount chunked_tiles(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk);
// visible_tiles' two methods, exposed for the tests that compare them: the shortcuts
// (closed forms over all query blocks for causal, sliding and intra masks in logical
// order and intra in stream-major order on stream-aligned tiles; O(1) per block for PHD
// in phd_split order), nullopt where none applies; and the general per-block method that
// visible_tiles uses otherwise. Same checks as visible_tiles.
std::optional<TileCount> visible_tiles_fast(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk);
TileCount visible_tiles_general(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk);
}  // namespace detail

// Brute-force versions over the materialised mask; the closed forms are tested against
// them. Refused (ConfigError) above max_materialize_positions.
inline constexpr std::int64_t max_materialize_positions = 1 << 14;
// Row-major [query_rows() x positions()] in physical order of `l`, 1 = visible.
std::vector<std::uint8_t> materialize(const MaskSpec& m, Layout l);
std::int64_t visible_pairs_brute(const MaskSpec& m);
TileCount visible_tiles_brute(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk);

// The mask a layer of a design uses for a sequence of `tokens` tokens (training or
// prefill shape). Baseline and VWN layers: causal or sliding over tokens; looped layers:
// the backbone's mask (each iteration alike); HD: per layer kind; PHD: its variant.
MaskSpec layer_mask(const Config& c, std::int64_t layer, std::int64_t tokens);

// The layout a design runs in unless told otherwise: interleaved; PHD: phd_split.
Layout default_layout(const Design& d);

// The layout with the least attention work for this design at `tokens` tokens and Bq x Bk
// tiles: the fewest executed pairs summed over the layers, ties to default_layout. Only HD
// with intra-stream layers has a real choice (interleaved, where every tile mixes streams,
// or stream-major, where intra layers become n small triangles but full and local layers
// scatter); every other design returns default_layout (PHD's [origins | hidden] split
// is the layout its masks were designed for). One layout serves all layers: switching
// per layer would cost a permutation of the hidden states between layers.
Layout best_layout(const Config& c, std::int64_t tokens, std::int64_t Bq, std::int64_t Bk);

}  // namespace hdlab::model
