#pragma once
// The Transformer backbone every design starts from (methods.md section 0): decoder-only,
// pre-norm, grouped-query attention, dense or MoE FFN. Llama-style by default (RMSNorm,
// SwiGLU, RoPE, no biases); GPT-style blocks (LayerNorm with bias, GELU MLP, biases on
// every projection, learned absolute or ALiBi positions) are the other settings.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/model/rope.hpp"

namespace hdlab::model {

enum class DType { bf16, fp16, fp32, fp8 };
int dtype_bytes(DType dtype);
const char* to_string(DType dtype);

// Per-layer attention of the backbone: full causal, causal over the last `window`
// positions (a query at t sees keys t-window < t' <= t), or chunked local attention
// (Llama 4: positions fall in chunks of `chunk`; a query at t sees keys t' <= t of its own
// chunk, floor(t'/chunk) == floor(t/chunk)).
enum class AttentionKind { full, sliding, chunked };
const char* to_string(AttentionKind kind);
struct LayerAttention {
  AttentionKind kind = AttentionKind::full;
  std::int64_t window = 0;  // positions; only meaningful for sliding
  std::int64_t chunk = 0;   // positions; only meaningful for chunked
  bool nope = false;        // no rotary positions in this layer (Llama 4's global layers)
  bool operator==(const LayerAttention&) const = default;
};

// Normalisation of every per-layer and final norm: RMSNorm (a weight of D) or LayerNorm
// (a weight and a bias of D, GPT). QK-norm stays RMSNorm.
enum class NormKind { rmsnorm, layernorm };
const char* to_string(NormKind kind);

// The dense FFN: SwiGLU (gate and up D -> 2F, SiLU(gate) * up, down F -> D), GELU (up
// D -> F, GELU, down F -> D; GPT's 4h MLP) or squared ReLU (up D -> F, relu(x)^2, down
// F -> D; Nemotron-H's non-gated MLP). Routed and shared experts are SwiGLU.
enum class MlpKind { swiglu, gelu, relu2 };
const char* to_string(MlpKind kind);

// Positions: rotary on q and k (RoPE), a learned absolute table of max_context rows added
// to the input embedding (GPT), a per-head linear bias on the scores (ALiBi: no weights,
// added inside the attention kernel), or none.
enum class PositionKind { rope, learned, alibi, none };
const char* to_string(PositionKind kind);

enum class RouterKind { softmax, sigmoid };
const char* to_string(RouterKind kind);

// ---- Token mixers and sublayers (backbone_mixers.cpp) ----------------------------------
// Each layer mixes tokens with attention (the GQA/MLA path above), with a linear-attention
// layer that carries a fixed-size recurrent state instead of a KV cache (Gated DeltaNet as
// in Qwen3-Next and Qwen3.5; Mamba-2 as in Nemotron-H), or not at all (`none`: an FFN-only
// layer, Nemotron-H's "-" blocks). Likewise each layer's FFN is dense, MoE or absent (a
// mixer-only layer, Nemotron-H's "M" and "*" blocks).
enum class MixerKind { attention, gated_deltanet, mamba2, none };
const char* to_string(MixerKind kind);  // "attention", "linear_attention", "mamba2", "none"
enum class FfnKind { dense, moe, none };
const char* to_string(FfnKind kind);

// Gated DeltaNet: per token, q and k of num_key_heads x key_head_dim, v and the output gate
// z of num_value_heads x value_head_dim, and per value head a decay a and a write strength b.
// q, k, v pass a causal depthwise conv of conv_kernel taps (SiLU). Each value head keeps a
// state S of key_head_dim x value_head_dim (its q/k head is shared by
// num_value_heads / num_key_heads value heads): S <- exp(g) S + b k (v - exp(g) S^T k)^T,
// out = S^T q, then an RMSNorm of value_head_dim gated by SiLU(z), then out_proj.
struct GatedDeltaNetConfig {
  std::int64_t num_key_heads = 0;    // h_k
  std::int64_t num_value_heads = 0;  // h_v (a multiple of h_k)
  std::int64_t key_head_dim = 0;     // d_k
  std::int64_t value_head_dim = 0;   // d_v
  std::int64_t conv_kernel = 0;      // taps of the causal depthwise conv
  bool operator==(const GatedDeltaNetConfig&) const = default;

  std::int64_t qk_width() const { return num_key_heads * key_head_dim; }    // q (and k) per token
  std::int64_t v_width() const { return num_value_heads * value_head_dim; }  // v (and z, and the output)
  std::int64_t conv_channels() const { return 2 * qk_width() + v_width(); }  // q, k, v
  // Parameters of one layer's mixer: in_proj_qkvz D x (2 qk + 2 v), in_proj_ba D x 2 h_v,
  // conv1d (conv_channels x conv_kernel, no bias), A_log and dt_bias (h_v each), the gated
  // RMSNorm's weight (d_v, shared by the heads), out_proj v x D.
  std::int64_t params(std::int64_t hidden) const;
  // Recurrent state per sequence per layer, in elements: h_v d_k d_v, and the conv state
  // (the last conv_kernel - 1 inputs of each conv channel).
  std::int64_t state_elements() const { return num_value_heads * key_head_dim * value_head_dim; }
  std::int64_t conv_state_elements() const { return conv_channels() * (conv_kernel - 1); }
};

// Mamba-2 (the SSD layer, as in Nemotron-H): in_proj D -> z, x (num_heads x head_dim each,
// the "inner" width I), B and C (n_groups x state_size each) and dt (num_heads); a causal
// depthwise conv of conv_kernel taps (with a bias when conv_bias) and SiLU over x, B, C;
// per head h a scalar decay a_t = exp(dt_t A_h), dt_t = softplus(dt_t + dt_bias_h), and a
// state S of head_dim x state_size (its B, C group shared by num_heads / n_groups heads):
// S <- a_t S + dt_t x_t B_t^T, y_t = S C_t + D_h x_t; then an RMSNorm over groups of
// I / n_groups gated by SiLU(z), and out_proj I -> D. Prefill runs the chunked (SSD) form
// in chunks of chunk_size tokens.
struct Mamba2Config {
  std::int64_t num_heads = 0;   // H_m (mamba_num_heads)
  std::int64_t head_dim = 0;    // P (mamba_head_dim)
  std::int64_t n_groups = 0;    // G_m: B/C groups (num_heads a multiple of it)
  std::int64_t state_size = 0;  // N (ssm_state_size)
  std::int64_t conv_kernel = 0;
  std::int64_t chunk_size = 0;  // tokens per chunk of the SSD prefill kernels
  bool conv_bias = true;
  bool operator==(const Mamba2Config&) const = default;

  std::int64_t inner() const { return num_heads * head_dim; }                   // I: x, z, y
  std::int64_t bc_width() const { return 2 * n_groups * state_size; }           // B and C
  std::int64_t conv_channels() const { return inner() + bc_width(); }           // x, B, C
  std::int64_t in_proj_width() const { return 2 * inner() + bc_width() + num_heads; }  // z, xBC, dt
  // in_proj D x in_proj_width, conv1d (conv_channels x conv_kernel, + conv_channels
  // biases), A_log, dt_bias and D (num_heads each), the gated norm's weight (I), out_proj I x D.
  std::int64_t params(std::int64_t hidden) const;
  std::int64_t state_elements() const { return num_heads * head_dim * state_size; }
  std::int64_t conv_state_elements() const { return conv_channels() * (conv_kernel - 1); }
};

struct MoeConfig {
  std::int64_t num_experts = 0;                 // routed experts E
  std::int64_t top_k = 0;                       // routed experts active per token
  std::int64_t expert_intermediate = 0;         // F_e, SwiGLU width of one routed expert
  std::int64_t num_shared_experts = 0;          // always-active experts
  std::int64_t shared_expert_intermediate = 0;  // F of one shared expert
  std::int64_t first_dense_layers = 0;          // leading layers with the dense FFN instead
  RouterKind router = RouterKind::softmax;
  // A sigmoid gate (D -> 1) scaling the shared experts' output per token (Qwen2-MoE,
  // Qwen3-Next): D parameters per MoE layer.
  bool shared_expert_gate = false;
  // Layers from first_dense_layers on are MoE when (l + 1) % layer_step == 0, dense (F =
  // intermediate) otherwise: Llama 4's interleave_moe_layer_step. 1: every one.
  std::int64_t layer_step = 1;
  bool router_bias = false;  // a bias of E on the router logits (gpt-oss)
  bool expert_bias = false;  // biases on every routed expert's gate/up (2 F_e) and down (D) (gpt-oss)
  // gpt-oss's clamped SwiGLU in the routed experts: gate clamped above at `limit`, up to
  // [-limit, limit], out = (up + 1) * gate * sigmoid(alpha * gate). 0: plain SwiGLU.
  double swiglu_limit = 0;
  double swiglu_alpha = 0;
  bool operator==(const MoeConfig&) const = default;
};

// Multi-head latent attention (DeepSeek-V3). Parameters are counted exactly; costs
// approximate it (see attention_shape()).
struct MlaConfig {
  std::int64_t q_lora_rank = 0;  // 0: queries projected directly from D
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  bool operator==(const MlaConfig&) const = default;
};

struct Backbone {
  std::string name;
  std::string source;  // where the numbers come from
  std::int64_t num_layers = 0;
  std::int64_t hidden = 0;        // D
  std::int64_t num_heads = 0;     // H, query heads
  std::int64_t num_kv_heads = 0;  // G, key/value heads (H % G == 0)
  std::int64_t head_dim = 0;      // hd (default D / H)
  bool qk_norm = false;
  // QK-norm's scope: one RMSNorm of head_dim shared by every head (Qwen3, Gemma 3), or one
  // over the whole projection, H*hd on q and G*hd on k (OLMo 2).
  bool qk_norm_whole_projection = false;
  // Rotary dimensions per head (partial RoPE: GLM-4.5, Phi-4-mini); 0: all of head_dim.
  std::int64_t rotary_dim = 0;
  bool attention_bias = false;          // biases on the q, k, v projections (Qwen2)
  // A learned logit per query head added to every softmax's denominator (gpt-oss): the
  // weights sum to less than 1, the rest goes to a "sink" with no value. H per layer.
  bool attention_sinks = false;
  bool output_bias = false;             // a bias on the attention output projection (D)
  bool mlp_bias = false;                // biases on the dense FFN's matrices (GELU: F + D; SwiGLU: 2F + D)
  NormKind norm = NormKind::rmsnorm;
  MlpKind mlp = MlpKind::swiglu;
  PositionKind positions = PositionKind::rope;
  std::int64_t intermediate = 0;        // dense FFN width F (0 when every layer is MoE)
  std::optional<MoeConfig> moe;
  std::optional<MlaConfig> mla;
  std::int64_t vocab_size = 0;          // the output head's rows (and the input table's, unless below)
  // Rows of the input table when they differ from the head's (a model reading a very large
  // input vocabulary, e.g. hashed n-grams, through an ordinary head); 0: vocab_size.
  std::int64_t input_vocab_size = 0;
  std::int64_t vocab_pad_multiple = 1;  // both vocabularies padded up to a multiple of this
  bool tie_embeddings = false;
  std::vector<LayerAttention> layers;   // one entry per layer
  std::int64_t norms_per_layer = 2;     // norms of size D per layer (Gemma: 4, pre and post)
  // The per-layer norms sit on the sublayer outputs, x + norm(f(x)) (OLMo 2), instead of
  // their inputs, x + f(norm(x)). Same parameters and FLOPs; different math.
  bool post_sublayer_norms = false;
  std::int64_t kv_mirror_layers = 0;    // M: layer num_layers-1-x takes K/V from layer x's input, x < M
  double rope_theta = 10000.0;
  // RoPE frequency scaling (HF's rope_scaling): rotary frequencies only, no parameters or
  // FLOPs; the executor applies it (rope.hpp rotary_frequencies).
  RopeScaling rope_scaling;
  double norm_eps = 1e-6;
  std::int64_t max_context = 0;         // native context in tokens; 0 = not stated (learned positions: the table's rows)
  DType dtype = DType::bf16;
  // Token mixers (backbone_mixers.cpp). `mixers` has one entry per layer, or is empty when
  // every layer is attention; `gdn` and `mamba` hold the sizes of the gated_deltanet and
  // mamba2 layers. `ffns` has one entry per layer, or is empty when every layer has its FFN
  // (MoE or dense by the moe rules).
  std::vector<MixerKind> mixers;
  std::optional<GatedDeltaNetConfig> gdn;
  std::optional<Mamba2Config> mamba;
  std::vector<FfnKind> ffns;
  // Gated attention output (Qwen3-Next): q_proj is doubled, D -> 2 H hd, its second half a
  // per-element gate: attn_out * sigmoid(gate) before o_proj.
  bool attention_output_gate = false;
  // Facts the profile does not know and assumed instead: field -> what was assumed and why.
  std::map<std::string, std::string> assumptions;

  bool operator==(const Backbone&) const = default;

  std::int64_t padded_vocab() const;        // the head's rows
  std::int64_t padded_input_vocab() const;  // the input table's rows
  // Layer l uses the routed-expert FFN (false: dense, or none): `ffns` when given, else
  // moe's first_dense_layers and layer_step.
  bool is_moe_layer(std::int64_t l) const;
  FfnKind ffn(std::int64_t l) const;
  bool has_ffn(std::int64_t l) const { return ffn(l) != FfnKind::none; }
  bool any_dense_ffn() const;  // some layer runs the dense FFN (intermediate_size is needed)
  // For a KV-mirror layer, the early layer whose input hidden states feed its K/V; else -1.
  std::int64_t mirror_source(std::int64_t l) const;
  bool is_mirrored(std::int64_t l) const { return mirror_source(l) >= 0; }
  std::int64_t num_sliding_layers() const;
  MixerKind mixer(std::int64_t l) const;
  bool has_mixer(std::int64_t l) const { return mixer(l) != MixerKind::none; }
  bool is_attention_layer(std::int64_t l) const { return mixer(l) == MixerKind::attention; }
  // A recurrent-state mixer (Gated DeltaNet or Mamba-2): no KV cache.
  bool is_linear_layer(std::int64_t l) const {
    const MixerKind k = mixer(l);
    return k == MixerKind::gated_deltanet || k == MixerKind::mamba2;
  }
  std::int64_t num_linear_layers() const;
  std::int64_t num_mixer_layers(MixerKind kind) const;
  // Layers with one sublayer (a mixer without FFN or an FFN without mixer).
  std::int64_t num_single_sublayer_layers() const;
  // Per-layer norms of size D around each sublayer (norms_per_layer split between the
  // mixer and the FFN, the mixer taking the odd one), and layer l's count: only its
  // sublayers' norms.
  std::int64_t mixer_norms() const { return (norms_per_layer + 1) / 2; }
  std::int64_t ffn_norms() const { return norms_per_layer - mixer_norms(); }
  std::int64_t layer_norms(std::int64_t l) const {
    return (has_mixer(l) ? mixer_norms() : 0) + (has_ffn(l) ? ffn_norms() : 0);
  }
  std::int64_t num_chunked_layers() const;
  // Learned sink logits per layer: H, or 0 without sinks.
  std::int64_t sink_params() const { return attention_sinks ? num_heads : 0; }
  // Parameters of one routed expert (SwiGLU, with biases when the config sets them).
  std::int64_t expert_params() const;
  // Parameters of one per-layer or final norm: D (RMSNorm) or 2D (LayerNorm).
  std::int64_t norm_params() const { return norm == NormKind::layernorm ? 2 * hidden : hidden; }
  // Parameters of the dense FFN, biases included.
  std::int64_t dense_ffn_params() const;
  // Rows of the learned position table (0 unless positions are learned).
  std::int64_t position_rows() const { return positions == PositionKind::learned ? max_context : 0; }
  // Rotated dimensions per head (MLA: qk_rope_head_dim is separate; this is the GQA path).
  std::int64_t rope_dims() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  // QK-norm weights per layer: 2 hd (per head) or (H + G) hd (whole projection); 0 without.
  std::int64_t qk_norm_params() const;
};

// Attention projection shapes per token, standard GQA or approximated MLA.
struct AttentionShape {
  std::int64_t qk_head_dim = 0;         // dot-product width per head
  std::int64_t v_head_dim = 0;          // value width per head
  std::int64_t kv_cache_per_token = 0;  // elements kept per token per layer (K and V together)
  std::int64_t projection_params = 0;   // q, k, v, o weights (+ biases) per layer
};
AttentionShape attention_shape(const Backbone& b);

}  // namespace hdlab::model
