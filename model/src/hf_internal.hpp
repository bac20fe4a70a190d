#pragma once
// Internals of the HuggingFace config.json importer (hf_import.cpp and the per-topic
// readers beside it): the model_type table, the reader that records every default it
// takes, and the readers each topic's file defines.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/model/backbone.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::model::hf {

std::string num(std::int64_t v);
std::string num(double v);

enum class Family {
  llama,
  mistral,
  qwen2,
  qwen3,
  qwen3_moe,
  mixtral,
  gemma2,
  gemma3_text,
  deepseek_v2,  // MLA + DeepSeekMoE, softmax router (DeepSeek-V2, V2-Lite)
  deepseek_v3,  // MLA + DeepSeekMoE, sigmoid router (DeepSeek-V3, Kimi-K2)
  glm4_moe,     // GQA with partial RoPE, q/k/v biases + DeepSeek-style MoE (GLM-4.5, GLM-4.5-Air)
  granite,      // Llama shapes with scalar multipliers (Granite 3.x)
  olmo2,        // post-sublayer norms, whole-projection QK-norm (OLMo 2)
  phi3,         // fused qkv / gate_up, partial RoPE, LongRoPE (Phi-3, Phi-4, Phi-4-mini)
  olmoe,        // pre-norm OLMo with whole-projection QK-norm and a 64-expert MoE (OLMoE)
  olmo3,        // OLMo 2's blocks with 3 sliding : 1 full attention layers (OLMo 3)
  qwen3_next,   // Gated DeltaNet + gated attention (3:1), MoE with a gated shared expert (Qwen3-Next)
  gpt_oss,      // sinks, alternating sliding/full layers, biased MoE with a clamped SwiGLU (gpt-oss)
  llama4_text,  // chunked local attention, NoPE global layers, interleaved MoE with a shared expert (Llama 4)
  qwen3_5_text,  // Qwen3-Next's mixers (Gated DeltaNet + gated attention) with a dense SwiGLU FFN (Qwen3.5)
  nemotron_h,   // single-sublayer blocks: Mamba-2, attention without positions, relu2 MLP (Nemotron-H)
};

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
  // The configuration class whose defaults apply, when it is not the model_type's own
  // (Kimi-K2 ships DeepseekV3Config under model_type kimi_k2); nullptr: `name`.
  const char* defaults_of = nullptr;
};

const TypeInfo& type_info(const std::string& name, const std::string& ptr);
bool is_gemma(Family f);
bool is_qwen(Family f);
bool is_deepseek(Family f);
// Qwen3-Next's layers: Gated DeltaNet and gated attention with QK-norm and partial RoPE
// (qwen3_next, and Qwen3.5's qwen3_5_text and qwen3_5_moe_text).
bool is_qwen3_next_like(Family f);

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

  std::int64_t required_integer(const std::string& key, std::int64_t min, std::int64_t max);
  std::int64_t integer_or(const std::string& key, std::int64_t dflt, std::int64_t min, std::int64_t max,
                          const std::string& field, const std::string& why = "");
  double number_or(const std::string& key, double dflt, double min, double max, const std::string& field);
  // `field` empty: the default is not worth an assumption (e.g. a feature switched off).
  bool boolean_or(const std::string& key, bool dflt, const std::string& field);
  std::optional<std::string> string_opt(const std::string& key);

  void note(const std::string& field, const std::string& text);
  void note_default(const std::string& field, const std::string& key, const std::string& value,
                    const std::string& why);

 private:
  ObjectReader r_;
  const TypeInfo& type_;
  Backbone& b_;
};

DType dtype_of(const std::string& s, const std::string& ptr);

// hf_attention.cpp: per-layer full / sliding attention.
std::vector<LayerAttention> layer_attention(HfReader& r, std::int64_t L);
// hf_moe.cpp: the MoE FFN of mixtral, qwen3_moe and olmoe; sets b.moe and b.intermediate.
void read_moe(HfReader& r, Backbone& b);
// hf_deepseek.cpp: MLA and DeepSeekMoE (deepseek_v2, deepseek_v3, kimi_k2).
void read_mla(HfReader& r, Backbone& b);
void read_deepseek_moe(HfReader& r, Backbone& b);
// Group-limited routing (n_group / topk_group), checked against the experts; the defaults
// are the configuration class's when the keys are absent.
void read_expert_groups(HfReader& r, const MoeConfig& m, std::int64_t default_groups, std::int64_t default_picked);
// num_nextn_predict_layers (DeepSeek-V3, GLM-4.5): the MTP module is noted, not modelled.
void note_mtp(HfReader& r, Backbone& b);
// hf_moe.cpp: GLM-4.5's MoE (shared expert, first_k_dense_replace, sigmoid router).
void read_glm4_moe(HfReader& r, Backbone& b);
// hf_phi3.cpp: Phi3's LongRoPE and fused projections noted, remote-code switches refused.
void read_phi3(HfReader& r, Backbone& b);
// hf_qwen3_next.cpp: Qwen3-Next's layer kinds (layer_types or full_attention_interval),
// Gated DeltaNet sizes, gated attention, and its MoE with a gated shared expert.
void read_qwen3_next_layers(HfReader& r, Backbone& b);
void read_qwen3_next_moe(HfReader& r, Backbone& b);
// hf_gpt_oss.cpp: gpt-oss's biases, sinks and MoE (router and expert biases, clamped
// SwiGLU); sets b.moe and b.intermediate.
void read_gpt_oss(HfReader& r, Backbone& b);
// hf_llama4.cpp: Llama 4's FFN (routed + shared expert, interleave_moe_layer_step,
// intermediate_size_mlp) and biases; its per-layer attention (chunked RoPE layers, full
// NoPE layers) and the notes on its weightless QK-norm and attention temperature.
void read_llama4(HfReader& r, Backbone& b);
std::vector<LayerAttention> llama4_layers(HfReader& r, std::int64_t L);
// hf_nemotron_h.cpp: Nemotron-H's blocks (hybrid_override_pattern), Mamba-2 sizes, relu2
// MLP and biases; sets b.layers, mixers, ffns, mamba, intermediate, positions none. Its
// norm epsilon and context (no RoPE keys).
void read_nemotron_h(HfReader& r, Backbone& b);
void read_nemotron_h_positions(HfReader& r, Backbone& b);
// hf_rope.cpp: rope_scaling (v4) / rope_parameters (v5), checked as transformers checks them.
void check_rope_scaling(HfReader& r, const char* key, Backbone& b);
// partial_rotary_factor (glm4_moe): b.rotary_dim from b.head_dim; 0 when every dim rotates.
void read_partial_rotary(HfReader& r, Backbone& b, double default_factor);

}  // namespace hdlab::model::hf
