#include "hdlab/executor/tensor.hpp"

#include <bit>
#include <cstring>
#include <sstream>

#include "hdlab/executor/backend.hpp"

namespace hdlab::executor {

std::size_t scalar_bytes(ScalarType t) {
  switch (t) {
    case ScalarType::f32: return 4;
    case ScalarType::bf16: return 2;
    case ScalarType::i32: return 4;
  }
  return 0;
}

const char* to_string(ScalarType t) {
  switch (t) {
    case ScalarType::f32: return "f32";
    case ScalarType::bf16: return "bf16";
    case ScalarType::i32: return "i32";
  }
  return "?";
}

std::uint16_t f32_to_bf16(float x) {
  const auto u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0)
    return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // keep NaN a (quiet) NaN
  const std::uint32_t lsb = (u >> 16) & 1u;
  return static_cast<std::uint16_t>((u + 0x7fffu + lsb) >> 16);  // round to nearest even
}

float bf16_to_f32(std::uint16_t x) { return std::bit_cast<float>(static_cast<std::uint32_t>(x) << 16); }

Storage::~Storage() {
  if (owner) owner->release(ptr, bytes);
}

std::string to_string(const Shape& s) {
  std::ostringstream o;
  o << '[';
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << ']';
  return o.str();
}

std::int64_t element_count(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

Tensor::Tensor(std::shared_ptr<Storage> storage, std::size_t offset_bytes, ScalarType type, Shape shape)
    : storage_(std::move(storage)), offset_(offset_bytes), type_(type), shape_(std::move(shape)) {}

std::int64_t Tensor::dim(int i) const {
  const int r = rank();
  const int j = i < 0 ? r + i : i;
  if (j < 0 || j >= r) throw BackendError("tensor " + to_string(shape_) + " has no dimension " + std::to_string(i));
  return shape_[static_cast<std::size_t>(j)];
}

std::int64_t Tensor::matrix_rows() const {
  if (shape_.empty()) return 1;
  const auto cols = shape_.back();
  return cols == 0 ? 0 : numel() / cols;
}

void* Tensor::data() const {
  if (!storage_ || !storage_->ptr) return nullptr;
  return static_cast<char*>(storage_->ptr) + offset_;
}

bool Tensor::overlaps(const Tensor& other) const {
  if (!storage_ || storage_ != other.storage_) return false;
  const std::size_t a0 = offset_, a1 = offset_ + bytes();
  const std::size_t b0 = other.offset_, b1 = other.offset_ + other.bytes();
  return a0 < b1 && b0 < a1;
}

bool Tensor::same_view(const Tensor& other) const {
  return storage_ == other.storage_ && offset_ == other.offset_ && type_ == other.type_ && shape_ == other.shape_;
}

Tensor Tensor::slice_rows(std::int64_t first, std::int64_t count) const {
  if (shape_.empty()) throw BackendError("slice_rows of a scalar tensor");
  if (first < 0 || count < 0 || first + count > shape_[0])
    throw BackendError("slice_rows(" + std::to_string(first) + ", " + std::to_string(count) + ") of " +
                       to_string(shape_));
  Shape s = shape_;
  s[0] = count;
  const std::int64_t row_elems = shape_[0] == 0 ? 0 : numel() / shape_[0];
  return Tensor(storage_, offset_ + static_cast<std::size_t>(first * row_elems) * scalar_bytes(type_), type_,
                std::move(s));
}

Tensor Tensor::reshaped(Shape shape) const {
  if (element_count(shape) != numel())
    throw BackendError("cannot reshape " + to_string(shape_) + " to " + to_string(shape));
  return Tensor(storage_, offset_, type_, std::move(shape));
}

}  // namespace hdlab::executor
