#pragma once
// The tensors the op nodes of the layer program read and write (layer_program.hpp), named
// once for everyone: layer_ops and outside_ops list, for every node, each tensor it reads
// or writes with its shape and element size, and memory is derived from those lists
// (forward_memory.hpp: the workspace a run reuses, the KV caches and states it keeps).
//
// A tensor is [rows, width] over all sequences of a run; its name is the buffer an
// implementation keeps it in (the executor's runner: one reused buffer per name), so the
// names are those a memory report shows.
#include <array>
#include <cstdint>
#include <vector>

#include "hdlab/model/ops.hpp"

namespace hdlab::model {

enum class TensorKind : std::uint8_t {
  // a layer run's
  hidden,          // the residual stream [rows, D] (hyper-connections: [rows, D'], the wide state)
  normed,          // a pre-norm's output [rows, D]
  mirror_input,    // KV mirror: the source layer's normed input [rows_kv, D], kept per mirrored layer
  q, k, v,         // [rows_q, H qk], [rows_kv, G qk], [rows_kv, G v]
  attn_gate,       // gated attention: the gate half of q_proj [rows_q, H v]
  scores,          // unfused attention: every (query, key) score [seqs H rows_q, rows_kv]
  attn,            // attention output [rows_q, H v]
  sub_out,         // a sublayer's output before its residual add [rows, D]
  dropout_mask,    // training dropout's kept mask, a byte an element (hidden: [rows, D] per sublayer)
  gate_up, act,    // dense FFN and each shared expert: [rows, 2F] (GELU, ReLU^2: [rows, F]), [rows, F]
  shared_out,      // gated shared experts: their sum before the gate scales it [rows, D]
  shared_gate,     // the shared experts' gate logit [rows, 1]
  router_logits,   // [rows, E]
  route_ids, route_weights,  // each row's top-k experts (int32) and weights (fp32) [rows, k]
  moe_ids, moe_weights,      // the token copies grouped by expert (int32, fp32) [rows k, 1]
  // one routed expert's tokens (rows: the expected tokens per expert under balanced routing)
  expert_x, expert_gate_up, expert_act, expert_out,
  lin_qkv, lin_z, lin_ba,  // a linear mixer's input projections (Gated DeltaNet: q k v, z, b a)
  lin_conv,        // its causal conv's output [rows, conv channels]
  lin_o,           // its state update's output [rows, value width]
  linear_state,    // recurrent state [states, state elements] (a cache between calls)
  conv_state,      // the conv's last kernel-1 inputs [states, conv channels (kernel - 1)]
  kv_cache,        // the run's KV cache slot: entries [entries, kv_out] read or written
  // MLA (methods.md's shapes): q_lora's latent [rows_q, r_q]; the latent [rows_kv, r_kv],
  // its RoPE key [rows_kv, rope] and the cache entries [rows_kv, r_kv + rope]; training and
  // prefill expand the latents into per-head [v | k nope] [rows_kv, H (v + nope)] and keys
  // [rows_kv, H qk]; decode absorbs the queries [rows_q, H (r_kv + rope)] and attends to
  // latent outputs [rows_q, H r_kv]
  mla_q_latent, mla_latent, mla_rope_key, mla_entries, mla_kv, mla_keys, mla_q_absorbed, mla_o_latent,
  ghc_x,           // hyper-connections: the sublayer input [rows, D]
  ghc_carry,       // the carried state [rows, D']
  ghc_hn,          // VWN's per-slot normed state [rows, D']
  ghc_alpha, ghc_beta,  // mixing coefficients (fp32) [rows, n (m + n)], [rows, m n]
  // outside the layers
  token_ids,       // int32 token ids [rows, 1]
  embed_tmp,       // VWN's projected embedding: the D-wide lookup [rows, D]
  inject_e,        // looped injection: the recurrent block's input [rows, D]
  hidden_b,        // looped injection: the adapter's output [rows, D]
  out_norm,        // VWN's GroupNorm over the loss rows [rows, D']
  out_reduce,      // the wide state reduced to D [rows, D]
  out_final,       // the final norm's output [rows, D]
  logits,          // [rows, V]
  // VWN multi-token prediction (training): its own embedding, mix and output path
  mtp_e, mtp_mix, mtp_norm, mtp_reduce, mtp_final, mtp_logits, mtp_ids,
  count_
};
inline constexpr int tensor_kind_count = static_cast<int>(TensorKind::count_);
const char* to_string(TensorKind k);  // "hidden_a" for hidden, else the enumerator's name

// How long a tensor lives: reused by every layer (sized for the largest use), kept per
// layer for the rest of the pass, or kept between calls (a cache slot's).
enum class TensorLife : std::uint8_t { workspace, per_layer, cache };
TensorLife tensor_life(TensorKind k);

// One node's use of one tensor.
struct TensorUse {
  OpKind op = OpKind::embedding;  // the node
  TensorKind tensor = TensorKind::hidden;
  bool write = false;             // written (else read)
  double rows = 0, width = 0;     // its shape in this run, all sequences together
  double el_bytes = 0;            // bytes per element (its dtype's)
  double elements() const { return rows * width; }
  double bytes() const { return rows * width * el_bytes; }
};
using TensorUses = std::vector<TensorUse>;

// The largest use of each tensor in `uses` (elements; 0: not used) and its element bytes.
struct TensorPeak {
  double elements = 0;
  double el_bytes = 0;
  double rows = 0, width = 0;  // of the largest use
};
using TensorPeaks = std::array<TensorPeak, tensor_kind_count>;
void add_peaks(const TensorUses& uses, TensorPeaks& peaks);

}  // namespace hdlab::model
