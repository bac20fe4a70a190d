#pragma once
// What the mask view draws, computed without Qt: one cell per (query row, key) of a
// layer's mask in a physical layout, holding the copy (HD stream, PHD copy) of the key
// when the pair is visible, and the tile grid of a Bq x Bk kernel over it.
#include <cstdint>
#include <vector>

#include "hdlab/model/mask.hpp"

namespace hdlab::gui_core {

// The picture is for looking at, not for counting: counts come from the closed forms of
// model/mask.hpp at any size. 512 positions keep the picture at 512 x 512 cells.
inline constexpr std::int64_t max_picture_positions = 512;

struct MaskPicture {
  model::MaskSpec spec;
  model::Layout layout = model::Layout::interleaved;
  std::int64_t rows = 0;  // spec.query_rows()
  std::int64_t cols = 0;  // spec.positions()
  // Row-major [rows x cols], physical order: -1 = masked, else the key's copy index.
  std::vector<std::int16_t> key_copy;
  std::vector<std::int64_t> row_logical;  // logical position of each physical query row
  std::vector<std::int64_t> col_logical;  // logical position of each physical key column
  std::int16_t at(std::int64_t row, std::int64_t col) const {
    return key_copy[static_cast<std::size_t>(row * cols + col)];
  }
};

// ConfigError("/mask/tokens", ...) when spec.positions() > max_picture_positions.
MaskPicture mask_picture(const model::MaskSpec& spec, model::Layout layout);

// One tile of the Bq x Bk grid over a picture: how a tiled kernel treats it.
enum class TileState : std::uint8_t { skipped, partial, full };
struct TileGrid {
  std::int64_t tile_rows = 0, tile_cols = 0;  // Bq, Bk
  std::int64_t grid_rows = 0, grid_cols = 0;  // tiles down, tiles across (edge tiles smaller)
  std::vector<TileState> tiles;               // row-major [grid_rows x grid_cols]
  TileState at(std::int64_t r, std::int64_t c) const { return tiles[static_cast<std::size_t>(r * grid_cols + c)]; }
};
// From the picture's cells; agrees with model::visible_tiles on the same spec and layout.
TileGrid tile_grid(const MaskPicture& picture, std::int64_t Bq, std::int64_t Bk);

// Exact counts the view prints for a spec (closed forms, any size).
struct MaskCounts {
  std::int64_t visible_pairs = 0;
  std::int64_t all_pairs = 0;  // query_rows() * positions()
  model::TileCount tiles;
};
MaskCounts mask_counts(const model::MaskSpec& spec, model::Layout layout, std::int64_t Bq, std::int64_t Bk);

// The largest token count whose picture fits max_picture_positions (at least 1).
std::int64_t max_picture_tokens(std::int64_t copies);

}  // namespace hdlab::gui_core
