// Scenario JSON and the metric catalogue (names, units, columns).
#include <map>
#include <optional>
#include <string>

#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/evaluate.hpp"

namespace hdlab::simulator {

using model::ObjectReader;
using nlohmann::json;

namespace {

// Largest sizes a scenario may ask for: beyond them counts lose meaning (doubles stay
// exact below 2^53 pairs) and nobody runs them.
constexpr std::int64_t max_tokens = std::int64_t{1} << 24;
constexpr std::int64_t max_batch = std::int64_t{1} << 20;
constexpr std::int64_t max_devices = std::int64_t{1} << 16;
constexpr std::int64_t max_tile = 1 << 14;
constexpr std::size_t max_list = 64;
constexpr double max_overhead_s = 3600;  // an hour per iteration: beyond any framework

struct MetricInfo {
  const char* name;
  const char* unit;
};
constexpr MetricInfo kMetrics[] = {
    {"params_total", "params"},
    {"params_active", "params"},
    {"train_step_s", "s"},
    {"train_tokens_per_s", "tokens/s"},
    {"train_flops", "FLOP"},
    {"train_mfu_fraction", "1"},
    {"train_comm_s", "s"},
    {"train_memory_bytes", "B"},
    {"train_weight_bytes", "B"},
    {"train_grad_bytes", "B"},
    {"train_optimizer_bytes", "B"},
    {"train_activation_bytes", "B"},
    {"train_fits", "1"},
    {"prefill_s", "s"},
    {"prefill_tokens_per_s", "tokens/s"},
    {"prefill_flops", "FLOP"},
    {"prefill_attention_flops_exact", "FLOP"},
    {"prefill_attention_flops_executed", "FLOP"},
    {"decode_step_s", "s"},
    {"decode_tokens_per_s", "tokens/s"},
    {"decode_flops", "FLOP"},
    {"decode_bytes", "B"},
    {"decode_weight_bytes", "B"},
    {"decode_kv_read_bytes", "B"},
    {"decode_comm_s", "s"},
    {"decode_vs_baseline_ratio", "1"},
    {"kv_bytes_per_seq", "B"},
    {"kv_bytes", "B"},
    {"inference_weight_bytes", "B"},
    {"max_batch_seqs", "seqs"},
};
static_assert(sizeof(kMetrics) / sizeof(kMetrics[0]) == metric_count, "one entry per Metric");

std::vector<std::int64_t> int_list(ObjectReader& r, const char* key, std::vector<std::int64_t> dflt,
                                   std::int64_t max) {
  const json* v = r.find(key);
  if (!v) return dflt;
  if (!v->is_array() || v->empty() || v->size() > max_list)
    model::fail(r.at(key), "must be a list of 1 to " + std::to_string(max_list) + " positive integers");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v->size(); ++i)
    out.push_back(model::read_integer((*v)[i], model::pointer_join(r.at(key), i), 1, max));
  return out;
}

void parse_train(ObjectReader r, TrainScenario& t) {
  t.seq_len = r.integer("seq_len", t.seq_len, 1, max_tokens);
  t.micro_batch = r.integer("micro_batch", t.micro_batch, 1, max_batch);
  t.grad_accum = r.integer("grad_accum", t.grad_accum, 1, max_batch);
  t.recompute = r.choice<Recompute>(
      "recompute", {{"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}},
      t.recompute);
  t.sharding = r.choice<OptimizerSharding>("optimizer_sharding",
                                           {{"none", OptimizerSharding::none},
                                            {"optimizer", OptimizerSharding::optimizer},
                                            {"gradients", OptimizerSharding::gradients},
                                            {"weights", OptimizerSharding::weights}},
                                           t.sharding);
  // The stage number as DeepSpeed writes it, for the same setting: 0 none ... 3 weights.
  if (r.has("zero_stage")) {
    if (r.has("optimizer_sharding"))
      model::fail(r.at("zero_stage"), "gives the same setting as optimizer_sharding: give one of them");
    constexpr OptimizerSharding stages[] = {OptimizerSharding::none, OptimizerSharding::optimizer,
                                            OptimizerSharding::gradients, OptimizerSharding::weights};
    const std::int64_t stage = r.integer("zero_stage", 0, 0, 3);
    t.sharding = stages[stage];
  }
  t.vwn_eta = r.number("vwn_eta", t.vwn_eta, 0.0, 1.0);
  t.overlap_dp_comm = r.boolean("overlap_dp_comm", t.overlap_dp_comm);
  t.overlap_weight_gather = r.boolean("overlap_weight_gather", t.overlap_weight_gather);
  t.overlap_tp_comm = r.boolean("overlap_tp_comm", t.overlap_tp_comm);
  t.overlap_ep_comm = r.boolean("overlap_ep_comm", t.overlap_ep_comm);
  t.grad_accumulation = r.choice<GradAccumulation>(
      "grad_accumulation",
      {{"fused", GradAccumulation::fused}, {"separate", GradAccumulation::separate}, {"autocast", GradAccumulation::autocast}},
      t.grad_accumulation);
  for (auto [key, p] : {std::pair{"hidden_dropout", &t.hidden_dropout}, std::pair{"attention_dropout", &t.attention_dropout}}) {
    *p = r.number(key, *p, 0.0, 1.0);
    if (*p >= 1) model::fail(r.at(key), "must be < 1: a dropout probability of 1 drops everything");
  }
  r.finish();
}

void parse_attention(ObjectReader r, AttentionScenario& a) {
  const std::string layout = r.string("layout", "auto");
  if (layout == "auto") a.layout.reset();
  else if (layout == "interleaved") a.layout = model::Layout::interleaved;
  else if (layout == "stream_major") a.layout = model::Layout::stream_major;
  else if (layout == "phd_split") a.layout = model::Layout::phd_split;
  else
    model::fail(r.at("layout"), "must be one of auto, interleaved, stream_major, phd_split, got \"" + layout + "\"");
  a.tile_q = r.integer("tile_q", a.tile_q, 1, max_tile);
  a.tile_k = r.integer("tile_k", a.tile_k, 1, max_tile);
  a.count = r.choice<AttentionCount>("count", {{"executed", AttentionCount::executed}, {"exact", AttentionCount::exact}},
                                     a.count);
  a.kernel = r.choice<AttentionKernel>("kernel", {{"fused", AttentionKernel::fused}, {"unfused", AttentionKernel::unfused}},
                                       a.kernel);
  a.decode_kernel = r.choice<DecodeKernel>(
      "decode_kernel", {{"auto", DecodeKernel::automatic}, {"one_row", DecodeKernel::one_row}}, a.decode_kernel);
  r.finish();
}

const std::map<std::string, model::DType> kDTypes{
    {"bf16", model::DType::bf16}, {"fp16", model::DType::fp16}, {"fp32", model::DType::fp32}, {"fp8", model::DType::fp8}};

// A tensor class's dtype: one of kDTypes, or "model" (unset: the backbone's dtype).
std::optional<model::DType> class_dtype(ObjectReader& r, const char* key, std::optional<model::DType> fallback) {
  if (!r.has(key)) return fallback;
  const std::string name = r.string(key, std::nullopt);
  if (name == "model") return std::nullopt;
  if (auto it = kDTypes.find(name); it != kDTypes.end()) return it->second;
  model::fail(r.at(key), "must be one of model, bf16, fp16, fp32, fp8, got \"" + name + "\"");
}

void parse_precision(ObjectReader r, PrecisionScenario& p) {
  p.weights = class_dtype(r, "weights", p.weights);
  p.activations = class_dtype(r, "activations", p.activations);
  p.kv_cache = class_dtype(r, "kv_cache", p.kv_cache);
  p.compute = class_dtype(r, "compute", p.compute);
  p.communication = class_dtype(r, "communication", p.communication);
  if (r.has("optimizer_state")) {
    const auto o = class_dtype(r, "optimizer_state", p.optimizer_state);
    if (!o) model::fail(r.at("optimizer_state"), "must name a dtype (bf16, fp16, fp32, fp8): it does not follow the model's");
    p.optimizer_state = *o;
  }
  r.finish();
}

const char* class_name(std::optional<model::DType> d) { return d ? model::to_string(*d) : "model"; }

}  // namespace

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

const char* to_string(OptimizerSharding s) {
  switch (s) {
    case OptimizerSharding::none: return "none";
    case OptimizerSharding::optimizer: return "optimizer";
    case OptimizerSharding::gradients: return "gradients";
    case OptimizerSharding::weights: return "weights";
  }
  return "?";
}

const char* to_string(CpComm c) { return c == CpComm::all_gather ? "all_gather" : "ring"; }
const char* to_string(TpAllReduce a) { return a == TpAllReduce::automatic ? "auto" : "library"; }
const char* to_string(AttentionCount c) { return c == AttentionCount::executed ? "executed" : "exact"; }
const char* to_string(AttentionKernel k) { return k == AttentionKernel::fused ? "fused" : "unfused"; }
const char* to_string(DecodeKernel k) { return k == DecodeKernel::automatic ? "auto" : "one_row"; }
const char* to_string(GateUp g) { return g == GateUp::fused ? "fused" : "separate"; }
const char* to_string(GradAccumulation g) {
  switch (g) {
    case GradAccumulation::fused: return "fused";
    case GradAccumulation::separate: return "separate";
    case GradAccumulation::autocast: break;
  }
  return "autocast";
}

Scenario parse_scenario(const json& j, const std::string& pointer) {
  ObjectReader r(j, pointer);
  Scenario s;
  if (auto o = r.optional_object("train")) parse_train(*o, s.train);
  if (auto o = r.optional_object("prefill")) {
    s.prefill.tokens = o->integer("tokens", s.prefill.tokens, 1, max_tokens);
    s.prefill.batch = o->integer("batch", s.prefill.batch, 1, max_batch);
    o->finish();
  }
  if (auto o = r.optional_object("decode")) {
    s.decode.batch = o->integer("batch", s.decode.batch, 1, max_batch);
    s.decode.context = o->integer("context", s.decode.context, 0, max_tokens);
    s.decode.kv_mirror_final_only = o->boolean("kv_mirror_final_only", s.decode.kv_mirror_final_only);
    o->finish();
  }
  if (auto o = r.optional_object("serving")) {
    s.serving.batches = int_list(*o, "batches", s.serving.batches, max_batch);
    s.serving.input_lengths = int_list(*o, "input_lengths", s.serving.input_lengths, max_tokens);
    s.serving.output_tokens = o->integer("output_tokens", s.serving.output_tokens, 1, max_tokens);
    o->finish();
  }
  if (auto o = r.optional_object("kv")) {
    s.kv.context = o->integer("context", s.kv.context, 1, max_tokens);
    s.kv.memory_utilization = o->number("memory_utilization", s.kv.memory_utilization, 0.0, 1.0);
    if (s.kv.memory_utilization <= 0) model::fail(o->at("memory_utilization"), "must be > 0");
    o->finish();
  }
  if (auto o = r.optional_object("parallel")) {
    s.parallel.tp = o->integer("tp", s.parallel.tp, 1, max_devices);
    s.parallel.ep = o->integer("ep", s.parallel.ep, 1, max_devices);
    s.parallel.dp = o->integer("dp", s.parallel.dp, 1, max_devices);
    s.parallel.gpus_per_node = o->integer("gpus_per_node", s.parallel.gpus_per_node, 1, max_devices);
    if (o->has("sequence_parallel")) {
      const bool sp = o->boolean("sequence_parallel", true);
      if (sp && s.parallel.tp == 1)
        model::fail(o->at("sequence_parallel"), "needs tp > 1: with one tensor-parallel rank there is nothing to split");
      s.parallel.sequence_parallel = sp || s.parallel.tp == 1;  // tp = 1: no effect, kept at the default
    }
    s.parallel.cp = o->integer("cp", s.parallel.cp, 1, max_devices);
    if (o->has("cp_comm")) {
      if (s.parallel.cp == 1)
        model::fail(o->at("cp_comm"), "needs cp > 1: with one context-parallel rank no K/V is exchanged");
      s.parallel.cp_comm =
          o->choice<CpComm>("cp_comm", {{"all_gather", CpComm::all_gather}, {"ring", CpComm::ring}}, s.parallel.cp_comm);
    }
    if (o->has("tp_all_reduce")) {
      if (s.parallel.tp == 1)
        model::fail(o->at("tp_all_reduce"), "needs tp > 1: with one tensor-parallel rank nothing is all-reduced");
      s.parallel.tp_all_reduce = o->choice<TpAllReduce>(
          "tp_all_reduce", {{"auto", TpAllReduce::automatic}, {"library", TpAllReduce::library}},
          s.parallel.tp_all_reduce);
    }
    if (s.parallel.dp % s.parallel.ep != 0)
      model::fail(o->at("ep"), "must divide dp (" + std::to_string(s.parallel.dp) +
                                   "): expert-parallel ranks are carved out of the data-parallel ones");
    o->finish();
  }
  if (auto o = r.optional_object("attention")) parse_attention(*o, s.attention);
  if (auto o = r.optional_object("ffn")) {
    s.ffn.gate_up = o->choice<GateUp>("gate_up", {{"fused", GateUp::fused}, {"separate", GateUp::separate}}, s.ffn.gate_up);
    o->finish();
  }
  if (auto o = r.optional_object("framework")) {
    FrameworkScenario& f = s.framework;
    f.train_step_s = o->number("train_step_s", f.train_step_s, 0.0, max_overhead_s);
    f.prefill_s = o->number("prefill_s", f.prefill_s, 0.0, max_overhead_s);
    f.decode_step_s = o->number("decode_step_s", f.decode_step_s, 0.0, max_overhead_s);
    o->finish();
  }
  if (auto o = r.optional_object("precision")) parse_precision(*o, s.precision);
  r.finish();
  return s;
}

json to_json(const Scenario& s) {
  const char* layout = s.attention.layout ? model::to_string(*s.attention.layout) : "auto";
  json j = {{"train",
           {{"seq_len", s.train.seq_len},
            {"micro_batch", s.train.micro_batch},
            {"grad_accum", s.train.grad_accum},
            {"recompute", to_string(s.train.recompute)},
            {"optimizer_sharding", to_string(s.train.sharding)},
            {"vwn_eta", s.train.vwn_eta},
            {"overlap_dp_comm", s.train.overlap_dp_comm},
            {"overlap_weight_gather", s.train.overlap_weight_gather},
            {"overlap_tp_comm", s.train.overlap_tp_comm},
            {"overlap_ep_comm", s.train.overlap_ep_comm},
            {"hidden_dropout", s.train.hidden_dropout},
            {"attention_dropout", s.train.attention_dropout},
            {"grad_accumulation", to_string(s.train.grad_accumulation)}}},
          {"prefill", {{"tokens", s.prefill.tokens}, {"batch", s.prefill.batch}}},
          {"decode",
           {{"batch", s.decode.batch},
            {"context", s.decode.context},
            {"kv_mirror_final_only", s.decode.kv_mirror_final_only}}},
          {"serving",
           {{"batches", s.serving.batches},
            {"input_lengths", s.serving.input_lengths},
            {"output_tokens", s.serving.output_tokens}}},
          {"kv", {{"context", s.kv.context}, {"memory_utilization", s.kv.memory_utilization}}},
          {"parallel",
           {{"tp", s.parallel.tp}, {"ep", s.parallel.ep}, {"dp", s.parallel.dp}, {"cp", s.parallel.cp},
            {"gpus_per_node", s.parallel.gpus_per_node}}},
          {"attention",
           {{"layout", layout}, {"tile_q", s.attention.tile_q}, {"tile_k", s.attention.tile_k},
            {"count", to_string(s.attention.count)}, {"kernel", to_string(s.attention.kernel)},
            {"decode_kernel", to_string(s.attention.decode_kernel)}}},
          {"ffn", {{"gate_up", to_string(s.ffn.gate_up)}}},
          {"framework",
           {{"train_step_s", s.framework.train_step_s},
            {"prefill_s", s.framework.prefill_s},
            {"decode_step_s", s.framework.decode_step_s}}},
          {"precision",
           {{"weights", class_name(s.precision.weights)},
            {"activations", class_name(s.precision.activations)},
            {"kv_cache", class_name(s.precision.kv_cache)},
            {"compute", class_name(s.precision.compute)},
            {"communication", class_name(s.precision.communication)},
            {"optimizer_state", model::to_string(s.precision.optimizer_state)}}}};
  // Sequence parallelism means nothing at tp = 1, where the key is refused.
  if (s.parallel.tp > 1) {
    j["parallel"]["sequence_parallel"] = s.parallel.sequence_parallel;
    j["parallel"]["tp_all_reduce"] = to_string(s.parallel.tp_all_reduce);
  }
  if (s.parallel.cp > 1) j["parallel"]["cp_comm"] = to_string(s.parallel.cp_comm);  // likewise at cp = 1
  return j;
}

const char* metric_name(Metric m) { return kMetrics[static_cast<int>(m)].name; }
const char* metric_unit(Metric m) { return kMetrics[static_cast<int>(m)].unit; }

std::optional<Metric> metric_from_name(std::string_view name) {
  for (int i = 0; i < metric_count; ++i)
    if (name == kMetrics[i].name) return static_cast<Metric>(i);
  return std::nullopt;
}

namespace {
constexpr const char* kServingSuffix[] = {"tokens_per_s", "ratio", "fits"};

std::string serving_column(std::int64_t batch, std::int64_t input, const char* suffix) {
  return "serving_b" + std::to_string(batch) + "_in" + std::to_string(input) + "_" + suffix;
}

double serving_value(const ServingPoint& p, int which) {
  switch (which) {
    case 0: return p.tokens_per_s;
    case 1: return p.ratio;
    default: return p.fits ? 1.0 : 0.0;
  }
}
}  // namespace

std::vector<std::string> metric_columns(const Scenario& s) {
  std::vector<std::string> cols;
  for (const MetricInfo& m : kMetrics) cols.emplace_back(m.name);
  for (std::int64_t b : s.serving.batches)
    for (std::int64_t in : s.serving.input_lengths)
      for (const char* suffix : kServingSuffix) cols.push_back(serving_column(b, in, suffix));
  return cols;
}

void metric_row(const Metrics& m, std::vector<double>& row) {
  row.resize(static_cast<std::size_t>(metric_count) + 3 * m.serving.size());
  std::size_t i = 0;
  for (double v : m.values) row[i++] = v;
  for (const ServingPoint& p : m.serving)
    for (int k = 0; k < 3; ++k) row[i++] = serving_value(p, k);
}

double metric_value(const Metrics& m, std::string_view name) {
  if (auto id = metric_from_name(name)) return m[*id];
  for (const ServingPoint& p : m.serving)
    for (int k = 0; k < 3; ++k)
      if (name == serving_column(p.batch, p.input_tokens, kServingSuffix[k])) return serving_value(p, k);
  model::fail("", "unknown metric \"" + std::string(name) + "\"");
}

}  // namespace hdlab::simulator
