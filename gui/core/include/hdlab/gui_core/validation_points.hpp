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

// Any file the validation view opens, by what it holds:
//   points.json      {"points": [...]} or the bare array (above)
//   validation.json  `hdlab validate -o DIR`'s report: {"summary", ..., "cases": [{"design",
//                    "label", "time": {"predicted_s", "measured_s", ...}, ...}]}
//   published.json   `hdlab validate --published -o DIR`'s report: {"error_convention",
//                    "sources": [{"id", "cases": [{"id", "metric", "unit", "published",
//                    "predicted", ...}]}]}; one group per metric and unit, the value as
//                    published against the prediction, both in the metric's unit
//   kernels.json     `hdlab validate --kerneldb -o DIR`'s summary: {"device", "profile",
//                    "held_out_rows", "all", "classes": [{..., "worst": [rows]}]}; alone it
//                    gives only the worst rows per class (parse_kernel_report reads every
//                    row from the kernels.csv beside it)
// A validation spec (the input of `hdlab validate`, which has cases but no results) and
// anything else are ConfigErrors that say what was expected.
struct ValidationFile {
  std::string kind;  // "points", "validation report" or "published report"
  std::vector<ValidationPoint> points;
  std::string measured_axis = "measured time (s)";  // axis titles with the unit
  std::string predicted_axis = "predicted time (s)";
  std::int64_t left_out = 0;  // report cases without a positive value on both sides (null = not finite)
  std::string about;          // what the points are of, when the file says (kernels: device and profile)
};
ValidationFile parse_validation_file(const nlohmann::json& j);

// A kernel-level report: the held-out rows of kernels.csv (`hdlab validate --kerneldb`:
// op_class,precision,label,source,held_out,measured_s,predicted_s,error), one group per
// op class, each point labelled "precision shape (table:line)", kernel times in seconds.
// `summary` (kernels.json, may be null) names the device and profile. Without the CSV
// (`csv_text` null) the summary's worst rows per class stand in, and kind says so. A bad
// CSV row is a ConfigError naming `csv_name`, its line and column.
ValidationFile parse_kernel_report(const nlohmann::json& summary, const std::string* csv_text,
                                   const std::string& csv_name = "kernels.csv");
bool is_kernel_summary(const nlohmann::json& j);

struct ValidationSummary {
  std::int64_t points = 0;
  double median_abs_error = 0;  // median of |predicted / measured - 1|
  double max_abs_error = 0;
  double within_20_percent = 0;  // share of points with |error| <= 0.2
  std::vector<std::string> designs;  // distinct, in first-seen order
};
ValidationSummary summarize(const std::vector<ValidationPoint>& points);

}  // namespace hdlab::gui_core
