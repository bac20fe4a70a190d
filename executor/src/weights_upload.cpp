// Device copies of a design's weights in the layout the runner's ops want: gate and up
// fused into one [2F, D] matrix, biases as [1, out] rows (added by a rank-1 GEMM), the
// backbone's regrouped projections (gated q, Gated DeltaNet, Mamba-2, MLA); a design
// module places its own tensors (designs/registry.hpp: place_design_weight).
#include <map>

#include "hdlab/executor/designs/registry.hpp"
#include "hdlab/executor/weights.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::executor {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Columns [first, first + cols) of a row-major [rows, total] matrix.
std::vector<float> columns(const std::vector<float>& m, std::int64_t rows, std::int64_t total, std::int64_t first,
                           std::int64_t cols) {
  std::vector<float> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      out[static_cast<std::size_t>(r * cols + c)] = m[static_cast<std::size_t>(r * total + first + c)];
  return out;
}

// Rows `ids` of a row-major [*, cols] matrix, in that order.
std::vector<float> rows_of(const std::vector<float>& m, std::int64_t cols, const std::vector<std::int64_t>& ids) {
  std::vector<float> out;
  out.reserve(ids.size() * static_cast<std::size_t>(cols));
  for (auto r : ids) out.insert(out.end(), m.begin() + r * cols, m.begin() + (r + 1) * cols);
  return out;
}

// Gated attention: HF's q_proj holds per head [query hd | gate hd]; the rows of one half.
std::vector<std::int64_t> gated_q_rows(std::int64_t heads, std::int64_t hd, bool gate) {
  std::vector<std::int64_t> ids;
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < hd; ++i) ids.push_back(h * 2 * hd + (gate ? hd : 0) + i);
  return ids;
}

// Gated DeltaNet's in_proj_qkvz rows grouped per key head [q dk | k dk | v r dv | z r dv]
// (r = hv / hk): the rows of q (every key head), k, v (value head kh r + i), then z.
std::vector<std::int64_t> qkvz_rows(const model::GatedDeltaNetConfig& g, int part) {
  const std::int64_t hk = g.num_key_heads, dk = g.key_head_dim, rv = g.num_value_heads / hk * g.value_head_dim;
  const std::int64_t group = 2 * dk + 2 * rv;
  const std::int64_t offset[] = {0, dk, 2 * dk, 2 * dk + rv}, width[] = {dk, dk, rv, rv};
  std::vector<std::int64_t> ids;
  for (std::int64_t kh = 0; kh < hk; ++kh)
    for (std::int64_t i = 0; i < width[part]; ++i) ids.push_back(kh * group + offset[part] + i);
  return ids;
}

// in_proj_ba rows grouped per key head [b r | a r]: b of every value head, then a.
std::vector<std::int64_t> ba_rows(const model::GatedDeltaNetConfig& g) {
  const std::int64_t hk = g.num_key_heads, r = g.num_value_heads / hk;
  std::vector<std::int64_t> ids;
  for (int part = 0; part < 2; ++part)
    for (std::int64_t kh = 0; kh < hk; ++kh)
      for (std::int64_t i = 0; i < r; ++i) ids.push_back(kh * 2 * r + part * r + i);
  return ids;
}

class Uploader {
 public:
  Uploader(Backend& b, ScalarType type) : backend_(b), type_(type) {}

  Tensor put(const std::string& name, Shape shape, const std::vector<float>& v, bool keep_f32) {
    Tensor t = backend_.allocate(std::move(shape), keep_f32 ? ScalarType::f32 : type_);
    backend_.upload(t, v);
    bytes_ += t.bytes();
    tensors_[name] = t;
    return t;
  }
  Tensor get(const std::string& name) const {
    const auto it = tensors_.find(name);
    return it == tensors_.end() ? Tensor() : it->second;
  }
  // Every tensor named `prefix`..., by the rest of its name.
  DesignTensors under(const std::string& prefix) const {
    DesignTensors out;
    for (auto it = tensors_.lower_bound(prefix); it != tensors_.end() && it->first.starts_with(prefix); ++it)
      out.emplace(it->first.substr(prefix.size()), it->second);
    return out;
  }
  std::size_t bytes() const { return bytes_; }

 private:
  Backend& backend_;
  ScalarType type_;
  std::size_t bytes_ = 0;
  std::map<std::string, Tensor> tensors_;
};

// Mamba-2's in_proj [z I | xBC C | dt H] split into its three products; its conv [C, 1, K]
// as [C, K]. True when `spec` was one of them (and is placed).
bool place_mamba2(Uploader& up, const WeightSpec& spec, const std::vector<float>& v, const model::Backbone& b) {
  const std::string& name = spec.name;
  if (!b.mamba || name.find(".mixer.") == std::string::npos) return false;
  const model::Mamba2Config& m = *b.mamba;
  const std::string stem = name.substr(0, name.find(".mixer.") + std::string(".mixer.").size());
  const std::int64_t cols = spec.shape.size() > 1 ? spec.shape[1] : 1, I = m.inner(), C = m.conv_channels();
  if (ends_with(name, "mixer.in_proj.weight")) {
    const auto rows = [&](std::int64_t first, std::int64_t n) {
      return std::vector<float>(v.begin() + first * cols, v.begin() + (first + n) * cols);
    };
    up.put(stem + "z", {I, cols}, rows(0, I), false);
    up.put(stem + "xbc", {C, cols}, rows(I, C), false);
    up.put(stem + "dt", {m.num_heads, cols}, rows(I + C, m.num_heads), false);
    return true;
  }
  if (ends_with(name, "mixer.conv1d.weight")) {
    up.put(stem + "conv", {C, m.conv_kernel}, v, false);
    return true;
  }
  return false;
}

// Each of `heads` row blocks [a | b] (a rows, then b) reordered to [b | a].
std::vector<std::int64_t> swapped_head_rows(std::int64_t heads, std::int64_t a, std::int64_t b) {
  std::vector<std::int64_t> ids;
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t i = 0; i < b; ++i) ids.push_back(h * (a + b) + a + i);
    for (std::int64_t i = 0; i < a; ++i) ids.push_back(h * (a + b) + i);
  }
  return ids;
}

// DeepSeek's RoPE turns the interleaved pairs (2i, 2i+1) of q_pe and k_pe (its complex
// form; transformers' rope_interleave), the runner's rotate-half the pairs (i, i + r/2) at
// the same frequency i: rows 0, 2, 4, ... then 1, 3, 5, ... of a rope block make one the
// other (q and k permuted alike, so their products are DeepSeek's).
std::vector<std::int64_t> deinterleaved(std::int64_t first, std::int64_t r) {
  std::vector<std::int64_t> ids;
  for (std::int64_t parity = 0; parity < 2; ++parity)
    for (std::int64_t i = parity; i < r; i += 2) ids.push_back(first + i);
  return ids;
}

// MLA query rows: each head [nope | rope] -> [rope de-interleaved | nope].
std::vector<std::int64_t> mla_query_rows(std::int64_t heads, std::int64_t nope, std::int64_t rope) {
  std::vector<std::int64_t> ids;
  for (std::int64_t h = 0; h < heads; ++h) {
    for (std::int64_t i : deinterleaved(h * (nope + rope) + nope, rope)) ids.push_back(i);
    for (std::int64_t i = 0; i < nope; ++i) ids.push_back(h * (nope + rope) + i);
  }
  return ids;
}

// Multi-head latent attention (MlaWeights): query heads [nope | rope] -> [rope | nope],
// kv_a split into its latent and RoPE-key rows, kv_b heads [k nope | v] -> [v | k nope];
// the rope rows de-interleaved (deinterleaved). True when `spec` was one of them (and is
// placed).
bool place_mla(Uploader& up, const WeightSpec& spec, const std::vector<float>& v, const model::Backbone& b) {
  const std::string& name = spec.name;
  if (!b.mla || name.find(".self_attn.") == std::string::npos) return false;
  const model::MlaConfig& m = *b.mla;
  const std::string stem = name.substr(0, name.find(".self_attn.") + std::string(".self_attn.").size());
  const std::int64_t cols = spec.shape.size() > 1 ? spec.shape[1] : 1, H = b.num_heads;
  if (ends_with(name, ".q_proj.weight") || ends_with(name, ".q_b_proj.weight")) {
    up.put(stem + "mla.q", spec.shape, rows_of(v, cols, mla_query_rows(H, m.qk_nope_head_dim, m.qk_rope_head_dim)),
           false);
    return true;
  }
  if (ends_with(name, ".kv_a_proj_with_mqa.weight")) {
    const auto split = v.begin() + m.kv_lora_rank * cols;
    up.put(stem + "mla.kv_a_latent", {m.kv_lora_rank, cols}, std::vector<float>(v.begin(), split), false);
    up.put(stem + "mla.kv_a_rope", {m.qk_rope_head_dim, cols},
           rows_of(v, cols, deinterleaved(m.kv_lora_rank, m.qk_rope_head_dim)), false);
    return true;
  }
  if (ends_with(name, ".kv_b_proj.weight")) {
    up.put(stem + "mla.kv_b", spec.shape, rows_of(v, cols, swapped_head_rows(H, m.qk_nope_head_dim, m.v_head_dim)),
           false);
    return true;
  }
  return false;
}

// Layouts HF stores differently from the runner's ops: the gated q_proj split into query
// and gate, Gated DeltaNet's projections regrouped, its conv [C, 1, K] as [C, K]; Mamba-2's
// (place_mamba2). True when `spec` was one of them (and is placed).
bool place_regrouped(Uploader& up, const WeightSpec& spec, const std::vector<float>& v, const model::Config& c) {
  const std::string& name = spec.name;
  const model::Backbone& b = c.effective;
  const std::int64_t cols = spec.shape.size() > 1 ? spec.shape[1] : 1;
  if (b.attention_output_gate &&
      (ends_with(name, "self_attn.q_proj.weight") || ends_with(name, "self_attn.q_proj.bias"))) {
    const bool weight = ends_with(name, "weight");
    const std::string stem = name.substr(0, name.size() - std::string(weight ? "weight" : "bias").size());
    const std::int64_t rows = b.num_heads * b.head_dim;
    const Shape shape = weight ? Shape{rows, cols} : Shape{1, rows};
    up.put(stem + (weight ? "weight" : "bias"), shape, rows_of(v, cols, gated_q_rows(b.num_heads, b.head_dim, false)),
           false);
    up.put(stem + (weight ? "gate.weight" : "gate.bias"), shape,
           rows_of(v, cols, gated_q_rows(b.num_heads, b.head_dim, true)), false);
    return true;
  }
  if (place_mamba2(up, spec, v, b) || place_mla(up, spec, v, b)) return true;
  if (!b.gdn || name.find(".linear_attn.") == std::string::npos) return false;
  const model::GatedDeltaNetConfig& g = *b.gdn;
  const std::string stem = name.substr(0, name.find(".linear_attn.") + std::string(".linear_attn.").size());
  if (ends_with(name, "in_proj_qkvz.weight")) {
    std::vector<std::int64_t> qkv = qkvz_rows(g, 0);
    for (int part = 1; part < 3; ++part) {
      const auto more = qkvz_rows(g, part);
      qkv.insert(qkv.end(), more.begin(), more.end());
    }
    up.put(stem + "qkv", {g.conv_channels(), cols}, rows_of(v, cols, qkv), false);
    up.put(stem + "z", {g.v_width(), cols}, rows_of(v, cols, qkvz_rows(g, 3)), false);
    return true;
  }
  if (ends_with(name, "in_proj_ba.weight")) {
    up.put(stem + "ba", {2 * g.num_value_heads, cols}, rows_of(v, cols, ba_rows(g)), false);
    return true;
  }
  if (ends_with(name, "conv1d.weight")) {
    up.put(stem + "conv", {g.conv_channels(), g.conv_kernel}, v, false);
    return true;
  }
  return false;
}

// Puts one spec's values on the device under the name the assembly step looks up.
void place(Uploader& up, const WeightSpec& spec, std::vector<float> v, std::vector<float>& pending_gate,
           const model::Config& c) {
  const std::string& name = spec.name;
  const PutTensor put = [&](const std::string& n, Shape shape, const std::vector<float>& values, bool keep_f32) {
    up.put(n, std::move(shape), values, keep_f32);
  };
  if (place_design_weight(c.design.method, spec, v, put)) return;
  if (place_regrouped(up, spec, v, c)) return;
  if (ends_with(name, ".gate_proj.weight") || ends_with(name, ".gate_proj.bias")) {
    pending_gate = std::move(v);  // fused with the up_proj that follows it in spec order
    return;
  }
  if (ends_with(name, ".up_proj.weight") || ends_with(name, ".up_proj.bias")) {
    const bool weight = ends_with(name, "weight");
    const std::string prefix =
        name.substr(0, name.size() - std::string(weight ? "up_proj.weight" : "up_proj.bias").size());
    // relu2's up_proj has no gate before it: placed alone under the same name
    const std::int64_t parts = pending_gate.empty() ? 1 : 2;
    std::vector<float> fused = std::move(pending_gate);
    pending_gate.clear();
    fused.insert(fused.end(), v.begin(), v.end());
    if (weight) up.put(prefix + "gate_up", {parts * spec.shape[0], spec.shape[1]}, fused, false);
    else up.put(prefix + "gate_up_bias", {1, parts * spec.shape[0]}, fused, false);
    return;
  }
  if (ends_with(name, "_proj.bias") || ends_with(name, ".gate.bias")) {  // added as [1, out] rows (router: mlp.gate)
    up.put(name, {1, spec.shape[0]}, v, false);
    return;
  }
  up.put(name, spec.shape, v, spec.keep_f32);
}

FfnWeights ffn_of(const Uploader& up, const std::string& prefix) {
  return {up.get(prefix + "gate_up"), up.get(prefix + "down_proj.weight"), up.get(prefix + "gate_up_bias"),
          up.get(prefix + "down_proj.bias")};
}

LinearAttentionWeights linear_of(const Uploader& up, const std::string& p) {
  return {up.get(p + "qkv"),   up.get(p + "z"),       up.get(p + "ba"),          up.get(p + "conv"),
          up.get(p + "A_log"), up.get(p + "dt_bias"), up.get(p + "norm.weight"), up.get(p + "out_proj.weight")};
}

Mamba2Weights mamba2_of(const Uploader& up, const std::string& p) {
  return {up.get(p + "z"),     up.get(p + "xbc"),     up.get(p + "dt"), up.get(p + "conv"),
          up.get(p + "conv1d.bias"), up.get(p + "A_log"), up.get(p + "dt_bias"), up.get(p + "D"),
          up.get(p + "norm.weight"),  up.get(p + "out_proj.weight")};
}

// The mixer's tensors, under the names layer_names gives its kind.
void mixer_of(const Uploader& up, const model::Backbone& b, std::int64_t l, const std::string& a, LayerWeights& w) {
  switch (b.mixer(l)) {
    case model::MixerKind::gated_deltanet: w.linear = linear_of(up, a); return;
    case model::MixerKind::mamba2: w.mamba = mamba2_of(up, a); return;
    case model::MixerKind::none: return;
    case model::MixerKind::attention: break;
  }
  w.o = up.get(a + "o_proj.weight");
  w.o_bias = up.get(a + "o_proj.bias");
  if (b.mla) {
    w.mla = MlaWeights{up.get(a + "mla.q"),           up.get(a + "q_a_proj.weight"),
                       up.get(a + "q_a_layernorm.weight"), up.get(a + "mla.kv_a_latent"),
                       up.get(a + "mla.kv_a_rope"),   up.get(a + "kv_a_layernorm.weight"),
                       up.get(a + "mla.kv_b")};
    return;
  }
  w.q = up.get(a + "q_proj.weight");
  w.k = up.get(a + "k_proj.weight");
  w.v = up.get(a + "v_proj.weight");
  w.q_bias = up.get(a + "q_proj.bias");
  w.k_bias = up.get(a + "k_proj.bias");
  w.v_bias = up.get(a + "v_proj.bias");
  w.q_norm = up.get(a + "q_norm.weight");
  w.k_norm = up.get(a + "k_norm.weight");
  w.sinks = up.get(a + "sinks");
  w.q_gate = up.get(a + "q_proj.gate.weight");
  w.q_gate_bias = up.get(a + "q_proj.gate.bias");
}

LayerWeights layer_of(const Uploader& up, const model::Backbone& b, const model::Method& method, std::int64_t l) {
  const LayerNames n = layer_names(b, l);
  LayerWeights w;
  w.attn_norm = up.get(n.mixer_norm);
  w.attn_post_norm = up.get(n.mixer_post_norm);
  w.ffn_norm = up.get(n.ffn_norm);
  w.ffn_post_norm = up.get(n.ffn_post_norm);
  mixer_of(up, b, l, n.mixer, w);
  if (b.is_moe_layer(l)) {
    MoeWeights m;
    m.router = up.get(n.ffn + "gate.weight");
    m.router_bias = up.get(n.ffn + "gate.bias");
    m.shared_gate = up.get(n.ffn + "shared_expert_gate.weight");
    for (std::int64_t e = 0; e < b.moe->num_experts; ++e)
      m.experts.push_back(ffn_of(up, n.ffn + "experts." + std::to_string(e) + "."));
    for (std::int64_t s = 0; s < b.moe->num_shared_experts; ++s)
      m.shared.push_back(ffn_of(up, n.ffn + "shared_experts." + std::to_string(s) + "."));
    w.moe = std::move(m);
  } else if (b.has_ffn(l)) {
    w.dense = ffn_of(up, n.ffn);
  }
  w.design = up.under(design_tensor_prefix(n, method));
  bind_design_layer_weights(method, w);
  return w;
}

}  // namespace

void put_column_halves(const WeightSpec& spec, const std::vector<float>& values, const PutTensor& put) {
  const std::int64_t rows = spec.shape[0], half = spec.shape[1] / 2;
  put(spec.name + ".h", {rows, half}, columns(values, rows, 2 * half, 0, half), false);
  put(spec.name + ".e", {rows, half}, columns(values, rows, 2 * half, half, half), false);
}

ModelWeights upload_weights(Backend& backend, const model::Config& config, WeightSource& source, ScalarType type) {
  const std::vector<WeightSpec> specs = weight_specs(config);
  backend.require_fits(device_weight_bytes(config, type));
  Uploader up(backend, type);
  std::vector<float> pending_gate;
  for (const WeightSpec& spec : specs) {
    std::vector<float> v = source.values(spec);
    if (static_cast<std::int64_t>(v.size()) != element_count(spec.shape))
      throw model::ConfigError("", "weights: tensor \"" + spec.name + "\" has " + std::to_string(v.size()) +
                                       " values, shape " + to_string(spec.shape) + " needs " +
                                       std::to_string(element_count(spec.shape)));
    place(up, spec, std::move(v), pending_gate, config);
  }
  const model::Backbone& b = config.effective;
  ModelWeights w;
  w.embed.push_back(up.get("model.embed_tokens.weight"));
  bind_design_weights(config.design.method, [&](const std::string& name) { return up.get(name); }, w);
  for (std::int64_t l = 0; l < b.num_layers; ++l) w.layers.push_back(layer_of(up, b, config.design.method, l));
  w.final_norm = up.get("model.norm.weight");
  w.lm_head = b.tie_embeddings ? w.embed[0] : up.get("lm_head.weight");
  w.bytes = up.bytes();
  return w;
}

}  // namespace hdlab::executor
