// Device copies of a design's weights in the layout the runner's ops want: gate and up
// fused into one [2F, D] matrix, biases as [1, out] rows (added by a rank-1 GEMM), the
// GHC scale pair spread over the 2m+n coefficient columns, and the two halves of the
// looped injection and VWN MTP matrices split so each is one GEMM (x W^T accumulates).
#include <map>

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
  std::size_t bytes() const { return bytes_; }

 private:
  Backend& backend_;
  ScalarType type_;
  std::size_t bytes_ = 0;
  std::map<std::string, Tensor> tensors_;
};

// Puts one spec's values on the device under the name the assembly step looks up.
void place(Uploader& up, const WeightSpec& spec, std::vector<float> v, std::vector<float>& pending_gate,
           const model::Config& c) {
  const std::string& name = spec.name;
  if (ends_with(name, ".gate_proj.weight")) {
    pending_gate = std::move(v);  // fused with the up_proj that follows it in spec order
    return;
  }
  if (ends_with(name, ".up_proj.weight")) {
    const std::string prefix = name.substr(0, name.size() - std::string("up_proj.weight").size());
    std::vector<float> fused = std::move(pending_gate);
    fused.insert(fused.end(), v.begin(), v.end());
    up.put(prefix + "gate_up", {2 * spec.shape[0], spec.shape[1]}, fused, false);
    return;
  }
  if (ends_with(name, "_proj.bias")) {
    up.put(name, {1, spec.shape[0]}, v, false);
    return;
  }
  if (ends_with(name, "dynamic.scale")) {  // (S_a, S_b) -> per coefficient column [2m+n]
    const model::DesignFeatures f = model::design_features(c.design.method);
    const std::int64_t m = f.width_m, n = f.width_n;
    std::vector<float> per_column(static_cast<std::size_t>(2 * m + n), v[1]);
    for (std::int64_t j = 0; j < m + n; ++j) per_column[static_cast<std::size_t>(j)] = v[0];
    up.put(name, {2 * m + n}, per_column, true);
    return;
  }
  if (name == "hdlab.loop.injection.weight" || name == "hdlab.vwn.mtp.weight") {
    const std::int64_t rows = spec.shape[0], half = spec.shape[1] / 2;
    up.put(name + ".h", {rows, half}, columns(v, rows, 2 * half, 0, half), false);
    up.put(name + ".e", {rows, half}, columns(v, rows, 2 * half, half, half), false);
    return;
  }
  up.put(name, spec.shape, v, spec.keep_f32);
}

FfnWeights ffn_of(const Uploader& up, const std::string& prefix) {
  return {up.get(prefix + "gate_up"), up.get(prefix + "down_proj.weight")};
}

GhcWeights ghc_of(const Uploader& up, const std::string& p) {
  GhcWeights g{up.get(p + "static_a"), up.get(p + "static_b"), up.get(p + "norm.weight"), up.get(p + "dynamic.weight"),
               up.get(p + "dynamic.scale"), Tensor()};
  return g;
}

GhcWeights mhc_of(const Uploader& up, const std::string& p) {
  GhcWeights g;
  g.w_dyn = up.get(p + "phi");
  g.bias = up.get(p + "bias");
  g.scale = up.get(p + "scale");
  return g;
}

LayerWeights layer_of(const Uploader& up, const model::Backbone& b, std::int64_t l) {
  const std::string p = "model.layers." + std::to_string(l) + ".";
  const std::string a = p + "self_attn.";
  LayerWeights w;
  w.attn_norm = up.get(p + "input_layernorm.weight");
  w.q = up.get(a + "q_proj.weight");
  w.k = up.get(a + "k_proj.weight");
  w.v = up.get(a + "v_proj.weight");
  w.o = up.get(a + "o_proj.weight");
  w.q_bias = up.get(a + "q_proj.bias");
  w.k_bias = up.get(a + "k_proj.bias");
  w.v_bias = up.get(a + "v_proj.bias");
  w.q_norm = up.get(a + "q_norm.weight");
  w.k_norm = up.get(a + "k_norm.weight");
  w.sinks = up.get(a + "sinks");
  if (b.norms_per_layer == 4) {
    w.attn_post_norm = up.get(p + "post_attention_layernorm.weight");
    w.ffn_norm = up.get(p + "pre_feedforward_layernorm.weight");
    w.ffn_post_norm = up.get(p + "post_feedforward_layernorm.weight");
  } else {
    w.ffn_norm = up.get(p + "post_attention_layernorm.weight");
  }
  if (b.is_moe_layer(l)) {
    MoeWeights m;
    m.router = up.get(p + "mlp.gate.weight");
    for (std::int64_t e = 0; e < b.moe->num_experts; ++e)
      m.experts.push_back(ffn_of(up, p + "mlp.experts." + std::to_string(e) + "."));
    for (std::int64_t s = 0; s < b.moe->num_shared_experts; ++s)
      m.shared.push_back(ffn_of(up, p + "mlp.shared_experts." + std::to_string(s) + "."));
    w.moe = std::move(m);
  } else {
    w.dense = ffn_of(up, p + "mlp.");
  }
  const bool mhc = up.get(p + "hdlab_mhc.attn.phi").defined();
  w.ghc_attn = mhc ? mhc_of(up, p + "hdlab_mhc.attn.") : ghc_of(up, p + "hdlab_ghc.attn.");
  w.ghc_ffn = mhc ? mhc_of(up, p + "hdlab_mhc.ffn.") : ghc_of(up, p + "hdlab_ghc.ffn.");
  return w;
}

}  // namespace

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
  // HD: one more table per stream.
  for (std::int64_t k = 1; k < model::design_features(config.design.method).input_tables; ++k)
    w.embed.push_back(up.get("hdlab.hd.embed_tokens." + std::to_string(k) + ".weight"));
  w.embed_proj = up.get("hdlab.vwn.embed_proj.weight");
  w.group_norm_weight = up.get("hdlab.vwn.group_norm.weight");
  w.group_norm_bias = up.get("hdlab.vwn.group_norm.bias");
  w.reduce = up.get("hdlab.vwn.reduce.weight");
  w.mtp_h = up.get("hdlab.vwn.mtp.weight.h");
  w.mtp_e = up.get("hdlab.vwn.mtp.weight.e");
  w.inject_h = up.get("hdlab.loop.injection.weight.h");
  w.inject_e = up.get("hdlab.loop.injection.weight.e");
  for (std::int64_t l = 0; l < b.num_layers; ++l) w.layers.push_back(layer_of(up, b, l));
  w.final_norm = up.get("model.norm.weight");
  w.lm_head = b.tie_embeddings ? w.embed[0] : up.get("lm_head.weight");
  w.bytes = up.bytes();
  return w;
}

}  // namespace hdlab::executor
