#include "hdlab/simulator/report.hpp"

#include <memory>

#include "hdlab/simulator/cost_model.hpp"

namespace hdlab::simulator {

using nlohmann::json;
using model::OpKind;

namespace {

json cost_json(const model::OpCost& c) {
  return {{"flops", c.flops},
          {"weight_bytes", c.weight_bytes},
          {"act_bytes_in", c.act_bytes_in},
          {"act_bytes_out", c.act_bytes_out},
          {"kv_bytes_read", c.kv_bytes_read},
          {"kv_bytes_written", c.kv_bytes_written}};
}

json ops_json(const OpTable& table, const Roofline& rl, const LayerWork* work) {
  json out = json::array();
  for (int i = 0; i < model::op_kind_count; ++i) {
    const auto k = static_cast<OpKind>(i);
    const OpRow& r = table[static_cast<std::size_t>(i)];
    if (r.calls <= 0 && r.params <= 0) continue;
    const OpTime t = op_time(k, r, rl, work);
    json o = {{"op", model::to_string(k)}, {"class", model::to_string(model::op_class(k))}};
    o.update(cost_json(r.cost));
    o["params"] = r.params;
    o["calls"] = r.calls;
    o["time_s"] = t.seconds;
    o["bound"] = t.compute_bound ? "compute" : "memory";
    out.push_back(o);
  }
  return out;
}

json signature_json(const LayerSignature& s) {
  static constexpr const char* roles[] = {"none", "prelude", "recurrent", "coda"};
  json j = {{"attention", model::to_string(s.base_kind)},
            {"moe", s.moe},
            {"kv_from_source", s.kv_from_source},
            {"final_queries_only", s.final_queries_only},
            {"loop_role", roles[static_cast<int>(s.role)]}};
  if (s.base_window > 0) j[s.base_kind == model::AttentionKind::chunked ? "chunk" : "window"] = s.base_window;
  if (s.nope) j["nope"] = true;
  return j;
}

json pass_json(const CostContext& ctx, const PassCost& p, const PassTime& t, const PassComm& comm) {
  const model::Backbone& b = ctx.config->effective;
  const model::Method& m = ctx.config->design.method;
  json groups = json::array();
  for (int g = 0; g < p.count; ++g) {
    const LayerGroupCost& lg = p.groups[static_cast<std::size_t>(g)];
    json layers = json::array();
    for (std::int64_t l = 0; l < b.num_layers; ++l)
      if (layer_signature(b, m, l) == lg.plan.sig) layers.push_back(l);
    json sig = signature_json(lg.plan.sig);
    if (model::design_features(m).streams) sig["hd_kind"] = model::to_string(lg.plan.sig.hd_kind);
    const LayerWork& w = lg.work;
    groups.push_back({{"layers", layers},
                      {"instances", lg.plan.instances},
                      {"passes", lg.plan.passes},
                      {"kv_caches", lg.plan.kv_caches},
                      {"signature", sig},
                      {"work",
                       {{"seqs", w.seqs},
                        {"rows_q", w.rows_q},
                        {"rows_kv", w.rows_kv},
                        {"pairs_exact", w.pairs_exact},
                        {"pairs_executed", w.pairs_executed},
                        {"kv_read_entries", w.kv_read},
                        {"kv_written_entries", w.kv_written}}},
                      {"ops", ops_json(lg.ops, ctx.roofline, &lg.work)}});
  }
  json by_op = json::array();
  for (int i = 0; i < model::op_kind_count; ++i)
    if (t.op_s[static_cast<std::size_t>(i)] > 0)
      by_op.push_back({{"op", model::to_string(static_cast<OpKind>(i))},
                       {"time_s", t.op_s[static_cast<std::size_t>(i)]},
                       {"compute_bound_time_s", t.compute_bound_s[static_cast<std::size_t>(i)]}});
  return {{"seconds", t.total_s + comm.total()},
          {"ops_s", t.total_s},
          {"comm_tp_s", comm.tp_s},
          {"comm_ep_s", comm.ep_s},
          {"comm_cp_s", comm.cp_s},
          {"comm_cp_hidden_s", comm.cp_hidden_s},
          {"comm_tp_hidden_s", comm.tp_hidden_s},
          {"comm_ep_hidden_s", comm.ep_hidden_s},
          {"totals", cost_json(p.total())},
          {"attention_pairs_exact", p.attention_pairs_exact()},
          {"attention_pairs_executed", p.attention_pairs_executed()},
          {"groups", groups},
          {"outside", ops_json(p.outside, ctx.roofline, nullptr)},
          {"by_op", by_op}};
}

json train_json(const TrainResult& t) {
  return {{"step_s", t.step_s},
          {"micro_step_s", t.micro_step_s},
          {"forward_s", t.forward.total_s},
          {"recompute_s", t.recompute_s},
          {"grad_accumulation_s", t.grad_accumulation_s},
          {"weight_cast_s", t.weight_cast_s},
          {"dp_comm_s", t.dp_comm_s},
          {"exposed_dp_s", t.exposed_dp_s},
          {"zero3_gather_s", t.zero3_gather_s},
          {"exposed_zero3_s", t.exposed_zero3_s},
          {"optimizer_s", t.optimizer_s},
          {"framework_s", t.framework_s},
          {"comm_s", t.comm_s},
          {"flops", t.flops},
          {"model_flops", t.model_flops},
          {"tokens", t.tokens},
          {"memory",
           {{"weight_bytes", t.memory.weight_bytes},
            {"grad_bytes", t.memory.grad_bytes},
            {"optimizer_bytes", t.memory.optimizer_bytes},
            {"activation_bytes", t.memory.activation_bytes},
            {"total_bytes", t.memory.total()}}}};
}

json serving_json(const Metrics& m) {
  json out = json::array();
  for (const ServingPoint& p : m.serving)
    out.push_back({{"batch", p.batch},
                   {"input_tokens", p.input_tokens},
                   {"context_tokens", p.context},
                   {"tokens_per_s", p.tokens_per_s},
                   {"baseline_tokens_per_s", p.baseline_tokens_per_s},
                   {"ratio", p.ratio},
                   {"fits", p.fits}});
  return out;
}

}  // namespace

json cost_report(const model::Config& c, const HardwareProfile& hw, const Scenario& s,
                 const std::vector<std::int64_t>& kv_contexts) {
  const Metrics metrics = evaluate(c, hw, s);
  auto ctx = std::make_unique<CostContext>();
  make_context(c, hw, s, *ctx);
  auto pass = std::make_unique<PassCost>();
  json report = {{"model", c.effective.name},
                 {"design", model::describe(c.design)},
                 {"hardware", hw.name},
                 {"dtype", model::to_string(c.effective.dtype)},
                 {"scenario", to_json(s)}};
  if (s.parallel.tp > c.effective.num_kv_heads)  // check_parallel: tp is then a multiple of the KV heads
    report["kv_head_replication"] =
        "tp " + std::to_string(s.parallel.tp) + " exceeds the " + std::to_string(c.effective.num_kv_heads) +
        " KV heads: each device holds one KV head, replicated on " +
        std::to_string(s.parallel.tp / c.effective.num_kv_heads) +
        " devices (its KV cache and K/V projections are not split further)";
  json values = json::object(), units = json::object();
  for (int i = 0; i < metric_count; ++i) {
    values[metric_name(static_cast<Metric>(i))] = metrics.values[static_cast<std::size_t>(i)];
    units[metric_name(static_cast<Metric>(i))] = metric_unit(static_cast<Metric>(i));
  }
  report["metrics"] = values;
  report["metric_units"] = units;
  report["serving"] = serving_json(metrics);
  json kv = json::array();
  for (std::int64_t context : kv_contexts)
    kv.push_back({{"context_tokens", context},
                  {"kv_bytes_per_seq", kv_bytes_per_seq(*ctx, context)},
                  {"max_batch_seqs", max_batch(*ctx, context)}});
  report["kv_vs_context"] = kv;

  json phases = json::object();
  TrainResult train;
  cost_train(*ctx, *pass, train);
  phases["train_forward"] = pass_json(*ctx, *pass, train.forward, train.forward_comm);
  report["train"] = train_json(train);
  InferenceResult r;
  cost_prefill(*ctx, *pass, r);
  phases["prefill"] = pass_json(*ctx, *pass, r.time, r.comm);
  cost_decode(*ctx, false, s.decode.batch, s.decode.context, *pass, r);
  phases["decode"] = pass_json(*ctx, *pass, r.time, r.comm);
  report["phases"] = phases;
  return report;
}

}  // namespace hdlab::simulator
