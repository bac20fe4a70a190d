// Sweep outputs: results.csv and results.json streamed to a temporary file in the output
// folder and renamed into place (model::AtomicFileWriter: a kill never leaves half a
// file under the real name),
// the printed table, the summary; and the small text helpers the sweep sources share.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>


#include "hdlab/model/error.hpp"
#include "hdlab/model/files.hpp"
#include "hdlab/simulator/sweep.hpp"
#include "sweep_internal.hpp"

namespace hdlab::simulator {

using namespace sweep_detail;
namespace fs = std::filesystem;

namespace sweep_detail {

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void append_double(std::string& out, double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

std::string format_significant(double v, int digits) {
  if (std::isnan(v)) return "-";
  const double a = std::fabs(v);
  char buf[48];
  if (a != 0 && (a >= 1e9 || a < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  } else {
    const int magnitude = a == 0 ? 0 : static_cast<int>(std::floor(std::log10(a)));
    std::snprintf(buf, sizeof buf, "%.*f", std::max(0, digits - 1 - magnitude), v);
  }
  return buf;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest(const std::string& name, const std::vector<std::string>& names) {
  std::optional<std::string> best;
  std::size_t best_d = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const std::string& n : names) {
    const std::size_t d = edit_distance(name, n);
    if (d < best_d) best = n, best_d = d;
  }
  return best;
}

namespace {

// A file streamed through model::AtomicFileWriter in pieces of about 1 MiB.
class AtomicOutput {
 public:
  explicit AtomicOutput(const fs::path& path) : file_(path.string()) { buffer_.reserve(1 << 20); }
  std::string& buffer() { return buffer_; }
  void maybe_flush() {
    if (buffer_.size() >= (1 << 20)) flush();
  }
  void commit() {
    flush();
    file_.commit();
  }

 private:
  void flush() {
    file_.write(buffer_);
    buffer_.clear();
  }
  model::AtomicFileWriter file_;
  std::string buffer_;
};

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Derived-column arithmetic without allocation: the baseline point differs from `point`
// only in the baseline's axes.
struct PointArithmetic {
  std::vector<std::uint64_t> stride;  // per axis
  explicit PointArithmetic(const SweepSpec& spec) : stride(spec.axes.size(), 1) {
    for (std::size_t i = spec.axes.size(); i-- > 1;) stride[i - 1] = stride[i] * spec.axes[i].size();
  }
  std::size_t value(const SweepSpec& spec, std::uint64_t point, std::size_t axis) const {
    return static_cast<std::size_t>((point / stride[axis]) % spec.axes[axis].size());
  }
  std::uint64_t moved(const SweepSpec& spec, std::uint64_t point,
                      const std::vector<std::pair<int, std::size_t>>& place) const {
    for (const auto& [axis, v] : place) {
      const auto a = static_cast<std::size_t>(axis);
      point = point - value(spec, point, a) * stride[a] + v * stride[a];
    }
    return point;
  }
};

double derived_at(const SweepSpec& spec, const SweepResults& r, const PointArithmetic& pa, std::size_t d,
                  std::uint64_t point) {
  const SweepDerived& der = spec.derived[d];
  const std::size_t k = spec.stored_columns.size(), c = static_cast<std::size_t>(der.stored_index);
  const std::uint64_t base = pa.moved(spec, point, der.baseline);
  if (r.state[point] != PointState::done || r.state[base] != PointState::done) return std::nan("");
  const double denominator = r.values[base * k + c];
  return denominator == 0 ? std::nan("") : r.values[point * k + c] / denominator;
}

const std::string* error_of(const SweepResults& r, std::uint64_t point) {
  auto it = std::lower_bound(r.errors.begin(), r.errors.end(), point,
                             [](const auto& e, std::uint64_t p) { return e.first < p; });
  return it != r.errors.end() && it->first == point ? &it->second : nullptr;
}

void write_csv(const SweepSpec& spec, const SweepResults& r, const fs::path& path) {
  AtomicOutput out(path);
  std::string& b = out.buffer();
  b += "point";
  for (const SweepAxis& a : spec.axes) b += "," + a.name;
  for (const std::string& c : spec.columns) b += "," + c;
  for (const SweepDerived& d : spec.derived) b += "," + d.name;
  b += ",error\n";
  std::vector<std::vector<std::string>> labels;
  for (const SweepAxis& a : spec.axes) {
    labels.emplace_back();
    for (const std::string& l : a.labels) labels.back().push_back(csv_field(l));
  }
  const PointArithmetic pa(spec);
  const std::size_t k = spec.stored_columns.size();
  for (std::uint64_t p = 0; p < spec.point_count; ++p) {
    if (r.state[p] == PointState::excluded || r.state[p] == PointState::pending) continue;
    b += std::to_string(p);
    for (std::size_t i = 0; i < spec.axes.size(); ++i) b += "," + labels[i][pa.value(spec, p, i)];
    for (int c : spec.output_stored_index) {
      b += ',';
      const double v = r.values[p * k + static_cast<std::size_t>(c)];
      if (!std::isnan(v)) append_double(b, v);
    }
    for (std::size_t d = 0; d < spec.derived.size(); ++d) {
      b += ',';
      const double v = derived_at(spec, r, pa, d, p);
      if (!std::isnan(v)) append_double(b, v);
    }
    b += ',';
    if (const std::string* e = error_of(r, p)) b += csv_field(*e);
    b += '\n';
    out.maybe_flush();
  }
  out.commit();
}

void append_json_number(std::string& b, double v) {
  if (std::isfinite(v)) append_double(b, v);
  else b += "null";
}

// Keys in the order a reader expects them (ordered_json keeps insertion order).
nlohmann::ordered_json json_head(const SweepSpec& spec) {
  nlohmann::ordered_json axes = nlohmann::ordered_json::array(), cols = nlohmann::ordered_json::array();
  for (const SweepAxis& a : spec.axes) axes.push_back({{"name", a.name}, {"pointer", a.pointer}, {"labels", a.labels}});
  for (const std::string& c : spec.columns) cols.push_back({{"name", c}, {"unit", column_unit(c)}});
  for (const SweepDerived& d : spec.derived) {
    nlohmann::ordered_json base = nlohmann::ordered_json::object();
    for (const auto& [axis, v] : d.baseline) {
      const SweepAxis& a = spec.axes[static_cast<std::size_t>(axis)];
      base[a.name] = a.labels[v];
    }
    cols.push_back({{"name", d.name}, {"unit", "1"}, {"ratio_of", d.column}, {"baseline", base}});
  }
  return {{"sweep", spec.name}, {"description", spec.description}, {"points", spec.point_count},
          {"axes", axes},       {"columns", cols}};
}

// {"sweep", "description", "points", "axes", "columns", "rows": [{"point", <axis>: cell,
// <column>: number|null, ..., "error": text (failed rows only)}]}
void write_json(const SweepSpec& spec, const SweepResults& r, const fs::path& path) {
  AtomicOutput out(path);
  std::string& b = out.buffer();
  std::string head = json_head(spec).dump();
  head.pop_back();  // reopen the object for "rows"
  b += head + ",\"rows\":[";
  std::vector<std::vector<std::string>> cells;  // "\"name\":cell" per axis value
  for (const SweepAxis& a : spec.axes) {
    cells.emplace_back();
    for (std::size_t v = 0; v < a.size(); ++v)
      cells.back().push_back(nlohmann::json(a.name).dump() + ":" + a.cell(v).dump());
  }
  std::vector<std::string> keys;
  for (const std::string& c : spec.columns) keys.push_back(",\"" + c + "\":");
  for (const SweepDerived& d : spec.derived) keys.push_back(nlohmann::json(d.name).dump().insert(0, ",") + ":");
  const PointArithmetic pa(spec);
  const std::size_t k = spec.stored_columns.size();
  bool first = true;
  for (std::uint64_t p = 0; p < spec.point_count; ++p) {
    if (r.state[p] == PointState::excluded || r.state[p] == PointState::pending) continue;
    b += first ? "\n{\"point\":" : ",\n{\"point\":";
    first = false;
    b += std::to_string(p);
    for (std::size_t i = 0; i < spec.axes.size(); ++i) b += "," + cells[i][pa.value(spec, p, i)];
    std::size_t key = 0;
    for (int c : spec.output_stored_index) {
      b += keys[key++];
      append_json_number(b, r.values[p * k + static_cast<std::size_t>(c)]);
    }
    for (std::size_t d = 0; d < spec.derived.size(); ++d) {
      b += keys[key++];
      append_json_number(b, derived_at(spec, r, pa, d, p));
    }
    if (const std::string* e = error_of(r, p)) b += ",\"error\":" + nlohmann::json(*e).dump();
    b += '}';
    out.maybe_flush();
  }
  b += "\n]}\n";
  out.commit();
}

}  // namespace

std::vector<std::string> write_outputs(const SweepSpec& spec, const SweepResults& r, const std::string& dir,
                                       const SweepOptions& o) {
  std::vector<std::string> files;
  const fs::path folder(dir);
  if (o.write_csv) {
    write_csv(spec, r, folder / "results.csv");
    files.push_back((folder / "results.csv").string());
  }
  if (o.write_json) {
    write_json(spec, r, folder / "results.json");
    files.push_back((folder / "results.json").string());
  }
  constexpr std::size_t table_rows = 10000;  // table.txt is for reading; the data is in results.*
  model::write_file_atomic((folder / "table.txt").string(), format_table(spec, r, table_rows));
  files.push_back((folder / "table.txt").string());
  return files;
}

void write_summary(const SweepSummary& s, const std::string& dir) {
  model::write_file_atomic((fs::path(dir) / "summary.json").string(), to_json(s).dump(2) + "\n");
}

}  // namespace sweep_detail

double derived_value(const SweepSpec& spec, const SweepResults& r, std::size_t derived, std::uint64_t point) {
  return derived_at(spec, r, PointArithmetic(spec), derived, point);
}

nlohmann::ordered_json to_json(const SweepSummary& s) {
  return nlohmann::ordered_json{{"sweep", s.name},
          {"points", s.points},
          {"excluded", s.excluded},
          {"evaluated", s.evaluated},
          {"resumed", s.resumed},
          {"failed", s.failed},
          {"dropped_journal_lines", s.dropped_journal_lines},
          {"threads", s.threads},
          {"seconds", s.seconds},
          {"points_per_s", s.seconds > 0 ? static_cast<double>(s.evaluated) / s.seconds : 0.0},
          {"files", s.files}};
}

}  // namespace hdlab::simulator
