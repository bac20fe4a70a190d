// Llama 4 (Llama4TextConfig, model_type llama4_text; the multimodal llama4 wrapper holds it
// in text_config). What sets it apart, as transformers' Llama4 modules hold it:
//  - attention: q/k/v/o biases iff attention_bias; layers that use RoPE (no_rope_layers[l]
//    = 1, the name notwithstanding) run chunked local attention over attention_chunk_size
//    tokens, the others run full causal attention without positions (NoPE);
//  - QK-norm (use_qk_norm): an L2 norm of q and k per head with no weight, on the RoPE
//    layers only; attention temperature tuning scales the NoPE layers' queries by a
//    function of the position: neither has parameters;
//  - FFN: layer l is MoE iff l is in moe_layers = [step-1, 2 step-1, ...] for
//    interleave_moe_layer_step = step, with num_local_experts routed experts of
//    intermediate_size (top num_experts_per_tok, sigmoid of the chosen logits) and one
//    shared expert of intermediate_size; the other layers a dense SwiGLU of
//    intermediate_size_mlp. The router has no bias.
#include "hf_internal.hpp"

namespace hdlab::model::hf {

namespace {

// no_rope_layers as given (1: the layer uses RoPE), or Llama4TextConfig's default from
// no_rope_layer_interval (every interval-th layer is NoPE).
std::vector<bool> rope_layers(HfReader& r, std::int64_t L) {
  std::vector<bool> rope(static_cast<std::size_t>(L), true);
  const Json* nr = r.present("no_rope_layers");
  if (nr && nr->is_array() && !nr->empty()) {
    const std::string ptr = r.at("no_rope_layers");
    if (static_cast<std::int64_t>(nr->size()) != L)
      fail(ptr, "has " + num(static_cast<std::int64_t>(nr->size())) + " entries but num_hidden_layers is " + num(L));
    for (std::size_t l = 0; l < nr->size(); ++l) rope[l] = read_integer((*nr)[l], pointer_join(ptr, l), 0, 1) == 1;
    return rope;
  }
  if (nr && !nr->is_array()) fail(r.at("no_rope_layers"), "must be a list of 0/1 per layer, got " + json_type_name(*nr));
  const std::int64_t every = r.integer_or("no_rope_layer_interval", 4, 1, Limits::max_layers, "attention",
                                          "every 4th layer NoPE");
  for (std::int64_t l = 0; l < L; ++l) rope[static_cast<std::size_t>(l)] = (l + 1) % every != 0;
  return rope;
}

}  // namespace

std::vector<LayerAttention> llama4_layers(HfReader& r, std::int64_t L) {
  const std::vector<bool> rope = rope_layers(r, L);
  const Json* chunk_v = r.present("attention_chunk_size");
  const std::int64_t chunk = chunk_v ? read_integer(*chunk_v, r.at("attention_chunk_size"), 1, Limits::max_window) : 0;
  if (!r.has_key("attention_chunk_size")) fail(r.at("attention_chunk_size"), "is required for llama4_text");
  std::vector<LayerAttention> out(static_cast<std::size_t>(L));
  for (std::size_t l = 0; l < out.size(); ++l) {
    out[l].nope = !rope[l];
    if (rope[l] && chunk > 0) {
      out[l].kind = AttentionKind::chunked;
      out[l].chunk = chunk;
    }
  }
  // A layer_types list (newer configs) must say the same.
  if (const Json* lt = r.present("layer_types")) {
    const std::string ptr = r.at("layer_types");
    if (!lt->is_array() || static_cast<std::int64_t>(lt->size()) != L)
      fail(ptr, "must list one of chunked_attention / full_attention for each of the " + num(L) + " layers");
    for (std::size_t l = 0; l < out.size(); ++l) {
      const std::string s = read_string((*lt)[l], pointer_join(ptr, l));
      const std::string want = out[l].kind == AttentionKind::chunked ? "chunked_attention" : "full_attention";
      if (s != want) fail(pointer_join(ptr, l), "is \"" + s + "\" but no_rope_layers and attention_chunk_size make it " + want);
    }
  }
  if (chunk == 0) r.note("attention", "attention_chunk_size is null: the RoPE layers attend fully");
  return out;
}

void read_llama4(HfReader& r, Backbone& b) {
  b.attention_bias = b.output_bias = r.boolean_or("attention_bias", false, "");
  if (r.boolean_or("use_qk_norm", true, "qk_norm"))
    r.note("qk_norm", "use_qk_norm: an L2 norm of q and k per head with no weight, on the RoPE layers only: no "
                      "parameters, and its element-wise work is not costed");
  // Released configs write it as a number (4): transformers tests it for truth.
  const Json* tuning = r.present("attn_temperature_tuning");
  const bool tuned = !tuning || (tuning->is_boolean() ? tuning->get<bool>()
                                                     : read_number(*tuning, r.at("attn_temperature_tuning"), 0, 1e9) != 0);
  if (tuned)
    r.note("attention", "attn_temperature_tuning: the NoPE layers' queries are scaled by 1 + attn_scale * "
                        "log1p(floor((position + 1) / floor_scale)): no parameters, an element-wise multiply not "
                        "costed");
  MoeConfig m;
  m.num_experts = r.integer_or("num_local_experts", 16, 1, Limits::max_experts, "moe");
  m.top_k = r.integer_or("num_experts_per_tok", 1, 1, Limits::max_experts, "moe");
  m.expert_intermediate = r.required_integer("intermediate_size", 1, Limits::max_intermediate);
  m.num_shared_experts = 1;
  m.shared_expert_intermediate = m.expert_intermediate;
  m.router = RouterKind::sigmoid;
  m.layer_step = r.integer_or("interleave_moe_layer_step", 1, 1, b.num_layers, "moe");
  if (const Json* ml = r.present("moe_layers")) {
    const std::string ptr = r.at("moe_layers");
    if (!ml->is_array()) fail(ptr, "must be a list of layer indices, got " + json_type_name(*ml));
    std::vector<std::int64_t> want;
    for (std::int64_t l = m.layer_step - 1; l < b.num_layers; l += m.layer_step) want.push_back(l);
    std::vector<std::int64_t> got;
    for (std::size_t i = 0; i < ml->size(); ++i) got.push_back(read_integer((*ml)[i], pointer_join(ptr, i), 0, b.num_layers - 1));
    if (got != want)
      fail(ptr, "is not every " + num(m.layer_step) + "-th layer (interleave_moe_layer_step): hdlab models "
                "periodic MoE layers only");
  }
  r.note("moe", "one shared expert of intermediate_size beside the routed ones; the router picks the top-k logits "
                "and weighs them by their sigmoid (no bias)");
  b.moe = m;
  b.intermediate = 0;
  if (m.layer_step > 1) {
    b.intermediate = r.integer_or("intermediate_size_mlp", 16384, 1, Limits::max_intermediate, "intermediate_size");
  } else if (r.present("intermediate_size_mlp")) {
    r.note("intermediate_size", "intermediate_size_mlp is unused: interleave_moe_layer_step 1 makes every layer MoE");
  }
}

}  // namespace hdlab::model::hf
