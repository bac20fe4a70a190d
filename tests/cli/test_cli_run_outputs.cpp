// hdlab run --input-ids FILE --save-outputs OUT: the file read back with the executor's
// safetensors reader, its names, shapes, dtypes and row positions per design and phase;
// its numbers checked against the weights --save-weights wrote (embeddings are the table
// rows of the ids; the last hidden state through the final RMSNorm and the head, computed
// here in double precision, gives the logits); runs repeat exactly, HD n=1 equals the
// baseline, the physical layout does not change what is saved, decode equals the full
// forward's last token; bad --input-ids exit 2 naming the flag.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "cli_runner.hpp"
#include "hdlab/executor/backends.hpp"
#include "hdlab/executor/safetensors.hpp"

using hdlab::executor::SafetensorsReader;
using hdlab::executor::Shape;
using hdlab::testing::run_cli;
namespace fs = std::filesystem;

namespace {

// tiny-dense scaled to 2 layers (sliding, full) of D 64, 4 query / 2 KV heads, SwiGLU 96,
// vocabulary 300 (padded to 320).
const std::vector<std::string> kTiny = {"--layers", "2",  "--hidden", "64",  "--heads",   "4", "--kv-heads", "2",
                                        "--ffn",    "96", "--vocab",  "300", "--repeats", "1", "--warmup",   "0"};
constexpr std::int64_t kD = 64, kPaddedVocab = 320;
const std::vector<std::int64_t> kIds = {5, 17, 299, 0, 42, 42, 123, 7};

struct TempDir {
  fs::path dir = fs::temp_directory_path() / ("hdlab_cli_outputs_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(dir); }
  ~TempDir() { fs::remove_all(dir); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return path(name);
  }
};

std::string ids_text(const std::vector<std::int64_t>& ids) {
  std::string s;
  for (auto i : ids) s += std::to_string(i) + "\n";
  return s;
}

// Runs `hdlab run tiny-dense` with the design and phase on kIds; returns the outputs' path.
std::string run_outputs(const TempDir& t, const std::string& name, const std::string& design, const std::string& phase,
                        const std::vector<std::string>& more = {}) {
  const std::string out = t.path(name + ".safetensors"), weights = t.path(name + ".weights.safetensors");
  std::vector<std::string> a = {"run", "profiles/models/tiny-dense.json", "--design", design, "--phase", phase,
                                "--input-ids", t.file(name + ".ids.txt", ids_text(kIds)), "--save-outputs", out,
                                "--save-weights", weights};
  a.insert(a.end(), kTiny.begin(), kTiny.end());
  a.insert(a.end(), more.begin(), more.end());
  const auto r = run_cli(a);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("outputs saved to " + out) != std::string::npos);
  return out;
}

// An I64 tensor (the executor's reader reads float tensors only).
std::vector<std::int64_t> read_i64(const SafetensorsReader& r, const std::string& name) {
  const auto& e = r.entries().at(name);
  REQUIRE(e.dtype == "I64");
  std::ifstream in(r.path(), std::ios::binary);
  std::uint64_t header = 0;
  in.read(reinterpret_cast<char*>(&header), 8);
  in.seekg(static_cast<std::streamoff>(8 + header + e.begin));
  std::vector<std::int64_t> v((e.end - e.begin) / 8);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 8));
  REQUIRE(in);
  return v;
}

std::vector<float> read(const SafetensorsReader& r, const std::string& name) {
  INFO(name);
  REQUIRE(r.contains(name));
  CHECK(r.entries().at(name).dtype == "F32");
  return r.read_f32(name, r.entries().at(name).shape);
}

std::vector<std::int64_t> range(std::int64_t first, std::int64_t count, std::int64_t step = 1) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < count; ++i) v.push_back(first + i * step);
  return v;
}

// Logits of hidden rows `rows` ([*, D] row-major): RMSNorm(eps) with model.norm.weight,
// then lm_head.weight [V, D], in double precision.
std::vector<double> head_of(const SafetensorsReader& w, const std::vector<float>& hidden,
                            const std::vector<std::int64_t>& rows, double eps) {
  const auto norm = w.read_f32("model.norm.weight", {kD});
  const auto head = w.read_f32("lm_head.weight", {kPaddedVocab, kD});
  std::vector<double> out;
  for (auto row : rows) {
    const float* x = hidden.data() + row * kD;
    double sq = 0;
    for (std::int64_t d = 0; d < kD; ++d) sq += static_cast<double>(x[d]) * x[d];
    const double inv = 1.0 / std::sqrt(sq / kD + eps);
    for (std::int64_t v = 0; v < kPaddedVocab; ++v) {
      double acc = 0;
      for (std::int64_t d = 0; d < kD; ++d)
        acc += static_cast<double>(x[d]) * inv * norm[static_cast<std::size_t>(d)] * head[static_cast<std::size_t>(v * kD + d)];
      out.push_back(acc);
    }
  }
  return out;
}

// max |a - b| over max |b|.
double max_rel(const std::vector<float>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / scale;
}
double max_rel(const std::vector<float>& a, const std::vector<float>& b) {
  return max_rel(a, std::vector<double>(b.begin(), b.end()));
}

double norm_eps(const SafetensorsReader& out) {
  return nlohmann::json::parse(out.metadata().at("config"))["backbone"]["norm_eps"].get<double>();
}

}  // namespace

TEST_CASE("hdlab run --save-outputs: baseline names, shapes, dtypes, metadata - logits from the last hidden state",
          "[cli][run][outputs]") {
  TempDir t;
  const std::string path = run_outputs(t, "base", "baseline", "train-forward");
  const SafetensorsReader out(path), w(path.substr(0, path.size() - 12) + ".weights.safetensors");
  const std::int64_t T = static_cast<std::int64_t>(kIds.size());
  std::set<std::string> names;
  for (const auto& [name, e] : out.entries()) names.insert(name);
  CHECK(names == std::set<std::string>{"input_ids", "embeddings", "positions.embeddings", "hidden.0", "positions.hidden.0",
                                       "hidden.1", "positions.hidden.1", "logits", "positions.logits"});
  CHECK(read_i64(out, "input_ids") == kIds);
  for (const char* h : {"embeddings", "hidden.0", "hidden.1"}) {
    INFO(h);
    CHECK(out.entries().at(h).shape == Shape{T, kD});
    CHECK(read_i64(out, std::string("positions.") + h) == range(0, T));
  }
  CHECK(out.entries().at("logits").shape == Shape{T, kPaddedVocab});
  CHECK(read_i64(out, "positions.logits") == range(0, T));
  const auto& meta = out.metadata();
  CHECK(meta.at("format") == "hdlab-outputs");
  CHECK(meta.at("phase") == "train-forward");
  CHECK(meta.at("tokens") == "8");
  CHECK(meta.at("copies") == "1");
  CHECK(meta.at("hidden_width") == "64");
  CHECK(meta.at("padded_vocab") == "320");
  CHECK(meta.at("run_dtype") == "f32");
  // The embeddings are the table's rows of the ids, exactly.
  const auto table = w.read_f32("model.embed_tokens.weight", {kPaddedVocab, kD});
  const auto emb = read(out, "embeddings");
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t d = 0; d < kD; ++d)
      REQUIRE(emb[static_cast<std::size_t>(i * kD + d)] == table[static_cast<std::size_t>(kIds[static_cast<std::size_t>(i)] * kD + d)]);
  // f32 against double over a 64-long norm and dot product: within 1e-5 of the largest logit.
  CHECK(max_rel(read(out, "logits"), head_of(w, read(out, "hidden.1"), range(0, T), norm_eps(out))) < 1e-5);
  // Written atomically: nothing but the outputs, the weights and the ids in the folder.
  CHECK(std::distance(fs::directory_iterator(t.dir), fs::directory_iterator()) == 3);
}

TEST_CASE("hdlab run --save-outputs: repeatable, and HD n=1 equals the baseline", "[cli][run][outputs]") {
  TempDir t;
  const SafetensorsReader a(run_outputs(t, "a", "baseline", "train-forward"));
  const SafetensorsReader b(run_outputs(t, "b", "baseline", "train-forward"));
  const SafetensorsReader hd1(run_outputs(t, "hd1", "hd:n=1", "train-forward"));
  for (const char* name : {"embeddings", "hidden.0", "hidden.1", "logits"}) {
    INFO(name);
    CHECK(read(a, name) == read(b, name));
    CHECK(max_rel(read(hd1, name), read(a, name)) < 1e-6);
  }
}

TEST_CASE("hdlab run --save-outputs: HD streams interleaved t = i*n + k whatever the layout - logits of the final stream",
          "[cli][run][outputs]") {
  TempDir t;
  const std::string path = run_outputs(t, "hd", "hd:n=2", "train-forward", {"--layout", "interleaved"});
  const SafetensorsReader out(path), w(path.substr(0, path.size() - 12) + ".weights.safetensors");
  const SafetensorsReader sm(run_outputs(t, "sm", "hd:n=2", "train-forward", {"--layout", "stream_major"}));
  CHECK(out.metadata().at("layout") == "interleaved");
  CHECK(sm.metadata().at("layout") == "stream_major");
  const std::int64_t T = static_cast<std::int64_t>(kIds.size());
  CHECK(out.metadata().at("copies") == "2");
  CHECK(out.entries().at("hidden.1").shape == Shape{2 * T, kD});
  CHECK(read_i64(out, "positions.hidden.1") == range(0, 2 * T));
  CHECK(read_i64(out, "positions.logits") == range(1, T, 2));
  // Row 2i + k of the embeddings: stream k's table at token i.
  const auto emb = read(out, "embeddings");
  const auto t0 = w.read_f32("model.embed_tokens.weight", {kPaddedVocab, kD});
  const auto t1 = w.read_f32("hdlab.hd.embed_tokens.1.weight", {kPaddedVocab, kD});
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t d = 0; d < kD; ++d) {
      const auto id = kIds[static_cast<std::size_t>(i)];
      REQUIRE(emb[static_cast<std::size_t>((2 * i) * kD + d)] == t0[static_cast<std::size_t>(id * kD + d)]);
      REQUIRE(emb[static_cast<std::size_t>((2 * i + 1) * kD + d)] == t1[static_cast<std::size_t>(id * kD + d)]);
    }
  CHECK(max_rel(read(out, "logits"), head_of(w, read(out, "hidden.1"), range(1, T, 2), norm_eps(out))) < 1e-5);
  // Stream-major rows are reordered to the same logical order on saving.
  for (const char* name : {"embeddings", "hidden.0", "hidden.1", "logits"}) {
    INFO(name);
    CHECK(read_i64(sm, std::string("positions.") + name) == read_i64(out, std::string("positions.") + name));
    CHECK(max_rel(read(sm, name), read(out, name)) < 1e-5);
  }
}

TEST_CASE("hdlab run --save-outputs: decode is the last token of the full forward - PHD prefill rows - looped passes - VWN width",
          "[cli][run][outputs]") {
  TempDir t;
  const std::int64_t T = static_cast<std::int64_t>(kIds.size());
  // Decode: prefill of the first 7 ids, then the 8th decoded through the KV caches.
  const SafetensorsReader full(run_outputs(t, "full", "hd:n=2", "train-forward"));
  const SafetensorsReader dec(run_outputs(t, "dec", "hd:n=2", "decode"));
  CHECK(read_i64(dec, "input_ids") == kIds);
  CHECK(read_i64(dec, "positions.hidden.1") == range(2 * T - 2, 2));
  CHECK(read_i64(dec, "positions.logits") == std::vector<std::int64_t>{2 * T - 1});
  const auto all = read(full, "hidden.1");
  CHECK(max_rel(read(dec, "hidden.1"), std::vector<float>(all.end() - 2 * kD, all.end())) < 1e-5);
  const auto logits = read(full, "logits");
  CHECK(max_rel(read(dec, "logits"), std::vector<float>(logits.end() - kPaddedVocab, logits.end())) < 1e-5);
  // PHD plain prefill: the origins of every token, the hidden copy of the last one only.
  const SafetensorsReader phd(run_outputs(t, "phd", R"({"phd":{"K":2}})", "prefill"));
  std::vector<std::int64_t> rows = range(0, T, 2);
  rows.push_back(2 * T - 1);
  CHECK(read_i64(phd, "positions.hidden.1") == rows);
  CHECK(phd.entries().at("logits").shape == Shape{1, kPaddedVocab});
  CHECK(read_i64(phd, "positions.logits") == std::vector<std::int64_t>{2 * T - 1});
  // Looped: layer 0 the prelude, layer 1 recurrent 3 times: one tensor per layer pass; the
  // last pass's last row through the final norm and the head gives the prefill's logits.
  const std::string loop_path =
      run_outputs(t, "loop", R"({"looped":{"iterations":3,"prelude":1,"recurrent":1,"coda":0}})", "prefill");
  const SafetensorsReader loop(loop_path), loop_w(loop_path.substr(0, loop_path.size() - 12) + ".weights.safetensors");
  std::set<std::string> hidden;
  for (const auto& [name, e] : loop.entries())
    if (name.rfind("hidden.", 0) == 0) hidden.insert(name);
  CHECK(hidden == std::set<std::string>{"hidden.0", "hidden.1.iter.0", "hidden.1.iter.1", "hidden.1.iter.2"});
  CHECK(read_i64(loop, "positions.hidden.1.iter.2") == range(0, T));
  CHECK(max_rel(read(loop, "logits"), head_of(loop_w, read(loop, "hidden.1.iter.2"), {T - 1}, norm_eps(loop))) < 1e-5);
  // VWN m=2, n=4: the wide residual state D' = 128.
  const SafetensorsReader vwn(run_outputs(t, "vwn", R"({"vwn":{"m":2,"n":4}})", "train-forward"));
  CHECK(vwn.metadata().at("hidden_width") == "128");
  CHECK(vwn.entries().at("hidden.1").shape == Shape{T, 128});
  CHECK(vwn.entries().at("logits").shape == Shape{T, kPaddedVocab});
}

TEST_CASE("hdlab run --save-outputs --backend cuda: the CPU's outputs, else exit 2 naming --backend",
          "[cli][run][outputs][cuda]") {
  TempDir t;
  const hdlab::executor::CudaProbe probe = hdlab::executor::probe_cuda();
  if (probe.devices == 0) {
    const auto r = run_cli({"run", "profiles/models/tiny-dense.json", "--backend", "cuda", "--input-ids",
                            t.file("ids.txt", "1 2"), "--save-outputs", t.path("o.safetensors")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--backend") != std::string::npos);
    CHECK(!fs::exists(t.path("o.safetensors")));
    return;
  }
  const SafetensorsReader cpu(run_outputs(t, "cpu", "hd:n=2", "train-forward"));
  const SafetensorsReader gpu(run_outputs(t, "gpu", "hd:n=2", "train-forward", {"--backend", "cuda"}));
  for (const char* name : {"embeddings", "hidden.0", "hidden.1", "logits"}) {
    INFO(name);
    CHECK(read_i64(gpu, std::string("positions.") + name) == read_i64(cpu, std::string("positions.") + name));
    // Both f32 arithmetic (cuBLAS with 32-bit compute, no TF32) in other summation orders.
    CHECK(max_rel(read(gpu, name), read(cpu, name)) < 1e-4);
  }
}

TEST_CASE("hdlab run --input-ids: bad files and conflicts exit 2 naming the flag", "[cli][run][outputs]") {
  TempDir t;
  auto run = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> a = {"run", "profiles/models/tiny-dense.json"};
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), kTiny.begin(), kTiny.end());
    return run_cli(a);
  };
  struct Bad {
    std::string file, text, expect;
    std::vector<std::string> more;
  };
  const std::string out = (t.dir / "o.safetensors").string();
  for (const Bad& b : {Bad{"vocab.txt", "1 2 300", "id 300 (entry 2) is outside the vocabulary [0, 300)", {}},
                       Bad{"negative.txt", "-1", "id -1 (entry 0) is outside the vocabulary", {}},
                       Bad{"empty.txt", "", "holds no token ids", {}},
                       Bad{"blank.txt", " \n\n", "holds no token ids", {}},
                       Bad{"word.txt", "1 2 x3", "entry 2 (\"x3\") is not a token id", {}},
                       Bad{"float.txt", "1 2.5", "entry 1 (\"2.5\") is not a token id", {}},
                       Bad{"float.json", "[1, 2.5]", "element 1 (2.5) is not a token id", {}},
                       Bad{"object.json", "[1, {\"a\": 2}]", "element 1", {}},
                       Bad{"empty.json", "[]", "holds no token ids", {}},
                       Bad{"tokens.txt", "1 2 3", "conflicts with --input-ids", {"--tokens", "4"}},
                       Bad{"decode.txt", "1", "decode with --save-outputs needs at least 2 ids",
                           {"--phase", "decode", "--save-outputs", out}}}) {
    INFO(b.file);
    std::vector<std::string> a = {"--input-ids", t.file(b.file, b.text)};
    a.insert(a.end(), b.more.begin(), b.more.end());
    const auto r = run(a);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(b.more.empty() || b.more[0] != "--tokens" ? "--input-ids" : "--tokens") != std::string::npos);
    CHECK(r.err.find(b.expect) != std::string::npos);
    CHECK(r.out.empty());
  }
  const auto missing = run({"--input-ids", (t.dir / "none.txt").string()});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("--input-ids") != std::string::npos);
  // --save-outputs needs ids; its folder must exist before the run starts.
  const auto alone = run({"--save-outputs", out});
  CHECK(alone.exit_code == 2);
  CHECK(alone.err.find("--input-ids") != std::string::npos);
  const auto folder = run({"--input-ids", t.file("ok.txt", "1 2"), "--save-outputs", (t.dir / "no" / "o.st").string()});
  CHECK(folder.exit_code == 2);
  CHECK(folder.err.find("--save-outputs") != std::string::npos);
  CHECK(folder.out.empty());
  // One file for two purposes.
  const std::string ids = t.file("ids.txt", "1 2");
  const auto same = run({"--input-ids", ids, "--save-outputs", ids});
  CHECK(same.exit_code == 2);
  CHECK(same.err.find("--save-outputs") != std::string::npos);
  CHECK(same.err.find("--input-ids's file") != std::string::npos);
  const auto weights = run({"--input-ids", ids, "--save-outputs", out, "--save-weights", out});
  CHECK(weights.exit_code == 2);
  CHECK(weights.err.find("--save-weights's file") != std::string::npos);
  CHECK(!fs::exists(out));
  // The same count as the file is no conflict.
  CHECK(run({"--input-ids", t.file("three.txt", "1 2 3"), "--tokens", "3"}).exit_code == 0);
}
