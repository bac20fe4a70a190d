#pragma once
// Safetensors files (the Hugging Face weight format): an 8-byte little-endian header
// length N, N bytes of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]},
// "__metadata__": {string: string}}, then the data section the offsets point into.
//
// The reader checks the whole header before any tensor is read (offsets inside the
// file, sizes equal to shape x element size) and reads one tensor at a time, so loading
// a model never holds more than one tensor on the host. Every error names the file and,
// where there is one, the tensor. The writer streams tensors into a temporary file in
// the target folder and renames it into place, so a crash never leaves a torn file.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hdlab/executor/tensor.hpp"

namespace hdlab::executor {

class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Element types we read (F32, BF16, F16) and write (F32, BF16; I64 for integer tensors:
// token ids, positions). Others are listed by name in the header and refused when asked
// for as weights.
enum class StDtype { f32, bf16, f16, i64 };
const char* to_string(StDtype t);  // "F32", "BF16", "F16", "I64"

// IEEE half precision <-> float (round to nearest even).
float f16_to_f32(std::uint16_t h);
std::uint16_t f32_to_f16(float x);

struct SafetensorsEntry {
  std::string dtype;           // as written in the header ("F32", "I64", ...)
  Shape shape;
  std::uint64_t begin = 0;     // byte offsets in the data section
  std::uint64_t end = 0;
};

class SafetensorsReader {
 public:
  // Reads and checks the header; SafetensorsError naming the file (and the tensor) for
  // a missing file, a header that runs past the end, bad JSON (model::parse_json_text's
  // rules: a tensor named twice, nesting too deep), an entry with a bad shape / dtype /
  // offsets, offsets past the end of the data (a truncated body), and data the tensors
  // do not tile exactly (overlapping offsets, a gap between tensors, trailing bytes).
  explicit SafetensorsReader(std::string path);

  const std::string& path() const { return path_; }
  const std::map<std::string, SafetensorsEntry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool contains(const std::string& name) const { return entries_.count(name) > 0; }

  // The tensor's values as floats. SafetensorsError naming the tensor when it is absent,
  // its shape differs from `expected`, its dtype is not F32/BF16/F16, or a value is NaN
  // or infinite (naming the element).
  std::vector<float> read_f32(const std::string& name, const Shape& expected) const;
  // read_f32's checks without reading: present, of shape `expected`, a float dtype.
  void require_float_tensor(const std::string& name, const Shape& expected) const;

 private:
  void check_data_layout(std::uint64_t data_bytes) const;

  std::string path_;
  std::uint64_t data_start_ = 0;  // 8 + header length
  std::map<std::string, SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

struct SafetensorsTensorSpec {
  SafetensorsTensorSpec(std::string n, Shape s, std::optional<StDtype> d = {})
      : name(std::move(n)), shape(std::move(s)), dtype(d) {}
  std::string name;
  Shape shape;
  std::optional<StDtype> dtype;  // this tensor's stored type; unset: the file's
};

// Writes `tensors` in order, each tensor's values from `values(spec)` (row-major,
// element_count(shape) floats), stored as the spec's dtype or else `dtype` (I64: the
// floats must be whole numbers of magnitude <= 2^24, which floats hold exactly).
// Atomic: a temporary file beside `path`, renamed into place when complete.
// SafetensorsError naming the path when the folder is missing or not writable, a
// tensor's values have the wrong count, or an I64 value is not such a whole number.
void write_safetensors(const std::string& path, const std::vector<SafetensorsTensorSpec>& tensors,
                       const std::function<std::vector<float>(const SafetensorsTensorSpec&)>& values, StDtype dtype,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace hdlab::executor
