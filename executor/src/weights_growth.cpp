// Growth of a trained MoE on its weights (methods.md section 5); the maths of why width
// growth is function preserving at alpha = 0 is in weights.hpp (GrownWeights).
#include <cmath>
#include <stdexcept>

#include "hdlab/executor/weights.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::executor {

namespace {

const std::string kLayers = "model.layers.";
const std::string kExperts = "mlp.experts.";

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// "12.rest" -> (12, "rest"); the number before the first dot.
std::pair<std::int64_t, std::string> split_index(const std::string& s) {
  const std::size_t dot = s.find('.');
  if (dot == std::string::npos || dot == 0) throw std::logic_error("growth: no index in \"" + s + "\"");
  return {std::stoll(s.substr(0, dot)), s.substr(dot + 1)};
}

double std_of(const std::vector<float>& v) {
  if (v.empty()) return 0;
  double sum = 0, sq = 0;
  for (float x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  for (float x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / static_cast<double>(v.size()));
}

void add_noise(std::vector<float>& v, double std, std::uint64_t seed) {
  if (std <= 0) return;
  const std::vector<float> noise = normal_floats(v.size(), seed, std);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] += noise[i];
}

}  // namespace

GrownWeights::GrownWeights(const model::Config& config, WeightSource& base, std::uint64_t noise_seed,
                           bool normalize_topk)
    : config_(config), base_(base), noise_seed_(noise_seed), normalize_topk_(normalize_topk) {
  const model::GrowthDesign g = config.design.growth.value_or(model::GrowthDesign{});
  layer_sources_ = model::grown_layer_sources(config.base.num_layers, g);
  base_specs_ = weight_specs(config.base, config.design.method);
}

const WeightSpec& GrownWeights::base_spec(const std::string& name) const {
  for (const auto& s : base_specs_)
    if (s.name == name) return s;
  throw std::logic_error("growth: the base model has no tensor \"" + name + "\"");
}

std::vector<float> GrownWeights::values(const WeightSpec& spec) {
  const model::GrowthDesign g = config_.design.growth.value_or(model::GrowthDesign{});
  if (!starts_with(spec.name, kLayers)) return base_.values(base_spec(spec.name));
  const auto [layer, rest] = split_index(spec.name.substr(kLayers.size()));
  const std::string base_layer = kLayers + std::to_string(layer_sources_.at(static_cast<std::size_t>(layer))) + ".";
  const std::int64_t w = g.width_factor;
  if (w > 1 && rest == "mlp.gate.weight") {
    // Router [w E, D]: copy c of row e at row e + c E.
    const std::vector<float> rows = base_.values(base_spec(base_layer + rest));
    const double noise = g.noise_alpha * std_of(rows);
    std::vector<float> out;
    out.reserve(rows.size() * static_cast<std::size_t>(w));
    for (std::int64_t c = 0; c < w; ++c) {
      std::vector<float> copy = rows;
      if (c > 0) add_noise(copy, noise, tensor_seed(noise_seed_, spec.name + "#" + std::to_string(c)));
      out.insert(out.end(), copy.begin(), copy.end());
    }
    return out;
  }
  if (w > 1 && starts_with(rest, kExperts)) {
    const auto [e, tail] = split_index(rest.substr(kExperts.size()));
    const std::int64_t experts = config_.base.moe->num_experts, copy = e / experts;
    std::vector<float> v = base_.values(base_spec(base_layer + kExperts + std::to_string(e % experts) + "." + tail));
    if (copy > 0) add_noise(v, g.noise_alpha * std_of(v), tensor_seed(noise_seed_, spec.name));
    // A sigmoid router without normalisation gives each of the w copies the full base
    // weight: the copies' outputs must each count 1/w.
    if (config_.effective.moe->router == model::RouterKind::sigmoid && !normalize_topk_ && tail == "down_proj.weight")
      for (float& x : v) x /= static_cast<float>(w);
    return v;
  }
  return base_.values(base_spec(base_layer + rest));
}

}  // namespace hdlab::executor
