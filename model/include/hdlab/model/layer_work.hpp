#pragma once
// The work of every layer run in every phase (methods.md), written once here for the
// simulator (one run of each group of identical layers) and the executor (each run of the
// call it makes): the rows a layer runs, the (query, key) pairs its attention computes
// (exact and tile-executed), the KV-cache entries it reads and writes, and the keys its
// longest query row walks (layer_program.hpp's LayerWork). Timing is not here: the
// simulator costs the nodes built from this work, the executor runs them.
//
// Training forward of L tokens: HD runs n*L positions (KV-mirror layers: queries on
// the final stream's L rows only, K/V on all n*L); PHD runs K*L; looped runs P + K*R + C
// layer passes; logits on the L loss rows.
// Prefill of L prompt tokens: HD n*L positions; PHD plain: the L origins plus the K-1
// hidden copies of the last token; PHD-SWA: all K*L positions (hidden KV depends on
// earlier hidden KV all the way back); PHD-CSWA: the L origins plus the hidden copies of
// the last chunk's tokens. Logits for the last position only.
// Decode step at context c (tokens cached): HD appends n positions and runs its n query
// rows together (mirror layers: one row with WorkOptions::mirror_final_only_decode, else
// n); a full layer reads all n*(c+1) entries, an intra layer each stream's own c+1 (all
// entries once in total), a local(w) layer the last w. PHD runs K rows: origins read the
// c cached origins, hidden copies also their own token's copies and (SWA, CSWA) the kept
// hidden keys within W; all K rows write their K/V (the hidden copies attend to each
// other), the cache keeps kv_entries' share. Looped runs every recurrent layer K times in
// sequence, each run reading its weights and its KV again.
// KV written by a prefill: what the cache keeps for the next token (kv_entries at L),
// once per cache (a looped cache shared by the iterations: by the last one).
//
// Pair counts for whole sequences come from mask.hpp (exact and tile-executed for the
// physical layout), for PHD's partial prefills from phd_partial_prefill_tiles over the
// computed rows. For a decode step the counts are the design modules' closed forms
// (decode_attention); "executed" there means every query row of the step times every key
// it touches in a tile row (decode rows share one query tile), except intra layers in a
// stream-major layout, whose rows each touch only their own stream.
#include <cstdint>

#include "hdlab/model/design.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::model {

enum class PassPhase : std::uint8_t { train_forward, prefill, decode };

// A pass: `seqs` sequences of `tokens` tokens (training, prefill), or one decode step of
// `seqs` sequences with `tokens` tokens already cached.
struct PassShape {
  PassPhase phase = PassPhase::prefill;
  double seqs = 1;
  std::int64_t tokens = 0;
};

// How the kernels run a pass: what changes the work besides the pass itself.
struct WorkOptions {
  Layout layout = Layout::interleaved;
  std::int64_t tile_q = 128, tile_k = 128;  // the attention kernel's tile: executed pairs
  bool unfused = false;  // prefill/training scores materialised: every (query, key) pair executed
  bool separate_gate_up = false;  // a gated FFN's gate and up halves as two products (not one of 2F)
  // Training passes only: the dropout that runs, as layer_ops costs it.
  bool hidden_dropout = false, attention_dropout = false;
  // Decode steps only: HD's mirrored layers run the final stream's query row alone.
  bool mirror_final_only_decode = false;
};

// What of a layer its work depends on besides its mask: its attention under the design,
// its token mixer and its schedule (runs per pass, KV caches kept).
struct LayerView {
  std::int64_t layer = 0;  // the layer's index (its mask)
  LayerAttentionRole role;
  MixerKind mixer = MixerKind::attention;
  LoopRole loop = LoopRole::none;  // its part of a loop
  double passes = 1;     // runs per pass (a loop's recurrent layers: the iterations)
  double kv_caches = 1;  // KV caches kept (a loop's per-iteration caches: the iterations)
  bool linear() const { return mixer == MixerKind::gated_deltanet || mixer == MixerKind::mamba2; }
};
LayerView layer_view(const Backbone& b, const Method& m, std::int64_t layer);

// One run of the layer `v` in pass `p`: rows, pairs, KV read and (decode) written. A
// prefill's KV written is averaged over the layer's runs (kv_entries x kv_caches /
// passes: a cache shared by a loop's iterations is written once, 1/passes per run).
// A decode step needs only the method (`c` may be any config of that method).
LayerWork layer_work(const Config& c, const LayerView& v, const PassShape& p, const WorkOptions& o);
LayerWork decode_work(const Method& m, const LayerView& v, double seqs, std::int64_t context, const WorkOptions& o);
// The work of one run `r` as it happens: a prefill's KV is written by the run that
// commits it (LayerRun::commits_kv), all of the cache's entries at once.
LayerWork run_work(const Config& c, const LayerRun& r, const PassShape& p, const WorkOptions& o);

// Rows embedded, through the output path and through the injection adapter per pass.
OutsideWork outside_work(const Method& m, const PassShape& p);

// KV-cache entries (positions) the layer keeps per sequence between steps at `context`
// tokens: every entry a later query can still see, as the executor keeps them. Full and
// intra layers everything; sliding / local(w) layers the last w - 1 positions (the next
// step's rows make w, which decode reads); PHD the origins plus the last W hidden keys
// the next token's copies can see (SWA: of all earlier tokens; CSWA: of the context % C
// tokens already in the next token's chunk; plain: none). A layer whose mixer is not
// attention (linear attention keeps a state instead; an FFN-only layer nothing) keeps none.
double kv_entries(const Method& m, const LayerView& v, std::int64_t context);

}  // namespace hdlab::model
