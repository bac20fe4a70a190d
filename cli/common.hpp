#pragma once
// Shared pieces of the `hdlab` verbs: loading a model file and a design, printing JSON,
// and the exit-code convention (0 ok, 2 bad input, 1 internal error, 3 a requested check failed).
#include <array>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_internal = 1;
inline constexpr int exit_bad_input = 2;
inline constexpr int exit_check_failed = 3;  // a check the user asked for failed (validate --max-median-error)

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

// Where bundled profiles live (profiles/hardware, profiles/models, ...). main() sets it
// from $HDLAB_PROFILES_DIR or the build's default; verbs only read it.
void set_profiles_dir(std::string dir);
const std::string& profiles_dir();

// --hw: a hardware profile file, or the name of a bundled one (profiles/hardware/NAME.json).
// Errors name --hw (unknown name, listing the bundled ones) or the file and JSON pointer.
simulator::HardwareProfile load_hardware(const std::string& name_or_path);

// A command-line value as JSON: numbers and booleans as such, anything else as text.
nlohmann::json scalar_json(const std::string& text);

// One scenario field a verb lets the user set by a flag (its JSON pointer inside the
// scenario object shows in --help and in errors).
struct ScenarioFlag {
  const char* flag;
  const char* pointer;
  const char* help;
  bool list = false;  // comma-separated integers
};

// --scenario FILE plus per-field flags; build() applies the flags over the file (or the
// defaults) and parses the result.
class ScenarioOptions {
 public:
  void add_to(CLI::App& app, std::span<const ScenarioFlag> flags);
  simulator::Scenario build() const;

 private:
  std::span<const ScenarioFlag> flags_;
  std::string file_;
  std::vector<std::string> values_;
  std::vector<CLI::Option*> given_;
};

// Writes JSON to stdout, pretty-printed.
void print_json(const nlohmann::json& j);

}  // namespace hdlab::cli
