// hdlab mask MODEL --design D --layer K [--tokens L] [--layout ...] [--tile BQxBK]
//             [--png FILE] [--json]
// One layer's attention mask: a text grid for small sizes, a PNG heatmap (colour = the
// query's stream, tile grid overlaid) for up to max_png_positions, and the exact counts
// (visible pairs, tiles visible/full/total, executed pairs) in text or JSON.
#include <algorithm>
#include <iostream>
#include <regex>

#include <fmt/format.h>

#include "hdlab/model/error.hpp"
#include "hdlab/model/mask.hpp"
#include "png_writer.hpp"
#include "verbs.hpp"

namespace hdlab::cli {

namespace {

using model::ConfigError;
using model::Layout;
using model::MaskSpec;

constexpr std::int64_t max_text_positions = 256;   // columns of a readable terminal grid
constexpr std::int64_t max_png_positions = 4096;   // one pixel per pair: 4096 x 4096 RGB = 48 MiB

struct Tile {
  std::int64_t q = 64, k = 64;  // query rows x keys, a common FlashAttention tile
};

Tile parse_tile(const std::string& text) {
  static const std::regex both(R"((\d{1,9})x(\d{1,9}))"), square(R"(\d{1,9})");
  std::smatch m;
  Tile t;
  if (std::regex_match(text, m, both)) {
    t = {std::stoll(m[1]), std::stoll(m[2])};
  } else if (std::regex_match(text, square)) {
    t = {std::stoll(text), std::stoll(text)};
  } else {
    throw ConfigError("--tile", "must be BQxBK (query rows x keys, e.g. 128x64) or one size B, got \"" + text + "\"");
  }
  if (t.q < 1 || t.k < 1) throw ConfigError("--tile", "tile sizes must be >= 1, got \"" + text + "\"");
  return t;
}

struct MaskView {
  MaskSpec spec;
  Layout layout;
  Tile tile;
  std::vector<std::int64_t> key_logical;  // physical key column -> logical position
};

// Logical position of physical query row r (final-copy rows: token order).
std::int64_t query_logical(const MaskView& v, std::int64_t r) {
  if (v.spec.final_copy_queries_only) return r * v.spec.copies + v.spec.copies - 1;
  return model::logical_of_physical(v.spec.tokens, v.spec.copies, v.layout, r);
}

std::string base36(std::int64_t v) {
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  return v < 36 ? std::string(1, digits[v]) : "+";
}

// The grid: '#' a key of the query's own copy, '*' a key of another copy, '.' masked;
// '|' and '-' mark tile boundaries.
void print_text_grid(const MaskView& v, const std::vector<std::uint8_t>& grid) {
  const MaskSpec& m = v.spec;
  const std::int64_t N = m.positions(), R = m.query_rows();
  auto columns = [&](auto&& cell) {
    std::string s;
    for (std::int64_t p = 0; p < N; ++p) {
      if (p > 0 && p % v.tile.k == 0) s += '|';
      s += cell(p);
    }
    return s;
  };
  std::cout << "'#' visible (same copy), '*' visible (other copy), '.' masked; rows = queries, columns = keys,\n"
            << "both in " << model::to_string(v.layout) << " order; tile boundaries '|' and '-'\n";
  std::cout << fmt::format("{:>23} ", "key copy") << columns([&](std::int64_t p) {
    return base36(v.key_logical[static_cast<std::size_t>(p)] % m.copies);
  }) << "\n";
  std::cout << fmt::format("{:>5} {:>6} {:>5} {:>4}", "row", "t", "token", "copy") << "\n";
  for (std::int64_t r = 0; r < R; ++r) {
    if (r > 0 && r % v.tile.q == 0)
      std::cout << std::string(24, ' ') << columns([](std::int64_t) { return std::string("-"); }) << "\n";
    const std::int64_t t = query_logical(v, r), copy = t % m.copies;
    std::cout << fmt::format("{:>5} {:>6} {:>5} {:>4} ", r, t, t / m.copies, copy) << columns([&](std::int64_t p) {
      if (!grid[static_cast<std::size_t>(r * N + p)]) return std::string(".");
      return std::string(v.key_logical[static_cast<std::size_t>(p)] % m.copies == copy ? "#" : "*");
    }) << "\n";
  }
}

// Distinct hues for the query's copy (cycled beyond ten).
Rgb stream_colour(std::int64_t copy) {
  static const Rgb palette[] = {{31, 119, 180}, {214, 39, 40},  {44, 160, 44},  {255, 127, 14}, {148, 103, 189},
                                {140, 86, 75},  {227, 119, 194}, {23, 190, 207}, {188, 189, 34}, {80, 80, 80}};
  return palette[copy % 10];
}

Rgb mix(Rgb a, Rgb b, double share_of_b) {
  auto c = [&](std::uint8_t x, std::uint8_t y) {
    return static_cast<std::uint8_t>(x + (static_cast<double>(y) - x) * share_of_b + 0.5);
  };
  return {c(a.r, b.r), c(a.g, b.g), c(a.b, b.b)};
}

// One square of `scale` pixels per (query row, key); masked pairs a light tint of the
// row's colour; tile boundaries darkened when tiles are at least 4 pixels apart.
RgbImage render_png(const MaskView& v, const std::vector<std::uint8_t>& grid) {
  const std::int64_t N = v.spec.positions(), R = v.spec.query_rows();
  const std::int64_t scale = std::clamp<std::int64_t>(512 / std::max(N, R), 1, 16);
  const Rgb white{255, 255, 255}, ink{40, 40, 40};
  RgbImage img(N * scale, R * scale, white);
  for (std::int64_t r = 0; r < R; ++r) {
    const Rgb on = stream_colour(query_logical(v, r) % v.spec.copies), off = mix(on, white, 0.88);
    for (std::int64_t p = 0; p < N; ++p) {
      const Rgb c = grid[static_cast<std::size_t>(r * N + p)] ? on : off;
      for (std::int64_t dy = 0; dy < scale; ++dy)
        for (std::int64_t dx = 0; dx < scale; ++dx) img.set(p * scale + dx, r * scale + dy, c);
    }
  }
  if (v.tile.k * scale >= 4)
    for (std::int64_t x = v.tile.k * scale; x < img.width(); x += v.tile.k * scale)
      for (std::int64_t y = 0; y < img.height(); ++y) img.set(x, y, mix(img.at(x, y), ink, 0.55));
  if (v.tile.q * scale >= 4)
    for (std::int64_t y = v.tile.q * scale; y < img.height(); y += v.tile.q * scale)
      for (std::int64_t x = 0; x < img.width(); ++x) img.set(x, y, mix(img.at(x, y), ink, 0.55));
  return img;
}

nlohmann::json spec_json(const MaskSpec& m) {
  nlohmann::json j = {{"kind", model::to_string(m.kind)},
                      {"tokens", m.tokens},
                      {"copies", m.copies},
                      {"positions", m.positions()},
                      {"query_rows", m.query_rows()},
                      {"final_copy_queries_only", m.final_copy_queries_only}};
  if (m.kind == MaskSpec::Kind::sliding) j["window"] = m.window;
  if (m.kind == MaskSpec::Kind::phd) {
    j["phd_variant"] = model::to_string(m.phd_variant);
    if (m.phd_variant != model::PhdVariant::plain) j["phd_W"] = m.phd_W;
    if (m.phd_variant == model::PhdVariant::cswa) j["phd_C"] = m.phd_C;
  }
  return j;
}

nlohmann::json counts_json(const MaskView& v, std::int64_t pairs, const model::TileCount& t) {
  const double area = static_cast<double>(v.spec.query_rows()) * static_cast<double>(v.spec.positions());
  return {{"visible_pairs", pairs},
          {"density", static_cast<double>(pairs) / area},
          {"tiles", {{"visible", t.visible}, {"full", t.full}, {"total", t.total}}},
          {"executed_pairs", t.executed_pairs},
          {"executed_share", static_cast<double>(t.executed_pairs) / area},
          {"useful_share_of_executed", static_cast<double>(pairs) / static_cast<double>(t.executed_pairs)}};
}

void print_counts(const nlohmann::json& c) {
  const auto& t = c["tiles"];
  std::cout << fmt::format("visible pairs {} (density {:.4f})\n", c["visible_pairs"].get<std::int64_t>(),
                           c["density"].get<double>())
            << fmt::format("tiles: {} visible, {} full, {} total; executed pairs {} ({:.1f}% useful)\n",
                           t["visible"].get<std::int64_t>(), t["full"].get<std::int64_t>(),
                           t["total"].get<std::int64_t>(), c["executed_pairs"].get<std::int64_t>(),
                           100.0 * c["useful_share_of_executed"].get<double>());
}

struct MaskOptions {
  ModelOptions model;
  std::int64_t layer = 0;
  std::int64_t tokens = 16;
  std::string layout, tile = "64x64", png;
  bool json = false;
};

// Refuses sizes the chosen output cannot show before anything is materialised.
void check_drawable(const MaskSpec& m, bool text_grid, bool png) {
  const std::int64_t limit = text_grid ? max_text_positions : max_png_positions;
  if ((text_grid || png) && std::max(m.positions(), m.query_rows()) > limit)
    throw ConfigError("--tokens", fmt::format("{} tokens x {} copies = {} positions is too many for a {} (at most {}); "
                                              "use {}",
                                              m.tokens, m.copies, m.positions(), text_grid ? "text grid" : "PNG", limit,
                                              text_grid ? "--png FILE or --json" : "--json"));
}

int run_mask(const MaskOptions& o) {
  if (!o.png.empty()) check_output_file("--png", o.png);
  const model::Config c = load_config(o.model);
  MaskView v{model::layer_mask(c, o.layer, o.tokens),
             o.layout.empty() ? model::default_layout(c.design) : model::layout_from_string(o.layout),
             parse_tile(o.tile),
             {}};
  const MaskSpec& m = v.spec;
  const bool text_grid = !o.json && o.png.empty();
  check_drawable(m, text_grid, !o.png.empty());
  const std::int64_t pairs = model::visible_pairs(m);
  const nlohmann::json counts = counts_json(v, pairs, model::visible_tiles(m, v.layout, v.tile.q, v.tile.k));
  std::vector<std::uint8_t> grid;
  if (text_grid || !o.png.empty()) {
    v.key_logical = model::physical_to_logical(m.tokens, m.copies, v.layout);
    grid = model::materialize(m, v.layout);
    if (!o.png.empty()) write_png(o.png, render_png(v, grid));  // before any output: a failed write prints nothing
  }
  if (o.json) {
    print_json({{"model", c.effective.name},
                {"design", model::describe(c.design)},
                {"layer", o.layer},
                {"mask", spec_json(m)},
                {"layout", model::to_string(v.layout)},
                {"tile", {{"query_rows", v.tile.q}, {"keys", v.tile.k}}},
                {"counts", counts},
                {"png", o.png.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.png)}});
    return exit_ok;
  }
  std::cout << fmt::format("{}, {}: layer {} {} mask, {} tokens x {} copies{}, layout {}, tile {}x{}\n",
                           c.effective.name, model::describe(c.design), o.layer, model::to_string(m.kind), m.tokens,
                           m.copies, m.final_copy_queries_only ? " (final-copy queries only)" : "",
                           model::to_string(v.layout), v.tile.q, v.tile.k);
  if (text_grid) print_text_grid(v, grid);
  print_counts(counts);
  if (!o.png.empty()) std::cout << "wrote " << o.png << "\n";
  return exit_ok;
}

}  // namespace

Verb add_mask(CLI::App& app) {
  auto* sub = app.add_subcommand("mask", "One layer's attention mask: text grid or PNG, exact pair and tile counts");
  auto o = std::make_shared<MaskOptions>();
  o->model.add_to(*sub);
  sub->add_option("-l,--layer", o->layer, "Layer index (0-based, of the grown backbone)")->required();
  sub->add_option("-t,--tokens", o->tokens, "Tokens L (positions = L x copies)")->capture_default_str();
  sub->add_option("--layout", o->layout, "interleaved (logical order), stream_major or phd_split; default: the design's");
  sub->add_option("--tile", o->tile, "Kernel tile BQxBK (query rows x keys)")->capture_default_str();
  sub->add_option("--png", o->png, "Write a PNG heatmap (up to " + std::to_string(max_png_positions) + " positions)")
      ->check(non_empty());
  sub->add_flag("--json", o->json, "Print the spec and counts as JSON");
  return {sub, [o] { return run_mask(*o); }};
}

}  // namespace hdlab::cli
