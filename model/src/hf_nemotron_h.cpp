// Nemotron-H (model_type nemotron_h, NemotronHForCausalLM; Nemotron-H-4B/8B/47B/56B and
// NVIDIA-Nemotron-Nano-9B/12B-v2). Each block is one sublayer behind one RMSNorm, named by a
// character of hybrid_override_pattern (or a word of layers_block_type):
//   M  mamba:     in_proj [2 I + 2 G N + H, D], conv1d [I + 2 G N, 1, conv_kernel] (+ bias
//                 when use_conv_bias), dt_bias, A_log, D [H], norm (gated RMSNorm) [I],
//                 out_proj [D, I]; I = mamba_num_heads x mamba_head_dim
//   *  attention: q/k/v/o projections (biases when attention_bias), no rotary positions
//   -  mlp:       up_proj [F, D], down_proj [D, F] (biases when mlp_bias), relu(x)^2
//   E  moe:       routed relu2 experts with a shared expert (Nemotron 3): refused
// plus the embedding, the final norm and an untied head.
#include "hf_internal.hpp"

namespace hdlab::model::hf {

namespace {

// One layer's block: its mixer and FFN.
struct Block {
  MixerKind mixer;
  FfnKind ffn;
};

// `where`: which character or entry, for the message.
Block block_of(char c, const std::string& word, const std::string& ptr, const std::string& where) {
  if (c == 'M' || word == "mamba") return {MixerKind::mamba2, FfnKind::none};
  if (c == '*' || word == "attention") return {MixerKind::attention, FfnKind::none};
  if (c == '-' || word == "mlp") return {MixerKind::none, FfnKind::dense};
  if (c == 'E' || word == "moe")
    fail(ptr, where + " is a MoE block: Nemotron-H's routed experts are non-gated relu2 MLPs, which hdlab's SwiGLU "
                      "experts do not model; unsupported");
  fail(ptr, where + " is an unknown block " + (c ? "'" + std::string(1, c) + "'" : "\"" + word + "\"") +
                " (M: mamba, *: attention, -: mlp, E: moe)");
}

std::vector<Block> read_blocks(HfReader& r, std::int64_t L) {
  std::vector<Block> blocks;
  if (auto pattern = r.string_opt("hybrid_override_pattern")) {
    const std::string ptr = r.at("hybrid_override_pattern");
    if (static_cast<std::int64_t>(pattern->size()) != L)
      fail(ptr, "has " + num(static_cast<std::int64_t>(pattern->size())) + " characters but num_hidden_layers is " +
                    num(L) + " (one character per layer)");
    for (std::size_t i = 0; i < pattern->size(); ++i)
      blocks.push_back(block_of((*pattern)[i], "", ptr, "character " + num(static_cast<std::int64_t>(i))));
    return blocks;
  }
  const Json* list = r.present("layers_block_type");
  if (!list) fail(r.at("hybrid_override_pattern"), "is required (or layers_block_type): it names each layer's block");
  const std::string ptr = r.at("layers_block_type");
  if (!list->is_array() || static_cast<std::int64_t>(list->size()) != L)
    fail(ptr, "must be a list of num_hidden_layers (" + num(L) + ") block names");
  for (std::size_t i = 0; i < list->size(); ++i)
    blocks.push_back(block_of(0, read_string((*list)[i], pointer_join(ptr, i)), pointer_join(ptr, i), "the entry"));
  return blocks;
}

// A size the configs spell two ways (NemotronHConfig's saved key, and the constructor's
// mamba_* name some files carry); both present must agree.
std::int64_t either(HfReader& r, const char* key, const char* alt, std::int64_t dflt, std::int64_t lo,
                    std::int64_t hi) {
  const Json* a = r.present(key);
  const Json* b = r.present(alt);
  if (a && b && read_integer(*a, r.at(key), lo, hi) != read_integer(*b, r.at(alt), lo, hi))
    fail(r.at(alt), "disagrees with " + std::string(key) + " (" + a->dump() + ")");
  if (b && !a) return read_integer(*b, r.at(alt), lo, hi);
  return r.integer_or(key, dflt, lo, hi, "mamba2");
}

Mamba2Config read_mamba(HfReader& r) {
  Mamba2Config m;
  // The state sizes are sizing keys: no state size, no model.
  m.num_heads = r.required_integer("mamba_num_heads", 1, Limits::max_heads);
  m.head_dim = r.required_integer("mamba_head_dim", 1, Limits::max_head_dim);
  if (!r.present("ssm_state_size") && !r.present("mamba_state_dim"))
    fail(r.at("ssm_state_size"), "is required: a mamba block's state is mamba_num_heads x mamba_head_dim x "
                                 "ssm_state_size per sequence");
  m.state_size = either(r, "ssm_state_size", "mamba_state_dim", 0, 1, Limits::max_head_dim);
  m.n_groups = either(r, "n_groups", "mamba_num_groups", 8, 1, Limits::max_heads);
  m.conv_kernel = either(r, "conv_kernel", "mamba_d_conv", 4, 1, 64);
  m.chunk_size = either(r, "chunk_size", "mamba_chunk_size", 256, 1, Limits::max_window);
  m.conv_bias = r.boolean_or("use_conv_bias", true, "mamba2");
  if (m.num_heads % m.n_groups != 0)
    fail(r.at("n_groups"), num(m.num_heads) + " mamba heads cannot share " + num(m.n_groups) + " groups evenly");
  for (const char* key : {"use_bias", "mamba_proj_bias"})
    if (r.boolean_or(key, false, ""))
      fail(r.at(key), "true is unsupported: biases on the mamba in_proj / out_proj are not modelled");
  if (const Json* e = r.present("expand"))
    r.note("mamba2", "expand " + e->dump() + " is not used: the mamba width is mamba_num_heads x mamba_head_dim = " +
                         num(m.num_heads * m.head_dim) + ", as NemotronH's mixer sizes it");
  return m;
}

}  // namespace

void read_nemotron_h(HfReader& r, Backbone& b) {
  const std::int64_t L = b.num_layers;
  b.attention_bias = b.output_bias = r.boolean_or("attention_bias", false, "");
  b.mlp_bias = r.boolean_or("mlp_bias", false, "");
  const std::string act = r.string_opt("mlp_hidden_act").value_or("relu2");
  if (act != "relu2")
    fail(r.at("mlp_hidden_act"), "\"" + act + "\" is unsupported: Nemotron-H's MLP is modelled with relu2 (squared "
                                               "ReLU, no gate)");
  b.mlp = MlpKind::relu2;
  const std::vector<Block> blocks = read_blocks(r, L);
  b.layers.assign(static_cast<std::size_t>(L), LayerAttention{});  // full causal, no rotary positions
  b.positions = PositionKind::none;
  for (const Block& k : blocks) {
    b.mixers.push_back(k.mixer);
    b.ffns.push_back(k.ffn);
  }
  b.intermediate = b.any_dense_ffn() ? r.required_integer("intermediate_size", 1, Limits::max_intermediate) : 0;
  if (b.num_mixer_layers(MixerKind::mamba2) > 0) b.mamba = read_mamba(r);
  b.norms_per_layer = 2;  // one per sublayer: each block has one, on its only sublayer
  r.note("layer_types", "hybrid_override_pattern: " + num(b.num_mixer_layers(MixerKind::mamba2)) + " mamba, " +
                            num(b.num_mixer_layers(MixerKind::attention)) + " attention and " +
                            num(b.num_mixer_layers(MixerKind::none)) + " MLP blocks, each one sublayer behind "
                            "one RMSNorm");
  r.note("positions", "Nemotron-H's attention layers use no positional encoding (no RoPE); the mamba layers carry "
                      "order");
}

// Nemotron-H's norm epsilon (layer_norm_epsilon; some files also carry rms_norm_eps) and
// native context. No rope_theta: there are no rotary positions to scale.
void read_nemotron_h_positions(HfReader& r, Backbone& b) {
  b.norm_eps = r.present("layer_norm_epsilon") ? r.number_or("layer_norm_epsilon", 1e-5, 0.0, 1.0, "norm_eps")
                                               : r.number_or("rms_norm_eps", r.type().norm_eps, 0.0, 1.0, "norm_eps");
  b.max_context = r.integer_or("max_position_embeddings", r.type().max_position, 0, Limits::max_window, "max_context");
}

}  // namespace hdlab::model::hf
