#pragma once
// Import of HuggingFace config.json files into a Backbone. Supported model_type values:
// llama, mistral, qwen2, qwen3, qwen3_moe, mixtral, gemma2, gemma3 / gemma3_text,
// deepseek_v2, deepseek_v3 and kimi_k2 (a DeepseekV3ForCausalLM; DeepseekV3Config's
// defaults apply), glm4_moe (GLM-4.5: partial RoPE, q/k/v biases, shared expert),
// granite (its multipliers are recorded: no parameters) and olmo2 (post-sublayer norms,
// QK-norm over the whole projection; both counted and costed, refused by the executor),
// olmo3 (OLMo 2's blocks, layer_types of sliding and full attention), phi3 (Phi-3 / Phi-4: fused projections counted as separate ones, partial RoPE, LongRoPE
// recorded), olmoe (OLMoE: whole-projection QK-norm, 64 experts) and mistral3 (Mistral
// Small 3.x: its text_config, a mistral model; Ministral 3 / Devstral Small 2: a ministral3
// one; the Pixtral tower is not counted).
// DeepSeek-family MLA is kept as an MlaConfig (q_lora_rank null: queries projected
// directly): parameters exact, costs approximated; the approximation is recorded in
// Backbone::assumptions. The executor runs MLA (executor/src/runner_mla.cpp).
// The readers live in model/src/hf_*.cpp, one per topic.
#include <nlohmann/json.hpp>

#include "hdlab/model/backbone.hpp"

namespace hdlab::model {

// `pointer` prefixes error places. Unknown model_type -> ConfigError. Fields a config
// does not state but hdlab needs (e.g. dtype when torch_dtype is missing) are set to a
// documented default and recorded in Backbone::assumptions.
//  - Keys hdlab does not read are ignored, as transformers ignores them (HF configs carry
//    dozens: token ids, dropout, init ranges); keys that would change the counted
//    architecture in ways hdlab does not model are refused (attention_bias or mlp_bias on
//    a DeepSeek-family model, dense layers after MoE layers, n_group / topk_group that
//    cannot route top-k experts, ...).
//  - dtype: the run is modelled in bf16; the checkpoint's torch_dtype / dtype (which must
//    agree) is recorded when it differs. A config document sets another with "dtype"
//    beside "hf_config" (load_backbone / parse_config).
//  - rope_scaling / rope_parameters are checked as transformers checks them (unknown keys
//    refused) and recorded; they change no count or cost.
//  - architectures must be causal-LM classes (*ForCausalLM, *ForConditionalGeneration):
//    a classification head (num_labels x hidden) is refused rather than counted as an LM
//    head.
Backbone import_hf_config(const nlohmann::json& hf, const std::string& pointer = "");

bool looks_like_hf_config(const nlohmann::json& j);

}  // namespace hdlab::model
