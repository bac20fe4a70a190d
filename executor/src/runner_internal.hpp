#pragma once
// The runner's inside: workspace buffers, KV caches, the op profiler, and the state of
// one pass. Shared by runner*.cpp only.
#include <chrono>
#include <deque>
#include <functional>
#include <map>

#include "hdlab/executor/attention_mask.hpp"
#include "hdlab/executor/runner.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::executor::detail {

using model::OpKind;


// Named, reusable buffers: a call takes views of the size it needs, so the same memory
// serves every layer and a repeated call allocates nothing (steady-state timings).
enum class Buf {
  hidden_a, hidden_b, inject_e, normed, q, k, v, attn, sub_out, gate_up, act, router_logits, route_ids,
  route_weights, moe_ids, moe_weights, expert_x, expert_gate_up, expert_act, expert_out, ghc_hn, ghc_alpha, ghc_beta,
  ghc_x, ghc_carry, embed_tmp, out_rows, out_norm, out_reduce, out_final, logits, mtp_e, mtp_mix, mtp_norm, mtp_reduce,
  mtp_final, mtp_logits, kv_scratch, kv_ids,
  // gated attention output; gated shared experts (runner_layers.cpp)
  attn_gate, shared_out, shared_gate,
  // linear-attention layers (runner_linear.cpp)
  lin_in, lin_qkv, lin_z, lin_ba, lin_conv, lin_o, lin_y, lin_state, lin_conv_state,
  // multi-head latent attention (runner_mla.cpp)
  mla_q_latent, mla_latent, mla_rope_key, mla_entries, mla_kv, mla_keys, mla_q_absorbed, mla_o_latent,
  count_
};

class Workspace {
 public:
  explicit Workspace(Backend& b) : backend_(b) {}
  // A view of `shape` elements of `type` in buffer `which` (grown when too small; the
  // old allocation stays alive as long as views of it do).
  Tensor get(Buf which, Shape shape, ScalarType type);
  std::size_t bytes() const;

 private:
  Backend& backend_;
  std::map<std::pair<int, int>, Tensor> buffers_;  // (buffer, type) -> flat storage
};

// Wraps the mask of a cache or a pass: positions of the rows in row order.
class KvCache {
 public:
  // values false: a keys-only cache whose entries are also its values (multi-head latent
  // attention's [latent | rope key] entries: values() is keys(), append's v is ignored).
  void reset(Backend& b, std::int64_t capacity, std::int64_t kv_heads, std::int64_t head_dim, ScalarType type,
             bool values = true);
  bool empty() const { return positions_.empty(); }
  std::int64_t capacity() const { return k_.defined() ? k_.dim(0) : 0; }
  // Forgets every entry, keeping the memory (a new sequence of the same size).
  void clear() {
    start_ = 0;
    positions_.clear();
  }
  std::int64_t live() const { return static_cast<std::int64_t>(positions_.size()); }
  const std::vector<std::int64_t>& positions() const { return positions_; }
  Tensor keys() const { return k_.slice_rows(start_, live()); }
  Tensor values() const { return (v_.defined() ? v_ : k_).slice_rows(start_, live()); }
  std::size_t bytes() const { return (k_.defined() ? k_.bytes() : 0) + (v_.defined() ? v_.bytes() : 0); }

  // Appends rows k, v [r, G, hd] at logical positions `pos`.
  void append(Backend& b, const Tensor& k, const Tensor& v, const std::vector<std::int64_t>& pos);
  // Overwrites the last k.dim(0) rows (looped shared KV: a later iteration's K/V).
  void overwrite_tail(Backend& b, const Tensor& k, const Tensor& v);
  // Appends rows `ids` (i32, indices into k_all / v_all [R, G, hd]) at positions `pos`.
  void append_gathered(Backend& b, const Tensor& k_all, const Tensor& v_all, const Tensor& ids,
                       const std::vector<std::int64_t>& pos);
  // Drops the entries `keep` rejects (rows after the first dropped one move down
  // through `ws`; leading ones just advance the start).
  void retain(Backend& b, Workspace& ws, const std::function<bool(std::int64_t)>& keep);

 private:
  void make_room(Backend& b, std::int64_t rows);
  Tensor k_, v_;  // [capacity, G, hd]; v_ undefined in a keys-only cache
  std::int64_t start_ = 0;
  std::vector<std::int64_t> positions_;
};

// Times ops under (group, OpKind): backend timers started and stopped around each op,
// read at the end of the call (CUDA events need not be waited for op by op). The FLOPs
// of the ops are not counted here: they come from the call's layer program (charge_flops).
class Profiler {
 public:
  Profiler(Backend& b, bool per_op) : backend_(b), per_op_(per_op) {}
  void begin_call(std::size_t groups);
  // Starts timing op `kind` of group `group` (-1: outside the layers), `calls` backend ops.
  void start(int group, OpKind kind, double calls = 1);
  void stop();
  // Adds to the current op without timing (attention pair counts, backend calls).
  OpMeasure& current();
  void end_call(StepProfile& out);
  bool per_op() const { return per_op_; }

 private:
  struct Record {
    int group;
    OpKind kind;
    EventTimer* timer;
  };
  OpMeasure& slot(int group, OpKind kind);
  Backend& backend_;
  bool per_op_;
  std::vector<std::unique_ptr<EventTimer>> timers_;
  std::size_t used_ = 0;
  std::vector<Record> records_;
  std::unique_ptr<EventTimer> total_;
  StepProfile step_;
  int open_group_ = 0;
  OpKind open_kind_ = OpKind::embedding;
  bool open_ = false;
};

// RAII op timing.
class OpScope {
 public:
  OpScope(Profiler& p, int group, OpKind kind, double calls = 1) : p_(p) { p_.start(group, kind, calls); }
  ~OpScope() { p_.stop(); }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  Profiler& p_;
};

// LRU of tile plans keyed by the mask's content.
class PlanCache {
 public:
  std::shared_ptr<const TilePlan> get(const AttentionMask& mask);

 private:
  struct Entry {
    std::uint64_t hash = 0;  // of the spec and both position lists: most misses end here
    AttentionMask mask;
    std::shared_ptr<const TilePlan> plan;
  };
  std::deque<Entry> entries_;
};

enum class PassKind { train, prefill, decode };

// One attention call of one layer pass, decided in setup (host) before the timed run.
struct AttentionCall {
  std::shared_ptr<const TilePlan> plan;
  int stream = -1;  // HD stream-major decode of an intra layer: the stream; -1: all rows
};

// How a linear-attention layer run goes through its recurrent states (runner_linear.cpp):
// the pass's rows put in state order (each state's rows by logical position, states one
// after another) and back, and which rows write the states.
struct LinearPlan {
  std::int64_t states = 1;
  std::vector<std::int64_t> begin;  // states + 1 offsets into the state-ordered rows
  bool permuted = false;            // state order differs from the physical one
  Tensor to_state, to_physical;     // i32 gather ids: state-ordered row i is physical row to_state[i], and back
  Tensor writes;                    // i32 [rows] in state order (PHD linear_state origins); undefined: all write
};

// One linear-attention layer's memory of one state sequence: the recurrent state and the
// conv's last K-1 inputs, in the cache's type.
struct LinearState {
  Tensor state;  // Gated DeltaNet [hv, dk, dv]; Mamba-2 [H, P, N]
  Tensor conv;   // [K-1, channels]: Gated DeltaNet 2 hk dk + hv dv, Mamba-2 H P + 2 G N
};

// A linear layer's sizes: its state's shape, the conv's channels and taps.
struct LinearShape {
  Shape state;
  std::int64_t channels = 0, kernel = 0;
};

// Rows of a prefill a cache keeps: indices into the pass rows (i32 on the device) and
// their positions, sorted by position.
struct CommitRows {
  std::vector<std::int64_t> positions;
  std::vector<std::int32_t> host_ids;
  Tensor ids;
};

// Embedding lookups of one table into rows first, first + stride, ... of the hidden state.
struct EmbedGroup {
  int table = 0;
  std::int64_t id_offset = 0;  // into Pass::embed_ids
  std::int64_t count = 0;
  RowMap map;
};

// The rows of one call and what setup prepared for it.
struct Pass {
  PassKind kind = PassKind::train;
  std::int64_t tokens = 0;                   // tokens in the sequence including this call
  std::vector<std::int64_t> rows;            // logical positions, physical order
  std::vector<std::int64_t> final_rows;      // indices into rows of the final copy's rows, token order
  std::vector<std::int64_t> loss_rows;       // indices into final_rows that get logits
  std::vector<std::int32_t> token_of_row;    // token id per row
  std::vector<std::vector<AttentionCall>> calls;  // per layer run, in execution order
  std::size_t next_call = 0;                 // the next layer run's calls
  std::vector<EmbedGroup> embed_groups;
  Tensor embed_ids;                          // i32 token ids in embed_groups order
  Tensor pos_rows, pos_rows_token;           // i32 RoPE positions of all rows: logical, token index
  Tensor pos_final, pos_final_token;         // the same for the loss rows
  Tensor final_ids;                          // i32 final_rows (KV-mirror layers keep only these rows)
  Tensor loss_ids;                           // i32 rows of the last hidden state that get logits
  std::vector<CommitRows> commits;           // prefill: what caches keep
  std::vector<int> commit_seq;               // commits in execution order (run, stream)
  std::size_t next_commit = 0;
  std::vector<std::int32_t> mtp_tokens;      // VWN MTP: the token after each loss row
  Tensor mtp_ids;
  // The call's layer program (setup): what each layer run computes (rows, attention pairs,
  // KV entries) and its op nodes, whose FLOPs the profile reports.
  std::vector<model::LayerWork> work;        // per layer run, in execution order
  model::PassProgram program;
  // Linear-attention layer runs: the plan each uses (index into linear_plans; -1 for an
  // attention layer), per layer run in execution order, advanced with next_call.
  std::vector<LinearPlan> linear_plans;
  std::vector<int> linear_plan_of_run;
};

// Adds the FLOPs of every node of `program` to the ops of `out` (layer runs under their
// layer's group, the rest outside).
void charge_flops(const model::PassProgram& program, const std::vector<int>& group_of_layer, StepProfile& out);

}  // namespace hdlab::executor::detail

namespace hdlab::executor {

using model::OpKind;

// One layer run in execution order (looped: the recurrent layers once per iteration).
using model::LayerRun;

struct Runner::Impl {
  Impl(Backend& b, model::Config c, ModelWeights weights, RunOptions o);

  Backend& backend;
  model::Config config;
  ModelWeights w;
  RunOptions opt;
  model::Layout layout = model::Layout::interleaved;
  std::vector<LayerGroup> groups;
  std::vector<int> group_of_layer;
  detail::Workspace ws;
  detail::Profiler prof;
  detail::PlanCache plans;
  StepProfile last;
  model::PassProgram last_program;  // of the last call (Runner::last_program)
  HiddenObserver observer;  // Runner::set_hidden_observer; empty: none

  // Shapes (methods.md names).
  std::int64_t copies = 1, D = 0, wide = 0, H = 0, G = 0, hd = 0, V = 0;
  model::OpDims dims;  // the sizes of the layer program's ops
  float scale = 1;       // softmax scale: 1/sqrt(scored dims), times MLA's YaRN factor
  double theta = 10000;  // RoPE base: the backbone's, or the design's
  // RoPE frequencies (model::rotary_frequencies) of the backbone's scaling, and plain ones
  // for the layers a full-attention-only scaling leaves alone (OLMo 3, Gemma 3). Dynamic
  // and LongRoPE depend on how many positions the sequence reaches: set_rope_sequence
  // recomputes them at each sequence start.
  model::RotaryFrequencies rope_freqs, rope_plain;
  model::DesignFeatures features;                 // what the design changes (model::design_features)
  std::vector<model::LayerAttentionRole> roles;    // per layer (model::layer_role)
  std::vector<LayerRun> schedule;
  std::vector<std::int64_t> mirror_of_source;  // source layer x -> its mirror layer, or -1

  // Sequence state.
  std::vector<std::int32_t> tokens;
  std::int64_t max_tokens = 0;
  std::vector<std::vector<detail::KvCache>> caches;   // [cache slot][stream (stream-major intra) or 0]
  std::vector<std::vector<detail::LinearState>> linear_states;  // [cache slot][state]; linear layers only
  std::vector<Tensor> mirror_inputs;          // per layer: a mirror layer's normed source input (a view)
  std::vector<Tensor> mirror_storage;         // their flat allocations
  Tensor ones;                                // [rows, 1] of ones: biases added by a rank-1 GEMM
  Tensor stream_ones;                         // [1, n, 1] f32 of ones: a summed readout adds the slots

  // ---- structure (runner.cpp) ----
  bool hd_mirror_queries(std::int64_t l) const;  // HD KV mirror: only the final stream queries
  bool per_stream_kv(std::int64_t l) const;      // stream-major HD intra layer: a cache per stream
  bool token_index_rope(std::int64_t l) const;
  model::MaskSpec mask_of(std::int64_t l, std::int64_t tokens) const;
  bool keep_entry(std::int64_t l, std::int64_t tokens_so_far, std::int64_t position) const;
  std::int64_t cache_capacity(std::int64_t l) const;
  void reset_caches(std::int64_t max_tokens);
  // A sequence of `tokens` tokens starts (a training forward's, or a prefill's max_tokens):
  // its positions run below tokens x copies.
  void set_rope_sequence(std::int64_t sequence_tokens);

  // ---- a call (runner.cpp) ----
  detail::Pass make_pass(detail::PassKind kind, std::vector<std::int64_t> rows, std::int64_t tokens_so_far);
  void upload_rows(detail::Pass& p);
  void plan_attention(detail::Pass& p);
  void plan_commits(detail::Pass& p, const LayerRun& r);
  ForwardResult run(detail::Pass& p);
  // Hands x (after the embeddings: r == nullptr, or after layer run r) to the observer.
  void observe(const detail::Pass& p, const LayerRun* r, const Tensor& x, bool final_only);

  // ---- ops (runner_layers.cpp) ----
  Tensor embed(const std::vector<detail::EmbedGroup>& groups, const Tensor& ids, std::int64_t rows, detail::Buf out,
               model::OpKind kind);
  void layer(detail::Pass& p, const LayerRun& r, Tensor& x, bool& final_only);
  bool ends_final_only() const;  // the last layer keeps only the final stream's rows
  void attention_sublayer(detail::Pass& p, const LayerRun& r, const Tensor& in, const Tensor& out, bool final_only);
  void ffn_sublayer(const LayerRun& r, const Tensor& in, const Tensor& out);
  void moe_ffn(const LayerRun& r, const Tensor& in, const Tensor& out);
  void shared_experts(const LayerRun& r, const Tensor& in, const Tensor& out);
  std::vector<std::int64_t> route(const Tensor& ids, const Tensor& weights, const Tensor& moe_ids, const Tensor& moe_w,
                                  std::int64_t experts, std::int64_t k);
  void residual_add(int group, const Tensor& x, const Tensor& y);
  Tensor select_rows(const Tensor& x, const Tensor& ids, const std::vector<std::int64_t>& idx, detail::Buf buf,
                     int group, model::OpKind kind);
  void ghc_sublayer(detail::Pass& p, const LayerRun& r, Tensor& h, bool attention);
  void inject(detail::Pass& p, Tensor& x, const Tensor& e);
  ForwardResult output(detail::Pass& p, const Tensor& x, bool final_only);
  Tensor output_path(const Tensor& rows, detail::Buf norm, detail::Buf reduce, detail::Buf fin, detail::Buf logits,
                     model::OpKind kind);
  void mtp(detail::Pass& p, const Tensor& x_loss, ForwardResult& res);

  // ---- linear attention: Gated DeltaNet and Mamba-2 (runner_linear.cpp) ----
  std::int64_t linear_states_of(std::int64_t l) const;  // independent states of linear layer l
  detail::LinearShape linear_shape(std::int64_t l) const;
  void reset_linear_states(const std::vector<std::int64_t>& slot_layer);
  std::size_t linear_state_bytes() const;
  void plan_linear(detail::Pass& p, const LayerRun& r);
  void linear_sublayer(detail::Pass& p, const LayerRun& r, const Tensor& in, const Tensor& out);
  void gdn_mixer(detail::Pass& p, const LayerRun& r, const detail::LinearPlan& plan, const Tensor& x, const Tensor& y);
  void mamba2_mixer(detail::Pass& p, const LayerRun& r, const detail::LinearPlan& plan, const Tensor& x,
                    const Tensor& y);
  // One state's conv and recurrence over its rows [first, first + n); writes: the rows'
  // write flags (PHD linear_state origins) or undefined.
  using LinearScan = std::function<void(const detail::LinearState& state, std::int64_t first, std::int64_t n,
                                        const Tensor& writes)>;
  void scan_states(detail::Pass& p, const LayerRun& r, const detail::LinearPlan& plan, const LinearScan& scan);

  // ---- attention internals (runner_attention.cpp) ----
  void rotate(const detail::Pass& p, std::int64_t l, const Tensor& q3, const Tensor& k3, bool final_only);
  void attn_post_norm(std::int64_t l, const Tensor& out);
  // entries (MLA): what the cache keeps of the pass's rows instead of k and v.
  void attend(detail::Pass& p, const LayerRun& r, const Tensor& q, const Tensor& k, const Tensor& v,
              const Tensor& out, bool final_only, const Tensor& entries = {});
  // ---- multi-head latent attention (runner_mla.cpp) ----
  void mla_sublayer(detail::Pass& p, const LayerRun& r, const Tensor& normed, const Tensor& kv_in, const Tensor& out,
                    bool final_only);
  void mla_expanded(detail::Pass& p, const LayerRun& r, const Tensor& q, const Tensor& latent, const Tensor& rope_key,
                    const Tensor& entries, const Tensor& att, bool final_only);
  void mla_absorbed(detail::Pass& p, const LayerRun& r, const Tensor& q, const Tensor& entries, const Tensor& att,
                    bool final_only);
  void project(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y);
  std::vector<std::pair<AttentionMask, int>> attention_masks(const detail::Pass& p, const LayerRun& r,
                                                             bool final_only) const;
};

}  // namespace hdlab::executor
