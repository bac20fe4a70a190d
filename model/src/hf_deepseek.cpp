// DeepSeek-family configs (deepseek_v2, deepseek_v3, and kimi_k2, a DeepseekV3ForCausalLM
// under its own model_type): multi-head latent attention and DeepSeekMoE.
#include "hf_internal.hpp"

namespace hdlab::model::hf {

namespace {

bool is_v3(const HfReader& r) { return r.family() == Family::deepseek_v3; }

}  // namespace

// Group-limited routing (n_group groups of experts; each token picks topk_group groups,
// then top_k experts inside them) changes which experts run, not how many: no parameter
// or FLOP depends on it. Checked as the router needs it and recorded.
void read_expert_groups(HfReader& r, const MoeConfig& m, std::int64_t default_groups, std::int64_t default_picked) {
  const Json* g = r.present("n_group");
  const Json* tg = r.present("topk_group");
  const std::int64_t groups = g ? read_integer(*g, r.at("n_group"), 1, m.num_experts) : default_groups;
  const std::int64_t picked =
      tg ? read_integer(*tg, r.at("topk_group"), 1, Limits::max_experts) : (default_groups > 1 ? default_picked : groups);
  if (!g && default_groups > 1) r.note_default("moe", "n_group", num(default_groups), "");
  if (!tg && default_groups > 1) r.note_default("moe", "topk_group", num(default_picked), "");
  if (m.num_experts % groups != 0)
    fail(r.at("n_group"), num(m.num_experts) + " routed experts (n_routed_experts) cannot be split into " +
                              num(groups) + " equal groups");
  if (picked > groups) fail(r.at("topk_group"), "must be <= n_group (" + num(groups) + "), got " + num(picked));
  const std::int64_t reachable = picked * (m.num_experts / groups);
  if (m.top_k > reachable)
    fail(r.at("num_experts_per_tok"), num(m.top_k) + " experts per token cannot be chosen from topk_group " +
                                          num(picked) + " groups of " + num(m.num_experts / groups) + " experts");
  if (groups > 1)
    r.note("moe", "group-limited routing (n_group " + num(groups) + ", topk_group " + num(picked) +
                      ") decides which experts run, not how many: parameters and FLOPs do not depend on it");
}

void read_mla(HfReader& r, Backbone& b) {
  MlaConfig m;
  // q_lora_rank null means queries are projected directly from D (DeepSeek-V2-Lite).
  if (r.has_key("q_lora_rank")) {
    const Json* q = r.present("q_lora_rank");
    m.q_lora_rank = q ? read_integer(*q, r.at("q_lora_rank"), 1, Limits::max_hidden) : 0;
  } else {
    m.q_lora_rank = 1536;
    r.note_default("mla", "q_lora_rank", "1536", "");
  }
  m.kv_lora_rank = r.required_integer("kv_lora_rank", 1, Limits::max_hidden);
  m.qk_nope_head_dim = r.required_integer("qk_nope_head_dim", 0, Limits::max_head_dim);
  m.qk_rope_head_dim = r.required_integer("qk_rope_head_dim", 1, Limits::max_head_dim);
  m.v_head_dim = r.required_integer("v_head_dim", 1, Limits::max_head_dim);
  b.mla = m;
  // The dot-product width per head; the MLA fields, not head_dim, drive counts and costs.
  // (transformers v5 re-saves write head_dim = qk_rope_head_dim; it is not read.)
  b.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  r.note("mla",
      std::string("parameters exact (") + (m.q_lora_rank > 0 ? "q_a/q_b with q_a_layernorm" : "q_proj, no q_lora") +
      ", kv_a_proj_with_mqa with kv_a_layernorm, kv_b, o); costs approximated: the KV cache keeps the latent "
      "(kv_lora_rank) and the shared RoPE key (qk_rope_head_dim) per token per layer (absorbed-weight inference), "
      "and each head scores with qk_nope_head_dim + qk_rope_head_dim dims and sums v_head_dim values (a decode "
      "scores the cached latents, kv_lora_rank + qk_rope_head_dim dims, and sums latent values)");
  b.assumptions["head_dim"] = "qk_nope_head_dim + qk_rope_head_dim = " + num(b.head_dim) +
                              " (the per-head dot-product width; MLA shapes come from the mla fields)";
}

// DeepSeekMoE: routed experts of moe_intermediate_size, n_shared_experts shared ones of
// the same width, and a leading block of first_k_dense_replace dense layers.
void read_deepseek_moe(HfReader& r, Backbone& b) {
  const std::int64_t L = b.num_layers;
  MoeConfig m;
  m.num_experts = r.required_integer("n_routed_experts", 1, Limits::max_experts);
  m.top_k = r.required_integer("num_experts_per_tok", 1, Limits::max_experts);
  m.expert_intermediate = r.required_integer("moe_intermediate_size", 1, Limits::max_intermediate);
  // HF builds one shared MLP of n_shared_experts * moe_intermediate_size: the same weights
  // as n_shared_experts experts of moe_intermediate_size each. DeepseekV2Config's default
  // is null (none), DeepseekV3Config's 1.
  m.num_shared_experts = r.integer_or("n_shared_experts", is_v3(r) ? 1 : 0, 0, Limits::max_experts, "moe");
  m.shared_expert_intermediate = m.expert_intermediate;
  m.first_dense_layers = r.integer_or("first_k_dense_replace", is_v3(r) ? 3 : 0, 0, L, "moe");
  const std::int64_t freq = r.integer_or("moe_layer_freq", 1, 1, Limits::max_layers, "moe");
  if (freq != 1)
    fail(r.at("moe_layer_freq"), "values other than 1 are unsupported: hdlab models dense FFN layers only as a "
                                 "leading block (first_dense_layers)");
  // DeepSeek-V3's router always scores with a sigmoid, V2's with a softmax.
  const std::string dflt = is_v3(r) ? "sigmoid" : "softmax";
  const std::string scoring = r.string_opt("scoring_func").value_or(dflt);
  if (scoring == "sigmoid") m.router = RouterKind::sigmoid;
  else if (scoring == "softmax") m.router = RouterKind::softmax;
  else fail(r.at("scoring_func"), "unsupported scoring_func \"" + scoring + "\" (sigmoid or softmax)");
  if (!r.present("scoring_func")) r.note_default("moe", "scoring_func", dflt, "");
  const std::string method = r.string_opt("topk_method").value_or(is_v3(r) ? "noaux_tc" : "greedy");
  if (method != "noaux_tc" && method != "greedy" && method != "group_limited_greedy")
    fail(r.at("topk_method"), "unsupported topk_method \"" + method + "\" (noaux_tc, greedy, group_limited_greedy)");
  if (method == "noaux_tc")
    r.note("moe", "the router's e_score_correction_bias (n_routed_experts values per MoE layer) is not counted");
  b.moe = m;
  // DeepseekV3Config's defaults are 8 groups, 4 picked; DeepseekV2Config's null (no groups).
  read_expert_groups(r, m, is_v3(r) ? 8 : 1, is_v3(r) ? 4 : 1);
  b.intermediate = m.first_dense_layers > 0 ? r.required_integer("intermediate_size", 1, Limits::max_intermediate) : 0;
}

// The multi-token-prediction module (DeepSeek-V3, GLM-4.5) sits in the checkpoint beside
// the main model; it is not part of the forward pass hdlab models.
void note_mtp(HfReader& r, Backbone& b) {
  const Json* mtp = r.present("num_nextn_predict_layers");
  const std::int64_t n_mtp = mtp ? read_integer(*mtp, r.at("num_nextn_predict_layers"), 0, Limits::max_layers) : 0;
  if (n_mtp > 0)
    b.assumptions["mtp"] = "num_nextn_predict_layers = " + num(n_mtp) +
                           ": the multi-token-prediction module is not modelled (its parameters and FLOPs are not "
                           "counted)";
}

}  // namespace hdlab::model::hf
