// Safetensors reading and writing; see safetensors.hpp for the format and the checks.
#include "hdlab/executor/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string_view>

#include <nlohmann/json.hpp>
#include <tuple>
#include <unistd.h>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/files.hpp"

namespace hdlab::executor {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; so must the host be");

namespace {

using Json = nlohmann::json;

// A header larger than this is refused rather than read (real ones are kilobytes to a
// few megabytes).
constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{1} << 30;

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw SafetensorsError(path + ": " + message);
}

// Bytes per element of the dtypes the format defines; 0 for names it does not know.
std::uint64_t dtype_bytes(const std::string& dtype) {
  static const std::map<std::string, std::uint64_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},     {"I32", 4},     {"I16", 2},
      {"I8", 1},  {"U8", 1},  {"U16", 2}, {"U32", 4},  {"U64", 8},     {"BOOL", 1},    {"F8_E4M3", 1},
      {"F8_E5M2", 1}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

SafetensorsEntry parse_entry(const std::string& path, const std::string& name, const Json& j,
                             std::uint64_t data_bytes) {
  const std::string where = "tensor \"" + name + "\": ";
  if (!j.is_object()) fail(path, where + "header entry is not an object");
  SafetensorsEntry e;
  if (!j.contains("dtype") || !j["dtype"].is_string()) fail(path, where + "missing or non-string \"dtype\"");
  e.dtype = j["dtype"].get<std::string>();
  const std::uint64_t elem = dtype_bytes(e.dtype);
  if (elem == 0) fail(path, where + "unknown dtype \"" + e.dtype + "\"");
  if (!j.contains("shape") || !j["shape"].is_array()) fail(path, where + "missing or non-array \"shape\"");
  std::uint64_t count = 1;
  for (const Json& d : j["shape"]) {
    if (!d.is_number_unsigned()) fail(path, where + "shape entries must be non-negative integers");
    const auto v = d.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        (v != 0 && count > std::numeric_limits<std::uint64_t>::max() / v))
      fail(path, where + "shape is too large");
    count *= v;
    e.shape.push_back(static_cast<std::int64_t>(v));
  }
  const Json* off = j.contains("data_offsets") ? &j["data_offsets"] : nullptr;
  if (!off || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned())
    fail(path, where + "\"data_offsets\" must be [begin, end] with non-negative integers");
  e.begin = (*off)[0].get<std::uint64_t>();
  e.end = (*off)[1].get<std::uint64_t>();
  if (e.end < e.begin) fail(path, where + "data_offsets end before they begin");
  if (count > std::numeric_limits<std::uint64_t>::max() / elem || e.end - e.begin != count * elem)
    fail(path, where + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ") hold " +
                   std::to_string(e.end - e.begin) + " bytes but shape " + to_string(e.shape) + " of " + e.dtype +
                   " needs " + std::to_string(count * elem));
  if (e.end > data_bytes)
    fail(path, where + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                   ") run past the end of the data section (" + std::to_string(data_bytes) +
                   " bytes): the file is truncated or the offsets are out of range");
  return e;
}

}  // namespace

const char* to_string(StDtype t) {
  switch (t) {
    case StDtype::f32: return "F32";
    case StDtype::bf16: return "BF16";
    case StDtype::f16: return "F16";
    case StDtype::i64: return "I64";
  }
  return "?";
}

float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t f32_to_f16(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t exp = (bits >> 23) & 0xffu, mant = bits & 0x7fffffu;
  if (exp == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {
    if (e < -10) return sign;
    const std::uint32_t m = mant | 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = m >> shift;
    const std::uint32_t rest = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(sign | half);
}

SafetensorsReader::SafetensorsReader(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_, std::ios::binary);
  if (!in) fail(path_, "cannot open for reading");
  in.seekg(0, std::ios::end);
  const auto file_bytes = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  if (file_bytes < 8) fail(path_, "only " + std::to_string(file_bytes) + " bytes: not a safetensors file");
  unsigned char len_bytes[8];
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | len_bytes[i];
  if (header_bytes > file_bytes - 8 || header_bytes > kMaxHeaderBytes)
    fail(path_, "header length " + std::to_string(header_bytes) + " runs past the end of the file (" +
                    std::to_string(file_bytes) + " bytes): truncated or not a safetensors file");
  std::string header(static_cast<std::size_t>(header_bytes), '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_bytes));
  if (!in) fail(path_, "cannot read the header");
  Json j;
  try {
    j = model::parse_json_text(header, path_);
  } catch (const model::ConfigError& e) {  // syntax, depth, repeated tensor names, numbers out of range
    fail(path_, "header: " + e.reason());
  }
  if (!j.is_object()) fail(path_, "header is not a JSON object");
  data_start_ = 8 + header_bytes;
  const std::uint64_t data_bytes = file_bytes - data_start_;
  for (const auto& [name, value] : j.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) fail(path_, "__metadata__ is not an object");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) fail(path_, "__metadata__ \"" + k + "\" is not a string");
        metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    entries_[name] = parse_entry(path_, name, value, data_bytes);
  }
  check_data_layout(data_bytes);
}

void SafetensorsReader::check_data_layout(std::uint64_t data_bytes) const {
  // As the reference implementation validates: the tensors tile the data section exactly,
  // in offset order, with no overlap, no gap and nothing after the last one. Bytes no
  // tensor owns mean the header and the data do not belong together.
  std::vector<std::pair<const std::string*, const SafetensorsEntry*>> by_offset;
  for (const auto& [name, e] : entries_) by_offset.emplace_back(&name, &e);
  std::sort(by_offset.begin(), by_offset.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second->begin, a.second->end) < std::tie(b.second->begin, b.second->end);
  });
  std::uint64_t covered = 0;
  const std::string* previous = nullptr;
  auto range = [](const SafetensorsEntry& e) {
    return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + ")";
  };
  for (const auto& [name, e] : by_offset) {
    const std::string where = "tensor \"" + *name + "\": data_offsets " + range(*e);
    if (e->begin < covered)
      fail(path_, where + " overlap tensor \"" + *previous + "\" " + range(entries_.at(*previous)) +
                      ": two tensors cannot share bytes");
    if (e->begin > covered)
      fail(path_, where + " leave bytes [" + std::to_string(covered) + ", " + std::to_string(e->begin) +
                      ") that no tensor owns" + (previous ? " after tensor \"" + *previous + "\"" : std::string()));
    covered = e->end;
    previous = name;
  }
  if (covered != data_bytes)
    fail(path_, std::to_string(data_bytes - covered) + " trailing bytes after the last tensor's data (" +
                    (previous ? "\"" + *previous + "\" ends at " : std::string("no tensors: ")) +
                    std::to_string(covered) + " of " + std::to_string(data_bytes) +
                    " data bytes): the file holds more than its header describes");
}

void SafetensorsReader::require_float_tensor(const std::string& name, const Shape& expected) const {
  const auto it = entries_.find(name);
  if (it == entries_.end())
    fail(path_, "tensor \"" + name + "\" is missing (the file has " + std::to_string(entries_.size()) + " tensors)");
  const SafetensorsEntry& e = it->second;
  if (e.shape != expected)
    fail(path_, "tensor \"" + name + "\" has shape " + to_string(e.shape) + ", the model needs " + to_string(expected));
  if (e.dtype != "F32" && e.dtype != "BF16" && e.dtype != "F16")
    fail(path_, "tensor \"" + name + "\" has dtype " + e.dtype + "; weights must be F32, BF16 or F16");
}

std::vector<float> SafetensorsReader::read_f32(const std::string& name, const Shape& expected) const {
  require_float_tensor(name, expected);
  const SafetensorsEntry& e = entries_.at(name);
  const std::size_t count = static_cast<std::size_t>(element_count(e.shape));
  std::vector<float> out(count);
  std::ifstream in(path_, std::ios::binary);
  if (!in) fail(path_, "cannot open for reading");
  in.seekg(static_cast<std::streamoff>(data_start_ + e.begin));
  if (e.dtype == "F32") {
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(count * 4));
  } else {
    std::vector<std::uint16_t> raw(count);
    in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(count * 2));
    const bool bf16 = e.dtype == "BF16";
    for (std::size_t i = 0; i < count; ++i) out[i] = bf16 ? bf16_to_f32(raw[i]) : f16_to_f32(raw[i]);
  }
  // The header was checked against the size at open; a file cut short since then.
  if (!in) fail(path_, "tensor \"" + name + "\": the data ends early (file truncated while reading?)");
  for (std::size_t i = 0; i < count; ++i)
    if (!std::isfinite(out[i]))
      fail(path_, "tensor \"" + name + "\": element " + std::to_string(i) + " is " +
                      (std::isnan(out[i]) ? "NaN" : "infinite") + ": not a usable weight (a corrupt or diverged checkpoint)");
  return out;
}

namespace {

std::uint64_t element_bytes(StDtype t) {
  switch (t) {
    case StDtype::f32: return 4;
    case StDtype::bf16:
    case StDtype::f16: return 2;
    case StDtype::i64: return 8;
  }
  return 0;
}

// One tensor's bytes as stored.
std::string encode(const std::string& path, const SafetensorsTensorSpec& t, const std::vector<float>& v, StDtype dtype) {
  auto bytes_of = [](const auto& raw) {
    return std::string(reinterpret_cast<const char*>(raw.data()), raw.size() * sizeof(raw[0]));
  };
  switch (dtype) {
    case StDtype::f32: return bytes_of(v);
    case StDtype::i64: {
      std::vector<std::int64_t> raw(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] != std::trunc(v[i]) || std::abs(v[i]) > 16777216.0f)
          fail(path, "tensor \"" + t.name + "\": element " + std::to_string(i) +
                         " is not a whole number of magnitude <= 2^24, so not exactly an I64 from a float");
        raw[i] = static_cast<std::int64_t>(v[i]);
      }
      return bytes_of(raw);
    }
    case StDtype::bf16:
    case StDtype::f16: {
      std::vector<std::uint16_t> raw(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) raw[i] = dtype == StDtype::bf16 ? f32_to_bf16(v[i]) : f32_to_f16(v[i]);
      return bytes_of(raw);
    }
  }
  return {};
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<SafetensorsTensorSpec>& tensors,
                       const std::function<std::vector<float>(const SafetensorsTensorSpec&)>& values, StDtype dtype,
                       const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (header.contains(t.name)) fail(path, "tensor \"" + t.name + "\" is listed twice");
    const StDtype type = t.dtype.value_or(dtype);
    const std::uint64_t bytes = static_cast<std::uint64_t>(element_count(t.shape)) * element_bytes(type);
    header[t.name] = {{"dtype", to_string(type)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  while (text.size() % 8 != 0) text += ' ';  // align the data section to 8 bytes

  // model::AtomicFileWriter: a temporary renamed into place, links written through and
  // devices never replaced, as every hdlab output (model/files.hpp).
  model::AtomicFileWriter out(path);
  unsigned char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<unsigned char>((text.size() >> (8 * i)) & 0xffu);
  out.write(std::string_view(reinterpret_cast<const char*>(len_bytes), 8));
  out.write(text);
  for (const auto& t : tensors) {
    const std::vector<float> v = values(t);
    if (static_cast<std::int64_t>(v.size()) != element_count(t.shape))
      fail(path, "tensor \"" + t.name + "\": " + std::to_string(v.size()) + " values for shape " + to_string(t.shape));
    out.write(encode(path, t, v, t.dtype.value_or(dtype)));
  }
  out.commit();
}

}  // namespace hdlab::executor
