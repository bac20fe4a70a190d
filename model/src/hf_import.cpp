#include "hdlab/model/hf_import.hpp"

#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::model {

namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

enum class Family { llama, mistral, qwen2, qwen3, qwen3_moe, mixtral, gemma2, gemma3_text, deepseek_v3 };

// What transformers' configuration class for a model_type uses when config.json leaves a
// key out (the keyword defaults of e.g. LlamaConfig.__init__). Sizing keys (layers,
// hidden, heads, FFN, vocabulary) have no entry: a config without them is an error, not
// a silent model of HF's example default. (Exception: Gemma3TextConfig's heads and
// vocabulary, which the official multimodal gemma-3 configs rely on.)
struct TypeInfo {
  const char* name;
  Family family;
  bool tie_embeddings;
  double rope_theta;
  double norm_eps;
  std::int64_t kv_heads;        // when the key is absent; 0: = num_attention_heads
  std::int64_t head_dim;        // when the key is absent; 0: = hidden_size / num_attention_heads
  std::int64_t max_position;    // max_position_embeddings
  std::int64_t sliding_window;  // 0: null
};

const TypeInfo kTypes[] = {
    {"llama", Family::llama, false, 10000.0, 1e-6, 0, 0, 2048, 0},
    {"mistral", Family::mistral, false, 10000.0, 1e-6, 8, 0, 4096 * 32, 4096},
    {"qwen2", Family::qwen2, false, 10000.0, 1e-6, 32, 0, 32768, 4096},
    {"qwen3", Family::qwen3, false, 10000.0, 1e-6, 32, 128, 32768, 4096},
    {"qwen3_moe", Family::qwen3_moe, false, 10000.0, 1e-6, 4, 0, 32768, 4096},
    {"mixtral", Family::mixtral, false, 1e6, 1e-5, 8, 0, 4096 * 32, 0},
    {"gemma2", Family::gemma2, true, 10000.0, 1e-6, 4, 256, 8192, 4096},
    {"gemma3_text", Family::gemma3_text, true, 1e6, 1e-6, 4, 256, 131072, 4096},
    {"deepseek_v3", Family::deepseek_v3, false, 10000.0, 1e-6, 128, 0, 4096, 0},
};

std::string supported_types() {
  std::string s;
  for (const auto& t : kTypes) s += std::string(s.empty() ? "" : ", ") + t.name;
  return s + ", gemma3 (its text_config)";
}

const TypeInfo& type_info(const std::string& name, const std::string& ptr) {
  for (const auto& t : kTypes)
    if (name == t.name) return t;
  fail(ptr, "unsupported model_type \"" + name + "\" (supported: " + supported_types() + ")");
}

bool is_gemma(Family f) { return f == Family::gemma2 || f == Family::gemma3_text; }
bool is_qwen(Family f) { return f == Family::qwen2 || f == Family::qwen3 || f == Family::qwen3_moe; }

// Reads one HF config object. HF configs carry many keys hdlab does not need, so unknown
// keys are never rejected; HF writes absent optionals as null, so null counts as absent.
// Every default taken is recorded in the backbone's assumptions under our field name.
class HfReader {
 public:
  HfReader(const Json& j, const std::string& pointer, const TypeInfo& type, Backbone& b)
      : r_(j, pointer), type_(type), b_(b) {}

  std::string at(const std::string& key) const { return r_.at(key); }
  const std::string& pointer() const { return r_.pointer(); }
  Family family() const { return type_.family; }
  const TypeInfo& type() const { return type_; }

  bool has_key(const std::string& key) const { return r_.has(key); }
  const Json* present(const std::string& key) {
    const Json* v = r_.find(key);
    return v && !v->is_null() ? v : nullptr;
  }

  std::int64_t required_integer(const std::string& key, std::int64_t min, std::int64_t max) {
    const Json* v = present(key);
    if (!v) fail(at(key), "is required");
    return read_integer(*v, at(key), min, max);
  }
  std::int64_t integer_or(const std::string& key, std::int64_t dflt, std::int64_t min, std::int64_t max,
                          const std::string& field, const std::string& why = "") {
    if (const Json* v = present(key)) return read_integer(*v, at(key), min, max);
    note_default(field, key, num(dflt), why);
    return dflt;
  }
  double number_or(const std::string& key, double dflt, double min, double max, const std::string& field) {
    if (const Json* v = present(key)) return read_number(*v, at(key), min, max);
    note_default(field, key, num(dflt), "");
    return dflt;
  }
  // `field` empty: the default is not worth an assumption (e.g. a feature switched off).
  bool boolean_or(const std::string& key, bool dflt, const std::string& field) {
    if (const Json* v = present(key)) return read_bool(*v, at(key));
    if (!field.empty()) note_default(field, key, dflt ? "true" : "false", "");
    return dflt;
  }
  std::optional<std::string> string_opt(const std::string& key) {
    if (const Json* v = present(key)) return read_string(*v, at(key));
    return std::nullopt;
  }

  void note(const std::string& field, const std::string& text) {
    auto& slot = b_.assumptions[field];
    slot += slot.empty() ? text : "; " + text;
  }
  void note_default(const std::string& field, const std::string& key, const std::string& value,
                    const std::string& why) {
    note(field, std::string("config.json has no ") + key + "; HuggingFace's " + type_.name + " default " + value +
                    (why.empty() ? "" : " (" + why + ")") + " used");
  }

 private:
  ObjectReader r_;
  const TypeInfo& type_;
  Backbone& b_;
};

DType dtype_of(const std::string& s, const std::string& ptr) {
  if (s == "bfloat16") return DType::bf16;
  if (s == "float16") return DType::fp16;
  if (s == "float32") return DType::fp32;
  if (s == "float8_e4m3fn" || s == "float8_e5m2") return DType::fp8;
  fail(ptr, "unsupported dtype \"" + s + "\" (supported: bfloat16, float16, float32, float8_e4m3fn, float8_e5m2)");
}

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

// Per-layer attention: a generic "layer_types" list wins; otherwise the model type's rule.
std::vector<LayerAttention> layer_attention(HfReader& r, std::int64_t L) {
  const auto n = static_cast<std::size_t>(L);
  std::vector<AttentionKind> kinds(n, AttentionKind::full);
  std::int64_t window = 0;
  const Family f = r.family();

  // Qwen: a window only exists when use_sliding_window is true (HF sets it to None otherwise).
  bool qwen_sliding = false;
  if (is_qwen(f)) qwen_sliding = r.boolean_or("use_sliding_window", false, "");

  if (const Json* lt = r.present("layer_types")) {
    const std::string ptr = r.at("layer_types");
    if (!lt->is_array()) fail(ptr, "must be an array of full_attention / sliding_attention, got " + json_type_name(*lt));
    if (static_cast<std::int64_t>(lt->size()) != L)
      fail(ptr, "has " + num(static_cast<std::int64_t>(lt->size())) + " entries but num_hidden_layers is " + num(L));
    for (std::size_t i = 0; i < n; ++i) {
      const std::string s = read_string((*lt)[i], pointer_join(ptr, i));
      if (s == "full_attention") kinds[i] = AttentionKind::full;
      else if (s == "sliding_attention") kinds[i] = AttentionKind::sliding;
      else fail(pointer_join(ptr, i), "layer type \"" + s + "\" is unsupported (hdlab models full_attention and sliding_attention)");
    }
    window = sliding_window_of(r);
    if (is_qwen(f) && !qwen_sliding) window = 0;
    bool any_sliding = false;
    for (auto k : kinds) any_sliding = any_sliding || k == AttentionKind::sliding;
    if (any_sliding && window == 0) {
      // HF gives such layers no window, i.e. they attend fully.
      r.note("attention", "layer_types lists sliding_attention layers but the sliding window is null "
                          "(or use_sliding_window is false); they run full attention, as in HuggingFace");
      kinds.assign(n, AttentionKind::full);
    }
  } else {
    switch (f) {
      case Family::llama:
      case Family::deepseek_v3:
        break;
      case Family::mistral:
      case Family::mixtral:
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
      case Family::gemma2:
        // Even layers slide, odd layers are global (HF: is_sliding = not bool(layer_idx % 2)).
        window = sliding_window_of(r);
        for (std::size_t l = 0; l < n; l += 2) kinds[l] = AttentionKind::sliding;
        if (window == 0) fail(r.at("sliding_window"), "must be set for gemma2 (its even layers are sliding)");
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
  }
  std::vector<LayerAttention> out(n);
  for (std::size_t l = 0; l < n; ++l)
    out[l] = {kinds[l], kinds[l] == AttentionKind::sliding ? window : 0};
  return out;
}

// MoE FFN of the MoE model types; sets b.moe and b.intermediate.
void read_moe(HfReader& r, Backbone& b) {
  const Family f = r.family();
  const std::int64_t L = b.num_layers;
  if (f == Family::mixtral) {
    MoeConfig m;
    m.num_experts = r.required_integer("num_local_experts", 1, Limits::max_experts);
    m.top_k = r.required_integer("num_experts_per_tok", 1, Limits::max_experts);
    // In Mixtral, intermediate_size is the size of each expert; there is no dense FFN.
    m.expert_intermediate = r.required_integer("intermediate_size", 1, Limits::max_intermediate);
    m.shared_expert_intermediate = m.expert_intermediate;  // no shared experts; parse_moe's canonical value
    b.moe = m;
    b.intermediate = 0;
    return;
  }
  if (f == Family::qwen3_moe) {
    MoeConfig m;
    m.num_experts = r.required_integer("num_experts", 1, Limits::max_experts);
    m.top_k = r.required_integer("num_experts_per_tok", 1, Limits::max_experts);
    m.expert_intermediate = r.required_integer("moe_intermediate_size", 1, Limits::max_intermediate);
    m.shared_expert_intermediate = m.expert_intermediate;  // no shared experts; parse_moe's canonical value
    // HF: layer l is sparse iff l not in mlp_only_layers and (l + 1) % decoder_sparse_step == 0.
    const std::int64_t step = r.integer_or("decoder_sparse_step", 1, 1, Limits::max_layers, "moe");
    std::set<std::int64_t> mlp_only;
    if (const Json* mo = r.present("mlp_only_layers")) {
      const std::string ptr = r.at("mlp_only_layers");
      if (!mo->is_array()) fail(ptr, "must be a list of layer indices, got " + json_type_name(*mo));
      for (std::size_t i = 0; i < mo->size(); ++i) mlp_only.insert(read_integer((*mo)[i], pointer_join(ptr, i), 0, L - 1));
    }
    std::int64_t leading_dense = 0;
    while (leading_dense < L && (mlp_only.count(leading_dense) || (leading_dense + 1) % step != 0)) ++leading_dense;
    for (std::int64_t l = leading_dense; l < L; ++l) {
      if (mlp_only.count(l))
        fail(r.at("mlp_only_layers"), "dense layer " + num(l) + " after MoE layers is unsupported: hdlab models "
                                      "dense FFN layers only as a leading block (first_dense_layers)");
      if ((l + 1) % step != 0)
        fail(r.at("decoder_sparse_step"), num(step) + " makes layer " + num(l) + " dense after MoE layers, which is "
                                          "unsupported: hdlab models dense FFN layers only as a leading block");
    }
    m.first_dense_layers = leading_dense;
    b.moe = m;
    b.intermediate = leading_dense > 0 ? r.required_integer("intermediate_size", 1, Limits::max_intermediate) : 0;
    return;
  }
  if (f == Family::deepseek_v3) {
    MoeConfig m;
    m.num_experts = r.required_integer("n_routed_experts", 1, Limits::max_experts);
    m.top_k = r.required_integer("num_experts_per_tok", 1, Limits::max_experts);
    m.expert_intermediate = r.required_integer("moe_intermediate_size", 1, Limits::max_intermediate);
    // HF builds one shared MLP of n_shared_experts * moe_intermediate_size: the same weights
    // as n_shared_experts experts of moe_intermediate_size each.
    m.num_shared_experts = r.integer_or("n_shared_experts", 1, 0, Limits::max_experts, "moe");
    m.shared_expert_intermediate = m.expert_intermediate;
    m.first_dense_layers = r.integer_or("first_k_dense_replace", 3, 0, L, "moe");
    const std::int64_t freq = r.integer_or("moe_layer_freq", 1, 1, Limits::max_layers, "moe");
    if (freq != 1)
      fail(r.at("moe_layer_freq"), "values other than 1 are unsupported: hdlab models dense FFN layers only as a "
                                   "leading block (first_dense_layers)");
    const std::string scoring = r.string_opt("scoring_func").value_or("sigmoid");
    if (scoring == "sigmoid") m.router = RouterKind::sigmoid;
    else if (scoring == "softmax") m.router = RouterKind::softmax;
    else fail(r.at("scoring_func"), "unsupported scoring_func \"" + scoring + "\" (sigmoid or softmax)");
    if (!r.present("scoring_func"))
      r.note("moe", "config.json has no scoring_func; sigmoid used, as HuggingFace's deepseek_v3 router always does");
    if (r.string_opt("topk_method").value_or("noaux_tc") == "noaux_tc")
      r.note("moe", "the router's e_score_correction_bias (n_routed_experts values per MoE layer) is not counted");
    b.moe = m;
    b.intermediate = m.first_dense_layers > 0 ? r.required_integer("intermediate_size", 1, Limits::max_intermediate) : 0;
    return;
  }
}

void read_mla(HfReader& r, Backbone& b) {
  MlaConfig m;
  // q_lora_rank null means queries are projected directly from D (DeepSeek-V2-Lite).
  if (r.has_key("q_lora_rank")) {
    const Json* q = r.present("q_lora_rank");
    m.q_lora_rank = q ? read_integer(*q, r.at("q_lora_rank"), 1, Limits::max_hidden) : 0;
  } else {
    m.q_lora_rank = 1536;
    r.note_default("mla", "q_lora_rank", "1536", "");
  }
  m.kv_lora_rank = r.required_integer("kv_lora_rank", 1, Limits::max_hidden);
  m.qk_nope_head_dim = r.required_integer("qk_nope_head_dim", 0, Limits::max_head_dim);
  m.qk_rope_head_dim = r.required_integer("qk_rope_head_dim", 1, Limits::max_head_dim);
  m.v_head_dim = r.required_integer("v_head_dim", 1, Limits::max_head_dim);
  b.mla = m;
  // The dot-product width per head; the MLA fields, not head_dim, drive counts and costs.
  b.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  r.note("mla",
      "parameters exact (q_a/q_b with q_a_layernorm, kv_a_proj_with_mqa with kv_a_layernorm, kv_b, o); costs "
      "approximated: the KV cache keeps the latent (kv_lora_rank) and the shared RoPE key (qk_rope_head_dim) per "
      "token per layer (absorbed-weight inference), and each head scores with qk_nope_head_dim + qk_rope_head_dim "
      "dims and sums v_head_dim values");
  b.assumptions["head_dim"] = "qk_nope_head_dim + qk_rope_head_dim = " + num(b.head_dim) +
                              " (the per-head dot-product width; MLA shapes come from the mla fields)";
}

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
  if (v5) s.allow({"rope_theta"});
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
      if (!list.is_array() || static_cast<std::int64_t>(list.size()) != b.head_dim / 2)
        fail(s.at(k), "must be a list of head_dim / 2 = " + num(b.head_dim / 2) + " numbers");
      for (std::size_t i = 0; i < list.size(); ++i) read_number(list[i], pointer_join(s.at(k), i), 0.0);
    }
  }
  s.finish();
  if (type != "default")
    r.note("rope_scaling", note + ": rescales the rotary frequencies only (no parameters, no FLOPs), so costs do "
                                  "not depend on it");
}

// The architecture decides the head: hdlab counts a causal-LM head (vocab x hidden, or the
// tied embedding). A classification or QA head is num_labels x hidden instead; such an
// architecture is refused rather than counted with the wrong head.
void check_architectures(const Json* arch, const std::string& ptr) {
  if (!arch || arch->is_null()) return;
  if (!arch->is_array()) fail(ptr, "must be a list of class names, got " + json_type_name(*arch));
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (std::size_t i = 0; i < arch->size(); ++i) {
    const std::string name = read_string((*arch)[i], pointer_join(ptr, i));
    if (ends_with(name, "ForCausalLM") || ends_with(name, "ForConditionalGeneration")) continue;
    const bool classifier = ends_with(name, "ForSequenceClassification") || ends_with(name, "ForTokenClassification");
    fail(pointer_join(ptr, i),
         "\"" + name + "\" is unsupported: " +
             (classifier ? std::string("its head is a num_labels x hidden classifier, not the vocab x hidden LM head "
                                       "hdlab counts and costs; ")
                         : std::string("hdlab models language models with a causal-LM head; ")) +
             "use the *ForCausalLM config of the same backbone");
  }
}

// The checkpoint's dtype ("torch_dtype" in transformers v4, "dtype" in v5; the multimodal
// wrapper holds it outside text_config). Every place that states it must agree.
std::optional<std::string> checkpoint_dtype(HfReader& r, const Json* outer) {
  std::optional<std::string> found, found_at;
  auto take = [&](const Json& v, const std::string& at) {
    const std::string s = read_string(v, at);
    dtype_of(s, at);  // a name hdlab knows
    if (found && *found != s)
      fail(at, "\"" + s + "\" disagrees with " + *found_at + " (\"" + *found + "\"): which one is the checkpoint's?");
    found = s;
    found_at = at;
  };
  for (const char* key : {"torch_dtype", "dtype"})
    if (const Json* v = r.present(key)) take(*v, r.at(key));
  if (outer) {
    // The wrapper holding text_config: its pointer is text_config's parent.
    const std::string wrapper = r.pointer().substr(0, r.pointer().rfind('/'));
    for (const char* key : {"torch_dtype", "dtype"})
      if (outer->contains(key) && !(*outer)[key].is_null()) take((*outer)[key], pointer_join(wrapper, key));
  }
  return found;
}

Backbone import_text_model(const Json& hf, const std::string& pointer, const TypeInfo& type,
                           const std::string& source, const Json* outer) {
  Backbone b;
  HfReader r(hf, pointer, type, b);
  const Family f = type.family;

  b.source = source;
  if (auto name = r.string_opt("_name_or_path"); name && !name->empty()) {
    b.name = *name;
  } else if (const Json* arch = r.present("architectures"); arch && arch->is_array() && !arch->empty() &&
                                                              (*arch)[0].is_string()) {
    b.name = (*arch)[0].get<std::string>();
  } else {
    b.name = type.name;
  }

  check_architectures(r.present("architectures"), r.at("architectures"));
  b.num_layers = r.required_integer("num_hidden_layers", 1, Limits::max_layers);
  b.hidden = r.required_integer("hidden_size", 1, Limits::max_hidden);
  if (f == Family::gemma3_text) {
    // The official multimodal gemma-3 configs leave heads (and vocabulary) to
    // Gemma3TextConfig's defaults.
    b.num_heads = r.integer_or("num_attention_heads", 8, 1, Limits::max_heads, "num_heads");
  } else {
    b.num_heads = r.required_integer("num_attention_heads", 1, Limits::max_heads);
  }

  // num_key_value_heads: an absent key takes the class default; an explicit null means MHA.
  if (r.has_key("num_key_value_heads") || type.kv_heads == 0) {
    const Json* v = r.present("num_key_value_heads");
    if (v) {
      b.num_kv_heads = read_integer(*v, r.at("num_key_value_heads"), 1, Limits::max_heads);
    } else {
      b.num_kv_heads = b.num_heads;
      r.note("num_kv_heads", "config.json has no num_key_value_heads; = num_attention_heads (" + num(b.num_heads) +
                                 ", multi-head attention) as HuggingFace's " + type.name + " does");
    }
  } else {
    b.num_kv_heads = r.integer_or("num_key_value_heads", type.kv_heads, 1, Limits::max_heads, "num_kv_heads");
  }

  if (b.num_heads % b.num_kv_heads != 0)
    fail(r.at("num_key_value_heads"), num(b.num_heads) + " query heads cannot be grouped into " +
                                          num(b.num_kv_heads) + " KV heads");

  if (f == Family::deepseek_v3) {
    read_mla(r, b);
  } else if (const Json* hd = r.present("head_dim")) {
    b.head_dim = read_integer(*hd, r.at("head_dim"), 1, Limits::max_head_dim);
  } else if (type.head_dim > 0) {
    b.head_dim = type.head_dim;
    r.note_default("head_dim", "head_dim", num(type.head_dim), "");
  } else {
    if (b.hidden % b.num_heads != 0)
      fail(r.at("head_dim"), "is required: hidden_size " + num(b.hidden) + " is not divisible by num_attention_heads " +
                                 num(b.num_heads));
    b.head_dim = b.hidden / b.num_heads;
    r.note("head_dim", "config.json has no head_dim; hidden_size / num_attention_heads = " + num(b.head_dim) +
                           " as HuggingFace's " + type.name + " does");
  }

  // QK-norm (RMSNorm of head_dim on q and k) is part of the architecture, not a key.
  b.qk_norm = f == Family::qwen3 || f == Family::qwen3_moe || f == Family::gemma3_text;

  // Projection biases. Qwen2 always has q/k/v biases and no o bias; elsewhere HF's
  // attention_bias puts a bias on q, k, v and o alike; Llama's mlp_bias on the FFN's three.
  if (f == Family::qwen2) {
    b.attention_bias = true;
  } else if (f != Family::mistral && f != Family::mixtral) {  // those two ignore the key
    b.attention_bias = b.output_bias = r.boolean_or("attention_bias", false, "");
  }
  if (f == Family::llama) b.mlp_bias = r.boolean_or("mlp_bias", false, "");

  if (f == Family::mixtral || f == Family::qwen3_moe || f == Family::deepseek_v3) {
    read_moe(r, b);
  } else {
    b.intermediate = r.required_integer("intermediate_size", 1, Limits::max_intermediate);
  }

  // Activation: SwiGLU (silu) is the modelled FFN; Gemma's GeGLU has the same three D x F
  // matrices and the same FLOPs up to the activation itself.
  if (is_gemma(f)) {
    const std::string act =
        r.string_opt("hidden_activation").value_or(r.string_opt("hidden_act").value_or("gelu_pytorch_tanh"));
    r.note("intermediate_size", "the FFN is GeGLU (" + act + "), counted as SwiGLU-shaped: the same three D x F "
                                "matrices");
  } else if (auto act = r.string_opt("hidden_act"); act && *act != "silu") {
    r.note("intermediate_size", "hidden_act is " + *act + "; the gated FFN is counted as SwiGLU-shaped (three "
                                "D x F matrices)");
  }

  if (f == Family::gemma3_text && !r.present("vocab_size")) {
    // The official multimodal gemma-3 configs leave it to Gemma3TextConfig's default.
    b.vocab_size = 262208;
    r.note_default("vocab_size", "vocab_size", "262208", "");
  } else {
    b.vocab_size = r.required_integer("vocab_size", 1, Limits::max_vocab);
  }
  b.vocab_pad_multiple = 1;  // HF's vocab_size is already the table size
  b.tie_embeddings = r.boolean_or("tie_word_embeddings", type.tie_embeddings, "tie_embeddings");

  b.layers = layer_attention(r, b.num_layers);
  b.norms_per_layer = is_gemma(f) ? 4 : 2;  // Gemma: pre and post norms around attention and FFN

  // rope_theta; transformers v5 configs keep it inside rope_parameters.
  if (r.present("rope_theta")) {
    b.rope_theta = r.number_or("rope_theta", type.rope_theta, 0.0, 1e30, "rope_theta");
  } else if (const Json* rp = r.present("rope_parameters"); rp && rp->is_object() && rp->contains("rope_theta")) {
    b.rope_theta = read_number((*rp)["rope_theta"], pointer_join(r.at("rope_parameters"), "rope_theta"), 0.0, 1e30);
  } else {
    b.rope_theta = r.number_or("rope_theta", type.rope_theta, 0.0, 1e30, "rope_theta");
  }
  if (f == Family::gemma3_text) {
    const Json* local = r.present("rope_local_base_freq");
    const double local_theta = local ? read_number(*local, r.at("rope_local_base_freq"), 0.0, 1e30) : 10000.0;
    r.note("rope_theta", "the global layers' base; the sliding layers use rope_local_base_freq = " + num(local_theta));
  }
  check_rope_scaling(r, "rope_scaling", b);
  check_rope_scaling(r, "rope_parameters", b);
  b.norm_eps = r.number_or("rms_norm_eps", type.norm_eps, 0.0, 1.0, "norm_eps");
  b.max_context = r.integer_or("max_position_embeddings", type.max_position, 0, Limits::max_window, "max_context");

  // dtype: "torch_dtype" (transformers v4) or "dtype" (v5); the multimodal wrapper holds it
  // outside text_config.
  // The working precision is bf16, how these models are trained and served; the
  // checkpoint's storage dtype (Gemma 2 base configs say float32) is reported, not used:
  // modelling a run in fp32 because of how the file was saved would be silently wrong.
  // A config document can set another with "dtype" beside "hf_config".
  b.dtype = DType::bf16;
  if (const auto stored = checkpoint_dtype(r, outer); !stored) {
    b.assumptions["dtype"] = "config.json has no torch_dtype; bf16 assumed";
  } else if (dtype_of(*stored, "") != DType::bf16) {
    b.assumptions["dtype"] = "the checkpoint is stored as " + *stored +
                             "; the run is modelled in bf16, hdlab's working precision for HuggingFace configs (set "
                             "\"dtype\" beside \"hf_config\" in a config document to model another)";
  }
  if (const Json* q = r.present("quantization_config"); q && q->is_object() && q->contains("quant_method")) {
    r.note("dtype", "the released checkpoint is quantized (quant_method " + (*q)["quant_method"].dump() +
                        "); hdlab models weights and compute at " + to_string(b.dtype));
  }

  if (f == Family::deepseek_v3) {
    const Json* mtp = r.present("num_nextn_predict_layers");
    const std::int64_t n_mtp = mtp ? read_integer(*mtp, r.at("num_nextn_predict_layers"), 0, Limits::max_layers) : 0;
    if (n_mtp > 0)
      b.assumptions["mtp"] = "num_nextn_predict_layers = " + num(n_mtp) +
                             ": the multi-token-prediction module is not modelled (its parameters and FLOPs are not "
                             "counted)";
  }

  validate(b, pointer);
  return b;
}

}  // namespace

bool looks_like_hf_config(const Json& j) {
  return j.is_object() && (j.contains("model_type") || j.contains("architectures"));
}

Backbone import_hf_config(const Json& hf, const std::string& pointer) {
  ObjectReader top(hf, pointer);
  const std::string type = top.string("model_type", std::nullopt);
  const std::string type_ptr = top.at("model_type");
  if (type == "gemma3") {
    // Gemma3ForConditionalGeneration: the language model sits in text_config.
    const Json* text = top.find("text_config");
    if (!text || text->is_null()) fail(top.at("text_config"), "is required for model_type gemma3");
    if (!text->is_object()) fail(top.at("text_config"), "must be an object, got " + json_type_name(*text));
    if (text->contains("model_type") && (*text)["model_type"] != "gemma3_text")
      fail(pointer_join(top.at("text_config"), "model_type"), "must be \"gemma3_text\"");
    Backbone b = import_text_model(*text, top.at("text_config"), type_info("gemma3_text", type_ptr),
                                   "HuggingFace config.json (model_type gemma3, text_config gemma3_text)", &hf);
    check_architectures(top.find("architectures"), top.at("architectures"));
    if (const Json* arch = top.find("architectures"); arch && arch->is_array() && !arch->empty() &&
                                                      (*arch)[0].is_string() && b.name == "gemma3_text")
      b.name = (*arch)[0].get<std::string>();
    b.assumptions["vision_tower"] =
        "model_type gemma3 is multimodal: only text_config (the language model) is imported; the vision tower "
        "(vision_config) and the multimodal projector are ignored";
    return b;
  }
  return import_text_model(hf, pointer, type_info(type, type_ptr), "HuggingFace config.json (model_type " + type + ")",
                           nullptr);
}

}  // namespace hdlab::model
