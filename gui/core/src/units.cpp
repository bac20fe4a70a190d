#include "hdlab/gui_core/units.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>

namespace hdlab::gui_core {
namespace {

// Three significant digits without exponent notation for 1 <= |x| < 1000.
std::string three_digits(double x) {
  char buf[64];
  const double a = std::fabs(x);
  if (a >= 100 || a == 0) std::snprintf(buf, sizeof buf, "%.0f", x);
  else if (a >= 10) std::snprintf(buf, sizeof buf, "%.1f", x);
  else std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string format_count(std::int64_t value) {
  const bool negative = value < 0;
  // Work on the magnitude as unsigned so INT64_MIN does not overflow.
  std::uint64_t mag = negative ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  std::string digits = std::to_string(mag);
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[static_cast<std::size_t>(i)];
  }
  return negative ? "-" + out : out;
}

std::string format_si(double value, const std::string& unit) {
  if (!std::isfinite(value)) return (std::isnan(value) ? "n/a " : (value > 0 ? "inf " : "-inf ")) + unit;
  static constexpr struct {
    double scale;
    const char* prefix;
  } prefixes[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}};
  const double a = std::fabs(value);
  if (a == 0) return "0 " + unit;
  // Symbol units take the prefix glued on (GB, TFLOP); word units get it apart (k tokens/s).
  const bool symbol = unit == "s" || unit == "B" || unit == "FLOP" || unit == "FLOP/s" || unit == "B/s";
  auto with = [&](double scaled, const char* prefix) {
    std::string p = prefix;
    if (p.empty()) return three_digits(scaled) + " " + unit;
    return three_digits(scaled) + " " + p + (symbol ? "" : " ") + unit;
  };
  for (const auto& p : prefixes) {
    // Compare against the rounded value so 999.96 becomes "1.00 k" rather than "1000".
    if (a >= p.scale * 0.9995) return with(value / p.scale, p.prefix);
  }
  if (a >= 1e-3 * 0.9995) return with(value * 1e3, "m");
  if (a >= 1e-6 * 0.9995) return with(value * 1e6, "u");
  return with(value * 1e9, "n");
}

std::string format_seconds(double seconds) {
  if (std::isfinite(seconds) && std::fabs(seconds) >= 3600 * 0.9995) return three_digits(seconds / 3600) + " h";
  if (std::isfinite(seconds) && std::fabs(seconds) >= 60 * 0.9995 && std::fabs(seconds) < 3600 * 0.9995)
    return three_digits(seconds / 60) + " min";
  return format_si(seconds, "s");
}

std::string format_bytes(double bytes) { return format_si(bytes, "B"); }

std::string format_params(double params) {
  if (std::fabs(params) >= 1e9 * 0.9995) return three_digits(params / 1e9) + " B params";
  if (std::fabs(params) >= 1e6 * 0.9995) return three_digits(params / 1e6) + " M params";
  return format_count(static_cast<std::int64_t>(std::llround(params))) + " params";
}

std::string format_ratio(double ratio) {
  if (!std::isfinite(ratio)) return "n/a";
  return three_digits(ratio) + "x";
}

std::string format_metric(simulator::Metric m, double value) {
  const std::string unit = simulator::metric_unit(m);
  if (unit == "s") return format_seconds(value);
  if (unit == "B") return format_bytes(value);
  if (unit == "params") return format_params(value);
  if (unit == "seqs") return format_count(static_cast<std::int64_t>(std::floor(value))) + " seqs";
  if (unit == "1") {
    const std::string name = simulator::metric_name(m);
    if (ends_with(name, "_fits")) return value != 0 ? "yes" : "no";
    if (ends_with(name, "_fraction")) return three_digits(value * 100) + " %";
    return format_ratio(value);
  }
  return format_si(value, unit);
}

std::string unit_of_column(const std::string& column) {
  static constexpr struct {
    const char* suffix;
    const char* unit;
  } suffixes[] = {{"_tokens_per_s", "tokens/s"}, {"_s", "s"}, {"_bytes", "B"}, {"_flops", "FLOP"},
                  {"_params", "params"},     {"_seqs", "seqs"}, {"_ratio", "1"}, {"_fraction", "1"},
                  {"_fits", "1"}};
  for (const auto& s : suffixes)
    if (ends_with(column, s.suffix)) return s.unit;
  return "";
}

}  // namespace hdlab::gui_core
