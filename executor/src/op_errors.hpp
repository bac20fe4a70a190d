#pragma once
// Errors in an op's data rather than its shapes (Backend checks shapes before a backend
// sees them): a backend finds these while running the op. Every backend words them with
// these functions, so a caller gets the same BackendError from the CPU backend (which
// checks on the host) and from the CUDA backend (whose kernels flag them on the device).
#include <cstdint>
#include <string>

#include "hdlab/executor/backend.hpp"

namespace hdlab::executor {

// gather_rows / scatter_add_rows: ids must index rows of the table (gather) or of the
// output (scatter), [0, rows).
[[noreturn]] inline void throw_row_id_out_of_range(const char* op, std::int64_t id, std::int64_t rows) {
  throw BackendError(std::string(op) + ": id " + std::to_string(id) + " outside [0, " + std::to_string(rows) + ")");
}

// topk_routing: a token with fewer than k experts whose score is a number (softmax over
// a NaN or infinite logit makes every score NaN; sigmoid, the NaN logits' experts).
[[noreturn]] inline void throw_nan_router_scores(std::int64_t token) {
  throw BackendError("topk_routing: token " + std::to_string(token) + " has NaN router scores");
}

}  // namespace hdlab::executor
