#include "hdlab/simulator/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "hdlab/model/json_reader.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::simulator {

using model::OpKind;

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

std::string num(std::int64_t v) { return std::to_string(v); }

void check_parallel(const model::Backbone& b, const ParallelScenario& p, const std::string& ptr) {
  if (b.num_heads % p.tp != 0)
    model::fail(ptr + "/tp", "must divide the " + num(b.num_heads) + " query heads, got " + num(p.tp));
  // K/V heads are split over the tp devices when tp divides them, and replicated when tp
  // is a multiple of them (each device holds one head, copied on tp / G devices), as
  // Megatron and vLLM do; any other tp would leave a device with part of a head.
  const std::int64_t kv_heads = b.num_kv_heads;
  if (kv_heads % p.tp != 0 && p.tp % kv_heads != 0)
    model::fail(ptr + "/tp", "must divide the " + num(kv_heads) + " KV heads or be a multiple of them (KV heads are "
                             "split over the tp devices, or replicated when tp exceeds them), got " + num(p.tp));
  if (p.ep > 1) {
    if (!b.moe) model::fail(ptr + "/ep", "expert parallelism needs an MoE backbone; " + b.name + " is dense");
    if (b.moe->num_experts % p.ep != 0)
      model::fail(ptr + "/ep", "must divide the " + num(b.moe->num_experts) + " experts, got " + num(p.ep));
  }
  if (p.dp % p.ep != 0)
    model::fail(ptr + "/ep", "must divide dp (" + num(p.dp) + "): expert-parallel ranks are data-parallel ranks");
}

// Context parallelism splits each training sequence into 2 cp chunks (evaluate.hpp).
void check_context_parallel(const Scenario& s, const HardwareProfile& hw, const std::string& ptr) {
  const ParallelScenario& p = s.parallel;
  link_for(hw, p.tp * p.cp, p.gpus_per_node, ptr);
  if (s.train.seq_len % (2 * p.cp) != 0)
    model::fail(ptr, "must split the training sequence into 2 x cp equal chunks (two per rank, balancing the causal "
                     "mask): seq_len " + num(s.train.seq_len) + " is not a multiple of " + num(2 * p.cp));
  if (s.attention.kernel == AttentionKernel::unfused)
    model::fail(ptr, "needs the fused attention kernel: context parallelism exchanges K/V between attention tiles, "
                     "which unfused attention (scenario attention.kernel) does not have");
}

}  // namespace

double gradient_ranks(const ParallelScenario& p) { return d(p.dp) * d(p.cp); }

namespace {

// One element-wise kernel streaming `bytes` on one device.
double streaming_s(const HardwareProfile& hw, double bytes) {
  if (hw.kernel_models) {
    const VectorKernel& v = hw.kernel_models->vector;
    return bytes / (v.memory_gb_per_s * 1e9) + v.latency_us * 1e-6;
  }
  return bytes / (hw.memory_bandwidth_bytes_per_s() * hw.efficiency_at(EfficiencyClass::memory, bytes)) +
         hw.launch_overhead_s();
}

}  // namespace

// Updates that read weights, gradients and the optimizer states and write weights and
// states, each in its precision; a fused update streams like any element-wise kernel.
double optimizer_update_s(const CostContext& ctx, double dense, double experts) {
  const Scenario& s = *ctx.scenario;
  const ModelShape& sh = ctx.shape;
  const double tp = d(s.parallel.tp), ep = d(s.parallel.ep), dp = gradient_ranks(s.parallel);
  const bool sharded = s.train.sharding != OptimizerSharding::none;
  const double params = dense / tp / (sharded ? dp : 1) + experts / (tp * ep) / (sharded ? dp / ep : 1);
  return streaming_s(*ctx.hw, params * (2 * sh.weight_el_bytes + sh.comm_el_bytes + 2 * sh.optimizer_bytes_per_param));
}

namespace {

// Parameters one device holds of `dense` + `experts` (every one: an accumulation buffer
// and autocast's parameters are not sharded by ZeRO stages 1-2).
double device_params(const CostContext& ctx, double dense, double experts) {
  const double tp = d(ctx.scenario->parallel.tp), ep = d(ctx.scenario->parallel.ep);
  return dense / tp + experts / (tp * ep);
}

// Bytes of a parameter in autocast's master precision: the optimizer state's where it
// differs from the weights' (a master copy), else the weights' own (nothing to cast).
double master_el_bytes(const ModelShape& sh) {
  return sh.precision.optimizer_state == sh.precision.weights ? sh.weight_el_bytes
                                                                : model::dtype_bytes(sh.precision.optimizer_state);
}

}  // namespace

// Separate: the new gradient read in the weights' precision, the buffer read and written
// in the precision the gradients are all-reduced in (Megatron-LM reduces that buffer).
// Autocast: the gradient cast to the master precision, then .grad += it (TrainScenario).
double grad_accumulation_s(const CostContext& ctx, double dense, double experts) {
  const ModelShape& sh = ctx.shape;
  const double params = device_params(ctx, dense, experts);
  if (params <= 0) return 0;
  switch (ctx.scenario->train.grad_accumulation) {
    case GradAccumulation::fused: return 0;
    case GradAccumulation::separate: return streaming_s(*ctx.hw, params * (sh.weight_el_bytes + 2 * sh.comm_el_bytes));
    case GradAccumulation::autocast: break;
  }
  const double master = master_el_bytes(sh);
  const double cast = master == sh.weight_el_bytes ? 0 : streaming_s(*ctx.hw, params * (sh.weight_el_bytes + master));
  return cast + streaming_s(*ctx.hw, params * 3 * master);
}

double weight_cast_s(const CostContext& ctx, double dense, double experts) {
  const ModelShape& sh = ctx.shape;
  const double params = device_params(ctx, dense, experts), master = master_el_bytes(sh);
  if (ctx.scenario->train.grad_accumulation != GradAccumulation::autocast || params <= 0 || master == sh.weight_el_bytes)
    return 0;
  return streaming_s(*ctx.hw, params * (master + sh.weight_el_bytes));
}

// Gradient all-reduce over the data-parallel ranks: dense gradients over dp (x cp) ranks,
// expert gradients over the dp (x cp) / ep ranks that hold the same experts.
double dp_gradient_s(const CostContext& ctx, double dense, double experts) {
  const ParallelScenario& p = ctx.scenario->parallel;
  const double e = ctx.shape.comm_el_bytes, tp = d(p.tp), ep = d(p.ep), dp = gradient_ranks(p);
  return ring_all_reduce_s(dense / tp * e, dp, ctx.dp_link) + ring_all_reduce_s(experts / (tp * ep) * e, dp / ep, ctx.dp_link);
}

namespace {

double zero3_gather_s(const CostContext& ctx) {
  const ParallelScenario& p = ctx.scenario->parallel;
  if (ctx.scenario->train.sharding != OptimizerSharding::weights) return 0;
  const double e = ctx.shape.weight_el_bytes, tp = d(p.tp), ep = d(p.ep), dp = gradient_ranks(p);
  const double experts = d(ctx.params.routed_experts), dense = d(ctx.params.total) - experts;
  // weights gathered before the forward and again before the backward
  return 2 * (all_gather_s(dense / tp * e, dp, ctx.dp_link) + all_gather_s(experts / (tp * ep) * e, dp / ep, ctx.dp_link));
}

double recompute_flops(const CostContext& ctx, const PassCost& fwd) {
  const TrainScenario& t = ctx.scenario->train;
  switch (t.recompute) {
    case Recompute::none: return 0;
    case Recompute::full: return fwd.total().flops - table_total(fwd.outside).flops;
    case Recompute::selective: {
      double flops = 0;
      for (int i = 0; i < model::op_kind_count; ++i) {
        const auto k = static_cast<OpKind>(i);
        flops += selective_recompute_share(k, t.vwn_eta) * fwd.op_total(k).flops;
      }
      return flops;
    }
  }
  return 0;
}

}  // namespace

double attention_flops(const ModelShape& s, double pairs) { return 2 * s.H * (s.qk_head_dim + s.v_head_dim) * pairs; }

double selective_recompute_share(OpKind k, double vwn_eta) {
  switch (k) {
    case OpKind::attention:
    case OpKind::ghc_norm:
    case OpKind::ghc_dynamic: return 1;
    case OpKind::ghc_width: return 1 - vwn_eta;  // eta of its inputs are kept instead
    default: return 0;
  }
}

double recompute_s(const TrainScenario& t, const PassTime& forward) {
  switch (t.recompute) {
    case Recompute::none: return 0;
    case Recompute::full: return forward.layers_s;
    case Recompute::selective: {
      double s = 0;
      for (int k = 0; k < model::op_kind_count; ++k)
        s += selective_recompute_share(static_cast<OpKind>(k), t.vwn_eta) * forward.op_s[static_cast<std::size_t>(k)];
      return s;
    }
  }
  return 0;
}

model::Layout resolve_layout(const model::Config& c, const Scenario& s) {
  if (s.attention.layout) return *s.attention.layout;
  return model::best_layout(c, s.prefill.tokens, s.attention.tile_q, s.attention.tile_k);
}

void check_scenario(const model::Config& c, const HardwareProfile& hw, const Scenario& s, const std::string& pointer) {
  check_parallel(c.effective, s.parallel, pointer + "/parallel");
  const ParallelScenario& p = s.parallel;
  if (p.tp > 1) link_for(hw, p.tp, p.gpus_per_node, pointer + "/parallel/tp");
  if (p.ep > 1) link_for(hw, p.tp * p.ep, p.gpus_per_node, pointer + "/parallel/ep");
  if (p.cp > 1) check_context_parallel(s, hw, pointer + "/parallel/cp");
  if (p.dp > 1) link_for(hw, p.tp * p.cp * p.dp, p.gpus_per_node, pointer + "/parallel/dp");
  // Whole-sequence masks count pairs exactly up to model::max_count_positions positions.
  const std::int64_t copies = model::copies_per_token(c.design.method);
  const std::int64_t max_tokens = model::max_count_positions / copies;
  if (s.train.seq_len > max_tokens)
    model::fail(pointer + "/train/seq_len", "must be <= " + num(max_tokens) + " tokens for " + num(copies) +
                                                " positions per token (attention pairs are counted exactly)");
  if (s.prefill.tokens > max_tokens)
    model::fail(pointer + "/prefill/tokens", "must be <= " + num(max_tokens) + " tokens for " + num(copies) +
                                                 " positions per token (attention pairs are counted exactly)");
  if (s.serving.batches.empty()) model::fail(pointer + "/serving/batches", "must not be empty");
  if (s.serving.input_lengths.empty()) model::fail(pointer + "/serving/input_lengths", "must not be empty");
  if (s.attention.tile_q < 1) model::fail(pointer + "/attention/tile_q", "must be >= 1");
  if (s.attention.tile_k < 1) model::fail(pointer + "/attention/tile_k", "must be >= 1");
  if (!(s.kv.memory_utilization > 0 && s.kv.memory_utilization <= 1))
    model::fail(pointer + "/kv/memory_utilization", "must be in (0, 1]");
  if (!(s.train.vwn_eta >= 0 && s.train.vwn_eta <= 1)) model::fail(pointer + "/train/vwn_eta", "must be in [0, 1]");
  // the matrix rates the products and the attention run at
  const TensorPrecision prec = tensor_precision(c.effective, s.precision);
  const struct {
    model::DType dtype;
    bool given;
    const char* key;
  } rates[] = {{prec.compute, s.precision.compute.has_value(), "compute"},
               {prec.activations, s.precision.activations.has_value(), "activations"}};
  for (const auto& r : rates) {
    if (r.given && r.dtype == model::DType::fp8 && !hw.peak_fp8_tflop_per_s)
      model::fail(pointer + "/precision/" + r.key, "is fp8, but " + hw.name + " has no fp8 matrix rate");
    hw.matrix_peak_flop_per_s(r.dtype);  // throws when the device lacks the model dtype's rate
  }
}

TensorPrecision tensor_precision(const model::Backbone& b, const PrecisionScenario& p) {
  const model::DType m = b.dtype;
  return {p.weights.value_or(m),     p.activations.value_or(m),   p.kv_cache.value_or(m),
          p.compute.value_or(m),     p.communication.value_or(m), p.optimizer_state};
}

void make_context(const model::Config& c, const HardwareProfile& hw, const Scenario& s, CostContext& out) {
  check_scenario(c, hw, s);
  out.config = &c;
  out.hw = &hw;
  out.scenario = &s;
  const TensorPrecision precision = tensor_precision(c.effective, s.precision);
  out.shape = model_shape(c.effective, c.design.method);
  set_precision(out.shape, precision);
  plan_layers(c.effective, c.design.method, out.plan);
  // The baseline is the base backbone before growth, without the method: what the
  // design as a whole (growth included) costs over the model it starts from.
  const model::Method baseline{};  // Method's default alternative: the baseline
  out.baseline_shape = model_shape(c.base, baseline);
  set_precision(out.baseline_shape, precision);  // the same deployment
  plan_layers(c.base, baseline, out.baseline_plan);
  out.options.layout = resolve_layout(c, s);
  out.options.tile_q = s.attention.tile_q;
  out.options.tile_k = s.attention.tile_k;
  out.options.count_executed = s.attention.count == AttentionCount::executed;
  out.options.unfused = s.attention.kernel == AttentionKernel::unfused;
  out.options.separate_gate_up = s.ffn.gate_up == GateUp::separate;
  out.options.mirror_final_only_decode = s.decode.kv_mirror_final_only;
  out.options.hidden_dropout = s.train.hidden_dropout > 0;
  out.options.attention_dropout = s.train.attention_dropout > 0;
  const ParallelScenario& p = s.parallel;
  out.sharding = Sharding{d(p.tp), d(p.ep), d(std::min(p.tp, c.effective.num_kv_heads)), p.sequence_parallel || p.tp == 1,
                          d(p.cp)};
  out.roofline = make_roofline(hw, precision.compute, out.sharding, &out.shape);
  out.roofline.decode_kernel = s.attention.decode_kernel;
  out.tp_link = p.tp > 1 ? link_for(hw, p.tp, p.gpus_per_node, "/scenario/parallel/tp", p.tp) : Link{};
  if (p.tp_all_reduce == TpAllReduce::library) out.tp_link.custom_all_reduce.clear();
  out.ep_link = p.ep > 1 ? link_for(hw, p.tp * p.ep, p.gpus_per_node, "/scenario/parallel/ep", p.ep) : Link{};
  out.cp_link = p.cp > 1 ? link_for(hw, p.tp * p.cp, p.gpus_per_node, "/scenario/parallel/cp", p.cp) : Link{};
  const std::int64_t gradient_group = p.dp * p.cp;
  out.dp_link = gradient_group > 1 ? link_for(hw, p.tp * gradient_group, p.gpus_per_node, "/scenario/parallel/dp",
                                              gradient_group)
                                   : Link{};
  out.params = model::count_params(c);
}

void cost_train(const CostContext& ctx, PassCost& forward, TrainResult& out) {
  const Scenario& s = *ctx.scenario;
  const TrainScenario& t = s.train;
  const double ep = ctx.sharding.ep, cp = ctx.sharding.cp, accum = d(t.grad_accum);
  train_forward_pass(*ctx.config, ctx.shape, ctx.plan, d(t.micro_batch) * ep / cp, t.seq_len, ctx.options, forward);
  pass_time(forward, ctx.roofline, Timing::training, out.forward);
  out.forward_comm = train_comm(ctx, forward, out.forward);
  out.recompute_s = recompute_s(t, out.forward);
  const double comm_passes = t.recompute == Recompute::full ? 3 : 2;  // forward, backward (, recomputed forward)
  const double micro_comm = out.forward_comm.total() * comm_passes;
  const double experts = d(ctx.params.routed_experts), dense = d(ctx.params.total) - experts;
  out.grad_accumulation_s = grad_accumulation_s(ctx, dense, experts);
  // autocast casts every parameter in the forward, the layers' again when full
  // recomputation reruns them (the embedding and head are not recomputed)
  double outside = 0;
  for (const model::OpNode& n : forward.outside) outside += n.params;
  out.weight_cast_s = weight_cast_s(ctx, dense, experts) +
                      (t.recompute == Recompute::full ? weight_cast_s(ctx, dense - outside, experts) : 0);
  out.micro_step_s = out.forward.total_s + out.forward.backward_s + out.recompute_s + micro_comm +
                     out.grad_accumulation_s + out.weight_cast_s;
  out.dp_comm_s = dp_gradient_s(ctx, dense, experts);
  out.exposed_dp_s = t.overlap_dp_comm ? std::max(0.0, out.dp_comm_s - out.forward.backward_s) : out.dp_comm_s;
  out.zero3_gather_s = zero3_gather_s(ctx);
  out.exposed_zero3_s = out.zero3_gather_s;
  if (t.overlap_weight_gather) {  // one gather before the forward's layers, one before the backward's
    const double gather = out.zero3_gather_s / 2;
    out.exposed_zero3_s = std::max(0.0, gather - out.forward.total_s) +
                          std::max(0.0, gather - (out.forward.backward_s + out.recompute_s));
  }
  out.optimizer_s = optimizer_update_s(ctx, dense, experts);
  out.framework_s = s.framework.train_step_s;
  out.step_s = accum * (out.micro_step_s + out.exposed_zero3_s) + out.exposed_dp_s + out.optimizer_s + out.framework_s;
  out.comm_s = accum * (micro_comm + out.exposed_zero3_s) + out.exposed_dp_s;

  // All devices: dp * cp / ep groups of tp x ep devices, each running `forward`.
  const double groups = d(s.parallel.dp) * cp / ep;
  const model::OpCost total = forward.total();
  out.flops = accum * groups * (3 * total.flops + recompute_flops(ctx, forward));
  const double exact_fwd = total.flops - forward.op_total(OpKind::attention).flops +
                           attention_flops(ctx.shape, forward.attention_pairs_exact());
  out.model_flops = accum * groups * 3 * exact_fwd;
  out.tokens = accum * d(s.parallel.dp) * d(t.micro_batch) * d(t.seq_len);
  out.memory = train_memory(ctx.params, ctx.shape, forward, s);
}

PassComm train_comm(const CostContext& ctx, const PassCost& pass, const PassTime& time) {
  const Sharding& sh = ctx.sharding;
  const TrainScenario& t = ctx.scenario->train;
  PassComm c = pass_comm(pass, ctx.shape, sh, ctx.tp_link, ctx.ep_link);
  for (int g = 0; sh.cp > 1 && g < pass.count; ++g) {
    const LayerGroupCost& lg = pass.groups[static_cast<std::size_t>(g)];
    const double whole_seqs = lg.work.seqs * sh.cp / sh.ep;  // the sequences this device holds chunks of
    const double bytes = whole_seqs * lg.work.rows_kv * ctx.shape.kv_out * ctx.shape.comm_el_bytes / sh.kv_tp;
    c.cp_s += lg.plan.passes * all_gather_s(bytes, sh.cp, ctx.cp_link);
  }
  // Each kind hides under its own compute; the all-to-alls under what the other two left.
  auto op_s = [&](OpKind k) { return time.op_s[static_cast<std::size_t>(k)]; };
  if (t.overlap_tp_comm)
    c.tp_hidden_s = std::min(c.tp_s, op_s(OpKind::qkv_proj) + op_s(OpKind::o_proj) + op_s(OpKind::ffn_gate_up) +
                                         op_s(OpKind::ffn_down) + op_s(OpKind::shared_experts));
  if (sh.cp > 1 && ctx.scenario->parallel.cp_comm == CpComm::ring)
    c.cp_hidden_s = std::min(c.cp_s, op_s(OpKind::attention));
  if (t.overlap_ep_comm)
    c.ep_hidden_s =
        std::min(c.ep_s, std::max(0.0, time.layers_s - op_s(OpKind::experts) - c.tp_hidden_s - c.cp_hidden_s));
  return c;
}

void cost_prefill(const CostContext& ctx, PassCost& pass, InferenceResult& out) {
  const PrefillScenario& p = ctx.scenario->prefill;
  prefill_pass(*ctx.config, ctx.shape, ctx.plan, d(p.batch), p.tokens, ctx.options, pass);
  pass_time(pass, ctx.roofline, Timing::forward, out.time);
  out.comm = pass_comm(pass, ctx.shape, ctx.sharding, ctx.tp_link, ctx.ep_link, true);
  out.framework_s = ctx.scenario->framework.prefill_s;
  out.seconds = out.time.total_s + out.comm.total() + out.framework_s;
}

void cost_decode(const CostContext& ctx, bool baseline, std::int64_t batch, std::int64_t context, PassCost& pass,
                 InferenceResult& out) {
  static const model::Method kBaseline{};  // the baseline
  const model::Method& m = baseline ? kBaseline : ctx.config->design.method;
  const ModelShape& shape = baseline ? ctx.baseline_shape : ctx.shape;
  decode_pass(m, shape, baseline ? ctx.baseline_plan : ctx.plan, d(batch), context, ctx.options, pass);
  pass_time(pass, ctx.roofline, Timing::forward, out.time);
  out.comm = pass_comm(pass, shape, ctx.sharding, ctx.tp_link, ctx.ep_link, true);
  out.framework_s = ctx.scenario->framework.decode_step_s;  // the baseline runs on the same framework
  out.seconds = out.time.total_s + out.comm.total() + out.framework_s;
}

double inference_weight_bytes(const CostContext& ctx) {
  return params_per_device(ctx.params, ctx.sharding.tp, ctx.sharding.ep) * ctx.shape.weight_el_bytes;
}

double kv_bytes_per_seq(const CostContext& ctx, std::int64_t context) {
  return kv_cache_bytes_per_seq(ctx.config->design.method, ctx.shape, ctx.plan, context);
}

double max_batch(const CostContext& ctx, std::int64_t context) {
  const double usable = ctx.hw->memory_bytes() * ctx.scenario->kv.memory_utilization - inference_weight_bytes(ctx);
  const double per_seq_per_device = kv_bytes_per_seq(ctx, context) / (ctx.sharding.kv_tp * ctx.sharding.ep);
  if (usable <= 0) return 0;
  return std::floor(usable / per_seq_per_device);
}

}  // namespace hdlab::simulator
