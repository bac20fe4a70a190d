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

// A linear layer's fixed state per sequence (bytes), whatever the context: the recurrent
// state plus the conv's last inputs, in the cache precision.
double state_bytes_per_state(const ModelShape& s, MixerKind mixer) {
  if (mixer == MixerKind::gated_deltanet)
    return (s.gdn.state_elements() + s.gdn.conv_state_elements()) * s.gdn.state_el_bytes;
  if (mixer == MixerKind::mamba2)
    return (s.mamba.state_elements() + s.mamba.conv_state_elements()) * s.mamba.state_el_bytes;
  return 0;
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
  double entries = 0, state_bytes = 0;
  for (int g = 0; g < plan.count; ++g) {
    const LayerGroupPlan& gp = plan.groups[static_cast<std::size_t>(g)];
    if (gp.sig.linear())  // a fixed state, whatever the context
      state_bytes += gp.kv_caches * model::recurrent_states(m, gp.view.role) * state_bytes_per_state(s, gp.sig.mixer);
    else
      entries += gp.kv_caches * model::kv_entries(m, gp.view, context);
  }
  return entries * s.kv_out * s.kv_el_bytes + state_bytes;
}

}  // namespace hdlab::simulator
