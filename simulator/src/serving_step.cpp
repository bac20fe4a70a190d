// Engine steps timed by the cost model: serving.hpp's StepCoster (the split of a step into
// dense ops, attention and head is explained there).
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "hdlab/simulator/cost_model.hpp"
#include "hdlab/simulator/serving.hpp"

namespace hdlab::simulator {

namespace {

using model::OpKind;

// Ops run only by the rows that sample a token: VWN's reduction to D, the final norm, the head.
bool head_op(OpKind k) { return k == OpKind::vwn_reduce || k == OpKind::final_norm || k == OpKind::lm_head; }

double op_sum(const PassTime& t, bool (*take)(OpKind)) {
  double s = 0;
  for (int k = 0; k < model::op_kind_count; ++k)
    if (take(static_cast<OpKind>(k))) s += t.op_s[static_cast<std::size_t>(k)];
  return s;
}

std::int64_t key2(std::int64_t a, std::int64_t b) { return (a << 32) ^ b; }

// Values by key, computed when missing; emptied when it reaches kMaxEntries, so that a
// long run's memory stays bounded however many distinct shapes it meets.
template <class V>
class Memo {
 public:
  template <class F>
  V get(std::int64_t key, F compute) {
    if (auto it = map_.find(key); it != map_.end()) return it->second;
    if (map_.size() >= kMaxEntries) map_.clear();
    return map_.emplace(key, compute()).first->second;
  }

 private:
  static constexpr std::size_t kMaxEntries = std::size_t{1} << 18;  // ~16 MiB of nodes
  std::unordered_map<std::int64_t, V> map_;
};

}  // namespace

struct StepCoster::Cache {
  PassCost pass;  // reused: a pass table is large, and building one allocates nothing
  PassTime time;
  Memo<std::pair<double, double>> prefill;  // by prompt tokens: rows, attention seconds
  Memo<double> dense, decode, head;
};

StepCoster::StepCoster(const CostContext& ctx) : ctx_(ctx), cache_(std::make_unique<Cache>()) {
  decode_pass(ctx.config->design.method, ctx.shape, ctx.plan, 1, 1, ctx.options, cache_->pass);
  rows_per_decode_seq_ = ctx.plan.count > 0 ? cache_->pass.groups[0].work.rows_q : 1;
  if (!(rows_per_decode_seq_ > 0)) rows_per_decode_seq_ = 1;
}

StepCoster::~StepCoster() = default;

const PassTime& StepCoster::decode_time(double seqs, std::int64_t context) {
  decode_pass(ctx_.config->design.method, ctx_.shape, ctx_.plan, seqs, context, ctx_.options, cache_->pass);
  pass_time(cache_->pass, ctx_.roofline, Timing::forward, cache_->time);
  return cache_->time;
}

std::pair<double, double> StepCoster::prefill(std::int64_t tokens) {
  if (tokens <= 0 || ctx_.plan.count == 0) return {0, 0};
  return cache_->prefill.get(tokens, [&] {
    prefill_pass(*ctx_.config, ctx_.shape, ctx_.plan, 1, tokens, ctx_.options, cache_->pass);
    pass_time(cache_->pass, ctx_.roofline, Timing::forward, cache_->time);
    return std::pair{cache_->pass.groups[0].work.rows_q, cache_->time.op_s[static_cast<std::size_t>(OpKind::attention)]};
  });
}

double StepCoster::prefill_rows(std::int64_t tokens) { return prefill(tokens).first; }
double StepCoster::prefill_attention_s(std::int64_t tokens) { return prefill(tokens).second; }

double StepCoster::dense_s(double rows) {
  if (rows <= 0) return 0;
  return cache_->dense.get(std::llround(rows * 8), [&] {  // keyed to 1/8 row: PHD's rows / K
    const PassTime& t = decode_time(rows / rows_per_decode_seq_, 1);
    const PassComm comm = pass_comm(cache_->pass, ctx_.shape, ctx_.sharding, ctx_.tp_link, ctx_.ep_link, true);
    return op_sum(t, [](OpKind k) { return k != OpKind::attention && !head_op(k); }) + comm.total();
  });
}

double StepCoster::decode_attention_s(std::int64_t seqs, std::int64_t context) {
  if (seqs <= 0) return 0;
  return cache_->decode.get(key2(seqs, context), [&] {
    return decode_time(static_cast<double>(seqs), context).op_s[static_cast<std::size_t>(OpKind::attention)];
  });
}

double StepCoster::head_s(std::int64_t rows) {
  if (rows <= 0) return 0;
  return cache_->head.get(rows, [&] { return op_sum(decode_time(static_cast<double>(rows), 1), head_op); });
}

double StepCoster::step_s(std::int64_t decode_seqs, double decode_context_sum, const std::vector<Chunk>& chunks,
                          std::int64_t sampled) {
  double rows = static_cast<double>(decode_seqs) * rows_per_decode_seq_;
  double attention = 0;
  for (const Chunk& c : chunks) {
    // Telescoping over the prompt: its chunks' rows sum to its prefill's. One attention
    // kernel per layer runs every chunk of the step: a chunk adds A(p + t) - A(max(p, 1))
    // and the step a one-token prefill's A(1) once (the kernels' fixed cost), so a prompt
    // prefilled alone costs A(L) exactly.
    rows += prefill_rows(c.done + c.tokens) - prefill_rows(c.done);
    attention += prefill_attention_s(c.done + c.tokens) - prefill_attention_s(std::max<std::int64_t>(c.done, 1));
  }
  if (!chunks.empty()) attention += prefill_attention_s(1);
  if (decode_seqs > 0) {
    const auto mean_context = std::llround(decode_context_sum / static_cast<double>(decode_seqs));
    attention += decode_attention_s(decode_seqs, mean_context);
  }
  return dense_s(rows) + attention + head_s(sampled);
}

}  // namespace hdlab::simulator
