#pragma once
// Looped models in the executor (the design: model/src/designs/looped.cpp): with input
// injection, the adapter that mixes the embedding back in before each iteration,
//   hdlab.loop.injection.weight   [D, 2D]  input [h; e], initialised [I/2 | I/2] + noise
// placed as its two halves ".h" and ".e" (ModelWeights::inject_h / inject_e), each one
// GEMM. Answers to the executor's design registry.
#include <vector>

#include "hdlab/executor/designs/registry.hpp"

namespace hdlab::executor::designs {

void add_model_weights(const model::LoopedDesign& d, const model::Backbone& b, WeightsAt at,
                       std::vector<WeightSpec>& out);
bool place_weight(const model::LoopedDesign& d, const WeightSpec& spec, const std::vector<float>& values,
                  const PutTensor& put);
void bind_weights(const model::LoopedDesign& d, const GetTensor& get, ModelWeights& w);

}  // namespace hdlab::executor::designs
