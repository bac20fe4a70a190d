// A session file (simulator/session_io.hpp, what the GUI saves) as the MODEL of `hdlab
// cost` and `hdlab pipeline`: its hardware, scenario and pipeline options stand where the
// flags are not given, a flag given wins, "gui" is left alone, and an unknown key or a bad
// part exits with 2 naming its JSON pointer.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "cli_runner.hpp"

using hdlab::testing::run_cli;
using hdlab::testing::source_path;
using nlohmann::json;

namespace {

std::filesystem::path temp_folder(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("hdlab_cli_session_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Qwen3-8B + HD n=4 on the H100 at decode batch 8, tp 2; 4 stages x 8 micro-batches, 1F1B.
json session() {
  std::ifstream in(source_path("profiles/models/qwen3-8b.json"));
  json doc = json::parse(in);
  doc["design"] = {{"hd", {{"n", 4}}}};
  doc["hardware"] = "h100-sxm";
  doc["scenario"] = {{"decode", {{"batch", 8}}}, {"parallel", {{"tp", 2}}}};
  doc["pipeline"] = {{"pp", 4}, {"microbatches", 8}, {"schedule", "1f1b"}};
  doc["gui"] = {{"tab", "pipeline"}, {"layer", 3}};
  return doc;
}

std::string write(const std::filesystem::path& dir, const std::string& name, const json& doc) {
  const auto path = dir / name;
  std::ofstream(path) << doc.dump(2);
  return path.string();
}

json run_json(const std::vector<std::string>& args) {
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("hdlab cost SESSION: the session's hardware and scenario, flags over them", "[cli][session]") {
  const auto dir = temp_folder("cost");
  const std::string file = write(dir, "study.json", session());
  const json from_session = run_json({"cost", file, "--json"});
  const json from_flags = run_json({"cost", "profiles/models/qwen3-8b.json", "-d", "hd:n=4", "--hw", "h100-sxm",
                                    "--batch", "8", "--tp", "2", "--json"});
  CHECK(from_session == from_flags);
  CHECK(from_session["scenario"]["decode"]["batch"] == 8);

  // A flag given wins over the session; --hw over its hardware; --design over its design.
  const json batch16 = run_json({"cost", file, "--batch", "16", "--hw", "h200", "-d", "baseline", "--json"});
  CHECK(batch16 ==
        run_json({"cost", "profiles/models/qwen3-8b.json", "--hw", "h200", "--batch", "16", "--tp", "2", "--json"}));

  // Hardware inline, or as a file beside the session (not the working directory's).
  json inline_hw = session();
  std::ifstream h100(source_path("profiles/hardware/h100-sxm.json"));
  inline_hw["hardware"] = json::parse(h100);
  CHECK(run_json({"cost", write(dir, "inline.json", inline_hw), "--json"}) == from_session);
  std::filesystem::copy_file(source_path("profiles/hardware/h100-sxm.json"), dir / "device.json");
  json beside = session();
  beside["hardware"] = "device.json";
  CHECK(run_json({"cost", write(dir, "beside.json", beside), "--json"}) == from_session);
}

TEST_CASE("hdlab serve SESSION: the session's hardware and scenario", "[cli][session]") {
  const auto dir = temp_folder("serve");
  const std::string file = write(dir, "study.json", session());
  const std::string scenario = write(dir, "scenario.json", session()["scenario"]);
  CHECK(run_json({"serve", file, "--requests", "20", "--json"}) ==
        run_json({"serve", "profiles/models/qwen3-8b.json", "-d", "hd:n=4", "--hw", "h100-sxm", "--scenario", scenario,
                  "--requests", "20", "--json"}));
}

TEST_CASE("hdlab pipeline SESSION: the session's options, flags over them", "[cli][session]") {
  const auto dir = temp_folder("pipeline");
  const std::string file = write(dir, "study.json", session());
  const json from_session = run_json({"pipeline", file, "--json", "--no-timeline"});
  const std::string scenario = write(dir, "scenario.json", session()["scenario"]);
  const json from_flags =
      run_json({"pipeline", "profiles/models/qwen3-8b.json", "-d", "hd:n=4", "--hw", "h100-sxm", "--scenario", scenario,
                "--pp", "4", "--microbatches", "8", "--json", "--no-timeline"});
  CHECK(from_session == from_flags);
  const json gpipe =
      run_json({"pipeline", file, "--schedule", "interleaved:3", "--pp", "2", "--json", "--no-timeline"});
  CHECK(gpipe["pipeline"]["options"]["schedule"] == "interleaved:3");
  CHECK(gpipe["pipeline"]["options"]["pp"] == 2);
  CHECK(gpipe["pipeline"]["options"]["microbatches"] == 8);

  // A session's bad value is named by the file and its pointer, not by a flag not given.
  json bad = session();
  bad["pipeline"]["pp"] = 37;
  const std::string bad_file = write(dir, "bad.json", bad);
  const auto r = run_cli({"pipeline", bad_file});
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "hdlab: error: " + bad_file + ":/pipeline/pp: pp = 37 stages need at least as many layers; the model has 36\n");
}

TEST_CASE("hdlab with a bad session: exit 2 naming the JSON pointer", "[cli][session]") {
  const auto dir = temp_folder("bad");
  auto with = [](const std::string& pointer, const json& value) {
    json d = session();
    d[json::json_pointer(pointer)] = value;
    return d;
  };
  json typo = session();
  typo["scenaro"] = typo["scenario"];
  typo.erase("scenario");
  json no_hw = session();
  no_hw.erase("hardware");
  json no_pipeline = session();
  no_pipeline.erase("pipeline");
  const std::vector<std::tuple<std::string, json, std::string>> cases = {
      {"cost", typo, "/scenaro: unknown key"},
      {"cost", with("/scenario/decode/batch", 0), "/scenario/decode/batch: must be >= 1"},
      {"cost", with("/hardware", 7),
       "/hardware: must be a hardware profile object or a file / bundled name, got integer"},
      {"cost", with("/hardware", "h999"), ":/hardware: no file \"h999\" and no bundled profile of that name"},
      {"cost", with("/pipeline/schedule", "zero-bubble"), "/pipeline/schedule: unknown schedule"},
      {"cost", with("/gui", "tab"), "/gui: must be an object"},
      {"cost", no_hw, "--hw: is required"},
      {"pipeline", no_pipeline, "--pp: is required"},
  };
  int i = 0;
  for (const auto& [verb, doc, message] : cases) {
    const auto r = run_cli({verb, write(dir, "bad" + std::to_string(i++) + ".json", doc)});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(r.out.empty());
  }
  // The typo gets the closest session key.
  const auto r = run_cli({"cost", write(dir, "typo.json", typo)});
  CHECK(r.err.find("did you mean \"scenario\"") != std::string::npos);
}
