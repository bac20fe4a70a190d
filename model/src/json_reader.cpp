#include "hdlab/model/json_reader.hpp"

#include <algorithm>
#include <cmath>

namespace hdlab::model {

using nlohmann::json;

std::string pointer_join(const std::string& pointer, const std::string& key) {
  std::string out = pointer + "/";
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string pointer_join(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

std::string json_type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    default: return "value";
  }
}

void fail(const std::string& pointer, const std::string& reason) { throw ConfigError(pointer, reason); }

namespace {

std::string shown(const json& j) {
  std::string s = j.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// "null", "string \"big\"", "array [1,2]": the type and, where it helps, the value.
std::string described(const json& j) {
  if (j.is_null()) return "null";
  return json_type_name(j) + " " + shown(j);
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::int64_t read_integer(const json& j, const std::string& pointer, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  if (j.is_number_unsigned()) {
    auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(pointer, "must be <= " + std::to_string(max) + ", got " + shown(j));
    v = static_cast<std::int64_t>(u);
  } else if (j.is_number_integer()) {
    v = j.get<std::int64_t>();
  } else if (j.is_number_float()) {
    double d = j.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) fail(pointer, "must be an integer, got " + shown(j));
    if (d < -9.2e18 || d > 9.2e18)
      fail(pointer, (d < 0 ? "must be >= " + std::to_string(min) : "must be <= " + std::to_string(max)) +
                        ", got " + shown(j));
    v = static_cast<std::int64_t>(d);
  } else {
    fail(pointer, "must be an integer, got " + described(j));
  }
  if (v < min) fail(pointer, "must be >= " + std::to_string(min) + ", got " + std::to_string(v));
  if (v > max) fail(pointer, "must be <= " + std::to_string(max) + ", got " + std::to_string(v));
  return v;
}

double read_number(const json& j, const std::string& pointer, double min, double max) {
  if (!j.is_number()) fail(pointer, "must be a number, got " + described(j));
  double v = j.get<double>();
  if (!std::isfinite(v)) fail(pointer, "must be finite");
  auto num = [](double x) {
    json t = x;
    return t.dump();
  };
  if (v < min) fail(pointer, "must be >= " + num(min) + ", got " + num(v));
  if (v > max) fail(pointer, "must be <= " + num(max) + ", got " + num(v));
  return v;
}

bool read_bool(const json& j, const std::string& pointer) {
  if (!j.is_boolean()) fail(pointer, "must be true or false, got " + described(j));
  return j.get<bool>();
}

std::string read_string(const json& j, const std::string& pointer) {
  if (!j.is_string()) fail(pointer, "must be a string, got " + described(j));
  return j.get<std::string>();
}

ObjectReader::ObjectReader(const json& j, std::string pointer) : json_(&j), pointer_(std::move(pointer)) {
  if (!j.is_object()) fail(pointer_.empty() ? "/" : pointer_, "must be an object, got " + json_type_name(j));
}

bool ObjectReader::has(const std::string& key) const { return json_->contains(key); }

const json* ObjectReader::find(const std::string& key) {
  known_.insert(key);
  auto it = json_->find(key);
  return it == json_->end() ? nullptr : &*it;
}

const json& ObjectReader::required(const std::string& key) {
  const json* v = find(key);
  if (!v) missing(key);
  return *v;
}

void ObjectReader::missing(const std::string& key) const {
  // A required key that is absent next to a near-miss spelling is most likely that typo:
  // name the typo, which is what the user has to fix.
  for (const auto& [other, value] : json_->items()) {
    if (!known_.count(other) && edit_distance(other, key) <= 2)
      fail(at(other), "unknown key (did you mean \"" + key + "\"?)");
  }
  fail(at(key), "is required");
}

std::int64_t ObjectReader::integer(const std::string& key, std::optional<std::int64_t> dflt, std::int64_t min,
                                   std::int64_t max) {
  const json* v = find(key);
  if (!v) {
    if (dflt) return *dflt;
    missing(key);
  }
  return read_integer(*v, at(key), min, max);
}

double ObjectReader::number(const std::string& key, std::optional<double> dflt, double min, double max) {
  const json* v = find(key);
  if (!v) {
    if (dflt) return *dflt;
    missing(key);
  }
  return read_number(*v, at(key), min, max);
}

bool ObjectReader::boolean(const std::string& key, std::optional<bool> dflt) {
  const json* v = find(key);
  if (!v) {
    if (dflt) return *dflt;
    missing(key);
  }
  return read_bool(*v, at(key));
}

std::string ObjectReader::string(const std::string& key, std::optional<std::string> dflt) {
  const json* v = find(key);
  if (!v) {
    if (dflt) return *dflt;
    missing(key);
  }
  return read_string(*v, at(key));
}

ObjectReader ObjectReader::object(const std::string& key) { return ObjectReader(required(key), at(key)); }

std::optional<ObjectReader> ObjectReader::optional_object(const std::string& key) {
  const json* v = find(key);
  if (!v) return std::nullopt;
  return ObjectReader(*v, at(key));
}

void ObjectReader::allow(std::initializer_list<const char*> keys) {
  for (const char* k : keys) known_.insert(k);
}

void ObjectReader::finish() const {
  for (const auto& [key, value] : json_->items()) {
    if (known_.count(key)) continue;
    std::string best;
    std::size_t best_d = 3;  // suggest only close matches
    for (const auto& k : known_) {
      std::size_t d = edit_distance(key, k);
      if (d < best_d) {
        best_d = d;
        best = k;
      }
    }
    std::string reason = "unknown key";
    if (!best.empty()) reason += " (did you mean \"" + best + "\"?)";
    fail(at(key), reason);
  }
}

}  // namespace hdlab::model
