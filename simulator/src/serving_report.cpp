// The serving simulation's result as JSON (serving.hpp).
#include <cmath>

#include "hdlab/simulator/serving.hpp"

namespace hdlab::simulator {

namespace {

using nlohmann::json;

json percentiles_json(const Percentiles& p) {
  return {{"count", p.count}, {"mean", p.mean}, {"min", p.min}, {"p50", p.p50},
          {"p90", p.p90},     {"p99", p.p99},   {"max", p.max}};
}

}  // namespace

json to_json(const ServeResult& r) {
  json timeline = json::array();
  for (const EngineSample& s : r.timeline)
    timeline.push_back({{"time_s", s.time_s},
                        {"kv_used_fraction", s.kv_used_fraction},
                        {"kv_reserved_fraction", s.kv_reserved_fraction},
                        {"running", s.running},
                        {"waiting", s.waiting}});
  json slo = json::object();
  if (std::isfinite(r.slo.ttft_s)) slo["ttft_s"] = r.slo.ttft_s;
  if (std::isfinite(r.slo.tpot_s)) slo["tpot_s"] = r.slo.tpot_s;
  return {{"devices", r.devices},
          {"kv_capacity_bytes", r.kv_capacity_bytes},
          {"requests", r.requests},
          {"input_tokens", r.input_tokens},
          {"output_tokens", r.output_tokens},
          {"steps", r.steps},
          {"start_s", r.start_s},
          {"end_s", r.end_s},
          {"duration_s", r.duration_s()},
          {"busy_s", r.busy_s},
          {"requests_per_s", r.requests_per_s},
          {"output_tokens_per_s", r.output_tokens_per_s},
          {"output_tokens_per_s_per_gpu", r.output_tokens_per_s_per_gpu},
          {"input_tokens_per_s", r.input_tokens_per_s},
          {"decode_tokens_per_s", r.decode_tokens_per_s},
          {"mean_running_requests", r.mean_running},
          {"mean_waiting_requests", r.mean_waiting},
          {"max_running_requests", r.max_running_seen},
          {"mean_step_s", r.mean_step_s},
          {"mean_decode_rows_per_step", r.mean_decode_rows},
          {"mean_prefill_tokens_per_step", r.mean_prefill_tokens},
          {"kv_used_fraction_mean", r.kv_used_mean},
          {"kv_used_fraction_max", r.kv_used_max},
          {"ttft_s", percentiles_json(r.ttft_s)},
          {"tpot_s", percentiles_json(r.tpot_s)},
          {"itl_s", percentiles_json(r.itl_s)},
          {"queue_s", percentiles_json(r.queue_s)},
          {"e2e_s", percentiles_json(r.e2e_s)},
          {"slo", slo},
          {"slo_met_requests", r.slo_met},
          {"goodput_requests_per_s", r.goodput_requests_per_s},
          {"timeline", timeline}};
}

}  // namespace hdlab::simulator
