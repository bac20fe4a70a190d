// Rows, attention pairs and KV traffic of each layer run in each phase; see layer_work.hpp.
#include "hdlab/model/layer_work.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

namespace hdlab::model {

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// visible_tiles is exact for any length but costs tens to hundreds of microseconds for
// long expanded sequences, while a sweep asks for the same few masks again and again
// (only decode batch, context, hardware or parallelism change). A small per-thread table
// remembers the last results; it is keyed on every input, so a hit returns exactly what
// the call would. PHD's partial prefills (phd_partial_prefill_tiles) share it, keyed by
// their tail as well.
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
void materialise_scores(const WorkOptions& o, LayerWork& w) {
  if (!o.unfused) return;
  w.scores_materialised = true;
  w.pairs_executed = w.rows_q * w.rows_kv;
  w.longest_keys = w.rows_kv;
}

// Attention work of a whole-sequence mask: rows and both pair counts.
void mask_work(const MaskSpec& m, const WorkOptions& o, LayerWork& w) {
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
// the mask over the tail alone (the same rule: a CSWA tail is one chunk) plus the L - tail
// earlier origins every tail row sees and their own causal pairs. Executed tiles:
// phd_partial_prefill_tiles over the computed rows, as a kernel runs them.
void phd_partial_prefill(const MaskSpec& whole, std::int64_t tail, const WorkOptions& o, LayerWork& w) {
  const std::int64_t L = whole.tokens, K = whole.copies, before = L - tail;
  MaskSpec t = whole;
  t.tokens = tail;
  w.rows_q = w.rows_kv = d(L + tail * (K - 1));
  w.pairs_exact = d(before) * d(before + 1) / 2 + d(tail * K) * d(before) + d(visible_pairs(t));
  w.pairs_executed = d(executed_pairs(whole, o.layout, o.tile_q, o.tile_k, tail));
  w.longest_keys = std::min(2 * w.pairs_exact / w.rows_q, w.rows_kv);
  materialise_scores(o, w);
}

// A layer whose mixer is not attention: the rows the mask gives run through it, but no
// (query, key) pairs and no KV entries. A linear-attention layer's state traffic is costed
// by layer_ops from its independent states (recurrent_states); an FFN-only layer (no
// mixer) has none.
void mixer_work(const Method& m, const LayerView& v, LayerWork& w) {
  if (v.mixer == MixerKind::attention) return;
  if (v.linear()) {
    w.recurrent_states = recurrent_states(m, v.role);
    w.linear_mixer = true;
  }
  w.pairs_exact = w.pairs_executed = w.longest_keys = 0;
  w.kv_read = w.kv_written = 0;
  w.scores_materialised = w.attention_dropout = false;
}

LayerWork train_work(const Config& c, const LayerView& v, double seqs, std::int64_t tokens, const WorkOptions& o) {
  LayerWork w;
  w.seqs = seqs;
  mask_work(layer_mask(c, v.layer, tokens), o, w);
  w.hidden_dropout = o.hidden_dropout;
  w.separate_gate_up = o.separate_gate_up;
  w.attention_dropout = o.attention_dropout && w.scores_materialised;
  mixer_work(c.design.method, v, w);
  return w;
}

LayerWork prefill_work(const Config& c, const LayerView& v, double seqs, std::int64_t L, const WorkOptions& o) {
  LayerWork w;
  w.seqs = seqs;
  const MaskSpec mask = layer_mask(c, v.layer, L);
  if (const std::optional<std::int64_t> tail = prefill_tail(c.design.method, L))  // PHD: hidden copies of the tail only
    phd_partial_prefill(mask, *tail, o, w);
  else
    mask_work(mask, o, w);
  // The cache keeps what the next token can see (kv_entries), written once per cache:
  // a looped design sharing one cache across K iterations writes it in the last one.
  w.kv_written = kv_entries(c.design.method, v, L) * v.kv_caches / v.passes;
  w.separate_gate_up = o.separate_gate_up;
  mixer_work(c.design.method, v, w);
  return w;
}

}  // namespace

LayerView layer_view(const Backbone& b, const Method& m, std::int64_t layer) {
  const LayerSchedule s = layer_schedule(m, layer);
  return LayerView{layer, layer_role(m, b, layer), b.mixer(layer), s.role, d(s.passes), d(s.kv_caches)};
}

LayerWork decode_work(const Method& m, const LayerView& v, double seqs, std::int64_t context, const WorkOptions& o) {
  LayerWork w;
  w.seqs = seqs;
  w.reads_cache = true;
  const double c = d(context);
  const DecodeAttention a = decode_attention(m, v.role, c, o.layout, o.mirror_final_only_decode);
  w.rows_q = a.rows_q;
  w.rows_kv = a.rows_kv;
  w.pairs_exact = a.pairs_exact;
  w.pairs_executed = a.pairs_executed;
  w.kv_read = a.kv_read;
  w.kv_written = a.kv_written;
  w.kv_context = std::max(w.kv_read, c);  // a windowed layer's kernel still spans the context
  w.separate_gate_up = o.separate_gate_up;
  mixer_work(m, v, w);
  return w;
}

LayerWork layer_work(const Config& c, const LayerView& v, const PassShape& p, const WorkOptions& o) {
  switch (p.phase) {
    case PassPhase::train_forward: return train_work(c, v, p.seqs, p.tokens, o);
    case PassPhase::prefill: return prefill_work(c, v, p.seqs, p.tokens, o);
    case PassPhase::decode: break;
  }
  return decode_work(c.design.method, v, p.seqs, p.tokens, o);
}

LayerWork run_work(const Config& c, const LayerRun& r, const PassShape& p, const WorkOptions& o) {
  const LayerView v = layer_view(c.effective, c.design.method, r.layer);
  LayerWork w = layer_work(c, v, p, o);
  if (p.phase == PassPhase::prefill) w.kv_written = r.commits_kv ? kv_entries(c.design.method, v, p.tokens) : 0;
  return w;
}

OutsideWork outside_work(const Method& m, const PassShape& p) {
  const double L = d(p.tokens), copies = d(copies_per_token(m));
  switch (p.phase) {
    case PassPhase::train_forward: return OutsideWork{p.seqs, copies * L, L, L, L};
    case PassPhase::prefill: {
      // The positions the prefill computes: PHD's partial prefills the L origins and the
      // hidden copies of the tail's tokens.
      const std::optional<std::int64_t> tail = prefill_tail(m, p.tokens);
      const double rows = tail ? d(p.tokens + *tail * (copies_per_token(m) - 1)) : d(copies_per_token(m) * p.tokens);
      return OutsideWork{p.seqs, rows, 1, L, 0};
    }
    case PassPhase::decode: break;
  }
  return OutsideWork{p.seqs, copies, 1, 1, 0};
}

double kv_entries(const Method& m, const LayerView& v, std::int64_t context) {
  if (v.mixer != MixerKind::attention) return 0;  // a state (linear layers) or nothing: no KV entries
  return kv_entries(m, v.role, d(context));
}

}  // namespace hdlab::model
