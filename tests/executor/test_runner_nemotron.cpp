// The runner on Nemotron-H's blocks and on partial RoPE (executor/README.md "Mamba-2 and
// single-sublayer blocks under the designs"): a Mamba-2 layer's cached decode against its
// full forward with single-sublayer layers and the relu2 MLP, the designs it refuses;
// partial RoPE against the whole rotation. HD's states on Mamba-2 layers are checked with
// Gated DeltaNet's (test_runner_linear.cpp), the HF layouts in test_runner_hf_layers.cpp.
// Tolerances as test_runner_linear.cpp: kSameFunction for one function computed in two
// association orders, exact (0) where the ops are the same, 1e-3 the least a change of
// function must move the logits.
#include "hdlab/model/error.hpp"
#include "runner_test_support.hpp"

namespace hdlab::executor::testing {

TEST_CASE("a Mamba-2 layer's cached decode equals its full forward", "[runner][mamba2]") {
  // One layer (mixer and relu2 MLP) over 140 tokens: a prefill of 70 in chunks of 16 (a
  // partial chunk), then 70 steps carrying the SSD state and the conv history.
  check_decode_matches_train(make(tiny_mamba(1), "{}"), 140, 70);
  // Mixer-only layers back to back; the Nemotron-H pattern with its attention block.
  check_decode_matches_train(make(tiny_mamba(2, true), "{}"), 40, 17);
  check_decode_matches_train(make(tiny_nemotron_h(), "{}"), 17, 6);
  check_decode_matches_train(make(tiny_nemotron_h(), "{}"), 17, 1);
}

TEST_CASE("the designs Mamba-2 layers refuse are named by their pointer", "[runner][mamba2][bad-input]") {
  const model::Backbone b = tiny_nemotron_h();
  for (auto [design, pointer] : std::vector<std::pair<const char*, const char*>>{
           {R"({"phd": {"K": 2}})", "/design/phd"},
           {R"({"looped": {"iterations": 2}})", "/design/looped"},
           {R"({"vwn": {"m": 2, "n": 3}})", "/design/vwn"},
           {R"({"hd": {"n": 2, "layers": "local", "window": 4}})", "/design/hd/layers"}}) {
    INFO(design);
    try {
      (void)make(b, design);
      FAIL("accepted");
    } catch (const model::ConfigError& e) {
      CHECK(std::string(e.what()).rfind(pointer, 0) == 0);
    }
  }
}

TEST_CASE("partial RoPE rotates the first rotary_dim dims: its own function, whole-head RoPE at rotary_dim = hd",
          "[runner][rope]") {
  model::Backbone b = tiny_dense(2);
  const auto t = tokens(11);
  auto logits = [&](std::int64_t rotary) {
    model::Backbone c = b;
    c.rotary_dim = rotary;
    Model m = build(make(c, "{}"), 6);
    return train_logits(m, t);
  };
  const auto whole = logits(0);
  CHECK(rel_diff(logits(b.head_dim), whole) == 0.0);  // every dim rotated: the same ops
  CHECK(rel_diff(logits(4), whole) > 1e-3);
  CHECK(rel_diff(logits(2), logits(4)) > 1e-3);
  b.rotary_dim = 4;
  check_decode_matches_train(make(b, "{}"), 15, 5);
  check_decode_matches_train(make(b, R"({"hd": {"n": 2, "layers": "full"}})"), 15, 5);
  check_decode_matches_train(make(b, R"({"phd": {"K": 2}})"), 15, 5);
}

}  // namespace hdlab::executor::testing
