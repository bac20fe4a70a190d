// Reading a kerneldb table's text (kernel_table.hpp): a whole file through zlib (a plain
// CSV passes through gzread unchanged).
#include "kernel_table.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace hdlab::calibration::detail {

namespace {

namespace fs = std::filesystem;

// A table larger than this (uncompressed) is refused before it is read further: the
// largest real one (h100_sxm/moe_perf) is 16.5 MB, so this is far above any real table
// and still bounds what a wrong or hostile file can make us allocate.
constexpr std::size_t max_table_bytes = std::size_t{256} << 20;

}  // namespace

TableText read_table_text(const std::string& path) {
  errno = 0;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) throw ConfigError(path, std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
  gzbuffer(file.get(), 1 << 18);
  TableText out;
  constexpr std::size_t chunk = std::size_t{1} << 20;
  for (;;) {
    // Never more than one byte past the cap: enough to tell that the file goes on.
    const std::size_t old = out.text.size(), want = std::min(chunk, max_table_bytes + 1 - old);
    out.text.resize(old + want);
    const int n = gzread(file.get(), out.text.data() + old, static_cast<unsigned>(want));
    out.text.resize(old + static_cast<std::size_t>(std::max(n, 0)));
    if (n < 0) {
      int code = Z_OK;
      const char* message = gzerror(file.get(), &code);
      throw ConfigError(place(path, count_lines(out.text) + 1),
                        std::string("not a readable gzip file (") + message + "): the data breaks off in this line");
    }
    if (out.text.size() > max_table_bytes)
      throw ConfigError(place(path, count_lines(out.text) + 1),
                        "the table is larger than 256 MiB uncompressed (the largest real kerneldb table is 17 MB): "
                        "not read further");
    if (n == 0) break;
  }
  int code = Z_OK;
  gzerror(file.get(), &code);
  out.truncated = code == Z_BUF_ERROR;
  return out;
}

// FOLDER/NAME.csv or FOLDER/NAME.csv.gz; nullopt when neither exists.
std::optional<std::string> find_table(const fs::path& folder, const std::string& name) {
  const fs::path plain = folder / (name + ".csv"), gz = folder / (name + ".csv.gz");
  std::error_code ec;
  const bool has_plain = fs::exists(plain, ec), has_gz = fs::exists(gz, ec);
  if (has_plain && has_gz)
    throw ConfigError(plain.string(), "both " + name + ".csv and " + name +
                                          ".csv.gz are here: keep one, so that it is clear which is read");
  if (!has_plain && !has_gz) return std::nullopt;
  const fs::path path = has_plain ? plain : gz;
  if (!fs::is_regular_file(path, ec)) throw ConfigError(path.string(), "not a regular file");
  return path.string();
}

}  // namespace hdlab::calibration::detail
