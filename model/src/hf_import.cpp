#include "hdlab/model/hf_import.hpp"

#include <optional>
#include <utility>

#include "hf_internal.hpp"

// Import of one HF config.json: the model_type decides the defaults (hf_types.cpp); the
// per-topic readers beside this file fill attention kinds, MoE, MLA and RoPE scaling.
namespace hdlab::model {

namespace {

using namespace hf;


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

std::string model_name(HfReader& r) {
  if (auto name = r.string_opt("_name_or_path"); name && !name->empty()) return *name;
  if (const Json* arch = r.present("architectures"); arch && arch->is_array() && !arch->empty() &&
                                                     (*arch)[0].is_string())
    return (*arch)[0].get<std::string>();
  return r.type().name;
}

// Query heads, KV heads and the head width (MLA: its own shapes).
void read_heads(HfReader& r, Backbone& b) {
  const TypeInfo& type = r.type();
  const Family f = type.family;
  if (f == Family::gemma3_text) {
    // The official multimodal gemma-3 configs leave heads (and vocabulary) to
    // Gemma3TextConfig's defaults.
    b.num_heads = r.integer_or("num_attention_heads", 8, 1, Limits::max_heads, "num_heads");
  } else {
    b.num_heads = r.required_integer("num_attention_heads", 1, Limits::max_heads);
  }

  // num_key_value_heads: an absent key takes the class default; an explicit null means MHA.
  if (r.has_key("num_key_value_heads") || type.kv_heads == 0) {
    if (const Json* v = r.present("num_key_value_heads")) {
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

  if (is_deepseek(f)) {
    read_mla(r, b);
  } else if (const Json* ahd = f == Family::nemotron_h ? r.present("attention_head_dim") : nullptr) {
    b.head_dim = read_integer(*ahd, r.at("attention_head_dim"), 1, Limits::max_head_dim);
    const Json* hd = r.present("head_dim");
    if (hd && read_integer(*hd, r.at("head_dim"), 1, Limits::max_head_dim) != b.head_dim)
      fail(r.at("head_dim"), "disagrees with attention_head_dim (" + num(b.head_dim) + ")");
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
  // QK-norm (RMSNorm of head_dim on q and k) is part of the architecture, not a key, except
  // GLM-4.5's use_qk_norm; OLMo 2 normalises the whole q (H*hd) and k (G*hd) projections.
  b.qk_norm = f == Family::qwen3 || f == Family::qwen3_moe || f == Family::gemma3_text || f == Family::olmo2 ||
              f == Family::olmoe || f == Family::olmo3;
  if (f == Family::glm4_moe) b.qk_norm = r.boolean_or("use_qk_norm", false, "qk_norm");
  b.qk_norm_whole_projection = f == Family::olmo2 || f == Family::olmoe || f == Family::olmo3;
  if (f == Family::glm4_moe) read_partial_rotary(r, b, 0.5);
  if (f == Family::phi3) read_partial_rotary(r, b, 1.0);  // Phi3Config's default: every dim rotates
  if (is_qwen3_next_like(f)) {
    b.qk_norm = true;
    // Qwen3NextAttention always gates (q_proj D -> 2 H hd); Qwen3.5 writes attn_output_gate.
    const bool qwen3_5 = std::string(r.type().name).rfind("qwen3_5", 0) == 0;
    b.attention_output_gate = qwen3_5 ? r.boolean_or("attn_output_gate", true, "attention_output_gate") : true;
    read_partial_rotary(r, b, 0.25);
  }
}

// Projection biases, the FFN (dense or MoE) and its activation.
void read_projections(HfReader& r, Backbone& b) {
  const Family f = r.family();
  // Qwen2 always has q/k/v biases and no o bias; elsewhere HF's attention_bias puts a bias
  // on q, k, v and o alike; Llama's mlp_bias on the FFN's three.
  if (f == Family::qwen2) {
    b.attention_bias = true;
  } else if (is_deepseek(f)) {
    // DeepSeek's attention_bias biases q_a / q_proj, kv_a_proj_with_mqa and o_proj,
    // shapes the MLA count does not carry.
    if (r.boolean_or("attention_bias", false, ""))
      fail(r.at("attention_bias"), "true is unsupported for multi-head latent attention (its q_a, kv_a and o "
                                   "biases are not modelled)");
    if (r.boolean_or("mlp_bias", false, ""))
      fail(r.at("mlp_bias"), "true is unsupported: FFN biases of an MoE backbone are not modelled");
  } else if (f == Family::glm4_moe) {
    b.attention_bias = r.boolean_or("attention_bias", false, "");  // q, k, v only: o_proj has none
  } else if (f == Family::gpt_oss) {
    read_gpt_oss(r, b);
    return;
  } else if (f == Family::llama4_text) {
    read_llama4(r, b);
    return;
  } else if (f == Family::nemotron_h) {
    read_nemotron_h(r, b);
    return;
  } else if (f != Family::mistral && f != Family::mixtral && f != Family::phi3) {  // those ignore the key
    b.attention_bias = b.output_bias = r.boolean_or("attention_bias", false, "");
  }
  if (f == Family::llama || f == Family::granite) b.mlp_bias = r.boolean_or("mlp_bias", false, "");

  if (f == Family::mixtral || f == Family::qwen3_moe || f == Family::olmoe) {
    read_moe(r, b);
  } else if (f == Family::glm4_moe) {
    read_glm4_moe(r, b);
  } else if (is_deepseek(f)) {
    read_deepseek_moe(r, b);
  } else if (f == Family::qwen3_next) {
    read_qwen3_next_moe(r, b);
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
}

void read_vocabulary(HfReader& r, Backbone& b) {
  if (r.family() == Family::gemma3_text && !r.present("vocab_size")) {
    // The official multimodal gemma-3 configs leave it to Gemma3TextConfig's default.
    b.vocab_size = 262208;
    r.note_default("vocab_size", "vocab_size", "262208", "");
  } else {
    b.vocab_size = r.required_integer("vocab_size", 1, Limits::max_vocab);
  }
  b.vocab_pad_multiple = 1;  // HF's vocab_size is already the table size
  b.tie_embeddings = r.boolean_or("tie_word_embeddings", r.type().tie_embeddings, "tie_embeddings");
}

// rope_theta (transformers v5 configs keep it inside rope_parameters), RoPE scaling,
// norm epsilon and the native context.
void read_positions(HfReader& r, Backbone& b) {
  const TypeInfo& type = r.type();
  if (r.present("rope_theta")) {
    b.rope_theta = r.number_or("rope_theta", type.rope_theta, 0.0, 1e30, "rope_theta");
  } else if (const Json* rp = r.present("rope_parameters"); rp && rp->is_object() && rp->contains("rope_theta")) {
    b.rope_theta = read_number((*rp)["rope_theta"], pointer_join(r.at("rope_parameters"), "rope_theta"), 0.0, 1e30);
  } else {
    b.rope_theta = r.number_or("rope_theta", type.rope_theta, 0.0, 1e30, "rope_theta");
  }
  if (type.family == Family::gemma3_text) {
    const Json* local = r.present("rope_local_base_freq");
    const double local_theta = local ? read_number(*local, r.at("rope_local_base_freq"), 0.0, 1e30) : 10000.0;
    r.note("rope_theta", "the global layers' base; the sliding layers use rope_local_base_freq = " + num(local_theta));
  }
  b.max_context = r.integer_or("max_position_embeddings", type.max_position, 0, Limits::max_window, "max_context");
  check_rope_scaling(r, "rope_scaling", b);  // after max_context: LongRoPE and YaRN read it
  check_rope_scaling(r, "rope_parameters", b);
  b.norm_eps = r.number_or("rms_norm_eps", type.norm_eps, 0.0, 1.0, "norm_eps");
}

// The working precision is bf16, how these models are trained and served; the checkpoint's
// storage dtype ("torch_dtype" in transformers v4, "dtype" in v5; Gemma 2 base configs say
// float32) is reported, not used: modelling a run in fp32 because of how the file was saved
// would be silently wrong. A config document can set another with "dtype" beside
// "hf_config".
void read_dtype(HfReader& r, Backbone& b, const Json* outer) {
  b.dtype = DType::bf16;
  if (const auto stored = checkpoint_dtype(r, outer); !stored) {
    b.assumptions["dtype"] = "config.json has no torch_dtype; bf16 assumed";
  } else if (dtype_of(*stored, "") != DType::bf16) {
    b.assumptions["dtype"] = "the checkpoint is stored as " + *stored +
                             "; the run is modelled in bf16, hdlab's working precision for HuggingFace configs (set "
                             "\"dtype\" beside \"hf_config\" in a config document to model another)";
  }
  // A multimodal wrapper states it beside text_config (Ministral 3's FP8 release).
  const Json* q = r.present("quantization_config");
  if (!q && outer && outer->contains("quantization_config")) q = &(*outer)["quantization_config"];
  if (q && q->is_object() && q->contains("quant_method")) {
    r.note("dtype", "the released checkpoint is quantized (quant_method " + (*q)["quant_method"].dump() +
                        "); hdlab models weights and compute at " + to_string(b.dtype));
  }
}

// Granite's four scalars rescale activations (embeddings, residual branches, attention
// scores instead of 1/sqrt(head_dim), logits): no parameters, and elementwise work hdlab
// does not cost. Read (so a malformed one is refused) and recorded.
void note_granite_multipliers(HfReader& r) {
  std::string text;
  for (const char* key : {"embedding_multiplier", "residual_multiplier", "attention_multiplier", "logits_scaling"}) {
    const double v = r.number_or(key, 1.0, 0.0, 1e30, "multipliers");
    text += std::string(text.empty() ? "" : ", ") + key + " " + num(v);
  }
  r.note("multipliers", text + ": activation scalings only (no parameters; their elementwise multiplies are not "
                               "costed)");
}

Backbone import_text_model(const Json& j, const std::string& pointer, const TypeInfo& type,
                           const std::string& source, const Json* outer) {
  Backbone b;
  HfReader r(j, pointer, type, b);
  b.source = source;
  b.name = model_name(r);
  check_architectures(r.present("architectures"), r.at("architectures"));
  b.num_layers = r.required_integer("num_hidden_layers", 1, Limits::max_layers);
  b.hidden = r.required_integer("hidden_size", 1, Limits::max_hidden);
  read_heads(r, b);
  read_projections(r, b);
  read_vocabulary(r, b);
  if (is_qwen3_next_like(type.family))
    read_qwen3_next_layers(r, b);
  else if (type.family == Family::llama4_text)
    b.layers = llama4_layers(r, b.num_layers);
  else if (type.family != Family::nemotron_h)  // nemotron_h: its blocks, read with its FFN
    b.layers = layer_attention(r, b.num_layers);
  b.norms_per_layer = is_gemma(type.family) ? 4 : 2;  // Gemma: pre and post norms around attention and FFN
  // OLMo 2 and 3: x + norm(f(x))
  b.post_sublayer_norms = type.family == Family::olmo2 || type.family == Family::olmo3;
  if (type.family == Family::nemotron_h)
    read_nemotron_h_positions(r, b);
  else
    read_positions(r, b);
  read_dtype(r, b, outer);
  if (type.family == Family::deepseek_v3 || type.family == Family::glm4_moe) note_mtp(r, b);
  if (type.family == Family::granite) note_granite_multipliers(r);
  if (type.family == Family::phi3) read_phi3(r, b);
  validate(b, pointer);
  return b;
}

}  // namespace

bool looks_like_hf_config(const Json& j) {
  return j.is_object() && (j.contains("model_type") || j.contains("architectures"));
}

namespace {

// Multimodal wrappers (*ForConditionalGeneration) whose language model sits in text_config:
// the text model is imported; the vision tower and projector are not part of what hdlab
// models (precedent: Gemma 3, whose published total adds the SigLIP tower).
struct Wrapper {
  const char* type;       // the wrapper's model_type
  const char* text_type;  // text_config's model_type (also its default when absent)
  const char* tower;      // the vision tower, for the recorded assumption
  // Another text model the wrapper may hold: Mistral3Config wraps Mistral Small's mistral
  // text model and Ministral 3's / Devstral Small 2's ministral3 one.
  const char* other_text_type = nullptr;
};
const Wrapper kWrappers[] = {
    {"gemma3", "gemma3_text", "the vision tower"},
    {"mistral3", "mistral", "the Pixtral vision tower", "ministral3"},
    {"llama4", "llama4_text", "the vision tower"},
    {"qwen3_5", "qwen3_5_text", "the vision tower"},
    {"qwen3_5_moe", "qwen3_5_moe_text", "the vision tower"},
};

Backbone import_wrapped(const Json& hf, ObjectReader& top, const Wrapper& w) {
  const std::string type_ptr = top.at("model_type");
  const Json* text = top.find("text_config");
  if (!text || text->is_null()) fail(top.at("text_config"), std::string("is required for model_type ") + w.type);
  if (!text->is_object()) fail(top.at("text_config"), "must be an object, got " + json_type_name(*text));
  std::string text_type = w.text_type;
  if (text->contains("model_type")) {
    const std::string ptr = pointer_join(top.at("text_config"), "model_type");
    text_type = read_string((*text)["model_type"], ptr);
    if (text_type != w.text_type && (!w.other_text_type || text_type != w.other_text_type))
      fail(ptr, std::string("must be \"") + w.text_type + "\"" +
                    (w.other_text_type ? std::string(" or \"") + w.other_text_type + "\"" : std::string()));
  }
  Backbone b = import_text_model(*text, top.at("text_config"), type_info(text_type, type_ptr),
                                 std::string("HuggingFace config.json (model_type ") + w.type + ", text_config " +
                                     text_type + ")",
                                 &hf);
  check_architectures(top.find("architectures"), top.at("architectures"));
  if (const Json* arch = top.find("architectures"); arch && arch->is_array() && !arch->empty() &&
                                                    (*arch)[0].is_string() && b.name == text_type)
    b.name = (*arch)[0].get<std::string>();
  b.assumptions["vision_tower"] = std::string("model_type ") + w.type +
                                  " is multimodal: only text_config (the language model) is imported; " + w.tower +
                                  " (vision_config) and the multimodal projector are ignored";
  return b;
}

}  // namespace

Backbone import_hf_config(const Json& hf, const std::string& pointer) {
  ObjectReader top(hf, pointer);
  const std::string type = top.string("model_type", std::nullopt);
  for (const Wrapper& w : kWrappers)
    if (type == w.type) return import_wrapped(hf, top, w);
  return import_text_model(hf, pointer, type_info(type, top.at("model_type")),
                           "HuggingFace config.json (model_type " + type + ")", nullptr);
}

}  // namespace hdlab::model
