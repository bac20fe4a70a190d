#pragma once
// Runs the built `hdlab` binary as a user would and captures exit code, stdout, stderr;
// plus a JSON comparison for golden files that compares numbers within a tolerance.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

namespace hdlab::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string source_path(const std::string& rel) { return std::string(HDLAB_SOURCE_DIR) + "/" + rel; }

// How the shell runs hdlab, beyond the defaults (stdout and stderr captured).
struct CliShell {
  std::string before;     // shell commands run first, in the same shell ("ulimit -v 2000000")
  std::string stdout_to;  // a redirection of stdout instead of capturing it (">/dev/full", ">&-")
};

// Runs `hdlab args...` from the source tree's root (so profiles/ paths work).
inline CliResult run_cli(const std::vector<std::string>& args, const CliShell& shell = {}) {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path tmp = fs::temp_directory_path() /
                       ("hdlab_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::create_directories(tmp);
  std::string cmd = "cd " + shell_quote(HDLAB_SOURCE_DIR) + " && " + (shell.before.empty() ? "" : shell.before + " && ") +
                    shell_quote(std::string(HDLAB_BINARY_DIR) + "/cli/hdlab");
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += (shell.stdout_to.empty() ? " >" + shell_quote((tmp / "out").string()) : " " + shell.stdout_to) + " 2>" +
         shell_quote((tmp / "err").string());
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(tmp / "out");
  r.err = slurp(tmp / "err");
  fs::remove_all(tmp);
  return r;
}

// Structural equality with numbers equal within `rel_tol` (relative) or `abs_tol`.
// Returns an empty string when equal, else the JSON pointer of the first difference.
inline std::string json_diff(const nlohmann::json& a, const nlohmann::json& b, double rel_tol, double abs_tol = 0,
                             const std::string& at = "") {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    const double tol = std::max(abs_tol, rel_tol * std::max(std::abs(x), std::abs(y)));
    return std::abs(x - y) <= tol ? "" : at + " (" + a.dump() + " vs " + b.dump() + ")";
  }
  if (a.type() != b.type()) return at + " (type)";
  if (a.is_object()) {
    if (a.size() != b.size()) return at + " (keys)";
    for (const auto& [k, v] : a.items()) {
      if (!b.contains(k)) return at + "/" + k + " (missing)";
      if (auto d = json_diff(v, b[k], rel_tol, abs_tol, at + "/" + k); !d.empty()) return d;
    }
    return "";
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return at + " (length)";
    for (std::size_t i = 0; i < a.size(); ++i)
      if (auto d = json_diff(a[i], b[i], rel_tol, abs_tol, at + "/" + std::to_string(i)); !d.empty()) return d;
    return "";
  }
  return a == b ? "" : at + " (" + a.dump() + " vs " + b.dump() + ")";
}

}  // namespace hdlab::testing
