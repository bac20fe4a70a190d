#pragma once
// Shared parts of the op-case builders (op_cases.cpp, op_cases_attention.cpp).
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hdlab/executor/op_cases.hpp"
#include "hdlab/executor/reference.hpp"

namespace hdlab::executor::detail {

using HostFloats = std::shared_ptr<const std::vector<float>>;
using HostInts = std::shared_ptr<const std::vector<std::int32_t>>;

// Seeded inputs in [lo, hi), rounded to what a tensor of `type` holds.
HostFloats host_floats(std::size_t count, std::uint64_t seed, ScalarType type, float lo = -1.0f, float hi = 1.0f);
HostInts host_ints(std::vector<std::int32_t> values);
Doubles to_doubles(const std::vector<float>& v);

// Computed on first use and kept: a case's reference is shared by every backend and ISA.
template <class T>
class Lazy {
 public:
  explicit Lazy(std::function<T()> make) : make_(std::move(make)) {}
  const T& get() {
    if (!value_) value_ = make_();
    return *value_;
  }

 private:
  std::function<T()> make_;
  std::optional<T> value_;
};
template <class T>
std::shared_ptr<Lazy<T>> lazy(std::function<T()> make) {
  return std::make_shared<Lazy<T>>(std::move(make));
}

inline OpCheck compare(const std::vector<float>& out, const Doubles& ref, Tolerance tol, const std::string& what) {
  return compare_to_reference(out, ref, tol, what);
}
OpCheck compare_exact(const std::vector<std::int32_t>& out, const std::vector<std::int32_t>& ref,
                      const std::string& what);
OpCheck merge(OpCheck a, const OpCheck& b);

// A PreparedOp from tensors, their host values and two closures.
class PreparedLambda final : public PreparedOp {
 public:
  explicit PreparedLambda(Backend& backend) : backend_(backend) {}
  void input(const Tensor& t, HostFloats values) { floats_.emplace_back(t, std::move(values)); }
  void input(const Tensor& t, HostInts values) { ints_.emplace_back(t, std::move(values)); }
  void zeroed(const Tensor& t) { zeroed_.push_back(t); }  // outputs that start at zero
  void set(std::function<void()> op, std::function<OpCheck()> compare_outputs) {
    op_ = std::move(op);
    compare_ = std::move(compare_outputs);
    restore();
  }
  void run() override { op_(); }
  OpCheck check() override {
    restore();
    op_();
    backend_.synchronize();
    return compare_();
  }

 private:
  void restore();
  Backend& backend_;
  std::vector<std::pair<Tensor, HostFloats>> floats_;
  std::vector<std::pair<Tensor, HostInts>> ints_;
  std::vector<Tensor> zeroed_;
  std::function<void()> op_;
  std::function<OpCheck()> compare_;
};

// "op k=v k=v type": a case's name from its op and extents.
std::string shape_name(const char* op, std::initializer_list<std::pair<const char*, std::int64_t>> dims,
                       ScalarType type);

// Bytes of `count` elements of `type`.
inline double bytes_of(std::int64_t count, ScalarType type) {
  return static_cast<double>(count) * static_cast<double>(scalar_bytes(type));
}
// Per-type tolerances of the element-wise vector ops: f32 vs bf16 rounding of outputs.
Tolerance vector_tolerance(ScalarType type);

}  // namespace hdlab::executor::detail
