#pragma once
// The executor's design registry: what the design modules of executor/src/designs/ add to
// the executor beside the backbone's ops. A design with ops of its own (module_op.hpp)
// lists their cases here once; the correctness table, its tests and the op benchmarks
// then run them on every backend.
#include <vector>

#include "hdlab/executor/op_cases.hpp"

namespace hdlab::executor {

std::vector<OpCase> design_op_cases(ScalarType type);

}  // namespace hdlab::executor
