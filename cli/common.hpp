#pragma once
// Shared pieces of the `hdlab` verbs: loading a model file and a design, printing JSON,
// and the exit-code convention (0 ok, 2 bad input, 1 internal error).
#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "hdlab/model/config_io.hpp"

namespace hdlab::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_internal = 1;
inline constexpr int exit_bad_input = 2;

// Options every model-taking verb shares: MODEL (positional) and --design.
struct ModelOptions {
  std::string model_path;  // our config document, bare backbone, or HF config.json
  std::string design;      // file path, inline JSON, or shorthand "hd:n=4"; empty: the file's or baseline
  void add_to(CLI::App& app);
};

// Loads the model file and the design and validates both (ConfigError on bad input).
model::Config load_config(const ModelOptions& o);

// A verb: its subcommand and the function that runs it (returns the exit code).
struct Verb {
  CLI::App* command = nullptr;
  std::function<int()> run;
};

// Writes JSON to stdout, pretty-printed.
void print_json(const nlohmann::json& j);

}  // namespace hdlab::cli
