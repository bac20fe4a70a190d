#pragma once
// The argument checks every public Backend op runs before a backend sees it (backend.cpp,
// backend_linear.cpp): each throws BackendError("<op>: <what is wrong>").
#include <string>

#include "hdlab/executor/backend.hpp"

namespace hdlab::executor::checks {

// Throws BackendError("<op>: <message>") unless `ok`.
inline void require(bool ok, const char* op, const std::string& message) {
  if (!ok) throw BackendError(std::string(op) + ": " + message);
}

inline std::string shape_of(const Tensor& t) { return to_string(t.shape()); }

inline void require_type(const Tensor& t, ScalarType type, const char* op, const char* what) {
  require(t.type() == type, op, std::string(what) + " must be " + to_string(type) + ", is " + to_string(t.type()));
}

inline void require_float(const Tensor& t, const char* op, const char* what) {
  require(t.type() == ScalarType::f32 || t.type() == ScalarType::bf16, op,
          std::string(what) + " must be f32 or bf16, is " + to_string(t.type()));
}

inline void require_shape(const Tensor& t, const Shape& want, const char* op, const char* what) {
  require(t.shape() == want, op, std::string(what) + " must be " + to_string(want) + ", is " + shape_of(t));
}

}  // namespace hdlab::executor::checks
