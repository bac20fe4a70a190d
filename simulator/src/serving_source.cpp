// Request arrivals (generated or read from a trace) and latency distributions of the
// serving simulation (serving_internal.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "hdlab/model/error.hpp"
#include "serving_internal.hpp"

namespace hdlab::simulator::serving_detail {

namespace {

constexpr std::int64_t kMaxTraceTokens = std::int64_t{1} << 24;  // as the workload's lengths
constexpr const char* kTraceHeader = "arrival_s,input_tokens,output_tokens";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

ArrivalSource::ArrivalSource(const Workload& w, const std::string& trace_text, const std::string& trace_name)
    : w_(w), rng_(w.seed), text_(trace_text), name_(trace_name) {
  switch (w.arrivals) {
    case ArrivalKind::static_batch: break;
    case ArrivalKind::poisson: poisson_t_ = std::exponential_distribution<double>(w.rate_per_s)(rng_); break;
    case ArrivalKind::closed:
      for (std::int64_t u = 0; u < std::min(w.users, w.requests); ++u) closed_.push(0.0);
      break;
    case ArrivalKind::trace: {
      // The header names the columns, so a file of another layout is caught at its top.
      std::size_t end = text_.find('\n');
      const std::string_view header = trim(text_.substr(0, end));
      if (header != kTraceHeader)
        throw model::ConfigError(name_ + ":1", fmt::format("the header must be \"{}\", got \"{}\"", kTraceHeader,
                                                           std::string(header.substr(0, 80))));
      offset_ = end == std::string_view::npos ? text_.size() : end + 1;
      line_ = 1;
      if (!read_trace_row())
        throw model::ConfigError(name_, "has no requests: a trace needs at least one row of arrival_s,input_tokens,output_tokens");
      break;
    }
  }
}

bool ArrivalSource::pending() const {
  switch (w_.arrivals) {
    case ArrivalKind::static_batch:
    case ArrivalKind::poisson: return sent_ < w_.requests;
    case ArrivalKind::closed: return !closed_.empty();
    case ArrivalKind::trace: return have_row_;
  }
  return false;
}

double ArrivalSource::next_time() const {
  switch (w_.arrivals) {
    case ArrivalKind::static_batch: return 0;
    case ArrivalKind::poisson: return poisson_t_;
    case ArrivalKind::closed: return closed_.top();
    case ArrivalKind::trace: return row_.arrival_s;
  }
  return 0;
}

Request ArrivalSource::pop() {
  switch (w_.arrivals) {
    case ArrivalKind::static_batch: return make(0);
    case ArrivalKind::poisson: {
      Request r = make(poisson_t_);
      poisson_t_ += std::exponential_distribution<double>(w_.rate_per_s)(rng_);
      return r;
    }
    case ArrivalKind::closed: {
      const double t = closed_.top();
      closed_.pop();
      return make(t);
    }
    case ArrivalKind::trace: {
      Request r = row_;
      r.id = sent_++;
      read_trace_row();
      return r;
    }
  }
  return {};
}

void ArrivalSource::finished(double t) {
  if (w_.arrivals != ArrivalKind::closed) return;
  if (sent_ + static_cast<std::int64_t>(closed_.size()) < w_.requests) closed_.push(t + w_.think_s);
}

Request ArrivalSource::make(double arrival) {
  Request r;
  r.id = sent_++;
  r.arrival_s = arrival;
  r.input = draw(w_.input, input_cursor_);
  r.output = draw(w_.output, output_cursor_);
  r.place = "/workload";
  return r;
}

std::int64_t ArrivalSource::draw(const LengthSpec& s, std::size_t& cursor) {
  switch (s.kind) {
    case LengthKind::fixed: return s.value;
    case LengthKind::list: return s.values[cursor++ % s.values.size()];
    case LengthKind::uniform: return std::uniform_int_distribution<std::int64_t>(s.min, s.max)(rng_);
    case LengthKind::lognormal: {
      const double x = std::lognormal_distribution<double>(std::log(s.median), s.sigma)(rng_);
      return std::clamp(static_cast<std::int64_t>(std::llround(std::min(x, 1e18))), s.min, s.max);
    }
  }
  return 1;
}

// Reads the next non-empty row into row_; false at the end of the text.
bool ArrivalSource::read_trace_row() {
  have_row_ = false;
  while (offset_ < text_.size()) {
    const std::size_t end = std::min(text_.find('\n', offset_), text_.size());
    const std::string_view line = trim(text_.substr(offset_, end - offset_));
    offset_ = end + 1;
    ++line_;
    if (line.empty()) continue;
    const std::string place = name_ + ":" + std::to_string(line_);
    std::string_view fields[3];
    std::size_t n = 0, start = 0;
    for (std::size_t i = 0; i <= line.size(); ++i)
      if (i == line.size() || line[i] == ',') {
        if (n == 3) throw model::ConfigError(place, fmt::format("has more than the 3 columns of \"{}\"", kTraceHeader));
        fields[n++] = trim(line.substr(start, i - start));
        start = i + 1;
      }
    if (n != 3) throw model::ConfigError(place, fmt::format("has {} columns, not the 3 of \"{}\"", n, kTraceHeader));
    const double previous = row_.arrival_s;
    const auto* a = fields[0].data();
    auto [pa, ea] = std::from_chars(a, a + fields[0].size(), row_.arrival_s);
    if (ea != std::errc() || pa != a + fields[0].size() || !std::isfinite(row_.arrival_s) || row_.arrival_s < 0)
      throw model::ConfigError(place, fmt::format("column arrival_s: must be a number of seconds >= 0, got \"{}\"",
                                                  std::string(fields[0])));
    if (row_.arrival_s < previous)  // the first row compares with 0
      throw model::ConfigError(place, fmt::format("column arrival_s: {} is before the previous row's {} (rows must come "
                                                  "in arrival order)",
                                                  row_.arrival_s, previous));
    std::int64_t* tokens[2] = {&row_.input, &row_.output};
    const char* names[2] = {"input_tokens", "output_tokens"};
    for (int c = 0; c < 2; ++c) {
      const std::string_view f = fields[c + 1];
      auto [p, e] = std::from_chars(f.data(), f.data() + f.size(), *tokens[c]);
      if (e != std::errc() || p != f.data() + f.size() || *tokens[c] < 1 || *tokens[c] > kMaxTraceTokens)
        throw model::ConfigError(place, fmt::format("column {}: must be an integer from 1 to {}, got \"{}\"", names[c],
                                                    kMaxTraceTokens, std::string(f)));
    }
    row_.place = place;
    have_row_ = true;
    return true;
  }
  return false;
}

// ---- distributions ----

Distribution::Distribution()
    : h_(boost::histogram::make_histogram_with(boost::histogram::dense_storage<double>(), LogAxis(24000, 1e-7, 1e5))) {}

void Distribution::add(double seconds, double weight) {
  if (count_ == 0) min_ = max_ = seconds;
  min_ = std::min(min_, seconds);
  max_ = std::max(max_, seconds);
  ++count_;
  weight_ += weight;
  sum_ += seconds * weight;
  h_(seconds, boost::histogram::weight(weight));
}

Percentiles Distribution::summary() const {
  Percentiles p;
  p.count = count_;
  if (count_ == 0) return p;
  p.mean = sum_ / weight_;
  p.min = min_;
  p.max = max_;
  // Nearest rank: the first bin whose cumulative weight reaches q of the total; its
  // geometric centre, kept inside the exact [min, max].
  const double targets[3] = {0.5, 0.9, 0.99};
  double* outs[3] = {&p.p50, &p.p90, &p.p99};
  int next = 0;
  double cumulative = 0, next_cdf = 0;
  for (auto&& bin : boost::histogram::indexed(h_, boost::histogram::coverage::all)) {
    if (*bin <= 0) continue;
    cumulative += *bin;
    const int i = bin.index();
    const double value = i < 0 ? min_ : i >= 24000 ? max_ : std::sqrt(bin.bin().lower() * bin.bin().upper());
    const double v = std::clamp(value, min_, max_);
    const double fraction = cumulative / weight_;
    while (next < 3 && fraction >= targets[next] * (1 - 1e-12)) *outs[next++] = v;
    if (fraction >= next_cdf || fraction >= 1 - 1e-12) {
      p.cdf.emplace_back(v, std::min(1.0, fraction));
      next_cdf = fraction + 0.005;
    }
  }
  return p;
}

}  // namespace hdlab::simulator::serving_detail
