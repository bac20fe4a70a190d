// The serve simulation as sweep columns (serving.hpp: serve_metric_columns): one value
// per column, names carrying units as evaluate.hpp's metric names do.
#include <algorithm>

#include "hdlab/simulator/serving.hpp"

namespace hdlab::simulator {

namespace {

// Name and value side by side, so the two lists cannot drift apart.
struct ServeColumn {
  const char* name;
  double (*value)(const ServeResult&);
};

double count(std::int64_t n) { return static_cast<double>(n); }

constexpr ServeColumn kServeColumns[] = {
    // Throughput over the run (first arrival to last finish), per replica.
    {"serve_requests_per_s", [](const ServeResult& r) { return r.requests_per_s; }},
    {"serve_output_tokens_per_s", [](const ServeResult& r) { return r.output_tokens_per_s; }},
    {"serve_output_tokens_per_s_per_gpu", [](const ServeResult& r) { return r.output_tokens_per_s_per_gpu; }},
    {"serve_input_tokens_per_s", [](const ServeResult& r) { return r.input_tokens_per_s; }},
    // Decode-only steps' sampled tokens over their time: what serving studies compare.
    {"serve_decode_tokens_per_s", [](const ServeResult& r) { return r.decode_tokens_per_s; }},
    {"serve_goodput_requests_per_s", [](const ServeResult& r) { return r.goodput_requests_per_s; }},
    {"serve_slo_met_fraction",
     [](const ServeResult& r) { return r.requests > 0 ? count(r.slo_met) / count(r.requests) : 0.0; }},
    // Latencies per request, seconds.
    {"serve_ttft_mean_s", [](const ServeResult& r) { return r.ttft_s.mean; }},
    {"serve_ttft_p50_s", [](const ServeResult& r) { return r.ttft_s.p50; }},
    {"serve_ttft_p99_s", [](const ServeResult& r) { return r.ttft_s.p99; }},
    {"serve_tpot_mean_s", [](const ServeResult& r) { return r.tpot_s.mean; }},
    {"serve_tpot_p50_s", [](const ServeResult& r) { return r.tpot_s.p50; }},
    {"serve_tpot_p99_s", [](const ServeResult& r) { return r.tpot_s.p99; }},
    {"serve_itl_p50_s", [](const ServeResult& r) { return r.itl_s.p50; }},
    {"serve_itl_p99_s", [](const ServeResult& r) { return r.itl_s.p99; }},
    {"serve_e2e_p50_s", [](const ServeResult& r) { return r.e2e_s.p50; }},
    {"serve_e2e_p99_s", [](const ServeResult& r) { return r.e2e_s.p99; }},
    {"serve_queue_mean_s", [](const ServeResult& r) { return r.queue_s.mean; }},
    {"serve_queue_p99_s", [](const ServeResult& r) { return r.queue_s.p99; }},
    // The engine.
    {"serve_duration_s", [](const ServeResult& r) { return r.duration_s(); }},
    {"serve_busy_s", [](const ServeResult& r) { return r.busy_s; }},
    {"serve_mean_step_s", [](const ServeResult& r) { return r.mean_step_s; }},
    {"serve_steps", [](const ServeResult& r) { return count(r.steps); }},
    {"serve_mean_running_requests", [](const ServeResult& r) { return r.mean_running; }},
    {"serve_max_running_requests", [](const ServeResult& r) { return count(r.max_running_seen); }},
    {"serve_kv_used_fraction_mean", [](const ServeResult& r) { return r.kv_used_mean; }},
    {"serve_kv_used_fraction_max", [](const ServeResult& r) { return r.kv_used_max; }},
    {"serve_kv_capacity_bytes", [](const ServeResult& r) { return r.kv_capacity_bytes; }},
};

}  // namespace

std::vector<std::string> serve_metric_columns() {
  std::vector<std::string> names;
  for (const ServeColumn& c : kServeColumns) names.emplace_back(c.name);
  return names;
}

void serve_metric_row(const ServeResult& r, std::vector<double>& row) {
  row.resize(std::size(kServeColumns));
  std::transform(std::begin(kServeColumns), std::end(kServeColumns), row.begin(),
                 [&](const ServeColumn& c) { return c.value(r); });
}

}  // namespace hdlab::simulator
