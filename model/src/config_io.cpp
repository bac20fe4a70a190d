// Config documents (backbone + design), model files, JSON files and the command-line
// design shorthand.
#include "hdlab/model/config_io.hpp"

#include <sstream>

#include "hdlab/model/files.hpp"
#include "hdlab/model/hf_import.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::model {

namespace {

// The backbone of a config document: "backbone" (our format) or "hf_config" (an embedded
// HuggingFace config.json, with an optional "dtype" beside it: the working precision to
// model instead of bf16). The document's other keys are read by the caller.
Backbone document_backbone(ObjectReader& r) {
  if (const Json* b = r.find("backbone")) {
    if (r.has("hf_config")) fail(r.at("hf_config"), "a config document has one backbone; \"backbone\" is already given");
    return parse_backbone(*b, r.at("backbone"));
  }
  if (const Json* h = r.find("hf_config")) {
    Backbone b = import_hf_config(*h, r.at("hf_config"));
    if (r.find("dtype")) {
      b.dtype = r.choice<DType>(
          "dtype", {{"bf16", DType::bf16}, {"fp16", DType::fp16}, {"fp32", DType::fp32}, {"fp8", DType::fp8}},
          std::nullopt);
      b.assumptions.erase("dtype");  // chosen by the user, not assumed
    }
    return b;
  }
  fail(r.at("backbone"), "is required (or \"hf_config\")");
}

// The keys of a config document; anything else is a typo ("desing") and an error, found
// before the parts are read so that the typo is what gets reported.
void check_document_keys(ObjectReader& r) {
  r.allow({"description", "backbone", "hf_config", "design"});
  if (r.has("hf_config")) r.allow({"dtype"});
  else if (r.has("dtype")) fail(r.at("dtype"), "belongs inside \"backbone\" (beside it only with \"hf_config\")");
  r.finish();
}

}  // namespace

Backbone load_backbone(const Json& doc, const std::string& pointer) {
  if (looks_like_hf_config(doc)) return import_hf_config(doc, pointer);
  if (doc.is_object() && (doc.contains("backbone") || doc.contains("hf_config"))) {
    ObjectReader r(doc, pointer);
    check_document_keys(r);
    return document_backbone(r);
  }
  return parse_backbone(doc, pointer);
}

Config make_config(const Backbone& base, const Design& design) {
  validate(base, "/backbone");
  // The design's JSON form round-trips exactly, so checking it through the parser keeps
  // every design check in one place.
  Design checked = parse_design(to_json(design), base, "/design");
  checked.defaults = design.defaults;  // to_json wrote every value explicitly; keep what was defaulted
  Backbone effective = checked.growth ? grow(base, *checked.growth) : base;
  return Config{base, std::move(checked), std::move(effective)};
}

Config parse_config(const Json& doc) {
  ObjectReader r(doc, "");
  check_document_keys(r);
  const Backbone base = document_backbone(r);
  Design d;
  if (const Json* dj = r.find("design")) d = parse_design(*dj, base, "/design");
  return Config{base, d, d.growth ? grow(base, *d.growth) : base};
}

Json to_json(const Config& c) { return Json{{"backbone", to_json(c.base)}, {"design", to_json(c.design)}}; }

Json read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

Json design_json_from_shorthand(const std::string& text) {
  if (text.empty()) fail("/design", "is empty (give baseline, a shorthand such as hd:n=4, a JSON object or a file)");
  if (text.front() == '{') return parse_json_text(text, "/design");
  // kind[:key=value,key=value]; a value that parses as a JSON scalar is taken as such,
  // otherwise as a string; lists use '/' inside a value: layers=full/intra/intra.
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  if (kind.empty()) {
    std::string kinds;
    for (const std::string& k : design_keys()) kinds += (kinds.empty() ? "" : ", ") + k;
    fail("/design", "\"" + text + "\" names no design kind before ':' (" + kinds + ")");
  }
  Json body = Json::object();
  if (colon != std::string::npos) {
    std::stringstream items(text.substr(colon + 1));
    std::string item;
    while (std::getline(items, item, ',')) {
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0)
        fail(pointer_join("/design", kind), "shorthand item \"" + item + "\" is not key=value");
      const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
      if (body.contains(key))
        fail(pointer_join(pointer_join("/design", kind), key),
             "is given twice in \"" + text + "\" (which value is meant?)");
      if (value.find('/') != std::string::npos) {
        Json list = Json::array();
        std::stringstream parts(value);
        std::string part;
        while (std::getline(parts, part, '/')) list.push_back(json_scalar_or_text(part));
        body[key] = list;
      } else {
        body[key] = json_scalar_or_text(value);
      }
    }
  }
  return Json{{kind, body}};
}

}  // namespace hdlab::model
