// The looped design's tensors in the executor (hdlab/executor/designs/looped_weights.hpp).
#include "hdlab/executor/designs/looped_weights.hpp"

namespace hdlab::executor::designs {

namespace {
constexpr const char* kInjection = "hdlab.loop.injection.weight";
}  // namespace

void add_model_weights(const model::LoopedDesign& d, const model::Backbone& b, WeightsAt at,
                       std::vector<WeightSpec>& out) {
  if (at == WeightsAt::output && d.input_injection)
    out.push_back({kInjection, {b.hidden, 2 * b.hidden}, WeightInit::injection, 0});
}

bool place_weight(const model::LoopedDesign&, const WeightSpec& spec, const std::vector<float>& values,
                  const PutTensor& put) {
  if (spec.name != kInjection) return false;
  put_column_halves(spec, values, put);
  return true;
}

void bind_weights(const model::LoopedDesign&, const GetTensor& get, ModelWeights& w) {
  w.inject_h = get(std::string(kInjection) + ".h");
  w.inject_e = get(std::string(kInjection) + ".e");
}

}  // namespace hdlab::executor::designs
