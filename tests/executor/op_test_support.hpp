#pragma once
// Runs op cases on a backend inside a Catch2 test: every case must pass its tolerance.
#include <catch2/catch.hpp>

#include <iostream>
#include <vector>

#include "hdlab/executor/op_cases.hpp"

namespace hdlab::executor::testing {

// Runs the cases of `op` (all ops when `only` is false) that `backend` supports; returns
// how many ran, so a test can insist that something was checked.
inline int check_cases(Backend& backend, const std::vector<OpCase>& cases, BackendOp op, bool only = true) {
  int ran = 0;
  for (const OpCase& c : cases) {
    if ((only && c.op != op) || !runs_on(backend, c)) continue;
    INFO(backend.name() << ": " << c.name << " (tolerance abs " << c.tolerance.abs << ", rel " << c.tolerance.rel
                        << ")");
    auto prepared = c.prepare(backend);
    const OpCheck r = prepared->check();
    INFO("worst: " << r.worst << "; max |error| " << r.max_abs_error << ", " << r.worst_ratio << " of allowed");
    CHECK(r.pass);
    CHECK(r.checked > 0);
    ++ran;
  }
  return ran;
}

}  // namespace hdlab::executor::testing
