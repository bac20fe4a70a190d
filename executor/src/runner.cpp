// The runner's structure and calls: which rows a call computes for each design and
// phase, what the KV caches keep, and the host setup (positions, embedding groups, masks
// and tile plans) done before the timed part of a call.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "hdlab/model/error.hpp"
#include "hdlab/model/layer_work.hpp"
#include "runner_internal.hpp"

namespace hdlab::executor {

using detail::Buf;
using detail::Pass;
using detail::PassKind;
using model::MaskSpec;

Runner::Impl::Impl(Backend& b, model::Config c, ModelWeights weights, RunOptions o)
    : backend(b), config(std::move(c)), w(std::move(weights)), opt(o), ws(b), prof(b, o.profile_ops) {
  (void)weight_specs(config);  // refuses what the runner does not execute
  if (!backend.supports(BackendOp::gemm, opt.dtype) || !backend.supports(BackendOp::attention, opt.dtype))
    throw BackendError(backend.name() + " backend does not run models in " + to_string(opt.dtype));
  layout = opt.layout.value_or(model::default_layout(config.design));
  groups = layer_groups(config, &group_of_layer);
  const model::Backbone& bb = config.effective;
  D = bb.hidden;
  H = bb.num_heads;
  G = bb.num_kv_heads;
  hd = bb.head_dim;
  V = bb.padded_vocab();
  theta = bb.rope_theta;
  wide = D;
  const model::Method& m = config.design.method;
  copies = model::copies_per_token(m);
  features = model::design_features(m);
  if (features.rope_theta > 0) theta = features.rope_theta;
  rope_freqs = model::rotary_frequencies(bb, theta, 0);  // dynamic, LongRoPE: again per sequence
  rope_plain.inv_freq = model::plain_inv_freq(theta, model::rotary_dims(bb));
  // 1/sqrt of the scored dims (MLA: qk_nope + qk_rope), times DeepSeek's YaRN mscale^2 (MLA)
  scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(model::attention_shape(bb).qk_head_dim)) *
                             rope_freqs.softmax_factor);
  wide = features.residual_width(D);
  for (std::int64_t l = 0; l < bb.num_layers; ++l) roles.push_back(model::layer_role(m, bb, l));
  dims = model::op_dims(bb, m);
  schedule = model::layer_runs(m, bb.num_layers);
  mirror_of_source.assign(static_cast<std::size_t>(bb.num_layers), -1);
  for (std::int64_t l = 0; l < bb.num_layers; ++l)
    if (bb.is_mirrored(l)) mirror_of_source[static_cast<std::size_t>(bb.mirror_source(l))] = l;
  mirror_inputs.resize(static_cast<std::size_t>(bb.num_layers));
  mirror_storage.resize(static_cast<std::size_t>(bb.num_layers));
}

// ---- structure ---------------------------------------------------------------------------

bool Runner::Impl::hd_mirror_queries(std::int64_t l) const {
  return roles[static_cast<std::size_t>(l)].final_queries_only;
}

bool Runner::Impl::ends_final_only() const {
  for (std::int64_t l = 0; l < config.effective.num_layers; ++l)
    if (hd_mirror_queries(l)) return true;
  return false;
}

bool Runner::Impl::per_stream_kv(std::int64_t l) const {
  return features.streams && copies > 1 && layout == model::Layout::stream_major &&
         roles[static_cast<std::size_t>(l)].stream_kind == model::HdLayerKind::intra;
}

bool Runner::Impl::token_index_rope(std::int64_t l) const {
  return roles[static_cast<std::size_t>(l)].token_index_rope;
}

MaskSpec Runner::Impl::mask_of(std::int64_t l, std::int64_t tokens_so_far) const {
  return model::layer_mask(config, l, tokens_so_far);
}

bool Runner::Impl::keep_entry(std::int64_t l, std::int64_t tokens_so_far, std::int64_t t) const {
  const MaskSpec m = mask_of(l, tokens_so_far);
  const std::int64_t next = tokens_so_far * m.copies;  // first position of the next token
  switch (m.kind) {
    case MaskSpec::Kind::causal:  // chunked: the next token's chunk only
      return m.chunk == 0 || (t / m.copies) / m.chunk == tokens_so_far / m.chunk;
    case MaskSpec::Kind::intra: return true;
    case MaskSpec::Kind::sliding: return t > next - m.window;
    case MaskSpec::Kind::phd: {
      const std::int64_t K = m.copies, token = t / K, j = t % K;
      if (j == 0) return true;
      if (m.phd_variant == model::PhdVariant::plain) return false;
      const std::int64_t rank = token * (K - 1) + (j - 1), next_rank = tokens_so_far * (K - 1);
      if (rank < next_rank - m.phd_W) return false;
      return m.phd_variant == model::PhdVariant::swa || token / m.phd_C == tokens_so_far / m.phd_C;
    }
  }
  return true;
}

std::int64_t Runner::Impl::cache_capacity(std::int64_t l) const {
  const std::int64_t all = model::kv_cache_positions(mask_of(l, 1), max_tokens);
  return per_stream_kv(l) ? all / copies : all;  // one cache per stream
  return all;
}

void Runner::Impl::set_rope_sequence(std::int64_t sequence_tokens) {
  const model::RopeScalingKind k = config.effective.rope_scaling.kind;
  if (k == model::RopeScalingKind::dynamic || k == model::RopeScalingKind::longrope)
    rope_freqs = model::rotary_frequencies(config.effective, theta, sequence_tokens * copies);
}

void Runner::Impl::reset_caches(std::int64_t max) {
  max_tokens = max;
  std::vector<std::int64_t> slot_layer;
  for (const LayerRun& r : schedule) {
    const int s = static_cast<int>(r.cache_slot);
    if (static_cast<std::size_t>(s) >= slot_layer.size()) slot_layer.resize(static_cast<std::size_t>(s) + 1, -1);
    slot_layer[static_cast<std::size_t>(s)] = r.layer;
  }
  caches.resize(slot_layer.size());
  reset_linear_states(slot_layer);  // linear-attention layers keep states, no KV cache
  for (std::size_t s = 0; s < slot_layer.size(); ++s) {
    const std::int64_t l = slot_layer[s];
    if (!config.effective.is_attention_layer(l)) {  // a linear layer's states, or an FFN-only layer: no cache
      caches[s].clear();
      continue;
    }
    caches[s].resize(per_stream_kv(l) ? static_cast<std::size_t>(copies) : 1);
    // A repeated prefill of the same size reuses the memory (no fresh pages to fault in).
    for (auto& c : caches[s])
      if (c.capacity() == cache_capacity(l)) c.clear();
      else if (config.effective.mla)  // MLA: the [latent | rope key] entries, keys only (runner_mla.cpp)
        c.reset(backend, cache_capacity(l), 1, model::attention_shape(config.effective).kv_cache_per_token, opt.dtype,
                false);
      else c.reset(backend, cache_capacity(l), G, hd, opt.dtype);
  }
}


// ---- a call ------------------------------------------------------------------------------

namespace {

Tensor upload_i32(Backend& b, const std::vector<std::int32_t>& v) {
  Tensor t = b.allocate({static_cast<std::int64_t>(v.size())}, ScalarType::i32);
  if (!v.empty()) b.upload(t, v);
  return t;
}

// Indices of `rows` that form an arithmetic progression: (first, stride), or stride 0.
RowMap progression(const std::vector<std::int64_t>& rows) {
  if (rows.empty()) return {0, 1};
  const std::int64_t stride = rows.size() > 1 ? rows[1] - rows[0] : 1;
  if (stride < 1) return {rows[0], 0};
  for (std::size_t i = 1; i < rows.size(); ++i)
    if (rows[i] - rows[i - 1] != stride) return {rows[0], 0};
  return {rows[0], stride};
}

}  // namespace

Pass Runner::Impl::make_pass(PassKind kind, std::vector<std::int64_t> rows, std::int64_t tokens_so_far) {
  Pass p;
  p.kind = kind;
  p.tokens = tokens_so_far;
  p.rows = std::move(rows);
  for (std::size_t i = 0; i < p.rows.size(); ++i) {
    p.token_of_row.push_back(tokens[static_cast<std::size_t>(p.rows[i] / copies)]);
    if (p.rows[i] % copies == copies - 1) p.final_rows.push_back(static_cast<std::int64_t>(i));
  }
  std::sort(p.final_rows.begin(), p.final_rows.end(),
            [&](std::int64_t a, std::int64_t b) { return p.rows[static_cast<std::size_t>(a)] < p.rows[static_cast<std::size_t>(b)]; });
  for (std::size_t i = 0; i < p.final_rows.size(); ++i) p.loss_rows.push_back(static_cast<std::int64_t>(i));
  return p;
}

// Host setup of a call, part 1: embedding groups, RoPE positions and row ids on the device.
void Runner::Impl::upload_rows(Pass& p) {
  // Embedding groups: rows of each table (HD stream k: table k) as arithmetic runs.
  const int tables = static_cast<int>(features.input_tables);
  std::vector<std::int32_t> ids;
  for (int t = 0; t < tables; ++t) {
    std::vector<std::int64_t> rows_of_table;
    for (std::size_t i = 0; i < p.rows.size(); ++i)
      if (tables == 1 || p.rows[i] % copies == t) rows_of_table.push_back(static_cast<std::int64_t>(i));
    const RowMap run = progression(rows_of_table);
    if (run.stride > 0) {
      p.embed_groups.push_back({t, static_cast<std::int64_t>(ids.size()), static_cast<std::int64_t>(rows_of_table.size()), run});
      for (auto r : rows_of_table) ids.push_back(p.token_of_row[static_cast<std::size_t>(r)]);
    } else {
      for (auto r : rows_of_table) {  // not met by any layout: one lookup per row
        p.embed_groups.push_back({t, static_cast<std::int64_t>(ids.size()), 1, RowMap{r, 1}});
        ids.push_back(p.token_of_row[static_cast<std::size_t>(r)]);
      }
    }
  }
  p.embed_ids = upload_i32(backend, ids);
  std::vector<std::int32_t> pos, pos_tok, fpos, fpos_tok, fids;
  for (auto t : p.rows) {
    pos.push_back(static_cast<std::int32_t>(t));
    pos_tok.push_back(static_cast<std::int32_t>(t / copies));
  }
  for (auto r : p.final_rows) {
    fpos.push_back(pos[static_cast<std::size_t>(r)]);
    fpos_tok.push_back(pos_tok[static_cast<std::size_t>(r)]);
    fids.push_back(static_cast<std::int32_t>(r));
  }
  p.pos_rows = upload_i32(backend, pos);
  p.pos_rows_token = upload_i32(backend, pos_tok);
  p.pos_final = upload_i32(backend, fpos);
  p.pos_final_token = upload_i32(backend, fpos_tok);
  p.final_ids = upload_i32(backend, fids);
  // Rows of the last hidden state that get logits: indices into the final rows once
  // KV-mirror layers dropped the other streams, else into all rows.
  std::vector<std::int32_t> loss;
  for (auto i : p.loss_rows)
    loss.push_back(ends_final_only() ? static_cast<std::int32_t>(i) : fids[static_cast<std::size_t>(i)]);
  p.loss_ids = upload_i32(backend, loss);
  if (!p.mtp_tokens.empty()) p.mtp_ids = upload_i32(backend, p.mtp_tokens);
}

// The rows a prefill keeps in the cache(s) of run `r` (one set per stream when the layer
// keeps a cache per stream), uploaded once per distinct set.
void Runner::Impl::plan_commits(Pass& p, const LayerRun& r) {
  const std::size_t streams = per_stream_kv(r.layer) ? static_cast<std::size_t>(copies) : 1;
  for (std::size_t s = 0; s < streams; ++s) {
    detail::CommitRows c;
    std::vector<std::pair<std::int64_t, std::int32_t>> kept;
    for (std::size_t row = 0; row < p.rows.size(); ++row)
      if ((streams == 1 || p.rows[row] % copies == static_cast<std::int64_t>(s)) &&
          keep_entry(r.layer, p.tokens, p.rows[row]))
        kept.push_back({p.rows[row], static_cast<std::int32_t>(row)});
    std::sort(kept.begin(), kept.end());
    for (auto [t, row] : kept) {
      c.positions.push_back(t);
      c.host_ids.push_back(row);
    }
    auto same = std::find_if(p.commits.begin(), p.commits.end(),
                             [&](const detail::CommitRows& o) { return o.host_ids == c.host_ids; });
    if (same == p.commits.end()) {
      c.ids = upload_i32(backend, c.host_ids);
      p.commits.push_back(std::move(c));
      same = p.commits.end() - 1;
    }
    p.commit_seq.push_back(static_cast<int>(same - p.commits.begin()));
  }
}

// Host setup of a call, part 2: every attention call's tile plan in execution order, for
// a prefill the rows each cache keeps, and the call's layer program: each run's work
// (model::run_work: the rows, attention pairs and KV entries the model layer derives for
// this call's phase and length, as the simulator does) and the op nodes built from it.
// The pairs the plans execute are profiled as measured (runner_attention.cpp).
void Runner::Impl::plan_attention(Pass& p) {
  const model::PassPhase phase = p.kind == PassKind::train     ? model::PassPhase::train_forward
                                 : p.kind == PassKind::prefill ? model::PassPhase::prefill
                                                               : model::PassPhase::decode;
  // A decode step's work is asked at the context cached before it.
  const model::PassShape shape{phase, 1, p.kind == PassKind::decode ? p.tokens - 1 : p.tokens};
  model::WorkOptions o;
  o.layout = layout;
  o.tile_q = kTileQ;
  o.tile_k = kTileK;
  o.mirror_final_only_decode = true;  // HD's mirrored layers decode the final stream's row alone
  bool final_only = false;
  p.work.clear();
  for (const LayerRun& r : schedule) {
    final_only = final_only || hd_mirror_queries(r.layer);
    p.work.push_back(model::run_work(config, r, shape, o));
    if (!config.effective.is_attention_layer(r.layer)) {  // a recurrent state, or no mixer: no attention calls
      if (config.effective.is_linear_layer(r.layer)) plan_linear(p, r);
      else p.linear_plan_of_run.push_back(-1);
      p.calls.emplace_back();
      continue;
    }
    p.linear_plan_of_run.push_back(-1);
    std::vector<detail::AttentionCall> calls;
    for (const auto& [mask, stream] : attention_masks(p, r, final_only)) {
      calls.push_back({plans.get(mask), stream});
      backend.stage_plan(*calls.back().plan);  // a device copy now, not inside the timed ops
    }
    p.calls.push_back(std::move(calls));
    if (p.kind == PassKind::prefill && r.commits_kv) plan_commits(p, r);
  }
  model::OutsideWork outside = model::outside_work(config.design.method, shape);
  // VWN's MTP runs in a training forward given the token after the sequence.
  if (p.mtp_tokens.empty()) outside.mtp_rows = 0;
  p.program = model::pass_program(config, dims, schedule, p.work, outside);
}

ForwardResult Runner::Impl::run(Pass& p) {
  const auto setup_start = std::chrono::steady_clock::now();
  upload_rows(p);
  plan_attention(p);
  const double setup_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - setup_start).count();
  prof.begin_call(groups.size());
  Tensor x = embed(p.embed_groups, p.embed_ids, static_cast<std::int64_t>(p.rows.size()), Buf::hidden_a,
                   OpKind::embedding);
  Tensor e;  // looped injection: the recurrent block's input
  bool final_only = false;
  if (observer) observe(p, nullptr, x, final_only);
  for (const LayerRun& r : schedule) {
    if (r.iteration_start) {
      if (r.iteration == 0) {
        e = ws.get(Buf::inject_e, x.shape(), x.type());
        detail::OpScope op(prof, -1, OpKind::injection);
        backend.copy(x, e);
      }
      inject(p, x, e);
    }
    layer(p, r, x, final_only);
    if (observer) observe(p, &r, x, final_only);
  }
  if (p.next_call != p.calls.size()) throw std::logic_error("runner: attention calls planned and run differ");
  ForwardResult res = output(p, x, final_only);
  if (features.mtp && p.kind == PassKind::train && !p.mtp_tokens.empty()) mtp(p, x, res);
  prof.end_call(last);
  detail::charge_flops(p.program, group_of_layer, last);
  last_program = std::move(p.program);
  last.setup_ms = setup_ms;
  last.rows = static_cast<std::int64_t>(p.rows.size());
  last.loss_rows = static_cast<std::int64_t>(p.loss_rows.size());
  last.context = static_cast<std::int64_t>(tokens.size());
  // Dropping cache entries no later query can see: bookkeeping an engine would do with a
  // ring buffer, so it is left out of the timed call.
  if (p.kind != PassKind::train)
    for (const LayerRun& r : schedule) {
      if (!r.commits_kv) continue;
      for (auto& c : caches[static_cast<std::size_t>(r.cache_slot)])
        c.retain(backend, ws, [&](std::int64_t t) { return keep_entry(r.layer, p.tokens, t); });
    }
  return res;
}

void Runner::Impl::observe(const Pass& p, const LayerRun* r, const Tensor& x, bool final_only) {
  std::vector<std::int64_t> positions = p.rows;
  if (final_only) {  // after KV-mirror layers cut the state to the final stream's rows
    positions.clear();
    for (auto i : p.final_rows) positions.push_back(p.rows[static_cast<std::size_t>(i)]);
  }
  const bool recurrent = r && model::layer_schedule(config.design.method, r->layer).role == model::LoopRole::recurrent;
  observer(HiddenState{r ? r->layer : -1, r ? r->iteration : 0, recurrent, x, positions});
}

// ---- public API ----------------------------------------------------------------------------

Runner::Runner(Backend& backend, model::Config config, ModelWeights weights, RunOptions options)
    : impl_(std::make_unique<Impl>(backend, std::move(config), std::move(weights), options)) {}
Runner::~Runner() = default;

const model::Config& Runner::config() const { return impl_->config; }
const RunOptions& Runner::options() const { return impl_->opt; }
model::Layout Runner::layout() const { return impl_->layout; }
const std::vector<LayerGroup>& Runner::groups() const { return impl_->groups; }
ModelWeights& Runner::weights() { return impl_->w; }
Backend& Runner::backend() const { return impl_->backend; }
std::int64_t Runner::copies() const { return impl_->copies; }
std::int64_t Runner::residual_width() const { return impl_->wide; }
void Runner::set_hidden_observer(HiddenObserver observer) { impl_->observer = std::move(observer); }
std::int64_t Runner::sequence_tokens() const { return static_cast<std::int64_t>(impl_->tokens.size()); }
const StepProfile& Runner::last_profile() const { return impl_->last; }
const model::PassProgram& Runner::last_program() const { return impl_->last_program; }

std::int64_t Runner::kv_entries() const {
  std::int64_t n = 0;
  for (const auto& slot : impl_->caches)
    for (const auto& c : slot) n += c.live();
  return n;
}

std::size_t Runner::kv_bytes() const {
  std::size_t n = impl_->linear_state_bytes();
  for (const auto& slot : impl_->caches)
    for (const auto& c : slot) n += c.bytes();
  return n;
}

namespace {

void check_tokens(std::span<const std::int32_t> t, std::int64_t vocab) {
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i] < 0 || t[i] >= vocab)
      throw model::ConfigError("/tokens/" + std::to_string(i),
                               "token id " + std::to_string(t[i]) + " outside the vocabulary [0, " + std::to_string(vocab) + ")");
}

}  // namespace

ForwardResult Runner::train_forward(std::span<const std::int32_t> tokens, std::optional<std::int32_t> next_token) {
  Impl& m = *impl_;
  if (tokens.empty()) throw model::ConfigError("/tokens", "a training forward needs at least one token");
  check_tokens(tokens, m.config.effective.vocab_size);
  m.tokens.assign(tokens.begin(), tokens.end());
  const std::int64_t L = static_cast<std::int64_t>(tokens.size());
  m.set_rope_sequence(L);
  Pass p = m.make_pass(PassKind::train, model::physical_to_logical(L, m.copies, m.layout), L);
  if (m.features.mtp && next_token) {
    check_tokens(std::span<const std::int32_t>(&*next_token, 1), m.config.effective.vocab_size);
    for (std::int64_t i = 1; i <= L; ++i) p.mtp_tokens.push_back(i < L ? tokens[static_cast<std::size_t>(i)] : *next_token);
  }
  ForwardResult r = m.run(p);
  m.tokens.clear();  // a training forward leaves no sequence to decode from
  return r;
}

ForwardResult Runner::prefill(std::span<const std::int32_t> prompt, std::int64_t max_tokens) {
  Impl& m = *impl_;
  const std::int64_t L = static_cast<std::int64_t>(prompt.size());
  if (L == 0) throw model::ConfigError("/prompt", "a prefill needs at least one token");
  if (max_tokens < L)
    throw model::ConfigError("/max_tokens", "must cover the prompt (" + std::to_string(L) + " tokens), got " +
                                                std::to_string(max_tokens));
  check_tokens(prompt, m.config.effective.vocab_size);
  m.tokens.assign(prompt.begin(), prompt.end());
  m.reset_caches(max_tokens);
  m.set_rope_sequence(max_tokens);
  // Positions the prefill computes (methods.md section 2 for PHD), in physical order.
  std::vector<std::int64_t> rows;
  const std::int64_t K = m.copies;
  if (const auto partial = model::prefill_tail(m.config.design.method, L)) {
    const std::int64_t tail = *partial;
    for (std::int64_t i = 0; i < L; ++i) rows.push_back(i * K);
    for (std::int64_t i = L - tail; i < L; ++i)
      for (std::int64_t j = 1; j < K; ++j) rows.push_back(i * K + j);
    std::sort(rows.begin(), rows.end(), [&](std::int64_t a, std::int64_t b) {
      return model::physical_of_logical(L, K, m.layout, a) < model::physical_of_logical(L, K, m.layout, b);
    });
  } else {
    rows = model::physical_to_logical(L, K, m.layout);
  }
  Pass p = m.make_pass(PassKind::prefill, std::move(rows), L);
  // Logits of the last token's loss row only.
  p.loss_rows = {p.loss_rows.back()};
  return m.run(p);
}

ForwardResult Runner::decode_step(std::int32_t token) {
  Impl& m = *impl_;
  if (m.caches.empty() || m.tokens.empty()) throw model::ConfigError("/decode", "decode needs a prefill first");
  if (static_cast<std::int64_t>(m.tokens.size()) >= m.max_tokens)
    throw model::ConfigError("/decode", "the sequence was started for " + std::to_string(m.max_tokens) + " tokens");
  check_tokens(std::span<const std::int32_t>(&token, 1), m.config.effective.vocab_size);
  m.tokens.push_back(token);
  const std::int64_t c = static_cast<std::int64_t>(m.tokens.size()) - 1;
  std::vector<std::int64_t> rows;
  for (std::int64_t j = 0; j < m.copies; ++j) rows.push_back(c * m.copies + j);
  Pass p = m.make_pass(PassKind::decode, std::move(rows), c + 1);
  return m.run(p);
}

}  // namespace hdlab::executor
