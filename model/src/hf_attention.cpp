// Per-layer attention kinds of an imported HF config: a generic layer_types list, or the
// model type's own rule (Mistral's and Phi-3's global window, Qwen's max_window_layers, Gemma's
// alternation).
#include "hf_internal.hpp"

namespace hdlab::model::hf {

namespace {

// The sliding window in tokens, or 0 for null. HF's masks let a query at t see keys
// t - window < t' <= t, the same convention as LayerAttention.
std::int64_t sliding_window_of(HfReader& r) {
  const std::int64_t dflt = r.type().sliding_window;
  if (r.has_key("sliding_window")) {
    const Json* v = r.present("sliding_window");
    return v ? read_integer(*v, r.at("sliding_window"), 1, Limits::max_window) : 0;
  }
  if (dflt > 0) r.note_default("attention", "sliding_window", num(dflt), "");
  return dflt;
}

// The kinds a generic "layer_types" list gives; returns the window of its sliding layers.
std::int64_t listed_kinds(HfReader& r, const Json& lt, bool qwen_sliding, std::vector<AttentionKind>& kinds) {
  const std::size_t n = kinds.size();
  const std::string ptr = r.at("layer_types");
  if (!lt.is_array()) fail(ptr, "must be an array of full_attention / sliding_attention, got " + json_type_name(lt));
  if (lt.size() != n)
    fail(ptr, "has " + num(static_cast<std::int64_t>(lt.size())) + " entries but num_hidden_layers is " +
                  num(static_cast<std::int64_t>(n)));
  for (std::size_t i = 0; i < n; ++i) {
    const std::string s = read_string(lt[i], pointer_join(ptr, i));
    if (s == "full_attention") kinds[i] = AttentionKind::full;
    else if (s == "sliding_attention") kinds[i] = AttentionKind::sliding;
    else fail(pointer_join(ptr, i), "layer type \"" + s + "\" is unsupported (hdlab models full_attention and sliding_attention)");
  }
  std::int64_t window = sliding_window_of(r);
  if (is_qwen(r.family()) && !qwen_sliding) window = 0;
  bool any_sliding = false;
  for (auto k : kinds) any_sliding = any_sliding || k == AttentionKind::sliding;
  if (any_sliding && window == 0) {
    // HF gives such layers no window, i.e. they attend fully.
    r.note("attention", "layer_types lists sliding_attention layers but the sliding window is null "
                        "(or use_sliding_window is false); they run full attention, as in HuggingFace");
    kinds.assign(n, AttentionKind::full);
  }
  return window;
}

// The kinds the model type's own rule gives; returns the window of its sliding layers.
std::int64_t rule_kinds(HfReader& r, bool qwen_sliding, std::vector<AttentionKind>& kinds) {
  const std::size_t n = kinds.size();
  const auto L = static_cast<std::int64_t>(n);
  std::int64_t window = 0;
  switch (r.family()) {
    case Family::llama:
    case Family::deepseek_v2:
    case Family::deepseek_v3:
    case Family::glm4_moe:
    case Family::granite:
    case Family::olmo2:
    case Family::olmoe:
    case Family::qwen3_next:    // its layer kinds come from hf_qwen3_next.cpp
    case Family::qwen3_5_text:  // likewise (Qwen3-Next's layers)
    case Family::nemotron_h:    // hf_nemotron_h.cpp reads its pattern; its attention layers are full
    case Family::llama4_text:  // hf_llama4.cpp reads its own
      break;
    case Family::mistral:
    case Family::mixtral:
    case Family::phi3:  // Phi3Config's sliding_window: every layer when set
      // Every layer uses the same window when one is set.
      window = sliding_window_of(r);
      if (window > 0) kinds.assign(n, AttentionKind::sliding);
      break;
    case Family::qwen2:
    case Family::qwen3:
    case Family::qwen3_moe:
      if (qwen_sliding) {
        window = sliding_window_of(r);
        const std::int64_t first = r.integer_or("max_window_layers", 28, 0, Limits::max_layers, "attention");
        // Layers from max_window_layers on use the window (HF's Qwen2Config.layer_types).
        for (std::int64_t l = first; l < L && window > 0; ++l) kinds[static_cast<std::size_t>(l)] = AttentionKind::sliding;
      }
      break;
    case Family::gpt_oss:
      // GptOssConfig without layer_types: even layers slide, odd ones are full.
      window = sliding_window_of(r);
      r.note("attention", "config.json has no layer_types; HuggingFace's gpt_oss default (even layers sliding, odd "
                          "layers full) used");
      for (std::size_t l = 0; l < n && window > 0; l += 2) kinds[l] = AttentionKind::sliding;
      break;
    case Family::gemma2:
      // Even layers slide, odd layers are global (HF: is_sliding = not bool(layer_idx % 2)).
      window = sliding_window_of(r);
      for (std::size_t l = 0; l < n; l += 2) kinds[l] = AttentionKind::sliding;
      if (window == 0) fail(r.at("sliding_window"), "must be set for gemma2 (its even layers are sliding)");
      break;
    case Family::olmo3:
      // Olmo3Config without layer_types: every 4th layer is full, the others slide.
      window = sliding_window_of(r);
      for (std::size_t l = 0; l < n && window > 0; ++l)
        if ((l + 1) % 4 != 0) kinds[l] = AttentionKind::sliding;
      r.note("attention", window > 0 ? "config.json has no layer_types; HuggingFace's olmo3 default: layers 4, 8, "
                                       "... full attention, the others sliding"
                                     : "sliding_window is null: every layer runs full attention");
      break;
    case Family::gemma3_text: {
      // Every sliding_window_pattern-th layer is global: sliding iff (l+1) % pattern != 0.
      window = sliding_window_of(r);
      const std::int64_t pattern =
          r.integer_or("sliding_window_pattern", 6, 1, Limits::max_layers, "attention", "5 local : 1 global");
      for (std::size_t l = 0; l < n; ++l)
        if ((static_cast<std::int64_t>(l) + 1) % pattern != 0) kinds[l] = AttentionKind::sliding;
      if (window == 0 && pattern > 1)
        fail(r.at("sliding_window"), "must be set for gemma3 (its local layers are sliding)");
      break;
    }
  }
  return window;
}

}  // namespace

// Per-layer attention: a generic "layer_types" list wins; otherwise the model type's rule.
std::vector<LayerAttention> layer_attention(HfReader& r, std::int64_t L) {
  const auto n = static_cast<std::size_t>(L);
  std::vector<AttentionKind> kinds(n, AttentionKind::full);
  // Qwen: a window only exists when use_sliding_window is true (HF sets it to None otherwise).
  const bool qwen_sliding = is_qwen(r.family()) && r.boolean_or("use_sliding_window", false, "");
  const Json* lt = r.present("layer_types");
  const std::int64_t window = lt ? listed_kinds(r, *lt, qwen_sliding, kinds) : rule_kinds(r, qwen_sliding, kinds);
  std::vector<LayerAttention> out(n);
  for (std::size_t l = 0; l < n; ++l)
    out[l] = {kinds[l], kinds[l] == AttentionKind::sliding ? window : 0};
  return out;
}

}  // namespace hdlab::model::hf
