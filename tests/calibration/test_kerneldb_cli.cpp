// `hdlab validate --kerneldb` as a user runs it: a bad kerneldb table exits 2 naming the
// file, line and column; missing or conflicting flags exit 2 naming the flag. Without
// --device a fitted profile is held against the kerneldb folder it was fitted on.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "../cli/cli_runner.hpp"

using namespace hdlab::testing;
namespace fs = std::filesystem;

namespace {

// DIR/h100_sxm/gemm_perf.csv with `latency` as the second row's latency; returns DIR.
std::string kerneldb_with_latency(const std::string& latency) {
  const fs::path dir = fs::temp_directory_path() / ("hdlab_kerneldb_cli_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "h100_sxm");
  std::ofstream(dir / "h100_sxm" / "gemm_perf.csv")
      << "framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency\n"
         "TRTLLM,1.3.0rc20,NVIDIA H100 80GB HBM3,gemm,torch_flow,bfloat16,4353,65536,51200,39.3\n"
         "TRTLLM,1.3.0rc20,NVIDIA H100 80GB HBM3,gemm,torch_flow,fp8,16,4096,4096,"
      << latency << "\n";
  return dir.string();
}

}  // namespace

TEST_CASE("hdlab validate --kerneldb: bad tables and flags exit 2 naming the place", "[kerneldb][cli][bad-input]") {
  const std::string dir = kerneldb_with_latency("fast");
  const std::string out = (fs::temp_directory_path() / ("hdlab_kerneldb_cli_out_" + std::to_string(::getpid()))).string();
  struct Bad {
    const char* what;
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {"non-numeric latency",
       {"validate", "--kerneldb", dir, "--device", "h100_sxm", "--hw", "h100-sxm", "-o", out},
       dir + "/h100_sxm/gemm_perf.csv:3: column \"latency\": \"fast\" is not a number"},
      {"unknown device folder",
       {"validate", "--kerneldb", dir, "--device", "h800_sxm", "--hw", "h100-sxm", "-o", out},
       dir + "/h800_sxm: no such kerneldb device folder (devices in " + dir + ": h100_sxm)"},
      {"no --device: the folder the profile was fitted on is read",
       {"validate", "--kerneldb", dir, "--hw", "h100-sxm", "-o", out},
       dir + "/h100_sxm/gemm_perf.csv:3: column \"latency\": \"fast\" is not a number"},
      {"no --device with a derived profile",
       {"validate", "--kerneldb", dir, "--hw", "h200", "-o", out},
       "--device: give the device folder of " + dir + " to validate against (h100_sxm, a100_sxm, b200_sxm for the "
       "bundled profiles/kerneldb): NVIDIA H200 SXM 141GB was not fitted on one (its kernel models are derived)"},
      {"no --device with a profile fitted on a device the folder lacks",
       {"validate", "--kerneldb", dir, "--hw", "b200", "-o", out},
       "--device: NVIDIA B200 180GB was fitted on kerneldb device \"b200_sxm\", which " + dir + " does not hold"},
      {"no --hw", {"validate", "--kerneldb", dir, "--device", "h100_sxm", "-o", out}, "--hw: give the profile"},
      {"no -o", {"validate", "--kerneldb", dir, "--device", "h100_sxm", "--hw", "h100-sxm"}, "-o: give the folder"},
      {"no folder", {"validate", "--kerneldb", dir + "/nowhere", "--device", "h100_sxm", "--hw", "h100-sxm", "-o", out},
       "--kerneldb: Directory does not exist"},
      {"a validation file too",
       {"validate", "profiles/validation/cpu.json", "--kerneldb", dir, "--device", "h100_sxm", "--hw", "h100-sxm", "-o", out},
       "excludes"},
      {"--device without --kerneldb", {"validate", "profiles/validation/cpu.json", "--device", "h100_sxm", "-o", out},
       "--device requires --kerneldb"},
      {"neither a file nor --kerneldb", {"validate", "-o", out}, "file: give a validation file, --kerneldb DIR or --published PATH"},
      {"--gdn and --mamba2 together",
       {"validate", "--kerneldb", dir, "--device", "h100_sxm", "--hw", "h100-sxm", "--gdn", "--mamba2", "-o", out},
       "excludes"},

  };
  for (const Bad& b : cases) {
    CAPTURE(b.what);
    const CliResult r = run_cli(b.args);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(b.message) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(out));  // nothing written on bad input
  // --mamba2 on a valid folder without the table: exit 2 naming the missing table
  const std::string valid = kerneldb_with_latency("0.5");
  const CliResult r = run_cli({"validate", "--kerneldb", valid, "--device", "h100_sxm", "--hw", "h100-sxm", "--mamba2",
                               "-o", out});
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/h100_sxm/mamba2_perf.csv: no rows: the device folder has no mamba2_perf table") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out));
  // Without --device a fitted profile validates against the folder it was fitted on.
  const CliResult ok = run_cli({"validate", "--kerneldb", valid, "--hw", "h100-sxm", "-o", out});
  CAPTURE(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("no --device: validating against h100_sxm, the kerneldb device NVIDIA H100 SXM5 80GB was "
                    "fitted on") != std::string::npos);
  CHECK(ok.out.find("h100_sxm (NVIDIA H100 80GB HBM3): 2 gemm") != std::string::npos);
  CHECK(fs::exists(fs::path(out) / "kernels.json"));
  fs::remove_all(out);
  fs::remove_all(dir);
}
