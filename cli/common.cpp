#include "common.hpp"

#include <filesystem>
#include <set>
#include <sstream>
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

namespace {
std::string& profiles_dir_storage() {
  static std::string dir = "profiles";
  return dir;
}
}  // namespace

void set_profiles_dir(std::string dir) { profiles_dir_storage() = std::move(dir); }
const std::string& profiles_dir() { return profiles_dir_storage(); }

simulator::HardwareProfile load_hardware(const std::string& h) {
  namespace fs = std::filesystem;
  const std::string bundled = profiles_dir() + "/hardware";
  std::string path = h;
  if (!fs::is_regular_file(path)) {
    path = bundled + "/" + h + ".json";
    if (!fs::is_regular_file(path)) {
      std::set<std::string> found;
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(bundled, ec))
        if (e.path().extension() == ".json") found.insert(e.path().stem().string());
      std::string names;
      for (const auto& n : found) names += (names.empty() ? "" : ", ") + n;
      throw model::ConfigError("--hw", "no file \"" + h + "\" and no bundled profile of that name (bundled in " +
                                           bundled + ": " + (names.empty() ? "none" : names) + ")");
    }
  }
  try {
    return simulator::parse_hardware_profile(model::read_json_file(path));
  } catch (const model::ConfigError& e) {
    throw model::ConfigError(path + ":" + e.pointer(), e.reason());
  }
}

nlohmann::json scalar_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() || j.is_structured() ? nlohmann::json(text) : j;
}

namespace {
nlohmann::json int_list(const std::string& text, const char* flag) {
  nlohmann::json out = nlohmann::json::array();
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const nlohmann::json v = scalar_json(item);
    if (!v.is_number_integer())
      throw model::ConfigError(flag, "must be comma-separated integers, got \"" + text + "\"");
    out.push_back(v);
  }
  return out;
}
}  // namespace

void ScenarioOptions::add_to(CLI::App& app, std::span<const ScenarioFlag> flags) {
  flags_ = flags;
  values_.resize(flags.size());
  given_.resize(flags.size());
  app.add_option("--scenario", file_, "Scenario JSON (simulator/evaluate.hpp); options below override it");
  for (std::size_t i = 0; i < flags.size(); ++i)
    given_[i] = app.add_option(flags[i].flag, values_[i],
                               std::string(flags[i].help) + " (/scenario" + flags[i].pointer + ")");
}

simulator::Scenario ScenarioOptions::build() const {
  nlohmann::json j = nlohmann::json::object();
  if (!file_.empty()) {
    j = model::read_json_file(file_);
    if (j.is_object() && j.contains("scenario")) j = nlohmann::json(j["scenario"]);
  }
  for (std::size_t i = 0; i < flags_.size(); ++i) {
    if (given_[i]->count() == 0 || !j.is_object()) continue;
    const ScenarioFlag& f = flags_[i];
    j[nlohmann::json::json_pointer(f.pointer)] = f.list ? int_list(values_[i], f.flag) : scalar_json(values_[i]);
  }
  return simulator::parse_scenario(j);
}

}  // namespace hdlab::cli
