// mHC's coefficients op registered with the CUDA module (cuda_module_ops.hpp): unpacks a
// checked call (mhc_op.cpp's check) into the launcher's plain arguments. Part of the CUDA
// module, built by the C++ compiler.
#include "../../cuda/cuda_module_ops.hpp"
#include "hdlab/executor/designs/mhc_op.hpp"
#include "mhc_op_cuda.hpp"

namespace hdlab::executor::cuda {

namespace {

void run(const ModuleOpCall& call, cudaStream_t stream) {
  const Tensor& h = call.tensors[0];
  if (h.dim(0) == 0) return;  // no tokens: nothing to launch
  launch_mhc_coefficients(elem_of(h), h.data(), call.tensors[1].data(), call.tensors[2].data_as<const float>(),
                          call.tensors[3].data_as<const float>(), static_cast<std::int64_t>(call.scalars[0]),
                          static_cast<float>(call.scalars[1]), call.tensors[4].data_as<float>(),
                          call.tensors[5].data_as<float>(), h.dim(0), h.dim(1), h.dim(2), stream);
}

const RegisterModuleKernel registered(kMhcCoefficientsOp, &run);

}  // namespace

}  // namespace hdlab::executor::cuda
