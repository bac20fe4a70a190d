// prepare_session(), compiled into each test executable (the shared main in catch_main.cpp
// is compiled once): executables that may run the CUDA backend (hdlab_use_cuda_module
// gives them HDLAB_CUDA_MODULE) are pointed at its module before any test runs.
#include "test_skip.hpp"

#ifdef HDLAB_CUDA_MODULE
#include <cstdlib>

#include "hdlab/executor/backends.hpp"
#endif

void hdlab::testing::prepare_session() {
#ifdef HDLAB_CUDA_MODULE
  // The CUDA backend's module: $HDLAB_CUDA_MODULE, else the one this build made.
  const char* cuda_module = std::getenv("HDLAB_CUDA_MODULE");
  hdlab::executor::set_cuda_module(cuda_module && *cuda_module ? cuda_module : HDLAB_CUDA_MODULE);
#endif
}
