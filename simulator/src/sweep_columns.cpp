// Sweep documents, part 2: exclusions, output columns, derived columns and the printed
// table. Names are checked against the axes and the metric catalogue with a "did you
// mean" hint, since a typo here silently drops what the user asked for.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/pipeline_io.hpp"
#include "hdlab/simulator/serving.hpp"
#include "hdlab/simulator/sweep.hpp"
#include "sweep_internal.hpp"

namespace hdlab::simulator::sweep_detail {

using model::fail;
using model::json_type_name;
using model::ObjectReader;
using model::pointer_join;

namespace {

constexpr double max_result_bytes = 8e9;  // stored values held in memory until the outputs are written

std::string hint(const std::string& name, const std::vector<std::string>& names) {
  auto c = closest(name, names);
  return c ? " (did you mean \"" + *c + "\"?)" : "";
}

int axis_by_name(const SweepSpec& spec, const std::string& name, const std::string& where) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < spec.axes.size(); ++i) {
    if (spec.axes[i].name == name) return static_cast<int>(i);
    names.push_back(spec.axes[i].name);
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  fail(where, "no axis is named \"" + name + "\"" + hint(name, names) +
                  (list.empty() ? "; the sweep has no axes" : "; axes: " + list));
}

// The value index a condition names (by label or by value); -1 when none.
long match_value(const SweepAxis& a, const json& v) {
  for (std::size_t k = 0; k < a.size(); ++k)
    if ((v.is_string() && a.labels[k] == v.get<std::string>()) || a.values[k] == v) return static_cast<long>(k);
  return -1;
}

std::size_t require_value(const SweepAxis& a, const json& v, const std::string& where) {
  const long k = match_value(a, v);
  if (k >= 0) return static_cast<std::size_t>(k);
  std::string list;
  for (std::size_t i = 0; i < a.size() && i < 12; ++i) list += (i ? ", " : "") + a.labels[i];
  if (a.size() > 12) list += ", ...";
  const std::string shown = v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump();
  fail(where, shown + " is not a value of axis " + a.name + (v.is_string() ? hint(v.get<std::string>(), a.labels) : "") +
                  "; its values: " + list);
}

// {"axis": value | [values...]}: every named axis must match.
SweepCondition parse_condition(const SweepSpec& spec, const json& j, const std::string& where) {
  if (!j.is_object() || j.empty())
    fail(where, "must be an object naming axes and their values, e.g. {\"design\": \"baseline\"}, got " +
                    (j.is_object() ? std::string("an empty object") : json_type_name(j)));
  SweepCondition c;
  for (const auto& [name, v] : j.items()) {
    const std::string at = pointer_join(where, name);
    const int axis = axis_by_name(spec, name, at);
    const SweepAxis& a = spec.axes[static_cast<std::size_t>(axis)];
    std::vector<bool> allowed(a.size(), false);
    if (v.is_array() && match_value(a, v) < 0) {
      if (v.empty()) fail(at, "is an empty list: it would match nothing");
      for (std::size_t i = 0; i < v.size(); ++i) allowed[require_value(a, v[i], pointer_join(at, i))] = true;
    } else {
      allowed[require_value(a, v, at)] = true;
    }
    c.terms.emplace_back(axis, std::move(allowed));
  }
  return c;
}

// {"axis": value}: one value per axis (a baseline or a table cell's place).
std::vector<std::pair<int, std::size_t>> parse_place(const SweepSpec& spec, const json& j, const std::string& where) {
  if (!j.is_object() || j.empty())
    fail(where, "must be an object naming axes and one value each, e.g. {\"design\": \"baseline\"}");
  std::vector<std::pair<int, std::size_t>> place;
  for (const auto& [name, v] : j.items()) {
    const std::string at = pointer_join(where, name);
    const int axis = axis_by_name(spec, name, at);
    place.emplace_back(axis, require_value(spec.axes[static_cast<std::size_t>(axis)], v, at));
  }
  return place;
}

// The columns point 0 produces (with the default serving matrix when its scenario does
// not parse).
std::vector<std::string> point0_columns(const SweepSpec& spec) {
  json doc;
  const std::vector<std::size_t> zero(spec.axes.size(), 0);
  if (build_part(spec, SweepPart::scenario, zero, doc).empty()) {
    try {
      return point_columns(spec, parse_scenario_part(doc));
    } catch (const std::exception&) {
    }
  }
  return point_columns(spec, Scenario{});
}

bool serving_swept(const SweepSpec& spec) {
  for (const SweepAxis& a : spec.axes)
    if (a.tokens[0] == "scenario" && (a.tokens.size() == 1 || a.tokens[1] == "serving")) return true;
  return false;
}

void check_metric_column(const std::string& name, const std::string& where, const std::vector<std::string>& available,
                         bool serving_varies) {
  if (!is_metric_column(name)) fail(where, "unknown column \"" + name + "\"" + hint(name, available));
  if (!serving_varies && std::find(available.begin(), available.end(), name) == available.end())
    fail(where, "\"" + name + "\" is not a cell of this sweep's serving matrix (scenario/serving)" + hint(name, available));
}

void parse_columns(ObjectReader& r, SweepSpec& spec, const std::vector<std::string>& available) {
  const json* cols = r.find("columns");
  if (!cols) {
    spec.columns = available;
    return;
  }
  if (!cols->is_array() || cols->empty())
    fail(r.at("columns"), "must be a non-empty list of metric column names");
  const bool serving_varies = serving_swept(spec);
  for (std::size_t i = 0; i < cols->size(); ++i) {
    const std::string at = pointer_join(r.at("columns"), i);
    const std::string name = model::read_string((*cols)[i], at);
    check_metric_column(name, at, available, serving_varies);
    for (std::size_t k = 0; k < spec.columns.size(); ++k)
      if (spec.columns[k] == name) fail(at, "\"" + name + "\" is already listed at " + pointer_join(r.at("columns"), k));
    spec.columns.push_back(name);
  }
}

std::size_t stored_index(SweepSpec& spec, const std::string& column) {
  for (std::size_t i = 0; i < spec.stored_columns.size(); ++i)
    if (spec.stored_columns[i] == column) return i;
  spec.stored_columns.push_back(column);
  return spec.stored_columns.size() - 1;
}

void check_new_name(const SweepSpec& spec, const std::string& name, const std::string& where) {
  if (name.empty()) fail(where, "must not be empty");
  if (name == "point" || name == "error" || is_metric_column(name))
    fail(where, "\"" + name + "\" is a reserved column name (point, error or a metric)");
  for (const SweepAxis& a : spec.axes)
    if (a.name == name) fail(where, "\"" + name + "\" is already the name of an axis");
  for (const SweepDerived& d : spec.derived)
    if (d.name == name) fail(where, "\"" + name + "\" is already a derived column");
}

void parse_derived(ObjectReader& r, SweepSpec& spec, const std::vector<std::string>& available) {
  const json* list = r.find("derived");
  if (!list) return;
  if (!list->is_array()) fail(r.at("derived"), "must be a list of derived columns, got " + json_type_name(*list));
  for (std::size_t i = 0; i < list->size(); ++i) {
    ObjectReader d((*list)[i], pointer_join(r.at("derived"), i));
    SweepDerived out;
    out.name = d.string("name", std::nullopt);
    check_new_name(spec, out.name, d.at("name"));
    out.column = d.string("column", std::nullopt);
    check_metric_column(out.column, d.at("column"), available, serving_swept(spec));
    out.baseline = parse_place(spec, d.required("baseline"), d.at("baseline"));
    out.stored_index = static_cast<int>(stored_index(spec, out.column));
    d.finish();
    spec.derived.push_back(std::move(out));
  }
}

struct UnitScale {
  const char* base;
  const char* unit;
  double scale;
};
constexpr UnitScale kUnits[] = {
    {"s", "ms", 1e3},           {"s", "us", 1e6},           {"s", "min", 1.0 / 60},       {"s", "h", 1.0 / 3600},
    {"B", "KB", 1e-3},          {"B", "MB", 1e-6},          {"B", "GB", 1e-9},            {"B", "TB", 1e-12},
    {"B", "KiB", 0x1p-10},      {"B", "MiB", 0x1p-20},      {"B", "GiB", 0x1p-30},        {"B", "TiB", 0x1p-40},
    {"FLOP", "GFLOP", 1e-9},    {"FLOP", "TFLOP", 1e-12},   {"FLOP", "PFLOP", 1e-15},     {"params", "million", 1e-6},
    {"params", "billion", 1e-9}, {"tokens/s", "ktokens/s", 1e-3}, {"1", "%", 100},
};

double unit_scale(const std::string& base, const std::string& unit, const std::string& column, const std::string& where) {
  std::string options;
  for (const UnitScale& u : kUnits) {
    if (base != u.base) continue;
    if (unit == u.unit) return u.scale;
    options += (options.empty() ? "" : ", ") + std::string(u.unit);
  }
  if (unit == base) return 1;
  fail(where, "\"" + unit + "\" does not apply to " + column + " (" + base + ")" +
                  (options.empty() ? "" : "; use " + base + ", " + options));
}

SweepTableColumn parse_table_column(SweepSpec& spec, ObjectReader c) {
  SweepTableColumn col;
  col.column = c.string("column", std::nullopt);
  std::vector<std::string> known = spec.columns;
  std::string unit = column_unit(col.column);
  for (const SweepDerived& d : spec.derived) {
    known.push_back(d.name);
    if (d.name == col.column) unit = "1";
  }
  for (const std::string& s : spec.stored_columns) known.push_back(s);
  if (std::find(known.begin(), known.end(), col.column) == known.end())
    fail(c.at("column"), "\"" + col.column + "\" is not an output or derived column of this sweep" + hint(col.column, known));
  if (c.has("unit")) {
    const std::string shown = c.string("unit", std::nullopt);
    col.scale = unit_scale(unit, shown, col.column, c.at("unit"));
    unit = shown;
  }
  col.header = c.string("header", col.column + (unit == "1" ? "" : " [" + unit + "]"));
  if (const json* w = c.find("where")) col.where = parse_place(spec, *w, c.at("where"));
  c.finish();
  return col;
}

void parse_table(ObjectReader& r, SweepSpec& spec) {
  auto t = r.optional_object("table");
  if (!t) {
    for (std::size_t i = 0; i < spec.axes.size(); ++i) spec.table.row_axes.push_back(static_cast<int>(i));
    return;
  }
  if (const json* rows = t->find("rows")) {
    if (!rows->is_array()) fail(t->at("rows"), "must be a list of axis names");
    for (std::size_t i = 0; i < rows->size(); ++i) {
      const std::string at = pointer_join(t->at("rows"), i);
      const int axis = axis_by_name(spec, model::read_string((*rows)[i], at), at);
      if (std::find(spec.table.row_axes.begin(), spec.table.row_axes.end(), axis) != spec.table.row_axes.end())
        fail(at, "repeats an axis");
      spec.table.row_axes.push_back(axis);
    }
  } else {
    for (std::size_t i = 0; i < spec.axes.size(); ++i) spec.table.row_axes.push_back(static_cast<int>(i));
  }
  if (const json* cols = t->find("columns")) {
    if (!cols->is_array() || cols->empty()) fail(t->at("columns"), "must be a non-empty list of column objects");
    for (std::size_t i = 0; i < cols->size(); ++i)
      spec.table.columns.push_back(parse_table_column(spec, ObjectReader((*cols)[i], pointer_join(t->at("columns"), i))));
  }
  t->finish();
}

}  // namespace

void parse_outputs(ObjectReader& r, SweepSpec& spec) {
  if (const json* ex = r.find("exclude")) {
    if (!ex->is_array()) fail(r.at("exclude"), "must be a list of conditions, got " + json_type_name(*ex));
    for (std::size_t i = 0; i < ex->size(); ++i)
      spec.exclude.push_back(parse_condition(spec, (*ex)[i], pointer_join(r.at("exclude"), i)));
  }
  const std::vector<std::string> available = point0_columns(spec);
  parse_columns(r, spec, available);
  spec.stored_columns = spec.columns;
  for (std::size_t i = 0; i < spec.columns.size(); ++i) spec.output_stored_index.push_back(static_cast<int>(i));
  parse_derived(r, spec, available);
  parse_table(r, spec);
  const double bytes = static_cast<double>(spec.point_count) * (8.0 * static_cast<double>(spec.stored_columns.size()) + 1);
  if (bytes > max_result_bytes)
    fail(r.at("columns"), "the grid has " + std::to_string(spec.point_count) + " points x " +
                              std::to_string(spec.stored_columns.size()) + " columns = " +
                              format_significant(bytes / 1e9, 3) +
                              " GB of results held until the outputs are written (limit 8 GB): choose fewer columns "
                              "or split the sweep");
}

// ---- metric names -------------------------------------------------------------------

bool is_metric_column(const std::string& name) {
  if (metric_from_name(name)) return true;
  for (const std::string& c : pipeline_metric_columns())
    if (name == c) return true;
  for (const std::string& c : serve_metric_columns())
    if (name == c) return true;
  // serving_b<B>_in<I>_<suffix>
  auto digits = [&](std::size_t& i) {
    const std::size_t start = i;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
    return i > start;
  };
  if (name.rfind("serving_b", 0) != 0) return false;
  std::size_t i = 9;
  if (!digits(i) || name.compare(i, 3, "_in") != 0) return false;
  i += 3;
  if (!digits(i)) return false;
  const std::string suffix = name.substr(i);
  return suffix == "_tokens_per_s" || suffix == "_ratio" || suffix == "_fits";
}

// Units follow evaluate.hpp's naming: *_tokens_per_s (also per GPU), *_requests_per_s,
// *_s (also *_s_per_<thing>), *_bytes, *_flops; anything else (ratios, fractions,
// counts, fits) is "1".
std::string column_unit(const std::string& column) {
  if (auto m = metric_from_name(column)) return metric_unit(*m);
  auto ends = [&](const std::string& suffix) {
    return column.size() > suffix.size() && column.compare(column.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends("_tokens_per_s") || ends("_tokens_per_s_per_gpu")) return "tokens/s";
  if (ends("_requests_per_s")) return "requests/s";
  if (ends("_s") || column.find("_s_per_") != std::string::npos) return "s";
  if (ends("_bytes")) return "B";
  if (ends("_flops")) return "FLOP";
  return "1";
}

}  // namespace hdlab::simulator::sweep_detail
