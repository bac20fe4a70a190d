#pragma once
// JSON in and out for backbones, designs and configs. Parsing happens here, at the edge,
// into the plain structs of backbone.hpp / design.hpp: every key is known (unknown keys
// are errors, with a "did you mean" hint), every value is type- and range-checked, and
// every error is a ConfigError naming the JSON pointer and the reason.
#include <string>

#include <nlohmann/json.hpp>

#include "hdlab/model/backbone.hpp"
#include "hdlab/model/design.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::model {

using Json = nlohmann::json;

// Bounds that refuse absurd sizes before anything is allocated.
struct Limits {
  static constexpr std::int64_t max_layers = 4096;
  static constexpr std::int64_t max_hidden = 1 << 20;
  static constexpr std::int64_t max_heads = 1 << 14;
  static constexpr std::int64_t max_head_dim = 1 << 14;
  static constexpr std::int64_t max_intermediate = 1 << 22;
  static constexpr std::int64_t max_vocab = 1 << 24;
  static constexpr std::int64_t max_experts = 1 << 16;
  static constexpr std::int64_t max_window = std::int64_t{1} << 40;
  static constexpr std::int64_t max_streams = 1024;      // HD n
  static constexpr std::int64_t max_copies = 4096;       // PHD K
  static constexpr std::int64_t max_width_slots = 4096;  // VWN m, n
  static constexpr std::int64_t max_iterations = 4096;   // looped K
  static constexpr std::int64_t max_growth_factor = 64;
};

// Backbone: our own format (see profiles/models/*.json). `pointer` prefixes error places.
Backbone parse_backbone(const Json& j, const std::string& pointer = "/backbone");
Json to_json(const Backbone& b);
void validate(const Backbone& b, const std::string& pointer = "/backbone");

// Design, checked against the base backbone (growth applied first, then the method
// is checked against the grown backbone).
Design parse_design(const Json& j, const Backbone& base, const std::string& pointer = "/design");
Json to_json(const Design& d);

// A config document: {"backbone": {...}, "design": {...}}; "design" may be absent
// (baseline). The backbone may also be given as {"hf_config": {...}} (an embedded
// HuggingFace config.json).
Config parse_config(const Json& doc);
Json to_json(const Config& c);  // normalised: every field explicit
// Builds a Config from parts, applying growth and validating everything.
Config make_config(const Backbone& base, const Design& design);

// Deepest nesting of objects and arrays hdlab accepts in JSON input (the top-level
// value is level 1). Real inputs nest a handful of levels; the limit keeps every
// recursive walk of a parsed document (copies, comparisons, dumps) bounded.
inline constexpr int max_json_depth = 128;

// Parses JSON text a user gave: a file's contents, an inline --design, a safetensors
// header. Every user-written JSON goes through here. `source` names the text in errors
// (a path, "/design"). ConfigError(source, why) for: a syntax error (line, column and
// the parser's reason, e.g. "unexpected '}'; expected string literal"), a number out of
// double's range, nesting deeper than max_json_depth, and an object that repeats a key
// (the JSON pointer of the object and the key: parsers keep one value and silently drop
// the other).
Json parse_json_text(const std::string& text, const std::string& source);

// Reads and parses a JSON file (parse_json_text with the path as the source); an
// unreadable file is a ConfigError naming the path.
Json read_json_file(const std::string& path);

// A value written on a command line or in a shorthand: a JSON scalar when the text is one
// ("4", "true", "0.5", "\"x\""), else the text itself as a string (also for objects and
// arrays, which a scalar slot never takes).
Json json_scalar_or_text(const std::string& text);

// A model file is either our config document, a bare backbone object, or a HuggingFace
// config.json (recognised by "model_type" or "architectures").
Backbone load_backbone(const Json& doc, const std::string& pointer = "");

// A design given on the command line: a JSON object ("{\"hd\":{\"n\":4}}"), or the
// shorthand "hd:n=4,window=512" (values parsed as JSON scalars, else strings; a list as
// "layers=full/intra"), or "baseline". Errors name "/design" (or "/design/<kind>/<key>"):
// an empty text, a key given twice, an item that is not key=value, invalid JSON.
Json design_json_from_shorthand(const std::string& text);

}  // namespace hdlab::model
