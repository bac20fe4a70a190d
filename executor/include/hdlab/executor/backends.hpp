#pragma once
// Making backends. Only main() (the CLI, tests, benchmarks) decides which one to use and
// where the CUDA backend's module lies; these functions read no arguments, environment or
// files beyond system facts (/proc/meminfo, the CUDA driver) and the module they are told of.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hdlab/executor/backend.hpp"

namespace hdlab::executor {

struct CpuOptions {
  int threads = 0;  // threads for our kernels and OpenBLAS; 0 = all hardware threads
  // Attention kernel instruction set: "auto" (the best this CPU runs), "avx512", "avx2",
  // "generic". Tests pin each one; asking for one the CPU lacks throws BackendError.
  std::string attention_isa = "auto";
  // Head dims (q/k or v) above this run attention composed of other ops, as the CUDA
  // backend runs what its fused kernel cannot hold (Backend::attention_in_parts); 0: the
  // fused kernel takes every head dim. Tests set it to check that path on any machine.
  std::int64_t fused_attention_max_dims = 0;
};
std::unique_ptr<Backend> make_cpu_backend(const CpuOptions& options = {});
// Instruction sets of the CPU attention kernel this build and this CPU can run, best first.
std::vector<std::string> cpu_attention_isas();

// ---- CUDA ------------------------------------------------------------------------------
// The CUDA backend is a module of its own (libhdlab_cuda.so, linked with cuBLAS and the
// CUDA runtime), loaded on first use: a program that never asks for CUDA neither loads
// nor needs the CUDA libraries. main() says where the module is (its build's path, or an
// override); "" = nowhere. The path may change until a load succeeds; a loaded module
// stays loaded (the CUDA runtime does not survive being unloaded).
void set_cuda_module(std::string path);
// Whether this build made the CUDA module at all (HDLAB_CUDA=ON).
bool cuda_compiled();

struct CudaDevice {
  int ordinal = 0;  // the CUDA device number (make_cuda_backend's argument)
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
  // Shared memory one block may opt in to (cudaDevAttrMaxSharedMemoryPerBlockOptin):
  // what bounds the attention kernel's head dim (cuda_limits.hpp).
  std::size_t shared_per_block_optin = 0;
};

struct CudaProbe {
  int devices = 0;                 // usable CUDA devices; 0 when none
  std::string reason;              // why there are none ("built without CUDA", dlerror's text, the driver's error, ...)
  bool module_loaded = false;      // the CUDA module and the CUDA libraries it needs loaded
  std::vector<CudaDevice> usable;  // the usable devices (compute capability 8.0+)
};
// Never throws: no module, a missing CUDA runtime or driver, no device or a build without
// CUDA give devices = 0 and the reason. Loads the module on its first call.
CudaProbe probe_cuda();
// The backend on CUDA device `device` (an ordinal of probe_cuda().usable). Throws
// BackendError when it cannot be made, with probe_cuda()'s reason.
std::unique_ptr<Backend> make_cuda_backend(int device = 0);

// "cpu" or "cuda" (default options, device 0).
std::unique_ptr<Backend> make_backend(const std::string& name);

// ---- matrix rates --------------------------------------------------------------------
// The precisions a device's matrix units run. A backend's tensors need not hold all of
// them (no fp16 tensors anywhere): calibration measures each rate with a MatrixProduct.
enum class MatrixPrecision { fp32, bf16, fp16 };
const char* to_string(MatrixPrecision p);

// C[m, n] = A[m, k] B[n, k]^T (a layer's y = x W^T) in one precision: inputs and output
// in it, f32 accumulation (CUDA: cublasGemmEx, tensor cores for bf16 and fp16), over
// operands of the backend that hold constants (A = 1/2, B = 1/4): every partial sum is a
// multiple of 1/8 and exact in f32, so every element of C is k/8 rounded to the precision.
class MatrixProduct {
 public:
  virtual ~MatrixProduct() = default;
  virtual void run() = 0;  // issues the product once (asynchronously on CUDA)
  // Runs once and checks every element of C against k/8 (rounded to the precision): a
  // broken product must not give a rate.
  virtual bool check() = 0;
};
// Throws BackendError when the backend has no product in that precision (the CPU backend
// computes in fp32 only), when m, n or k is below 1, or k above 2^16 (k/8 beyond fp16).
std::unique_ptr<MatrixProduct> make_matrix_product(Backend& backend, MatrixPrecision precision, std::int64_t m,
                                                   std::int64_t n, std::int64_t k);
// Whether make_matrix_product runs `precision` on this backend.
bool supports_matrix_precision(const Backend& backend, MatrixPrecision precision);

}  // namespace hdlab::executor
