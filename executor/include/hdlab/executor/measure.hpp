#pragma once
// Measured runs: a phase repeated after warm-up, medians per op (model::OpKind names, per
// layer group), total time, executed FLOPs and memory, as a struct and as JSON. And the
// scale-down of a bundled backbone so a CPU can run it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/executor/runner.hpp"

namespace hdlab::executor {

struct MeasureOptions {
  Phase phase = Phase::prefill;
  // Training length, prompt length, or (decode) the context the measured steps start at.
  std::int64_t tokens = 128;
  int warmup = 1;
  int repeats = 5;
  std::uint64_t token_seed = 1;  // tokens are uniform over the vocabulary, from this seed
  // When set: the tokens of every train / prefill call and decode's prefilled context
  // (its size must equal `tokens`); the decode steps' tokens and VWN MTP's next token
  // stay seeded.
  std::vector<std::int32_t> prompt;
};

// One (layer group or outside, op) row: medians over the repeats.
struct OpStat {
  int group = -1;  // index into Runner::groups(); -1: outside the layers
  model::OpKind op = model::OpKind::embedding;
  OpMeasure median;  // each field's median over the repeats
};

struct Measurement {
  MeasureOptions options;
  std::vector<double> total_ms;  // each repeat
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double median_setup_ms = 0;
  std::vector<OpStat> ops;       // rows with at least one call, layer groups first
  double flops = 0;              // executed FLOPs per call (median)
  std::int64_t rows = 0, loss_rows = 0, context = 0;
  std::size_t weight_bytes = 0, kv_bytes = 0, peak_bytes = 0, estimate_bytes = 0, available_bytes = 0;
  // Sum over groups of one op's median time (per call).
  double op_ms(model::OpKind k) const;
};

// Runs the phase: train_forward or prefill of `tokens` tokens per repeat; decode: one
// prefill of `tokens` tokens (untimed), then warm-up and measured steps (step s at
// context tokens + s).
Measurement measure(Runner& runner, Backend& backend, const MeasureOptions& o);

// Everything of a measurement, ops with their group's label, layers and passes.
nlohmann::json to_json(const Measurement& m, const Runner& runner, const Backend& backend);

// How far one model's logits moved from another's on the same tokens (growth: the grown
// model against its base), from one training forward of each.
struct OutputChange {
  double max_rel = 0;  // max |a - b| / max |b|
  double rms_rel = 0;  // rms(a - b) / rms(b)
};
OutputChange output_change(Runner& changed, Runner& reference, std::span<const std::int32_t> tokens);

// Overrides that shrink (or grow) a backbone for a run; unset fields keep the
// backbone's value. Layers keep the per-layer attention, mixer and FFN patterns
// (cyclically), the KV-mirror pairs and leading dense layers are capped to fit; the head
// dim follows the hidden size when it was hidden / heads, and partial RoPE keeps its share
// of the head dim (in whole pairs). Linear mixers' own sizes are not scaled.
// model::ConfigError when the result is invalid.
struct BackboneScale {
  std::optional<std::int64_t> layers, hidden, heads, kv_heads, head_dim, ffn, vocab, experts, top_k, expert_ffn,
      window;
  bool empty() const;
};
model::Backbone scale_backbone(const model::Backbone& b, const BackboneScale& s);

}  // namespace hdlab::executor
