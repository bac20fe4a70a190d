// gpt-oss (GptOssConfig, model_type gpt_oss): what sets it apart from a Llama-shaped MoE.
// Shapes as transformers' GptOss modules hold them, per layer:
//   q/k/v/o projections, each with a bias when attention_bias (the class default: true);
//   sinks [H] (one learned logit per query head, always present);
//   router weight [E, D] and bias [E];
//   experts gate_up_proj [E, D, 2F] + bias [E, 2F], down_proj [E, F, D] + bias [E, D];
//   the experts' activation a clamped SwiGLU (swiglu_limit, alpha 1.702 fixed in the code).
// There is no dense FFN and no shared expert.
#include "hf_internal.hpp"

namespace hdlab::model::hf {

void read_gpt_oss(HfReader& r, Backbone& b) {
  b.attention_bias = b.output_bias = r.boolean_or("attention_bias", true, "attention_bias");
  b.attention_sinks = true;
  r.note("attention_sinks", "gpt-oss attention has a learned sink logit per query head in every layer (sinks [H])");
  if (r.boolean_or("mlp_bias", false, ""))
    fail(r.at("mlp_bias"), "is not a gpt_oss key: its expert biases are part of the architecture");

  MoeConfig m;
  m.num_experts = r.integer_or("num_local_experts", 128, 1, Limits::max_experts, "moe");
  // transformers reads num_experts_per_tok; the release also writes the original
  // "experts_per_token". Both must agree when both are there.
  m.top_k = r.integer_or("num_experts_per_tok", 4, 1, Limits::max_experts, "moe");
  if (const Json* v = r.present("experts_per_token")) {
    const std::int64_t k = read_integer(*v, r.at("experts_per_token"), 1, Limits::max_experts);
    if (k != m.top_k)
      fail(r.at("experts_per_token"), num(k) + " disagrees with num_experts_per_tok (" + num(m.top_k) + ")");
  }
  // intermediate_size is the width of one expert; there is no dense FFN.
  m.expert_intermediate = r.required_integer("intermediate_size", 1, Limits::max_intermediate);
  m.shared_expert_intermediate = m.expert_intermediate;  // no shared experts; parse_moe's canonical value
  m.router_bias = true;
  m.expert_bias = true;
  m.swiglu_limit = r.number_or("swiglu_limit", 7.0, 0.0, 1e6, "moe");
  if (m.swiglu_limit <= 0) fail(r.at("swiglu_limit"), "must be > 0 (gpt-oss clamps its SwiGLU), got " + num(m.swiglu_limit));
  m.swiglu_alpha = 1.702;  // GptOssExperts.alpha: a constant of the code, not a config key
  r.note("moe", "softmax over the top-k router logits (router bias [E]); experts with biases and a clamped SwiGLU "
                "(limit " + num(m.swiglu_limit) + ", alpha 1.702 as transformers' GptOssExperts fixes it)");
  b.moe = m;
  b.intermediate = 0;
}

}  // namespace hdlab::model::hf
