// Kernel-level validation (kernel_validation.hpp): statistics of the held-out cases per
// op class and precision, and their JSON and CSV. predict_kerneldb, which makes the cases
// from a profile's kernel models, lives with those models.
#include "hdlab/calibration/kernel_validation.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "hdlab/calibration/stats.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::calibration {

namespace {

// A case the statistics can use: measured and predicted times finite and positive. Any
// other is a bug in the reader or the model that made it, named by its source row.
std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

void check_case(const KernelCase& c) {
  if (!(std::isfinite(c.measured_s) && c.measured_s > 0))
    throw model::ConfigError(c.source, "measured time " + seconds_text(c.measured_s) + " is not a positive number");
  if (!(std::isfinite(c.predicted_s) && c.predicted_s > 0))
    throw model::ConfigError(c.source, c.op_class + " " + c.precision + " " + c.label + ": predicted time " +
                                           seconds_text(c.predicted_s) + " is not a positive number");
}

// The q-quantile of sorted values, interpolating linearly between the order statistics
// around rank (n - 1) q (numpy's default; of {1, 2, ..., 10} the 0.9-quantile is 9.1).
double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (rank - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

KernelClassStats class_stats(std::string op_class, std::string precision, const std::vector<const KernelCase*>& cases,
                             int worst) {
  KernelClassStats s;
  s.op_class = std::move(op_class);
  s.precision = std::move(precision);
  s.rows = static_cast<std::int64_t>(cases.size());
  if (cases.empty()) return s;
  std::vector<double> errors;
  errors.reserve(cases.size());
  for (const KernelCase* c : cases) errors.push_back(c->error());
  const ErrorStats e = error_stats(errors);
  s.median_abs_error = e.median_abs;
  s.max_abs_error = e.max_abs;
  s.median_signed_error = e.median_signed;
  for (double& v : errors) v = std::fabs(v);
  std::sort(errors.begin(), errors.end());
  s.p90_abs_error = quantile_of_sorted(errors, 0.9);
  // Largest |error| first; equal errors in source order, so the list is the same each run.
  std::vector<const KernelCase*> order = cases;
  const std::size_t keep = std::min(order.size(), static_cast<std::size_t>(std::max(worst, 0)));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    [](const KernelCase* a, const KernelCase* b) {
                      const double ea = std::fabs(a->error()), eb = std::fabs(b->error());
                      return ea != eb ? ea > eb : a->source < b->source;
                    });
  for (std::size_t i = 0; i < keep; ++i) s.worst.push_back(*order[i]);
  return s;
}

nlohmann::json case_json(const KernelCase& c) {
  return {{"op_class", c.op_class},       {"precision", c.precision},     {"label", c.label},
          {"source", c.source},           {"held_out", c.held_out},       {"measured_s", c.measured_s},
          {"predicted_s", c.predicted_s}, {"error", c.error()}};
}

nlohmann::json stats_json(const KernelClassStats& s) {
  nlohmann::json worst = nlohmann::json::array();
  for (const KernelCase& c : s.worst) worst.push_back(case_json(c));
  return {{"op_class", s.op_class},
          {"precision", s.precision},
          {"rows", s.rows},
          {"median_abs_error", s.median_abs_error},
          {"p90_abs_error", s.p90_abs_error},
          {"max_abs_error", s.max_abs_error},
          {"median_signed_error", s.median_signed_error},
          {"worst", worst}};
}

void append_csv_field(std::string& out, const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) {
    out += s;
    return;
  }
  out += '"';
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  out += '"';
}

// Shortest text that reads back as the same double.
void append_number(std::string& out, double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, ec == std::errc{} ? end : buf);
}

}  // namespace

KernelValidation summarize_kernel_cases(std::vector<KernelCase> cases, int worst) {
  KernelValidation v;
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> groups;
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    check_case(cases[i]);
    if (!cases[i].held_out) continue;
    groups[{cases[i].op_class, cases[i].precision}].push_back(i);
    all.push_back(i);
  }
  v.cases = std::move(cases);
  auto pointers = [&](const std::vector<std::size_t>& indices) {
    std::vector<const KernelCase*> out;
    out.reserve(indices.size());
    for (std::size_t i : indices) out.push_back(&v.cases[i]);
    return out;
  };
  for (const auto& [key, indices] : groups) v.classes.push_back(class_stats(key.first, key.second, pointers(indices), worst));
  v.all = class_stats("all", "all", pointers(all), worst);
  return v;
}

nlohmann::json to_json(const KernelValidation& v) {
  nlohmann::json classes = nlohmann::json::array();
  for (const KernelClassStats& s : v.classes) classes.push_back(stats_json(s));
  return {{"device", v.device},
          {"profile", v.profile},
          {"error", "relative: predicted / measured - 1 (a fraction; negative = the model is too fast); "
                    "statistics over the held-out rows only"},
          {"rows", v.cases.size()},
          {"held_out_rows", v.all.rows},
          {"all", stats_json(v.all)},
          {"classes", classes}};
}

std::string kernel_cases_csv(const KernelValidation& v) {
  std::string out = "op_class,precision,label,source,held_out,measured_s,predicted_s,error\n";
  out.reserve(out.size() + v.cases.size() * 96);
  for (const KernelCase& c : v.cases) {
    append_csv_field(out, c.op_class);
    out += ',';
    append_csv_field(out, c.precision);
    out += ',';
    append_csv_field(out, c.label);
    out += ',';
    append_csv_field(out, c.source);
    out += c.held_out ? ",1," : ",0,";
    append_number(out, c.measured_s);
    out += ',';
    append_number(out, c.predicted_s);
    out += ',';
    append_number(out, c.error());
    out += '\n';
  }
  return out;
}

}  // namespace hdlab::calibration
