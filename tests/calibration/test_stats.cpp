// Error statistics against values computed by hand, ties included.
#include <catch2/catch.hpp>

#include <cmath>

#include "hdlab/calibration/stats.hpp"

using namespace hdlab::calibration;

TEST_CASE("average ranks share ties", "[stats]") {
  CHECK(average_ranks({10, 20, 20, 30}) == std::vector<double>{1, 2.5, 2.5, 4});
  CHECK(average_ranks({3, 1, 2}) == std::vector<double>{3, 1, 2});
  CHECK(average_ranks({5, 5, 5}) == std::vector<double>{2, 2, 2});
}

TEST_CASE("Spearman's rho by hand", "[stats]") {
  CHECK(spearman({1, 2, 3, 4}, {10, 20, 30, 40}) == Approx(1.0));
  CHECK(spearman({1, 2, 3, 4}, {4, 3, 2, 1}) == Approx(-1.0));
  CHECK(spearman({1, 2, 3}, {1, 8, 27}) == Approx(1.0));  // monotone, not linear
  // Ties: ranks a = {1, 2.5, 2.5, 4}, b = {1, 3, 2, 4}; deviations from 2.5:
  // a {-1.5, 0, 0, 1.5}, b {-1.5, 0.5, -0.5, 1.5}: cov 4.5, var_a 4.5, var_b 5.
  CHECK(spearman({1, 2, 2, 3}, {1, 3, 2, 4}) == Approx(4.5 / std::sqrt(4.5 * 5.0)).epsilon(1e-12));
  // One swap among five: d^2 = 2, 1 - 6 * 2 / (5 * 24) = 0.9.
  CHECK(spearman({1, 2, 3, 4, 5}, {1, 2, 3, 5, 4}) == Approx(0.9).epsilon(1e-12));
  CHECK(std::isnan(spearman({1, 1, 1}, {1, 2, 3})));  // a constant list has no ranking
  CHECK(std::isnan(spearman({1}, {2})));
}

TEST_CASE("median and error statistics", "[stats]") {
  CHECK(median({}) == 0);
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(relative_error(1.1, 1.0) == Approx(0.1));
  const ErrorStats s = error_stats({0.1, -0.2, 0.05, -0.4});
  CHECK(s.count == 4);
  CHECK(s.median_abs == Approx(0.15));      // |e| = {0.05, 0.1, 0.2, 0.4}
  CHECK(s.max_abs == Approx(0.4));
  CHECK(s.median_signed == Approx(-0.075));  // {-0.4, -0.2, 0.05, 0.1}
}
