#pragma once
// Outputs anyone can check: one forward of the runner on given token ids, its logits and
// every layer's output hidden state captured from the real pass (a hidden-state observer
// on the runner, not a second implementation), on the host as f32 and in logical row
// order, written as one safetensors file so another implementation (PyTorch, a serving
// engine) run on the same weights (save_weights) can be compared with the executor's.
//
// Tensors (R = rows the call computed at that point, W = D, or D' = D n/m under VWN;
// every float tensor F32, every integer tensor I64):
//   input_ids               [T]       the token ids of the call(s)
//   embeddings              [R, W]    the embedding output (HD: stream k from table k)
//   hidden.{l}              [R, W]    layer l's output (the residual state after it)
//   hidden.{l}.iter.{k}     [R, W]    looped designs' recurrent layers: pass k (0-based)
//   logits                  [Rl, V]   V: the padded vocabulary (lm_head.weight's rows)
//   positions.{name}        [R]       for each tensor above but input_ids: the logical
//                                      position of each row, t = token * copies + copy
// Rows are in ascending logical position whatever the run's physical layout: HD stream k
// of token i is row i*n + k, PHD copy j of token i is i*K + j. The logits rows are the
// loss rows (the final stream / last copy of a token: position i*c + c - 1).
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "hdlab/executor/runner.hpp"
#include "hdlab/executor/safetensors.hpp"

namespace hdlab::executor {

struct CapturedTensor {
  std::string name;
  Shape shape;
  std::vector<float> values;  // row-major; whole numbers for I64 tensors
  StDtype dtype = StDtype::f32;
};

struct ForwardOutputs {
  std::vector<CapturedTensor> tensors;          // in file order
  std::map<std::string, std::string> metadata;  // safetensors __metadata__
  const CapturedTensor* find(const std::string& name) const;
};

// What one capture computes for `phase` on T = ids.size() tokens:
//  - train-forward: train_forward(ids): all rows of every layer, logits of every token.
//  - prefill: prefill(ids): the rows the prefill computes (PHD plain / CSWA: not every
//    copy), logits of the last token.
//  - decode: prefill(ids[0, T-1)) (not captured), then decode_step(ids[T-1]): the last
//    token's rows and logits, read through the KV caches (needs T >= 2).
// model::ConfigError for T == 0 (decode: T < 2). The runner's caches are reset by the call.
ForwardOutputs capture_outputs(Runner& runner, Phase phase, std::span<const std::int32_t> ids);

// Host bytes capture_outputs holds for `phase` on `tokens` tokens, an upper bound
// (every layer pass of every row, the logits, positions and ids).
std::size_t capture_bytes(const Runner& runner, Phase phase, std::int64_t tokens);

// Writes the outputs as a safetensors file (atomically, as save_weights does).
void write_outputs(const std::string& path, const ForwardOutputs& outputs);

}  // namespace hdlab::executor
