// The CUDA entry points of a build without CUDA (HDLAB_CUDA=OFF or no nvcc): probing
// reports why there is no device, making one refuses.
#include "hdlab/executor/backends.hpp"

namespace hdlab::executor {

bool cuda_compiled() { return false; }

CudaProbe probe_cuda() { return CudaProbe{0, "built without CUDA (HDLAB_CUDA=OFF)"}; }

std::unique_ptr<Backend> make_cuda_backend(int) {
  throw BackendError("cuda backend: " + probe_cuda().reason);
}

}  // namespace hdlab::executor
