// Phi-3 / Phi-4 configs (model_type phi3): Llama shapes with fused projections, optional
// partial RoPE (Phi-4-mini) and LongRoPE scaling. What the import assumes is recorded;
// switches of Microsoft's remote code that would change the counted shapes are refused.
#include "hf_internal.hpp"

namespace hdlab::model::hf {

namespace {

// Keys of the remote modeling code shipped beside Phi-4-mini (auto_map) that HuggingFace's
// own Phi3Config does not read. Their released values leave the architecture as counted;
// any other value would add weights or change attention in ways hdlab does not model.
void refuse_remote_switches(HfReader& r) {
  for (const char* key : {"mlp_bias", "lm_head_bias"})
    if (r.boolean_or(key, false, ""))
      fail(r.at(key), "true is unsupported: HuggingFace's Phi3 has no biases on the FFN or the LM head, and the "
                      "remote-code variant that adds them is not modelled");
  for (const char* key : {"full_attn_mod", "interpolate_factor"})
    if (const Json* v = r.present(key); v && read_integer(*v, r.at(key), 0, Limits::max_layers) != 1)
      fail(r.at(key), "values other than 1 (Phi-4-mini's) are unsupported: HuggingFace's Phi3 does not read the key "
                      "and the remote code's use of another value (attention pattern, rotary interpolation) is not "
                      "modelled");
}

}  // namespace

// LongRoPE (rope_scaling type longrope) is read with the other scalings (hf_rope.cpp).
void read_phi3(HfReader& r, Backbone& /*b*/) {
  refuse_remote_switches(r);
  // Phi3 stores q, k, v as one qkv_proj [(H + 2G) hd, D] and gate, up as one gate_up_proj
  // [2F, D]: the same weights as the separate projections, and the same FLOPs.
  r.note("attention", "qkv_proj and gate_up_proj are fused in the checkpoint; counted and costed as the separate "
                      "q/k/v and gate/up projections (same weights, same FLOPs)");
  if (r.boolean_or("attention_bias", false, ""))
    r.note("attention", "attention_bias is not read: HuggingFace's Phi3Attention has no projection biases");
}

}  // namespace hdlab::model::hf
