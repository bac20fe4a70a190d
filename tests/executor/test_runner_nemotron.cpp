// The runner on Nemotron-H's blocks and on partial RoPE (executor/README.md "Mamba-2 and
// single-sublayer blocks under the designs"): a Mamba-2 layer's cached decode against its
// full forward, HD n = 1 against the baseline, HD's per-stream and cross-stream states,
// single-sublayer layers and the relu2 MLP; partial RoPE against the whole rotation.
// Tolerances as test_runner_linear.cpp: kSameFunction for one function computed in two
// association orders, exact (0) where the ops are the same, 1e-3 the least a change of
// function must move the logits.
#include "hdlab/model/error.hpp"
#include "runner_test_support.hpp"

namespace hdlab::executor::testing {

namespace {

RunOptions layout(model::Layout l) {
  RunOptions o;
  o.layout = l;
  return o;
}

}  // namespace

TEST_CASE("a Mamba-2 layer's cached decode equals its full forward", "[runner][mamba2]") {
  // One layer (mixer and relu2 MLP) over 140 tokens: a prefill of 70 in chunks of 16 (a
  // partial chunk), then 70 steps carrying the SSD state and the conv history.
  check_decode_matches_train(make(tiny_mamba(1), "{}"), 140, 70);
  // Mixer-only layers back to back; the Nemotron-H pattern with its attention block.
  check_decode_matches_train(make(tiny_mamba(2, true), "{}"), 40, 17);
  check_decode_matches_train(make(tiny_nemotron_h(), "{}"), 17, 6);
  check_decode_matches_train(make(tiny_nemotron_h(), "{}"), 17, 1);
}

TEST_CASE("HD n=1 equals the baseline on a Nemotron-H-shaped backbone", "[runner][mamba2][hd]") {
  const model::Backbone b = tiny_nemotron_h();
  Model base = build(make(b, "{}"));
  const auto t = tokens(13);
  for (const char* kinds : {"\"full\"", "\"intra\"", "[\"intra\", \"full\", \"full\", \"intra\", \"full\"]"}) {
    INFO(kinds);
    Model hd = build(make(b, std::string(R"({"hd": {"n": 1, "layers": )") + kinds + "}}"));
    CHECK(rel_diff(train_logits(hd, t), train_logits(base, t)) == 0.0);
    CHECK(rel_diff(decoded_logits(hd, t, 5), decoded_logits(base, t, 5)) == 0.0);
  }
}

TEST_CASE("HD on Nemotron-H: decode equals the full forward, stream-major equals interleaved",
          "[runner][mamba2][hd]") {
  const model::Backbone b = tiny_nemotron_h();
  for (const char* design : {R"({"hd": {"n": 2, "layers": "full"}})", R"({"hd": {"n": 3, "layers": "intra"}})",
                             R"({"hd": {"n": 2, "layers": ["intra", "full", "full", "intra", "full"]}})"}) {
    INFO(design);
    const model::Config c = make(b, design);
    Model inter = build(c, 9, layout(model::Layout::interleaved)),
          major = build(c, 9, layout(model::Layout::stream_major));
    const auto t = tokens(15);
    CHECK(rel_diff(train_logits(major, t), train_logits(inter, t)) < kSameFunction);
    check_decode_matches_train(c, 15, 6, layout(model::Layout::interleaved));
    check_decode_matches_train(c, 15, 6, layout(model::Layout::stream_major));
  }
}

TEST_CASE("HD intra-stream mamba2 layers keep n independent states", "[runner][mamba2][hd]") {
  // Every layer intra (no positions anywhere): the final stream is the baseline run on its
  // own with table E_{n-1}, the mamba2 layers included (one state per stream).
  const model::Backbone b = tiny_nemotron_h();
  const model::Config hd = make(b, R"({"hd": {"n": 3, "layers": "intra"}})");
  const auto t = tokens(12);
  for (model::Layout l : {model::Layout::interleaved, model::Layout::stream_major}) {
    INFO(model::to_string(l));
    Model h = build(hd, 5, layout(l));
    TableOfStream final_table(5, 2);
    Model base = build(make(b, "{}"), final_table);
    CHECK(rel_diff(train_logits(h, t), train_logits(base, t)) < kSameFunction);
    CHECK(rel_diff(decoded_logits(h, t, 4), decoded_logits(base, t, 4)) < kSameFunction);
  }
}

TEST_CASE("HD cross-stream mamba2 layers run one state over the interleaved sequence", "[runner][mamba2][hd]") {
  // Mamba-2 layers only and one table for every stream: HD n=2 with full layers over a b c
  // is the baseline over a a b b c c, its final stream the baseline's odd positions; intra
  // layers are not.
  const model::Backbone b = tiny_mamba(2);
  const auto t = tokens(9);
  std::vector<std::int32_t> doubled;
  for (auto x : t) doubled.insert(doubled.end(), {x, x});
  RandomWeights random(4);
  Model base = build(make(b, "{}"), random);
  const auto base_logits = train_logits(base, doubled);
  std::vector<float> odd;
  for (std::size_t i = 1; i < doubled.size(); i += 2) {
    const auto row = rows_of(base_logits, b.padded_vocab(), static_cast<std::int64_t>(i), 1);
    odd.insert(odd.end(), row.begin(), row.end());
  }
  SameTables same(4), same_again(4);
  Model full = build(make(b, R"({"hd": {"n": 2, "layers": "full"}})"), same);
  Model intra = build(make(b, R"({"hd": {"n": 2, "layers": "intra"}})"), same_again);
  CHECK(rel_diff(train_logits(full, t), odd) < kSameFunction);
  CHECK(rel_diff(train_logits(intra, t), odd) > 1e-3);
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
