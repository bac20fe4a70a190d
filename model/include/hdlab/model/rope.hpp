#pragma once
// RoPE frequency scaling (HF's rope_scaling / rope_parameters) and the one function that
// turns a backbone's RoPE settings into what a run applies: the inverse frequency of every
// rotated pair, the factor on cos and sin, and MLA's softmax-scale factor. Scaling adds no
// parameters and no FLOPs: costs never read it; the executor does (rope.cpp).
#include <cstdint>
#include <vector>

namespace hdlab::model {

struct Backbone;

// none: plain RoPE, inv_freq_j = theta^(-2j/r) for pair j < r/2 of r rotated dims.
// linear: positions interpolated, inv_freq_j / factor.
// dynamic: NTK-aware, the base grows with the sequence past the native context.
// yarn: per-pair blend of interpolated and original frequencies, cos/sin scaled.
// llama3: Llama 3.1's wavelength bands (long wavelengths / factor, short kept, a ramp between).
// longrope: per-pair divisors (short_factor up to the original context, long_factor past it).
enum class RopeScalingKind { none, linear, dynamic, yarn, llama3, longrope };
const char* to_string(RopeScalingKind kind);

// The numbers each kind reads (HF's key names in the JSON, rope_scaling_io.cpp). A 0 means
// "not given" where the field is optional; what is derived then is in rope.cpp.
struct RopeScaling {
  RopeScalingKind kind = RopeScalingKind::none;
  double factor = 0;                   // linear, dynamic, yarn, llama3 (>= 1); longrope: optional
  std::int64_t original_context = 0;   // original_max_position_embeddings, tokens (yarn, llama3, longrope)
  double attention_factor = 0;         // yarn, longrope: the cos/sin factor; 0: derived
  double beta_fast = 32, beta_slow = 1;  // yarn: rotations bounding the ramp
  double mscale = 0, mscale_all_dim = 0;  // yarn (DeepSeek): 0 = not given
  bool truncate = true;                // yarn: floor/ceil the ramp's bounds (gpt-oss: false)
  double low_freq_factor = 0, high_freq_factor = 0;  // llama3
  std::vector<double> short_factor, long_factor;     // longrope: one per rotated pair
  // The scaling applies to full-attention layers only; sliding and chunked layers rotate
  // with plain RoPE (OLMo 3; Gemma 3's global layers).
  bool full_attention_only = false;
  bool operator==(const RopeScaling&) const = default;
};

// What a run rotates with. inv_freq: radians per position of each rotated pair j (the pair
// (j, j + r/2) of a head's first r dims), r/2 values; cos_sin_factor multiplies cos and sin
// (so the rotated dims), YaRN's and LongRoPE's attention_factor; softmax_factor multiplies
// the attention's softmax scale (DeepSeek's MLA under YaRN: mscale(factor, mscale_all_dim)^2).
struct RotaryFrequencies {
  std::vector<double> inv_freq;
  double cos_sin_factor = 1;
  double softmax_factor = 1;
};

// Plain RoPE's inverse frequencies theta^(-2j/r), j < r/2, for r rotated dims.
std::vector<double> plain_inv_freq(double theta, std::int64_t rotary_dims);

// Rotated dims per head: MLA's qk_rope_head_dim, else rotary_dim or head_dim.
std::int64_t rotary_dims(const Backbone& b);

// The frequencies of `b`'s RoPE with base `theta` (the backbone's, or a design's) for a
// sequence whose largest rotated position is below `sequence_positions`. Only dynamic and
// longrope read it (transformers recomputes them per forward from max(position_ids) + 1; a
// run passes the most positions its sequence reaches, so a whole sequence, prefill and
// decode alike, rotates with one set and decode equals the full forward).
RotaryFrequencies rotary_frequencies(const Backbone& b, double theta, std::int64_t sequence_positions);

}  // namespace hdlab::model
