#include "hdlab/gui_core/validation_points.hpp"

#include <algorithm>
#include <cmath>

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

}  // namespace

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
