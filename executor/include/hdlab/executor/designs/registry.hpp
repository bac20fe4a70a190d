#pragma once
// The executor's design registry: what the design modules of executor/src/designs/ add to
// the executor beside the backbone's ops. Each question dispatches over model::Method;
// a design answers those it has something for (an overload on its design struct, found
// at compile time) and the rest keep the backbone's behaviour.
#include <string>
#include <vector>

#include "hdlab/executor/op_cases.hpp"
#include "hdlab/executor/weights.hpp"

namespace hdlab::executor {

// Cases of the design modules' own ops (module_op.hpp): the correctness table, its tests
// and the op benchmarks run them on every backend.
std::vector<OpCase> design_op_cases(ScalarType type);

// The weights design `m` adds to one layer, each named `prefix` + its own name (prefix:
// the layer's design_tensor_prefix); a design without weights of its own adds nothing.
void add_design_layer_weights(const model::Method& m, const model::Backbone& b, const std::string& prefix,
                              std::vector<WeightSpec>& out);

// The coefficients of one of a layer's hyper-connections (around attention, else the
// FFN) for a design that computes them with its own op (DesignFeatures::module_mixing),
// from the layer's design tensors: the wide state h [R, n, D/m] -> alpha [R, n, m+n],
// beta [R, m, n] f32, as Backend::ghc_width / ghc_depth read them. eps: the backbone's
// norm epsilon. Throws std::logic_error for a design without such an op.
void design_mixing(const model::Method& m, Backend& backend, const DesignTensors& layer, bool attention,
                   const Tensor& h, float eps, const Tensor& alpha, const Tensor& beta);

}  // namespace hdlab::executor
