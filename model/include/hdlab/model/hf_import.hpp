#pragma once
// Import of HuggingFace config.json files into a Backbone. Supported model_type values:
// llama, mistral, qwen2, qwen3, qwen3_moe, mixtral, gemma2, gemma3 / gemma3_text,
// deepseek_v3 (MLA kept as an MlaConfig: parameters exact, costs approximated; the
// approximation is recorded in Backbone::assumptions).
#include <nlohmann/json.hpp>

#include "hdlab/model/backbone.hpp"

namespace hdlab::model {

// `pointer` prefixes error places. Unknown model_type -> ConfigError. Fields a config
// does not state but hdlab needs (e.g. dtype when torch_dtype is missing) are set to a
// documented default and recorded in Backbone::assumptions.
Backbone import_hf_config(const nlohmann::json& hf, const std::string& pointer = "");

bool looks_like_hf_config(const nlohmann::json& j);

}  // namespace hdlab::model
