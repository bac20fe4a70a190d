// Config documents (backbone + design), model files, JSON files and the command-line
// design shorthand.
#include "hdlab/model/config_io.hpp"

#include <sstream>

#include "hdlab/model/files.hpp"
#include "hdlab/model/hf_import.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::model {

Backbone load_backbone(const Json& doc, const std::string& pointer) {
  if (looks_like_hf_config(doc)) return import_hf_config(doc, pointer);
  if (doc.is_object() && doc.contains("backbone")) return parse_backbone(doc["backbone"], pointer + "/backbone");
  if (doc.is_object() && doc.contains("hf_config")) return import_hf_config(doc["hf_config"], pointer + "/hf_config");
  return parse_backbone(doc, pointer);
}

Config make_config(const Backbone& base, const Design& design) {
  validate(base, "/backbone");
  // The design's JSON form round-trips exactly, so checking it through the parser keeps
  // every design check in one place.
  Design checked = parse_design(to_json(design), base, "/design");
  Backbone effective = checked.growth ? grow(base, *checked.growth) : base;
  return Config{base, std::move(checked), std::move(effective)};
}

Config parse_config(const Json& doc) {
  ObjectReader r(doc, "");
  r.allow({"description"});
  Backbone base;
  if (const Json* b = r.find("backbone")) base = parse_backbone(*b, "/backbone");
  else if (const Json* h = r.find("hf_config")) base = import_hf_config(*h, "/hf_config");
  else fail("/backbone", "is required (or \"hf_config\")");
  Design d;
  if (const Json* dj = r.find("design")) d = parse_design(*dj, base, "/design");
  r.finish();
  return Config{base, d, d.growth ? grow(base, *d.growth) : base};
}

Json to_json(const Config& c) { return Json{{"backbone", to_json(c.base)}, {"design", to_json(c.design)}}; }

Json read_json_file(const std::string& path) {
  const std::string text = read_text_file(path);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.byte is the offset; turn it into line:column.
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw ConfigError(path, "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(col));
  } catch (const Json::exception&) {
    // e.g. a number too large for a double (1e400): nlohmann reports it as out_of_range.
    throw ConfigError(path, "invalid JSON: a number is out of range");
  }
}

Json design_json_from_shorthand(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.front() == '{') {
    try {
      return Json::parse(t);
    } catch (const Json::exception&) {  // syntax errors and numbers out of range
      throw ConfigError("/design", "is not valid JSON: " + text);
    }
  }
  // kind[:key=value,key=value]; a value that parses as JSON is taken as such, otherwise
  // as a string; lists use '/' inside a value: layers=full/intra/intra.
  const auto colon = t.find(':');
  std::string kind = t.substr(0, colon);
  if (kind.empty()) throw ConfigError("/design", "is empty");
  Json body = Json::object();
  if (colon != std::string::npos) {
    std::stringstream items(t.substr(colon + 1));
    std::string item;
    while (std::getline(items, item, ',')) {
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0)
        throw ConfigError("/design/" + kind, "shorthand item \"" + item + "\" is not key=value");
      const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
      auto scalar = [](const std::string& v) {
        try {
          Json p = Json::parse(v);
          if (!p.is_structured()) return p;
        } catch (const Json::exception&) {  // not JSON (or out of range): taken as text
        }
        return Json(v);
      };
      if (value.find('/') != std::string::npos) {
        Json list = Json::array();
        std::stringstream parts(value);
        std::string part;
        while (std::getline(parts, part, '/')) list.push_back(scalar(part));
        body[key] = list;
      } else {
        body[key] = scalar(value);
      }
    }
  }
  return Json{{kind, body}};
}

}  // namespace hdlab::model