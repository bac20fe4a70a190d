// Rows, attention pairs and KV traffic of each layer group in each phase; see phases.hpp.
#include "hdlab/simulator/phases.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

namespace hdlab::simulator {

using namespace hdlab::model;

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// model::visible_tiles is exact for any length but costs tens to hundreds of
// microseconds for long expanded sequences, while a sweep asks for the same few masks
// again and again (only decode batch, context, hardware or parallelism change). A small
// per-thread table remembers the last results; it is keyed on every input, so a hit
// returns exactly what the call would. PHD's partial prefills (model::
// phd_partial_prefill_tiles) share it, keyed by their tail as well.
struct TileQuery {
  MaskSpec mask;
  Layout layout = Layout::interleaved;
  std::int64_t bq = 0, bk = 0;
  std::int64_t tail = 0;  // PHD partial prefill: tokens whose hidden copies run; 0: the whole mask
  bool operator==(const TileQuery& o) const {
    const MaskSpec& a = mask;
    const MaskSpec& b = o.mask;
    return a.kind == b.kind && a.tokens == b.tokens && a.copies == b.copies && a.window == b.window &&
           a.chunk == b.chunk && a.phd_variant == b.phd_variant && a.phd_W == b.phd_W && a.phd_C == b.phd_C &&
           a.final_copy_queries_only == b.final_copy_queries_only && layout == o.layout && bq == o.bq && bk == o.bk &&
           tail == o.tail;
  }
};

std::int64_t executed_pairs(const MaskSpec& m, Layout layout, std::int64_t bq, std::int64_t bk,
                            std::int64_t tail = 0) {
  constexpr std::size_t slots = 64;
  struct Slot {
    bool used = false;
    TileQuery query;
    std::int64_t executed = 0;
  };
  thread_local std::array<Slot, slots> cache{};
  const TileQuery q{m, layout, bq, bk, tail};
  std::uint64_t h = static_cast<std::uint64_t>(m.tokens) * 0x9E3779B97F4A7C15ull;
  for (std::int64_t v : {static_cast<std::int64_t>(m.kind), m.copies, m.window, m.chunk, m.phd_W, m.phd_C,
                         static_cast<std::int64_t>(m.phd_variant), static_cast<std::int64_t>(layout), bq, bk,
                         static_cast<std::int64_t>(m.final_copy_queries_only), tail})
    h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001B3ull;
  Slot& slot = cache[(h >> 32) % slots];
  if (slot.used && slot.query == q) return slot.executed;
  const TileCount tc = tail > 0 ? phd_partial_prefill_tiles(m, tail, layout, bq, bk) : visible_tiles(m, layout, bq, bk);
  slot = Slot{true, q, tc.executed_pairs};
  return slot.executed;
}

// Keys the row that sees the most sees, as the kernel walks them: the last row of a causal
// mask sees every position, of a sliding one its window, of an intra-stream one its
// stream's tokens (stream-major only, see below); for PHD's rule, twice the mean (exact for
// a causal triangle), at most every position.
double longest_keys(const MaskSpec& m, Layout layout, const LayerWork& w) {
  switch (m.kind) {
    case MaskSpec::Kind::causal:  // chunked: its chunk's positions
      return m.chunk > 0 ? std::min(d(m.chunk * m.copies), d(m.positions())) : d(m.positions());
    case MaskSpec::Kind::sliding: return std::min(d(m.window), d(m.positions()));
    // The kernel walks a stream's keys alone only where its tiles hold one stream
    // (stream-major); interleaved, every tile mixes streams and none is skipped.
    case MaskSpec::Kind::intra: return layout == Layout::stream_major ? d(m.tokens) : d(m.positions());
    case MaskSpec::Kind::phd: break;
  }
  return w.rows_q > 0 ? std::min(2 * w.pairs_exact / w.rows_q, w.rows_kv) : 0;
}

// Unfused attention scores every query row against every key row, the mask applied in
// the softmax: no tile is skipped.
void materialise_scores(const PassOptions& o, LayerWork& w) {
  if (!o.unfused) return;
  w.scores_materialised = true;
  w.pairs_executed = w.rows_q * w.rows_kv;
  w.longest_keys = w.rows_kv;
}

// Attention work of a whole-sequence mask from model/: rows and both pair counts.
void mask_work(const MaskSpec& m, const PassOptions& o, LayerWork& w) {
  w.rows_q = d(m.query_rows());
  w.rows_kv = d(m.positions());
  w.pairs_exact = d(visible_pairs(m));
  w.pairs_executed = d(executed_pairs(m, o.layout, o.tile_q, o.tile_k));
  w.longest_keys = longest_keys(m, o.layout, w);
  materialise_scores(o, w);
}

// PHD prefill that computes the L origins and the hidden copies of only the last `tail`
// tokens (plain: tail 1, CSWA: the last chunk). Origins see earlier origins (causal over
// L); a hidden copy of a tail token sees every origin up to its token, its own token's
// copies up to itself and, within the tail, the hidden keys of the windowed rule. Pairs:
// model/'s mask over the tail alone (the same rule: a CSWA tail is one chunk) plus the
// L - tail earlier origins every tail row sees and their own causal pairs. Executed
// tiles: model::phd_partial_prefill_tiles over the computed rows, as a kernel runs them.
void phd_partial_prefill(const MaskSpec& whole, std::int64_t tail, const PassOptions& o, LayerWork& w) {
  const std::int64_t L = whole.tokens, K = whole.copies, before = L - tail;
  MaskSpec t = whole;
  t.tokens = tail;
  w.rows_q = w.rows_kv = d(L + tail * (K - 1));
  w.pairs_exact = d(before) * d(before + 1) / 2 + d(tail * K) * d(before) + d(visible_pairs(t));
  w.pairs_executed = d(executed_pairs(whole, o.layout, o.tile_q, o.tile_k, tail));
  w.longest_keys = std::min(2 * w.pairs_exact / w.rows_q, w.rows_kv);
  materialise_scores(o, w);
}

// The model's view of a layer group's attention (what its design module reads).
LayerAttentionRole role_of(const LayerSignature& sig) {
  return LayerAttentionRole{sig.base_kind, sig.base_window, sig.hd_kind, sig.final_queries_only, false};
}

void set_decode_work(const DecodeAttention& a, LayerWork& w) {
  w.rows_q = a.rows_q;
  w.rows_kv = a.rows_kv;
  w.pairs_exact = a.pairs_exact;
  w.pairs_executed = a.pairs_executed;
  w.kv_read = a.kv_read;
  w.kv_written = a.kv_written;
}

void fill_groups(const ModelShape& s, const LayerPlan& plan, const PassOptions& o, PassCost& out) {
  out.count = plan.count;
  for (int g = 0; g < plan.count; ++g) {
    LayerGroupCost& lg = out.groups[static_cast<std::size_t>(g)];
    lg.plan = plan.groups[static_cast<std::size_t>(g)];
    layer_ops(s, lg.plan.sig, lg.work, o.count_executed, lg.ops);
  }
}

double expanded(const ModelShape& s) { return s.hd_n * s.phd_K; }

// A layer whose mixer is not attention: the rows the mask gives run through it, but no
// (query, key) pairs and no KV entries. A linear-attention layer's state traffic is costed
// by layer_ops from its independent states (model::recurrent_states); an FFN-only layer (no
// mixer) has none.
void mixer_work(const Method& m, const LayerSignature& sig, LayerWork& w) {
  if (sig.mixer == MixerKind::attention) return;
  if (sig.linear()) {
    w.recurrent_states = model::recurrent_states(m, role_of(sig));
    w.linear_mixer = true;
  }
  w.pairs_exact = w.pairs_executed = w.longest_keys = 0;
  w.kv_read = w.kv_written = 0;
  w.scores_materialised = w.attention_dropout = false;
}

// A linear layer's fixed state per sequence (bytes), whatever the context: the recurrent
// state plus the conv's last inputs, in the cache precision.
double state_bytes_per_state(const ModelShape& s, MixerKind mixer) {
  if (mixer == MixerKind::gated_deltanet)
    return (s.gdn.state_elements() + s.gdn.conv_state_elements()) * s.gdn.state_el_bytes;
  if (mixer == MixerKind::mamba2)
    return (s.mamba.state_elements() + s.mamba.conv_state_elements()) * s.mamba.state_el_bytes;
  return 0;
}

}  // namespace

void train_forward_pass(const Config& c, const ModelShape& s, const LayerPlan& plan, double seqs, std::int64_t tokens,
                        const PassOptions& o, PassCost& out) {
  for (int g = 0; g < plan.count; ++g) {
    LayerWork& w = out.groups[static_cast<std::size_t>(g)].work;
    w = LayerWork{};
    w.seqs = seqs;
    mask_work(layer_mask(c, plan.groups[static_cast<std::size_t>(g)].first_layer, tokens), o, w);
    w.hidden_dropout = o.hidden_dropout;
    w.attention_dropout = o.attention_dropout && w.scores_materialised;
    mixer_work(c.design.method, plan.groups[static_cast<std::size_t>(g)].sig, w);
  }
  fill_groups(s, plan, o, out);
  const double L = d(tokens);
  outside_ops(s, OutsideWork{seqs, expanded(s) * L, L, L, L}, out.outside);
}

void prefill_pass(const Config& c, const ModelShape& s, const LayerPlan& plan, double seqs, std::int64_t tokens,
                  const PassOptions& o, PassCost& out) {
  const std::int64_t L = tokens;
  const std::optional<std::int64_t> tail = prefill_tail(c.design.method, L);  // PHD: hidden copies of the tail only
  double positions = expanded(s) * d(L);
  for (int g = 0; g < plan.count; ++g) {
    const LayerGroupPlan& gp = plan.groups[static_cast<std::size_t>(g)];
    LayerWork& w = out.groups[static_cast<std::size_t>(g)].work;
    w = LayerWork{};
    w.seqs = seqs;
    const MaskSpec mask = layer_mask(c, gp.first_layer, L);
    if (tail)
      phd_partial_prefill(mask, *tail, o, w);
    else
      mask_work(mask, o, w);
    // The cache keeps what the next token can see (kv_entries), written once per cache:
    // a looped design sharing one cache across K iterations writes it in the last one.
    w.kv_written = kv_entries(c.design.method, gp.sig, L) * gp.kv_caches / gp.passes;
    mixer_work(c.design.method, gp.sig, w);
    positions = w.rows_kv;
  }
  fill_groups(s, plan, o, out);
  outside_ops(s, OutsideWork{seqs, positions, 1, d(L), 0}, out.outside);
}

void decode_pass(const Method& m, const ModelShape& s, const LayerPlan& plan, double seqs,
                 std::int64_t context, const PassOptions& o, PassCost& out) {
  const double c = d(context);
  for (int g = 0; g < plan.count; ++g) {
    LayerWork& w = out.groups[static_cast<std::size_t>(g)].work;
    w = LayerWork{};
    w.seqs = seqs;
    w.reads_cache = true;
    const LayerSignature& sig = plan.groups[static_cast<std::size_t>(g)].sig;
    set_decode_work(decode_attention(m, role_of(sig), c, o.layout, o.mirror_final_only_decode), w);
    w.kv_context = std::max(w.kv_read, c);  // a windowed layer's kernel still spans the context
    mixer_work(m, sig, w);
  }
  fill_groups(s, plan, o, out);
  outside_ops(s, OutsideWork{seqs, expanded(s), 1, 1, 0}, out.outside);
}

double kv_entries(const Method& m, const LayerSignature& sig, std::int64_t context) {
  if (sig.mixer != MixerKind::attention) return 0;  // a state (linear layers) or nothing: no KV entries
  return model::kv_entries(m, role_of(sig), d(context));
}

double kv_cache_bytes_per_seq(const Method& m, const ModelShape& s, const LayerPlan& plan, std::int64_t context) {
  double entries = 0, state_bytes = 0;
  for (int g = 0; g < plan.count; ++g) {
    const LayerGroupPlan& gp = plan.groups[static_cast<std::size_t>(g)];
    if (gp.sig.linear())  // a fixed state, whatever the context
      state_bytes += gp.kv_caches * model::recurrent_states(m, role_of(gp.sig)) * state_bytes_per_state(s, gp.sig.mixer);
    else
      entries += gp.kv_caches * kv_entries(m, gp.sig, context);
  }
  return entries * s.kv_out * s.kv_el_bytes + state_bytes;
}

}  // namespace hdlab::simulator
