#pragma once
// Passes of every design in every phase as op tables: the work of each layer group comes
// from the model layer (model/layer_work.hpp says what rows, (query, key) pairs and KV
// traffic each design runs in each phase, for the simulator and the executor alike), its
// op nodes from model::layer_ops; this file groups them and adds the ops outside the
// layers.
#include <cstdint>

#include "hdlab/model/design.hpp"
#include "hdlab/model/layer_work.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/simulator/op_table.hpp"

namespace hdlab::simulator {

// How the kernels run the passes (model::WorkOptions: layout, tiles, unfused scores,
// dropout, HD mirror decode), and which pair count times the attention op.
struct PassOptions : model::WorkOptions {
  bool count_executed = true;  // attention op FLOPs from executed pairs (else exact)
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

// KV-cache bytes of one sequence at `context` tokens, every layer (looped per-iteration
// caches counted per iteration), linear layers' fixed recurrent and conv states included.
double kv_cache_bytes_per_seq(const model::Method& m, const ModelShape& s, const LayerPlan& plan,
                              std::int64_t context);

}  // namespace hdlab::simulator
