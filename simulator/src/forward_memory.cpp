// Device memory of a reference implementation's forward passes (forward_memory.hpp).
// Shapes in the comments: R rows computed per layer pass, D hidden, D' the VWN wide
// state, H/G query/KV heads of hd, F the SwiGLU width, V the padded vocabulary.
#include "hdlab/simulator/forward_memory.hpp"

#include <algorithm>
#include <cmath>

#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::simulator {

namespace {

using model::Layout;

// Whether the final copies' rows sit contiguously in the physical layout (the output
// path then reads them in place instead of gathering them into a buffer).
bool final_rows_contiguous(std::int64_t L, std::int64_t copies, Layout layout) {
  std::int64_t last = -1;
  for (std::int64_t i = 0; i < L; ++i) {
    const std::int64_t p = model::physical_of_logical(L, copies, layout, i * copies + copies - 1);
    if (last >= 0 && p != last + 1) return false;
    last = p;
  }
  return true;
}

using Rows = ForwardRows;

struct Workspace {
  double headroom = 0.25;
  std::vector<std::pair<std::string, double>> buffers;
  // A reused buffer of `elements` of `bytes` each, allocated with headroom.
  void buffer(const char* name, double elements, double bytes) {
    if (elements > 0) buffers.push_back({name, std::floor(elements * (1 + headroom)) * bytes});
  }
  // An exact allocation (per-call index tensors, stored inputs).
  void exact(const char* name, double elements, double bytes) {
    if (elements > 0) buffers.push_back({name, elements * bytes});
  }
};

// Whether the runner puts a linear layer's rows into state order and back (runner_linear.cpp):
// each state's rows in logical order, states one after another. One state: unless the
// largest call's physical order is the logical one (interleaved, one copy per token, or a
// PHD prefill whose only hidden copies are the last token's, which every layout puts
// after the origins); HD intra layers' n states: unless the layout is stream-major.
bool linear_rows_permuted(const model::Config& c, const ForwardRun& run, double states) {
  const std::int64_t copies = model::copies_per_token(c.design.method);
  if (copies == 1) return false;
  if (states > 1) return run.layout != Layout::stream_major;
  const auto tail = model::prefill_tail(c.design.method, run.tokens);
  const bool last_token_tail = run.phase != ForwardPhase::train_forward && tail && *tail <= 1;
  return run.layout != Layout::interleaved && !last_token_tail;
}

// What a linear mixer's rows put in the runner's shared buffers (runner_linear.cpp), in
// elements per row: the conv's input and output (lin_qkv, lin_conv), the gate z (lin_z),
// the step or gate inputs (lin_ba: Gated DeltaNet's b and a, Mamba-2's dt), the
// recurrence's output (lin_o); and per state the recurrent state and the conv history.
struct LinearWidths {
  double conv = 0, gate = 0, step = 0, out = 0, state = 0, conv_state = 0;
};

LinearWidths linear_widths(const model::Backbone& b, model::MixerKind kind) {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  if (kind == model::MixerKind::mamba2) {
    const model::Mamba2Config& m = *b.mamba;
    return {d(m.conv_channels()), d(m.inner()), d(m.num_heads), d(m.inner()), d(m.state_elements()),
            d(m.conv_state_elements())};
  }
  const model::GatedDeltaNetConfig& g = *b.gdn;
  return {d(g.conv_channels()), d(g.v_width()), d(2 * g.num_value_heads), d(g.v_width()), d(g.state_elements()),
          d(g.conv_state_elements())};
}

// Linear layers' buffers (Gated DeltaNet and Mamba-2 share them, each at the larger
// need): the projections, the conv's output, the recurrence's output, the rows permuted
// into state order and back where they must be, the plans' int32 row ids, and a training
// pass's workspace states (as many as the layer with the most has).
void linear_buffers(const model::Config& c, const ForwardRun& run, double R, Workspace& w) {
  const model::Backbone& b = c.effective;
  if (b.num_linear_layers() == 0) return;
  const double e = run.element_bytes, D = static_cast<double>(b.hidden);
  std::vector<double> states;  // the distinct state counts: one plan each per call
  LinearWidths most;           // each width at its largest over the layers' kinds
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    if (!b.is_linear_layer(l)) continue;
    const double s = model::recurrent_states(c.design.method, model::layer_role(c.design.method, b, l));
    if (std::find(states.begin(), states.end(), s) == states.end()) states.push_back(s);
    const LinearWidths k = linear_widths(b, b.mixer(l));
    most = {std::max(most.conv, k.conv), std::max(most.gate, k.gate), std::max(most.step, k.step),
            std::max(most.out, k.out), std::max(most.state, s * k.state), std::max(most.conv_state, s * k.conv_state)};
  }
  bool permuted = false;
  for (double s : states) {
    const bool p = linear_rows_permuted(c, run, s);
    permuted = permuted || p;
    if (p) w.exact("linear_row_ids", 2 * R, 4);
    if (model::design_features(c.design.method).hidden_copies_read_only) w.exact("linear_writes", R, 4);
  }
  if (permuted) {
    w.buffer("lin_in", R * D, e);
    w.buffer("lin_y", R * D, e);
  }
  w.buffer("lin_qkv", R * most.conv, e);
  w.buffer("lin_z", R * most.gate, e);
  w.buffer("lin_ba", R * most.step, e);
  w.buffer("lin_conv", R * most.conv, e);
  w.buffer("lin_o", R * most.out, e);
  if (run.phase != ForwardPhase::train_forward) return;
  w.buffer("lin_state", most.state, e);
  w.buffer("lin_conv_state", most.conv_state, e);
}

void layer_buffers(const model::Config& c, double R, double e, Workspace& w) {
  const model::Backbone& b = c.effective;
  const double D = static_cast<double>(b.hidden), q = static_cast<double>(b.num_heads * b.head_dim),
               kv = static_cast<double>(b.num_kv_heads * b.head_dim);
  w.buffer("normed", R * D, e);       // [R, D] pre-norm output, attention and FFN alike
  if (b.num_mixer_layers(model::MixerKind::attention) > 0) {
    w.buffer("q", R * q, e);  // [R, H*hd]
    w.buffer("k", R * kv, e);  // [R, G*hd] (KV-mirror layers: the source's rows)
    w.buffer("v", R * kv, e);
    w.buffer("attn", R * q, e);  // [R, H, hd]
    if (b.attention_output_gate) w.buffer("attn_gate", R * q, e);  // [R, H*hd] the gate half of q_proj
  }
  w.buffer("sub_out", R * D, e);      // [R, D] sublayer output before the residual add
  // [R, 2F] gate and up ([R, F] up alone for relu2); the shared experts reuse it
  const double dense = b.any_dense_ffn() ? static_cast<double>(b.intermediate) : 0;
  double up = (b.mlp == model::MlpKind::relu2 ? 1 : 2) * dense, ffn = dense;
  if (b.moe && b.moe->num_shared_experts > 0) {
    up = std::max(up, 2 * static_cast<double>(b.moe->shared_expert_intermediate));
    ffn = std::max(ffn, static_cast<double>(b.moe->shared_expert_intermediate));
  }
  w.buffer("gate_up", R * up, e);
  w.buffer("act", R * ffn, e);  // [R, F]
  if (!b.moe) return;
  if (b.moe->shared_expert_gate) {  // the shared experts' sum before the gate scales it, and the gate's logit
    w.buffer("shared_out", R * D, e);
    w.buffer("shared_gate", R, e);
  }
  const double E = static_cast<double>(b.moe->num_experts), k = static_cast<double>(b.moe->top_k),
               Fe = static_cast<double>(b.moe->expert_intermediate);
  w.buffer("router_logits", R * E, e);
  w.buffer("route_ids", R * k, 4);  // int32
  w.buffer("route_weights", R * k, 4);
  w.buffer("moe_ids", R * k, 4);
  w.buffer("moe_weights", R * k, 4);
  // The busiest expert's tokens: balanced routing gives R k / E each; the largest of E
  // such counts sits about sqrt(2 mu ln E) above the mean (Gaussian tail of the max).
  const double mu = R * k / E;
  const double busiest = std::min(R, mu + std::sqrt(2 * mu * std::log(std::max(E, 2.0))));
  w.buffer("expert_x", busiest * D, e);
  w.buffer("expert_gate_up", busiest * 2 * Fe, e);
  w.buffer("expert_act", busiest * Fe, e);
  w.buffer("expert_out", busiest * D, e);
}

void method_buffers(const model::Config& c, const Rows& rows, const ForwardRun& run, Workspace& w) {
  const model::Backbone& b = c.effective;
  const double D = static_cast<double>(b.hidden), R = rows.all, e = run.element_bytes;
  const model::DesignFeatures f = model::design_features(c.design.method);
  if (f.final_stream_mirror && b.kv_mirror_layers > 0) {
    // From the first mirrored layer only the final stream's rows go on: gathered into a
    // buffer unless the layout keeps them together; each mirrored layer stores its
    // source layer's normed input [R, D] (exactly sized, kept for the run).
    if (!final_rows_contiguous(run.tokens, f.copies, run.layout)) w.buffer("hidden_b", rows.final * D, e);
    for (std::int64_t l = 0; l < b.num_layers; ++l)
      if (b.is_mirrored(l)) w.exact("mirror_input", R * D, e);
  }
  if (f.input_injection) {
    w.buffer("inject_e", R * D, e);  // the recurrent block's input, re-injected each iteration
    w.buffer("hidden_b", R * D, e);  // the adapter's output (alternates with hidden_a)
  }
  if (f.wide_residual) {
    const double m = static_cast<double>(f.width_m), n = static_cast<double>(f.width_n), wide = D * n / m;
    if (f.projected_embedding) w.buffer("embed_tmp", R * D, e);
    w.buffer("ghc_x", R * D, e);         // [R, m, D/m] the sublayer input
    w.buffer("ghc_carry", R * wide, e);  // [R, n, D/m] the carried state
    if (f.dynamic_mixing) {
      if (f.sinkhorn_iters == 0) w.buffer("ghc_hn", R * wide, e);  // VWN's per-slot normed state (mHC: none)
      w.buffer("ghc_alpha", R * n * (m + n), 4);  // f32 coefficients
      w.buffer("ghc_beta", R * m * n, 4);
    }
  }
}

// The output path: loss rows (gathered unless in place), VWN reduce, final norm, logits.
void output_buffers(const model::Config& c, const Rows& rows, const ForwardRun& run, Workspace& w) {
  const model::Backbone& b = c.effective;
  const double D = static_cast<double>(b.hidden), V = static_cast<double>(b.padded_vocab()), e = run.element_bytes;
  const model::DesignFeatures f = model::design_features(c.design.method);
  const double wide = f.wide_residual ? D * f.width_ratio() : D;
  const bool train = run.phase == ForwardPhase::train_forward;
  const double loss = train ? rows.final : 1;
  const bool final_only = f.final_stream_mirror && b.kv_mirror_layers > 0;
  if (train && !final_only && !final_rows_contiguous(run.tokens, f.copies, run.layout))
    w.buffer("out_rows", loss * wide, e);
  if (f.wide_residual) {
    if (f.sinkhorn_iters == 0) w.buffer("out_norm", loss * wide, e);  // VWN's GroupNorm (mHC sums the streams)
    w.buffer("out_reduce", loss * D, e);
  }
  w.buffer("out_final", loss * D, e);
  w.buffer("logits", loss * V, e);
  if (f.mtp && train) {  // the MTP branch's own embedding, mix and output path
    w.buffer("mtp_e", loss * wide, e);
    w.buffer("mtp_mix", loss * wide, e);
    w.buffer("mtp_norm", loss * wide, e);
    w.buffer("mtp_reduce", loss * D, e);
    w.buffer("mtp_final", loss * D, e);
    w.buffer("mtp_logits", loss * V, e);
    w.exact("mtp_ids", loss, 4);
  }
}

}  // namespace

ForwardRows forward_rows(const model::Config& c, ForwardPhase phase, std::int64_t L) {
  const std::int64_t K = model::copies_per_token(c.design.method);
  if (phase == ForwardPhase::decode) return {static_cast<double>(K), 1};
  if (phase == ForwardPhase::prefill) {
    // PHD partial prefill: the L origins plus the hidden copies of the last token (plain)
    // or of the last chunk's tokens (CSWA) (methods.md section 2).
    if (const auto tail = model::prefill_tail(c.design.method, L))
      return {static_cast<double>(L + (K - 1) * *tail), static_cast<double>(*tail)};
  }
  return {static_cast<double>(K * L), static_cast<double>(L)};
}

ForwardMemory forward_memory(const model::Config& c, const ForwardRun& run) {
  ForwardMemory out;
  const double e = run.element_bytes;
  const model::Backbone& b = c.effective;
  out.weight_bytes = static_cast<double>(model::count_params(c).total) * e;
  if (run.phase != ForwardPhase::train_forward) {
    const std::int64_t max_tokens = run.tokens + (run.phase == ForwardPhase::decode ? run.decode_steps : 0);
    out.kv_bytes = static_cast<double>(model::kv_positions_per_sequence(c, max_tokens)) * 2 *
                       static_cast<double>(b.num_kv_heads * b.head_dim) * e +
                   static_cast<double>(model::linear_state_elements_per_sequence(c)) * e;  // linear layers' states
  }
  // A decode run's largest call is the prefill of its prompt: its buffers serve the steps.
  const Rows rows = forward_rows(c, run.phase == ForwardPhase::train_forward ? run.phase : ForwardPhase::prefill, run.tokens);
  Workspace w;
  w.headroom = run.headroom;
  const model::DesignFeatures f = model::design_features(c.design.method);
  w.buffer("hidden_a", rows.all * static_cast<double>(b.hidden) * (f.wide_residual ? f.width_ratio() : 1.0), e);  // [R, D or D']
  layer_buffers(c, rows.all, e, w);
  linear_buffers(c, run, rows.all, w);
  method_buffers(c, rows, run, w);
  output_buffers(c, rows, run, w);
  // The call's int32 index tensors: token ids, positions (expanded and token index) of
  // all rows and of the final rows, final-row ids, loss-row ids, and (prefill) the rows
  // each cache keeps.
  w.exact("row_indices", 3 * rows.all + 3 * rows.final + 1 + (run.phase == ForwardPhase::train_forward ? 0 : rows.all), 4);
  const bool biases = b.attention_bias || b.output_bias || (b.moe && (b.moe->router_bias || b.moe->expert_bias));
  if (biases) w.buffer("ones", rows.all, e);  // bias column of a rank-1 product
  for (const auto& [name, bytes] : w.buffers) out.workspace_bytes += bytes;
  out.buffers = std::move(w.buffers);
  return out;
}

}  // namespace hdlab::simulator
