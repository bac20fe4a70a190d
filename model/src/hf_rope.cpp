// RoPE scaling of an imported HF config: rope_scaling (transformers v4) or rope_parameters
// (v5), checked as transformers checks them. Scaling changes no parameter or FLOP.
#include "hf_internal.hpp"

namespace hdlab::model::hf {

namespace {

// HF's RoPE scaling types (transformers' rope_config_validation) with the keys each
// requires besides the type, and the ones it may carry.
struct RopeScalingType {
  const char* name;
  std::vector<const char*> required;
  std::vector<const char*> optional;
};

const RopeScalingType kRopeScalingTypes[] = {
    {"default", {}, {}},
    {"linear", {"factor"}, {}},
    {"dynamic", {"factor"}, {"original_max_position_embeddings"}},
    {"yarn",
     {"factor"},
     {"original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
      "truncate"}},
    {"longrope", {"short_factor", "long_factor"}, {"factor", "attention_factor", "original_max_position_embeddings"}},
    {"llama3", {"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"}, {}},
};

// Ministral 3's rope_parameters also carry llama_4_scaling_beta: Llama 4's attention
// temperature, each query multiplied by 1 + beta * log(1 + floor(position /
// original_max_position_embeddings)) (transformers' modeling_ministral3). A per-token
// scalar: no parameters, and an elementwise multiply hdlab does not cost. transformers
// skips it and max_position_embeddings (its default block repeats the top-level key) when
// validating the block; both are read here so a malformed value is still refused.
void note_llama4_scaling(HfReader& r, ObjectReader& s) {
  if (s.has("max_position_embeddings")) s.integer("max_position_embeddings", std::nullopt, 1, Limits::max_window);
  if (!s.has("llama_4_scaling_beta")) return;
  const double beta = s.number("llama_4_scaling_beta", std::nullopt, 0.0, 1e30);
  r.note("rope_scaling", "llama_4_scaling_beta " + num(beta) + ": queries are scaled by 1 + beta * log(1 + "
                         "floor(position / original_max_position_embeddings)), Llama 4's attention temperature (no "
                         "parameters; the elementwise multiply is not costed)");
}

}  // namespace

// rope_scaling (transformers v4) or rope_parameters (v5, which also holds rope_theta):
// checked as transformers checks it, with unknown keys refused (a misspelt key would
// silently drop a setting). Scaling changes the rotary frequencies only: no parameters,
// no FLOPs, so costs do not depend on it; a valid one is recorded as a note.
void check_rope_scaling(HfReader& r, const char* key, const Backbone& b) {
  const Json* v = r.present(key);
  if (!v) return;
  const std::string ptr = r.at(key);
  ObjectReader s(*v, ptr);
  const bool v5 = std::string(key) == "rope_parameters";
  if (v5) s.allow({"rope_theta", "partial_rotary_factor"});  // v5 keeps both here (read elsewhere)
  // Qwen3.5's multimodal RoPE: three sections (time, height, width) of the rotary pairs
  // take their positions from the vision grid; a text token's three positions are equal,
  // which is plain RoPE. No parameters, no FLOPs beyond RoPE's.
  if (v5 && std::string(r.type().name).rfind("qwen3_5", 0) == 0 && s.has("mrope_section")) {
    s.allow({"mrope_section", "mrope_interleaved"});
    r.note("rope_scaling", "mrope_section " + (*v)["mrope_section"].dump() + ": multimodal RoPE, plain RoPE on "
                           "text tokens (their three position ids are equal)");
  }
  if (v5 && std::string(r.type().name) == "ministral3") note_llama4_scaling(r, s);
  // "type" is the older spelling of "rope_type" (DeepSeek-V3 still writes it).
  const char* type_key = s.has("rope_type") || !s.has("type") ? "rope_type" : "type";
  // transformers v5 writes rope_parameters with only rope_theta for unscaled RoPE.
  if (v5 && !s.has(type_key)) {
    s.finish();
    return;
  }
  if (s.has("rope_type") && s.has("type") && (*v)["rope_type"] != (*v)["type"])
    fail(s.at("type"), "disagrees with rope_type (" + (*v)["type"].dump() + " vs " + (*v)["rope_type"].dump() + ")");
  s.allow({"type"});
  std::string names;
  for (const auto& t : kRopeScalingTypes) names += std::string(names.empty() ? "" : ", ") + t.name;
  if (!s.has(type_key)) fail(s.at("rope_type"), "is required (one of " + names + ")");
  const std::string type = s.string(type_key, std::nullopt);
  const RopeScalingType* t = nullptr;
  for (const auto& known : kRopeScalingTypes)
    if (type == known.name) t = &known;
  if (!t) fail(s.at(type_key), "unknown RoPE scaling type \"" + type + "\" (known: " + names + ")");
  auto number = [&](const char* k, double min) { return s.number(k, std::nullopt, min, 1e30); };
  for (const char* k : t->required)
    if (!s.has(k)) fail(s.at(k), "is required for rope_type " + type);
  for (const char* k : t->optional) s.allow({k});
  std::string note = "rope_type " + type;
  if (s.has("factor")) {
    const double f = number("factor", 1.0);
    note += ", factor " + num(f);
  }
  if (s.has("original_max_position_embeddings")) {
    const std::int64_t n = s.integer("original_max_position_embeddings", std::nullopt, 1, Limits::max_window);
    note += ", original context " + num(n) + " tokens";
  }
  if (type == "llama3") {
    const double low = number("low_freq_factor", 0.0), high = number("high_freq_factor", 0.0);
    if (low <= 0) fail(s.at("low_freq_factor"), "must be > 0");
    if (high <= low) fail(s.at("high_freq_factor"), "must be greater than low_freq_factor (" + num(low) + ")");
  }
  if (type == "yarn") {
    const double fast = s.has("beta_fast") ? number("beta_fast", 0.0) : 32.0;
    const double slow = s.has("beta_slow") ? number("beta_slow", 0.0) : 1.0;
    if (fast < slow) fail(s.at("beta_fast"), "must be >= beta_slow (" + num(slow) + ")");
    for (const char* k : {"attention_factor", "mscale", "mscale_all_dim"})
      if (s.has(k)) number(k, 0.0);
    if (s.has("truncate")) s.boolean("truncate", std::nullopt);
  }
  if (type == "longrope") {
    if (s.has("attention_factor")) number("attention_factor", 0.0);
    for (const char* k : {"short_factor", "long_factor"}) {
      const Json& list = s.required(k);
      // One factor per rotated pair: rotary_dim / 2 with partial RoPE (Phi-4-mini).
      const std::int64_t pairs = b.rope_dims() / 2;
      if (!list.is_array() || static_cast<std::int64_t>(list.size()) != pairs)
        fail(s.at(k), std::string("must be a list of ") + (b.rotary_dim > 0 ? "rotary_dim" : "head_dim") + " / 2 = " +
                          num(pairs) + " numbers");
      for (std::size_t i = 0; i < list.size(); ++i) read_number(list[i], pointer_join(s.at(k), i), 0.0);
    }
  }
  s.finish();
  if (type != "default")
    r.note("rope_scaling", note + ": rescales the rotary frequencies only (no parameters, no FLOPs), so costs do "
                                  "not depend on it");
}

// partial_rotary_factor: HF rotates the first int(head_dim * factor) dims of each query and
// key head and passes the rest through. No parameters; the RoPE op's FLOPs scale with it.
void read_partial_rotary(HfReader& r, Backbone& b, double default_factor) {
  const Json* v = r.present("partial_rotary_factor");
  std::string at = r.at("partial_rotary_factor");
  // transformers v5 writes it inside rope_parameters; both places must agree.
  if (const Json* rp = r.present("rope_parameters"); rp && rp->is_object() && rp->contains("partial_rotary_factor")) {
    const std::string inner = pointer_join(r.at("rope_parameters"), "partial_rotary_factor");
    if (v && read_number(*v, at, 0.0, 1.0) != read_number((*rp)["partial_rotary_factor"], inner, 0.0, 1.0))
      fail(inner, "disagrees with partial_rotary_factor (" + v->dump() + ")");
    v = &(*rp)["partial_rotary_factor"];
    at = inner;
  }
  const double factor = v ? read_number(*v, at, 0.0, 1.0) : default_factor;
  if (!v) r.note_default("rotary_dim", "partial_rotary_factor", num(default_factor), "");
  const auto dims = static_cast<std::int64_t>(static_cast<double>(b.head_dim) * factor);
  if (dims < 2 || dims % 2 != 0)
    fail(at, num(factor) + " x head_dim " + num(b.head_dim) + " gives " + num(dims) +
                                            " rotary dims; RoPE needs an even number >= 2");
  b.rotary_dim = dims == b.head_dim ? 0 : dims;
  if (b.rotary_dim > 0)
    r.note("rotary_dim", "partial RoPE: " + num(dims) + " of head_dim " + num(b.head_dim) +
                             " dims rotated (partial_rotary_factor " + num(factor) + ")");
}

}  // namespace hdlab::model::hf
