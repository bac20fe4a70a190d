#pragma once
// The CUDA kernels of design modules' ops (module_op.hpp), found by the op's name. A
// module's host file in the CUDA module (executor/designs/<design>/*_cuda.cpp) registers
// its kernel with a static RegisterModuleKernel; the CUDA module is a shared object whose
// sources are all linked in, so every registration runs when it loads. Host C++ only.
#include <cuda_runtime_api.h>

#include "cuda_kernels.hpp"
#include "hdlab/executor/module_op.hpp"

namespace hdlab::executor::cuda {

// Runs the op on the backend's stream; operands are device tensors of f32 or bf16 (the
// op's check has passed). The device is current.
using ModuleKernel = void (*)(const ModuleOpCall& call, cudaStream_t stream);

// nullptr where no kernel has that name.
ModuleKernel module_kernel(const char* op_name);

struct RegisterModuleKernel {
  RegisterModuleKernel(const char* op_name, ModuleKernel kernel);
};

// The storage of a float tensor, as the launchers take it.
inline Elem elem_of(const Tensor& t) { return t.type() == ScalarType::bf16 ? Elem::bf16 : Elem::f32; }

}  // namespace hdlab::executor::cuda
