#pragma once
// Pieces of the serving simulation shared by its sources (not a public interface).
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <boost/histogram.hpp>

#include "hdlab/simulator/serving.hpp"

namespace hdlab::simulator::serving_detail {

struct Request {
  std::int64_t id = 0;
  double arrival_s = 0;
  std::int64_t input = 0, output = 0;
  std::string place;  // where it came from, for errors: "/workload" or "trace.csv:12"
};

// Requests in arrival order, generated on demand (memory does not grow with the total).
class ArrivalSource {
 public:
  // `trace_text`: the trace file's contents for a trace workload, named `trace_name`.
  ArrivalSource(const Workload& w, const std::string& trace_text, const std::string& trace_name);
  bool pending() const;       // another request will arrive (closed loop: or may, once one finishes)
  double next_time() const;   // its arrival; only while pending() and known
  Request pop();
  void finished(double t);    // a request finished at t (a closed-loop user sends its next)

 private:
  std::int64_t draw(const LengthSpec& s, std::size_t& cursor);
  Request make(double arrival);
  bool read_trace_row();

  const Workload& w_;
  std::mt19937_64 rng_;
  std::int64_t sent_ = 0;
  std::size_t input_cursor_ = 0, output_cursor_ = 0;
  double poisson_t_ = 0;
  std::priority_queue<double, std::vector<double>, std::greater<>> closed_;  // users' next sends
  // trace
  std::string_view text_;
  std::string name_;
  std::size_t offset_ = 0;
  std::int64_t line_ = 0;
  bool have_row_ = false;
  Request row_;
};

// A distribution of seconds: exact count, weight, mean, min and max; percentiles from a
// log-spaced Boost.Histogram of 2,000 bins a decade over [1e-7 s, 1e5 s] (0.12% wide:
// a percentile is within that of the exact one; values below the range count as the
// exact minimum).
class Distribution {
 public:
  Distribution();
  void add(double seconds, double weight = 1);
  Percentiles summary() const;

 private:
  using LogAxis = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;
  using Histogram = boost::histogram::histogram<std::tuple<LogAxis>, boost::histogram::dense_storage<double>>;
  Histogram h_;
  std::int64_t count_ = 0;
  double weight_ = 0, sum_ = 0, min_ = 0, max_ = 0;
};

}  // namespace hdlab::simulator::serving_detail
