// JSON in and out for backbones (our own format; HF configs go through hf_import.cpp):
// parsing with unknown-key rejection, range validation, normalised output.
#include "hdlab/model/config_io.hpp"

#include <map>

#include "hdlab/model/json_reader.hpp"
#include "backbone_mixers.hpp"
#include "backbone_rope.hpp"

namespace hdlab::model {

namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

void check_range(const std::string& pointer, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo) fail(pointer, "must be >= " + num(lo) + ", got " + num(v));
  if (v > hi) fail(pointer, "must be <= " + num(hi) + ", got " + num(v));
}

// ---- backbone ------------------------------------------------------------------------

AttentionKind attention_kind_of(const Json& v, const std::string& ptr) {
  std::string s = read_string(v, ptr);
  if (s == "full") return AttentionKind::full;
  if (s == "sliding") return AttentionKind::sliding;
  if (s == "chunked") return AttentionKind::chunked;
  fail(ptr, "must be one of full, sliding, chunked, got \"" + s + "\"");
}

std::vector<AttentionKind> parse_layer_kinds(ObjectReader& r, std::int64_t num_layers) {
  const Json* layers = r.find("layers");
  std::vector<AttentionKind> kinds;
  const std::string ptr = r.at("layers");
  if (!layers) {
    kinds.assign(static_cast<std::size_t>(num_layers), AttentionKind::full);
  } else if (layers->is_string()) {
    kinds.assign(static_cast<std::size_t>(num_layers), attention_kind_of(*layers, ptr));
  } else if (layers->is_array()) {
    if (static_cast<std::int64_t>(layers->size()) != num_layers)
      fail(ptr, "has " + num(static_cast<std::int64_t>(layers->size())) + " entries but the backbone has " +
                    num(num_layers) + " layers");
    for (std::size_t i = 0; i < layers->size(); ++i) kinds.push_back(attention_kind_of((*layers)[i], pointer_join(ptr, i)));
  } else if (layers->is_object()) {
    // {"pattern": ["sliding", "full"]}: repeated cyclically over the layers (Gemma style).
    ObjectReader p(*layers, ptr);
    const Json& pattern = p.required("pattern");
    p.finish();
    if (!pattern.is_array() || pattern.empty()) fail(p.at("pattern"), "must be a non-empty array of full/sliding/chunked");
    std::vector<AttentionKind> cycle;
    for (std::size_t i = 0; i < pattern.size(); ++i)
      cycle.push_back(attention_kind_of(pattern[i], pointer_join(p.at("pattern"), i)));
    for (std::int64_t l = 0; l < num_layers; ++l) kinds.push_back(cycle[static_cast<std::size_t>(l) % cycle.size()]);
  } else {
    fail(ptr, "must be \"full\", \"sliding\", \"chunked\", a list per layer or {\"pattern\": [...]}, got " +
                  json_type_name(*layers));
  }
  return kinds;
}

// A size key (sliding_window, chunk_size) that is required iff some layer has `kind`.
void check_size_key(ObjectReader& r, const char* key, std::int64_t v, bool used) {
  if (used && v < 1) fail(r.at(key), "is required (>= 1) when a layer is " +
                                         std::string(std::string(key) == "chunk_size" ? "chunked" : "sliding"));
  if (!used && v > 0) fail(r.at(key), std::string("is set but no layer is ") +
                                          (std::string(key) == "chunk_size" ? "chunked" : "sliding"));
}

std::vector<LayerAttention> parse_layer_attention(ObjectReader& r, std::int64_t num_layers) {
  const std::int64_t window = r.integer("sliding_window", 0, 0, Limits::max_window);
  const std::int64_t chunk = r.integer("chunk_size", 0, 0, Limits::max_window);
  const std::vector<AttentionKind> kinds = parse_layer_kinds(r, num_layers);
  std::vector<LayerAttention> out;
  bool any_sliding = false, any_chunked = false;
  for (auto k : kinds) {
    LayerAttention a;
    a.kind = k;
    a.window = k == AttentionKind::sliding ? window : 0;
    a.chunk = k == AttentionKind::chunked ? chunk : 0;
    out.push_back(a);
    any_sliding = any_sliding || k == AttentionKind::sliding;
    any_chunked = any_chunked || k == AttentionKind::chunked;
  }
  check_size_key(r, "sliding_window", window, any_sliding);
  check_size_key(r, "chunk_size", chunk, any_chunked);
  // NoPE layers (Llama 4's global layers): listed by index.
  if (const Json* nope = r.find("nope_layers")) {
    const std::string ptr = r.at("nope_layers");
    if (!nope->is_array()) fail(ptr, "must be a list of layer indices, got " + json_type_name(*nope));
    for (std::size_t i = 0; i < nope->size(); ++i) {
      const std::string at = pointer_join(ptr, i);
      auto& layer = out[static_cast<std::size_t>(read_integer((*nope)[i], at, 0, num_layers - 1))];
      if (layer.nope) fail(at, "layer " + num(read_integer((*nope)[i], at, 0, num_layers - 1)) + " is already listed");
      layer.nope = true;
    }
  }
  return out;
}

// Keys our format lets a file leave out, and the value taken for each: parse_backbone
// records them as assumptions ("hdlab check" prints every one), unless the file's own
// "assumptions" already explain that field.
using Defaults = std::map<std::string, std::string>;

void note_default(Defaults& defaults, const ObjectReader& r, const std::string& field, const char* key,
                  const std::string& value) {
  if (!r.has(key)) defaults[field] = "not given; " + value + " assumed (hdlab's default)";
}

MoeConfig parse_moe(ObjectReader r, Defaults& defaults) {
  note_default(defaults, r, "moe/num_shared_experts", "num_shared_experts", "0 (no shared experts)");
  note_default(defaults, r, "moe/shared_expert_intermediate_size", "shared_expert_intermediate_size",
               "expert_intermediate_size");
  note_default(defaults, r, "moe/first_dense_layers", "first_dense_layers", "0 (every layer MoE)");
  note_default(defaults, r, "moe/router", "router", "softmax");
  MoeConfig m;
  m.num_experts = r.integer("num_experts", std::nullopt, 1, Limits::max_experts);
  m.top_k = r.integer("top_k", std::nullopt, 1, Limits::max_experts);
  m.expert_intermediate = r.integer("expert_intermediate_size", std::nullopt, 1, Limits::max_intermediate);
  m.num_shared_experts = r.integer("num_shared_experts", 0, 0, Limits::max_experts);
  m.shared_expert_intermediate =
      r.integer("shared_expert_intermediate_size", m.expert_intermediate, 0, Limits::max_intermediate);
  m.first_dense_layers = r.integer("first_dense_layers", 0, 0, Limits::max_layers);
  m.router = r.choice<RouterKind>("router", {{"softmax", RouterKind::softmax}, {"sigmoid", RouterKind::sigmoid}},
                                  RouterKind::softmax);
  m.shared_expert_gate = r.boolean("shared_expert_gate", false);
  m.layer_step = r.integer("layer_step", 1, 1, Limits::max_layers);
  m.router_bias = r.boolean("router_bias", false);
  m.expert_bias = r.boolean("expert_bias", false);
  m.swiglu_limit = r.number("swiglu_limit", 0.0, 0.0, 1e6);
  m.swiglu_alpha = r.number("swiglu_alpha", m.swiglu_limit > 0 ? 1.702 : 0.0, 0.0, 1e6);
  if (m.swiglu_limit > 0) note_default(defaults, r, "moe/swiglu_alpha", "swiglu_alpha", "1.702 (gpt-oss's)");
  r.finish();
  return m;
}

MlaConfig parse_mla(ObjectReader r, Defaults& defaults) {
  note_default(defaults, r, "mla/q_lora_rank", "q_lora_rank", "0 (queries projected directly from the hidden state)");
  MlaConfig m;
  m.q_lora_rank = r.integer("q_lora_rank", 0, 0, Limits::max_hidden);
  m.kv_lora_rank = r.integer("kv_lora_rank", std::nullopt, 1, Limits::max_hidden);
  m.qk_nope_head_dim = r.integer("qk_nope_head_dim", std::nullopt, 0, Limits::max_head_dim);
  m.qk_rope_head_dim = r.integer("qk_rope_head_dim", std::nullopt, 1, Limits::max_head_dim);
  m.v_head_dim = r.integer("v_head_dim", std::nullopt, 1, Limits::max_head_dim);
  r.finish();
  return m;
}

DType parse_dtype(ObjectReader& r, const char* key) {
  return r.choice<DType>(key, {{"bf16", DType::bf16}, {"fp16", DType::fp16}, {"fp32", DType::fp32}, {"fp8", DType::fp8}},
                         DType::bf16);
}

Json attention_to_json(const Backbone& b) {
  Json a = Json::object();
  bool all_same = true;
  std::int64_t window = 0, chunk = 0;
  Json nope = Json::array();
  for (std::size_t i = 0; i < b.layers.size(); ++i) {
    const LayerAttention& l = b.layers[i];
    all_same = all_same && l.kind == b.layers.front().kind;
    if (l.kind == AttentionKind::sliding) window = l.window;
    if (l.kind == AttentionKind::chunked) chunk = l.chunk;
    if (l.nope) nope.push_back(static_cast<std::int64_t>(i));
  }
  if (all_same && !b.layers.empty()) {
    a["layers"] = to_string(b.layers.front().kind);
  } else {
    Json list = Json::array();
    for (const auto& l : b.layers) list.push_back(to_string(l.kind));
    a["layers"] = list;
  }
  if (window > 0) a["sliding_window"] = window;
  if (chunk > 0) a["chunk_size"] = chunk;
  if (!nope.empty()) a["nope_layers"] = nope;
  return a;
}

// Partial RoPE, whole-projection QK-norm and post-sublayer norms (GLM-4.5, Phi-4-mini,
// OLMo 2): read with their defaults recorded, and checked.
void parse_layer_variants(ObjectReader& r, Backbone& b, Defaults& defaults) {
  b.qk_norm_whole_projection = r.choice<bool>("qk_norm_scope", {{"head", false}, {"projection", true}}, false);
  note_default(defaults, r, "qk_norm_scope", "qk_norm_scope", "head (one RMSNorm of head_dim shared by the heads)");
  b.rotary_dim = r.integer("rotary_dim", 0, 0, Limits::max_head_dim);
  note_default(defaults, r, "rotary_dim", "rotary_dim", "head_dim (every dimension rotated)");
  b.post_sublayer_norms = r.choice<bool>("norm_placement", {{"pre", false}, {"post", true}}, false);
  note_default(defaults, r, "norm_placement", "norm_placement", "pre (each norm on its sublayer's input)");
}

void validate_layer_variants(const Backbone& b, const std::string& p) {
  auto at = [&](const char* key) { return pointer_join(p, key); };
  check_range(at("rotary_dim"), b.rotary_dim, 0, b.head_dim);
  if (b.rotary_dim % 2 != 0) fail(at("rotary_dim"), "must be even (RoPE rotates pairs), got " + num(b.rotary_dim));
  if (b.rotary_dim > 0 && (b.mla || b.positions != PositionKind::rope))
    fail(at("rotary_dim"), b.mla ? "does not apply to MLA (its rotary part is mla/qk_rope_head_dim)"
                                 : "applies to rope positions only");
  if (b.qk_norm_whole_projection && !b.qk_norm) fail(at("qk_norm_scope"), "\"projection\" needs qk_norm true");
  if (b.post_sublayer_norms && b.norms_per_layer != 2)
    fail(at("norm_placement"), "\"post\" places the 2 per-layer norms after attention and the FFN; norms_per_layer "
                               "is " + num(b.norms_per_layer));
}

void validate_moe(const MoeConfig& m, std::int64_t num_layers, const std::string& moe) {
  auto moe_range = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
    check_range(pointer_join(moe, key), v, lo, hi);
  };
  moe_range("num_experts", m.num_experts, 1, Limits::max_experts);
  if (m.top_k > m.num_experts)
    fail(moe + "/top_k", "must be <= num_experts (" + num(m.num_experts) + "), got " + num(m.top_k));
  moe_range("top_k", m.top_k, 1, m.num_experts);
  moe_range("expert_intermediate_size", m.expert_intermediate, 1, Limits::max_intermediate);
  moe_range("num_shared_experts", m.num_shared_experts, 0, Limits::max_experts);
  moe_range("shared_expert_intermediate_size", m.shared_expert_intermediate, m.num_shared_experts > 0 ? 1 : 0,
            Limits::max_intermediate);
  if (m.shared_expert_gate && m.num_shared_experts < 1)
    fail(moe + "/shared_expert_gate", "needs num_shared_experts >= 1 (it gates the shared experts' output)");
  if (m.first_dense_layers > num_layers)
    fail(moe + "/first_dense_layers", "must be <= num_layers (" + num(num_layers) + ")");
  moe_range("first_dense_layers", m.first_dense_layers, 0, num_layers);
  moe_range("layer_step", m.layer_step, 1, num_layers);
  if (m.swiglu_limit < 0 || (m.swiglu_limit > 0 && !(m.swiglu_alpha > 0)))
    fail(moe + "/swiglu_alpha", "must be > 0 with a clamped SwiGLU (swiglu_limit > 0)");
  if (m.swiglu_limit == 0 && m.swiglu_alpha != 0)
    fail(moe + "/swiglu_alpha", "is set but swiglu_limit is 0 (plain SwiGLU has no alpha)");
}

void validate_mla(const MlaConfig& m, const std::string& mla) {
  auto mla_range = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
    check_range(pointer_join(mla, key), v, lo, hi);
  };
  mla_range("q_lora_rank", m.q_lora_rank, 0, Limits::max_hidden);
  mla_range("kv_lora_rank", m.kv_lora_rank, 1, Limits::max_hidden);
  mla_range("qk_nope_head_dim", m.qk_nope_head_dim, 0, Limits::max_head_dim);
  mla_range("qk_rope_head_dim", m.qk_rope_head_dim, 1, Limits::max_head_dim);
  mla_range("v_head_dim", m.v_head_dim, 1, Limits::max_head_dim);
}

// The block's switches: QK-norm, biases, sinks, the norm, the MLP and the positions.
template <class Noted>
void parse_block_settings(ObjectReader& r, Backbone& b, Noted&& noted) {
  b.qk_norm = r.boolean("qk_norm", false);
  noted("qk_norm", "false");
  b.attention_bias = r.boolean("attention_bias", false);
  noted("attention_bias", "false");
  b.output_bias = r.boolean("output_bias", false);
  noted("output_bias", "false");
  b.attention_sinks = r.boolean("attention_sinks", false);
  noted("attention_sinks", "false (no attention sinks)");
  b.mlp_bias = r.boolean("mlp_bias", false);
  noted("mlp_bias", "false");
  b.norm = r.choice<NormKind>("norm", {{"rmsnorm", NormKind::rmsnorm}, {"layernorm", NormKind::layernorm}},
                              NormKind::rmsnorm);
  noted("norm", "rmsnorm");
  b.mlp = r.choice<MlpKind>("mlp", {{"swiglu", MlpKind::swiglu}, {"gelu", MlpKind::gelu}, {"relu2", MlpKind::relu2}},
                            MlpKind::swiglu);
  noted("mlp", "swiglu");
  b.positions = r.choice<PositionKind>("positions",
                                       {{"rope", PositionKind::rope},
                                        {"learned", PositionKind::learned},
                                        {"alibi", PositionKind::alibi},
                                        {"none", PositionKind::none}},
                                       PositionKind::rope);
  noted("positions", "rope");
}

}  // namespace

void validate(const Backbone& b, const std::string& p) {
  auto at = [&](const char* key) { return pointer_join(p, key); };
  auto range = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
    check_range(at(key), v, lo, hi);
  };
  range("num_layers", b.num_layers, 1, Limits::max_layers);
  range("hidden_size", b.hidden, 1, Limits::max_hidden);
  range("num_heads", b.num_heads, 1, Limits::max_heads);
  range("num_kv_heads", b.num_kv_heads, 1, Limits::max_heads);
  if (b.num_heads % b.num_kv_heads != 0)
    fail(at("num_kv_heads"), num(b.num_heads) + " query heads cannot be grouped into " + num(b.num_kv_heads) +
                                 " KV heads");
  range("head_dim", b.head_dim, 1, Limits::max_head_dim);
  range("intermediate_size", b.intermediate, b.any_dense_ffn() ? 1 : 0, Limits::max_intermediate);
  if (b.moe) validate_moe(*b.moe, b.num_layers, at("moe"));
  if (b.mla) validate_mla(*b.mla, at("mla"));
  range("vocab_size", b.vocab_size, 1, Limits::max_vocab);
  range("vocab_pad_multiple", b.vocab_pad_multiple, 1, 1 << 16);
  range("input_vocab_size", b.input_vocab_size, 0, Limits::max_vocab);
  if (b.tie_embeddings && b.input_vocab_size > 0 && b.input_vocab_size != b.vocab_size)
    fail(at("input_vocab_size"), "must equal vocab_size (" + num(b.vocab_size) + ") with tie_embeddings: a tied head "
                                 "is the input table, got " + num(b.input_vocab_size));
  if (static_cast<std::int64_t>(b.layers.size()) != b.num_layers)
    fail(at("attention") + "/layers", "has " + num(static_cast<std::int64_t>(b.layers.size())) +
                                          " entries but the backbone has " + num(b.num_layers) + " layers");
  for (std::size_t i = 0; i < b.layers.size(); ++i) {
    if (b.layers[i].kind == AttentionKind::sliding && b.layers[i].window < 1)
      fail(at("attention") + "/sliding_window", "must be >= 1 for sliding layer " + std::to_string(i));
    if (b.layers[i].kind == AttentionKind::chunked && b.layers[i].chunk < 1)
      fail(at("attention") + "/chunk_size", "must be >= 1 for chunked layer " + std::to_string(i));
    if (b.layers[i].nope && b.positions != PositionKind::rope)
      fail(at("attention") + "/nope_layers", "applies to rope positions only (layer " + std::to_string(i) + ")");
  }
  range("norms_per_layer", b.norms_per_layer, 0, 16);
  validate_layer_variants(b, p);
  validate_mixers(b, p);
  if (b.moe && b.mlp != MlpKind::swiglu)
    fail(at("mlp"), std::string("must be swiglu with moe: routed and shared experts are SwiGLU, got ") + to_string(b.mlp));
  if (b.moe && b.mlp_bias) fail(at("mlp_bias"), "FFN biases of an MoE backbone (experts or dense layers) are not modelled");
  if (b.positions == PositionKind::learned && b.max_context < 1)
    fail(at("max_context"), "is required (>= 1) with learned positions: it is the position table's rows");
  range("kv_mirror_layers", b.kv_mirror_layers, 0, b.num_layers / 2);
  if (!(b.rope_theta > 0)) fail(at("rope_theta"), "must be > 0");
  if (!(b.norm_eps > 0)) fail(at("norm_eps"), "must be > 0");
  range("max_context", b.max_context, 0, Limits::max_window);
  validate_rope_scaling(b, p);
}

Backbone parse_backbone(const Json& j, const std::string& pointer) {
  ObjectReader r(j, pointer);
  Backbone b;
  Defaults defaults;
  auto noted = [&](const char* key, const std::string& value) { note_default(defaults, r, key, key, value); };
  b.name = r.string("name", "unnamed");
  noted("name", "\"unnamed\"");
  b.source = r.string("source", "");
  b.num_layers = r.integer("num_layers", std::nullopt, 1, Limits::max_layers);
  b.hidden = r.integer("hidden_size", std::nullopt, 1, Limits::max_hidden);
  b.num_heads = r.integer("num_heads", std::nullopt, 1, Limits::max_heads);
  b.num_kv_heads = r.integer("num_kv_heads", b.num_heads, 1, Limits::max_heads);
  noted("num_kv_heads", "num_heads = " + num(b.num_heads) + " (multi-head attention)");
  if (b.hidden % b.num_heads != 0 && !r.has("head_dim"))
    fail(r.at("head_dim"), "is required: hidden_size " + num(b.hidden) + " is not divisible by num_heads " +
                               num(b.num_heads));
  b.head_dim = r.integer("head_dim", b.hidden / b.num_heads, 1, Limits::max_head_dim);
  noted("head_dim", "hidden_size / num_heads = " + num(b.hidden / b.num_heads));
  parse_block_settings(r, b, noted);
  if (auto m = r.optional_object("moe")) b.moe = parse_moe(*m, defaults);
  if (auto m = r.optional_object("mla")) b.mla = parse_mla(*m, defaults);
  const bool any_dense = b.any_dense_ffn();  // by the moe rules: ffn_types is read later
  b.intermediate = r.integer("intermediate_size", any_dense ? std::nullopt : std::optional<std::int64_t>(0),
                             0, Limits::max_intermediate);
  noted("intermediate_size", "0 (every layer is MoE: no dense FFN)");
  b.vocab_size = r.integer("vocab_size", std::nullopt, 1, Limits::max_vocab);
  b.vocab_pad_multiple = r.integer("vocab_pad_multiple", 1, 1, 1 << 16);
  noted("vocab_pad_multiple", "1 (the vocabulary is not padded)");
  b.input_vocab_size = r.integer("input_vocab_size", 0, 1, Limits::max_vocab);
  if (b.input_vocab_size == b.vocab_size) b.input_vocab_size = 0;  // one vocabulary, however written
  noted("input_vocab_size", "vocab_size (one vocabulary in and out)");
  b.tie_embeddings = r.boolean("tie_embeddings", false);
  noted("tie_embeddings", "false (a separate output head)");
  if (auto a = r.optional_object("attention")) {
    b.layers = parse_layer_attention(*a, b.num_layers);
    a->finish();
  } else {
    b.layers.assign(static_cast<std::size_t>(b.num_layers), LayerAttention{});
  }
  noted("attention", "full causal attention in every layer");
  b.norms_per_layer = r.integer("norms_per_layer", 2, 0, 16);
  noted("norms_per_layer", "2 (pre-attention and pre-FFN RMSNorm)");
  parse_layer_variants(r, b, defaults);
  parse_mixers(r, b);
  b.kv_mirror_layers = r.integer("kv_mirror_layers", 0, 0, Limits::max_layers);
  noted("kv_mirror_layers", "0 (no KV-mirror layers)");
  b.rope_theta = r.number("rope_theta", 10000.0);
  noted("rope_theta", "10000");
  if (auto s = r.optional_object("rope_scaling")) b.rope_scaling = parse_rope_scaling(*s);
  b.norm_eps = r.number("norm_eps", 1e-6);
  noted("norm_eps", "1e-6");
  b.max_context = r.integer("max_context", 0, 0, Limits::max_window);
  noted("max_context", "0 (native context not stated)");
  b.dtype = parse_dtype(r, "dtype");
  noted("dtype", "bf16");
  if (const Json* a = r.find("assumptions")) {
    if (!a->is_object()) fail(r.at("assumptions"), "must be an object of field -> note");
    for (const auto& [key, value] : a->items())
      b.assumptions[key] = read_string(value, pointer_join(r.at("assumptions"), key));
  }
  r.finish();
  for (const auto& [field, note] : defaults) b.assumptions.emplace(field, note);  // the file's own notes win
  validate(b, pointer);
  return b;
}

Json to_json(const Backbone& b) {
  Json j;
  j["name"] = b.name;
  if (!b.source.empty()) j["source"] = b.source;
  j["num_layers"] = b.num_layers;
  j["hidden_size"] = b.hidden;
  j["num_heads"] = b.num_heads;
  j["num_kv_heads"] = b.num_kv_heads;
  j["head_dim"] = b.head_dim;
  j["qk_norm"] = b.qk_norm;
  j["qk_norm_scope"] = b.qk_norm_whole_projection ? "projection" : "head";
  j["rotary_dim"] = b.rotary_dim;
  j["attention_bias"] = b.attention_bias;
  j["attention_sinks"] = b.attention_sinks;
  j["output_bias"] = b.output_bias;
  j["mlp_bias"] = b.mlp_bias;
  j["norm"] = to_string(b.norm);
  j["mlp"] = to_string(b.mlp);
  j["positions"] = to_string(b.positions);
  j["intermediate_size"] = b.intermediate;
  if (b.moe) {
    const auto& m = *b.moe;
    j["moe"] = {{"num_experts", m.num_experts},
                {"top_k", m.top_k},
                {"expert_intermediate_size", m.expert_intermediate},
                {"num_shared_experts", m.num_shared_experts},
                {"shared_expert_intermediate_size", m.shared_expert_intermediate},
                {"first_dense_layers", m.first_dense_layers},
                {"router", to_string(m.router)},
                {"layer_step", m.layer_step},
                {"router_bias", m.router_bias},
                {"expert_bias", m.expert_bias}};
    if (m.shared_expert_gate) j["moe"]["shared_expert_gate"] = true;
    if (m.swiglu_limit > 0) {
      j["moe"]["swiglu_limit"] = m.swiglu_limit;
      j["moe"]["swiglu_alpha"] = m.swiglu_alpha;
    }
  }
  if (b.mla) {
    const auto& m = *b.mla;
    j["mla"] = {{"q_lora_rank", m.q_lora_rank},
                {"kv_lora_rank", m.kv_lora_rank},
                {"qk_nope_head_dim", m.qk_nope_head_dim},
                {"qk_rope_head_dim", m.qk_rope_head_dim},
                {"v_head_dim", m.v_head_dim}};
  }
  j["vocab_size"] = b.vocab_size;
  j["input_vocab_size"] = b.input_vocab_size > 0 ? b.input_vocab_size : b.vocab_size;
  j["vocab_pad_multiple"] = b.vocab_pad_multiple;
  j["tie_embeddings"] = b.tie_embeddings;
  j["attention"] = attention_to_json(b);
  mixers_to_json(b, j);
  j["norms_per_layer"] = b.norms_per_layer;
  j["norm_placement"] = b.post_sublayer_norms ? "post" : "pre";
  j["kv_mirror_layers"] = b.kv_mirror_layers;
  j["rope_theta"] = b.rope_theta;
  rope_scaling_to_json(b, j);
  j["norm_eps"] = b.norm_eps;
  j["max_context"] = b.max_context;
  j["dtype"] = to_string(b.dtype);
  if (!b.assumptions.empty()) j["assumptions"] = b.assumptions;
  return j;
}

}  // namespace hdlab::model
