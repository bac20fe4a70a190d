// The serving engine loop (serving.hpp): arrivals, admission against the paged KV cache,
// steps of decode rows and prompt chunks timed by StepCoster, and the metrics.
#include <algorithm>
#include <cmath>
#include <deque>

#include <fmt/format.h>

#include "hdlab/model/error.hpp"
#include "hdlab/simulator/cost_model.hpp"
#include "serving_internal.hpp"

namespace hdlab::simulator {

namespace {

using serving_detail::ArrivalSource;
using serving_detail::Distribution;
using serving_detail::Request;

// A request inside the engine.
struct Live {
  Request r;
  double admitted_s = 0, first_token_s = 0;
  std::int64_t prefilled = 0;  // prompt tokens in the cache
  std::int64_t generated = 0;  // output tokens sampled
  double reserved_bytes = 0;   // its whole cache (prompt + output), reserved at admission
  double used_bytes = 0;       // the pages its cached tokens fill now
  std::int64_t cached() const { return prefilled + std::max<std::int64_t>(0, generated - 1); }
  bool decoding() const { return prefilled == r.input && generated > 0; }
};

// The cache a request of `tokens` cached tokens holds, in whole pages, per K/V shard.
class KvPages {
 public:
  KvPages(const CostContext& ctx, std::int64_t page) : ctx_(ctx), page_(page) {}
  double bytes(std::int64_t tokens) const {
    if (tokens <= 0) return 0;
    const std::int64_t paged = (tokens + page_ - 1) / page_ * page_;
    return kv_bytes_per_seq(ctx_, paged) / ctx_.sharding.kv_tp;
  }
  std::int64_t page() const { return page_; }

 private:
  const CostContext& ctx_;
  std::int64_t page_;
};

// The cache of a replica, in bytes of one K/V-head shard: the device memory at `util`
// less the weights, per expert-parallel rank (each serves its own requests).
double kv_capacity_bytes(const CostContext& ctx, double util) {
  return std::max(0.0, ctx.hw->memory_bytes() * util - inference_weight_bytes(ctx)) * ctx.sharding.ep;
}

class Engine {
 public:
  Engine(const CostContext& ctx, const ServeSpec& spec, ArrivalSource& source,
         const std::function<void(const RequestRecord&)>& on_request, ServeResult& out)
      : ctx_(ctx), spec_(spec), e_(spec.engine), source_(source), on_request_(on_request), out_(out),
        coster_(ctx), pages_(ctx, e_.kv_block_tokens) {
    const double util = e_.memory_utilization.value_or(ctx.scenario->kv.memory_utilization);
    out.kv_capacity_bytes = kv_capacity_bytes(ctx, util);
    step_overhead_s_ = e_.step_overhead_s.value_or(ctx.scenario->framework.decode_step_s);
  }

  void run() {
    while (true) {
      pull_arrivals();
      const std::int64_t admitted = admit();
      if (running_.empty()) {
        if (!source_.pending()) break;
        now_ = std::max(now_, source_.next_time());
        continue;
      }
      step(admitted);
    }
    finish_metrics();
  }

 private:
  void pull_arrivals() {
    while (source_.pending() && source_.next_time() <= now_) {
      Request r = source_.pop();
      if (!started_) out_.start_s = r.arrival_s;  // arrivals come in time order
      started_ = true;
      waiting_integral_ += now_ - r.arrival_s;
      waiting_.push_back(r);
    }
  }

  // First come first served; the head of the queue blocks the others.
  std::int64_t admit() {
    if (e_.batching == Batching::static_batch && !running_.empty()) return 0;
    std::int64_t admitted = 0;
    while (!waiting_.empty() && static_cast<std::int64_t>(running_.size()) < e_.max_running) {
      const Request& r = waiting_.front();
      const double need = pages_.bytes(r.input + r.output - 1);
      if (need > out_.kv_capacity_bytes)
        throw model::ConfigError(r.place, fmt::format("a request of {} input and {} output tokens needs {:.3g} GB of KV "
                                                      "cache, more than the {:.3g} GB free beside the weights",
                                                      r.input, r.output, need / 1e9, out_.kv_capacity_bytes / 1e9));
      if (!e_.chunked_prefill && e_.batching == Batching::continuous && r.input > e_.max_batched_tokens)
        throw model::ConfigError(r.place, fmt::format("a prompt of {} tokens never fits engine.max_batched_tokens ({}) "
                                                      "without chunked prefill",
                                                      r.input, e_.max_batched_tokens));
      if (reserved_ + need > out_.kv_capacity_bytes) break;
      reserved_ += need;
      running_.push_back(Live{r, now_, 0, 0, 0, need, 0});
      waiting_.pop_front();
      ++admitted;
    }
    return admitted;
  }

  void step(std::int64_t admitted);
  void advance(double end_s, const std::vector<std::size_t>& chunk_of, const std::vector<StepCoster::Chunk>& chunks);
  void finish(Live& l, double end_s);
  void sample(double dt);
  void finish_metrics();

  const CostContext& ctx_;
  const ServeSpec& spec_;
  const EngineSpec& e_;
  ArrivalSource& source_;
  const std::function<void(const RequestRecord&)>& on_request_;
  ServeResult& out_;
  StepCoster coster_;
  KvPages pages_;
  double step_overhead_s_ = 0;

  double now_ = 0;
  bool started_ = false;
  std::deque<Request> waiting_;
  std::vector<Live> running_;
  double reserved_ = 0, used_ = 0;
  double waiting_integral_ = 0, running_integral_ = 0, kv_integral_ = 0;
  double decode_rows_ = 0, prefill_tokens_ = 0;
  double decode_only_s_ = 0, decode_only_tokens_ = 0;
  std::int64_t stride_ = 1;
  std::vector<StepCoster::Chunk> chunks_;
  std::vector<std::size_t> chunk_of_;
  Distribution ttft_, tpot_, itl_, queue_, e2e_;
};

void Engine::step(std::int64_t admitted) {
  std::int64_t decode = 0;
  double context_sum = 0;
  for (const Live& l : running_)
    if (l.decoding()) {
      ++decode;
      context_sum += static_cast<double>(l.cached());
    }
  // Prompt tokens after the decode rows, in admission order, within the token budget
  // (static batching: every prompt of the batch at once).
  const bool whole = e_.batching == Batching::static_batch;
  std::int64_t budget = whole ? INT64_MAX : e_.max_batched_tokens - decode;
  chunks_.clear();
  chunk_of_.clear();
  std::int64_t sampled = decode;
  for (std::size_t i = 0; i < running_.size() && budget > 0; ++i) {
    const Live& l = running_[i];
    const std::int64_t left = l.r.input - l.prefilled;
    if (left == 0) continue;
    if (!e_.chunked_prefill && !whole && left > budget) break;
    const std::int64_t t = std::min(left, budget);
    chunks_.push_back({l.prefilled, t});
    chunk_of_.push_back(i);
    budget -= t;
    if (t == left) ++sampled;
  }
  const double dt = coster_.step_s(decode, context_sum, chunks_, sampled) + step_overhead_s_ +
                    e_.request_overhead_s * static_cast<double>(admitted);
  ++out_.steps;
  out_.busy_s += dt;
  decode_rows_ += static_cast<double>(decode);
  for (const auto& c : chunks_) prefill_tokens_ += static_cast<double>(c.tokens);
  running_integral_ += static_cast<double>(running_.size()) * dt;
  waiting_integral_ += static_cast<double>(waiting_.size()) * dt;
  out_.max_running_seen = std::max(out_.max_running_seen, static_cast<std::int64_t>(running_.size()));
  // Every decode row's previous token came at the end of the step before: its gap is dt.
  if (decode > 0) itl_.add(dt, static_cast<double>(decode));
  if (chunks_.empty()) {
    decode_only_s_ += dt;
    decode_only_tokens_ += static_cast<double>(decode);
  }
  now_ += dt;
  advance(now_, chunk_of_, chunks_);
  sample(dt);
}

void Engine::advance(double end_s, const std::vector<std::size_t>& chunk_of,
                     const std::vector<StepCoster::Chunk>& chunks) {
  for (Live& l : running_)
    if (l.decoding()) ++l.generated;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    Live& l = running_[chunk_of[c]];
    l.prefilled += chunks[c].tokens;
    if (l.prefilled == l.r.input) {
      l.generated = 1;
      l.first_token_s = end_s;
    }
  }
  for (Live& l : running_) {
    const double bytes = pages_.bytes(l.cached());
    used_ += bytes - l.used_bytes;
    l.used_bytes = bytes;
    if (l.generated == l.r.output) finish(l, end_s);
  }
  std::erase_if(running_, [](const Live& l) { return l.generated == l.r.output; });
}

void Engine::finish(Live& l, double end_s) {
  RequestRecord rec{l.r.id, l.r.input, l.r.output, l.r.arrival_s, l.admitted_s, l.first_token_s, end_s};
  reserved_ -= l.reserved_bytes;
  used_ -= l.used_bytes;
  ++out_.requests;
  out_.input_tokens += rec.input_tokens;
  out_.output_tokens += rec.output_tokens;
  out_.end_s = end_s;
  ttft_.add(rec.ttft_s());
  if (rec.output_tokens > 1) tpot_.add(rec.tpot_s());
  queue_.add(rec.queue_s());
  e2e_.add(rec.e2e_s());
  if (rec.ttft_s() <= spec_.slo.ttft_s && rec.tpot_s() <= spec_.slo.tpot_s) ++out_.slo_met;
  if (on_request_) on_request_(rec);
  source_.finished(end_s);
}

// A bounded timeline: one sample every `stride_` steps; when full, every other sample is
// dropped and the stride doubles, so the samples stay evenly spread over the run.
void Engine::sample(double dt) {
  const double fraction = out_.kv_capacity_bytes > 0 ? used_ / out_.kv_capacity_bytes : 0;
  kv_integral_ += fraction * dt;
  out_.kv_used_max = std::max(out_.kv_used_max, fraction);
  if (out_.steps % stride_ != 0) return;
  constexpr std::size_t kMaxSamples = 2048;
  if (out_.timeline.size() == kMaxSamples) {
    for (std::size_t i = 0; i < kMaxSamples / 2; ++i) out_.timeline[i] = out_.timeline[2 * i];
    out_.timeline.resize(kMaxSamples / 2);
    stride_ *= 2;
    if (out_.steps % stride_ != 0) return;
  }
  out_.timeline.push_back({now_, fraction, out_.kv_capacity_bytes > 0 ? reserved_ / out_.kv_capacity_bytes : 0,
                           static_cast<std::int64_t>(running_.size()), static_cast<std::int64_t>(waiting_.size())});
}

void Engine::finish_metrics() {
  const double d = out_.duration_s();
  const double steps = static_cast<double>(std::max<std::int64_t>(1, out_.steps));
  if (d > 0) {
    out_.requests_per_s = static_cast<double>(out_.requests) / d;
    out_.output_tokens_per_s = static_cast<double>(out_.output_tokens) / d;
    out_.input_tokens_per_s = static_cast<double>(out_.input_tokens) / d;
    out_.output_tokens_per_s_per_gpu = out_.output_tokens_per_s / static_cast<double>(out_.devices);
    out_.mean_running = running_integral_ / d;
    out_.mean_waiting = waiting_integral_ / d;
    out_.kv_used_mean = kv_integral_ / d;
    out_.goodput_requests_per_s = static_cast<double>(out_.slo_met) / d;
  }
  out_.mean_step_s = out_.busy_s / steps;
  if (decode_only_s_ > 0) out_.decode_tokens_per_s = decode_only_tokens_ / decode_only_s_;
  out_.mean_decode_rows = decode_rows_ / steps;
  out_.mean_prefill_tokens = prefill_tokens_ / steps;
  out_.ttft_s = ttft_.summary();
  out_.tpot_s = tpot_.summary();
  out_.itl_s = itl_.summary();
  out_.queue_s = queue_.summary();
  out_.e2e_s = e2e_.summary();
  out_.slo = spec_.slo;
}

}  // namespace

ServeResult simulate_serving(const model::Config& c, const HardwareProfile& hw, const Scenario& s, const ServeSpec& spec,
                             const std::function<void(const RequestRecord&)>& on_request, const std::string& trace_text,
                             const std::string& trace_name) {
  check_serve_spec(spec);
  CostContext ctx;
  make_context(c, hw, s, ctx);
  ServeResult out;
  out.devices = s.parallel.tp * s.parallel.ep;
  ArrivalSource source(spec.workload, trace_text, trace_name);
  Engine engine(ctx, spec, source, on_request, out);
  engine.run();
  return out;
}

StaticBatch static_batch(const model::Config& c, const HardwareProfile& hw, const Scenario& s, std::int64_t batch,
                         std::int64_t input, std::int64_t output) {
  CostContext ctx;
  make_context(c, hw, s, ctx);
  StepCoster coster(ctx);
  const double overhead = s.framework.decode_step_s;
  const std::vector<StepCoster::Chunk> prompts(static_cast<std::size_t>(batch), StepCoster::Chunk{0, input});
  StaticBatch out;
  out.prefill_s = coster.step_s(0, 0, prompts, batch) + overhead;
  out.total_s = out.prefill_s;
  const auto b = static_cast<double>(batch);
  for (std::int64_t j = 0; j + 1 < output; ++j)
    out.total_s += coster.step_s(batch, b * static_cast<double>(input + j), {}, batch) + overhead;
  const double capacity = kv_capacity_bytes(ctx, s.kv.memory_utilization);
  const double per_request = KvPages(ctx, EngineSpec{}.kv_block_tokens).bytes(input + output - 1);
  out.fitting = per_request > 0 ? std::min(batch, static_cast<std::int64_t>(capacity / per_request)) : batch;
  return out;
}

}  // namespace hdlab::simulator
