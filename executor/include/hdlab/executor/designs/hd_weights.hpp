#pragma once
// HD in the executor (the design: model/src/designs/hd.cpp): one more input table per
// stream. Stream 0 reads the backbone's model.embed_tokens; stream k = 1..n-1 reads
//   hdlab.hd.embed_tokens.{k}.weight   [V, D]
// and the runner gathers stream k's rows from ModelWeights::embed[k]. Answers to the
// executor's design registry.
#include <vector>

#include "hdlab/executor/designs/registry.hpp"

namespace hdlab::executor::designs {

void add_model_weights(const model::HdDesign& d, const model::Backbone& b, WeightsAt at,
                       std::vector<WeightSpec>& out);
void bind_weights(const model::HdDesign& d, const GetTensor& get, ModelWeights& w);

}  // namespace hdlab::executor::designs
