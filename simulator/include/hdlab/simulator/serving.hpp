#pragma once
// Serving as it is measured: one serving instance (a model replica of tp x ep devices)
// runs an engine over a stream of requests, and every engine step is timed by the cost
// model (cost_model.hpp). `hdlab serve` is its front end.
//
// Workload: requests arrive as
//   static   `requests` requests at t = 0 (with static batching: a batch run to completion)
//   closed   `users` users, each sending its next request `think_s` after its last one
//            finished, until `requests` have been sent
//   poisson  an open stream at `rate_per_s`, exponential gaps, `requests` in all
//   trace    a CSV file of arrival_s,input_tokens,output_tokens rows (arrivals in order)
// with input and output lengths each fixed, cycled from a list, uniform over [min, max],
// or log-normal (median, sigma; clamped to [min, max]), drawn from one seeded generator.
//
// Engine (continuous batching, as vLLM, SGLang and TensorRT-LLM's in-flight batching run):
//  - admission, first come first served: a waiting request joins when fewer than
//    max_running run and its whole KV cache (prompt + output, in pages of
//    kv_block_tokens) fits beside the running ones' reservations (TensorRT-LLM's
//    "guaranteed no evict": nothing is ever preempted); the head of the queue blocks the
//    rest. The cache holds the device memory times memory_utilization less the weights.
//  - each step carries one decode row for every running request past its prompt, then
//    prompt tokens up to max_batched_tokens in all (decode rows count one each): with
//    chunked prefill a prompt is cut into chunks, without it a prompt waits until it fits
//    whole. Static batching admits only into an empty engine and prefills every prompt of
//    the batch in its first step.
//  - the step that finishes a prompt samples the request's first token; each decode row
//    samples one more. A request leaves with its last output token.
//
// Step time (StepCoster): the cost model's ops split by what they depend on, so a mixed
// step costs what one launch of each op over all its rows costs:
//   step = dense(rows) + decode attention(D rows at their mean context)
//        + prefill attention(the chunks) + head(sampled rows)
//        + engine.step_overhead_s + engine.request_overhead_s x requests admitted
//   dense(rows): every op but attention and the head (embedding, norms, projections, FFN
//     or experts, residuals, VWN's connections, a looped model's passes) and the TP/EP
//     collectives, costed as a decode pass over rows / (rows per decode sequence)
//     sequences: GEMMs see M = all the step's rows at once; a prompt's rows telescope,
//     rows(p + t) - rows(p) for a chunk [p, p + t), so its chunks sum to its prefill's
//     (HD's n per token, PHD's hidden copies of the last token);
//   prefill attention: with A(L) the attention op of a whole prefill of L tokens, one
//     kernel per layer over every chunk of the step: A(p + t) - A(max(p, 1)) a chunk plus
//     A(1) once (the kernels' fixed cost), so a prompt prefilled alone costs A(L);
//   decode attention: the design's decode pass at D sequences and the batch's mean
//     context (HD's n rows, PHD's K rows and origin-only cache, a looped model's passes).
// A single request therefore costs its prefill plus one decode step per output token
// after the first, as `hdlab cost` prices them.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/model/design.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::simulator {

// How many tokens a prompt or an output has.
enum class LengthKind { fixed, list, uniform, lognormal };
struct LengthSpec {
  LengthKind kind = LengthKind::fixed;
  std::int64_t value = 1;                // fixed
  std::vector<std::int64_t> values;      // list: taken in order, cycling
  std::int64_t min = 1, max = 1;         // uniform; lognormal's clamp
  double median = 1, sigma = 0;          // lognormal
  bool operator==(const LengthSpec&) const = default;
};

inline LengthSpec fixed_length(std::int64_t tokens) {
  LengthSpec s;
  s.value = tokens;
  return s;
}

enum class ArrivalKind { static_batch, closed, poisson, trace };
const char* to_string(ArrivalKind a);

struct Workload {
  ArrivalKind arrivals = ArrivalKind::static_batch;
  std::int64_t requests = 1;   // in all (trace: its rows)
  std::int64_t users = 1;      // closed loop
  double think_s = 0;          // closed loop
  double rate_per_s = 0;       // poisson
  LengthSpec input = fixed_length(1024), output = fixed_length(128);
  std::uint64_t seed = 1;
  std::string trace;           // trace: the CSV path (relative ones resolved by the caller)
  bool operator==(const Workload&) const = default;
};

enum class Batching { continuous, static_batch };

struct EngineSpec {
  Batching batching = Batching::continuous;
  std::int64_t max_running = 256;          // requests in the engine at once
  std::int64_t max_batched_tokens = 8192;  // tokens per step (decode rows + prompt tokens)
  bool chunked_prefill = true;
  std::int64_t kv_block_tokens = 16;       // page size of the KV cache
  // Share of device memory for weights and cache; unset: the scenario's kv.memory_utilization.
  std::optional<double> memory_utilization;
  // Engine time per step outside the kernels (scheduling, sampling); unset: the scenario's
  // framework.decode_step_s (0 unless given: hdlab does not guess an engine's overhead).
  std::optional<double> step_overhead_s;
  double request_overhead_s = 0;           // per request, in the step that admits it
  bool operator==(const EngineSpec&) const = default;
};

// Goodput counts the requests meeting both bounds (unset: no bound).
struct Slo {
  double ttft_s = std::numeric_limits<double>::infinity();
  double tpot_s = std::numeric_limits<double>::infinity();
  bool operator==(const Slo&) const = default;
};

struct ServeSpec {
  Workload workload;
  EngineSpec engine;
  Slo slo;
  bool operator==(const ServeSpec&) const = default;
};

// {"workload": {"arrivals": "static"|"closed"|"poisson"|"trace", "requests", "users",
//               "think_s", "rate_per_s", "trace", "seed",
//               "input_tokens", "output_tokens": N | {"distribution": "fixed", "value"}
//                 | {"distribution": "list", "values": [...]}
//                 | {"distribution": "uniform", "min", "max"}
//                 | {"distribution": "lognormal", "median", "sigma", "min", "max"}},
//  "engine": {"batching": "continuous"|"static", "max_running", "max_batched_tokens",
//             "chunked_prefill", "kv_block_tokens", "memory_utilization",
//             "step_overhead_s", "request_overhead_s"},
//  "slo": {"ttft_s", "tpot_s"}}
// Every key optional; errors are ConfigErrors naming the JSON pointer under `pointer`.
ServeSpec parse_serve_spec(const nlohmann::json& j, const std::string& pointer = "");
// The ranges parse_serve_spec enforces, for a spec built in code (simulate_serving calls it).
void check_serve_spec(const ServeSpec& s, const std::string& pointer = "");
nlohmann::json to_json(const ServeSpec& s);

// One finished request.
struct RequestRecord {
  std::int64_t id = 0;
  std::int64_t input_tokens = 0, output_tokens = 0;
  double arrival_s = 0, admitted_s = 0, first_token_s = 0, finish_s = 0;
  double queue_s() const { return admitted_s - arrival_s; }
  double ttft_s() const { return first_token_s - arrival_s; }
  double e2e_s() const { return finish_s - arrival_s; }
  // Mean time per output token after the first (0 for a single output token).
  double tpot_s() const { return output_tokens > 1 ? (finish_s - first_token_s) / static_cast<double>(output_tokens - 1) : 0; }
};

// A distribution's summary: exact count, mean, min, max; percentiles from a log-spaced
// histogram of 0.1% resolution (memory fixed, whatever the number of samples).
struct Percentiles {
  std::int64_t count = 0;
  double mean = 0, min = 0, max = 0, p50 = 0, p90 = 0, p99 = 0;
  // The empirical CDF as (value, fraction <= value) points, at most ~200 (for plots).
  std::vector<std::pair<double, double>> cdf;
};

// The engine's state after a step (a bounded, evenly thinned series over the run).
struct EngineSample {
  double time_s = 0;
  double kv_used_fraction = 0;      // cache pages holding tokens / pages the cache has
  double kv_reserved_fraction = 0;  // pages reserved by running requests / pages
  std::int64_t running = 0, waiting = 0;
};

struct ServeResult {
  std::int64_t devices = 1;               // tp x ep of the replica
  // The cache, in bytes of one K/V-head shard (a request's cache splits over min(tp, G)
  // devices): (memory x utilisation - weights) per device, x ep (each expert-parallel rank
  // serves its own requests).
  double kv_capacity_bytes = 0;
  std::int64_t requests = 0;
  std::int64_t input_tokens = 0, output_tokens = 0;
  std::int64_t steps = 0;
  double start_s = 0, end_s = 0;          // first arrival, last finish
  double duration_s() const { return end_s - start_s; }
  double busy_s = 0;                      // time inside steps
  double requests_per_s = 0, output_tokens_per_s = 0, input_tokens_per_s = 0;
  double output_tokens_per_s_per_gpu = 0;
  // Tokens the decode-only steps (no prompt chunk in them) sampled, over their time: the
  // decode throughput serving studies compare (0 when no step only decoded).
  double decode_tokens_per_s = 0;
  double mean_running = 0, mean_waiting = 0;  // time averages over [start, end]
  double mean_step_s = 0, mean_decode_rows = 0, mean_prefill_tokens = 0;  // per step
  std::int64_t max_running_seen = 0;
  double kv_used_mean = 0, kv_used_max = 0;   // fractions, time-averaged / peak
  Percentiles ttft_s, tpot_s, itl_s, queue_s, e2e_s;
  Slo slo;
  std::int64_t slo_met = 0;
  double goodput_requests_per_s = 0;
  std::vector<EngineSample> timeline;
};

struct CostContext;
struct PassTime;

// Times engine steps with the cost model (see the header comment); memoised, so a run of
// many steps evaluates each distinct shape once. Keeps a reference to `ctx`.
class StepCoster {
 public:
  explicit StepCoster(const CostContext& ctx);
  ~StepCoster();
  StepCoster(const StepCoster&) = delete;
  StepCoster& operator=(const StepCoster&) = delete;

  struct Chunk {
    std::int64_t done = 0;    // prompt tokens already prefilled (p)
    std::int64_t tokens = 0;  // prefilled in this step (t)
  };
  // One step: `decode_seqs` decode rows at `decode_context_sum` cached tokens in all, the
  // prompt chunks, and `sampled` rows through the head. Seconds, without engine overhead.
  double step_s(std::int64_t decode_seqs, double decode_context_sum, const std::vector<Chunk>& chunks,
                std::int64_t sampled);

  double prefill_rows(std::int64_t tokens);           // rows one prompt of `tokens` runs
  double prefill_attention_s(std::int64_t tokens);    // A(L)
  double dense_s(double rows);
  double decode_attention_s(std::int64_t seqs, std::int64_t context);
  double head_s(std::int64_t rows);
  double rows_per_decode_seq() const { return rows_per_decode_seq_; }

 private:
  struct Cache;
  std::pair<double, double> prefill(std::int64_t tokens);  // rows, A(L)
  const PassTime& decode_time(double seqs, std::int64_t context);
  const CostContext& ctx_;
  double rows_per_decode_seq_ = 1;
  std::unique_ptr<Cache> cache_;
};

// Runs the workload on one serving instance of `c` on `hw` (the scenario's parallel
// layout, precision, attention and framework settings). `on_request`, when given,
// receives each request as it finishes (so records need not be kept). `trace_text` is
// the trace file's contents for a trace workload (`trace_name` names it in errors).
// ConfigError on bad input: an unknown or malformed trace row (naming the file, row and
// column), a request whose KV cache can never fit, a prompt longer than the token budget
// without chunked prefill.
ServeResult simulate_serving(const model::Config& c, const HardwareProfile& hw, const Scenario& s,
                             const ServeSpec& spec, const std::function<void(const RequestRecord&)>& on_request = {},
                             const std::string& trace_text = "", const std::string& trace_name = "");

nlohmann::json to_json(const ServeResult& r);

// A static batch in closed form: `batch` prompts of `input` tokens prefilled in one step,
// then output - 1 decode steps at the batch's context (the same StepCoster and the
// scenario's framework.decode_step_s a step), whether or not their KV cache fits;
// `fitting` says how many of the requests the cache holds at once (the engine would run
// the batch in waves of that many). ConfigError on a bad scenario.
struct StaticBatch {
  double prefill_s = 0;  // the prefill step: every request's first token
  double total_s = 0;    // the whole batch
  std::int64_t fitting = 0;
};
StaticBatch static_batch(const model::Config& c, const HardwareProfile& hw, const Scenario& s, std::int64_t batch,
                         std::int64_t input, std::int64_t output);

// Sweep columns (sweep.hpp's "serve" part; names carry units as evaluate.hpp's do) and one
// row of values in that order: throughput (requests, output, output per GPU, input,
// decode-only and goodput rates; share meeting the SLO), TTFT/TPOT/ITL/E2E/queue
// latencies, and the engine (duration, busy time, mean step, steps, mean and peak running
// requests, mean and peak KV use, KV capacity in bytes of one K/V-head shard).
std::vector<std::string> serve_metric_columns();
void serve_metric_row(const ServeResult& r, std::vector<double>& row);

}  // namespace hdlab::simulator
