#pragma once
// The one entry point of the CUDA module (libhdlab_cuda.so, executor/cuda/) and what it
// hands the loader (cuda_loader.cpp): a table of functions. Both sides are C++ of one
// build sharing these types (Backend, CudaProbe, BackendError), so the table passes them
// as they are; `abi` makes a module of another build or compiler refuse to load, since
// their layouts could differ.
//
// The module keeps its symbols hidden (its own copies of the executor core it is built
// with stay private to it). Exceptions still cross: the module throws BackendError and
// OutOfMemoryError from the backend's ops, and the program catches them by type, because
// the C++ runtime (libstdc++) matches exception types by their mangled names.
#include <cstdint>

#include "hdlab/executor/backends.hpp"

namespace hdlab::executor::cuda_module {

// The interface's version and the compiler that built it: a module loads only where the
// program's string is the same.
#define HDLAB_CUDA_MODULE_ABI_STRING "hdlab-cuda-module 1; " __VERSION__

struct EntryPoints {
  const char* abi = nullptr;  // HDLAB_CUDA_MODULE_ABI_STRING of the module's build
  CudaProbe (*probe)() = nullptr;
  // Throws BackendError (no such device, device errors). The caller owns the result.
  Backend* (*make_backend)(int device) = nullptr;
  // Throws BackendError when `backend` is not a CUDA backend of this module.
  MatrixProduct* (*make_matrix_product)(Backend& backend, MatrixPrecision precision, std::int64_t m, std::int64_t n,
                                        std::int64_t k) = nullptr;
};

}  // namespace hdlab::executor::cuda_module

// The symbol the loader looks up (dlsym), exported by the module with default visibility.
#define HDLAB_CUDA_MODULE_ENTRY "hdlab_cuda_module_entry_points"
extern "C" __attribute__((visibility("default"))) const hdlab::executor::cuda_module::EntryPoints*
hdlab_cuda_module_entry_points();
