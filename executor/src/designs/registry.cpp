// The executor's design registry (hdlab/executor/designs/registry.hpp): one std::visit
// per question; a module answers with an overload in hdlab::executor::designs.
#include "hdlab/executor/designs/registry.hpp"

#include <iterator>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "hdlab/executor/designs/mhc_op.hpp"

namespace hdlab::executor {

// The registry's optional questions: these templates (declared, never defined) are what
// overload resolution finds for a design without an answer; a module's overload on its
// own struct is preferred to them.
namespace designs {
struct NoAnswer {};
template <class D>
NoAnswer add_layer_weights(const D&, const model::Backbone&, const std::string&, std::vector<WeightSpec>&);
template <class D>
NoAnswer mixing(const D&, Backend&, const DesignTensors&, bool, const Tensor&, float, const Tensor&, const Tensor&);
}  // namespace designs

namespace {

// One entry per design module with ops of its own.
using CasesOf = std::vector<OpCase> (*)(ScalarType);
const std::vector<CasesOf> design_cases = {&mhc_op_cases};

}  // namespace

std::vector<OpCase> design_op_cases(ScalarType type) {
  std::vector<OpCase> out;
  for (CasesOf cases_of : design_cases) {
    auto cases = cases_of(type);
    std::move(cases.begin(), cases.end(), std::back_inserter(out));
  }
  return out;
}

void add_design_layer_weights(const model::Method& m, const model::Backbone& b, const std::string& prefix,
                              std::vector<WeightSpec>& out) {
  std::visit(
      [&](const auto& d) {
        if constexpr (!std::is_same_v<decltype(designs::add_layer_weights(d, b, prefix, out)), designs::NoAnswer>)
          designs::add_layer_weights(d, b, prefix, out);
      },
      m);
}

void design_mixing(const model::Method& m, Backend& backend, const DesignTensors& layer, bool attention,
                   const Tensor& h, float eps, const Tensor& alpha, const Tensor& beta) {
  std::visit(
      [&](const auto& d) {
        using Answer = decltype(designs::mixing(d, backend, layer, attention, h, eps, alpha, beta));
        if constexpr (!std::is_same_v<Answer, designs::NoAnswer>)
          designs::mixing(d, backend, layer, attention, h, eps, alpha, beta);
        else
          throw std::logic_error(std::string(model::method_name(m)) + " has no mixing op of its own in the executor");
      },
      m);
}

}  // namespace hdlab::executor
