#pragma once
// Tensors of the executor: row-major, contiguous views of one backend allocation.
//
// A Tensor does not know whether its bytes sit in host or device memory; its Backend
// does. Ops take tensors and check their shapes; only the backend that allocated a
// tensor may run ops on it.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace hdlab::executor {

// Element types. CPU ops compute in f32; CUDA ops read and write f32 or bf16 and
// accumulate in f32. i32 carries indices (token ids, positions, expert ids).
enum class ScalarType { f32, bf16, i32 };
std::size_t scalar_bytes(ScalarType t);
const char* to_string(ScalarType t);

// bf16 on the host: the upper 16 bits of an IEEE f32, rounded to nearest even.
std::uint16_t f32_to_bf16(float x);
float bf16_to_f32(std::uint16_t x);
inline float round_to_bf16(float x) { return bf16_to_f32(f32_to_bf16(x)); }

class Backend;

// One allocation of a backend; returns its bytes to the backend when the last view goes.
struct Storage {
  Backend* owner = nullptr;
  void* ptr = nullptr;
  std::size_t bytes = 0;
  Storage(Backend* o, void* p, std::size_t b) : owner(o), ptr(p), bytes(b) {}
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();
};

using Shape = std::vector<std::int64_t>;
std::string to_string(const Shape& s);  // "[4, 8, 64]"
std::int64_t element_count(const Shape& s);

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<Storage> storage, std::size_t offset_bytes, ScalarType type, Shape shape);

  bool defined() const { return storage_ != nullptr; }
  ScalarType type() const { return type_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  // Extent of dimension i; negative i counts from the end (-1 = last).
  std::int64_t dim(int i) const;
  std::int64_t numel() const { return element_count(shape_); }
  std::size_t bytes() const { return static_cast<std::size_t>(numel()) * scalar_bytes(type_); }
  // Seen as a matrix: leading dimensions flattened into rows, the last one is columns.
  std::int64_t matrix_rows() const;
  std::int64_t matrix_cols() const { return shape_.empty() ? 1 : shape_.back(); }

  // Host pointer (CPU backend) or device pointer (CUDA backend).
  void* data() const;
  template <class T>
  T* data_as() const { return static_cast<T*>(data()); }
  const Backend* owner() const { return storage_ ? storage_->owner : nullptr; }
  // Whether two views share bytes (for ops that allow or forbid aliasing).
  bool overlaps(const Tensor& other) const;
  bool same_view(const Tensor& other) const;

  // Rows [first, first + count) of the leading dimension, sharing the allocation.
  Tensor slice_rows(std::int64_t first, std::int64_t count) const;
  // The same bytes under another shape with the same element count.
  Tensor reshaped(Shape shape) const;

 private:
  std::shared_ptr<Storage> storage_;
  std::size_t offset_ = 0;  // bytes from the start of the allocation
  ScalarType type_ = ScalarType::f32;
  Shape shape_;
};

}  // namespace hdlab::executor
