// gdn_perf and mamba2_perf rows predicted by the layer program's linear-attention costs
// (Gated DeltaNet, Mamba-2) on the roofline.
#include "hdlab/calibration/gdn_validation.hpp"

#include "hdlab/model/error.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/simulator/roofline.hpp"

namespace hdlab::calibration {

namespace {

constexpr double kActivationBytes = 2;  // bf16
constexpr double kStateBytes = 4;       // fp32 (mamba_ssm_dtype of the Qwen3.5 configs)

// The row's kernel as the layer program costs it: one op node of one call.
model::OpNode gdn_node(const GdnRow& r, bool& conv) {
  model::GdnDims g;
  g.hk = r.k_heads;
  g.dk = r.k_dim;
  g.hv = r.v_heads;
  g.dv = r.v_dim;
  g.kernel = r.d_conv;
  g.state_el_bytes = kStateBytes;
  const bool decode = r.phase == "generation";
  const double tokens = decode ? 1 : r.seq_len;
  conv = r.kernel.find("conv1d") != std::string::npos;
  model::OpNode n;
  n.cost = conv ? model::gdn_conv_cost(g, r.batch, tokens, decode, kActivationBytes)
                : model::gdn_rule_cost(g, r.batch, tokens, decode, kActivationBytes);
  n.cost.weight_bytes = conv ? g.conv_channels() * g.kernel * kActivationBytes : 0;
  n.calls = 1;
  n.rows = r.batch * tokens;
  return n;
}

std::string label(const GdnRow& r) {
  return r.kernel + " batch=" + std::to_string(static_cast<long long>(r.batch)) +
         " seq=" + std::to_string(static_cast<long long>(r.seq_len)) +
         " hk=" + std::to_string(static_cast<long long>(r.k_heads)) +
         " hv=" + std::to_string(static_cast<long long>(r.v_heads));
}

// One device, no sharding; the roofline (not a fitted kernel model) times the mixer.
double roofline_seconds(const model::OpNode& n, const simulator::Roofline& rl) {
  model::LayerWork work;
  work.linear_mixer = true;
  return simulator::op_time(model::OpKind::attention, n, rl, &work).seconds;
}

// A mamba2_perf row's conv kernel as the layer program costs it: the conv weights and
// biases read, the conv state in bf16 (the activations' type; mamba_ssm_dtype applies to
// the SSM state only).
model::OpNode mamba2_node(const Mamba2Row& r) {
  model::Mamba2Dims m;
  m.heads = r.heads;
  m.head_dim = r.head_dim;
  m.groups = r.groups;
  m.state = r.d_state;
  m.kernel = r.d_conv;
  m.chunk = r.chunk;
  m.conv_bias = true;
  m.state_el_bytes = kActivationBytes;
  const bool decode = r.phase == "generation";
  const double tokens = decode ? 1 : r.seq_len;
  model::OpNode n;
  n.cost = model::mamba2_conv_cost(m, r.batch, tokens, decode, kActivationBytes);
  n.cost.weight_bytes = m.conv_channels() * (m.kernel + 1) * kActivationBytes;
  n.calls = 1;
  n.rows = r.batch * tokens;
  return n;
}

}  // namespace

std::vector<KernelCase> predict_gdn(const KernelDb& db, const simulator::HardwareProfile& profile) {
  if (db.gdn.empty())
    throw model::ConfigError(db.folder + "/gdn_perf.csv", "no rows: the device folder has no gdn_perf table");
  const simulator::Roofline rl = simulator::make_roofline(profile, model::DType::bf16, simulator::Sharding{});
  std::vector<KernelCase> out;
  out.reserve(db.gdn.size());
  for (const GdnRow& r : db.gdn) {
    bool conv = false;
    const model::OpNode n = gdn_node(r, conv);
    KernelCase c;
    c.op_class = std::string(conv ? "gdn_conv_" : "gdn_rule_") + (r.phase == "generation" ? "decode" : "prefill");
    c.precision = "bf16/state fp32";
    c.label = label(r);
    c.source = "gdn_perf.csv:" + std::to_string(r.line);
    c.measured_s = r.seconds;
    c.predicted_s = roofline_seconds(n, rl);
    c.held_out = true;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<KernelCase> predict_mamba2(const KernelDb& db, const simulator::HardwareProfile& profile) {
  if (db.mamba2.empty())
    throw model::ConfigError(db.folder + "/mamba2_perf.csv", "no rows: the device folder has no mamba2_perf table");
  const simulator::Roofline rl = simulator::make_roofline(profile, model::DType::bf16, simulator::Sharding{});
  std::vector<KernelCase> out;
  out.reserve(db.mamba2.size());
  for (const Mamba2Row& r : db.mamba2) {
    if (r.kernel.find("conv1d") == std::string::npos)
      throw model::ConfigError(db.folder + "/mamba2_perf.csv:" + std::to_string(r.line),
                               "kernel_source \"" + r.kernel + "\" is not a causal conv1d kernel, the only Mamba-2 "
                               "kernels this validation knows what a row times of");
    KernelCase c;
    c.op_class = std::string("mamba2_conv_") + (r.phase == "generation" ? "decode" : "prefill");
    c.precision = "bf16";
    c.label = r.kernel + " batch=" + std::to_string(static_cast<long long>(r.batch)) +
              " seq=" + std::to_string(static_cast<long long>(r.seq_len)) + " " + r.model;
    c.source = "mamba2_perf.csv:" + std::to_string(r.line);
    c.measured_s = r.seconds;
    c.predicted_s = roofline_seconds(mamba2_node(r), rl);
    c.held_out = true;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace hdlab::calibration
