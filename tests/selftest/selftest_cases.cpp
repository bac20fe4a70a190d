// Cases that fail, skip or pass on purpose, each in a way a reporting bug could hide.
// run_selftest.cmake runs them under CTest and demands the verdict named in each name.
// Not part of the main test run: most of them fail.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "test_skip.hpp"

namespace {

int one() { return 1; }  // not a constant, so the compiler does not warn about the checks

}  // namespace

TEST_CASE("failed: exactly four failed assertions") {
  // Catch2 exits with the number of failed assertions: 4, the code once taken for a skip.
  CHECK(one() == 2);
  CHECK(one() == 3);
  CHECK(one() == 4);
  CHECK(one() == 5);
}

TEST_CASE("failed: prints the skip line, then fails an assertion") {
  std::cout << "HDLAB-SKIP: printed by the test itself, not by skip_test" << std::endl;
  CHECK(one() == 2);
}

TEST_CASE("failed: exits with code 4 without a failed assertion") {
  CHECK(one() == 1);
  std::fflush(nullptr);
  std::_Exit(4);
}

TEST_CASE("failed: fails an assertion, then calls skip_test") {
  CHECK(one() == 2);
  hdlab::testing::skip_test("too late: an assertion already failed");
}

TEST_CASE("skipped: calls skip_test before any assertion") {
  hdlab::testing::skip_test("no such device on this machine");
}

TEST_CASE("passed: one passing assertion") { CHECK(one() == 1); }
