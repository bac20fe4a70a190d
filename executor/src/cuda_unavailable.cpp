// The CUDA entry points of a build without CUDA (HDLAB_CUDA=OFF or no nvcc): probing
// reports why there is no device, making one refuses, and matrix products are those of
// the backends' own tensor types.
#include "hdlab/executor/backends.hpp"
#include "matrix_product.hpp"

namespace hdlab::executor {

void set_cuda_module(std::string) {}  // there is no module to find

bool cuda_compiled() { return false; }

CudaProbe probe_cuda() { return CudaProbe{0, "built without CUDA (HDLAB_CUDA=OFF)", false, {}}; }

std::unique_ptr<Backend> make_cuda_backend(int) {
  throw BackendError("cuda backend: " + probe_cuda().reason);
}

std::unique_ptr<MatrixProduct> make_matrix_product(Backend& backend, MatrixPrecision precision, std::int64_t m,
                                                   std::int64_t n, std::int64_t k) {
  return make_generic_matrix_product(backend, precision, m, n, k);
}

bool supports_matrix_precision(const Backend& backend, MatrixPrecision precision) {
  return generic_matrix_precision(backend, precision);
}

}  // namespace hdlab::executor
