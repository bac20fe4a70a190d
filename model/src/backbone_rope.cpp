// RoPE scaling in the backbone format: {"type": "yarn", "factor": 40, ...} with HF's keys
// (rope.hpp says what each type reads). Unknown keys, and keys of another type, are refused.
#include "backbone_rope.hpp"

#include "hdlab/model/rope.hpp"

namespace hdlab::model {

namespace {

std::string num(double v) { return Json(v).dump(); }

// A list of positive numbers (LongRoPE's per-pair divisors).
std::vector<double> positive_list(ObjectReader& r, const char* key) {
  const Json& list = r.required(key);
  if (!list.is_array() || list.empty()) fail(r.at(key), "must be a non-empty list of numbers > 0");
  std::vector<double> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    out.push_back(read_number(list[i], pointer_join(r.at(key), i), 0.0));
    if (!(out.back() > 0)) fail(pointer_join(r.at(key), i), "must be > 0");
  }
  return out;
}

double positive(ObjectReader& r, const char* key) {
  const double v = r.number(key, 0.0, 0.0, 1e30);
  if (r.has(key) && !(v > 0)) fail(r.at(key), "must be > 0");
  return v;
}

void parse_yarn(ObjectReader& r, RopeScaling& s) {
  s.attention_factor = positive(r, "attention_factor");
  s.beta_fast = r.number("beta_fast", 32.0, 0.0, 1e30);
  s.beta_slow = r.number("beta_slow", 1.0, 0.0, 1e30);
  if (!(s.beta_slow > 0)) fail(r.at("beta_slow"), "must be > 0");
  if (s.beta_fast < s.beta_slow) fail(r.at("beta_fast"), "must be >= beta_slow (" + num(s.beta_slow) + ")");
  s.mscale = r.number("mscale", 0.0, 0.0, 1e30);
  s.mscale_all_dim = r.number("mscale_all_dim", 0.0, 0.0, 1e30);
  s.truncate = r.boolean("truncate", true);
}

}  // namespace

RopeScaling parse_rope_scaling(ObjectReader& r) {
  using K = RopeScalingKind;
  RopeScaling s;
  s.kind = r.choice<K>("type",
                       {{"none", K::none},
                        {"linear", K::linear},
                        {"dynamic", K::dynamic},
                        {"yarn", K::yarn},
                        {"llama3", K::llama3},
                        {"longrope", K::longrope}},
                       std::nullopt);
  if (s.kind == K::none) {
    r.finish();
    return s;
  }
  // factor: required but by LongRoPE (where max_context / original may stand for it)
  const bool need_factor = s.kind != K::longrope;
  s.factor = r.number("factor", need_factor ? std::nullopt : std::optional<double>(0.0), 1.0, 1e30);
  if (s.kind != K::linear && s.kind != K::dynamic)
    s.original_context = r.integer("original_max_position_embeddings",
                                   s.kind == K::llama3 ? std::nullopt : std::optional<std::int64_t>(0), 1,
                                   Limits::max_window);
  if (s.kind == K::yarn) parse_yarn(r, s);
  s.full_attention_only = r.boolean("full_attention_only", false);
  if (s.kind == K::llama3) {
    s.low_freq_factor = r.number("low_freq_factor", std::nullopt, 0.0, 1e30);
    if (!(s.low_freq_factor > 0)) fail(r.at("low_freq_factor"), "must be > 0");
    s.high_freq_factor = r.number("high_freq_factor", std::nullopt, 0.0, 1e30);
    if (!(s.high_freq_factor > s.low_freq_factor))
      fail(r.at("high_freq_factor"), "must be greater than low_freq_factor (" + num(s.low_freq_factor) + ")");
  }
  if (s.kind == K::longrope) {
    s.attention_factor = positive(r, "attention_factor");
    s.short_factor = positive_list(r, "short_factor");
    s.long_factor = positive_list(r, "long_factor");
  }
  r.finish();
  return s;
}

void validate_rope_scaling(const Backbone& b, const std::string& p) {
  const RopeScaling& s = b.rope_scaling;
  const std::string at = pointer_join(p, "rope_scaling");
  if (s.kind == RopeScalingKind::none) return;
  if (b.positions != PositionKind::rope)
    fail(at, std::string("applies to rope positions only, the backbone has ") + to_string(b.positions));
  const std::int64_t context = s.original_context > 0 ? s.original_context : b.max_context;
  if (s.kind == RopeScalingKind::dynamic && b.max_context < 1)
    fail(pointer_join(p, "max_context"), "is required (>= 1) with dynamic RoPE scaling: the base grows past it");
  if ((s.kind == RopeScalingKind::yarn || s.kind == RopeScalingKind::longrope) && context < 2)
    fail(pointer_join(at, "original_max_position_embeddings"),
         std::string("is required (>= 2) with ") + to_string(s.kind) + " scaling when max_context is not stated");
  if (s.kind == RopeScalingKind::longrope) {
    const auto pairs = static_cast<std::size_t>(rotary_dims(b) / 2);
    for (const auto& [key, list] : {std::pair{"short_factor", &s.short_factor}, {"long_factor", &s.long_factor}})
      if (list->size() != pairs)
        fail(pointer_join(at, key), "must have one number per rotated pair, " + std::to_string(pairs) + ", got " +
                                        std::to_string(list->size()));
  }
}

void rope_scaling_to_json(const Backbone& b, Json& j) {
  const RopeScaling& s = b.rope_scaling;
  if (s.kind == RopeScalingKind::none) return;
  Json o{{"type", to_string(s.kind)}};
  if (s.factor > 0) o["factor"] = s.factor;
  if (s.original_context > 0) o["original_max_position_embeddings"] = s.original_context;
  if (s.attention_factor > 0) o["attention_factor"] = s.attention_factor;
  if (s.kind == RopeScalingKind::yarn) {
    o["beta_fast"] = s.beta_fast;
    o["beta_slow"] = s.beta_slow;
    if (s.mscale > 0) o["mscale"] = s.mscale;
    if (s.mscale_all_dim > 0) o["mscale_all_dim"] = s.mscale_all_dim;
    o["truncate"] = s.truncate;
  }
  if (s.kind == RopeScalingKind::llama3) {
    o["low_freq_factor"] = s.low_freq_factor;
    o["high_freq_factor"] = s.high_freq_factor;
  }
  if (s.kind == RopeScalingKind::longrope) {
    o["short_factor"] = s.short_factor;
    o["long_factor"] = s.long_factor;
  }
  if (s.full_attention_only) o["full_attention_only"] = true;
  j["rope_scaling"] = o;
}

}  // namespace hdlab::model
