// RoPE frequencies under HF's scaling types, written from the formulas transformers uses
// (modeling_rope_utils.py: _compute_{linear_scaling,dynamic_ntk,yarn,longrope,llama3}_parameters)
// and DeepSeek's MLA softmax scale (modeling_deepseek_v2/v3). Everything in double: a run
// converts the angles once per position (the backends reduce them in double).
#include "hdlab/model/rope.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "hdlab/model/backbone.hpp"

namespace hdlab::model {

const char* to_string(RopeScalingKind kind) {
  switch (kind) {
    case RopeScalingKind::none: return "none";
    case RopeScalingKind::linear: return "linear";
    case RopeScalingKind::dynamic: return "dynamic";
    case RopeScalingKind::yarn: return "yarn";
    case RopeScalingKind::llama3: return "llama3";
    case RopeScalingKind::longrope: return "longrope";
  }
  return "?";
}

std::int64_t rotary_dims(const Backbone& b) { return b.mla ? b.mla->qk_rope_head_dim : b.rope_dims(); }

// The expression the backends always used, so unscaled runs keep their exact frequencies.
std::vector<double> plain_inv_freq(double theta, std::int64_t r) {
  std::vector<double> f(static_cast<std::size_t>(r / 2));
  for (std::int64_t j = 0; j < r / 2; ++j)
    f[static_cast<std::size_t>(j)] = std::pow(theta, -2.0 * static_cast<double>(j) / static_cast<double>(r));
  return f;
}

namespace {

// YaRN's magnitude correction 0.1 k ln(s) + 1 (1 when s <= 1).
double yarn_mscale(double s, double k) { return s <= 1 ? 1.0 : 0.1 * k * std::log(s) + 1.0; }

// The context the scaling was trained from: original_max_position_embeddings, else the
// backbone's max_context (HF's max_position_embeddings).
double original_context(const Backbone& b) {
  return static_cast<double>(b.rope_scaling.original_context > 0 ? b.rope_scaling.original_context : b.max_context);
}

// YaRN: pair j keeps its frequency when it turns more than beta_fast times over the original
// context, is divided by the factor when it turns fewer than beta_slow times, and blends
// linearly between (the ramp over pair indices [low, high]).
void yarn(const Backbone& b, double theta, std::int64_t r, RotaryFrequencies& f) {
  const RopeScaling& s = b.rope_scaling;
  const double dims = static_cast<double>(r), L0 = original_context(b), base = std::log(theta);
  // the pair index at which a frequency turns `rotations` times over L0 positions
  auto pair_at = [&](double rotations) { return dims * std::log(L0 / (rotations * 2 * std::numbers::pi)) / (2 * base); };
  double low = pair_at(s.beta_fast), high = pair_at(s.beta_slow);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, dims - 1);
  if (low == high) high += 0.001;  // as transformers: no zero-width ramp
  for (std::size_t j = 0; j < f.inv_freq.size(); ++j) {
    const double ramp = std::clamp((static_cast<double>(j) - low) / (high - low), 0.0, 1.0);  // 1: interpolated
    f.inv_freq[j] = f.inv_freq[j] / s.factor * ramp + f.inv_freq[j] * (1 - ramp);
  }
  if (s.attention_factor > 0) f.cos_sin_factor = s.attention_factor;
  else if (s.mscale > 0 && s.mscale_all_dim > 0)
    f.cos_sin_factor = yarn_mscale(s.factor, s.mscale) / yarn_mscale(s.factor, s.mscale_all_dim);
  else f.cos_sin_factor = yarn_mscale(s.factor, 1.0);
}

// Llama 3.1: wavelengths 2 pi / inv_freq above original / low_freq_factor are divided by the
// factor, those below original / high_freq_factor kept, the band between blended by
// smooth = (original / wavelength - low) / (high - low).
void llama3(const RopeScaling& s, RotaryFrequencies& f) {
  const double L0 = static_cast<double>(s.original_context);
  for (double& inv : f.inv_freq) {
    const double wavelength = 2 * std::numbers::pi / inv;
    if (wavelength > L0 / s.low_freq_factor) {
      inv /= s.factor;
    } else if (wavelength >= L0 / s.high_freq_factor) {
      const double smooth = (L0 / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      inv = (1 - smooth) * inv / s.factor + smooth * inv;
    }
  }
}

// Dynamic NTK: past L0 = max_context positions the base becomes
// theta (factor n / L0 - (factor - 1))^(r / (r - 2)) for a sequence of n positions.
void dynamic(const Backbone& b, double theta, std::int64_t r, std::int64_t n, RotaryFrequencies& f) {
  const double L0 = static_cast<double>(b.max_context), s = b.rope_scaling.factor;
  if (static_cast<double>(n) <= L0 || r <= 2) return;  // the base is unchanged (r = 2: pair 0 only, 1 rad)
  const double dims = static_cast<double>(r);
  f.inv_freq = plain_inv_freq(theta * std::pow(s * static_cast<double>(n) / L0 - (s - 1), dims / (dims - 2)), r);
}

// LongRoPE: pair j divided by short_factor[j] for sequences within the original context,
// long_factor[j] past it; cos/sin times sqrt(1 + ln(factor) / ln(original)) unless given.
void longrope(const Backbone& b, std::int64_t n, RotaryFrequencies& f) {
  const RopeScaling& s = b.rope_scaling;
  const double L0 = original_context(b), factor = s.factor > 0 ? s.factor : 1.0;
  const std::vector<double>& ext = static_cast<double>(n) > L0 ? s.long_factor : s.short_factor;
  for (std::size_t j = 0; j < f.inv_freq.size(); ++j) f.inv_freq[j] /= ext[j];
  if (s.attention_factor > 0) f.cos_sin_factor = s.attention_factor;
  else f.cos_sin_factor = factor <= 1 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(L0));
}

}  // namespace

RotaryFrequencies rotary_frequencies(const Backbone& b, double theta, std::int64_t sequence_positions) {
  const RopeScaling& s = b.rope_scaling;
  const std::int64_t r = rotary_dims(b);
  RotaryFrequencies f;
  f.inv_freq = plain_inv_freq(theta, r);
  switch (s.kind) {
    case RopeScalingKind::none: break;
    case RopeScalingKind::linear:
      for (double& inv : f.inv_freq) inv /= s.factor;
      break;
    case RopeScalingKind::dynamic: dynamic(b, theta, r, sequence_positions, f); break;
    case RopeScalingKind::yarn: yarn(b, theta, r, f); break;
    case RopeScalingKind::llama3: llama3(s, f); break;
    case RopeScalingKind::longrope: longrope(b, sequence_positions, f); break;
  }
  // DeepSeek-V2/V3 multiply MLA's softmax scale by mscale(factor, mscale_all_dim)^2 whenever
  // the scaling gives mscale_all_dim (a YaRN key).
  if (b.mla && s.kind != RopeScalingKind::none && s.mscale_all_dim > 0 && s.factor > 0) {
    const double m = yarn_mscale(s.factor, s.mscale_all_dim);
    f.softmax_factor = m * m;
  }
  return f;
}

}  // namespace hdlab::model
