#pragma once
// The mask of one attention call in the terms a kernel needs.
//
// An AttentionMask says which logical position (methods.md: t = i*copies + k) each query
// row and each key row stands for; visibility is model::visible() on those positions,
// nothing else. A TilePlan classifies every kTileQ x kTileK tile of the physical
// [query rows x key rows] grid as skip (no visible pair), full (every pair visible) or
// partial, and keeps one 64-bit visibility word per query row of each partial tile, so
// neither backend ever re-derives the mask semantics: the CPU kernel reads the plan,
// the CUDA backend uploads it.
#include <cstdint>
#include <vector>

#include "hdlab/model/mask.hpp"

namespace hdlab::executor {

// One tile size for every backend, so a plan is portable and the simulator's
// tile-executed counts (model::visible_tiles with these sizes) describe what runs.
inline constexpr std::int64_t kTileQ = 64;  // query rows per tile
inline constexpr std::int64_t kTileK = 64;  // keys per tile: one bit each in a uint64

struct AttentionMask {
  model::MaskSpec spec;
  std::vector<std::int64_t> query_positions;  // logical position of each query row, row order
  std::vector<std::int64_t> key_positions;    // logical position of each key row, row order

  // Training / prefill: every query row and key of `spec` in the physical order of
  // `layout` (final_copy_queries_only: the final copy's rows in token order).
  static AttentionMask prefill(const model::MaskSpec& spec, model::Layout layout);
  // Decode step: new query rows against the KV cache, each row given by its logical
  // position (rows of the cache may come in any order, e.g. PHD's kept origins plus the
  // last W hidden tokens). Positions must lie below spec.positions(): spec.tokens counts
  // the tokens so far, the new one included (TilePlan refuses others).
  static AttentionMask decode(const model::MaskSpec& spec, std::vector<std::int64_t> query_positions,
                              std::vector<std::int64_t> key_positions);

  std::int64_t query_rows() const { return static_cast<std::int64_t>(query_positions.size()); }
  std::int64_t key_rows() const { return static_cast<std::int64_t>(key_positions.size()); }
  // Dense visibility of row r and key c (model::visible on their logical positions).
  bool visible(std::int64_t r, std::int64_t c) const;
};

enum class TileClass : std::uint8_t { skip = 0, full = 1, partial = 2 };

class TilePlan {
 public:
  // Exact: a tile is `skip` iff it holds no visible pair, `full` iff all its pairs are
  // visible. Cheap bounds settle most tiles; the rest are evaluated pair by pair.
  explicit TilePlan(const AttentionMask& mask);

  std::int64_t query_rows() const { return query_rows_; }
  std::int64_t key_rows() const { return key_rows_; }
  std::int64_t q_tiles() const { return q_tiles_; }
  std::int64_t k_tiles() const { return k_tiles_; }
  TileClass at(std::int64_t qt, std::int64_t kt) const { return classes_[static_cast<std::size_t>(qt * k_tiles_ + kt)]; }
  // kTileQ words for a partial tile: bit c of word r = row qt*kTileQ+r sees key kt*kTileK+c.
  const std::uint64_t* partial_bits(std::int64_t qt, std::int64_t kt) const;
  // Whether query row r sees key c, read from the tiles (r < query_rows, c < key_rows).
  bool visible(std::int64_t r, std::int64_t c) const;

  // Flat forms for device upload: classes [q_tiles*k_tiles], partial_index (same shape,
  // -1 unless partial: index p of the tile's words at bits()[p*kTileQ ...]).
  const std::vector<TileClass>& classes() const { return classes_; }
  const std::vector<std::int32_t>& partial_index() const { return partial_index_; }
  const std::vector<std::uint64_t>& bits() const { return bits_; }

  // The same counts as model::TileCount for this plan's rows and keys.
  std::int64_t visible_tiles() const { return visible_tiles_; }
  std::int64_t full_tiles() const { return full_tiles_; }
  std::int64_t partial_tiles() const { return visible_tiles_ - full_tiles_; }
  std::int64_t total_tiles() const { return q_tiles_ * k_tiles_; }
  std::int64_t visible_pairs() const { return visible_pairs_; }    // exact
  std::int64_t executed_pairs() const { return executed_pairs_; }  // area of visible tiles

  // Unique per plan in this process: lets a backend cache its device copy.
  std::uint64_t id() const { return id_; }

 private:
  std::int64_t query_rows_ = 0, key_rows_ = 0, q_tiles_ = 0, k_tiles_ = 0;
  std::vector<TileClass> classes_;
  std::vector<std::int32_t> partial_index_;
  std::vector<std::uint64_t> bits_;
  std::int64_t visible_tiles_ = 0, full_tiles_ = 0, visible_pairs_ = 0, executed_pairs_ = 0;
  std::uint64_t id_ = 0;
};

}  // namespace hdlab::executor
