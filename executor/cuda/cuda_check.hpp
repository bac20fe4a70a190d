#pragma once
// Every CUDA runtime and cuBLAS call goes through these: an error becomes a BackendError
// naming file:line, the call and the library's error string. Kernel launches are
// followed by HDLAB_CUDA_CHECK(cudaGetLastError()).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace hdlab::executor::cuda {

// Defined in cuda_backend.cpp (throws hdlab::executor::BackendError), so the .cu files
// need none of the executor's C++20 headers.
[[noreturn]] void throw_cuda_error(const char* file, int line, const char* call, const char* error_name,
                                   const char* error_text);

inline void check_cuda(cudaError_t status, const char* file, int line, const char* call) {
  if (status != cudaSuccess) throw_cuda_error(file, line, call, cudaGetErrorName(status), cudaGetErrorString(status));
}

inline void check_cublas(cublasStatus_t status, const char* file, int line, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw_cuda_error(file, line, call, cublasGetStatusName(status), cublasGetStatusString(status));
}

}  // namespace hdlab::executor::cuda

#define HDLAB_CUDA_CHECK(call) ::hdlab::executor::cuda::check_cuda((call), __FILE__, __LINE__, #call)
#define HDLAB_CUBLAS_CHECK(call) ::hdlab::executor::cuda::check_cublas((call), __FILE__, __LINE__, #call)
