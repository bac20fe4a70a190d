// capture_outputs and the runner's hidden-state observer: the states come from the pass
// itself (the logits are the same bits as a call without the observer), one per layer
// run in execution order, HD KV-mirror layers keep the final stream's rows only, and the
// observer is gone after a capture. The safetensors writer's I64 tensors.
#include <filesystem>

#include "hdlab/executor/outputs.hpp"
#include "runner_test_support.hpp"

using namespace hdlab::executor;
using namespace hdlab::executor::testing;
namespace model = hdlab::model;

namespace {

std::vector<std::int64_t> positions(const ForwardOutputs& o, const std::string& name) {
  const CapturedTensor* t = o.find("positions." + name);
  REQUIRE(t);
  CHECK(t->dtype == StDtype::i64);
  return std::vector<std::int64_t>(t->values.begin(), t->values.end());
}

std::vector<std::int64_t> every(std::int64_t first, std::int64_t count, std::int64_t step) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < count; ++i) v.push_back(first + i * step);
  return v;
}

}  // namespace

TEST_CASE("capture_outputs: HD KV mirror keeps the final stream after the mirror - logits bit-equal to a plain call",
          "[runner][outputs]") {
  model::Backbone b = tiny_dense(4);
  b.kv_mirror_layers = 1;  // layer 3 takes K/V from layer 0's input: from layer 3 on, the final stream only
  const model::Config c =
      make(b, R"({"hd": {"n": 3, "layers": ["full", "local", "intra", "intra"], "window": 5, "kv_mirror": true}})");
  Model m = build(c, 3);
  const auto t = tokens(11);
  const std::int64_t T = 11, V = b.padded_vocab();
  const ForwardOutputs o = capture_outputs(*m.runner, Phase::train_forward, t);
  for (const char* name : {"embeddings", "hidden.0", "hidden.1", "hidden.2"}) {
    INFO(name);
    CHECK(o.find(name)->shape == Shape{3 * T, 32});
    CHECK(positions(o, name) == every(0, 3 * T, 1));
  }
  CHECK(o.find("hidden.3")->shape == Shape{T, 32});
  CHECK(positions(o, "hidden.3") == every(2, T, 3));
  CHECK(positions(o, "logits") == every(2, T, 3));
  REQUIRE(o.find("logits")->shape == Shape{T, V});
  // The same call without an observer computes the same bits: nothing was recomputed.
  const auto plain = m.backend->download_f32(m.runner->train_forward(t).logits);
  CHECK(o.find("logits")->values == plain);
  // Decode: the last token's three rows, then its final stream only.
  const ForwardOutputs d = capture_outputs(*m.runner, Phase::decode, t);
  CHECK(positions(d, "hidden.2") == every(3 * T - 3, 3, 1));
  CHECK(positions(d, "hidden.3") == every(3 * T - 1, 1, 1));
  CHECK(rel_diff(d.find("logits")->values, rows_of(plain, V, T - 1, 1)) < kSameFunction);
  CHECK_THROWS_WITH(capture_outputs(*m.runner, Phase::decode, std::span(t.data(), 1)),
                    Catch::Contains("at least 2 token ids"));
}

TEST_CASE("Runner hidden observer: embeddings then every layer run in order, none after a capture", "[runner][outputs]") {
  const model::Config c = make(tiny_dense(3), R"({"looped": {"iterations": 2, "prelude": 1, "recurrent": 1, "coda": 1}})");
  Model m = build(c, 5);
  const auto t = tokens(6);
  std::vector<std::string> seen;
  m.runner->set_hidden_observer([&](const HiddenState& s) {
    seen.push_back(std::to_string(s.layer) + (s.recurrent ? "." + std::to_string(s.iteration) : ""));
    CHECK(s.x.dim(0) == static_cast<std::int64_t>(s.positions.size()));
  });
  m.runner->prefill(t, 6);
  CHECK(seen == std::vector<std::string>{"-1", "0", "1.0", "1.1", "2"});
  const ForwardOutputs o = capture_outputs(*m.runner, Phase::prefill, t);
  CHECK(o.find("hidden.1.iter.1"));
  seen.clear();
  m.runner->prefill(t, 6);
  CHECK(seen.empty());
}

TEST_CASE("write_safetensors: I64 tensors beside F32 ones - a value that is no whole number refused", "[runner][outputs]") {
  namespace fs = std::filesystem;
  const fs::path file = fs::temp_directory_path() / ("hdlab_outputs_" + std::to_string(::getpid()) + ".safetensors");
  const std::vector<SafetensorsTensorSpec> specs = {{"ids", {3}, StDtype::i64}, {"x", {2}}};
  write_safetensors(
      file.string(), specs,
      [](const SafetensorsTensorSpec& s) {
        return s.name == "ids" ? std::vector<float>{0, -5, 16777216} : std::vector<float>{1.5f, -2};
      },
      StDtype::f32);
  const SafetensorsReader r(file.string());
  CHECK(r.entries().at("ids").dtype == "I64");
  CHECK(r.entries().at("ids").end - r.entries().at("ids").begin == 24);
  CHECK(r.read_f32("x", {2}) == std::vector<float>{1.5f, -2});
  CHECK_THROWS_WITH(
      write_safetensors(
          file.string(), specs, [](const SafetensorsTensorSpec& s) { return std::vector<float>(s.name == "ids" ? 3 : 2, 0.5f); },
          StDtype::f32),
      Catch::Contains("tensor \"ids\": element 0 is not a whole number"));
  // The refused write left the earlier file whole.
  CHECK(SafetensorsReader(file.string()).entries().size() == 2);
  fs::remove(file);
}
