#include "hdlab/model/files.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "hdlab/model/error.hpp"

namespace hdlab::model {

void write_file_atomic(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const fs::path tmp = dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw ConfigError(path, "cannot write (folder missing or not writable)");
    out << text;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw ConfigError(path, "write failed (disk full?)");
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw ConfigError(path, "cannot replace file: " + ec.message());
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace hdlab::model
