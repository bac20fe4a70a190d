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

// Reads a JSON file; unreadable files and syntax errors become ConfigErrors naming the
// file (and line/column for syntax errors).
Json read_json_file(const std::string& path);

// A model file is either our config document, a bare backbone object, or a HuggingFace
// config.json (recognised by "model_type" or "architectures").
Backbone load_backbone(const Json& doc, const std::string& pointer = "");

// A design given on the command line: a JSON object ("{\"hd\":{\"n\":4}}"), or the
// shorthand "hd:n=4,window=512" (values parsed as JSON scalars, else strings), or
// "baseline".
Json design_json_from_shorthand(const std::string& text);

}  // namespace hdlab::model
