#include "hdlab/calibration/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace hdlab::calibration {

double relative_error(double predicted, double measured) { return predicted / measured - 1.0; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  const std::size_t n = values.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && values[order[j + 1]] == values[order[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + j) + 1.0;  // mean of ranks i+1 .. j+1
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (a.size() != b.size() || a.size() < 2) return nan;
  const std::vector<double> ra = average_ranks(a), rb = average_ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double cov = 0, va = 0, vb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (va == 0 || vb == 0) return nan;
  return cov / std::sqrt(va * vb);
}

ErrorStats error_stats(const std::vector<double>& e) {
  ErrorStats s;
  s.count = e.size();
  if (e.empty()) return s;
  std::vector<double> abs_e;
  for (double v : e) abs_e.push_back(std::fabs(v));
  s.median_abs = median(abs_e);
  s.max_abs = *std::max_element(abs_e.begin(), abs_e.end());
  s.median_signed = median(e);
  return s;
}

}  // namespace hdlab::calibration
