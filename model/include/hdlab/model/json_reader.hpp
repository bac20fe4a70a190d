#pragma once
// Reading JSON objects into plain structs with exact error places. One ObjectReader
// wraps one JSON object at a JSON pointer; every getter checks type and range, and
// finish() rejects keys nobody asked for (a typo must not pass silently).
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/model/error.hpp"

namespace hdlab::model {

// "/a" + "b/c" -> "/a/b~1c" (RFC 6901 escaping).
std::string pointer_join(const std::string& pointer, const std::string& key);
std::string pointer_join(const std::string& pointer, std::size_t index);
// "integer", "string", "object", ...
std::string json_type_name(const nlohmann::json& j);
[[noreturn]] void fail(const std::string& pointer, const std::string& reason);

// Scalar checks usable on values that do not sit in an object (array items, roots).
std::int64_t read_integer(const nlohmann::json& j, const std::string& pointer,
                          std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                          std::int64_t max = std::numeric_limits<std::int64_t>::max());
double read_number(const nlohmann::json& j, const std::string& pointer,
                   double min = -std::numeric_limits<double>::infinity(),
                   double max = std::numeric_limits<double>::infinity());
bool read_bool(const nlohmann::json& j, const std::string& pointer);
std::string read_string(const nlohmann::json& j, const std::string& pointer);

class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& j, std::string pointer);

  const std::string& pointer() const { return pointer_; }
  std::string at(const std::string& key) const { return pointer_join(pointer_, key); }
  bool has(const std::string& key) const;
  // The raw value (marks the key as known); nullptr when absent.
  const nlohmann::json* find(const std::string& key);
  const nlohmann::json& required(const std::string& key);

  std::int64_t integer(const std::string& key, std::optional<std::int64_t> dflt,
                       std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                       std::int64_t max = std::numeric_limits<std::int64_t>::max());
  double number(const std::string& key, std::optional<double> dflt,
                double min = -std::numeric_limits<double>::infinity(),
                double max = std::numeric_limits<double>::infinity());
  bool boolean(const std::string& key, std::optional<bool> dflt);
  std::string string(const std::string& key, std::optional<std::string> dflt);

  // One of a fixed set of names.
  template <class E>
  E choice(const std::string& key, std::initializer_list<std::pair<const char*, E>> options,
           std::optional<E> dflt) {
    const nlohmann::json* v = find(key);
    if (!v) {
      if (dflt) return *dflt;
      missing(key);
    }
    std::string s = read_string(*v, at(key));
    std::string names;
    for (const auto& [name, value] : options) {
      if (s == name) return value;
      names += names.empty() ? "" : ", ";
      names += name;
    }
    fail(at(key), "must be one of " + names + ", got \"" + s + "\"");
  }

  ObjectReader object(const std::string& key);
  std::optional<ObjectReader> optional_object(const std::string& key);

  // Rejects keys that were never asked for, suggesting the closest known key.
  void finish() const;
  // Declares keys as known without reading them (documentation-only fields).
  void allow(std::initializer_list<const char*> keys);

 private:
  [[noreturn]] void missing(const std::string& key) const;
  const nlohmann::json* json_;
  std::string pointer_;
  std::set<std::string> known_;
};

}  // namespace hdlab::model
