#include "hdlab/gui_core/mask_picture.hpp"

#include <algorithm>
#include <string>

#include "hdlab/model/error.hpp"

namespace hdlab::gui_core {

MaskPicture mask_picture(const model::MaskSpec& spec, model::Layout layout) {
  model::validate(spec);
  if (spec.positions() > max_picture_positions)
    throw model::ConfigError("/mask/tokens", std::to_string(spec.tokens) + " tokens x " + std::to_string(spec.copies) +
                                                 " copies = " + std::to_string(spec.positions()) +
                                                 " positions; the picture shows at most " +
                                                 std::to_string(max_picture_positions) + " positions: at most " +
                                                 std::to_string(max_picture_tokens(spec.copies)) + " tokens here");
  MaskPicture p;
  p.spec = spec;
  p.layout = layout;
  p.rows = spec.query_rows();
  p.cols = spec.positions();
  const std::vector<std::uint8_t> visible = model::materialize(spec, layout);
  p.col_logical = model::physical_to_logical(spec.tokens, spec.copies, layout);
  if (spec.final_copy_queries_only) {
    // Query rows are the final copy's positions in token order (mask.hpp).
    p.row_logical.resize(static_cast<std::size_t>(p.rows));
    for (std::int64_t i = 0; i < p.rows; ++i)
      p.row_logical[static_cast<std::size_t>(i)] = i * spec.copies + (spec.copies - 1);
  } else {
    p.row_logical = p.col_logical;
  }
  p.key_copy.assign(static_cast<std::size_t>(p.rows * p.cols), -1);
  for (std::int64_t r = 0; r < p.rows; ++r)
    for (std::int64_t c = 0; c < p.cols; ++c) {
      const auto idx = static_cast<std::size_t>(r * p.cols + c);
      if (visible[idx])
        p.key_copy[idx] = static_cast<std::int16_t>(p.col_logical[static_cast<std::size_t>(c)] % spec.copies);
    }
  return p;
}

TileGrid tile_grid(const MaskPicture& picture, std::int64_t Bq, std::int64_t Bk) {
  if (Bq < 1 || Bk < 1) throw model::ConfigError("/mask/tile", "tile sizes must be >= 1");
  TileGrid g;
  g.tile_rows = Bq;
  g.tile_cols = Bk;
  g.grid_rows = (picture.rows + Bq - 1) / Bq;
  g.grid_cols = (picture.cols + Bk - 1) / Bk;
  g.tiles.assign(static_cast<std::size_t>(g.grid_rows * g.grid_cols), TileState::skipped);
  for (std::int64_t tr = 0; tr < g.grid_rows; ++tr)
    for (std::int64_t tc = 0; tc < g.grid_cols; ++tc) {
      std::int64_t seen = 0, area = 0;
      for (std::int64_t r = tr * Bq; r < std::min(picture.rows, (tr + 1) * Bq); ++r)
        for (std::int64_t c = tc * Bk; c < std::min(picture.cols, (tc + 1) * Bk); ++c) {
          ++area;
          seen += picture.at(r, c) >= 0 ? 1 : 0;
        }
      TileState s = seen == 0 ? TileState::skipped : (seen == area ? TileState::full : TileState::partial);
      g.tiles[static_cast<std::size_t>(tr * g.grid_cols + tc)] = s;
    }
  return g;
}

MaskCounts mask_counts(const model::MaskSpec& spec, model::Layout layout, std::int64_t Bq, std::int64_t Bk) {
  MaskCounts c;
  c.visible_pairs = model::visible_pairs(spec);
  c.all_pairs = spec.query_rows() * spec.positions();
  c.tiles = model::visible_tiles(spec, layout, Bq, Bk);
  return c;
}

std::int64_t max_picture_tokens(std::int64_t copies) {
  return std::max<std::int64_t>(1, max_picture_positions / std::max<std::int64_t>(1, copies));
}

}  // namespace hdlab::gui_core
