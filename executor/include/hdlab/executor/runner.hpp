#pragma once
// The runner: real forward passes of every design (methods.md), built from Backend ops,
// with every op timed under its model::OpKind name per layer group, so measurements line
// up op by op with the simulator's op tables.
//
// What each call executes (L = tokens of the call, c = copies per token: HD n, PHD K,
// else 1; "rows" are positions computed, in the physical order of the layout):
//  - train_forward(tokens): all c*L positions of every layer pass (HD mirror layers:
//    queries, o_proj and FFN on the L final-stream rows, K/V on all c*L); logits on the
//    loss rows only (HD: final stream, PHD: last copy, else every token). No backward.
//    VWN with MTP also runs the MTP branch (needs the token after the last one).
//  - prefill(prompt): HD / baseline / VWN / looped all c*L positions; PHD plain the L
//    origins + the K-1 hidden copies of the last token, PHD-SWA all K*L, PHD-CSWA the L
//    origins + the hidden copies of the last chunk's tokens; logits of the last token's
//    loss row. Then keeps in the KV cache exactly what later tokens can see.
//  - decode_step(token): the new token's c positions in one forward (HD mirror layers:
//    one query row), reading the KV cache; logits of its loss row.
// KV cache kept per layer (and per loop iteration with per-iteration KV): every entry for
// full and intra layers; the positions a later query can still see for sliding / local
// layers (t > next_position - window); PHD origins plus the last W hidden tokens (SWA)
// or the last W of the current chunk (CSWA). Looped shared KV: one cache per recurrent
// layer, each iteration overwriting the current token's entries (so later tokens see the
// last iteration's K/V).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hdlab/executor/backend.hpp"
#include "hdlab/executor/weights.hpp"
#include "hdlab/model/design.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/ops.hpp"

namespace hdlab::executor {

enum class Phase { prefill, decode, train_forward };
const char* to_string(Phase p);          // "prefill", "decode", "train-forward"
Phase phase_from_string(const std::string& s);  // throws model::ConfigError

struct RunOptions {
  ScalarType dtype = ScalarType::f32;   // CPU: f32 only; CUDA: f32 or bf16
  // Physical layout of train / prefill rows; empty: model::default_layout(design)
  // (PHD: phd_split; else interleaved). HD stream_major also keeps intra layers' decode
  // KV per stream and runs one attention call per stream.
  std::optional<model::Layout> layout;
  // MoE: the top-k weights divided by their sum (Qwen3-MoE, DeepSeek-V3 do); the
  // backbone profiles do not say, so it is a run option.
  bool normalize_topk = true;
  bool profile_ops = true;  // time every op (else only whole calls)
};

// One op summed over the layers of a group and their passes, in one call.
struct OpMeasure {
  double ms = 0;
  double flops = 0;           // executed, counted as the simulator counts them (op_table.hpp)
  double calls = 0;           // backend ops issued
  double pairs_exact = 0;     // attention: visible (query, key) pairs
  double pairs_executed = 0;  // attention: pairs inside the tiles the kernel ran
  OpMeasure& operator+=(const OpMeasure& o);
};
using OpTimes = std::array<OpMeasure, model::op_kind_count>;

// Layers with the same signature, grouped as the simulator groups them (plan_layers).
struct LayerGroup {
  std::string label;             // "full", "intra", "local", "sliding w=512", "phd-swa", + " moe", " kv-mirror", ...
  std::int64_t first_layer = 0;  // representative layer
  std::int64_t layers = 0;       // distinct layers (weights)
  std::int64_t passes = 0;       // layer runs per forward (recurrent: x iterations)
};

struct StepProfile {
  double total_ms = 0;           // the whole call on the backend, host setup excluded
  double setup_ms = 0;           // host: rows, masks and tile plans of the call
  std::int64_t rows = 0;         // positions computed per layer pass (before KV-mirror layers)
  std::int64_t loss_rows = 0;    // rows that got logits
  std::int64_t context = 0;      // tokens in the sequence after the call
  std::vector<OpTimes> groups;   // per LayerGroup
  OpTimes outside{};             // embedding, injection, output path, MTP
  OpMeasure op_total(model::OpKind k) const;
  double flops_total() const;
};

struct ForwardResult {
  Tensor logits;      // [loss rows, V] (padded vocabulary)
  Tensor hidden;      // [loss rows, D or D']: the last residual state, before the output path
  Tensor mtp_logits;  // VWN MTP (train_forward): [L, V]
};

// One residual state as a call computed it, handed to a hidden-state observer.
struct HiddenState {
  std::int64_t layer = -1;     // -1: the embeddings; else the layer whose output this is
  std::int64_t iteration = 0;  // recurrent layers of a looped design: the block's pass (0-based); else 0
  bool recurrent = false;      // the layer runs once per loop iteration
  const Tensor& x;             // [rows, D or D'] (VWN: the wide state), a view valid during the callback only
  std::span<const std::int64_t> positions;  // logical position of each row (token * copies + copy), physical order
};
using HiddenObserver = std::function<void(const HiddenState&)>;

class Runner {
 public:
  // `weights` must come from upload_weights(backend, config, ...). Throws
  // model::ConfigError for what the runner does not execute (see weight_specs) and
  // BackendError for a dtype the backend lacks.
  Runner(Backend& backend, model::Config config, ModelWeights weights, RunOptions options = {});
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  const model::Config& config() const;
  const RunOptions& options() const;
  model::Layout layout() const;
  const std::vector<LayerGroup>& groups() const;
  ModelWeights& weights();
  Backend& backend() const;
  std::int64_t copies() const;          // positions per token: HD n, PHD K, else 1
  std::int64_t residual_width() const;  // columns of the residual state: D, or D' = D n/m under VWN

  // Called with the embeddings and with each layer run's output, in execution order,
  // during every call while set (default: none; unset, a call pays one test per layer).
  // The observer's time counts in the call's profile: set it for calls not measured.
  void set_hidden_observer(HiddenObserver observer);

  // Results are views of the runner's workspace: valid until the next call.
  // `next_token`: the token after the last one (VWN MTP mixes its embedding); ignored otherwise.
  ForwardResult train_forward(std::span<const std::int32_t> tokens, std::optional<std::int32_t> next_token = {});
  // Starts a sequence: KV caches sized for `max_tokens` tokens (prompt + decode steps).
  ForwardResult prefill(std::span<const std::int32_t> prompt, std::int64_t max_tokens);
  ForwardResult decode_step(std::int32_t token);

  std::int64_t sequence_tokens() const;  // tokens of the current sequence
  std::int64_t kv_entries() const;       // live KV entries over all caches (positions)
  std::size_t kv_bytes() const;          // bytes of the KV caches allocated
  const StepProfile& last_profile() const;
  // The layer program of the last call: every layer run (layer, loop iteration, KV cache
  // slot) with its op nodes built for the rows, attention pairs and KV entries the call
  // ran; the profile's FLOPs per op are these nodes' (model/layer_program.hpp).
  const model::PassProgram& last_program() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Memory of a run, estimated from the config before anything is allocated: the layer
// program's (model/forward_memory.hpp), the workspace with the 2% of the whole its
// prediction is validated to, as an upper bound (the CPU attention's per-thread scratch
// and cuBLAS's workspace are not included).
struct RunShape {
  Phase phase = Phase::prefill;
  std::int64_t tokens = 0;        // training length, prompt length, or decode context
  std::int64_t decode_steps = 0;  // decode: steps after the prompt
};
struct MemoryEstimate {
  std::size_t weights = 0, kv_cache = 0, activations = 0;
  std::size_t total() const { return weights + kv_cache + activations; }
};
MemoryEstimate estimate_memory(const model::Config& c, const RunShape& shape, const RunOptions& o);
// Throws OutOfMemoryError (needed, available) when the estimate would not fit now.
void require_run_fits(const Backend& backend, const model::Config& c, const RunShape& shape, const RunOptions& o);

// The layer groups of a config (labels and counts as in StepProfile), and the group of
// every layer.
std::vector<LayerGroup> layer_groups(const model::Config& c, std::vector<int>* group_of_layer = nullptr);

}  // namespace hdlab::executor
