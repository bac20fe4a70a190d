#include "hdlab/gui_core/validation_points.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "hdlab/model/error.hpp"

namespace hdlab::gui_core {
namespace {

double positive_seconds(const nlohmann::json& o, const char* key, const std::string& at) {
  const std::string ptr = at + "/" + key;
  if (!o.contains(key)) throw model::ConfigError(ptr, "is required");
  const auto& v = o[key];
  if (!v.is_number()) throw model::ConfigError(ptr, "must be a number of seconds");
  const double x = v.get<double>();
  if (!(x > 0) || !std::isfinite(x)) throw model::ConfigError(ptr, "must be > 0 (log axes), got " + v.dump());
  return x;
}

ValidationPoint parse_point(const nlohmann::json& o, const std::string& at) {
  if (!o.is_object()) throw model::ConfigError(at, "must be an object");
  for (const auto& [key, value] : o.items())
    if (key != "design" && key != "label" && key != "predicted_s" && key != "measured_s")
      throw model::ConfigError(at + "/" + key,
                               "unknown key (known: design, label, predicted_s, measured_s)");
  ValidationPoint p;
  if (!o.contains("design") || !o["design"].is_string())
    throw model::ConfigError(at + "/design", "is required: the design's name");
  p.design = o["design"].get<std::string>();
  if (o.contains("label")) {
    if (!o["label"].is_string()) throw model::ConfigError(at + "/label", "must be a string");
    p.label = o["label"].get<std::string>();
  }
  p.predicted_s = positive_seconds(o, "predicted_s", at);
  p.measured_s = positive_seconds(o, "measured_s", at);
  return p;
}

// A positive, finite number at o[key], or nothing (a report writes null for NaN).
std::optional<double> positive(const nlohmann::json& o, const char* key) {
  if (!o.is_object() || !o.contains(key) || !o[key].is_number()) return std::nullopt;
  const double x = o[key].get<double>();
  return x > 0 && std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
}

std::string string_at(const nlohmann::json& o, const char* key, const std::string& at) {
  if (!o.contains(key) || !o[key].is_string()) throw model::ConfigError(at + "/" + key, "is required: a string");
  return o[key].get<std::string>();
}

const nlohmann::json& array_at(const nlohmann::json& o, const char* key, const std::string& at) {
  if (!o[key].is_array()) throw model::ConfigError(at + "/" + key, "must be a list");
  return o[key];
}

// `hdlab validate -o DIR`'s validation.json: one point per case, times in seconds.
ValidationFile validation_report(const nlohmann::json& j) {
  ValidationFile f;
  f.kind = "validation report";
  const nlohmann::json& cases = array_at(j, "cases", "");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string at = "/cases/" + std::to_string(i);
    if (!cases[i].is_object()) throw model::ConfigError(at, "must be an object");
    const nlohmann::json time = cases[i].value("time", nlohmann::json());
    if (!time.is_object()) throw model::ConfigError(at + "/time", "is required: {\"predicted_s\", \"measured_s\"}");
    const auto predicted = positive(time, "predicted_s"), measured = positive(time, "measured_s");
    if (!predicted || !measured) {
      ++f.left_out;
      continue;
    }
    f.points.push_back({string_at(cases[i], "design", at), cases[i].value("label", std::string()), *predicted, *measured});
  }
  return f;
}

// `hdlab validate --published -o DIR`'s published.json: the value each source published
// against the prediction, grouped by metric (each group in its own unit).
ValidationFile published_report(const nlohmann::json& j) {
  ValidationFile f;
  f.kind = "published report";
  f.measured_axis = "published (unit of the series)";
  f.predicted_axis = "predicted (unit of the series)";
  const nlohmann::json& sources = array_at(j, "sources", "");
  for (std::size_t s = 0; s < sources.size(); ++s) {
    const std::string at = "/sources/" + std::to_string(s);
    if (!sources[s].is_object()) throw model::ConfigError(at, "must be an object");
    const std::string source = string_at(sources[s], "id", at);
    const nlohmann::json& cases = array_at(sources[s], "cases", at);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const std::string c = at + "/cases/" + std::to_string(i);
      if (!cases[i].is_object()) throw model::ConfigError(c, "must be an object");
      const auto predicted = positive(cases[i], "predicted"), published = positive(cases[i], "published");
      if (!predicted || !published) {
        ++f.left_out;
        continue;
      }
      const std::string group = string_at(cases[i], "metric", c) + " [" + string_at(cases[i], "unit", c) + "]";
      f.points.push_back({group, source + ": " + string_at(cases[i], "id", c), *predicted, *published});
    }
  }
  return f;
}

}  // namespace

ValidationFile parse_validation_file(const nlohmann::json& j) {
  if (j.is_array() || (j.is_object() && j.contains("points"))) {
    ValidationFile f;
    f.kind = "points";
    f.points = parse_validation_points(j);
    return f;
  }
  if (j.is_object() && j.contains("cases") && j.contains("summary")) return validation_report(j);
  if (j.is_object() && j.contains("sources") && j.contains("error_convention")) return published_report(j);
  if (is_kernel_summary(j)) return parse_kernel_report(j, nullptr);
  if (j.is_object() && j.contains("cases"))
    throw model::ConfigError("/cases", "this is a validation spec (what `hdlab validate` runs), not its results: run "
                                       "`hdlab validate SPEC -o DIR` and open DIR/validation.json or DIR/points.json");
  throw model::ConfigError("", "not a validation file: expected {\"points\": [...]} (points.json), the report of "
                               "`hdlab validate -o DIR` (validation.json: \"summary\" and \"cases\") or of `hdlab "
                               "validate --published` (published.json: \"sources\") or `hdlab validate --kerneldb` (kernels.json)");
}

std::vector<ValidationPoint> parse_validation_points(const nlohmann::json& j) {
  const nlohmann::json* list = &j;
  std::string at;
  if (j.is_object()) {
    for (const auto& [key, value] : j.items())
      if (key != "points" && key != "description")
        throw model::ConfigError("/" + key, "unknown key (known: points, description)");
    if (!j.contains("points")) throw model::ConfigError("/points", "is required");
    list = &j["points"];
    at = "/points";
  }
  if (!list->is_array()) throw model::ConfigError(at, "must be a list of points");
  std::vector<ValidationPoint> out;
  for (std::size_t i = 0; i < list->size(); ++i) out.push_back(parse_point((*list)[i], at + "/" + std::to_string(i)));
  return out;
}

nlohmann::json to_json(const std::vector<ValidationPoint>& points) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : points) {
    nlohmann::json o = {{"design", p.design}, {"predicted_s", p.predicted_s}, {"measured_s", p.measured_s}};
    if (!p.label.empty()) o["label"] = p.label;
    list.push_back(o);
  }
  return {{"points", list}};
}

ValidationSummary summarize(const std::vector<ValidationPoint>& points) {
  ValidationSummary s;
  s.points = static_cast<std::int64_t>(points.size());
  if (points.empty()) return s;
  std::vector<double> errors;
  for (const auto& p : points) {
    errors.push_back(std::fabs(p.predicted_s / p.measured_s - 1.0));
    if (std::find(s.designs.begin(), s.designs.end(), p.design) == s.designs.end()) s.designs.push_back(p.design);
  }
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  s.median_abs_error = n % 2 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
  s.max_abs_error = errors.back();
  const auto within = std::count_if(errors.begin(), errors.end(), [](double e) { return e <= 0.2; });
  s.within_20_percent = static_cast<double>(within) / static_cast<double>(n);
  return s;
}

}  // namespace hdlab::gui_core
