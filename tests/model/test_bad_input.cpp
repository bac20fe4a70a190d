// Hostile and careless input at the model layer: JSON nested tens of thousands of levels,
// repeated keys, syntax errors, unknown top-level keys, defaults nobody was told about,
// shorthand slips. Each is refused with the place and the reason (or, for defaults,
// recorded so `hdlab check` prints it), never a crash or a silent guess.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/files.hpp"

using namespace hdlab::model;

namespace {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// `levels` arrays inside each other: [[[...]]].
std::string nested_arrays(std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

// `levels` objects inside each other: {"a": {"a": ... 1 ...}}.
std::string nested_objects(std::size_t levels) {
  std::string s;
  for (std::size_t i = 0; i < levels; ++i) s += "{\"a\": ";
  return s + "1" + std::string(levels, '}');
}

// `value` repeated as the pointer of the first container past the limit: the 129th level.
std::string deep_pointer(const std::string& prefix, const std::string& step, std::size_t levels) {
  std::string p = prefix;
  for (std::size_t i = 0; i < levels; ++i) p += step;
  return p.size() > 120 ? p.substr(0, 117) + "..." : p;
}

const std::string kTooDeep = "JSON nested deeper than 128 levels (hdlab's limit for input files) at ";
const std::string kRepeats = " (JSON parsers keep one of the values and silently drop the other)";

Json tiny_backbone() {
  return Json::parse(R"({"name": "tiny", "num_layers": 4, "hidden_size": 64, "num_heads": 4, "num_kv_heads": 2,
                         "intermediate_size": 128, "vocab_size": 100,
                         "attention": {"layers": ["sliding", "full", "sliding", "full"], "sliding_window": 8}})");
}

}  // namespace

TEST_CASE("JSON nested 80,000 levels deep is refused while parsing, naming the limit", "[bad-input][json]") {
  const std::size_t deep = 80000;
  struct Row {
    const char* what;
    std::string text;
    std::string pointer;  // of the first container past the limit
  };
  const std::vector<Row> rows = {
      {"arrays", nested_arrays(deep), deep_pointer("", "/0", 128)},
      {"objects", nested_objects(deep), deep_pointer("", "/a", 128)},
      {"in a checked model field", R"({"backbone": {"num_layers": )" + nested_arrays(deep) + "}}",
       deep_pointer("/backbone/num_layers", "/0", 126)},
      {"in a list element", R"({"axes": [1, 2, )" + nested_objects(deep) + "]}", deep_pointer("/axes/2", "/a", 126)},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    CHECK(error_of([&] { parse_json_text(row.text, "deep.json"); }) == "deep.json: " + kTooDeep + row.pointer);
  }
  // The limit is exact: 128 levels load, 129 do not.
  CHECK(parse_json_text(nested_arrays(128), "ok.json").is_array());
  CHECK(parse_json_text(nested_objects(128), "ok.json").is_object());
  CHECK(error_of([] { parse_json_text(nested_arrays(129), "f.json"); }) ==
        "f.json: " + kTooDeep + deep_pointer("", "/0", 128));
}

TEST_CASE("every JSON entry point applies the depth limit: files, inline designs, shorthand values",
          "[bad-input][json]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hdlab_test_bad_input_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "deep.json").string();
  write_file_atomic(file, R"({"backbone": {"name": )" + nested_arrays(80000) + "}}");
  CHECK(error_of([&] { read_json_file(file); }) == file + ": " + kTooDeep + deep_pointer("/backbone/name", "/0", 126));
  fs::remove_all(dir);

  CHECK(error_of([] { design_json_from_shorthand(R"({"hd": {"n": )" + nested_arrays(80000) + "}}"); }) ==
        "/design: " + kTooDeep + deep_pointer("/hd/n", "/0", 126));
  // A shorthand or flag value is a scalar or text: deep brackets stay text, for the
  // design's own check to refuse by type.
  CHECK(json_scalar_or_text(nested_arrays(80000)) == Json(nested_arrays(80000)));
  CHECK(design_json_from_shorthand("hd:n=" + nested_arrays(80000))["hd"]["n"].is_string());
}

TEST_CASE("a repeated key is refused with the object's pointer and the key", "[bad-input][json]") {
  struct Row {
    const char* text;
    const char* object;
    const char* key;
  };
  const Row rows[] = {
      {R"({"a": 1, "a": 2})", "the top level", "a"},
      {R"({"backbone": {"num_layers": 2, "hidden_size": 8, "num_layers": 3}})", "/backbone", "num_layers"},
      {R"({"axes": [{"pointer": "/x"}, {"values": [], "values": [1]}]})", "/axes/1", "values"},
      {R"([{"k": 1}, [0, {"k": 1, "k": 1}]])", "/1/1", "k"},
      {R"({"a/b": {"~": 1, "~": 2}})", "/a~1b", "~"},
      {R"({"model.embed_tokens.weight": {}, "model.embed_tokens.weight": {}})", "the top level",
       "model.embed_tokens.weight"},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK(error_of([&] { parse_json_text(row.text, "f.json"); }) ==
          std::string("f.json: the object at ") + row.object + " repeats the key \"" + row.key + "\"" + kRepeats);
  }
  // The same key in different objects is fine.
  CHECK(parse_json_text(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 3}, {"k": 4}]})", "f.json").size() == 3);
  CHECK(error_of([] { design_json_from_shorthand(R"({"hd": {"n": 2, "n": 4}})"); }) ==
        "/design: the object at /hd repeats the key \"n\"" + kRepeats);
}

TEST_CASE("syntax errors give the file, line and column and the parser's reason", "[bad-input][json]") {
  struct Row {
    const char* text;
    const char* message;
  };
  const Row rows[] = {
      {R"({"a": 1,})",
       "line 1, column 9: syntax error while parsing object key - unexpected '}'; expected string literal"},
      {R"({"a" 1})",
       "line 1, column 6: syntax error while parsing object separator - unexpected number literal; expected ':'"},
      {"[1, 2", "line 1, column 6: syntax error while parsing array - unexpected end of input; expected ']'"},
      {"", "line 1, column 1: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal"},
      {"tru", "line 1, column 4: syntax error while parsing value - invalid literal; last read: 'tru'"},
      {"{\n  \"a\": [1,\n   2,,]\n}",
       "line 3, column 6: syntax error while parsing value - unexpected ','; expected '[', '{', or a literal"},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK(error_of([&] { parse_json_text(row.text, "f.json"); }) == std::string("f.json: invalid JSON at ") + row.message);
  }
  CHECK(error_of([] { parse_json_text(R"({"n": 1e400})", "f.json"); }) ==
        "f.json: invalid JSON: number overflow parsing '1e400'");
}

TEST_CASE("a model file's unknown top-level key is an error with a suggestion", "[bad-input][config]") {
  const Json doc = {{"backbone", tiny_backbone()}, {"desing", {{"hd", {{"n", 2}}}}}};
  CHECK(error_of([&] { load_backbone(doc); }) == "/desing: unknown key (did you mean \"design\"?)");
  CHECK(error_of([&] { parse_config(doc); }) == "/desing: unknown key (did you mean \"design\"?)");
  const Json hf_doc = {{"hf_config", {{"model_type", "llama"}}}, {"descripton", "x"}};
  CHECK(error_of([&] { load_backbone(hf_doc); }) == "/descripton: unknown key (did you mean \"description\"?)");
  // A bare backbone rejects unknown keys itself.
  Json bare = tiny_backbone();
  bare["hiden_size"] = 64;
  CHECK(error_of([&] { load_backbone(bare); }) == "/hiden_size: unknown key (did you mean \"hidden_size\"?)");
  // "dtype" beside "backbone" belongs inside it.
  const Json misplaced = {{"backbone", tiny_backbone()}, {"dtype", "fp32"}};
  CHECK(error_of([&] { load_backbone(misplaced); }) ==
        "/dtype: belongs inside \"backbone\" (beside it only with \"hf_config\")");
}

TEST_CASE("every default of our native format is recorded as an assumption", "[bad-input][config]") {
  const Json minimal = Json::parse(R"({"num_layers": 2, "hidden_size": 64, "num_heads": 4, "intermediate_size": 128,
                                       "vocab_size": 100})");
  const Backbone b = parse_backbone(minimal);
  std::vector<std::string> fields;
  for (const auto& [field, note] : b.assumptions) fields.push_back(field);
  CHECK(fields == std::vector<std::string>{"attention",        "attention_bias", "attention_sinks", "dtype",          "head_dim",
                                           "input_vocab_size", "kv_mirror_layers", "max_context",  "mlp",
                                           "mlp_bias",         "name",           "norm",           "norm_eps",
                                           "norm_placement",   "norms_per_layer", "num_kv_heads",  "output_bias",
                                           "positions",        "qk_norm",        "qk_norm_scope",  "rope_theta",
                                           "rotary_dim",       "tie_embeddings", "vocab_pad_multiple"});
  CHECK(b.assumptions.at("head_dim") == "not given; hidden_size / num_heads = 16 assumed (hdlab's default)");
  CHECK(b.assumptions.at("rope_theta") == "not given; 10000 assumed (hdlab's default)");
  // The normalised form states every value, and loads to the same backbone.
  CHECK(parse_backbone(to_json(b)) == b);
  // A note the file writes itself wins over the generic one.
  Json noted = minimal;
  noted["assumptions"] = {{"rope_theta", "not published: 10000 assumed"}};
  CHECK(parse_backbone(noted).assumptions.at("rope_theta") == "not published: 10000 assumed");
  // MoE defaults.
  Json moe = minimal;
  moe["moe"] = {{"num_experts", 4}, {"top_k", 2}, {"expert_intermediate_size", 32}};
  const Backbone m = parse_backbone(moe);
  for (const char* field : {"moe/num_shared_experts", "moe/shared_expert_intermediate_size", "moe/first_dense_layers",
                            "moe/router"})
    CHECK(m.assumptions.count(field) == 1);

  // Designs: every key left out, by pointer, with the value taken; make_config keeps them.
  const Design d = parse_design(design_json_from_shorthand("hd:n=2"), b);
  CHECK(d.defaults == std::map<std::string, std::string>{
                          {"/design/hd/kv_mirror", "false (the backbone has none) (hdlab's default)"},
                          {"/design/hd/layers", "full in every layer (hdlab's default)"},
                          {"/design/hd/rope", "expanded (hdlab's default)"},
                          {"/design/hd/rope_theta", "the backbone's 10000.0 (hdlab's default)"}});
  CHECK(make_config(b, d).design.defaults == d.defaults);
  const Backbone base = parse_backbone(tiny_backbone());  // alternating sliding (window 8) and full layers
  CHECK(parse_design(design_json_from_shorthand("hd:n=2"), base).defaults.at("/design/hd/layers") ==
        "local in the backbone's sliding layers, full in the others (hdlab's default)");
  const Design local = parse_design(Json::parse(R"({"hd": {"n": 2, "layers": {"full_every": 2}}})"), base);
  CHECK(local.defaults.at("/design/hd/window") ==
        "16 expanded positions = the backbone's sliding window (8 tokens) x n (2)");
  CHECK(local.defaults.at("/design/hd/layers/sliding") ==
        "local for the backbone's sliding layers (hdlab's default)");
  CHECK(parse_design(Json::object(), base).defaults.at("/design") == "no method given: baseline (hdlab's default)");
  const Design looped = parse_design(Json::parse(R"({"looped": {"iterations": 2}})"), base);
  CHECK(looped.defaults.at("/design/looped/recurrent") == "4: the layers between prelude and coda (hdlab's default)");
  CHECK(parse_design(to_json(looped), base).defaults.empty());  // explicit: nothing assumed
}

TEST_CASE("design shorthand: a repeated key and an empty design are errors", "[bad-input][config]") {
  CHECK(error_of([] { design_json_from_shorthand("hd:n=4,n=8"); }) ==
        "/design/hd/n: is given twice in \"hd:n=4,n=8\" (which value is meant?)");
  CHECK(error_of([] { design_json_from_shorthand("phd:K=2,variant=swa,W=4,W=8"); }) ==
        "/design/phd/W: is given twice in \"phd:K=2,variant=swa,W=4,W=8\" (which value is meant?)");
  CHECK(error_of([] { design_json_from_shorthand(""); }) ==
        "/design: is empty (give baseline, a shorthand such as hd:n=4, a JSON object or a file)");
  CHECK(error_of([] { design_json_from_shorthand(":n=4"); }) ==
        "/design: \":n=4\" names no design kind before ':' (baseline, hd, phd, vwn, looped, mhc)");
}

TEST_CASE("an HD design listing a full layer twice is an error", "[bad-input][config]") {
  const Backbone base = parse_backbone(tiny_backbone());
  CHECK(error_of([&] { parse_design(Json::parse(R"({"hd": {"n": 2, "layers": {"full_layers": [1, 3, 1]}}})"), base); }) ==
        "/design/hd/layers/full_layers/2: layer 1 is already listed");
  CHECK(parse_design(Json::parse(R"({"hd": {"n": 2, "layers": {"full_layers": [1, 3]}}})"), base) ==
        parse_design(Json::parse(R"({"hd": {"n": 2, "layers": ["local", "full", "local", "full"]}})"), base));
}
