// The MoE FFN of mixtral, qwen3_moe, olmoe and glm4_moe configs: expert counts, widths and where
// the dense layers sit.
#include <set>

#include "hf_internal.hpp"

namespace hdlab::model::hf {

namespace {

// OLMoE (OlmoeConfig): every layer's FFN is num_experts SwiGLU experts of intermediate_size
// (there is no dense FFN and no shared expert) behind a softmax router.
void read_olmoe_moe(HfReader& r, Backbone& b) {
  MoeConfig m;
  m.num_experts = r.required_integer("num_experts", 1, Limits::max_experts);
  m.top_k = r.required_integer("num_experts_per_tok", 1, Limits::max_experts);
  m.expert_intermediate = r.required_integer("intermediate_size", 1, Limits::max_intermediate);
  m.shared_expert_intermediate = m.expert_intermediate;  // no shared experts; parse_moe's canonical value
  b.moe = m;
  b.intermediate = 0;
  // Router renormalisation changes values, not shapes.
  const bool renorm = r.boolean_or("norm_topk_prob", false, "");
  std::string text = std::string("norm_topk_prob ") + (renorm ? "true" : "false") +
                     (renorm ? ": the top-k router weights are renormalised to sum to 1"
                             : ": the top-k softmax weights are used as they are");
  r.note("moe", text + " (no parameters; not costed)");
  if (const Json* clip = r.present("clip_qkv"))
    r.note("attention", "clip_qkv " + num(read_number(*clip, r.at("clip_qkv"), 0.0, 1e30)) +
                            " clamps q, k and v to +-clip_qkv (no parameters; not costed)");
}

}  // namespace

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
  if (f == Family::olmoe) {
    read_olmoe_moe(r, b);
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
}

// GLM-4.5 (Glm4MoeConfig): DeepSeek-V3's MoE layer with its own key defaults. Routed experts
// of moe_intermediate_size, n_shared_experts shared ones merged into one MLP of the same
// total width, first_k_dense_replace leading dense layers, and a sigmoid router with an
// e_score_correction_bias (always: the config has no scoring_func / topk_method keys).
void read_glm4_moe(HfReader& r, Backbone& b) {
  MoeConfig m;
  m.num_experts = r.required_integer("n_routed_experts", 1, Limits::max_experts);
  m.top_k = r.required_integer("num_experts_per_tok", 1, Limits::max_experts);
  m.expert_intermediate = r.required_integer("moe_intermediate_size", 1, Limits::max_intermediate);
  m.num_shared_experts = r.integer_or("n_shared_experts", 1, 0, Limits::max_experts, "moe");
  m.shared_expert_intermediate = m.expert_intermediate;
  m.first_dense_layers = r.integer_or("first_k_dense_replace", 1, 0, b.num_layers, "moe");
  m.router = RouterKind::sigmoid;
  r.note("moe", "sigmoid router with an e_score_correction_bias (n_routed_experts values per MoE layer, not "
                "counted); routed_scaling_factor scales expert outputs only");
  b.moe = m;
  read_expert_groups(r, m, 1, 1);  // Glm4MoeConfig: n_group 1, topk_group 1
  b.intermediate = m.first_dense_layers > 0 ? r.required_integer("intermediate_size", 1, Limits::max_intermediate) : 0;
}

}  // namespace hdlab::model::hf
