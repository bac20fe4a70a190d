// Device memory of a reference implementation's forward passes (forward_memory.hpp),
// from the tensors of the layer program's nodes. Shapes in the comments: R rows computed
// per layer pass, D hidden, D' the wide state of hyper-connections, V the padded vocabulary.
#include "hdlab/model/forward_memory.hpp"

#include <algorithm>
#include <cmath>

#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/layer_work.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::model {

namespace {

using Rows = ForwardRows;
using K = TensorKind;

// Whether the final copies' rows sit contiguously in the physical layout (the output
// path then reads them in place instead of gathering them into a buffer).
bool final_rows_contiguous(std::int64_t L, std::int64_t copies, Layout layout) {
  std::int64_t last = -1;
  for (std::int64_t i = 0; i < L; ++i) {
    const std::int64_t p = physical_of_logical(L, copies, layout, i * copies + copies - 1);
    if (last >= 0 && p != last + 1) return false;
    last = p;
  }
  return true;
}

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

// The sizes of the run's ops with every tensor in the implementation's one storage type.
OpDims run_dims(const Config& c, double element_bytes) {
  OpDims s = op_dims(c.effective, c.design.method);
  s.bytes = s.weight_el_bytes = s.kv_el_bytes = element_bytes;
  s.gdn.state_el_bytes = s.mamba.state_el_bytes = element_bytes;
  return s;
}

// The tensors of the run's largest call: a training forward, or the prefill of its prompt
// (a decode run prefills first; a step's rows are fewer). `per_layer` collects the uses
// of tensors kept per layer, the rest their largest use.
struct CallTensors {
  TensorPeaks peaks{};
  TensorUses per_layer;
};
CallTensors largest_call(const Config& c, const OpDims& s, const ForwardRun& run) {
  const PassShape shape{run.phase == ForwardPhase::train_forward ? PassPhase::train_forward : PassPhase::prefill, 1,
                        run.tokens};
  WorkOptions o;
  o.layout = run.layout;
  CallTensors out;
  TensorUses uses;
  for (const LayerRun& r : layer_runs(c.design.method, c.effective.num_layers)) {
    uses.clear();
    layer_tensors(s, layer_features(c.effective, r.layer), run_work(c, r, shape, o), uses);
    for (const TensorUse& u : uses)
      if (tensor_life(u.tensor) == TensorLife::per_layer && u.write) out.per_layer.push_back(u);
    add_peaks(uses, out.peaks);
  }
  uses.clear();
  outside_tensors(s, outside_work(c.design.method, shape), uses);
  add_peaks(uses, out.peaks);
  return out;
}

// Whether the runner puts a linear layer's rows into state order and back (runner_linear.cpp):
// each state's rows in logical order, states one after another. One state: unless the
// largest call's physical order is the logical one (interleaved, one copy per token, or a
// PHD prefill whose only hidden copies are the last token's, which every layout puts
// after the origins); HD intra layers' n states: unless the layout is stream-major.
bool linear_rows_permuted(const Config& c, const ForwardRun& run, double states) {
  const std::int64_t copies = copies_per_token(c.design.method);
  if (copies == 1) return false;
  if (states > 1) return run.layout != Layout::stream_major;
  const auto tail = prefill_tail(c.design.method, run.tokens);
  const bool last_token_tail = run.phase != ForwardPhase::train_forward && tail && *tail <= 1;
  return run.layout != Layout::interleaved && !last_token_tail;
}

// What the runner's linear-attention plans add to the nodes' tensors: each distinct state
// count's int32 row ids where the rows are permuted (and the rows that write the state
// under PHD's read-only hidden copies), and the permuted input and output [R, D]. Plans
// are a kernel-layout choice the nodes do not describe.
void linear_plan_buffers(const Config& c, const ForwardRun& run, double R, Workspace& w) {
  const Backbone& b = c.effective;
  std::vector<double> states;  // the distinct state counts: one plan each per call
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    const double s = b.is_linear_layer(l) ? recurrent_states(c.design.method, layer_role(c.design.method, b, l)) : 0;
    if (s > 0 && std::find(states.begin(), states.end(), s) == states.end()) states.push_back(s);
  }
  bool permuted = false;
  for (double s : states) {
    const bool p = linear_rows_permuted(c, run, s);
    permuted = permuted || p;
    if (p) w.exact("linear_row_ids", 2 * R, 4);
    if (design_features(c.design.method).hidden_copies_read_only) w.exact("linear_writes", R, 4);
  }
  if (permuted) {
    w.buffer("lin_in", R * static_cast<double>(b.hidden), run.element_bytes);
    w.buffer("lin_y", R * static_cast<double>(b.hidden), run.element_bytes);
  }
}

// Rows the layout gathers: from HD's first KV-mirror layer only the final stream's rows go
// on, into a buffer [final, D] unless the layout keeps them together; a training
// forward's loss rows likewise [final, D'] before the output path.
void gathers(const Config& c, const Rows& rows, const ForwardRun& run, double wide, Workspace& w) {
  const DesignFeatures f = design_features(c.design.method);
  const bool final_only = f.final_stream_mirror && c.effective.kv_mirror_layers > 0;
  const bool contiguous = final_rows_contiguous(run.tokens, f.copies, run.layout);
  const auto D = static_cast<double>(c.effective.hidden);
  if (final_only && !contiguous) w.buffer("hidden_b", rows.final * D, run.element_bytes);
  if (run.phase == ForwardPhase::train_forward && !final_only && !contiguous)
    w.buffer("out_rows", rows.final * wide, run.element_bytes);
}

// The workspace buffers of the nodes' tensors, each sized by its largest use. Routed
// experts: the nodes count the mean tokens per expert (R k / E under balanced routing),
// the buffers must hold the busiest expert's, which sits about sqrt(2 mu ln E) above the
// mean mu (Gaussian tail of the largest of E counts). A training pass runs its linear
// layers from workspace states (the largest layer's); other passes keep them as caches.
void tensor_buffers(const OpDims& s, const TensorPeaks& peaks, double R, bool train, Workspace& w) {
  const double mu = s.E > 0 ? R * s.top_k / s.E : 0;
  const double busiest = std::min(R, mu + std::sqrt(2 * mu * std::log(std::max(s.E, 2.0))));
  for (int i = 0; i < tensor_kind_count; ++i) {
    const auto k = static_cast<K>(i);
    const TensorPeak& p = peaks[static_cast<std::size_t>(i)];
    const bool state = k == K::linear_state || k == K::conv_state;
    if (p.elements <= 0 || k == K::token_ids || (tensor_life(k) != TensorLife::workspace && !(state && train)))
      continue;
    if (k == K::mtp_ids)
      w.exact(to_string(k), p.elements, p.el_bytes);
    else if (k == K::expert_x || k == K::expert_gate_up || k == K::expert_act || k == K::expert_out)
      w.buffer(to_string(k), busiest * p.width, p.el_bytes);
    else
      w.buffer(to_string(k), p.elements, p.el_bytes);
  }
}

}  // namespace

ForwardRows forward_rows(const Config& c, ForwardPhase phase, std::int64_t L) {
  const std::int64_t K = copies_per_token(c.design.method);
  if (phase == ForwardPhase::decode) return {static_cast<double>(K), 1};
  if (phase == ForwardPhase::prefill) {
    // PHD partial prefill: the L origins plus the hidden copies of the last token (plain)
    // or of the last chunk's tokens (CSWA) (methods.md section 2).
    if (const auto tail = prefill_tail(c.design.method, L))
      return {static_cast<double>(L + (K - 1) * *tail), static_cast<double>(*tail)};
  }
  return {static_cast<double>(K * L), static_cast<double>(L)};
}

double cache_capacity_bytes(const Config& c, std::int64_t max_tokens, double element_bytes) {
  const OpDims s = run_dims(c, element_bytes);
  const Method& m = c.design.method;
  std::vector<std::int64_t> slot_layer;  // the layer of each cache slot
  for (const LayerRun& r : layer_runs(m, c.effective.num_layers)) {
    if (static_cast<std::size_t>(r.cache_slot) >= slot_layer.size())
      slot_layer.resize(static_cast<std::size_t>(r.cache_slot) + 1, -1);
    slot_layer[static_cast<std::size_t>(r.cache_slot)] = r.layer;
  }
  double bytes = 0;
  for (const std::int64_t l : slot_layer) {
    if (l < 0) continue;
    const LayerView v = layer_view(c.effective, m, l);
    const auto entries = static_cast<double>(kv_cache_positions(layer_mask(c, l, 1), max_tokens));
    bytes += layer_cache(s, v.mixer, entries, recurrent_states(m, v.role)).bytes();
  }
  return bytes;
}

namespace {

// Elements the runner uploads beyond the parameters: VWN's dynamic hyper-connections keep
// their two scales (S_a, S_b) as one per coefficient column, 2m + n, for the kernel
// (executor/src/weights_upload.cpp), two hyper-connections per layer.
double uploaded_scale_elements(const Config& c) {
  const DesignFeatures f = design_features(c.design.method);
  if (!f.wide_residual || !f.dynamic_mixing) return 0;
  return 2.0 * static_cast<double>(c.effective.num_layers) * static_cast<double>(2 * f.width_m + f.width_n - 2);
}

}  // namespace

ForwardMemory forward_memory(const Config& c, const ForwardRun& run) {
  ForwardMemory out;
  const double e = run.element_bytes;
  const Backbone& b = c.effective;
  out.weight_bytes = (static_cast<double>(count_params(c).total) + uploaded_scale_elements(c)) * e;
  if (run.phase != ForwardPhase::train_forward)
    out.kv_bytes = cache_capacity_bytes(c, run.tokens + (run.phase == ForwardPhase::decode ? run.decode_steps : 0), e);
  // A decode run's largest call is the prefill of its prompt: its buffers serve the steps.
  const bool train = run.phase == ForwardPhase::train_forward;
  const Rows rows = forward_rows(c, train ? run.phase : ForwardPhase::prefill, run.tokens);
  const OpDims s = run_dims(c, e);
  const CallTensors call = largest_call(c, s, run);
  Workspace w;
  w.headroom = run.headroom;
  tensor_buffers(s, call.peaks, rows.all, train, w);
  for (const TensorUse& u : call.per_layer) w.exact(to_string(u.tensor), u.elements(), u.el_bytes);
  if (b.num_linear_layers() > 0) linear_plan_buffers(c, run, rows.all, w);
  gathers(c, rows, run, s.vwn ? s.vwn_n / s.vwn_m * s.D : s.D, w);
  // The call's int32 index tensors: token ids, positions (expanded and token index) of
  // all rows and of the final rows, final-row ids, loss-row ids, and (prefill) the rows
  // each cache keeps.
  w.exact("row_indices", 3 * rows.all + 3 * rows.final + 1 + (train ? 0 : rows.all), 4);
  const bool biases = b.attention_bias || b.output_bias || (b.moe && (b.moe->router_bias || b.moe->expert_bias));
  if (biases) w.buffer("ones", rows.all, e);  // bias column of a rank-1 product
  for (const auto& [name, bytes] : w.buffers) out.workspace_bytes += bytes;
  out.buffers = std::move(w.buffers);
  return out;
}

}  // namespace hdlab::model
