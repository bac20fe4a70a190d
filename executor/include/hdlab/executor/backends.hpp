#pragma once
// Making backends. Only main() (the CLI, tests, benchmarks) decides which one to use;
// these functions read no arguments, environment or files beyond system facts
// (/proc/meminfo, the CUDA driver).
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
};
std::unique_ptr<Backend> make_cpu_backend(const CpuOptions& options = {});
// Instruction sets of the CPU attention kernel this build and this CPU can run, best first.
std::vector<std::string> cpu_attention_isas();

struct CudaProbe {
  int devices = 0;     // usable CUDA devices; 0 when none
  std::string reason;  // why there are none ("built without CUDA", the driver's error, ...)
};
// Never throws: a missing driver, no device or a build without CUDA give devices = 0.
CudaProbe probe_cuda();
// Whether this build contains the CUDA backend at all.
bool cuda_compiled();
// Throws BackendError when no such device can be used (with probe_cuda()'s reason).
std::unique_ptr<Backend> make_cuda_backend(int device = 0);

// "cpu" or "cuda" (default options, device 0).
std::unique_ptr<Backend> make_backend(const std::string& name);

}  // namespace hdlab::executor
