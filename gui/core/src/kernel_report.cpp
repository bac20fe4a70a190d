// The kernel-level validation report of `hdlab validate --kerneldb -o DIR` as scatter
// points (validation_points.hpp): every held-out row of kernels.csv, or the worst rows of
// kernels.json when the CSV is not there.
#include <cmath>
#include <cstdlib>
#include <set>
#include <string_view>

#include "hdlab/gui_core/validation_points.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::gui_core {
namespace {

constexpr std::string_view kHeader = "op_class,precision,label,source,held_out,measured_s,predicted_s,error";
enum Column { OpClass, Precision, Label, Source, HeldOut, Measured, Predicted, Error, Columns };
constexpr const char* kColumnNames[] = {"op_class", "precision",  "label",       "source",
                                        "held_out", "measured_s", "predicted_s", "error"};

// One CSV line's fields; quoted fields may hold commas and doubled quotes (kernel_cases_csv
// quotes a field with a comma, quote or line break).
std::vector<std::string> split_csv_line(std::string_view line, const auto& place) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') fields.back() += c;
      else if (i + 1 < line.size() && line[i + 1] == '"') fields.back() += line[++i];
      else quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  if (quoted) throw model::ConfigError(place(), "a quoted field is not closed");
  return fields;
}

// `place` names the file and line, built only for an error.
double seconds_at(const std::vector<std::string>& f, Column c, const auto& place) {
  char* end = nullptr;
  const double v = std::strtod(f[c].c_str(), &end);
  if (f[c].empty() || *end != '\0' || !(v > 0) || !std::isfinite(v))
    throw model::ConfigError(place(), std::string("column ") + kColumnNames[c] + ": must be a positive number of "
                                        "seconds, got \"" + f[c] + "\"");
  return v;
}

ValidationPoint kernel_point(const std::string& op_class, const std::string& precision, const std::string& label,
                             const std::string& source, double predicted_s, double measured_s) {
  return {op_class, precision + " " + label + " (" + source + ")", predicted_s, measured_s};
}

void read_csv(const std::string& text, const std::string& name, ValidationFile& f) {
  std::size_t line_no = 0, at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // Built per line only when it is needed: the report has ~3e5 lines.
    const auto place = [&] { return name + ":" + std::to_string(line_no); };
    if (line_no == 1) {
      if (line != kHeader)
        throw model::ConfigError(place(), "the header must be \"" + std::string(kHeader) + "\" (the kernels.csv of "
                                        "`hdlab validate --kerneldb`), got \"" + std::string(line) + "\"");
      continue;
    }
    if (line.empty()) continue;
    const std::vector<std::string> fields = split_csv_line(line, place);
    if (fields.size() != Columns)
      throw model::ConfigError(place(), "has " + std::to_string(fields.size()) + " columns, not the " +
                                          std::to_string(Columns) + " of the header");
    if (fields[HeldOut] != "1" && fields[HeldOut] != "0")
      throw model::ConfigError(place(), "column held_out: must be 1 or 0, got \"" + fields[HeldOut] + "\"");
    // Rows the fit saw are not a test of it; the report's statistics leave them out too.
    if (fields[HeldOut] == "0") continue;
    f.points.push_back(kernel_point(fields[OpClass], fields[Precision], fields[Label], fields[Source],
                                    seconds_at(fields, Predicted, place), seconds_at(fields, Measured, place)));
  }
  if (line_no == 0) throw model::ConfigError(name, "is empty: expected the kernels.csv of `hdlab validate --kerneldb`");
}

// The worst rows each class of kernels.json keeps (a row appears once even when it is
// also among "all"'s worst).
void read_worst_rows(const nlohmann::json& summary, ValidationFile& f) {
  std::set<std::string> seen;
  const nlohmann::json& classes = summary["classes"];
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const nlohmann::json& worst = classes[i].value("worst", nlohmann::json::array());
    for (std::size_t k = 0; k < worst.size(); ++k) {
      const nlohmann::json& row = worst[k];
      const std::string at = "/classes/" + std::to_string(i) + "/worst/" + std::to_string(k);
      if (!row.is_object()) throw model::ConfigError(at, "must be an object");
      const double predicted = row.value("predicted_s", 0.0), measured = row.value("measured_s", 0.0);
      const std::string source = row.value("source", std::string());
      if (!(predicted > 0) || !(measured > 0)) {
        ++f.left_out;
        continue;
      }
      if (!seen.insert(source + "|" + row.value("op_class", std::string())).second) continue;
      f.points.push_back(kernel_point(row.value("op_class", std::string()), row.value("precision", std::string()),
                                      row.value("label", std::string()), source, predicted, measured));
    }
  }
}

}  // namespace

bool is_kernel_summary(const nlohmann::json& j) {
  return j.is_object() && j.contains("classes") && j.contains("held_out_rows") && j["classes"].is_array();
}

ValidationFile parse_kernel_report(const nlohmann::json& summary, const std::string* csv_text,
                                   const std::string& csv_name) {
  ValidationFile f;
  f.measured_axis = "measured kernel time (s)";
  f.predicted_axis = "predicted kernel time (s)";
  if (is_kernel_summary(summary))
    f.about = "device " + summary.value("device", std::string("?")) + ", profile " +
              summary.value("profile", std::string("?"));
  if (csv_text) {
    f.kind = "kernel report";
    read_csv(*csv_text, csv_name, f);
  } else {
    if (!is_kernel_summary(summary))
      throw model::ConfigError("", "not a kernels.json of `hdlab validate --kerneldb`: expected \"classes\" and "
                                   "\"held_out_rows\"");
    f.kind = "kernel report, worst rows only (no kernels.csv beside it)";
    read_worst_rows(summary, f);
  }
  return f;
}

}  // namespace hdlab::gui_core
