#include "hdlab/simulator/roofline.hpp"

#include <algorithm>

#include "hdlab/model/error.hpp"
#include "kernel_memo.hpp"

namespace hdlab::simulator {

using model::OpClass;
using model::OpKind;

bool on_residual_stream(OpKind k) {
  switch (k) {
    case OpKind::attn_norm:
    case OpKind::ffn_norm:
    case OpKind::residual:
    case OpKind::ghc_norm:
    case OpKind::ghc_dynamic:
    case OpKind::ghc_width:
    case OpKind::ghc_depth:
    case OpKind::final_norm: return true;
    default: return false;
  }
}

double Sharding::activation_ways(OpKind k) const {
  return sequence_parallel || !on_residual_stream(k) ? tp * ep : ep;
}

model::OpCost device_cost(OpKind k, const OpRow& r, const Sharding& s) {
  const model::OpCost& c = r.cost;
  const double group = s.activation_ways(k);
  // Routed experts are split over every device of the group; other weights over tp only.
  const double weight_split = k == OpKind::experts ? group : s.tp;
  const double kv_split = s.kv_tp * s.ep;
  return {c.flops / group,         c.weight_bytes / weight_split, c.act_bytes_in / group,
          c.act_bytes_out / group, c.kv_bytes_read / kv_split,    c.kv_bytes_written / kv_split};
}

namespace {

// The kernel model of `dtype` in `by_dtype`, else bf16's (fp16 runs as bf16; a device
// fitted without an fp8 attention table times fp8 attention as bf16), else null.
template <class T>
const T* kernel_of(const std::map<model::DType, T>& by_dtype, model::DType dtype) {
  if (auto it = by_dtype.find(dtype); it != by_dtype.end()) return &it->second;
  if (auto it = by_dtype.find(model::DType::bf16); it != by_dtype.end()) return &it->second;
  return nullptr;
}

}  // namespace

Roofline make_roofline(const HardwareProfile& hw, model::DType dtype, const Sharding& s, const ModelShape* shape) {
  Roofline rl;
  rl.hw = &hw;
  rl.sharding = s;
  rl.matrix_peak = hw.matrix_peak_flop_per_s(dtype);
  // attention runs in the activations' precision (a prefill kernel in fp8 with an fp8
  // cache: prefill_kernel_dtype), decode's kernel in the cache's
  const model::DType attention = shape ? shape->precision.activations : dtype;
  const model::DType cache = shape ? shape->precision.kv_cache : dtype;
  rl.attention_peak = hw.matrix_peak_flop_per_s(attention);
  rl.compute_rate[static_cast<std::size_t>(OpClass::gemm)] = rl.matrix_peak * hw.scalar_efficiency(EfficiencyClass::gemm);
  rl.compute_rate[static_cast<std::size_t>(OpClass::attention)] =
      rl.attention_peak * hw.scalar_efficiency(EfficiencyClass::attention);
  rl.compute_rate[static_cast<std::size_t>(OpClass::vector)] =
      hw.vector_peak_flop_per_s() * hw.scalar_efficiency(EfficiencyClass::vector);
  rl.memory_rate = hw.memory_bandwidth_bytes_per_s() * hw.scalar_efficiency(EfficiencyClass::memory);
  rl.launch_s = hw.launch_overhead_s();
  rl.curves = hw.has_curves();
  rl.inv_group = 1 / (s.tp * s.ep);
  rl.inv_tp = 1 / s.tp;
  rl.inv_kv = 1 / (s.kv_tp * s.ep);
  if (hw.kernel_models && shape) {
    const KernelModels& k = *hw.kernel_models;
    rl.kernels = &k;
    rl.gemm = kernel_of(k.gemm, dtype);
    rl.prefill = kernel_of(k.prefill_attention, prefill_kernel_dtype(attention, cache));
    rl.decode = kernel_of(k.decode_attention, cache);
    rl.moe_layer = kernel_of(k.moe_layer, dtype);
    if (rl.gemm) rl.gemm_key = memo_key(*rl.gemm, k.sms);
    if (rl.decode) rl.decode_key = memo_key(*rl.decode, k.sms);
    rl.shape = *shape;
    rl.kv_group = shape->G / s.kv_tp;
    if (!rl.gemm)  // the parser requires a GEMM model; kept as a guard for hand-built profiles
      throw model::ConfigError("/kernel_models/gemm", hw.name + " has no GEMM kernel model for " +
                                                          std::string(model::to_string(dtype)) + " or bf16");
  }
  return rl;
}

namespace {

// op_class() lives in another translation unit; the hot loop reads this table instead.
const std::array<OpClass, model::op_kind_count>& op_classes() {
  static const std::array<OpClass, model::op_kind_count> table = [] {
    std::array<OpClass, model::op_kind_count> t{};
    for (int i = 0; i < model::op_kind_count; ++i) t[static_cast<std::size_t>(i)] = model::op_class(static_cast<OpKind>(i));
    return t;
  }();
  return table;
}

// Compute and memory rates of one op where the profile has efficiency curves: the op's
// own compute curve where it has one, else its class's; its class's memory curve where
// it has one, else the memory curve (hardware.hpp).
void curve_rates(OpKind k, OpClass cls, const OpRow& r, double bytes, const Roofline& rl, double& compute,
                 double& memory) {
  const HardwareProfile& hw = *rl.hw;
  const Sharding& s = rl.sharding;
  const EfficiencyClass ec = efficiency_class(cls);
  switch (cls) {
    case OpClass::gemm: {
      // smallest GEMM dimension on this device: tokens (split over ep) or a weight side
      const double m = r.rows / s.ep, wmin = r.weight_dim_min / s.tp;
      compute = rl.matrix_peak * hw.compute_efficiency_at(k, ec, std::max(1.0, std::min(m, wmin)));
      break;
    }
    case OpClass::attention:
      compute = rl.attention_peak * hw.compute_efficiency_at(k, ec, std::max(1.0, r.rows));
      break;
    case OpClass::vector:
      compute = hw.vector_peak_flop_per_s() * hw.compute_efficiency_at(k, ec, std::max(1.0, bytes));
      break;
    case OpClass::memory: compute = 0; break;
  }
  memory = hw.memory_bandwidth_bytes_per_s() * hw.memory_efficiency_at(ec, std::max(1.0, bytes));
}

OpTime roofline_op_time(OpKind k, const OpRow& r, const Roofline& rl, const LayerWork* work, Timing timing) {
  OpTime t;
  const model::OpCost& c = r.cost;
  const OpClass cls = op_classes()[static_cast<std::size_t>(k)];
  // device_cost(), inlined with reciprocals: this runs hundreds of times per evaluation
  const double weight_split = k == OpKind::experts ? rl.inv_group : rl.inv_tp;
  const double inv_rows = rl.sharding.sequence_parallel ? rl.inv_group : 1 / rl.sharding.activation_ways(k);
  const double flops = c.flops * inv_rows;
  double bytes = (c.act_bytes_in + c.act_bytes_out) * inv_rows + c.weight_bytes * weight_split +
                 (c.kv_bytes_read + c.kv_bytes_written) * rl.inv_kv;
  if (work && work->scores_materialised && k == OpKind::attention) bytes += r.inner_vector_bytes * rl.inv_group;
  double compute = rl.compute_rate[static_cast<std::size_t>(cls)], memory = rl.memory_rate;
  if (rl.curves) curve_rates(k, cls, r, bytes, rl, compute, memory);
  if (compute > 0 && flops > 0) t.compute_s = flops / compute;
  if (bytes > 0) t.memory_s = bytes / memory;
  t.launch_s = r.calls * rl.launch_s;
  t.compute_bound = t.compute_s > t.memory_s;
  t.seconds = std::max(t.compute_s, t.memory_s) + t.launch_s;
  if (timing == Timing::forward) return t;
  t.backward_s = 2 * t.seconds;
  if (cls == OpClass::gemm) t.backward_weight_s = t.seconds;  // dW = X^T dY, as long as the forward product
  return t;
}

}  // namespace

OpTime op_time(OpKind k, const OpRow& r, const Roofline& rl, const LayerWork* work, Timing timing) {
  if (r.calls <= 0) return OpTime{};
  // A linear-attention mixer has no fitted kernel model (kerneldb's gdn_perf validates its
  // roofline instead: calibration/gdn_validation.hpp): the roofline times it either way.
  const bool linear_mixer = work && work->linear_mixer && k == OpKind::attention;
  if (rl.kernels && !linear_mixer) return kernel_op_time(k, r, rl, work, timing);
  return roofline_op_time(k, r, rl, work, timing);
}

namespace {

void add_table(const OpTable& table, double passes, const Roofline& rl, const LayerWork* work, Timing timing,
               PassTime& out) {
  for (int i = 0; i < model::op_kind_count; ++i) {
    const OpRow& r = table[static_cast<std::size_t>(i)];
    if (r.calls <= 0) continue;
    const OpTime t = op_time(static_cast<OpKind>(i), r, rl, work, timing);
    const double sec = t.seconds * passes;
    out.op_s[static_cast<std::size_t>(i)] += sec;
    if (t.compute_bound) out.compute_bound_s[static_cast<std::size_t>(i)] += sec;
    out.total_s += sec;
    if (work) out.layers_s += sec;
    if (timing == Timing::forward) continue;
    out.backward_op_s[static_cast<std::size_t>(i)] += t.backward_s * passes;
    out.backward_s += t.backward_s * passes;
    out.backward_weight_s += t.backward_weight_s * passes;
  }
}

}  // namespace

void pass_time(const PassCost& p, const Roofline& rl, Timing timing, PassTime& out) {
  out = PassTime{};
  for (int g = 0; g < p.count; ++g) {
    const LayerGroupCost& lg = p.groups[static_cast<std::size_t>(g)];
    add_table(lg.ops, lg.plan.passes, rl, &lg.work, timing, out);
  }
  add_table(p.outside, 1, rl, nullptr, timing, out);
}

Link link_for(const HardwareProfile& hw, std::int64_t span, std::int64_t gpus_per_node, const std::string& pointer,
              std::int64_t ranks) {
  const double eff = hw.scalar_efficiency(EfficiencyClass::communication);
  if (span <= gpus_per_node) {
    if (!hw.nvlink_bandwidth_gb_per_s || *hw.nvlink_bandwidth_gb_per_s <= 0)
      throw model::ConfigError(pointer, "needs a device-to-device link but " + hw.name +
                                            " has no nvlink_bandwidth_gb_per_s");
    Link l;
    l.bytes_per_s = *hw.nvlink_bandwidth_gb_per_s * 1e9 * eff;
    l.latency_s = hw.nvlink_latency_us.value_or(0) * 1e-6;
    if (hw.kernel_models && ranks > 1) {  // the fitted one-node collectives of this many GPUs
      const KernelModels& k = *hw.kernel_models;
      for (std::size_t c = 0; c < l.regimes.size(); ++c) l.regimes[c] = regimes_for(k.collectives[c], static_cast<double>(ranks));
      l.custom_all_reduce = regimes_for(k.custom_all_reduce, static_cast<double>(ranks));
    }
    return l;
  }
  if (!hw.network_bandwidth_gb_per_s || *hw.network_bandwidth_gb_per_s <= 0)
    throw model::ConfigError(pointer, "spans " + std::to_string(span) + " devices (more than one node of " +
                                          std::to_string(gpus_per_node) + ") but " + hw.name +
                                          " has no network_bandwidth_gb_per_s");
  Link l;
  l.bytes_per_s = *hw.network_bandwidth_gb_per_s * 1e9 * eff;
  l.latency_s = hw.network_latency_us.value_or(0) * 1e-6;
  return l;
}

namespace {

const std::vector<CollectiveRegime>& fitted(const Link& l, Collective c) { return l.regimes[static_cast<std::size_t>(c)]; }

}  // namespace

double ring_all_reduce_s(double bytes, double ranks, const Link& l) {
  if (ranks <= 1 || bytes <= 0) return 0;
  if (!fitted(l, Collective::all_reduce).empty())
    return collective_seconds(fitted(l, Collective::all_reduce), Collective::all_reduce, bytes, ranks);
  return 2 * (ranks - 1) / ranks * bytes / l.bytes_per_s + 2 * (ranks - 1) * l.latency_s;
}

double all_gather_s(double bytes, double ranks, const Link& l) {
  if (ranks <= 1 || bytes <= 0) return 0;
  if (!fitted(l, Collective::all_gather).empty())
    return collective_seconds(fitted(l, Collective::all_gather), Collective::all_gather, bytes, ranks);
  return (ranks - 1) / ranks * bytes / l.bytes_per_s + (ranks - 1) * l.latency_s;
}

double all_to_all_s(double bytes_sent, double ranks, const Link& l) {
  if (ranks <= 1 || bytes_sent <= 0) return 0;
  if (!fitted(l, Collective::all_to_all).empty())
    return collective_seconds(fitted(l, Collective::all_to_all), Collective::all_to_all, bytes_sent, ranks);
  return (ranks - 1) / ranks * bytes_sent / l.bytes_per_s + (ranks - 1) * l.latency_s;
}

double inference_all_reduce_s(double bytes, double ranks, const Link& l) {
  const double library = ring_all_reduce_s(bytes, ranks, l);
  if (l.custom_all_reduce.empty() || ranks <= 1 || bytes <= 0) return library;
  return std::min(library, collective_seconds(l.custom_all_reduce, Collective::all_reduce, bytes, ranks));
}

PassComm pass_comm(const PassCost& p, const ModelShape& s, const Sharding& sh, const Link& tp_link,
                   const Link& ep_link, bool inference) {
  PassComm c;
  for (int g = 0; g < p.count; ++g) {
    const LayerGroupCost& lg = p.groups[static_cast<std::size_t>(g)];
    // rows one device of the ep group holds: [seqs / ep * rows_q, D]
    const double rows = lg.work.seqs / sh.ep * lg.work.rows_q;
    const double bytes = rows * s.D * s.comm_el_bytes;
    c.tp_s += lg.plan.passes * 2 *
              (inference ? inference_all_reduce_s(bytes, sh.tp, tp_link) : ring_all_reduce_s(bytes, sh.tp, tp_link));
    if (lg.plan.sig.moe)
      c.ep_s += lg.plan.passes * 2 * all_to_all_s(rows * s.top_k * s.D * s.comm_el_bytes, sh.ep, ep_link);
  }
  return c;
}

}  // namespace hdlab::simulator
