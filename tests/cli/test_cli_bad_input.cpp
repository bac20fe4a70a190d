// Bad input on the command line, the file system and the output, as a user (or a
// reviewer trying ~1,250 hostile inputs) gives it: every one exits 2 with a message
// naming the flag or file and the reason, or (for what the machine cannot do) exits 1
// saying why; never a crash, a hang, an unbounded run or a silent default.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/stat.h>

#include "cli_runner.hpp"

using hdlab::testing::CliShell;
using hdlab::testing::run_cli;
using hdlab::testing::slurp;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() / ("hdlab_test_bad_input_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string at(const std::string& name) const { return (path / name).string(); }
};

const std::string qwen = "profiles/models/qwen3-8b.json";
const std::string tiny = "profiles/models/tiny-dense.json";
const std::string sweep_file = "tests/cli/golden/sweep_small.sweep.json";
const std::string validation_file = "profiles/validation/cpu-ci.json";
const std::string cli11_tail = "\nRun with --help for more information.\n";

int cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// The message of a --threads / -j out of range.
std::string threads_message(const std::string& flag, const std::string& value) {
  return flag + ": must be an integer from 0 to " + std::to_string(4 * cores()) +
         " (0 = every core; at most 4 per core, " + std::to_string(cores()) + (cores() == 1 ? " core" : " cores") +
         " here), got " + value;
}

struct Row {
  std::vector<std::string> args;
  std::string message;  // the whole of stderr but its "hdlab: error: " or CLI11's help line
  bool usage = false;   // a CLI11 usage error (its help line after the message)
};

void check_rows(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    std::string shown;
    for (const auto& a : row.args) shown += " " + a;
    INFO("hdlab" << shown);
    const auto r = run_cli(row.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err == (row.usage ? row.message + cli11_tail : "hdlab: error: " + row.message + "\n"));
    CHECK(r.out.empty());
  }
}

}  // namespace

TEST_CASE("every verb's numeric flags refuse values out of range naming the flag and the range", "[cli][bad-input]") {
  std::vector<std::string> contexts;
  std::string many;
  for (int i = 1; i <= 65; ++i) many += (i > 1 ? "," : "") + std::to_string(1024 * i);
  const std::vector<Row> rows = {
      {{"run", tiny, "--threads", "100000"}, threads_message("--threads", "100000"), true},
      {{"run", tiny, "--threads", "-1"}, threads_message("--threads", "-1"), true},
      {{"run", tiny, "--repeats", "1000000000"},
       "--repeats: must be an integer from 1 to 10000 (more add nothing to a median), got 1000000000", true},
      {{"run", tiny, "--repeats", "1e9"}, "--repeats: must be an integer from 1 to 10000 (more add nothing to a median), got 1e9",
       true},
      {{"run", tiny, "--repeats", "0"}, "--repeats: must be an integer from 1 to 10000 (more add nothing to a median), got 0",
       true},
      {{"run", tiny, "--warmup", "1000000000"},
       "--warmup: must be an integer from 0 to 1000 (the first few runs are what warm-up is for), got 1000000000", true},
      {{"calibrate", "-o", "/tmp/never-written.json", "--threads", "100000"}, threads_message("--threads", "100000"), true},
      {{"calibrate", "-o", "/tmp/never-written.json", "--threads", "-1"}, threads_message("--threads", "-1"), true},
      {{"validate", validation_file, "-o", "/tmp/never-written", "--threads", "100000"},
       threads_message("--threads", "100000"), true},
      {{"validate", validation_file, "-o", "/tmp/never-written", "--threads", "-2"}, threads_message("--threads", "-2"), true},
      {{"validate", validation_file, "-o", "/tmp/never-written", "--max-median-error", "-1"},
       "--max-median-error: must be a share >= 0 (0.5: 50%), got -1", true},
      {{"sweep", sweep_file, "-o", "/tmp/never-written", "-j", "3000"}, threads_message("--threads", "3000"), true},
      {{"sweep", sweep_file, "-o", "/tmp/never-written", "-j", "-1"}, threads_message("--threads", "-1"), true},
      {{"sweep", sweep_file, "-o", "/tmp/never-written", "--max-rows", "-1"},
       "--max-rows: must be an integer from 0 to 1000000 (results.csv has every row), got -1", true},
      {{"cost", qwen, "--hw", "h100-sxm", "--kv-contexts", "1000000000"},
       "--kv-contexts: entry 0 (1000000000 tokens): must be <= 16777216, got 1000000000"},
      {{"cost", qwen, "--hw", "h100-sxm", "--kv-contexts", "1024,0"}, "--kv-contexts: entry 1 (0 tokens): must be >= 1, got 0"},
      {{"cost", qwen, "--hw", "h100-sxm", "--kv-contexts", many}, "--kv-contexts: has 65 entries; at most 64"},
  };
  check_rows(rows);
}

TEST_CASE("empty paths and names are refused and never taken as 'not given'", "[cli][bad-input]") {
  const std::vector<Row> rows = {
      {{"sweep", sweep_file, "-o", ""}, "--output: must not be empty", true},
      {{"sweep", "", "-o", "/tmp/never-written"}, "sweep: must not be empty", true},
      {{"calibrate", "-o", ""}, "--output: must not be empty", true},
      {{"calibrate", "-o", "/tmp/never-written.json", "--name", ""}, "--name: must not be empty", true},
      {{"calibrate", "-o", "/tmp/never-written.json", "--refit", ""}, "--refit: must not be empty", true},
      {{"validate", validation_file, "-o", ""}, "--output: must not be empty", true},
      {{"validate", validation_file, "-o", "/tmp/never-written", "--hw", ""}, "--hw: must not be empty", true},
      {{"mask", qwen, "-l", "0", "--png", ""}, "--png: must not be empty", true},
      {{"run", tiny, "--save-weights", ""}, "--save-weights: must not be empty", true},
      {{"run", tiny, "--weights", ""}, "--weights: must not be empty", true},
      {{"check", qwen, "-d", ""}, "--design: is empty (give baseline, a shorthand such as hd:n=4, inline JSON or a file)", true},
      {{"params", qwen, "-d", "hd:n=2", "-d", ""}, "--design: is empty (give baseline, a shorthand such as hd:n=4, inline JSON or a file)", true},
      {{"check", ""}, "model: must not be empty", true},
      {{"cost", qwen, "--hw", ""}, "--hw: must not be empty", true},
      {{"cost", qwen, "--hw", "h100-sxm", "--scenario", ""}, "--scenario: must not be empty", true},
  };
  check_rows(rows);
}

TEST_CASE("flags that do not apply to the design or the model or the other flags are refused", "[cli][bad-input]") {
  const std::vector<Row> rows = {
      {{"cost", qwen, "--hw", "h100-sxm", "-d", "hd:n=4", "--vwn-eta", "0.5"},
       "--vwn-eta: applies to VWN designs only; the design is hd n=4 (0 intra, 0 local, 36 full)"},
      {{"cost", qwen, "--hw", "h100-sxm", "--vwn-eta", "0.5"}, "--vwn-eta: applies to VWN designs only; the design is baseline"},
      {{"run", tiny, "--no-normalize-topk"}, "--no-normalize-topk: applies to MoE backbones only; tiny-dense is dense"},
      {{"run", qwen, "--window", "64", "--layers", "1", "--hidden", "64", "--heads", "2", "--kv-heads", "1"},
       "--window: applies to backbones with sliding-window layers only; every layer of Qwen3-8B attends to the full "
       "context"},
      {{"run", tiny, "--save-dtype", "bf16"}, "--save-dtype requires --save-weights", true},
      {{"pipeline", qwen, "--hw", "h100-sxm", "--pp", "2", "--microbatches", "4", "--no-timeline"},
       "--no-timeline requires --json", true},
      {{"calibrate", "-o", "/tmp/never-written.json", "--refit", "cpu-xeon-2c", "--quick"}, "--quick excludes --refit", true},
      {{"calibrate", "-o", "/tmp/never-written.json", "--refit", "cpu-xeon-2c", "--threads", "1"},
       "--threads excludes --refit", true},
      {{"calibrate", "-o", "/tmp/never-written.json", "--refit", "cpu-xeon-2c", "--backend", "cpu"},
       "--backend excludes --refit", true},
      {{"calibrate", "-o", "/tmp/never-written.json", "--derive-from", "h100-sxm.json", "--threads", "1"},
       "--threads excludes --derive-from", true},
      {{"calibrate", "-o", "/tmp/never-written.json", "--from-kerneldb", ".", "--device", "h100_sxm", "--threads", "-1"},
       threads_message("--threads", "-1"), true},
      {{"sweep", sweep_file, "-o", "/tmp/never-written", "--json", "--max-rows", "5"}, "--json excludes --max-rows", true},
      {{"validate", validation_file, "-o", "/tmp/never-written", "--backend", "gpu"},
       "--backend: gpu not in {cpu,cuda}", true},
  };
  check_rows(rows);
}

TEST_CASE("paths that are too long or missing or folders or devices or huge files get a precise error", "[cli][bad-input]") {
  TempDir dir;
  const std::string big = dir.at("big.json");
  { std::ofstream(big) << "{}"; }
  fs::resize_file(big, (std::uint64_t{200} << 20));  // sparse: 200 MiB
  const std::string long_name(300, 'x');
  const std::string shown_long = std::string(60, 'x') + "... (300 characters)";
  const std::string fifo = dir.at("model.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const std::string not_regular = "is not a regular file (a device, pipe or socket, whose reading might never end); give a file";
  const std::vector<Row> rows = {
      {{"cost", qwen, "--hw", long_name}, "--hw: \"" + shown_long + "\": File name too long"},
      {{"check", qwen, "-d", long_name + ".json"}, "--design: " + long_name + ".json: cannot open file: File name too long"},
      {{"check", qwen, "-d", "nope.json"}, "--design: nope.json: cannot open file: No such file or directory"},
      {{"check", qwen, "-d", "designs/hd.json"}, "--design: designs/hd.json: cannot open file: No such file or directory"},
      {{"check", qwen, "-d", dir.path.string()}, "--design: " + dir.path.string() + ": is a folder, not a file"},
      {{"check", qwen, "-d", "[1, 2]"}, "--design: inline JSON must be an object ({\"hd\": {...}}), got a list"},
      {{"cost", qwen, "--hw", "{\"name\": \"x\"}"},
       "--hw: takes a hardware profile file or a bundled name, not inline JSON (got {\"name\": \"x\"})"},
      {{"cost", qwen, "--hw", "profiles/hardware/nope.json"},
       "--hw: \"profiles/hardware/nope.json\": No such file or directory"},
      {{"cost", qwen, "--hw", "/dev/zero"}, "--hw: /dev/zero: " + not_regular},
      {{"check", "/dev/zero"}, "/dev/zero: " + not_regular},
      {{"check", fifo}, fifo + ": " + not_regular},
      {{"check", dir.path.string()}, dir.path.string() + ": is a folder, not a file"},
      {{"check", big}, big + ": is 200 MiB, more than the 64 MiB an input file may have"},
      {{"check", "no/such/model.json"}, "no/such/model.json: cannot open file: No such file or directory"},
      {{"cost", qwen, "--hw", "h100-sxm", "--scenario", "/dev/zero"}, "/dev/zero: " + not_regular},
      {{"sweep", "/dev/zero", "-o", dir.at("out")}, "/dev/zero: " + not_regular},
      {{"validate", big, "-o", dir.at("out")}, big + ": is 200 MiB, more than the 64 MiB an input file may have"},
      {{"calibrate", "-o", dir.at("x.json"), "--refit", "nope"},
       "--refit: no file \"nope\" and no bundled profile of that name (bundled in " + std::string(HDLAB_SOURCE_DIR) +
           "/profiles/hardware: a100-80gb-sxm, b200, cpu-xeon-2c, h100-sxm, h20, h200)"},
  };
  check_rows(rows);
  // An inline design longer than a file name may be is inline JSON, not a path.
  const auto r = run_cli({"check", qwen, "--json", "-d", "{\"hd\": {\"n\": 4}}" + std::string(300, ' ')});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("\"n\": 4") != std::string::npos);
}

TEST_CASE("outputs are checked before the work and errors name the flag and the path and why", "[cli][bad-input]") {
  TempDir dir;
  { std::ofstream(dir.at("file")) << "x"; }
  const std::vector<Row> rows = {
      {{"run", tiny, "--save-weights", dir.path.string()}, "--save-weights: " + dir.path.string() + ": is a folder, not a file"},
      {{"run", tiny, "--save-weights", dir.at("missing/w.safetensors")},
       "--save-weights: " + dir.at("missing/w.safetensors") + ": the folder " + dir.at("missing") + " does not exist"},
      // Checked before measuring: without the check this would measure for a minute first.
      {{"calibrate", "--quick", "-o", dir.at("missing/cpu.json")},
       "-o: " + dir.at("missing/cpu.json") + ": the folder " + dir.at("missing") + " does not exist"},
      {{"calibrate", "--refit", "cpu-xeon-2c", "-o", dir.path.string()}, "-o: " + dir.path.string() + ": is a folder, not a file"},
      {{"validate", validation_file, "-o", dir.at("file")}, "-o: " + dir.at("file") + ": is not a folder"},
      {{"sweep", sweep_file, "-o", dir.at("file")}, "-o: " + dir.at("file") + ": is not a folder"},
      {{"sweep", sweep_file, "-o", dir.at(std::string(300, 'y'))},
       "-o: " + dir.at(std::string(300, 'y')) + ": cannot use it as a folder: File name too long"},
      {{"validate", validation_file, "-o", dir.at("file/sub")},
       "-o: " + dir.at("file/sub") + ": cannot use it as a folder: Not a directory"},
      {{"mask", qwen, "-l", "0", "--png", dir.at("missing/m.png")},
       "--png: " + dir.at("missing/m.png") + ": the folder " + dir.at("missing") + " does not exist"},
      {{"mask", qwen, "-l", "0", "--png", dir.path.string()}, "--png: " + dir.path.string() + ": is a folder, not a file"},
  };
  check_rows(rows);
  CHECK(fs::is_directory(dir.path));
  CHECK(!fs::exists(dir.at("missing")));
  // A link is written through (to /dev/full here: the device's error, and the link stays
  // a link); a writer that renamed over it would have replaced the link, never /dev/full.
  fs::create_symlink("/dev/full", dir.at("full.safetensors"));
  auto r = run_cli({"run", tiny, "--tokens", "8", "--save-weights", dir.at("full.safetensors")});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: --save-weights: " + dir.at("full.safetensors") + ": cannot write: No space left on device\n");
  CHECK(fs::is_symlink(dir.at("full.safetensors")));
  fs::create_symlink("saved/w.safetensors", dir.at("latest.safetensors"));
  fs::create_directories(dir.at("saved"));
  r = run_cli({"run", tiny, "--tokens", "8", "--save-weights", dir.at("latest.safetensors")});
  CHECK(r.exit_code == 0);
  CHECK(fs::is_symlink(dir.at("latest.safetensors")));
  CHECK(fs::file_size(dir.at("saved/w.safetensors")) > 1000000);
}

TEST_CASE("a report that cannot reach stdout is a failure and not a success", "[cli][bad-input]") {
  struct Case {
    std::vector<std::string> args;
    std::string redirect;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {{"cost", qwen, "--hw", "h100-sxm"}, ">/dev/full", "No space left on device"},
      {{"cost", qwen, "--hw", "h100-sxm", "--json"}, ">/dev/full", "No space left on device"},
      {{"check", qwen}, ">/dev/full", "No space left on device"},
      {{"params", qwen}, ">&-", "Bad file descriptor"},
      {{"cost", qwen, "--hw", "h100-sxm"}, ">&-", "Bad file descriptor"},
      {{"--help"}, ">/dev/full", "No space left on device"},
  };
  for (const Case& c : cases) {
    INFO(c.args[0] << " " << c.redirect);
    const auto r = run_cli(c.args, CliShell{"", c.redirect});
    CHECK(r.exit_code == 1);
    CHECK(r.err == "hdlab: error: cannot write to standard output: " + c.reason + "\n");
  }
}

// The two cases below bound the CLI's address space with ulimit -v. A program built with
// AddressSanitizer reserves terabytes of shadow address space before main() and aborts
// under any such limit, so they are compiled only where the CLI is not built with it
// (the Release build of every test run); the ASan build does not register them.
#ifndef HDLAB_CLI_UNDER_ASAN
TEST_CASE("work known to exceed memory is refused before it starts", "[cli][bad-input]") {
  // ulimit -v bounds what this process may use: the budget hdlab checks against.
  const CliShell two_gib{"ulimit -v 2097152", ""};
  auto r = run_cli({"pipeline", qwen, "--hw", "h100-sxm", "--pp", "4", "--microbatches", "1000000", "--json"}, two_gib);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: --microbatches: 1000000 micro-batches x 8 tasks each, as a JSON timeline, need about "
                 "7.6 GiB, more than the 2.0 GiB this process may use (ulimit -v); leave the timeline out "
                 "(--no-timeline) or use fewer micro-batches\n");
  CHECK(r.out.empty());
  // The simulation alone: 16,777,216 tasks of about 128 bytes.
  r = run_cli({"pipeline", qwen, "--hw", "h100-sxm", "--pp", "8", "--microbatches", "1048576"}, {"ulimit -v 1572864", ""});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: --microbatches: 1048576 micro-batches x 16 tasks each need about 2.0 GiB, more than the "
                 "1.5 GiB this process may use (ulimit -v); use fewer micro-batches\n");

  TempDir dir;
  nlohmann::json values = nlohmann::json::array();
  for (int i = 1; i <= 1000; ++i) values.push_back(i);
  const nlohmann::json sweep = {
      {"model", hdlab::testing::source_path(qwen)},
      {"hardware", hdlab::testing::source_path("profiles/hardware/h100-sxm.json")},
      {"axes",
       {{{"pointer", "/scenario/decode/batch"}, {"values", values}},
        {{"pointer", "/scenario/decode/context"}, {"values", values}},
        {{"pointer", "/scenario/prefill/tokens"}, {"values", nlohmann::json(values.begin(), values.begin() + 500)}}}},
      {"columns", {"kv_bytes"}}};
  std::ofstream(dir.at("huge.json")) << sweep.dump();
  r = run_cli({"sweep", dir.at("huge.json"), "-o", dir.at("out")}, two_gib);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: /axes: 500000000 points x 1 stored column need about 4.2 GiB, more than the 2.0 GiB "
                 "this process may use (ulimit -v); split the sweep or keep fewer columns\n");
  CHECK_FALSE(fs::exists(dir.at("out")));  // refused before the folder was made
}

TEST_CASE("a worker thread that cannot start ends the sweep with a message and no abort", "[cli][bad-input]") {
  // Threads get 1 GiB stacks (ulimit -s) and the process 3.5 GiB in all: room for the
  // start-up (under 2.5 GiB) and one worker, not for four (pthread_create: EAGAIN).
  // OpenBLAS starts no threads of its own, so the count does not depend on the cores.
  TempDir dir;
  const CliShell tight{"export OPENBLAS_NUM_THREADS=1 && ulimit -s 1048576 && ulimit -v 3670016", ""};
  const auto r = run_cli({"sweep", sweep_file, "-o", dir.at("out"), "-j", "4"}, tight);
  CHECK(r.exit_code == 1);
  CHECK(r.err.rfind("hdlab: internal error: cannot start sweep worker thread ", 0) == 0);
  CHECK(r.err.find("Resource temporarily unavailable") != std::string::npos);
}
#endif  // HDLAB_CLI_UNDER_ASAN
