#pragma once
// The ops a layer is made of, named once for everyone: the simulator's op table, the
// executor's measured timings and the calibration all use these names, so predictions
// and measurements line up op by op. And the one cost record each op carries.
#include <cstdint>
#include <optional>
#include <string_view>

namespace hdlab::model {

// What bounds an op's speed and which fitted efficiency applies to it.
enum class OpClass {
  gemm,       // dense matrix products (projections, FFN, experts, head)
  attention,  // masked softmax(QK^T)V
  vector,     // element-wise and reductions (norms, RoPE, activations, adds, routing)
  memory,     // gathers and copies (embedding lookups)
};
const char* to_string(OpClass c);

enum class OpKind {
  embedding,       // input table lookups (HD: n tables, VWN: over-width rows)
  vwn_embed_proj,  // VWN projected embedding D -> D'
  attn_norm,       // pre-attention RMSNorm
  qkv_proj,        // Q, K, V projections
  qk_norm,         // RMSNorm of size hd on q and k
  rope,            // rotary positions on q and k
  attention,       // scores, softmax, weighted sum of values
  o_proj,          // attention output projection
  ffn_norm,        // pre-FFN RMSNorm
  ffn_gate_up,     // dense SwiGLU gate and up projections, D -> 2F
  ffn_act,         // SiLU(gate) * up
  ffn_down,        // F -> D
  router,          // MoE router logits and top-k selection
  experts,         // routed experts: gate/up, activation, down for the routed tokens
  shared_experts,  // always-active experts
  residual,        // residual additions of a layer
  ghc_norm,        // VWN per-slot RMSNorm of the wide state
  ghc_dynamic,     // VWN dynamic coefficients (tanh(Hn W) scaled)
  ghc_width,       // VWN width connection: n slots -> m slots (sublayer input)
  ghc_depth,       // VWN depth connection: sublayer output + carried state -> n slots
  vwn_reduce,      // VWN GroupNorm and D' -> D linear before the final norm
  injection,       // looped input injection adapter [h; e] (2D) -> D
  mtp,             // VWN multi-token prediction (training): next-token embedding, mixing linear, its output path
  final_norm,
  lm_head,
  count_
};
inline constexpr int op_kind_count = static_cast<int>(OpKind::count_);

const char* to_string(OpKind k);  // "qkv_proj", ...
std::optional<OpKind> op_kind_from_string(std::string_view s);
OpClass op_class(OpKind k);

// One op's cost in one phase. Bytes are what the op moves to and from device memory.
struct OpCost {
  double flops = 0;               // 2 per multiply-add
  double weight_bytes = 0;        // weights read
  double act_bytes_in = 0;        // activations read
  double act_bytes_out = 0;       // activations written
  double kv_bytes_read = 0;       // KV cache read
  double kv_bytes_written = 0;    // KV cache written
  double bytes() const { return weight_bytes + act_bytes_in + act_bytes_out + kv_bytes_read + kv_bytes_written; }
  OpCost& operator+=(const OpCost& o);
};

}  // namespace hdlab::model
