#include "common.hpp"

#include <cerrno>
#include <filesystem>
#include <set>
#include <sstream>
#include <iostream>
#include <system_error>
#include <thread>

#include <sys/stat.h>

#include "hdlab/model/files.hpp"
#include "hdlab/model/hf_import.hpp"

namespace hdlab::cli {

const CLI::Validator design_given{[](const std::string& text) {
                                     // Empty would otherwise read as "no design": the baseline, silently.
                                     return text.empty() ? std::string("is empty (give baseline, a shorthand such as "
                                                                       "hd:n=4, inline JSON or a file)")
                                                         : std::string();
                                   },
                                   ""};

void ModelOptions::add_to(CLI::App& app) {
  app.add_option("model", model_path, "Model file: hdlab config/backbone JSON or a HuggingFace config.json")
      ->required()
      ->check(non_empty());
  app.add_option("-d,--design", design,
                 "Design: a JSON file, inline JSON ('{\"hd\":{\"n\":4}}') or shorthand (hd:n=4,layers=intra)")
      ->check(design_given);
}

namespace {

// Whether `path` names something, without throwing for names the file system refuses
// (too long, a file used as a folder): those are reported when the file is read.
bool path_exists(const std::string& path, int& error) {
  struct stat st {};
  error = ::stat(path.c_str(), &st) == 0 ? 0 : errno;
  return error == 0;
}

bool reads_as_file_name(const std::string& text) {
  const std::string head = text.substr(0, text.find(':'));
  return head.find('/') != std::string::npos ||
         (text.size() >= 5 && text.compare(text.size() - 5, 5, ".json") == 0);
}

}  // namespace

model::Json design_document(const std::string& text, const model::Json& model_doc) {
  using model::Json;
  if (text.empty()) {
    if (model_doc.is_object() && model_doc.contains("design") && !model::looks_like_hf_config(model_doc))
      return model_doc["design"];
    return Json::object();
  }
  if (text.front() == '[') throw model::ConfigError("--design", "inline JSON must be an object ({\"hd\": {...}}), got a list");
  if (text.front() == '{') return model::design_json_from_shorthand(text);
  int error = 0;
  if (path_exists(text, error) || reads_as_file_name(text)) {
    Json design;
    try {
      design = model::read_json_file(text);
    } catch (const model::ConfigError& e) {
      throw model::ConfigError("--design", e.what());
    }
    // A config document's "design" part (a design object has no "design" key itself).
    if (design.is_object() && design.contains("design")) design = Json(design["design"]);
    return design;
  }
  return model::design_json_from_shorthand(text);
}

model::Backbone load_model_backbone(const model::Json& doc, const std::string& path) {
  try {
    return model::load_backbone(doc);
  } catch (const model::ConfigError& e) {
    // A field error names the file and the pointer (HF configs and our format alike).
    throw model::ConfigError(path + ":" + e.pointer(), e.reason());
  }
}

model::Config load_config(const ModelOptions& o) { return load_model(o).config; }

LoadedModel load_model(const ModelOptions& o) {
  LoadedModel m;
  m.path = o.model_path;
  const model::Json doc = model::read_json_file(o.model_path);
  model::Backbone base;
  if (simulator::is_session_document(doc)) {
    m.session = simulator::parse_session(doc);
    base = m.session->config.base;
  } else {
    base = load_model_backbone(doc, o.model_path);
  }
  const model::Design d = model::parse_design(design_document(o.design, doc), base, "/design");
  m.config = model::make_config(base, d);
  return m;
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

std::string shown(const std::string& value) {
  if (value.size() <= 80) return value;
  return value.substr(0, 60) + "... (" + std::to_string(value.size()) + " characters)";
}

simulator::HardwareProfile load_hardware(const std::string& h, const std::string& flag) {
  namespace fs = std::filesystem;
  if (h.empty()) throw model::ConfigError(flag, "is empty: give a hardware profile file or a bundled name");
  if (h.front() == '{' || h.front() == '[')
    throw model::ConfigError(flag, "takes a hardware profile file or a bundled name, not inline JSON (got " +
                                       shown(h) + ")");
  const std::string bundled = profiles_dir() + "/hardware";
  std::string path = h;
  int error = 0;
  if (!path_exists(path, error)) {
    if (error != ENOENT || reads_as_file_name(h))
      throw model::ConfigError(flag, "\"" + shown(h) + "\": " + std::generic_category().message(error));
    path = bundled + "/" + h + ".json";
    if (!path_exists(path, error)) {
      std::set<std::string> found;
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(bundled, ec))
        if (e.path().extension() == ".json") found.insert(e.path().stem().string());
      std::string names;
      for (const auto& n : found) names += (names.empty() ? "" : ", ") + n;
      throw model::ConfigError(flag, "no file \"" + shown(h) + "\" and no bundled profile of that name (bundled in " +
                                         bundled + ": " + (names.empty() ? "none" : names) + ")");
    }
  }
  // Reading errors (a device, a missing permission) name the flag; content errors name the
  // file and the JSON pointer.
  std::string text;
  try {
    text = model::read_text_file(path);
  } catch (const model::ConfigError& e) {
    throw model::ConfigError(flag, e.what());
  }
  const nlohmann::json doc = model::parse_json_text(text, path);
  try {
    return simulator::parse_hardware_profile(doc);
  } catch (const model::ConfigError& e) {
    // A file error (its pointer is the path) names the flag too; a field error the file.
    if (e.pointer() == path) throw model::ConfigError(flag, e.what());
    throw model::ConfigError(path + ":" + e.pointer(), e.reason());
  }
}

simulator::HardwareProfile hardware_of(const std::string& flag_value, const LoadedModel& model,
                                       const std::string& flag) {
  if (!flag_value.empty()) return load_hardware(flag_value, flag);
  if (model.session && model.session->hardware) return *model.session->hardware;
  if (model.session && !model.session->hardware_name.empty()) {
    // A relative file is beside the session file (a session moves with its profile);
    // a bundled name is looked up as --hw looks it up.
    std::string name = model.session->hardware_name;
    const std::filesystem::path beside = std::filesystem::path(model.path).parent_path() / name;
    std::error_code ec;
    if (std::filesystem::path(name).is_relative() && std::filesystem::is_regular_file(beside, ec))
      name = beside.string();
    return load_hardware(name, model.path + ":/hardware");
  }
  throw model::ConfigError(flag, "is required: a hardware profile file or a bundled name (or a session file as the "
                                 "model, with \"hardware\")");
}

int max_threads() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(4 * cores);
}

CLI::Validator thread_count() {
  const int cores = max_threads() / 4;
  return int_range(0, max_threads(),
                   "0 = every core; at most 4 per core, " + std::to_string(cores) + (cores == 1 ? " core" : " cores") +
                       " here");
}

CLI::Validator int_range(std::int64_t lo, std::int64_t hi, const std::string& why) {
  return CLI::Validator(
      [lo, hi, why](std::string& text) -> std::string {
        std::int64_t v = 0;
        const bool parsed = CLI::detail::lexical_cast(text, v);
        if (parsed && v >= lo && v <= hi) return "";
        return "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
               (why.empty() ? "" : " (" + why + ")") + ", got " + shown(text);
      },
      "INT in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

CLI::Validator non_empty() {
  return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "must not be empty" : ""; },
                        "");
}

void check_output_file(const char* flag, const std::string& path) {
  try {
    model::check_output_file(path);
  } catch (const model::ConfigError& e) {
    throw model::ConfigError(flag, e.what());
  }
}

void check_output_folder(const char* flag, const std::string& path) {
  try {
    model::check_output_folder(path);
  } catch (const model::ConfigError& e) {
    throw model::ConfigError(flag, e.what());
  }
}

nlohmann::json scalar_json(const std::string& text) {
  return model::json_scalar_or_text(text);
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

void ScenarioOptions::add_to(CLI::App& app, std::span<const ScenarioFlag> flags, const char* file_flag,
                             const char* root, const char* file_help) {
  flags_ = flags;
  root_ = root;
  values_.resize(flags.size());
  given_.resize(flags.size());
  app.add_option(file_flag, file_, std::string(file_help) + "; options below override it")->check(non_empty());
  for (std::size_t i = 0; i < flags.size(); ++i)
    given_[i] = app.add_option(flags[i].flag, values_[i], std::string(flags[i].help) + " (" + (root_.empty() ? "" : "/" + root_) + flags[i].pointer + ")");
}

nlohmann::json ScenarioOptions::document(const model::Config* config, const nlohmann::json* base) const {
  for (std::size_t i = 0; i < flags_.size(); ++i)
    if (config && given_[i]->count() > 0 && flags_[i].applies && !flags_[i].applies(config->design))
      throw model::ConfigError(flags_[i].flag, std::string("applies to ") + flags_[i].applies_to + " only; the design is " +
                                                   model::describe(config->design));
  nlohmann::json j = nlohmann::json::object();
  if (file_.empty() && base) j = *base;  // the session's scenario; a --scenario file replaces it whole
  if (!file_.empty()) {
    j = model::read_json_file(file_);
    if (!root_.empty() && j.is_object() && j.contains(root_)) j = nlohmann::json(j[root_]);
  }
  for (std::size_t i = 0; i < flags_.size(); ++i) {
    if (given_[i]->count() == 0 || !j.is_object()) continue;
    const ScenarioFlag& f = flags_[i];
    j[nlohmann::json::json_pointer(f.pointer)] = f.list ? int_list(values_[i], f.flag) : scalar_json(values_[i]);
  }
  return j;
}

simulator::Scenario ScenarioOptions::build(const model::Config& config, const nlohmann::json* base) const {
  return simulator::parse_scenario(document(&config, base));
}

const char* ScenarioOptions::given_flag(const std::string& pointer) const {
  for (std::size_t i = 0; i < flags_.size(); ++i)
    if (given_[i]->count() > 0 && pointer == flags_[i].pointer) return flags_[i].flag;
  return nullptr;
}

}  // namespace hdlab::cli
