// Hostile and careless input as a user hands it to `hdlab`: every file kind (model,
// hardware, scenario, sweep, validation) nested 80,000 levels deep, repeated keys,
// typos, shorthand slips, impossible hardware, another model's weights. Each exits with
// 2 and a message naming the file (or flag) and the reason; none crashes.
#include <catch2/catch.hpp>

#include "cli_runner.hpp"

using hdlab::testing::run_cli;
using hdlab::testing::slurp;
using hdlab::testing::source_path;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("hdlab_test_cli_bad_json_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
  std::string at(const std::string& name) const { return (path / name).string(); }
};

const std::string kDeep = std::string(80000, '[') + std::string(80000, ']');

// The pointer the depth error shows: the first container past 128 levels, cut at 120
// characters.
std::string deep_pointer(std::string prefix, std::size_t arrays_before_limit) {
  for (std::size_t i = 0; i < arrays_before_limit; ++i) prefix += "/0";
  return prefix.size() > 120 ? prefix.substr(0, 117) + "..." : prefix;
}

std::string too_deep(const std::string& file, const std::string& pointer) {
  return "hdlab: error: " + file + ": JSON nested deeper than 128 levels (hdlab's limit for input files) at " + pointer +
         "\n";
}

}  // namespace

TEST_CASE("an 80,000-level nesting in any kind of input file exits 2 naming the file and the limit",
          "[cli][bad-input]") {
  TempDir dir;
  struct Row {
    const char* kind;
    std::string file;
    std::vector<std::string> args;
    std::string pointer;
  };
  const std::string model = dir.write("model.json", R"({"backbone": {"num_layers": )" + kDeep + "}}");
  const std::string hardware = dir.write("hardware.json", R"({"name": )" + kDeep + "}");
  const std::string scenario = dir.write("scenario.json", R"({"decode": {"batch": )" + kDeep + "}}");
  const std::string sweep = dir.write("sweep.json", R"({"axes": [{"pointer": "/design", "values": )" + kDeep + "}]}");
  const std::string validation = dir.write("validation.json", R"({"cases": )" + kDeep + "}");
  const std::string qwen = "profiles/models/qwen3-8b.json";
  const std::vector<Row> rows = {
      {"model", model, {"check", model}, deep_pointer("/backbone/num_layers", 126)},
      {"hardware", hardware, {"cost", qwen, "-d", "baseline", "--hw", hardware}, deep_pointer("/name", 127)},
      {"scenario",
       scenario,
       {"cost", qwen, "-d", "baseline", "--hw", "h100-sxm", "--scenario", scenario},
       deep_pointer("/decode/batch", 126)},
      {"sweep", sweep, {"sweep", sweep, "-o", dir.at("sweep-out")}, deep_pointer("/axes/0/values", 125)},
      {"validation", validation, {"validate", validation, "-o", dir.at("validate-out")}, deep_pointer("/cases", 127)},
  };
  for (const Row& row : rows) {
    INFO(row.kind);
    const auto r = run_cli(row.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err == too_deep(row.file, row.pointer));
    CHECK(r.out.empty());
  }
}

TEST_CASE("model-file slips exit 2 with the place: repeated key, unknown top-level key, shorthand, empty design",
          "[cli][bad-input]") {
  TempDir dir;
  const std::string backbone =
      R"("name": "x", "num_layers": 2, "hidden_size": 64, "num_heads": 4, "intermediate_size": 128, "vocab_size": 100)";
  const std::string repeated = dir.write("repeated.json", R"({"backbone": {)" + backbone + R"(, "num_layers": 4}})");
  const std::string typo = dir.write("typo.json", R"({"backbone": {)" + backbone + R"(}, "desing": {"hd": {"n": 2}}})");
  const std::string qwen = "profiles/models/qwen3-8b.json";
  struct Row {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Row> rows = {
      {{"check", repeated},
       "hdlab: error: " + repeated +
           ": the object at /backbone repeats the key \"num_layers\" (JSON parsers keep one of the values and "
           "silently drop the other)\n"},
      {{"check", typo}, "hdlab: error: " + typo + ":/desing: unknown key (did you mean \"design\"?)\n"},
      {{"check", qwen, "-d", "hd:n=4,n=8"},
       "hdlab: error: /design/hd/n: is given twice in \"hd:n=4,n=8\" (which value is meant?)\n"},
      {{"check", qwen, "-d", ""},
       "--design: is empty (give baseline, a shorthand such as hd:n=4, inline JSON or a file)\n"
       "Run with --help for more information.\n"},
      {{"params", qwen, "-d", "baseline", "-d", ""},
       "--design: is empty (give baseline, a shorthand such as hd:n=4, inline JSON or a file)\n"
       "Run with --help for more information.\n"},
      {{"check", qwen, "-d", R"({"hd": {"n": 2,})"},
       "hdlab: error: /design: invalid JSON at line 1, column 16: syntax error while parsing object key - unexpected "
       "'}'; expected string literal\n"},
  };
  for (const Row& row : rows) {
    INFO(row.args.back());
    const auto r = run_cli(row.args);
    CHECK(r.exit_code == 2);
    CHECK(r.err == row.err);
  }
}

TEST_CASE("hdlab check prints every default it applied", "[cli][bad-input]") {
  TempDir dir;
  const std::string bare = dir.write(
      "bare.json",
      R"({"name": "x", "num_layers": 2, "hidden_size": 64, "num_heads": 4, "intermediate_size": 128, "vocab_size": 100})");
  auto r = run_cli({"check", bare, "-d", "hd:n=2"});
  REQUIRE(r.exit_code == 0);
  for (const char* line : {"assumed rope_theta: not given; 10000 assumed (hdlab's default)\n",
                           "assumed dtype: not given; bf16 assumed (hdlab's default)\n",
                           "assumed num_kv_heads: not given; num_heads = 4 (multi-head attention) assumed (hdlab's "
                           "default)\n",
                           "assumed /design/hd/rope: expanded (hdlab's default)\n",
                           "assumed /design/hd/layers: full in every layer (hdlab's default)\n"})
    CHECK(r.out.find(line) != std::string::npos);
  // A float32 HF checkpoint is modelled in bf16, and check says so.
  json hf = json::parse(slurp(source_path("profiles/models/hf/qwen3-8b.config.json")));
  hf["torch_dtype"] = "float32";
  r = run_cli({"check", dir.write("hf32.json", hf.dump())});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("assumed dtype: the checkpoint is stored as float32; the run is modelled in bf16") !=
        std::string::npos);
  CHECK(json::parse(r.out.substr(r.out.find("\n{") + 1))["backbone"]["dtype"] == "bf16");
}

TEST_CASE("an HF config field hdlab cannot model exits 2 naming its pointer", "[cli][bad-input][hf]") {
  TempDir dir;
  // Kimi-K2 (model_type kimi_k2) imports and is costed; attention_bias on its multi-head
  // latent attention is refused by pointer.
  const auto ok = run_cli({"check", "profiles/models/hf/kimi-k2-instruct.config.json"});
  CHECK(ok.exit_code == 0);
  json hf = json::parse(slurp(source_path("profiles/models/hf/kimi-k2-instruct.config.json")));
  hf["attention_bias"] = true;
  const std::string file = dir.write("kimi.json", hf.dump());
  const auto r = run_cli({"check", file});
  CHECK(r.exit_code == 2);
  // The error names the file, as a native config's does.
  CHECK(r.err == "hdlab: error: " + file + ":/attention_bias: true is unsupported for multi-head latent attention (its q_a, kv_a "
                 "and o biases are not modelled)\n");
  CHECK(r.out.empty());
}

TEST_CASE("hardware numbers no device has exit 2 naming the field", "[cli][bad-input]") {
  TempDir dir;
  for (double peak : {1e-310, 1e300}) {
    json hw = json::parse(slurp(source_path("profiles/hardware/h100-sxm.json")));
    hw["peak_bf16_tflop_per_s"] = peak;
    const std::string file = dir.write("hw.json", hw.dump());
    const auto r = run_cli({"cost", "profiles/models/qwen3-8b.json", "-d", "baseline", "--hw", file});
    INFO(peak);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "hdlab: error: " + file +
                       ":/peak_bf16_tflop_per_s: must be between 1e-06 and 1000000.0 TFLOP/s (a physically sensible "
                       "device), got " + json(peak).dump() + "\n");
    CHECK(r.out.empty());
  }
}

TEST_CASE("hdlab run --weights refuses another design's file, naming the file and the tensor", "[cli][bad-input]") {
  TempDir dir;
  const std::string weights = dir.at("hd.safetensors");
  const std::vector<std::string> small = {"--tokens", "8", "--repeats", "1", "--warmup", "0"};
  std::vector<std::string> save = {"run", "profiles/models/tiny-dense.json", "-d", "hd:n=2", "--save-weights", weights};
  save.insert(save.end(), small.begin(), small.end());
  REQUIRE(run_cli(save).exit_code == 0);
  std::vector<std::string> load = {"run", "profiles/models/tiny-dense.json", "--weights", weights};
  load.insert(load.end(), small.begin(), small.end());
  const auto r = run_cli(load);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "hdlab: error: " + weights +
                     ": tensor \"hdlab.hd.embed_tokens.1.weight\" is not a weight of this model: the file was written "
                     "for another model or design (another layer count, method or size); its metadata says "
                     "tiny-dense, hd n=2 (0 intra, 2 local, 2 full, window 512)\n");
}
