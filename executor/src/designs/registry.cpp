// The executor's design registry (hdlab/executor/designs/registry.hpp).
#include "hdlab/executor/designs/registry.hpp"

#include <iterator>

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

}  // namespace hdlab::executor
