#pragma once
// A kerneldb table's text walked row by row (kerneldb.cpp's readers, and a design
// module's reader of its own table: calibration/src/designs/). Every error names the
// file, the line and the column: ConfigError("FILE:LINE", "column \"NAME\": why").
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::calibration::detail {

using model::ConfigError;

inline std::int64_t count_lines(std::string_view text) {
  return static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n'));
}

inline std::string place(const std::string& path, std::int64_t line) { return path + ":" + std::to_string(line); }

// The file's bytes, decompressed when it is gzip; `truncated` when a gzip stream ends
// before its end marker (the bytes up to there are kept, for the error's line number).
struct TableText {
  std::string text;
  bool truncated = false;
};

TableText read_table_text(const std::string& path);

// One table's text, walked row by row. Every error names the file, the line and the
// column: ConfigError("FILE:LINE", "column \"NAME\": why").
class CsvTable {
 public:
  CsvTable(std::string path, TableText content) : path_(std::move(path)), text_(std::move(content.text)) {
    if (text_.empty()) throw ConfigError(place(path_, 1), "the file is empty: no header line, no rows");
    std::string_view header_line = next_line();
    split(header_line);
    for (std::string_view f : fields_) {
      if (std::find(header_.begin(), header_.end(), f) != header_.end())
        throw ConfigError(place(path_, 1), "column \"" + std::string(f) + "\": named twice in the header");
      header_.emplace_back(f);
    }
    fields_.clear();  // views into text_: a moved table re-splits before it reads a field
    if (content.truncated) fail_truncated();
  }

  const std::string& path() const { return path_; }
  std::int64_t line() const { return line_; }
  std::size_t row_estimate() const { return static_cast<std::size_t>(count_lines(text_)); }

  std::size_t column(std::string_view name) const {
    const auto it = std::find(header_.begin(), header_.end(), name);
    if (it == header_.end())
      throw ConfigError(place(path_, 1), "column \"" + std::string(name) + "\": missing from the header");
    return static_cast<std::size_t>(it - header_.begin());
  }
  bool has_column(std::string_view name) const { return std::find(header_.begin(), header_.end(), name) != header_.end(); }

  // Moves to the next non-blank row; false at the end of the file.
  bool next() {
    while (pos_ < text_.size()) {
      const std::string_view row = next_line();
      if (row.find_first_not_of(" \t") == std::string_view::npos) continue;
      split(row);
      if (fields_.size() < header_.size())
        fail(fields_.size(), "missing: the row has " + std::to_string(fields_.size()) + " fields, the header " +
                                 std::to_string(header_.size()));
      if (fields_.size() > header_.size())
        fail(header_.size() - 1, "the row has " + std::to_string(fields_.size()) + " fields, the header only " +
                                     std::to_string(header_.size()) + " (an extra field after this column)");
      ++rows_;
      return true;
    }
    if (rows_ == 0) throw ConfigError(place(path_, line_ + 1), "the table has a header but no rows");
    return false;
  }

  std::string_view text(std::size_t col) const {
    if (fields_[col].empty()) fail(col, "empty");
    return fields_[col];
  }

  // A finite number of at least `min`.
  double number(std::size_t col, double min) const {
    const double v = finite(col);
    if (v < min) fail(col, std::string(fields_[col]) + " is below " + std::to_string(static_cast<long long>(min)));
    return v;
  }
  // A whole number of at least `min` and at most 2^53 (so the double holds it exactly).
  double whole(std::size_t col, double min) const {
    const double v = number(col, min);
    if (v != std::floor(v)) fail(col, std::string(fields_[col]) + " is not a whole number");
    if (v > 9007199254740992.0) fail(col, std::string(fields_[col]) + " is larger than 2^53");
    return v;
  }
  // The latency column: milliseconds in the file, > 0; seconds out.
  double seconds(std::size_t col) const {
    const double ms = finite(col);
    if (ms <= 0) fail(col, std::string(fields_[col]) + " ms is not a positive time");
    return ms / 1000;  // correctly rounded (x 1e-3 would round twice: 1e-3 is inexact)
  }
  // A precision name whose size we know (precision_size), kept as written.
  std::string precision(std::size_t col) const {
    const std::string_view f = text(col);
    if (precision_size(f)) return std::string(f);
    std::string known;
    for (const std::string& p : known_precisions()) known += (known.empty() ? "" : ", ") + p;
    fail(col, "unknown precision \"" + std::string(f) + "\" (known: " + known + ")");
  }

  [[noreturn]] void fail(std::size_t col, const std::string& why) const {
    const std::string name = col < header_.size() ? "\"" + header_[col] + "\"" : std::to_string(col + 1);
    throw ConfigError(place(path_, line_), "column " + name + ": " + why);
  }

 private:
  double finite(std::size_t col) const {
    const std::string_view f = fields_[col];
    double v = 0;
    const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (f.empty() || ec != std::errc{} || end != f.data() + f.size() || !std::isfinite(v))
      fail(col, "\"" + std::string(f) + "\" is not a number");
    return v;
  }

  std::string_view next_line() {
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    std::string_view row(text_.data() + pos_, end - pos_);
    pos_ = end + 1;
    ++line_;
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    return row;
  }

  void split(std::string_view row) {
    fields_.clear();
    if (row.find('"') != std::string_view::npos) {
      const std::size_t col = static_cast<std::size_t>(std::count(row.begin(), row.begin() + row.find('"'), ','));
      fail(col, "a quoted field (kerneldb tables have none; this reader does not unquote)");
    }
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = row.find(',', start);
      fields_.push_back(row.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }

  // The gzip stream broke off: name the line it broke off in and the column of its last
  // (partial) field.
  [[noreturn]] void fail_truncated() {
    const std::size_t last_newline = text_.rfind('\n');
    const std::size_t tail = last_newline == std::string::npos ? 0 : last_newline + 1;
    line_ = count_lines(text_) + 1;
    const auto col = static_cast<std::size_t>(std::count(text_.begin() + static_cast<std::ptrdiff_t>(tail), text_.end(), ','));
    fail(col, "the gzip stream ends early (a truncated file?): the data breaks off in this line");
  }

  std::string path_, text_;
  std::vector<std::string> header_;
  std::vector<std::string_view> fields_;
  std::size_t pos_ = 0;
  std::int64_t line_ = 0;
  std::int64_t rows_ = 0;
};

// Every row of every table must come from one device (a folder mixing two would fit one
// profile to both).
class DeviceCheck {
 public:
  explicit DeviceCheck(std::string& name) : name_(name) {}
  void start(const CsvTable& t) { col_ = t.column("device"); }
  void check(const CsvTable& t) {
    const std::string_view d = t.text(col_);
    if (name_.empty()) name_ = std::string(d);
    else if (d != name_) t.fail(col_, "\"" + std::string(d) + "\" where the rows before say \"" + name_ + "\"");
  }

 private:
  std::string& name_;
  std::size_t col_ = 0;
};

// FOLDER/NAME.csv or FOLDER/NAME.csv.gz; nullopt when neither exists.
std::optional<std::string> find_table(const std::filesystem::path& folder, const std::string& name);

}  // namespace hdlab::calibration::detail
