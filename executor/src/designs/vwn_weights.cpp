// VWN's tensors in the executor (hdlab/executor/designs/vwn_weights.hpp).
#include "hdlab/executor/designs/vwn_weights.hpp"

#include <cmath>
#include <string>

namespace hdlab::executor::designs {

namespace {

double inverse_sqrt(std::int64_t fan_in) { return 1.0 / std::sqrt(static_cast<double>(fan_in)); }

// One generalized hyper-connection of the widened residual (n slots of s = D/m).
void add_ghc(std::vector<WeightSpec>& out, const std::string& p, const model::VwnDesign& d, std::int64_t D) {
  const std::int64_t m = d.m, n = d.n, s = D / d.m;
  out.push_back({p + "static_a", {n, m + n}, WeightInit::ghc_static_a, 0, true});
  out.push_back({p + "static_b", {m, n}, WeightInit::ghc_static_b, 0, true});
  if (!d.dynamic) return;
  out.push_back({p + "norm.weight", {s}, WeightInit::ones, 0, true});
  out.push_back({p + "dynamic.weight", {s, 2 * m + n}, WeightInit::ghc_dynamic, 0});
  out.push_back({p + "dynamic.scale", {2}, WeightInit::ones, 0, true});
}

GhcWeights ghc_of(const DesignTensors& t, const std::string& connection) {
  const auto get = [&](const std::string& name) {
    const auto it = t.find(connection + name);
    return it == t.end() ? Tensor() : it->second;
  };
  return {get("static_a"), get("static_b"), get("norm.weight"), get("dynamic.weight"), get("dynamic.scale")};
}

}  // namespace

const char* layer_tensor_group(const model::VwnDesign&) { return "ghc"; }

void add_model_weights(const model::VwnDesign& d, const model::Backbone& b, WeightsAt at,
                       std::vector<WeightSpec>& out) {
  const std::int64_t D = b.hidden, wide = D * d.n / d.m, s = D / d.m;
  if (at == WeightsAt::input) {
    if (d.embedding == model::VwnEmbedding::projected)
      out.push_back({"hdlab.vwn.embed_proj.weight", {wide, D}, WeightInit::normal, inverse_sqrt(D)});
    return;
  }
  out.push_back({"hdlab.vwn.group_norm.weight", {wide}, WeightInit::ones, 0, true});
  out.push_back({"hdlab.vwn.group_norm.bias", {wide}, WeightInit::zeros, 0, true});
  out.push_back({"hdlab.vwn.reduce.weight", {D, wide}, WeightInit::normal, inverse_sqrt(wide)});
  if (d.mtp) out.push_back({"hdlab.vwn.mtp.weight", {s, 2 * s}, WeightInit::normal, inverse_sqrt(2 * s)});
}

void add_layer_weights(const model::VwnDesign& d, const model::Backbone& b, const std::string& prefix,
                       std::vector<WeightSpec>& out) {
  add_ghc(out, prefix + "attn.", d, b.hidden);
  add_ghc(out, prefix + "ffn.", d, b.hidden);
}

bool place_weight(const model::VwnDesign& d, const WeightSpec& spec, const std::vector<float>& values,
                  const PutTensor& put) {
  if (spec.name == "hdlab.vwn.mtp.weight") {
    put_column_halves(spec, values, put);
    return true;
  }
  const std::string scale = "dynamic.scale";
  if (spec.name.size() < scale.size() || spec.name.compare(spec.name.size() - scale.size(), scale.size(), scale))
    return false;
  // (S_a, S_b) -> per coefficient column [2m+n]: S_a on the m+n alpha columns, S_b on the m beta ones.
  std::vector<float> per_column(static_cast<std::size_t>(2 * d.m + d.n), values[1]);
  for (std::int64_t j = 0; j < d.m + d.n; ++j) per_column[static_cast<std::size_t>(j)] = values[0];
  put(spec.name, {2 * d.m + d.n}, per_column, true);
  return true;
}

void bind_weights(const model::VwnDesign&, const GetTensor& get, ModelWeights& w) {
  w.embed_proj = get("hdlab.vwn.embed_proj.weight");
  w.group_norm_weight = get("hdlab.vwn.group_norm.weight");
  w.group_norm_bias = get("hdlab.vwn.group_norm.bias");
  w.reduce = get("hdlab.vwn.reduce.weight");
  w.mtp_h = get("hdlab.vwn.mtp.weight.h");
  w.mtp_e = get("hdlab.vwn.mtp.weight.e");
}

void bind_layer_weights(const model::VwnDesign&, LayerWeights& w) {
  w.ghc_attn = ghc_of(w.design, "attn.");
  w.ghc_ffn = ghc_of(w.design, "ffn.");
}

std::size_t extra_device_bytes(const model::VwnDesign& d, const model::Backbone& b) {
  if (!d.dynamic) return 0;
  return static_cast<std::size_t>(2 * b.num_layers * (2 * d.m + d.n - 2)) * 4;
}

}  // namespace hdlab::executor::designs
