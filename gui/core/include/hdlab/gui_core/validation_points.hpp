#pragma once
// Predicted-vs-measured points for the validation scatter, and their error summary.
// Plain data so that anything can feed the chart: `hdlab validate` output, a CSV, a test.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hdlab::gui_core {

struct ValidationPoint {
  std::string design;  // one colour per design in the scatter
  std::string label;   // what was timed, e.g. "decode b=8 ctx=4096"; may be empty
  double predicted_s = 0;
  double measured_s = 0;
};

// {"points": [{"design": "...", "label": "...", "predicted_s": x, "measured_s": y}, ...]}
// or the bare array. Unknown keys and non-positive times are ConfigErrors at their
// JSON pointer ("/points/3/measured_s").
std::vector<ValidationPoint> parse_validation_points(const nlohmann::json& j);
nlohmann::json to_json(const std::vector<ValidationPoint>& points);

struct ValidationSummary {
  std::int64_t points = 0;
  double median_abs_error = 0;  // median of |predicted / measured - 1|
  double max_abs_error = 0;
  double within_20_percent = 0;  // share of points with |error| <= 0.2
  std::vector<std::string> designs;  // distinct, in first-seen order
};
ValidationSummary summarize(const std::vector<ValidationPoint>& points);

}  // namespace hdlab::gui_core
