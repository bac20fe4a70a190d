// The CUDA module's entry points (executor/src/cuda_module_abi.hpp): the device probe,
// the backend factory and the matrix-rate products, handed to the loader in one table.
#include <cstring>
#include <memory>
#include <string>

#include "../src/cuda_module_abi.hpp"
#include "cuda_backend.hpp"
#include "cuda_check.hpp"

namespace hdlab::executor::cuda {

namespace {

CudaProbe probe() {
  CudaProbe out;
  out.module_loaded = true;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    out.reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
    return out;
  }
  out.reason = count == 0 ? "no CUDA device" : "";
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    int optin = 0;
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess || !usable(p) ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, d) != cudaSuccess) {
      (void)cudaGetLastError();
      out.reason = "device " + std::to_string(d) + " is below compute capability 8.0";
      continue;
    }
    out.usable.push_back(CudaDevice{d, p.name, p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem,
                                    static_cast<std::size_t>(optin)});
  }
  out.devices = static_cast<int>(out.usable.size());
  if (out.devices) out.reason.clear();
  return out;
}

Backend* make_backend(int device) {
  const CudaProbe p = probe();
  for (const CudaDevice& d : p.usable)
    if (d.ordinal == device) return new CudaBackend(device);
  throw BackendError("cuda backend: no usable device " + std::to_string(device) +
                     (p.reason.empty() ? "" : " (" + p.reason + ")"));
}

// Operands on the device filled with 1/2 (A) and 1/4 (B) by a kernel, in the precision's
// storage; the check counts C's elements that are not k/8 on the device.
class CudaMatrixProduct final : public MatrixProduct {
 public:
  CudaMatrixProduct(CudaBackend& backend, Elem elem, std::int64_t m, std::int64_t n, std::int64_t k)
      : backend_(backend), elem_(elem), m_(m), n_(n), k_(k) {
    const ScalarType storage = elem == Elem::f32 ? ScalarType::f32 : ScalarType::bf16;  // bf16 and f16: 2 bytes
    a_ = backend.allocate({m, k}, storage);
    b_ = backend.allocate({n, k}, storage);
    c_ = backend.allocate({m, n}, storage);
    mismatches_ = backend.allocate({2}, ScalarType::i32);  // one 64-bit counter
    bind_device(backend.device());
    launch_fill(elem, a_.data(), m * k, 0.5f, backend.stream());
    launch_fill(elem, b_.data(), n * k, 0.25f, backend.stream());
    backend.synchronize();
  }
  void run() override { backend_.matrix_product(elem_, a_.data(), b_.data(), c_.data(), m_, n_, k_); }
  bool check() override {
    backend_.fill_zero(c_);
    run();
    bind_device(backend_.device());
    auto* count = static_cast<unsigned long long*>(mismatches_.data());
    HDLAB_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof *count, backend_.stream()));
    launch_count_mismatches(elem_, c_.data(), m_ * n_, static_cast<float>(k_) / 8, count, backend_.stream());
    unsigned long long host = 1;
    HDLAB_CUDA_CHECK(cudaMemcpyAsync(&host, count, sizeof host, cudaMemcpyDeviceToHost, backend_.stream()));
    backend_.synchronize();
    return host == 0;
  }

 private:
  CudaBackend& backend_;
  Elem elem_;
  std::int64_t m_, n_, k_;
  Tensor a_, b_, c_, mismatches_;
};

MatrixProduct* make_matrix_product(Backend& backend, MatrixPrecision precision, std::int64_t m, std::int64_t n,
                                   std::int64_t k) {
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  if (!cuda) throw BackendError("cuda matrix product: " + backend.name() + " is not a backend of the CUDA module");
  const Elem elem = precision == MatrixPrecision::fp32   ? Elem::f32
                    : precision == MatrixPrecision::bf16 ? Elem::bf16
                                                         : Elem::f16;
  return new CudaMatrixProduct(*cuda, elem, m, n, k);
}

const cuda_module::EntryPoints kEntryPoints{HDLAB_CUDA_MODULE_ABI_STRING, probe, make_backend, make_matrix_product};

}  // namespace

}  // namespace hdlab::executor::cuda

extern "C" const hdlab::executor::cuda_module::EntryPoints* hdlab_cuda_module_entry_points() {
  return &hdlab::executor::cuda::kEntryPoints;
}
