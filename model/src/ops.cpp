#include "hdlab/model/ops.hpp"

namespace hdlab::model {

namespace {
constexpr const char* kOpNames[] = {
    "embedding", "vwn_embed_proj", "attn_norm", "qkv_proj", "qk_norm",        "rope",       "attention",
    "o_proj",    "ffn_norm",       "ffn_gate_up", "ffn_act", "ffn_down",      "router",     "experts",
    "shared_experts", "residual",  "ghc_norm",  "ghc_dynamic", "ghc_width",   "ghc_depth",  "vwn_reduce",
    "injection", "mtp",            "final_norm", "lm_head"};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == op_kind_count, "one name per OpKind");
}  // namespace

const char* to_string(OpClass c) {
  switch (c) {
    case OpClass::gemm: return "gemm";
    case OpClass::attention: return "attention";
    case OpClass::vector: return "vector";
    case OpClass::memory: return "memory";
  }
  return "?";
}

const char* to_string(OpKind k) { return kOpNames[static_cast<int>(k)]; }

std::optional<OpKind> op_kind_from_string(std::string_view s) {
  for (int i = 0; i < op_kind_count; ++i)
    if (s == kOpNames[i]) return static_cast<OpKind>(i);
  return std::nullopt;
}

OpClass op_class(OpKind k) {
  switch (k) {
    case OpKind::embedding: return OpClass::memory;
    case OpKind::vwn_embed_proj:
    case OpKind::qkv_proj:
    case OpKind::o_proj:
    case OpKind::ffn_gate_up:
    case OpKind::ffn_down:
    case OpKind::experts:
    case OpKind::shared_experts:
    case OpKind::vwn_reduce:
    case OpKind::injection:
    case OpKind::mtp:
    case OpKind::lm_head: return OpClass::gemm;
    case OpKind::attention: return OpClass::attention;
    default: return OpClass::vector;
  }
}

OpCost& OpCost::operator+=(const OpCost& o) {
  flops += o.flops;
  weight_bytes += o.weight_bytes;
  act_bytes_in += o.act_bytes_in;
  act_bytes_out += o.act_bytes_out;
  kv_bytes_read += o.kv_bytes_read;
  kv_bytes_written += o.kv_bytes_written;
  return *this;
}

}  // namespace hdlab::model
