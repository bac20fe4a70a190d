#pragma once
// Shared pieces of the `hdlab` verbs: loading a model file and a design, printing JSON,
// and the exit-code convention (0 ok, 2 bad input, 1 internal error, 3 a requested check failed).
#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/session_io.hpp"

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

// Refuses an empty --design value (it would otherwise mean "no design": the baseline).
extern const CLI::Validator design_given;

// Loads the model file and the design and validates both (ConfigError on bad input).
model::Config load_config(const ModelOptions& o);
// load_backbone() of a model file's document; its errors name the file: "path:/pointer".
model::Backbone load_model_backbone(const model::Json& doc, const std::string& path);

// The model file read once: its config (--design applied) and, when the file is a session
// document (simulator/session_io.hpp: a config with "hardware", "scenario", "pipeline" or
// "gui" beside it), the session's parts, which verbs take where their flags leave a gap.
struct LoadedModel {
  model::Config config;
  std::optional<simulator::SessionDocument> session;
  std::string path;  // the model file (a session's relative hardware file is beside it)
  // The session's scenario object, or nullptr.
  const nlohmann::json* scenario() const {
    return session && !session->scenario.is_null() ? &session->scenario : nullptr;
  }
  const nlohmann::json* pipeline() const {
    return session && !session->pipeline.is_null() ? &session->pipeline : nullptr;
  }
};
LoadedModel load_model(const ModelOptions& o);

// The design a --design value names, as JSON (`model_doc`: the model file's document,
// whose "design" applies when the value is empty). The text is inline JSON when it
// starts with '{' or '[' (the file system is not asked), a file when one exists at that
// path, else a shorthand; a value that reads as a file name (it ends in ".json" or has a
// '/' before any ':') but names no file is reported as a missing file, not parsed.
model::Json design_document(const std::string& text, const model::Json& model_doc);

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
// Errors name `flag` (unknown name, listing the bundled ones) or the file and JSON pointer.
simulator::HardwareProfile load_hardware(const std::string& name_or_path, const std::string& flag = "--hw");
// --hw when given (`flag_value` not empty), else the session's "hardware" (errors at
// /hardware); a ConfigError naming `flag` when neither gives one.
simulator::HardwareProfile hardware_of(const std::string& flag_value, const LoadedModel& model,
                                       const std::string& flag = "--hw");

// ---- option checks (at parse time: CLI11 reports them naming the flag, exit 2) ----

// The most worker threads a --threads / -j may ask for: a few per core. More only adds
// switching (and 20,000 threads exhaust the process's limits).
int max_threads();
// 0 (every core) .. max_threads().
CLI::Validator thread_count();
// An integer in [lo, hi]; `why` says what the bounds are ("at most 10000 repeats").
CLI::Validator int_range(std::int64_t lo, std::int64_t hi, const std::string& why = "");
// A path or name that must not be empty (an empty -o would otherwise mean "not given").
CLI::Validator non_empty();

// Checks an output path before any work (model::check_output_file / _folder), so that a
// long run does not fail at its end; ConfigError naming the flag, the path and why.
void check_output_file(const char* flag, const std::string& path);
void check_output_folder(const char* flag, const std::string& path);

// A command-line value as JSON: numbers and booleans as such, anything else as text.
nlohmann::json scalar_json(const std::string& text);

// One scenario field a verb lets the user set by a flag (its JSON pointer inside the
// scenario object shows in --help and in errors).
struct ScenarioFlag {
  const char* flag;
  const char* pointer;
  const char* help;
  bool list = false;  // comma-separated integers
  // Designs the field means something for (nullptr: all); a flag given for another
  // design is refused rather than silently ignored.
  bool (*applies)(const model::Design&) = nullptr;
  const char* applies_to = "";  // "VWN designs"
};

// A JSON document from a file plus per-field flags: --scenario FILE and the scenario's
// fields, or another document (serve's --workload FILE). build() applies the flags over
// the file (or the defaults) and parses the result as a scenario; a flag that does not
// apply to `config`'s design is an error naming it.
class ScenarioOptions {
 public:
  // `file_flag` is the file's option; `root` is the document's name in help texts and
  // the member of the file that holds it when the file wraps it ("scenario").
  void add_to(CLI::App& app, std::span<const ScenarioFlag> flags, const char* file_flag = "--scenario",
              const char* root = "scenario", const char* file_help = "Scenario JSON (simulator/evaluate.hpp)");
  // `base`: the document to start from when no file is given (a session's scenario), or nullptr.
  simulator::Scenario build(const model::Config& config, const nlohmann::json* base = nullptr) const;
  // The document with the flags applied (`config`: checked against the flags' designs).
  nlohmann::json document(const model::Config* config, const nlohmann::json* base = nullptr) const;
  const std::string& file() const { return file_; }
  // The flag given for `pointer`, or nullptr (errors at that pointer then name the flag).
  const char* given_flag(const std::string& pointer) const;

 private:
  std::span<const ScenarioFlag> flags_;
  std::string file_;
  std::string root_;
  std::vector<std::string> values_;
  std::vector<CLI::Option*> given_;
};

// Writes JSON to stdout, pretty-printed.
void print_json(const nlohmann::json& j);

// A value as an error message shows it: long ones cut ("xxxx... (300 characters)").
std::string shown(const std::string& value);

}  // namespace hdlab::cli
