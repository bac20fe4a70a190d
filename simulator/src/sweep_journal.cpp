// The journal of finished points (see sweep_journal.hpp for the format and why).
#include "sweep_journal.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include <fcntl.h>
#include <unistd.h>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/model/files.hpp"
#include "sweep_internal.hpp"

namespace hdlab::simulator::sweep_detail {

namespace fs = std::filesystem;

namespace {

constexpr const char* journal_format = "hdlab sweep journal 1";

void add_checksum(std::string& buf, std::size_t line_start) {
  const std::uint64_t sum = fnv1a64(std::string_view(buf).substr(line_start));
  buf += '\t';
  buf += hex64(sum);
  buf += '\n';
}

std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
  }
  return out;
}

// One journal line (without its newline) into `results`; false when torn or corrupt.
bool read_line(std::string_view line, const SweepSpec& spec, SweepResults& results, std::uint64_t& resumed) {
  const std::size_t last_tab = line.rfind('\t');
  if (last_tab == std::string_view::npos) return false;
  const std::string_view body = line.substr(0, last_tab);
  if (line.substr(last_tab + 1) != hex64(fnv1a64(body))) return false;
  std::uint64_t point = 0;
  const char* p = body.data();
  const char* end = body.data() + body.size();
  auto [q, ec] = std::from_chars(p, end, point);
  if (ec != std::errc() || q == end || *q != '\t' || point >= spec.point_count) return false;
  p = q + 1;
  const std::size_t k = spec.stored_columns.size();
  PointState& state = results.state[point];
  if (p < end && *p == '!') {
    if (state != PointState::pending) return true;  // excluded now, or a duplicate
    state = PointState::failed;
    results.errors.emplace_back(point, unescape(std::string_view(p + 1, static_cast<std::size_t>(end - p - 1))));
    ++resumed;
    return true;
  }
  double* row = &results.values[point * k];
  double scratch = 0;
  const bool keep = state == PointState::pending;
  for (std::size_t i = 0; i < k; ++i) {
    double& v = keep ? row[i] : scratch;
    auto [next, err] = std::from_chars(p, end, v);
    if (err != std::errc() || (i + 1 < k ? (next == end || *next != '\t') : next != end)) {
      if (keep) std::fill(row, row + k, std::numeric_limits<double>::quiet_NaN());
      return false;
    }
    p = next + 1;
  }
  if (keep) {
    state = PointState::done;
    ++resumed;
  }
  return true;
}

}  // namespace

void SweepJournal::add_row(std::string& buf, std::uint64_t point, const double* values, std::size_t n) {
  const std::size_t start = buf.size();
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, point);
  buf.append(digits, end);
  for (std::size_t i = 0; i < n; ++i) {
    buf += '\t';
    append_double(buf, values[i]);
  }
  add_checksum(buf, start);
}

void SweepJournal::add_failure(std::string& buf, std::uint64_t point, const std::string& message) {
  const std::size_t start = buf.size();
  buf += std::to_string(point);
  buf += "\t!";
  for (char c : message) {
    if (c == '\\') buf += "\\\\";
    else if (c == '\t') buf += "\\t";
    else if (c == '\n') buf += "\\n";
    else if (c == '\r') buf += "\\r";
    else buf += c;
  }
  add_checksum(buf, start);
}

SweepJournal::SweepJournal(const SweepSpec& spec, const std::string& dir, bool fresh, const std::string& engine,
                           SweepResults& results) {
  const fs::path folder(dir);
  if (fresh)
    for (const char* f : files) {
      std::error_code ec;
      fs::remove(folder / f, ec);
    }
  path_ = (folder / "journal.tsv").string();
  const fs::path manifest = folder / "manifest.json";
  std::error_code ec;
  if (fs::exists(manifest, ec)) {
    nlohmann::json m;
    try {
      m = model::read_json_file(manifest.string());
    } catch (const model::ConfigError&) {
      throw model::ConfigError(dir, "manifest.json is not valid JSON; start fresh (--fresh) to discard the folder's sweep");
    }
    if (!m.is_object() || m.value("identity", "") != hex64(spec.identity))
      throw model::ConfigError(
          dir, "holds the journal of another sweep (\"" + (m.is_object() ? m.value("sweep", "?") : "?") +
                   "\": a different base document, axes or columns), whose rows would not match this one; start "
                   "fresh (--fresh) to discard it, or choose another output folder");
    if (const std::string written_by = m.value("engine", ""); written_by != engine)
      throw model::ConfigError(dir, "holds rows computed by another build of hdlab (" +
                                        (written_by.empty() ? "unidentified" : written_by) +
                                        "; this one: " + (engine.empty() ? "unidentified" : engine) +
                                        "), which may differ from this one's; start fresh (--fresh) to recompute "
                                        "them, or choose another output folder");
  } else {
    if (fs::exists(path_, ec))
      throw model::ConfigError(dir, "has a journal.tsv but no manifest.json, so it cannot tell whose rows they are; "
                                    "start fresh (--fresh) to discard them, or choose another output folder");
    const nlohmann::json m = {{"format", journal_format},       {"sweep", spec.name},
                              {"identity", hex64(spec.identity)}, {"engine", engine},
                              {"points", spec.point_count},       {"stored_columns", spec.stored_columns}};
    model::write_file_atomic(manifest.string(), m.dump(2) + "\n");
  }
  read_back(spec, results);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw model::ConfigError(path_, std::string("cannot open for appending: ") + std::strerror(errno));
}

SweepJournal::~SweepJournal() {
  if (fd_ >= 0) ::close(fd_);
}

void SweepJournal::read_back(const SweepSpec& spec, SweepResults& results) {
  std::error_code ec;
  if (!fs::exists(path_, ec)) return;
  // Our own file, as large as the sweep: a row is at most ~25 bytes per value, a failed
  // point's line its message; 64 MiB on top covers long messages.
  const double bound = static_cast<double>(spec.point_count) * (64.0 + 32.0 * static_cast<double>(spec.stored_columns.size()));
  const std::string text = model::read_text_file(path_, model::max_input_file_bytes + static_cast<std::uint64_t>(bound));
  std::string kept;  // the good lines, when some must go
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view line =
        std::string_view(text).substr(pos, (nl == std::string::npos ? text.size() : nl) - pos);
    const bool good = nl != std::string::npos && read_line(line, spec, results, resumed_);
    if (!good && dropped_++ == 0) kept.assign(text, 0, pos);  // the lines so far were all good
    if (good && dropped_ > 0) kept.append(line).push_back('\n');
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  std::sort(results.errors.begin(), results.errors.end());
  if (dropped_ > 0) model::write_file_atomic(path_, kept);
}

void SweepJournal::append(std::string_view lines) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (!lines.empty()) {
    const ssize_t n = ::write(fd_, lines.data(), lines.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw model::ConfigError(path_, std::string("cannot append: ") + std::strerror(errno));
    }
    lines.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace hdlab::simulator::sweep_detail
