#pragma once
// Skipping a test that cannot run on this machine (say, no GPU), in the one way CTest can
// tell from a failure (hdlab_add_test in cmake/HdlabHelpers.cmake): the whole output is
// Catch2's "Filters:" line, then "HDLAB-SKIP: <why>", and the process ends at once. Call it
// at the top of a test case, before any assertion; CTest runs one test case per process.
// Run by hand without a filter, it ends the whole run after saying why.
// tests/selftest proves that CTest reports such a skip as skipped and every failure
// (whatever it prints, whatever its exit code) as failed.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

namespace hdlab::testing {

// Failed assertions so far in this process (counted in catch_main.cpp).
int failed_assertions();

// What main() does before the session starts, per executable (test_session.cpp).
void prepare_session();

[[noreturn]] inline void skip_test(const std::string& why) {
  if (const int failed = failed_assertions(); failed > 0) {
    // Too late to skip: exiting 0 here would report the failures as a pass.
    std::cout << "skip_test(\"" << why << "\") after " << failed << " failed assertion(s): not a skip" << std::endl;
    std::fflush(nullptr);
    std::_Exit(1);
  }
  std::cout << "HDLAB-SKIP: " << why << std::endl;
  std::fflush(nullptr);
  // _Exit: no static destructors and no Catch2 summary may print after the skip line.
  std::_Exit(0);
}

}  // namespace hdlab::testing
