#include "common.hpp"

#include <filesystem>
#include <iostream>

#include "hdlab/model/hf_import.hpp"

namespace hdlab::cli {

void ModelOptions::add_to(CLI::App& app) {
  app.add_option("model", model_path, "Model file: hdlab config/backbone JSON or a HuggingFace config.json")
      ->required();
  app.add_option("-d,--design", design,
                 "Design: a JSON file, inline JSON ('{\"hd\":{\"n\":4}}') or shorthand (hd:n=4,layers=intra)");
}

model::Config load_config(const ModelOptions& o) {
  using model::Json;
  const Json doc = model::read_json_file(o.model_path);
  const model::Backbone base = model::load_backbone(doc);
  Json design_json = Json::object();
  if (!o.design.empty()) {
    if (std::filesystem::exists(o.design)) {
      design_json = model::read_json_file(o.design);
      // A config document's "design" part (a design object has no "design" key itself).
      if (design_json.is_object() && design_json.contains("design")) design_json = Json(design_json["design"]);
    } else {
      design_json = model::design_json_from_shorthand(o.design);
    }
  } else if (doc.is_object() && doc.contains("design") && !model::looks_like_hf_config(doc)) {
    design_json = doc["design"];
  }
  const model::Design d = model::parse_design(design_json, base, "/design");
  return model::make_config(base, d);
}

void print_json(const nlohmann::json& j) { std::cout << j.dump(2) << "\n"; }

}  // namespace hdlab::cli
