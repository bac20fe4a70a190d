// The model_type table of the HF importer and its default-recording reader.
#include <sstream>

#include "hf_internal.hpp"

namespace hdlab::model::hf {

std::string num(std::int64_t v) { return std::to_string(v); }

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

namespace {

const TypeInfo kTypes[] = {
    {"llama", Family::llama, false, 10000.0, 1e-6, 0, 0, 2048, 0},
    {"mistral", Family::mistral, false, 10000.0, 1e-6, 8, 0, 4096 * 32, 4096},
    // Ministral 3 / Devstral Small 2 (Ministral3Config): Mistral's blocks (no biases, a
    // whole-model sliding_window when set, null by default), untied by default; its
    // default rope_parameters are YaRN over rope_theta 1e6 (read in hf_rope.cpp).
    {"ministral3", Family::mistral, false, 1e6, 1e-5, 8, 128, 262144, 0},
    {"qwen2", Family::qwen2, false, 10000.0, 1e-6, 32, 0, 32768, 4096},
    {"qwen3", Family::qwen3, false, 10000.0, 1e-6, 32, 128, 32768, 4096},
    {"qwen3_moe", Family::qwen3_moe, false, 10000.0, 1e-6, 4, 0, 32768, 4096},
    {"mixtral", Family::mixtral, false, 1e6, 1e-5, 8, 0, 4096 * 32, 0},
    {"gemma2", Family::gemma2, true, 10000.0, 1e-6, 4, 256, 8192, 4096},
    {"gemma3_text", Family::gemma3_text, true, 1e6, 1e-6, 4, 256, 131072, 4096},
    {"deepseek_v2", Family::deepseek_v2, false, 10000.0, 1e-6, 32, 0, 2048, 0},
    {"deepseek_v3", Family::deepseek_v3, false, 10000.0, 1e-6, 128, 0, 4096, 0},
    // Kimi-K2: a DeepseekV3ForCausalLM whose config.json names its own model_type and
    // ships DeepseekV3Config as remote code, so DeepseekV3Config's defaults apply.
    {"kimi_k2", Family::deepseek_v3, false, 10000.0, 1e-6, 128, 0, 4096, 0, "deepseek_v3"},
    {"glm4_moe", Family::glm4_moe, false, 10000.0, 1e-5, 8, 0, 131072, 0},
    {"granite", Family::granite, false, 10000.0, 1e-6, 0, 0, 2048, 0},
    {"olmo2", Family::olmo2, false, 10000.0, 1e-5, 0, 0, 2048, 0},
    // Phi3Config, OlmoeConfig and Olmo3Config defaults (num_key_value_heads None: multi-head attention).
    {"phi3", Family::phi3, false, 10000.0, 1e-5, 0, 0, 4096, 0},
    {"olmoe", Family::olmoe, false, 10000.0, 1e-5, 0, 0, 4096, 0},
    {"olmo3", Family::olmo3, false, 10000.0, 1e-5, 0, 0, 2048, 4096},
    {"qwen3_next", Family::qwen3_next, false, 10000.0, 1e-6, 2, 256, 32768, 0},
    // Qwen3.5's text models (the language model of qwen3_5 / qwen3_5_moe): Qwen3-Next's
    // layers, dense or MoE; their configs set every sizing key, the rest as Qwen3-Next's.
    {"qwen3_5_text", Family::qwen3_5_text, false, 10000.0, 1e-6, 2, 256, 32768, 0, "qwen3_next"},
    {"qwen3_5_moe_text", Family::qwen3_next, false, 10000.0, 1e-6, 2, 256, 32768, 0, "qwen3_next"},
    {"gpt_oss", Family::gpt_oss, false, 150000.0, 1e-5, 8, 64, 131072, 128},
    {"llama4_text", Family::llama4_text, false, 500000.0, 1e-5, 8, 128, 4096 * 32, 0},
    // NemotronHConfig's defaults (its head width is attention_head_dim or head_dim).
    {"nemotron_h", Family::nemotron_h, false, 10000.0, 1e-5, 8, 128, 4096, 0},
};

std::string supported_types() {
  std::string s;
  for (const auto& t : kTypes) s += std::string(s.empty() ? "" : ", ") + t.name;
  return s + ", gemma3, mistral3, llama4, qwen3_5 and qwen3_5_moe (their text_config)";
}

}  // namespace

const TypeInfo& type_info(const std::string& name, const std::string& ptr) {
  for (const auto& t : kTypes)
    if (name == t.name) return t;
  fail(ptr, "unsupported model_type \"" + name + "\" (supported: " + supported_types() + ")");
}

bool is_gemma(Family f) { return f == Family::gemma2 || f == Family::gemma3_text; }
bool is_qwen(Family f) { return f == Family::qwen2 || f == Family::qwen3 || f == Family::qwen3_moe; }
bool is_deepseek(Family f) { return f == Family::deepseek_v2 || f == Family::deepseek_v3; }
bool is_qwen3_next_like(Family f) { return f == Family::qwen3_next || f == Family::qwen3_5_text; }

std::int64_t HfReader::required_integer(const std::string& key, std::int64_t min, std::int64_t max) {
  const Json* v = present(key);
  if (!v) fail(at(key), "is required");
  return read_integer(*v, at(key), min, max);
}

std::int64_t HfReader::integer_or(const std::string& key, std::int64_t dflt, std::int64_t min, std::int64_t max,
                                  const std::string& field, const std::string& why) {
  if (const Json* v = present(key)) return read_integer(*v, at(key), min, max);
  note_default(field, key, num(dflt), why);
  return dflt;
}

double HfReader::number_or(const std::string& key, double dflt, double min, double max, const std::string& field) {
  if (const Json* v = present(key)) return read_number(*v, at(key), min, max);
  note_default(field, key, num(dflt), "");
  return dflt;
}

bool HfReader::boolean_or(const std::string& key, bool dflt, const std::string& field) {
  if (const Json* v = present(key)) return read_bool(*v, at(key));
  if (!field.empty()) note_default(field, key, dflt ? "true" : "false", "");
  return dflt;
}

std::optional<std::string> HfReader::string_opt(const std::string& key) {
  if (const Json* v = present(key)) return read_string(*v, at(key));
  return std::nullopt;
}

void HfReader::note(const std::string& field, const std::string& text) {
  auto& slot = b_.assumptions[field];
  slot += slot.empty() ? text : "; " + text;
}

void HfReader::note_default(const std::string& field, const std::string& key, const std::string& value,
                            const std::string& why) {
  const char* cls = type_.defaults_of ? type_.defaults_of : type_.name;
  note(field, std::string("config.json has no ") + key + "; HuggingFace's " + cls + " default " + value +
                  (why.empty() ? "" : " (" + why + ")") + " used");
}

DType dtype_of(const std::string& s, const std::string& ptr) {
  if (s == "bfloat16") return DType::bf16;
  if (s == "float16") return DType::fp16;
  if (s == "float32") return DType::fp32;
  if (s == "float8_e4m3fn" || s == "float8_e5m2") return DType::fp8;
  fail(ptr, "unsupported dtype \"" + s + "\" (supported: bfloat16, float16, float32, float8_e4m3fn, float8_e5m2)");
}

}  // namespace hdlab::model::hf
