// `hdlab validate` and `hdlab calibrate` as a user runs them: bad validation files exit 2
// naming the JSON pointer, cases that are not held out are refused, the error threshold
// sets the exit code, the outputs are written (points.json in the GUI's format), and a
// cuda calibration writes a GPU profile where a device is and exits 2 where none is.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../cli/cli_runner.hpp"
#include "hdlab/calibration/validation.hpp"
#include "hdlab/executor/backends.hpp"
#include "hdlab/simulator/hardware.hpp"

using namespace hdlab::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json small_file() {
  return json::parse(R"({
    "models": {"m": {"path": "PROFILES/models/tiny-dense.json", "scale": {"layers": 2, "hidden": 96, "heads": 3, "kv_heads": 1, "head_dim": 32, "vocab": 500}}},
    "designs": {"base": {}, "hd": {"design": "hd:n=2"}},
    "measure": {"warmup": 1, "repeats": 3},
    "cases": [{"model": "m", "designs": ["base", "hd"], "phases": ["prefill"], "tokens": [40]}]
  })");
}

// Writes the file (model paths made absolute) and returns its path.
std::string write(json j, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("hdlab_validate_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (auto& [k, m] : j["models"].items()) {
    std::string p = m["path"];
    if (p.rfind("PROFILES", 0) == 0) m["path"] = source_path("profiles") + p.substr(8);
  }
  std::ofstream(dir / name) << j.dump(2);
  return (dir / name).string();
}

}  // namespace

TEST_CASE("hdlab validate: bad files exit 2 naming the JSON pointer", "[cli][validate]") {
  json j = small_file();
  j["colour"] = 1;
  CliResult r = run_cli({"validate", write(j, "a.json"), "--hw", "h100-sxm", "-o", "/tmp/unused"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/colour: unknown key") != std::string::npos);
  j = small_file();
  j["cases"][0]["designs"][1] = "vwnn";
  r = run_cli({"validate", write(j, "b.json"), "--hw", "h100-sxm", "-o", "/tmp/unused"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/cases/0/designs/1: unknown design \"vwnn\"") != std::string::npos);
  j = small_file();
  j["cases"] = json::array();
  r = run_cli({"validate", write(j, "c.json"), "--hw", "h100-sxm", "-o", "/tmp/unused"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/cases: must list at least one case") != std::string::npos);
  j = small_file();
  j["cases"][0]["phases"][0] = "prefil";
  r = run_cli({"validate", write(j, "d.json"), "--hw", "h100-sxm", "-o", "/tmp/unused"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/cases/0/phases/0: must be one of prefill, decode, train-forward") != std::string::npos);
}

TEST_CASE("hdlab validate refuses a case with a calibration shape unless --allow-overlap", "[cli][validate]") {
  // tiny-dense as it is (D = 256, 8 heads of 32) prefilled with 256 tokens: its query
  // projection is the 256 x 256 x 256 GEMM every calibration plan measures.
  json j = small_file();
  j["models"]["m"].erase("scale");
  j["cases"][0]["tokens"] = {256};
  const CliResult r = run_cli({"validate", write(j, "e.json"), "--hw", "cpu-xeon-2c", "-o", "/tmp/unused"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/cases/0: case \"m base prefill L=256\" is not held out: GEMM 256x256x256") != std::string::npos);
}

TEST_CASE("hdlab validate writes its outputs and --max-median-error sets the exit code", "[cli][validate]") {
  const std::string file = write(small_file(), "f.json");
  const std::string out = (fs::temp_directory_path() / ("hdlab_validate_out_" + std::to_string(::getpid()))).string();
  // A datasheet GPU profile predicts a CPU run far too fast: the median error is ~100%.
  CliResult r = run_cli({"validate", file, "--hw", "h100-sxm", "-o", out, "--max-median-error", "0.5"});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("validate FAILED: median |time error|") != std::string::npos);
  r = run_cli({"validate", file, "--hw", "h100-sxm", "-o", out, "--max-median-error", "1000"});
  CHECK(r.exit_code == 0);
  const json report = json::parse(slurp(fs::path(out) / "validation.json"));
  CHECK(report["summary"]["cases"] == 2);
  // The peak holds the weights and the KV cache at least, and the forward-memory model
  // predicts it (within 2%, as test_forward_memory asks of the model itself).
  const json& memory = report["cases"][0]["memory"];
  CHECK(memory["measured_peak_bytes"].get<double>() >=
        memory["measured_weight_bytes"].get<double>() + memory["measured_kv_bytes"].get<double>());
  CHECK(memory["measured_weight_bytes"].get<double>() > 0);
  CHECK(memory["predicted_bytes"].get<double>() == Approx(memory["measured_peak_bytes"].get<double>()).epsilon(0.02));
  const json points = json::parse(slurp(fs::path(out) / "points.json"));
  REQUIRE(points["points"].size() == 2);
  for (const auto& [key, v] : points["points"][0].items())
    CHECK((key == "design" || key == "label" || key == "predicted_s" || key == "measured_s"));
  CHECK(slurp(fs::path(out) / "validation.csv").rfind("label,model,design,phase", 0) == 0);
  fs::remove_all(out);
}

TEST_CASE("hdlab calibrate --backend cuda: a GPU profile where a device is, else exit 2 naming --backend and why",
          "[cli][calibrate][cuda]") {
  // The test asks the driver itself, as `hdlab calibrate` does, and asserts on both paths.
  const hdlab::executor::CudaProbe probe = hdlab::executor::probe_cuda();
  const fs::path dir = fs::temp_directory_path() / ("hdlab_calibrate_cuda_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path profile = dir / "gpu.json";
  const CliResult r = run_cli({"calibrate", "--backend", "cuda", "--quick", "--quiet", "-o", profile.string()});
  INFO(r.err);
  if (probe.devices > 0) {
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("profile written to " + profile.string()) != std::string::npos);
    const hdlab::simulator::HardwareProfile h =
        hdlab::simulator::parse_hardware_profile(json::parse(slurp(profile)));
    CHECK(h.kind == hdlab::simulator::DeviceKind::gpu);
    CHECK(h.has_curves());
    CHECK(h.peak_fp32_tflop_per_s > 0);
    CHECK(h.calibration["run"]["backend"] == "cuda");
    CHECK_FALSE(h.calibration["run"]["device"].get<std::string>().empty());
    CHECK_FALSE(hdlab::calibration::calibration_samples(h).empty());
  } else {
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--backend") != std::string::npos);
    CHECK(r.err.find("no CUDA device") != std::string::npos);
    CHECK(r.err.find(probe.reason) != std::string::npos);
    CHECK_FALSE(fs::exists(profile));
  }
  fs::remove_all(dir);
}
