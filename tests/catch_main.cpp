// The one Catch2 main shared by every test executable: it points executables that may run
// the CUDA backend at its module, and counts the failed assertions that
// hdlab::testing::skip_test (test_skip.hpp) consults: a test case that has already failed
// must not end as a skip.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "test_skip.hpp"

#ifdef HDLAB_CUDA_MODULE  // executables that may run the CUDA backend (hdlab_use_cuda_module)
#include <cstdlib>

#include "hdlab/executor/backends.hpp"
#endif

namespace {

int failed_assertions_so_far = 0;

// Catch2 hands listeners every failed assertion (passing ones only under -s).
struct FailureCounter : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  bool assertionEnded(const Catch::AssertionStats& stats) override {
    if (!stats.assertionResult.isOk()) ++failed_assertions_so_far;
    return true;
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(FailureCounter)

int hdlab::testing::failed_assertions() { return failed_assertions_so_far; }

int main(int argc, char** argv) {
#ifdef HDLAB_CUDA_MODULE
  // The CUDA backend's module: $HDLAB_CUDA_MODULE, else the one this build made.
  const char* cuda_module = std::getenv("HDLAB_CUDA_MODULE");
  hdlab::executor::set_cuda_module(cuda_module && *cuda_module ? cuda_module : HDLAB_CUDA_MODULE);
#endif
  return Catch::Session().run(argc, argv);
}
