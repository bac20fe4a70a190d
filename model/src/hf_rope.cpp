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

namespace {

// The fields of a checked type, read into the Backbone's RopeScaling (the executor applies
// it; costs never read it). transformers' quirks kept: beta_fast / beta_slow of 0 mean
// their defaults (its `or`), and a phi3 config's top-level original_max_position_embeddings
// (Phi3Config defaults it to 4096) sets LongRoPE's original context and its factor
// max_position_embeddings / original.
RopeScaling read_scaling(HfReader& r, ObjectReader& s, const std::string& type, const Backbone& b) {
  auto number = [&](const char* k, double min) { return s.number(k, std::nullopt, min, 1e30); };
  auto positive = [&](const char* k) {
    const double v = number(k, 0.0);
    if (!(v > 0)) fail(s.at(k), "must be > 0");
    return v;
  };
  RopeScaling out;
  const std::pair<const char*, RopeScalingKind> kinds[] = {
      {"default", RopeScalingKind::none}, {"linear", RopeScalingKind::linear},
      {"dynamic", RopeScalingKind::dynamic}, {"yarn", RopeScalingKind::yarn},
      {"longrope", RopeScalingKind::longrope}, {"llama3", RopeScalingKind::llama3}};
  for (const auto& [name, kind] : kinds)
    if (type == name) out.kind = kind;
  if (s.has("factor")) out.factor = number("factor", 1.0);
  if (s.has("original_max_position_embeddings"))
    out.original_context = s.integer("original_max_position_embeddings", std::nullopt, 1, Limits::max_window);
  if (type == "llama3") {
    out.low_freq_factor = positive("low_freq_factor");
    out.high_freq_factor = number("high_freq_factor", 0.0);
    if (out.high_freq_factor <= out.low_freq_factor)
      fail(s.at("high_freq_factor"), "must be greater than low_freq_factor (" + num(out.low_freq_factor) + ")");
  }
  if (type == "yarn") {
    if (s.has("beta_fast") && number("beta_fast", 0.0) > 0) out.beta_fast = number("beta_fast", 0.0);
    if (s.has("beta_slow") && number("beta_slow", 0.0) > 0) out.beta_slow = number("beta_slow", 0.0);
    if (out.beta_fast < out.beta_slow) fail(s.at("beta_fast"), "must be >= beta_slow (" + num(out.beta_slow) + ")");
    if (s.has("mscale")) out.mscale = number("mscale", 0.0);
    if (s.has("mscale_all_dim")) out.mscale_all_dim = number("mscale_all_dim", 0.0);
    if (s.has("truncate")) out.truncate = s.boolean("truncate", std::nullopt);
  }
  if ((type == "yarn" || type == "longrope") && s.has("attention_factor"))
    out.attention_factor = positive("attention_factor");
  if (type == "longrope") {
    for (const char* k : {"short_factor", "long_factor"}) {
      const Json& list = s.required(k);
      // One factor per rotated pair: rotary_dim / 2 with partial RoPE (Phi-4-mini).
      const std::int64_t pairs = rotary_dims(b) / 2;
      if (!list.is_array() || static_cast<std::int64_t>(list.size()) != pairs)
        fail(s.at(k), std::string("must be a list of ") + (b.rotary_dim > 0 ? "rotary_dim" : "head_dim") + " / 2 = " +
                          num(pairs) + " numbers");
      auto& dst = std::string(k) == "short_factor" ? out.short_factor : out.long_factor;
      for (std::size_t i = 0; i < list.size(); ++i) {
        dst.push_back(read_number(list[i], pointer_join(s.at(k), i), 0.0));
        if (!(dst.back() > 0)) fail(pointer_join(s.at(k), i), "must be > 0");
      }
    }
    if (r.type().family == Family::phi3) {
      out.original_context = r.integer_or("original_max_position_embeddings", 4096, 1, Limits::max_window, "rope_scaling");
      if (b.max_context > 0)
        out.factor = static_cast<double>(b.max_context) / static_cast<double>(out.original_context);
    }
  }
  return out;
}

// The note: the type, its numbers and what a run of it rotates with.
std::string scaling_note(const std::string& type, const Backbone& b, const std::string& model_type) {
  const RopeScaling& s = b.rope_scaling;
  std::string note = "rope_type " + type;
  if (s.factor > 0) note += ", factor " + num(s.factor);
  if (s.original_context > 0) note += ", original context " + num(s.original_context) + " tokens";
  if (s.kind == RopeScalingKind::longrope)
    note += "; short_factor for sequences up to " + num(s.original_context > 0 ? s.original_context : b.max_context) +
            " positions, long_factor beyond";
  const RotaryFrequencies f = rotary_frequencies(b, b.rope_theta, b.max_context);
  if (f.cos_sin_factor != 1) note += "; cos/sin scaled by " + num(f.cos_sin_factor);
  if (f.softmax_factor != 1) note += "; MLA softmax scale multiplied by " + num(f.softmax_factor);
  if (s.full_attention_only)
    note += "; " + model_type + " scales RoPE on its full-attention layers only, the sliding layers keep plain RoPE";
  return note + ": the executor applies it to the rotary frequencies (no parameters, no FLOPs, so costs do not "
                "depend on it)";
}

}  // namespace

// rope_scaling (transformers v4) or rope_parameters (v5, which also holds rope_theta):
// checked as transformers checks it, with unknown keys refused (a misspelt key would
// silently drop a setting), and read into b.rope_scaling. Needs the heads, MLA and
// max_context read first.
void check_rope_scaling(HfReader& r, const char* key, Backbone& b) {
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
  for (const char* k : t->required)
    if (!s.has(k)) fail(s.at(k), "is required for rope_type " + type);
  for (const char* k : t->optional) s.allow({k});
  b.rope_scaling = read_scaling(r, s, type, b);
  s.finish();
  // OLMo 3 and Gemma 3 scale their full-attention layers only (transformers gives their
  // sliding layers a plain rotary embedding; Gemma 3's with rope_local_base_freq).
  b.rope_scaling.full_attention_only = r.type().family == Family::olmo3 || r.type().family == Family::gemma3_text;
  if (type != "default") r.note("rope_scaling", scaling_note(type, b, r.type().name));
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
