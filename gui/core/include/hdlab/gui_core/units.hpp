#pragma once
// Numbers as the GUI shows them: every value with its unit, decimal prefixes (GB = 1e9
// bytes, as the hardware profiles count), thousands separators for exact counts.
#include <cstdint>
#include <string>

#include "hdlab/simulator/evaluate.hpp"

namespace hdlab::gui_core {

// "1,234,567" (exact integer counts: pairs, tiles, parameters).
std::string format_count(std::int64_t value);
// "3.35 ms", "812 us", "1.20 s"; 3 significant digits.
std::string format_seconds(double seconds);
// "16.1 GB", "512 kB", "96 B" (decimal prefixes).
std::string format_bytes(double bytes);
// A value with a decimal prefix and a unit: format_si(3.1e12, "FLOP") = "3.10 TFLOP".
std::string format_si(double value, const std::string& unit);
// "8.19 B params" style for parameter counts: billions / millions.
std::string format_params(double params);
// "1.53x" for dimensionless ratios.
std::string format_ratio(double ratio);
// A metric in its own unit (metric_unit): seconds, bytes, FLOPs, tokens/s, params...
std::string format_metric(simulator::Metric m, double value);
// The unit a column name carries by its suffix (metric_columns naming): "s", "B",
// "FLOP", "tokens/s", "params", "seqs", "1" (dimensionless) or "" when unknown.
std::string unit_of_column(const std::string& column);

}  // namespace hdlab::gui_core
