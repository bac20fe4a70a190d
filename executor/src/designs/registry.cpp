// The executor's design registry (hdlab/executor/designs/registry.hpp): one std::visit
// per question; a module answers with an overload in hdlab::executor::designs.
#include "hdlab/executor/designs/registry.hpp"

#include <iterator>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "hdlab/executor/designs/hd_weights.hpp"
#include "hdlab/executor/designs/looped_weights.hpp"
#include "hdlab/executor/designs/mhc_op.hpp"
#include "hdlab/executor/designs/vwn_weights.hpp"

namespace hdlab::executor {

// The registry's optional questions: these templates (declared, never defined) are what
// overload resolution finds for a design without an answer; a module's overload on its
// own struct is preferred to them.
namespace designs {
struct NoAnswer {};
template <class D>
NoAnswer add_model_weights(const D&, const model::Backbone&, WeightsAt, std::vector<WeightSpec>&);
template <class D>
NoAnswer add_layer_weights(const D&, const model::Backbone&, const std::string&, std::vector<WeightSpec>&);
template <class D>
NoAnswer layer_tensor_group(const D&);
template <class D>
NoAnswer place_weight(const D&, const WeightSpec&, const std::vector<float>&, const PutTensor&);
template <class D>
NoAnswer bind_weights(const D&, const GetTensor&, ModelWeights&);
template <class D>
NoAnswer bind_layer_weights(const D&, LayerWeights&);
template <class D>
NoAnswer extra_device_bytes(const D&, const model::Backbone&);
template <class D>
NoAnswer mixing(const D&, Backend&, const DesignTensors&, bool, const Tensor&, float, const Tensor&, const Tensor&);
}  // namespace designs

namespace {

// True when `Answer` (the type of a question's call on one design) is a module's answer.
template <class Answer>
constexpr bool answered = !std::is_same_v<Answer, designs::NoAnswer>;

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

void add_design_model_weights(const model::Method& m, const model::Backbone& b, WeightsAt at,
                              std::vector<WeightSpec>& out) {
  std::visit(
      [&](const auto& d) {
        if constexpr (answered<decltype(designs::add_model_weights(d, b, at, out))>)
          designs::add_model_weights(d, b, at, out);
      },
      m);
}

void add_design_layer_weights(const model::Method& m, const model::Backbone& b, const std::string& prefix,
                              std::vector<WeightSpec>& out) {
  std::visit(
      [&](const auto& d) {
        if constexpr (answered<decltype(designs::add_layer_weights(d, b, prefix, out))>)
          designs::add_layer_weights(d, b, prefix, out);
      },
      m);
}

std::string design_tensor_prefix(const LayerNames& n, const model::Method& m) {
  return std::visit(
      [&](const auto& d) {
        if constexpr (answered<decltype(designs::layer_tensor_group(d))>)
          return n.prefix + "hdlab_" + designs::layer_tensor_group(d) + ".";
        else
          return n.prefix + "hdlab_" + model::method_name(m) + ".";
      },
      m);
}

bool place_design_weight(const model::Method& m, const WeightSpec& spec, const std::vector<float>& values,
                         const PutTensor& put) {
  return std::visit(
      [&](const auto& d) {
        if constexpr (answered<decltype(designs::place_weight(d, spec, values, put))>)
          return designs::place_weight(d, spec, values, put);
        else
          return false;
      },
      m);
}

void bind_design_weights(const model::Method& m, const GetTensor& get, ModelWeights& w) {
  std::visit(
      [&](const auto& d) {
        if constexpr (answered<decltype(designs::bind_weights(d, get, w))>) designs::bind_weights(d, get, w);
      },
      m);
}

void bind_design_layer_weights(const model::Method& m, LayerWeights& w) {
  std::visit(
      [&](const auto& d) {
        if constexpr (answered<decltype(designs::bind_layer_weights(d, w))>) designs::bind_layer_weights(d, w);
      },
      m);
}

std::size_t design_extra_device_bytes(const model::Method& m, const model::Backbone& b) {
  return std::visit(
      [&](const auto& d) -> std::size_t {
        if constexpr (answered<decltype(designs::extra_device_bytes(d, b))>)
          return designs::extra_device_bytes(d, b);
        else
          return 0;
      },
      m);
}

void design_mixing(const model::Method& m, Backend& backend, const DesignTensors& layer, bool attention,
                   const Tensor& h, float eps, const Tensor& alpha, const Tensor& beta) {
  std::visit(
      [&](const auto& d) {
        if constexpr (answered<decltype(designs::mixing(d, backend, layer, attention, h, eps, alpha, beta))>)
          designs::mixing(d, backend, layer, attention, h, eps, alpha, beta);
        else
          throw std::logic_error(std::string(model::method_name(m)) + " has no mixing op of its own in the executor");
      },
      m);
}

}  // namespace hdlab::executor
