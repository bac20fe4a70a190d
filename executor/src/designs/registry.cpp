// The executor's design registry (hdlab/executor/designs/registry.hpp): one std::visit
// per question; a module answers with an overload in hdlab::executor::designs.
#include "hdlab/executor/designs/registry.hpp"

#include <iterator>
#include <stdexcept>
#include <variant>

#include "hdlab/executor/designs/mhc_op.hpp"

namespace hdlab::executor {

namespace {

// One entry per design module with ops of its own.
using CasesOf = std::vector<OpCase> (*)(ScalarType);
constexpr CasesOf kDesignCases[] = {&mhc_op_cases};

}  // namespace

std::vector<OpCase> design_op_cases(ScalarType type) {
  std::vector<OpCase> out;
  for (CasesOf cases_of : kDesignCases) {
    auto cases = cases_of(type);
    std::move(cases.begin(), cases.end(), std::back_inserter(out));
  }
  return out;
}

void add_design_layer_weights(const model::Method& m, const model::Backbone& b, const std::string& prefix,
                              std::vector<WeightSpec>& out) {
  std::visit(
      [&](const auto& d) {
        if constexpr (requires { designs::add_layer_weights(d, b, prefix, out); })
          designs::add_layer_weights(d, b, prefix, out);
      },
      m);
}

void design_mixing(const model::Method& m, Backend& backend, const DesignTensors& layer, bool attention,
                   const Tensor& h, float eps, const Tensor& alpha, const Tensor& beta) {
  std::visit(
      [&](const auto& d) {
        if constexpr (requires { designs::mixing(d, backend, layer, attention, h, eps, alpha, beta); })
          designs::mixing(d, backend, layer, attention, h, eps, alpha, beta);
        else
          throw std::logic_error(std::string(model::method_name(m)) + " has no mixing op of its own in the executor");
      },
      m);
}

}  // namespace hdlab::executor
