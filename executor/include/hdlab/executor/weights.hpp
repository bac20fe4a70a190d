#pragma once
// The weights of a design, by name: what tensors a config has, where their values come
// from (seeded random, a safetensors file, a growth transform of either), and their
// device copies in the layout the runner's ops want.
//
// Tensor names (HF-like for the backbone; "hdlab." or "hdlab_" for design extras).
// Matrices are stored [out, in] (y = x W^T) unless marked [in, out].
//   model.embed_tokens.weight                       [V, D]  (VWN full embedding: [V, D'])
//   model.layers.{l}.input_layernorm.weight         [D]     pre-attention RMSNorm
//   model.layers.{l}.self_attn.q_proj.weight        [H*hd, D]   (+ .bias [H*hd] with attention_bias;
//     attention_output_gate: [2*H*hd, D], each head's rows [query hd | gate hd] as HF's Qwen3-Next)
//   model.layers.{l}.self_attn.k_proj.weight        [G*hd, D]   (+ .bias)
//   model.layers.{l}.self_attn.v_proj.weight        [G*hd, D]   (+ .bias)
//   model.layers.{l}.self_attn.q_norm.weight        [hd]    (qk_norm; k_norm likewise)
//   model.layers.{l}.self_attn.sinks                [H]     (attention_sinks: a logit per query head)
//   model.layers.{l}.self_attn.o_proj.weight        [D, H*hd]   (+ .bias [D] with output_bias)
//   model.layers.{l}.linear_attn.*                  a Gated DeltaNet layer instead of self_attn (HF's
//     Qwen3-Next names and layouts): in_proj_qkvz.weight [2hk*dk + 2hv*dv, D] grouped per key
//     head [q | k | v | z], in_proj_ba.weight [2hv, D] per key head [b | a], conv1d.weight
//     [2hk*dk + hv*dv, 1, K], dt_bias [hv], A_log [hv], norm.weight [dv], out_proj.weight [D, hv*dv]
//   model.layers.{l}.mixer.*                        a Mamba-2 layer (Nemotron-H's names): in_proj.weight
//     [2I + 2GN + H, D] rows [z | x | B | C | dt], conv1d.weight [I + 2GN, 1, K] (+ .bias [I + 2GN]),
//     dt_bias, A_log, D [H], norm.weight [I] (the grouped gated norm), out_proj.weight [D, I]
//   model.layers.{l}.post_attention_layernorm.weight [D]    norms_per_layer 2: the pre-FFN norm (Qwen/Llama)
//     norms_per_layer 4 (Gemma): post_attention_layernorm is the post-attention norm, and
//     pre_feedforward_layernorm / post_feedforward_layernorm wrap the FFN
//   model.layers.{l}.mlp.{gate,up,down}_proj.weight [F, D], [F, D], [D, F]   dense SwiGLU
//     (mlp relu2: up_proj and down_proj only)
//   model.layers.{l}.norm.weight, model.layers.{l}.mixer.*   a layer of one sublayer (Nemotron-H's
//     blocks: layer_types or ffn_types none): its one pre-norm, and its mixer's or its FFN's
//     tensors under mixer. (q_proj..., in_proj..., up_proj / down_proj)
//   model.layers.{l}.mlp.gate.weight                [E, D]  MoE router (+ mlp.gate.bias [E] with router_bias)
//   model.layers.{l}.mlp.experts.{e}.{gate,up,down}_proj.weight          routed expert e
//     (+ .bias [F], [F], [D] with expert_bias: gpt-oss's, stored per expert, not packed)
//   model.layers.{l}.mlp.shared_experts.{s}.{gate,up,down}_proj.weight   shared expert s
//   model.layers.{l}.mlp.shared_expert_gate.weight  [1, D]  sigmoid gate of the shared experts (Qwen3-Next)
//   model.layers.{l}.hdlab_<group>.*                a design module's own tensors of the layer
//     (design_tensor_prefix: VWN's hyper-connections under hdlab_ghc, mHC's under hdlab_mhc)
//   hdlab.<design>.*                                a design module's model-wide tensors, after the input
//     table (HD's tables, VWN's projection) or after the last layer (VWN's readout and MTP, the looped
//     injection adapter); each module lists its names: executor/designs/{hd,vwn,looped}_weights.hpp, mhc_op.hpp
//   model.norm.weight                               [D]
//   lm_head.weight                                  [V, D]  (absent when tied: model.embed_tokens is the head)
// V is the padded vocabulary; D' = D n/m.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/executor/backend.hpp"
#include "hdlab/executor/safetensors.hpp"
#include "hdlab/model/design.hpp"

namespace hdlab::executor {

// How a tensor is initialised by RandomWeights.
enum class WeightInit {
  normal,        // N(0, std^2)
  ones,          // norm weights, GHC scales
  zeros,         // GroupNorm bias
  ghc_static_a,  // VWN static init A = [[I_m I_m 0], [0 0 I_{n-m}]]
  ghc_static_b,  // VWN static init B[i, j] = 1 iff i = j mod m
  ghc_dynamic,   // VWN dynamic weights: N(0, RandomInit::ghc_dynamic_std^2), 0 as published
  injection,     // looped adapter [W_h | W_e] = [I/2 | I/2] + N(0, RandomInit::injection_noise_std^2)
  log_uniform_16,  // log of U(0, 16]: Gated DeltaNet's A_log (transformers' Qwen3-Next init)
  mamba2_a_log,    // log(h + 1) for head h: Mamba-2's A_log (transformers' Nemotron-H init)
  mamba2_dt_bias,  // softplus^-1 of a step log-uniform in [0.001, 0.1] (Nemotron-H's time_step_min/max)
};

struct WeightSpec {
  std::string name;
  Shape shape;
  WeightInit init = WeightInit::normal;
  double std = 0;         // normal init
  bool keep_f32 = false;  // norm weights and GHC coefficients stay f32 on every backend
};

// Where layer l's tensors sit. A layer of two sublayers under HF's Llama/Qwen names:
// input_layernorm, self_attn. (Gated DeltaNet: linear_attn.), post_attention_layernorm,
// mlp. (norms_per_layer 4: post_attention_layernorm is the mixer's post-norm and
// pre_/post_feedforward_layernorm wrap the FFN). A layer of one sublayer as Nemotron-H
// names its blocks: norm.weight and mixer. (the attention's q_proj..., the MLP's up_proj
// and down_proj). A Mamba-2 mixer is mixer. in either (NemotronHMamba2Mixer's names).
struct LayerNames {
  std::string prefix;                        // "model.layers.{l}."
  std::string mixer_norm, mixer_post_norm;   // weight names ("" where the layer has none)
  std::string ffn_norm, ffn_post_norm;
  std::string mixer, ffn;                    // prefixes of the sublayers' tensors
};
LayerNames layer_names(const model::Backbone& b, std::int64_t l);
// Where a design module's own tensors of a layer sit: design_tensor_prefix
// (designs/registry.hpp).

// Every tensor of a design on `backbone` (the effective, grown backbone for a Config), in
// a fixed order. Throws model::ConfigError for backbones the runner does not execute
// (MLA attention, norms_per_layer other than 2 or 4 (2 with single-sublayer layers), odd
// rotated dims, LayerNorm, GELU, learned or ALiBi positions, whole-projection QK-norm,
// post-sublayer norms, FFN biases; see check_block in weights.cpp).
std::vector<WeightSpec> weight_specs(const model::Backbone& backbone, const model::Method& method);
std::vector<WeightSpec> weight_specs(const model::Config& c);
// Bytes the specs take on a backend storing matrices as `type` (keep_f32 ones as f32).
std::size_t weight_bytes(const std::vector<WeightSpec>& specs, ScalarType type);
// Bytes upload_weights allocates for `c`: the specs' bytes plus what the design's module
// spreads out at placement (design_extra_device_bytes: VWN's scale pairs over 2m+n columns).
std::size_t device_weight_bytes(const model::Config& c, ScalarType type);

// Where values come from: one tensor at a time, so nothing holds a whole model on the host.
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Row-major values of `spec` (element_count(spec.shape) floats).
  virtual std::vector<float> values(const WeightSpec& spec) = 0;
};

struct RandomInit {
  double ghc_dynamic_std = 0.0;        // VWN dynamic GHC weights (published init: 0)
  double injection_noise_std = 0.02;   // looped adapter perturbation of [I/2 | I/2]
};

// Deterministic given (seed, tensor name, shape, init): a tensor's values do not depend
// on which other tensors exist, so a baseline and its HD n=1, VWN m=n or looped K=1
// twins share every common tensor. Init scales keep activations O(1) through depth:
// embeddings N(0, 1), input projections N(0, 1/fan_in), residual-branch outputs
// (o_proj, down_proj) N(0, 1/(fan_in * 2 * layers)).
class RandomWeights : public WeightSource {
 public:
  explicit RandomWeights(std::uint64_t seed, RandomInit init = {}) : seed_(seed), init_(init) {}
  std::vector<float> values(const WeightSpec& spec) override;

 private:
  std::uint64_t seed_;
  RandomInit init_;
};

// N(0, std^2) floats, a fixed function of (seed, count).
std::vector<float> normal_floats(std::size_t count, std::uint64_t seed, double std);
// A seed for one tensor: mixes the run's seed with the tensor's name.
std::uint64_t tensor_seed(std::uint64_t seed, const std::string& name);

// The tensors a weights file for `c` holds: weight_specs(c), or with growth those of the
// base backbone under the same method (the file is the base model; GrownWeights grows it).
std::vector<WeightSpec> stored_weight_specs(const model::Config& c);

// Values read from a safetensors file that must hold exactly the tensors `expected`
// (stored_weight_specs of the config it is loaded for). Checked at construction, besides
// SafetensorsReader's header checks: a tensor the model does not have (a file written
// for another layer count, design or model), a missing tensor, a wrong shape or dtype,
// each a SafetensorsError naming the file and the tensor. values() refuses NaN and
// infinite weights (read_f32).
class SafetensorsWeights : public WeightSource {
 public:
  SafetensorsWeights(const std::string& path, const std::vector<WeightSpec>& expected);
  std::vector<float> values(const WeightSpec& spec) override { return reader_.read_f32(spec.name, spec.shape); }
  const SafetensorsReader& reader() const { return reader_; }

 private:
  SafetensorsReader reader_;
};

// Growth on weights (methods.md section 5): the tensors of the grown model made from the
// base model's. Depth: grown layer l copies base layer model::grown_layer_sources()[l]
// (interpose or stack). Width by w: routed expert e + c*E copies base expert e (c < w),
// router row e + c*E copies row e; copies c >= 1 get N(0, (alpha * std(original))^2)
// noise, std over the whole original tensor. Routing stays function preserving at
// alpha = 0: the w copies of an expert have equal logits, so top-(w k) picks all copies
// of the k experts the base picks; softmax gives each copy 1/w of the base weight and
// normalisation divides by w times the base sum, so either way the copies' weights sum
// to the base weight. Only a sigmoid router without normalisation keeps each copy at the
// full base weight: there every routed expert's down_proj is divided by w.
class GrownWeights : public WeightSource {
 public:
  // `base` yields tensors of the base backbone (config.base) under the same method.
  GrownWeights(const model::Config& config, WeightSource& base, std::uint64_t noise_seed, bool normalize_topk);
  std::vector<float> values(const WeightSpec& spec) override;

 private:
  model::Config config_;
  WeightSource& base_;
  std::uint64_t noise_seed_;
  bool normalize_topk_;
  std::vector<std::int64_t> layer_sources_;
  std::vector<WeightSpec> base_specs_;
  const WeightSpec& base_spec(const std::string& name) const;
};

// ---- device copies in the runner's layout -------------------------------------------
struct FfnWeights {
  Tensor gate_up;  // [2F, D]: gate rows then up rows (swiglu reads [gate | up]); relu2: up_proj [F, D]
  Tensor down;     // [D, F]
  Tensor gate_up_bias, down_bias;  // [1, 2F] ([1, F] relu2), [1, D]: expert biases (gpt-oss), mlp_bias
};
struct MoeWeights {
  Tensor router;       // [E, D]
  Tensor router_bias;  // [1, E] (gpt-oss)
  std::vector<FfnWeights> experts;
  std::vector<FfnWeights> shared;
  Tensor shared_gate;  // [1, D]: sigmoid(x w^T) scales the shared experts' output (Qwen3-Next)
};
// A Gated DeltaNet mixer, reordered from HF's per-key-head grouping into contiguous blocks:
// qkv's rows are q of every key head, then k, then v of every value head (value head
// kh r + i of key head kh), the conv's channel order; ba's rows are b then a per value head.
struct LinearAttentionWeights {
  Tensor qkv;      // [2 hk dk + hv dv, D]
  Tensor z;        // [hv dv, D]: the output gate
  Tensor ba;       // [2 hv, D]
  Tensor conv;     // [2 hk dk + hv dv, K]
  Tensor a_log, dt_bias;  // [hv] f32
  Tensor norm;     // [dv] f32, the gated RMSNorm's weight
  Tensor out;      // [D, hv dv]
};
// A Mamba-2 mixer, its in_proj split by the rows' roles so each is one GEMM.
struct Mamba2Weights {
  Tensor z;        // [I, D]: the norm's gate
  Tensor xbc;      // [I + 2 G N, D]: the conv's input x | B | C
  Tensor dt;       // [H, D]: the raw step
  Tensor conv;     // [I + 2 G N, K]
  Tensor conv_bias;  // [I + 2 G N] f32 (conv_bias), or undefined
  Tensor a_log, dt_bias, d;  // [H] f32
  Tensor norm;     // [I] f32, the grouped gated norm's weight
  Tensor out;      // [D, I]
};
struct GhcWeights {  // one generalized hyper-connection (VWN)
  Tensor static_a;   // [n, m+n] f32, the static alpha, also [1, n, m+n]
  Tensor static_b;   // [m, n] f32
  Tensor norm;       // [s] f32 (dynamic)
  Tensor w_dyn;      // [s, 2m+n] (dynamic)
  Tensor scale;      // [2m+n] f32: S_a on the m+n alpha columns, S_b on the m beta columns
};
// A layer's tensors of a design module's own, by their name after the layer's design
// prefix (design_tensor_prefix), as the module named them.
using DesignTensors = std::map<std::string, Tensor>;
// Multi-head latent attention (DeepSeek), regrouped at upload for the runner's ops
// (runner_mla.cpp): each query head [rope | nope] (RoPE turns a head's first dims), the
// latent and the shared RoPE key as two products, each kv_b head [v | k nope] (values are
// the first v of a row the attention kernel reads). The rope rows of q and kv_a_rope are
// de-interleaved (rows 0, 2, 4, ... then 1, 3, 5, ...): DeepSeek's pairs (2i, 2i+1) become
// the runner's rotate-half pairs (i, i + rope/2).
struct MlaWeights {
  Tensor q;                // [H*qk, D], or q_b [H*qk, r_q] after q_a with q_lora
  Tensor q_a, q_a_norm;    // [r_q, D], [r_q] f32 with q_lora
  Tensor kv_a_latent;      // [r_kv, D]
  Tensor kv_a_rope;        // [rope, D]
  Tensor kv_a_norm;        // [r_kv] f32
  Tensor kv_b;             // [H*(v + nope), r_kv]
};
struct LayerWeights {
  Tensor attn_norm, attn_post_norm;  // [D] f32; post only with norms_per_layer 4; none without a mixer
  Tensor q, k, v, o;                 // [H*hd, D], [G*hd, D], [G*hd, D], [D, H*hd]
  Tensor q_bias, k_bias, v_bias;     // [1, out] with attention_bias
  Tensor q_gate, q_gate_bias;        // [H*hd, D], [1, H*hd]: gated attention output (Qwen3-Next)
  Tensor o_bias;                     // [1, D] with output_bias
  LinearAttentionWeights linear;     // Gated DeltaNet layers (instead of q, k, v, o)
  Mamba2Weights mamba;               // Mamba-2 layers
  std::optional<MlaWeights> mla;     // multi-head latent attention (instead of q, k, v; o as usual)
  Tensor q_norm, k_norm;             // [hd] f32 with qk_norm
  Tensor sinks;                      // [H] f32 with attention_sinks
  Tensor ffn_norm, ffn_post_norm;    // [D] f32; none without an FFN
  FfnWeights dense;                  // dense layers
  std::optional<MoeWeights> moe;     // MoE layers
  GhcWeights ghc_attn, ghc_ffn;      // VWN
  DesignTensors design;              // a design module's own
};
struct ModelWeights {
  std::vector<Tensor> embed;  // one table; HD: n tables (stream k); VWN full: [V, D']
  Tensor embed_proj;          // VWN projected embedding [D', D]
  Tensor group_norm_weight, group_norm_bias;  // VWN [D'] f32
  Tensor reduce;              // VWN [D, D']
  Tensor mtp_h, mtp_e;        // VWN MTP mixing halves [s, s] each
  Tensor inject_h, inject_e;  // looped injection halves [D, D] each
  std::vector<LayerWeights> layers;
  Tensor final_norm;          // [D] f32
  Tensor lm_head;             // [V, D]; the input table when tied
  std::size_t bytes = 0;      // device bytes of all of the above
};

// Uploads every tensor of `config` from `source`, one at a time, stored as `type` (norm
// weights and GHC coefficients as f32). Refuses before allocating when the weights would
// not fit (Backend::require_fits, OutOfMemoryError with needed and available bytes).
ModelWeights upload_weights(Backend& backend, const model::Config& config, WeightSource& source, ScalarType type);

// Writes the tensors of `config`, their values from `source`, as one safetensors file.
void save_weights(const std::string& path, const model::Config& config, WeightSource& source, StDtype dtype);

}  // namespace hdlab::executor
