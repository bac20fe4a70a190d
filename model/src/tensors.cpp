// Names and lifetimes of the layer program's tensors (tensors.hpp).
#include "hdlab/model/tensors.hpp"

namespace hdlab::model {

namespace {
// The executor's buffer names; the residual stream is its first hidden buffer.
constexpr const char* kTensorNames[] = {
    "hidden_a",   "normed",     "mirror_input", "q",          "k",           "v",
    "attn_gate",  "scores",     "attn",         "sub_out",    "dropout_mask",    "gate_up",     "act",
    "shared_out", "shared_gate", "router_logits", "route_ids", "route_weights", "moe_ids",
    "moe_weights", "expert_x",  "expert_gate_up", "expert_act", "expert_out", "lin_qkv",
    "lin_z",      "lin_ba",     "lin_conv",     "lin_o",      "lin_state",   "lin_conv_state",
    "kv_cache",   "mla_q_latent", "mla_latent", "mla_rope_key", "mla_entries", "mla_kv", "mla_keys",
    "mla_q_absorbed", "mla_o_latent", "ghc_x",      "ghc_carry",    "ghc_hn",     "ghc_alpha",   "ghc_beta",
    "token_ids",  "embed_tmp",  "inject_e",     "hidden_b",   "out_norm",    "out_reduce",
    "out_final",  "logits",     "mtp_e",        "mtp_mix",    "mtp_norm",    "mtp_reduce",
    "mtp_final",  "mtp_logits", "mtp_ids"};
static_assert(sizeof(kTensorNames) / sizeof(kTensorNames[0]) == tensor_kind_count, "one name per TensorKind");
}  // namespace

const char* to_string(TensorKind k) { return kTensorNames[static_cast<int>(k)]; }

TensorLife tensor_life(TensorKind k) {
  switch (k) {
    case TensorKind::mirror_input: return TensorLife::per_layer;
    case TensorKind::kv_cache:
    case TensorKind::linear_state:
    case TensorKind::conv_state: return TensorLife::cache;
    default: return TensorLife::workspace;
  }
}

void add_peaks(const TensorUses& uses, TensorPeaks& peaks) {
  for (const TensorUse& u : uses) {
    TensorPeak& p = peaks[static_cast<std::size_t>(u.tensor)];
    if (u.elements() > p.elements) p = TensorPeak{u.elements(), u.el_bytes, u.rows, u.width};
  }
}

}  // namespace hdlab::model
