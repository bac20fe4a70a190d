#pragma once
// Ops a design module brings with it (mHC's Sinkhorn coefficients), run by every backend
// without the Backend interface naming them. A module defines one ModuleOp beside its
// reference (executor/designs/<design>/): its name, its shape and type checks and its CPU
// kernel; its CUDA kernel registers under the same name in the CUDA module
// (executor/cuda/cuda_module_ops.hpp). Backend::run checks that the backend owns every
// operand and calls the op's check, then hands the call to the backend's kernel.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "hdlab/executor/tensor.hpp"

namespace hdlab::executor {

// One call of a module op: its tensors (inputs, then outputs, in the order the op's
// comment gives) and its scalar arguments.
struct ModuleOpCall {
  std::vector<Tensor> tensors;
  std::vector<double> scalars;
};

// What the CPU backend lends a module's kernel: its thread pool. `body(begin, end)` runs
// over [0, n) in chunks; cost_per_item (flops-ish) sizes the chunks.
class CpuWorkers {
 public:
  virtual ~CpuWorkers() = default;
  virtual void parallel_for(std::int64_t n, double cost_per_item,
                            const std::function<void(std::int64_t, std::int64_t)>& body) = 0;
};

struct ModuleOp {
  const char* name = "";  // as the profile and BackendError name it; the CUDA kernel's key
  // Shapes, types and scalars of a call; throws BackendError naming the op and the operand.
  void (*check)(const ModuleOpCall& call) = nullptr;
  // The CPU kernel on f32 operands (the CPU computes in f32 only).
  void (*cpu)(const ModuleOpCall& call, CpuWorkers& workers) = nullptr;
  std::size_t typed_operand = 0;  // the operand whose element type the backend must support
};

}  // namespace hdlab::executor
