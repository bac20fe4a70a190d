// The printed table of a sweep (a Markdown table: readable in a terminal, pasteable into
// a README) and the human summary lines.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "hdlab/simulator/sweep.hpp"
#include "sweep_internal.hpp"

namespace hdlab::simulator {

using namespace sweep_detail;

namespace {

struct Cell {
  std::string text;
  bool number = false;  // right-aligned
  double value = std::nan("");  // what `text` shows, for numbers
};

// Where a table column's value comes from: a stored column or a derived one.
struct Source {
  long stored = -1;
  long derived = -1;
};

Source find_source(const SweepSpec& spec, const std::string& column) {
  Source s;
  for (std::size_t d = 0; d < spec.derived.size(); ++d)
    if (spec.derived[d].name == column) s.derived = static_cast<long>(d);
  for (std::size_t i = 0; i < spec.stored_columns.size(); ++i)
    if (spec.stored_columns[i] == column) s.stored = static_cast<long>(i);
  return s;
}

std::vector<SweepTableColumn> table_columns(const SweepSpec& spec) {
  if (!spec.table.columns.empty()) return spec.table.columns;
  std::vector<SweepTableColumn> cols;
  for (const std::string& c : spec.columns) cols.push_back({c, c, 1.0, {}});  // units are in the names
  for (const SweepDerived& d : spec.derived) cols.push_back({d.name, d.name, 1.0, {}});
  return cols;
}

Cell value_cell(const SweepSpec& spec, const SweepResults& r, const SweepTableColumn& col, const Source& src,
                std::uint64_t point) {
  switch (r.state[point]) {
    case PointState::excluded: return {"excluded", true};
    case PointState::pending: return {"-", true};
    case PointState::failed: return {"error", true};
    case PointState::done: break;
  }
  const double v = src.derived >= 0
                       ? derived_value(spec, r, static_cast<std::size_t>(src.derived), point)
                       : r.stored(point, static_cast<std::size_t>(src.stored), spec.stored_columns.size());
  return {format_significant(v * col.scale, 4), true, v * col.scale};
}

// A column whose every number is a whole number (counts, parameters, bytes) prints them
// whole: "11", not "11.00".
void whole_number_columns(std::vector<std::vector<Cell>>& rows) {
  if (rows.empty()) return;
  for (std::size_t c = 0; c < rows[0].size(); ++c) {
    bool whole = true, any = false;
    for (std::size_t r = 1; r < rows.size(); ++r) {
      const Cell& cell = rows[r][c];
      if (!cell.number || std::isnan(cell.value)) continue;
      any = true;
      whole = whole && std::fabs(cell.value) < 1e15 && cell.value == std::floor(cell.value);
    }
    if (!any || !whole) continue;
    for (std::size_t r = 1; r < rows.size(); ++r)
      if (rows[r][c].number && !std::isnan(rows[r][c].value)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", rows[r][c].value);
        rows[r][c].text = buf;
      }
  }
}

std::string render(const std::vector<std::vector<Cell>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 3);
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].text.size());
  }
  std::string out;
  auto line = [&](const std::vector<Cell>& row) {
    out += "|";
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].text.size(), ' ');
      out += " " + (row[c].number ? pad + row[c].text : row[c].text + pad) + " |";
    }
    out += "\n";
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    line(rows[i]);
    if (i == 0) {
      out += "|";
      for (std::size_t c = 0; c < rows[0].size(); ++c) out += " " + std::string(width[c], '-') + " |";
      out += "\n";
    }
  }
  return out;
}

}  // namespace

std::string format_table(const SweepSpec& spec, const SweepResults& r, std::size_t max_rows) {
  const std::vector<SweepTableColumn> cols = table_columns(spec);
  std::vector<Source> sources;
  for (const SweepTableColumn& c : cols) sources.push_back(find_source(spec, c.column));

  std::vector<std::vector<Cell>> rows(1);
  for (int a : spec.table.row_axes) rows[0].push_back({spec.axes[static_cast<std::size_t>(a)].name, false});
  if (spec.table.row_axes.empty()) rows[0].push_back({"sweep", false});
  for (const SweepTableColumn& c : cols) rows[0].push_back({c.header, true});

  // A printed row per distinct value of the row axes, at its first point that is not
  // excluded; each cell reads the point that differs from it in the cell's "where" axes.
  std::uint64_t key_space = 1;  // at most the point count
  for (int a : spec.table.row_axes) key_space *= spec.axes[static_cast<std::size_t>(a)].size();
  std::vector<bool> seen(key_space, false);
  std::uint64_t groups = 0;
  std::vector<std::size_t> values, moved;
  for (std::uint64_t p = 0; p < spec.point_count; ++p) {
    if (r.state[p] == PointState::excluded) continue;
    spec.point_values(p, values);
    std::uint64_t key = 0;
    for (int a : spec.table.row_axes) key = key * spec.axes[static_cast<std::size_t>(a)].size() + values[static_cast<std::size_t>(a)];
    if (seen[key]) continue;
    seen[key] = true;
    if (++groups > max_rows) continue;
    std::vector<Cell> row;
    for (int a : spec.table.row_axes) row.push_back({spec.axes[static_cast<std::size_t>(a)].labels[values[static_cast<std::size_t>(a)]], false});
    if (spec.table.row_axes.empty()) row.push_back({spec.name, false});
    for (std::size_t c = 0; c < cols.size(); ++c) {
      moved = values;
      for (const auto& [axis, v] : cols[c].where) moved[static_cast<std::size_t>(axis)] = v;
      row.push_back(value_cell(spec, r, cols[c], sources[c], spec.point_index(moved)));
    }
    rows.push_back(std::move(row));
  }
  whole_number_columns(rows);
  std::string out = render(rows);
  if (groups > max_rows)
    out += "... " + std::to_string(groups - max_rows) + " more rows (every row is in results.csv)\n";
  return out;
}

std::string describe(const SweepSummary& s, const SweepSpec& spec, const SweepResults& r) {
  std::string grid;
  for (const SweepAxis& a : spec.axes) grid += (grid.empty() ? "" : " x ") + a.name + " " + std::to_string(a.size());
  std::string out = "sweep \"" + s.name + "\": " + std::to_string(s.points) + " points" +
                    (grid.empty() ? "" : " (" + grid + ")") + ", " + std::to_string(s.excluded) + " excluded; " +
                    std::to_string(s.evaluated) + " evaluated now, " + std::to_string(s.resumed) +
                    " resumed from the journal, " + std::to_string(s.failed) + " failed\n";
  if (s.dropped_journal_lines > 0)
    out += std::to_string(s.dropped_journal_lines) +
           " journal line(s) were torn or corrupt (a kill mid-write) and their points were evaluated again\n";
  if (s.failed > 0) {
    out += std::to_string(s.failed) +
           " point(s) failed; the sweep went on, and each failed row carries its reason in the error column:\n";
    for (std::size_t i = 0; i < r.errors.size() && i < 3; ++i)
      out += "  point " + std::to_string(r.errors[i].first) + " (" + spec.describe_point(r.errors[i].first) +
             "): " + r.errors[i].second + "\n";
    if (r.errors.size() > 3) out += "  ...\n";
  }
  std::string files;
  for (const std::string& f : s.files) files += (files.empty() ? "" : ", ") + f;
  char timing[160];
  std::snprintf(timing, sizeof timing, "%.3g s on %u thread(s), %.0f points/s", s.seconds, s.threads,
                s.seconds > 0 ? static_cast<double>(s.evaluated) / s.seconds : 0.0);
  out += "wrote " + files + " (" + timing + ")\n";
  return out;
}

}  // namespace hdlab::simulator
