#pragma once
// Error statistics of a validation: relative errors, their median and maximum, and
// Spearman's rank correlation (does the model order the designs as the machine does?).
#include <cstddef>
#include <vector>

namespace hdlab::calibration {

// predicted / measured - 1 (measured > 0).
double relative_error(double predicted, double measured);

// Median of the values (mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> values);

// Ranks 1..n of the values, ties sharing the mean of the ranks they span
// ({10, 20, 20, 30} -> {1, 2.5, 2.5, 4}).
std::vector<double> average_ranks(const std::vector<double>& values);

// Spearman's rho: Pearson's correlation of the average ranks (so ties are handled
// exactly, not by the 1 - 6 sum d^2 / (n (n^2 - 1)) shortcut, which assumes none).
// NaN when fewer than two values, or when either list is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

struct ErrorStats {
  std::size_t count = 0;
  double median_abs = 0;  // median of |relative error|
  double max_abs = 0;
  double median_signed = 0;  // median of the signed errors: a bias shows here
};
ErrorStats error_stats(const std::vector<double>& relative_errors);

}  // namespace hdlab::calibration
