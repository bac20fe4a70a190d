#pragma once
// The profiles a user picks from: model presets (our configs and bundled HF config.json
// files), hardware profiles and design presets, found under one profiles folder that
// main() locates. Nothing here reads a fixed path.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace hdlab::gui_core {

struct CatalogEntry {
  std::string label;  // what the picker shows: the profile's name, else the file name
  std::string path;
};

struct Catalog {
  std::filesystem::path root;        // the profiles folder
  std::vector<CatalogEntry> models;  // models/*.json, then models/hf/*.json ("HF: ...")
  std::vector<CatalogEntry> hardware;
  std::vector<CatalogEntry> designs;
};

// The first candidate that holds models/ and hardware/ folders.
std::optional<std::filesystem::path> find_profiles_dir(const std::vector<std::filesystem::path>& candidates);

// Lists a profiles folder; files that do not parse are still listed (by file name), so
// loading them shows their error. Sorted by label within each group.
Catalog read_catalog(const std::filesystem::path& root);

// The entry whose label or file name contains `needle` (case-insensitive); -1 if none.
int find_entry(const std::vector<CatalogEntry>& entries, const std::string& needle);

}  // namespace hdlab::gui_core
