// Qwen3-Next (model_type qwen3_next, transformers' Qwen3NextConfig) and Qwen3.5's language
// models (qwen3_5_text: dense FFN; qwen3_5_moe_text: this MoE), whose Gated DeltaNet
// splits in_proj_qkvz / in_proj_ba into in_proj_qkv, _z, _b, _a of the same total shapes.
// Per-layer token mixers
// (Gated DeltaNet or gated full attention), the Gated DeltaNet sizes, and the MoE FFN with
// one sigmoid-gated shared expert. Shapes as transformers' modeling_qwen3_next builds them:
//   linear_attn: in_proj_qkvz [2 hk dk + 2 hv dv, D], in_proj_ba [2 hv, D],
//                conv1d [2 hk dk + hv dv, 1, kernel] (no bias), dt_bias [hv], A_log [hv],
//                norm (RMSNormGated) [dv], out_proj [D, hv dv];
//   self_attn:   q_proj [2 H hd, D] (query and output gate), k/v_proj [G hd, D],
//                o_proj [D, H hd], q_norm / k_norm [hd];
//   mlp:         gate [E, D], E experts of moe_intermediate_size, shared_expert of
//                shared_expert_intermediate_size, shared_expert_gate [1, D].
#include "hf_internal.hpp"

namespace hdlab::model::hf {

namespace {

// HF's rule when layer_types is absent: layer l is full attention iff
// (l + 1) % full_attention_interval == 0, linear attention otherwise.
std::vector<MixerKind> interval_kinds(HfReader& r, std::int64_t L) {
  const std::int64_t interval =
      r.integer_or("full_attention_interval", 4, 1, Limits::max_layers, "layer_types", "3 linear : 1 full");
  std::vector<MixerKind> kinds;
  for (std::int64_t l = 0; l < L; ++l)
    kinds.push_back((l + 1) % interval == 0 ? MixerKind::attention : MixerKind::gated_deltanet);
  return kinds;
}

std::vector<MixerKind> listed_kinds(HfReader& r, const Json& lt, std::int64_t L) {
  const std::string ptr = r.at("layer_types");
  if (!lt.is_array()) fail(ptr, "must be an array of linear_attention / full_attention, got " + json_type_name(lt));
  if (static_cast<std::int64_t>(lt.size()) != L)
    fail(ptr, "has " + num(static_cast<std::int64_t>(lt.size())) + " entries but num_hidden_layers is " + num(L));
  std::vector<MixerKind> kinds;
  for (std::size_t i = 0; i < lt.size(); ++i) {
    const std::string s = read_string(lt[i], pointer_join(ptr, i));
    if (s == "full_attention") kinds.push_back(MixerKind::attention);
    else if (s == "linear_attention") kinds.push_back(MixerKind::gated_deltanet);
    else fail(pointer_join(ptr, i), "layer type \"" + s + "\" is unsupported (qwen3_next has linear_attention and "
                                    "full_attention)");
  }
  return kinds;
}

}  // namespace

void read_qwen3_next_layers(HfReader& r, Backbone& b) {
  const std::int64_t L = b.num_layers;
  b.layers.assign(static_cast<std::size_t>(L), LayerAttention{});  // the attention layers are full causal
  const Json* lt = r.present("layer_types");
  b.mixers = lt ? listed_kinds(r, *lt, L) : interval_kinds(r, L);
  if (b.num_linear_layers() == 0) {
    b.mixers.clear();
    return;
  }
  // The state sizes are sizing keys: a config without them is refused, not given HF's
  // example defaults.
  GatedDeltaNetConfig g;
  g.num_key_heads = r.required_integer("linear_num_key_heads", 1, Limits::max_heads);
  g.num_value_heads = r.required_integer("linear_num_value_heads", 1, Limits::max_heads);
  g.key_head_dim = r.required_integer("linear_key_head_dim", 1, Limits::max_head_dim);
  g.value_head_dim = r.required_integer("linear_value_head_dim", 1, Limits::max_head_dim);
  g.conv_kernel = r.integer_or("linear_conv_kernel_dim", 4, 1, 64, "linear_attention");
  if (g.num_value_heads % g.num_key_heads != 0)
    fail(r.at("linear_num_value_heads"), num(g.num_value_heads) + " value heads cannot share " +
                                             num(g.num_key_heads) + " key heads evenly");
  b.gdn = g;
  r.note("linear_attention", "Gated DeltaNet in " + num(b.num_linear_layers()) + " of " + num(L) +
                                 " layers: no positions (RoPE only in the full-attention layers), a recurrent state "
                                 "of " + num(g.num_value_heads) + " x " + num(g.key_head_dim) + " x " +
                                 num(g.value_head_dim) + " per sequence instead of a KV cache");
  r.note("norm", "Qwen3-Next's RMSNorms are zero-centred (weight applied as 1 + w): the same D parameters and "
                 "FLOPs as RMSNorm");
  if (std::string(r.type().name).rfind("qwen3_5", 0) == 0)
  {
    const Json* mtp = r.present("mtp_num_hidden_layers");
    r.note("mtp", "the released checkpoints also hold mtp.* weights (multi-token prediction, mtp_num_hidden_layers " +
                      (mtp ? mtp->dump() : std::string("not given")) +
                      ") that the language model does not run; not modelled");
  }
  else
    r.note("mtp", "the released checkpoints also hold mtp.* weights (multi-token prediction) that transformers' "
                  "Qwen3NextForCausalLM ignores on load; not modelled");
}

// The MoE layers of Qwen3-MoE (decoder_sparse_step, mlp_only_layers; read_moe) plus one
// shared expert of shared_expert_intermediate_size behind a sigmoid gate.
void read_qwen3_next_moe(HfReader& r, Backbone& b) {
  MoeConfig m;
  m.num_experts = r.required_integer("num_experts", 1, Limits::max_experts);
  m.top_k = r.required_integer("num_experts_per_tok", 1, Limits::max_experts);
  m.expert_intermediate = r.required_integer("moe_intermediate_size", 1, Limits::max_intermediate);
  const std::int64_t step = r.integer_or("decoder_sparse_step", 1, 1, Limits::max_layers, "moe");
  if (step != 1)
    fail(r.at("decoder_sparse_step"), num(step) + " interleaves dense and MoE layers, which is unsupported for "
                                      "qwen3_next (hdlab models dense FFN layers only as a leading block)");
  if (const Json* mo = r.present("mlp_only_layers"); mo && !(mo->is_array() && mo->empty()))
    fail(r.at("mlp_only_layers"), "must be empty for qwen3_next: dense layers among MoE layers are unsupported");
  m.shared_expert_intermediate = r.required_integer("shared_expert_intermediate_size", 0, Limits::max_intermediate);
  m.num_shared_experts = m.shared_expert_intermediate > 0 ? 1 : 0;
  if (m.num_shared_experts == 0) m.shared_expert_intermediate = m.expert_intermediate;  // parse_moe's canonical value
  m.shared_expert_gate = m.num_shared_experts > 0;
  b.moe = m;
  b.intermediate = 0;
  if (m.shared_expert_gate)
    r.note("moe", "one shared expert of shared_expert_intermediate_size behind a sigmoid gate (D -> 1) on every MoE "
                  "layer; norm_topk_prob renormalises the routed weights (no parameters)");
}

}  // namespace hdlab::model::hf
