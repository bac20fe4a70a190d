#pragma once
// Passes of every design in every phase (methods.md): what rows each layer runs, which
// (query, key) pairs its attention computes, and what its KV cache holds.
//
// Training forward of L tokens: HD runs n*L positions (KV-mirror layers: queries on
// the final stream's L rows only, K/V on all n*L); PHD runs K*L; looped runs P + K*R + C
// layer passes; logits on the L loss rows.
// Prefill of L prompt tokens: HD n*L positions; PHD plain: the L origins plus the K-1
// hidden copies of the last token; PHD-SWA: all K*L positions (hidden KV depends on
// earlier hidden KV all the way back); PHD-CSWA: the L origins plus the hidden copies of
// the last chunk's tokens. Logits for the last position only.
// Decode step at context c (tokens cached): HD appends n positions and runs its n query
// rows together (mirror layers: one row with PassOptions::mirror_final_only_decode, else n); a full layer reads all n*(c+1) entries, an
// intra layer each stream's own c+1 (all entries once in total), a local(w) layer the
// last w. PHD runs K rows: origins read the c cached origins, hidden copies also their
// own token's copies and (SWA, CSWA) the kept hidden keys within W; all K rows write
// their K/V (the hidden copies attend to each other), the cache keeps kv_entries' share.
// Looped runs every recurrent layer K times in sequence, each run reading its weights
// and its KV again.
// KV written by a prefill: what the cache keeps for the next token (kv_entries at L),
// once per cache (a looped cache shared by the iterations: by the last one).
//
// Pair counts for whole sequences come from model/mask.hpp (exact and tile-executed for
// the physical layout), for PHD's partial prefills from model::phd_partial_prefill_tiles
// over the computed rows. For a decode step the counts are closed forms here; "executed"
// there means every query row of the step times every key it touches in a tile row
// (decode rows share one query tile), except intra layers in a stream-major layout, whose
// rows each touch only their own stream.
#include <cstdint>

#include "hdlab/model/design.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/simulator/op_table.hpp"

namespace hdlab::simulator {

struct PassOptions {
  model::Layout layout = model::Layout::interleaved;
  std::int64_t tile_q = 128, tile_k = 128;
  bool count_executed = true;  // attention op FLOPs from executed pairs (else exact)
  bool unfused = false;        // prefill/training scores materialised (AttentionKernel::unfused)
  // Training passes only (train_forward_pass; TrainScenario's dropout): the dropout that
  // runs, as layer_ops costs it.
  bool hidden_dropout = false, attention_dropout = false;
  // Decode steps only (DecodeScenario's kv_mirror_final_only): HD's mirrored layers run
  // the final stream's query row alone.
  bool mirror_final_only_decode = false;
};

// Forward pass of `seqs` training sequences of `tokens` tokens.
void train_forward_pass(const model::Config& c, const ModelShape& s, const LayerPlan& plan, double seqs,
                        std::int64_t tokens, const PassOptions& o, PassCost& out);
// Prefill of `seqs` prompts of `tokens` tokens.
void prefill_pass(const model::Config& c, const ModelShape& s, const LayerPlan& plan, double seqs,
                  std::int64_t tokens, const PassOptions& o, PassCost& out);
// One decode step of `seqs` sequences with `context` tokens already cached.
void decode_pass(const model::Method& m, const ModelShape& s, const LayerPlan& plan,
                 double seqs, std::int64_t context, const PassOptions& o, PassCost& out);

// KV-cache entries (positions) one layer keeps per sequence between steps at `context`
// tokens: every entry a later query can still see, as the executor keeps them. Full and
// intra layers everything; sliding / local(w) layers the last w - 1 positions (the next
// step's rows make w, which decode reads); PHD the origins plus the last W hidden keys
// the next token's copies can see (SWA: of all earlier tokens; CSWA: of the context % C
// tokens already in the next token's chunk; plain: none). A layer whose mixer is not
// attention (linear attention keeps a state instead; an FFN-only layer nothing) keeps none.
double kv_entries(const model::Method& m, const LayerSignature& sig, std::int64_t context);
// KV-cache bytes of one sequence at `context` tokens, every layer (looped per-iteration
// caches counted per iteration), linear layers' fixed recurrent and conv states included.
double kv_cache_bytes_per_seq(const model::Method& m, const ModelShape& s, const LayerPlan& plan,
                              std::int64_t context);

}  // namespace hdlab::simulator
