#pragma once
// The interface every design module fills (model/src/designs/<design>.cpp). A module is a
// set of free functions in hdlab::model::designs overloaded on its design struct; the
// registry (design.hpp, designs/registry.cpp) dispatches over model::Method with one
// std::visit per question and checks with the DesignModule concept that every alternative
// answers every question, so a design added to Method without its module does not compile.
//
// The value types below are what consumers (simulator, executor, GUI core) read instead of
// naming a design: they say what a design changes in the backbone's own terms.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hdlab/model/backbone.hpp"
#include "hdlab/model/designs/hd.hpp"

namespace hdlab::model {

// Keys a design's JSON left out and the value taken for each, by JSON pointer.
using DesignDefaults = std::map<std::string, std::string>;

// What a design changes about the backbone's computation, as plain numbers.
struct DesignFeatures {
  std::int64_t copies = 1;          // positions per token in the expanded sequence (HD n, PHD K)
  std::int64_t input_tables = 1;    // embedding tables summed into a position (HD: one per stream)
  bool streams = false;             // the copies are streams choosing an attention kind per layer (HD)
  bool final_stream_mirror = false; // KV-mirror layers run only the final stream's queries (HD kv_mirror)
  bool hidden_copies = false;       // copies 1..K-1 are hidden copies of an origin token (PHD)
  // Hidden copies read linear-attention layers' recurrent states and conv histories but
  // write neither (PHD linear_state "origins"); false: every position writes them.
  bool hidden_copies_read_only = false;
  double rope_theta = 0;            // RoPE base the design runs with; 0: the backbone's
  // Residual widened to D' = (n/m) D as n slots of D/m, mixed around each sublayer by
  // generalized hyper-connections (VWN).
  bool wide_residual = false;
  std::int64_t width_m = 1, width_n = 1;
  bool dynamic_mixing = false;       // VWN's input-dependent (tanh) mixing coefficients
  bool projected_embedding = false;  // D-wide table projected to D' (else a D'-wide table)
  bool mtp = false;                  // multi-token-prediction branch (training)
  // Other kinds of wide residual (mHC's: n streams of D, width_m = 1): the D-wide
  // embedding row copied into each of the n slots (else a D'-wide table, or projected);
  // the slots summed before the final norm (else VWN's GroupNorm and reduce); and the
  // mixing coefficients computed by the design module's own op (its mixing_ops in the
  // layer program, its module op in the executor) instead of VWN's static or tanh ones.
  bool copied_embedding = false;
  bool summed_readout = false;
  bool module_mixing = false;
  // Looped depth: a recurrent block run loop_iterations times; injection re-feeds the
  // embedding through a 2D -> D adapter at each iteration.
  std::int64_t loop_iterations = 1;
  bool input_injection = false;
  // A KV-cached decode computes what the full forward computes for the same tokens. False
  // where the cache is an approximation (looped shared KV: later iterations read earlier
  // tokens' last-iteration K/V); the conformance suite checks the claim either way.
  bool decode_exact = true;

  double width_ratio() const { return static_cast<double>(width_n) / static_cast<double>(width_m); }
  std::int64_t residual_width(std::int64_t hidden) const { return hidden * width_n / width_m; }
};

// What a layer's attention is, for the decode-step and cache questions: the backbone's
// kind and window, and under a stream design the kind the layer's streams use.
struct LayerAttentionRole {
  AttentionKind base_kind = AttentionKind::full;
  std::int64_t base_window = 0;        // tokens (sliding layers' window, chunked layers' chunk)
  HdLayerKind stream_kind = HdLayerKind::full;
  bool final_queries_only = false;     // only the final stream issues queries
  bool token_index_rope = false;       // RoPE sees the token index, not the expanded position
};

// Attention work of one decode step of one sequence in one layer (counts of rows,
// (query, key) pairs and cache entries; one entry = one position's K and V of one head group).
struct DecodeAttention {
  double rows_q = 1, rows_kv = 1;      // query rows, rows projected to K/V this step
  double pairs_exact = 0;              // visible (query, key) pairs
  double pairs_executed = 0;           // pairs a kernel computes (whole key tiles)
  double kv_read = 0;                  // cache entries read
  double kv_written = 1;               // entries written this step
};

// The knob that sizes a design (HD n, PHD K, VWN n/m, loop iterations): how the GUI's
// trade-off charts sweep it.
struct SizeKnob {
  std::string key;                 // short axis name ("n", "K", "n/m", "iterations")
  std::string label;               // axis title
  std::vector<double> candidates;  // values offered, ascending
  double current = 0;
};

// A design's editor page, declared by its module beside its JSON block: the GUI builds
// the page from this, so a new design brings its page with it. Each field is one key of
// the method's JSON block; the values a fresh page shows are the `start` ones (what a user
// is likely to try first, not necessarily the parser's defaults).
struct FormChoice {
  std::string value;  // as written in the JSON
  std::string label;  // as shown
};
struct FormField {
  enum class Kind { integer, real, flag, choice };
  std::string key;    // in the method's JSON block
  std::string label;  // short, lower case ("streams n")
  Kind kind = Kind::integer;
  double min = 0, max = 0;  // integer and real
  int decimals = 0;         // real
  double start = 0;         // integer, real; flag: != 0 is checked
  std::string start_choice; // choice
  std::string unit;         // shown after the value, with its leading space (" tokens"); flag: its caption
  std::string tooltip;
  // Integer/real: the text shown at `min`, which then means "not given": the key is left
  // out of the JSON and the parser derives it (HD's window: "auto").
  std::string min_text;
  std::vector<FormChoice> choices;
  // Enabled, and written, only while the choice field `when_key` holds one of
  // `when_values` (PHD's W and C).
  std::string when_key;
  std::vector<std::string> when_values;
  // Usable only on a backbone with KV-mirror layers (HD's kv_mirror).
  bool needs_mirror_layers = false;
};
struct DesignForm {
  std::string title;  // the method's name in the method picker
  std::string about;  // a sentence above the fields
  std::vector<FormField> fields;
  // The per-layer stream kinds (HD's "layers") are edited by the editor's layer rule and
  // the Layers tab, not as a field.
  bool layer_kinds = false;
  // Integer fields that split the backbone's layers between them: their sum must equal the
  // layer count, and `partition_rest` takes what the others leave (looped: prelude,
  // recurrent, coda).
  std::vector<std::string> layer_partition;
  std::string partition_rest;
};

}  // namespace hdlab::model
