// The op tables of each phase's pass: each group of identical layers costed once from the
// work of one run of its first layer (model/layer_work.hpp), and the ops outside the layers.
#include "hdlab/simulator/phases.hpp"

namespace hdlab::simulator {

using namespace hdlab::model;

namespace {

// Every group's work from `work_of`, then its op table from the work.
template <typename WorkOf>
void fill_groups(const ModelShape& s, const LayerPlan& plan, const PassOptions& o, WorkOf work_of, PassCost& out) {
  out.count = plan.count;
  for (int g = 0; g < plan.count; ++g) {
    LayerGroupCost& lg = out.groups[static_cast<std::size_t>(g)];
    lg.plan = plan.groups[static_cast<std::size_t>(g)];
    lg.work = work_of(lg.plan.view);
    layer_ops(s, lg.plan.sig, lg.work, o.count_executed, lg.ops);
  }
}

// A training forward or a prefill: every group's work from its mask.
void sequence_pass(const Config& c, const ModelShape& s, const LayerPlan& plan, const PassShape& p,
                   const PassOptions& o, PassCost& out) {
  fill_groups(s, plan, o, [&](const LayerView& v) { return layer_work(c, v, p, o); }, out);
  outside_ops(s, outside_work(c.design.method, p), out.outside);
}

}  // namespace

void train_forward_pass(const Config& c, const ModelShape& s, const LayerPlan& plan, double seqs, std::int64_t tokens,
                        const PassOptions& o, PassCost& out) {
  sequence_pass(c, s, plan, PassShape{PassPhase::train_forward, seqs, tokens}, o, out);
}

void prefill_pass(const Config& c, const ModelShape& s, const LayerPlan& plan, double seqs, std::int64_t tokens,
                  const PassOptions& o, PassCost& out) {
  sequence_pass(c, s, plan, PassShape{PassPhase::prefill, seqs, tokens}, o, out);
}

void decode_pass(const Method& m, const ModelShape& s, const LayerPlan& plan, double seqs,
                 std::int64_t context, const PassOptions& o, PassCost& out) {
  fill_groups(s, plan, o, [&](const LayerView& v) { return decode_work(m, v, seqs, context, o); }, out);
  outside_ops(s, outside_work(m, PassShape{PassPhase::decode, seqs, context}), out.outside);
}

double kv_cache_bytes_per_seq(const Method& m, const ModelShape& s, const LayerPlan& plan, std::int64_t context) {
  double bytes = 0;
  for (int g = 0; g < plan.count; ++g) {
    // What each of the group's caches keeps: the KV entries the next token can see, or a
    // linear layer's fixed states (model::layer_cache: the tensors its nodes write).
    const LayerView& v = plan.groups[static_cast<std::size_t>(g)].view;
    const double states = v.linear() ? model::recurrent_states(m, v.role) : 0;
    bytes += plan.groups[static_cast<std::size_t>(g)].kv_caches *
             model::layer_cache(s, v.mixer, model::kv_entries(m, v, context), states).bytes();
  }
  return bytes;
}

}  // namespace hdlab::simulator
