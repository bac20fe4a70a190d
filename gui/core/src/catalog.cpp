#include "hdlab/gui_core/catalog.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::gui_core {
namespace fs = std::filesystem;
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The name a profile gives itself at `key_path` ("backbone/name"), or "".
std::string name_in(const fs::path& file, std::initializer_list<const char*> key_path) {
  try {
    const nlohmann::json j = model::read_json_file(file.string());
    const nlohmann::json* at = &j;
    for (const char* key : key_path) {
      if (!at->is_object() || !at->contains(key)) return "";
      at = &(*at)[key];
    }
    return at->is_string() ? at->get<std::string>() : "";
  } catch (const model::ConfigError&) {
    return "";
  }
}

std::vector<CatalogEntry> list_json(const fs::path& dir, const std::string& prefix,
                                    std::initializer_list<const char*> name_key) {
  std::vector<CatalogEntry> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    std::string name = name_key.size() ? name_in(e.path(), name_key) : "";
    if (name.empty()) name = e.path().stem().string();
    out.push_back({prefix + name, e.path().string()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return lower(a.label) < lower(b.label); });
  return out;
}

}  // namespace

std::optional<fs::path> find_profiles_dir(const std::vector<fs::path>& candidates) {
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_directory(c / "models", ec) && fs::is_directory(c / "hardware", ec)) return fs::weakly_canonical(c, ec);
  }
  return std::nullopt;
}

Catalog read_catalog(const fs::path& root) {
  Catalog c;
  c.root = root;
  c.models = list_json(root / "models", "", {"backbone", "name"});
  // HF files carry no display name; the file stem ("qwen3-8b.config") says what it is.
  for (auto& e : list_json(root / "models" / "hf", "HF: ", {})) c.models.push_back(std::move(e));
  c.hardware = list_json(root / "hardware", "", {"name"});
  c.designs = list_json(root / "designs", "", {"name"});
  return c;
}

int find_entry(const std::vector<CatalogEntry>& entries, const std::string& needle) {
  const std::string n = lower(needle);
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (lower(entries[i].label).find(n) != std::string::npos ||
        lower(fs::path(entries[i].path).filename().string()).find(n) != std::string::npos)
      return static_cast<int>(i);
  return -1;
}

}  // namespace hdlab::gui_core
