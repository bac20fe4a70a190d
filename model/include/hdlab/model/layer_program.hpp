#pragma once
// The layer program: for each layer run of a pass, its op nodes (kind, cost, the matrix
// products it runs as kernels see them), built here once for the simulator and the
// executor. The FLOPs and bytes of every op are written in one place (layer_ops.cpp of
// this library): the simulator's op tables are these nodes, costed on a hardware profile;
// the executor builds the same nodes for the rows and attention pairs of each call and
// takes every op's FLOPs for its profile from them.
//
// A pass is described by its work (LayerWork per layer run: rows, attention pairs, KV
// entries read and written; OutsideWork for the embeddings and the output path), which
// layer_work.hpp derives from the masks and the design's schedule for the simulator and
// the executor alike.
//
// Each node also names the tensors it reads and writes (tensors.hpp: which tensor, its
// shape in the run and its element size), recorded when the caller asks: memory is
// derived from them (forward_memory.hpp) and a cache slot's contents from
// layer_cache below.
//
// Counting conventions (methods.md section 6, plus the choices below):
//  - 2 FLOPs per multiply-add; RMSNorm 4 FLOPs per element (square-accumulate, scale,
//    weight), the published VWN norm count; RoPE 3 per rotated element (2 multiplies, 1
//    add); SiLU(gate)*up 5 per element (SiLU as 4: exp, add, divide, multiply); a
//    residual add 1 per element; biases 1 per output element.
//  - Attention 4*hd*H FLOPs per visible pair (MLA: 2*H*(qk_head_dim + v_head_dim); an MLA
//    decode attends in the latent, 2*H*(2 kv_lora_rank + qk_rope_head_dim));
//    softmax FLOPs are not counted. Both the exact and the tile-executed pair counts are
//    kept; the op's flops use the one the caller chooses (executed by default).
//  - Bytes: weights read once per pass, activations written and read by each op (an op
//    reads its inputs and writes its outputs to device memory: no fusion is assumed),
//    KV cache read and written by the attention op.
//  - Costs are logical: the whole model replica, unsharded. The simulator's roofline
//    divides them over tensor/expert-parallel devices.
// Node lists are fixed arrays indexed by OpKind, so building one allocates nothing (the
// hot path of a sweep).
#include <array>
#include <cstdint>
#include <vector>

#include "hdlab/model/design.hpp"
#include "hdlab/model/ops.hpp"
#include "hdlab/model/schedule.hpp"
#include "hdlab/model/tensors.hpp"

namespace hdlab::model {

// How tensor parallelism cuts a matrix product [m, k] x [k, n]: a column-parallel weight
// splits n, a row-parallel one k (its partial sums are all-reduced); a replicated one
// (the router) neither.
// A per-head product (unfused attention's Q K^T and P V: one group per sequence and head)
// splits its groups: heads over tp, sequences over ep.
enum class GemmSplit : std::uint8_t { column, row, replicated, heads };

// One matrix product an op runs, as the kernels see it: `groups` products of
// [m, k] x [k, n] in one launch (the routed experts: one group per expert hit, m its
// tokens). Logical (unsharded) sizes.
struct OpGemm {
  double m = 0, n = 0, k = 0;
  double groups = 0;  // 0: no product
  GemmSplit split = GemmSplit::column;
};

// One op of one run of a layer (or of the ops outside the layers).
struct OpNode {
  OpCost cost;                // logical cost of one run of the op
  double params = 0;          // parameters the op owns (resident weights, per layer)
  double calls = 0;           // kernel launches per run
  double rows = 0;            // GEMM M: tokens through the op (experts: expected tokens per expert)
  double weight_dim_min = 0;  // GEMM: the smaller weight dimension (min(N, K))
  // The op's products, and the bytes and launches of the element-wise steps between them
  // (SwiGLU's activation, the experts' token permutes), for kernel-level timing models.
  // inner_vector_bytes split as the op's products split (over tensor- and expert-parallel
  // ranks); inner_row_bytes stream whole model-width rows (the routed copies' permute and
  // un-permute), which every tensor-parallel rank moves in full, so they split over
  // expert-parallel ranks only. Both are counted in inner_vector_calls.
  std::array<OpGemm, 2> gemms{};
  double inner_vector_bytes = 0;
  double inner_row_bytes = 0;
  double inner_vector_calls = 0;
};
// The nodes of one layer run, indexed by OpKind (an op the layer does not run: all zero).
using OpNodes = std::array<OpNode, op_kind_count>;

inline OpNode& node(OpNodes& t, OpKind k) { return t[static_cast<std::size_t>(k)]; }
inline const OpNode& node(const OpNodes& t, OpKind k) { return t[static_cast<std::size_t>(k)]; }
OpCost nodes_total(const OpNodes& t);

// Gated DeltaNet sizes of a backbone's linear-attention layers (backbone.hpp's
// GatedDeltaNetConfig), and the chunk its prefill kernel works in.
struct GdnDims {
  double hk = 0, hv = 0, dk = 0, dv = 0, kernel = 0;
  double chunk = 64;          // tokens per chunk of the chunked (prefill) form
  double state_el_bytes = 2;  // recurrent and conv state: the KV cache's precision
  double qk() const { return hk * dk; }
  double v() const { return hv * dv; }
  double conv_channels() const { return 2 * qk() + v(); }
  double state_elements() const { return hv * dk * dv; }
  double conv_state_elements() const { return conv_channels() * (kernel - 1); }
};

// A causal depthwise conv of `kernel` taps over `channels` channels of `seqs` sequences of
// `tokens` tokens, then SiLU: 2 kernel FLOPs an element, 1 for a bias, 4 for SiLU; the
// activations read and written once; the conv state (the last kernel - 1 inputs of each
// channel, `state_el_bytes` each) read when decoding and written by both phases.
OpCost causal_conv_cost(double channels, double kernel, bool bias, double seqs, double tokens, bool decode,
                        double act_bytes, double state_el_bytes);

// The two kernels of a Gated DeltaNet layer's token mixing, as costs (FLOPs and bytes),
// for `seqs` independent state sequences of `tokens` tokens each:
//  - the causal depthwise conv (2 kernel FLOPs an element, SiLU 4) over q, k, v;
//  - the gated delta rule: chunked over `chunk` tokens when !decode (a prefill from a zero
//    state, the final state written; its kernels hand each other the per-chunk products
//    and the state entering every chunk through memory), or one recurrent step per token
//    when decode (the state read and written each step; `tokens` is then 1).
// Counted per chunk of C tokens and value head (k k^T, q k^T, the W and U right-hand
// sides, P V: C^2 dk or C^2 dv multiply-adds each; C^3/3 for the unit-triangular solve;
// the state products W S, Q S and the update K^T V at C dk dv each), per recurrent step
// and value head (decay, S^T k, the update, S^T q: 7 dk dv FLOPs). Gates (exp, softplus,
// sigmoid) 10 FLOPs per token and value head, the L2 norm of q and k 3 per element.
// layer_ops puts both into the layer's attention node.
OpCost gdn_conv_cost(const GdnDims& g, double seqs, double tokens, bool decode, double act_bytes);
OpCost gdn_rule_cost(const GdnDims& g, double seqs, double tokens, bool decode, double act_bytes);

// Mamba-2 sizes of a backbone's mamba2 layers (backbone.hpp's Mamba2Config).
struct Mamba2Dims {
  double heads = 0, head_dim = 0, groups = 0, state = 0, kernel = 0;
  double chunk = 256;         // tokens per chunk of the SSD prefill kernels
  bool conv_bias = true;
  double state_el_bytes = 2;  // recurrent and conv state: the KV cache's precision
  double inner() const { return heads * head_dim; }
  double bc() const { return 2 * groups * state; }
  double conv_channels() const { return inner() + bc(); }
  double in_proj_width() const { return 2 * inner() + bc() + heads; }
  double state_elements() const { return heads * head_dim * state; }
  double conv_state_elements() const { return conv_channels() * (kernel - 1); }
};

// The two kernels of a Mamba-2 layer's token mixing, as costs, for `seqs` independent
// state sequences of `tokens` tokens each (decode: `tokens` is 1):
//  - the causal depthwise conv over x, B, C (2 kernel FLOPs an element, its bias 1, SiLU 4);
//  - the SSD scan: chunked over `chunk` tokens when !decode (from a zero state, the final
//    state written), one recurrent step per token when decode (the state read and written).
// Chunked, per chunk of Q tokens: C B^T once per group (Q^2 N multiply-adds), per head the
// decay mask applied to it (3 FLOPs an element of Q^2: segment-sum difference, exp,
// product), its product with x (Q^2 P), the chunk's state B^T x (Q N P), the output from
// the entering state C S (Q N P), the state handed on (2 N P); per token and head the dt
// and decay steps (softplus(dt + bias), dt A, its cumulative sum, the exps: 10) and the D
// skip (2 P). Decode, per token and head: decay and write S <- a S + dt x B^T (3 N P),
// y = S C (2 N P), the D skip (2 P), the dt steps (10).
// layer_ops puts both into the layer's attention node.
OpCost mamba2_conv_cost(const Mamba2Dims& m, double seqs, double tokens, bool decode, double act_bytes);
OpCost mamba2_ssd_cost(const Mamba2Dims& m, double seqs, double tokens, bool decode, double act_bytes);

// The sizes the ops of a model are made of, derived once per (backbone, method).
struct OpDims {
  double D = 0, H = 0, G = 0;
  double qk_head_dim = 0, v_head_dim = 0, rope_dim = 0;
  double q_weights = 0, q_bias = 0;    // query projection (MLA: with its low-rank path)
  double kv_weights = 0, kv_bias = 0;  // key/value projections (MLA: the latent path)
  double o_params = 0, o_bias = 0;     // output projection (its bias: D or 0)
  double kv_out = 0;                   // K/V elements written per position (= cache entry size)
  // MLA's kv_lora_rank (0 without MLA): a decode reads the cached latents with absorbed
  // weights (scores over latent + rope dims, latent values); its one RoPE key per row
  double mla_latent = 0;
  double mla_q_lora = 0;  // MLA's q_lora_rank (0: queries straight from the input)
  bool qk_norm = false;
  double qk_norm_weights = 0;  // per layer: 2 hd (per head) or (H + G) hd (whole projection)
  double norms_attn = 0, norms_ffn = 0;  // norms of size D around each sublayer
  bool layernorm = false;                // LayerNorm (weight and bias) instead of RMSNorm
  double F = 0;                          // dense FFN width
  bool gelu = false;                     // dense FFN: GELU (up, down) instead of SwiGLU
  bool relu2 = false;                    // dense FFN: squared ReLU (up, down) instead of SwiGLU
  bool mlp_bias = false;                 // dense FFN biases
  double position_rows = 0;              // learned position table rows (0: none)
  double E = 0, top_k = 0, Fe = 0, S = 0, Fs = 0;  // MoE
  bool shared_gate = false;      // a sigmoid gate (D -> 1) scales the shared experts' output (Qwen3-Next)
  double sinks = 0;              // sink logits per layer (H with attention sinks, else 0)
  double router_bias = 0;        // router bias elements (E or 0)
  double expert_bias = 0;        // biases of one routed expert (2 Fe + D, or 0)
  double expert_act_flops = 5;   // the routed experts' activation per element: SiLU(gate)*up 5, clamped SwiGLU 10
  double V = 0;                          // padded vocabulary of the head
  double V_in = 0;                       // padded rows of the input table (backbone input_vocab_size)
  bool tied = false;
  // Bytes per element of the tensor classes the ops move (op_dims: the backbone's dtype).
  double bytes = 2;            // activations
  double weight_el_bytes = 2;  // weights
  double kv_el_bytes = 2;      // KV cache
  // Method parameters (neutral when the method is another).
  double hd_n = 1;  // HD streams (input tables)
  double phd_K = 1;
  bool vwn = false, vwn_dynamic = false, vwn_projected = false, vwn_mtp = false;
  double vwn_m = 1, vwn_n = 1;  // D' = (n/m) D
  // DesignFeatures' other kinds of wide residual (mHC's): copied embedding, summed
  // readout, coefficients from the design's own op (design_mixing_ops).
  bool copied_embedding = false, summed_readout = false, module_mixing = false;
  double loop_iterations = 1;
  bool injection = false;
  bool output_gate = false;  // gated attention: q_proj doubled, sigmoid(gate) * attention before o_proj
  GdnDims gdn;               // the linear-attention layers' sizes (all 0 without)
  Mamba2Dims mamba;          // the mamba2 layers' sizes (all 0 without)
  Method method;             // the design, for the ops its module costs itself (design_mixing_ops)
};
OpDims op_dims(const Backbone& b, const Method& m);

// What of a layer, besides the dims, changes its ops.
struct LayerFeatures {
  bool moe = false;
  bool kv_from_source = false;  // KV mirror: K/V projected from an early layer's input
  MixerKind mixer = MixerKind::attention;  // the token mixer (none: an FFN-only layer)
  bool nope = false;            // no rotary positions (Llama 4's global layers): no RoPE op
  bool ffn = true;              // the layer has its FFN (false: a mixer-only layer)
  bool linear() const { return mixer == MixerKind::gated_deltanet || mixer == MixerKind::mamba2; }
};
LayerFeatures layer_features(const Backbone& b, std::int64_t layer);

// The work one layer run does in a pass, per sequence.
struct LayerWork {
  double seqs = 0;            // sequences in the pass
  double rows_q = 0;          // rows through q, o, the FFN and the residual
  double rows_kv = 0;         // rows whose K/V are projected
  double pairs_exact = 0;     // visible (query, key) pairs
  double pairs_executed = 0;  // pairs inside visible kernel tiles
  double kv_read = 0;         // KV-cache entries read (decode)
  double kv_context = 0;      // decode: the cache's positions per sequence (a windowed layer reads fewer)
  double kv_written = 0;      // KV-cache entries written per layer pass (a prefill of a cache
                              // shared by K loop iterations: written once, 1/K per pass)
  bool reads_cache = false;   // decode: K/V come from the cache, not from activations
  double longest_keys = 0;    // keys the query row that sees the most sees (a kernel's longest unit)
  bool scores_materialised = false;  // unfused attention: every (query, key) score written (pairs_executed = rows_q * rows_kv)
  bool separate_gate_up = false;     // a gated dense FFN's gate and up run as two products of F, not one of 2F
  // Training dropout: on the two sublayer outputs before their residual adds (fused into
  // the add: each writes a mask of a byte an element, kept for the backward), and on
  // unfused attention's probabilities (a kernel reading them and writing the dropped ones
  // and a byte-a-score mask; fused kernels drop inside, not costed).
  bool hidden_dropout = false;
  bool attention_dropout = false;  // only with scores_materialised
  // Linear-attention layers: independent recurrent states per sequence (HD intra-stream:
  // one per stream) and the tokens each runs over (rows_q / states).
  double recurrent_states = 1;
  bool linear_mixer = false;  // the layer's mixer is linear attention (its attention node: conv + delta rule or SSD)
};
// Independent recurrent states per sequence of a linear-attention layer with role `role`
// under `m` (executor/README.md "Linear attention under the designs"): an HD intra-stream
// layer keeps one per stream, each over its stream's tokens; every other layer one, over
// the whole expanded sequence in logical order.
double recurrent_states(const Method& m, const LayerAttentionRole& role);

// The node of a design's own mixing coefficients (OpKind::ghc_dynamic, both of a layer's
// hyper-connections) over `rows` rows, from its module (designs::mixing_ops), where the
// design's features say module_mixing; nothing for a design without one.
void design_mixing_ops(const Method& m, const OpDims& s, double rows, OpNodes& out);

// The nodes of one layer with features `f` doing `w`; attention FLOPs from the executed
// pairs when `count_executed`, else from the exact ones. `tensors` (when given) receives
// every tensor each node reads and writes.
void layer_ops(const OpDims& s, const LayerFeatures& f, const LayerWork& w, bool count_executed, OpNodes& out,
               TensorUses* tensors = nullptr);

// The tensors the nodes of that layer run read and write, appended to `out` (what
// layer_ops records when asked).
void layer_tensors(const OpDims& s, const LayerFeatures& f, const LayerWork& w, TensorUses& out);

// What one sequence keeps of a layer between steps, as the layer's nodes read and write
// it: `entries` KV-cache entries [entries, kv_out] (attention), or the recurrent and conv
// states of `states` independent states (a linear mixer), at the cache's element bytes.
struct LayerCache {
  TensorUse kv, state, conv;
  double bytes() const { return kv.bytes() + state.bytes() + conv.bytes(); }
};
inline LayerCache layer_cache(const OpDims& s, MixerKind mixer, double entries, double states) {
  const auto slot = [](TensorKind t, double rows, double width, double el) {
    return TensorUse{OpKind::attention, t, true, rows, width, el};
  };
  LayerCache c;
  switch (mixer) {
    case MixerKind::attention: c.kv = slot(TensorKind::kv_cache, entries, s.kv_out, s.kv_el_bytes); break;
    case MixerKind::gated_deltanet:
      c.state = slot(TensorKind::linear_state, states, s.gdn.state_elements(), s.gdn.state_el_bytes);
      c.conv = slot(TensorKind::conv_state, states, s.gdn.conv_state_elements(), s.gdn.state_el_bytes);
      break;
    case MixerKind::mamba2:
      c.state = slot(TensorKind::linear_state, states, s.mamba.state_elements(), s.mamba.state_el_bytes);
      c.conv = slot(TensorKind::conv_state, states, s.mamba.conv_state_elements(), s.mamba.state_el_bytes);
      break;
    case MixerKind::none: break;
  }
  return c;
}

// Work outside the layers, per sequence.
struct OutsideWork {
  double seqs = 0;
  double embed_rows = 0;      // positions looked up (HD: one row per stream from its table)
  double logit_rows = 0;      // rows through the final norm and the head (loss / sampling rows)
  double recurrent_rows = 0;  // looped: rows through the injection adapter per iteration
  double mtp_rows = 0;        // VWN multi-token prediction rows: training's loss rows, else 0
};
void outside_ops(const OpDims& s, const OutsideWork& w, OpNodes& out, TensorUses* tensors = nullptr);
void outside_tensors(const OpDims& s, const OutsideWork& w, TensorUses& out);

// The program of one pass as a list: each layer run in execution order (its layer, loop
// iteration and the KV cache slot its attention reads and appends to) with its nodes,
// and the nodes outside the layers.
struct RunOps {
  LayerRun run;
  OpNodes ops{};
  TensorUses tensors;  // what its nodes read and write
};
struct PassProgram {
  std::vector<RunOps> runs;
  OpNodes outside{};
  TensorUses outside_tensors;
  OpCost total() const;
  OpCost op_total(OpKind k) const;
};
// `work[i]` is the work of `runs[i]`.
PassProgram pass_program(const Config& c, const OpDims& s, const std::vector<LayerRun>& runs,
                         const std::vector<LayerWork>& work, const OutsideWork& outside, bool count_executed = true);

}  // namespace hdlab::model
