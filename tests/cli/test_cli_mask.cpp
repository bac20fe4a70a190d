// `hdlab mask` as a user runs it: the text grid, the JSON counts (against the published
// pair formulas), the PNG file, and exit code 2 with a message for every bad input.
#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "cli_runner.hpp"

using hdlab::testing::run_cli;
using hdlab::testing::slurp;
using nlohmann::json;

namespace {

constexpr const char* qwen = "profiles/models/qwen3-8b.json";

// Width and height from a PNG's IHDR chunk (big-endian, bytes 16..23).
std::pair<std::uint32_t, std::uint32_t> png_size(const std::string& bytes) {
  auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

}  // namespace

TEST_CASE("hdlab mask draws an HD intra layer as a text grid", "[cli][mask]") {
  const auto r = run_cli({"mask", qwen, "-d", "hd:n=2,layers=intra", "--layer", "0", "--tokens", "3", "--tile", "4x4"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  // Interleaved order: each stream sees only itself; tile boundary after 4 keys and rows.
  CHECK(r.out.find("               key copy 0101|01\n") != std::string::npos);
  CHECK(r.out.find("    0      0     0    0 #...|..\n") != std::string::npos);
  CHECK(r.out.find("    3      3     1    1 .#.#|..\n") != std::string::npos);
  CHECK(r.out.find("                        ----|--\n") != std::string::npos);
  CHECK(r.out.find("    5      5     2    1 .#.#|.#\n") != std::string::npos);
  CHECK(r.out.find("visible pairs 12 (density 0.3333)") != std::string::npos);
}

TEST_CASE("hdlab mask --json gives exact counts and the spec", "[cli][mask]") {
  auto r = run_cli({"mask", qwen, "-d", "hd:n=4,layers=intra", "--layer", "5", "--tokens", "8192", "--layout",
                    "stream_major", "--tile", "128x64", "--json"});
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(j["mask"]["kind"] == "intra");
  CHECK(j["mask"]["positions"] == 4 * 8192);
  CHECK(j["layout"] == "stream_major");
  CHECK(j["counts"]["visible_pairs"] == std::int64_t{4} * 8192 * 8193 / 2);  // n L(L+1)/2
  // Stream-major intra tiles are n copies of a causal L x L grid of 64 x 128 tiles.
  CHECK(j["counts"]["tiles"]["total"] == std::int64_t{256} * 512);
  CHECK(j["counts"]["tiles"]["visible"].get<std::int64_t>() < std::int64_t{256} * 512 / 3);

  r = run_cli({"mask", "profiles/models/phd-1.2b.json", "--layer", "0", "--tokens", "1000", "--json"});
  REQUIRE(r.exit_code == 0);
  j = json::parse(r.out);
  CHECK(j["mask"]["kind"] == "phd");
  CHECK(j["layout"] == "phd_split");  // the PHD default
  CHECK(j["png"].is_null());
}

TEST_CASE("hdlab mask --png writes a heatmap of the requested layout", "[cli][mask]") {
  const auto path = std::filesystem::temp_directory_path() / ("hdlab_mask_" + std::to_string(::getpid()) + ".png");
  const auto r = run_cli({"mask", qwen, "-d", "hd:n=4,layers=full", "--layer", "1", "--tokens", "1024", "--png",
                          path.string()});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("wrote " + path.string()) != std::string::npos);
  const std::string bytes = slurp(path);
  REQUIRE(bytes.size() > 24);
  CHECK(bytes.substr(1, 3) == "PNG");
  CHECK(png_size(bytes) == std::pair<std::uint32_t, std::uint32_t>{4096, 4096});  // one pixel per pair
  std::filesystem::remove(path);
}

TEST_CASE("hdlab mask refuses bad input with exit code 2", "[cli][mask][errors]") {
  auto expect_error = [](std::vector<std::string> args, const std::string& message) {
    args.insert(args.begin(), {"mask", qwen});
    const auto r = run_cli(args);
    INFO(message);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "hdlab: error: " + message + "\n");
  };
  expect_error({"--layer", "36"}, "/layer: layer 36 is out of range: the model has 36 layers (0..35)");
  expect_error({"--layer", "0", "--tile", "64by64"},
               "--tile: must be BQxBK (query rows x keys, e.g. 128x64) or one size B, got \"64by64\"");
  expect_error({"--layer", "0", "--tile", "0x64"}, "--tile: tile sizes must be >= 1, got \"0x64\"");
  expect_error({"--layer", "0", "--layout", "diagonal"},
               "unknown layout \"diagonal\": expected interleaved, stream_major or phd_split");
  expect_error({"--layer", "0", "-d", "hd:n=4", "--tokens", "100"},
               "--tokens: 100 tokens x 4 copies = 400 positions is too many for a text grid (at most 256); use "
               "--png FILE or --json");
  expect_error({"--layer", "0", "--tokens", "5000", "--png", "/tmp/never.png"},
               "--tokens: 5000 tokens x 1 copies = 5000 positions is too many for a PNG (at most 4096); use --json");
  expect_error({"--layer", "0", "--tokens", "4", "--png", "/no/such/folder/m.png"},
               "--png: /no/such/folder/m.png: the folder /no/such/folder does not exist");
}
