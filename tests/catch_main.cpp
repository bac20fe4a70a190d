// The one Catch2 main shared by every test executable, compiled once per build (the
// object library hdlab_catch_main: Catch2's implementation takes ~15 s to compile, and
// every test executable used to compile it again). It counts the failed assertions that
// hdlab::testing::skip_test (test_skip.hpp) consults: a test case that has already failed
// must not end as a skip. What differs between executables (where the CUDA module is)
// is done by prepare_session(), test_session.cpp, compiled into each of them.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "test_skip.hpp"

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
  hdlab::testing::prepare_session();
  return Catch::Session().run(argc, argv);
}
