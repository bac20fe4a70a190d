// The serve workload, engine and SLO as JSON (serving.hpp); every key checked.
#include <algorithm>
#include <cmath>

#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/serving.hpp"

namespace hdlab::simulator {

using nlohmann::json;

namespace {

// A request never carries more tokens than this: beyond any model's context, and it keeps
// a typo (an extra zero or ten) from sizing a KV reservation of petabytes.
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 24;  // 16,777,216
// Requests in one run: a run's memory is bounded by the requests in flight, its time by
// the total; 10^9 would already take hours.
constexpr std::int64_t kMaxRequests = 1'000'000'000;

LengthSpec parse_length(const json& j, const std::string& pointer) {
  LengthSpec s;
  if (j.is_number()) {
    s.value = model::read_integer(j, pointer, 1, kMaxTokens);
    return s;
  }
  model::ObjectReader r(j, pointer);
  s.kind = r.choice<LengthKind>("distribution",
                                {{"fixed", LengthKind::fixed},
                                 {"list", LengthKind::list},
                                 {"uniform", LengthKind::uniform},
                                 {"lognormal", LengthKind::lognormal}},
                                std::nullopt);
  switch (s.kind) {
    case LengthKind::fixed: s.value = r.integer("value", std::nullopt, 1, kMaxTokens); break;
    case LengthKind::list: {
      const json& v = r.required("values");
      if (!v.is_array() || v.empty()) model::fail(r.at("values"), "must be a non-empty array of token counts");
      if (v.size() > 1'000'000) model::fail(r.at("values"), "has more than 1,000,000 entries: use a trace file");
      for (std::size_t i = 0; i < v.size(); ++i)
        s.values.push_back(model::read_integer(v[i], model::pointer_join(r.at("values"), i), 1, kMaxTokens));
      break;
    }
    case LengthKind::uniform:
    case LengthKind::lognormal:
      if (s.kind == LengthKind::lognormal) {
        s.median = r.number("median", std::nullopt, 1, static_cast<double>(kMaxTokens));
        s.sigma = r.number("sigma", std::nullopt, 0, 4);
      }
      s.min = r.integer("min", s.kind == LengthKind::lognormal ? std::optional<std::int64_t>(1) : std::nullopt, 1, kMaxTokens);
      s.max = r.integer("max", s.kind == LengthKind::lognormal ? std::optional<std::int64_t>(kMaxTokens) : std::nullopt, 1,
                        kMaxTokens);
      if (s.max < s.min) model::fail(r.at("max"), "is below min (" + std::to_string(s.min) + ")");
      break;
  }
  r.finish();
  return s;
}

json length_json(const LengthSpec& s) {
  switch (s.kind) {
    case LengthKind::fixed: return s.value;
    case LengthKind::list: return {{"distribution", "list"}, {"values", s.values}};
    case LengthKind::uniform: return {{"distribution", "uniform"}, {"min", s.min}, {"max", s.max}};
    case LengthKind::lognormal:
      return {{"distribution", "lognormal"}, {"median", s.median}, {"sigma", s.sigma}, {"min", s.min}, {"max", s.max}};
  }
  return nullptr;
}

Workload parse_workload(model::ObjectReader r) {
  Workload w;
  w.arrivals = r.choice<ArrivalKind>("arrivals",
                                     {{"static", ArrivalKind::static_batch},
                                      {"closed", ArrivalKind::closed},
                                      {"poisson", ArrivalKind::poisson},
                                      {"trace", ArrivalKind::trace}},
                                     ArrivalKind::static_batch);
  const bool trace = w.arrivals == ArrivalKind::trace;
  if (trace) {
    w.trace = r.string("trace", std::nullopt);
    if (w.trace.empty()) model::fail(r.at("trace"), "must name a CSV file");
    for (const char* key : {"requests", "input_tokens", "output_tokens", "rate_per_s", "users"})
      if (r.has(key)) model::fail(r.at(key), "is set by the trace file's rows; leave it out");
  } else {
    if (r.has("trace")) model::fail(r.at("trace"), "needs \"arrivals\": \"trace\"");
    w.requests = r.integer("requests", 1, 1, kMaxRequests);
    if (const json* in = r.find("input_tokens")) w.input = parse_length(*in, r.at("input_tokens"));
    if (const json* out = r.find("output_tokens")) w.output = parse_length(*out, r.at("output_tokens"));
  }
  if (w.arrivals == ArrivalKind::poisson) {
    w.rate_per_s = r.number("rate_per_s", std::nullopt, 0, 1e9);
    if (!(w.rate_per_s > 0)) model::fail(r.at("rate_per_s"), "must be above 0 requests/s");
  } else if (r.has("rate_per_s")) {
    model::fail(r.at("rate_per_s"), "needs \"arrivals\": \"poisson\"");
  }
  if (w.arrivals == ArrivalKind::closed) {
    w.users = r.integer("users", std::nullopt, 1, 10'000'000);
    w.think_s = r.number("think_s", 0.0, 0, 1e9);
  } else {
    for (const char* key : {"users", "think_s"})
      if (r.has(key)) model::fail(r.at(key), "needs \"arrivals\": \"closed\"");
  }
  w.seed = static_cast<std::uint64_t>(r.integer("seed", 1, 0));
  r.finish();
  return w;
}

EngineSpec parse_engine(model::ObjectReader r) {
  EngineSpec e;
  e.batching = r.choice<Batching>("batching", {{"continuous", Batching::continuous}, {"static", Batching::static_batch}},
                                  Batching::continuous);
  e.max_running = r.integer("max_running", e.max_running, 1, 10'000'000);
  e.max_batched_tokens = r.integer("max_batched_tokens", e.max_batched_tokens, 1, kMaxTokens);
  e.chunked_prefill = r.boolean("chunked_prefill", e.chunked_prefill);
  e.kv_block_tokens = r.integer("kv_block_tokens", e.kv_block_tokens, 1, 1 << 20);
  if (r.has("memory_utilization")) {
    e.memory_utilization = r.number("memory_utilization", std::nullopt, 0, 1);
    if (!(*e.memory_utilization > 0)) model::fail(r.at("memory_utilization"), "must be above 0");
  }
  if (r.has("step_overhead_s")) e.step_overhead_s = r.number("step_overhead_s", std::nullopt, 0, 3600);
  e.request_overhead_s = r.number("request_overhead_s", 0.0, 0, 3600);
  r.finish();
  return e;
}

}  // namespace

const char* to_string(ArrivalKind a) {
  switch (a) {
    case ArrivalKind::static_batch: return "static";
    case ArrivalKind::closed: return "closed";
    case ArrivalKind::poisson: return "poisson";
    case ArrivalKind::trace: return "trace";
  }
  return "?";
}

ServeSpec parse_serve_spec(const json& j, const std::string& pointer) {
  model::ObjectReader r(j, pointer);
  ServeSpec s;
  if (auto w = r.optional_object("workload")) s.workload = parse_workload(*w);
  if (auto e = r.optional_object("engine")) s.engine = parse_engine(*e);
  if (auto o = r.optional_object("slo")) {
    s.slo.ttft_s = o->number("ttft_s", s.slo.ttft_s, 0);
    s.slo.tpot_s = o->number("tpot_s", s.slo.tpot_s, 0);
    o->finish();
  }
  r.allow({"description"});
  r.finish();
  return s;
}

void check_serve_spec(const ServeSpec& s, const std::string& pointer) {
  // The JSON form goes through the same checks as a file's, so one rule holds for both.
  parse_serve_spec(to_json(s), pointer);
}

json to_json(const ServeSpec& s) {
  const Workload& w = s.workload;
  json wl = {{"arrivals", to_string(w.arrivals)}, {"seed", w.seed}};
  if (w.arrivals == ArrivalKind::trace) {
    wl["trace"] = w.trace;
  } else {
    wl["requests"] = w.requests;
    wl["input_tokens"] = length_json(w.input);
    wl["output_tokens"] = length_json(w.output);
  }
  if (w.arrivals == ArrivalKind::poisson) wl["rate_per_s"] = w.rate_per_s;
  if (w.arrivals == ArrivalKind::closed) {
    wl["users"] = w.users;
    wl["think_s"] = w.think_s;
  }
  const EngineSpec& e = s.engine;
  json en = {{"batching", e.batching == Batching::continuous ? "continuous" : "static"},
             {"max_running", e.max_running},
             {"max_batched_tokens", e.max_batched_tokens},
             {"chunked_prefill", e.chunked_prefill},
             {"kv_block_tokens", e.kv_block_tokens},
             {"request_overhead_s", e.request_overhead_s}};
  if (e.memory_utilization) en["memory_utilization"] = *e.memory_utilization;
  if (e.step_overhead_s) en["step_overhead_s"] = *e.step_overhead_s;
  json slo = json::object();
  if (std::isfinite(s.slo.ttft_s)) slo["ttft_s"] = s.slo.ttft_s;
  if (std::isfinite(s.slo.tpot_s)) slo["tpot_s"] = s.slo.tpot_s;
  return {{"workload", wl}, {"engine", en}, {"slo", slo}};
}

}  // namespace hdlab::simulator
