// Dense FFN biases (mlp_bias: Llama's, Granite's) run by the runner: gate/up/down_proj.bias
// (relu2: up and down only) are weights the parameter count counts, they change the
// output, with zero biases the model is the unbiased one, and a cached decode equals the
// full forward. Executed FLOPs against the simulator: test_runner_flops.cpp.
#include "hdlab/model/params.hpp"
#include "runner_test_support.hpp"

namespace hdlab::executor::testing {

namespace {

// Random weights with every FFN bias zero.
class ZeroBiases : public WeightSource {
 public:
  explicit ZeroBiases(std::uint64_t seed) : random_(seed) {}
  std::vector<float> values(const WeightSpec& spec) override {
    bool bias = false;  // FFN biases: mlp.* (Nemotron-H's FFN blocks: mixer.*)
    for (const std::string tail : {"gate_proj.bias", "up_proj.bias", "down_proj.bias"})
      bias = bias || (spec.name.size() > tail.size() &&
                      spec.name.compare(spec.name.size() - tail.size(), tail.size(), tail) == 0);
    if (!bias) return random_.values(spec);
    ++zeroed;
    return std::vector<float>(static_cast<std::size_t>(element_count(spec.shape)), 0.0f);
  }
  int zeroed = 0;

 private:
  RandomWeights random_;
};

}  // namespace

TEST_CASE("mlp_bias: the dense FFN's biases are weights, counted as the model counts them", "[runner][mlp_bias]") {
  const model::Config c = make(with_mlp_bias(tiny_dense()), "{}");
  std::vector<std::string> biases;
  for (const WeightSpec& s : weight_specs(c))
    if (s.name.find("mlp.") != std::string::npos && s.name.find(".bias") != std::string::npos)
      biases.push_back(s.name + " " + to_string(s.shape));
  REQUIRE(biases.size() == 9);  // 3 layers x gate, up, down
  CHECK(biases[0] == "model.layers.0.mlp.gate_proj.bias [48]");
  CHECK(biases[2] == "model.layers.0.mlp.down_proj.bias [32]");
  // 3 layers x (2F + D) = 3 x 128 more than without
  CHECK(spec_elements(c) == spec_elements(make(tiny_dense(), "{}")) + 3 * (2 * 48 + 32));
  CHECK(model::count_params(c).total == spec_elements(c));
  // relu2 (Nemotron-H's MLP): up and down biases, F + D per FFN layer
  const model::Config r = make(with_mlp_bias(tiny_nemotron_h()), "{}");
  CHECK(model::count_params(r).total == spec_elements(r));
  for (const WeightSpec& s : weight_specs(r)) CHECK(s.name.find("gate_proj") == std::string::npos);
}

TEST_CASE("mlp_bias: biases change the output and zero biases give the unbiased model", "[runner][mlp_bias]") {
  for (const model::Backbone& base : {tiny_dense(), tiny_nemotron_h()}) {
    INFO(base.name);
    const auto t = tokens(12);
    Model plain = build(make(base, "{}"), 5);
    const auto want = train_logits(plain, t);
    ZeroBiases zero(5);
    Model zeroed = build(make(with_mlp_bias(base), "{}"), zero);
    CHECK(zero.zeroed > 0);
    // the other tensors are the same random values (seeded by name): the same function
    CHECK(rel_diff(train_logits(zeroed, t), want) < kSameFunction);
    Model biased = build(make(with_mlp_bias(base), "{}"), 5);
    CHECK(rel_diff(train_logits(biased, t), want) > 1e-3);
  }
}

TEST_CASE("mlp_bias: a cached decode equals the full forward, also under HD", "[runner][mlp_bias]") {
  check_decode_matches_train(make(with_mlp_bias(tiny_dense()), "{}"), 14, 5);
  check_decode_matches_train(make(with_mlp_bias(tiny_dense()), R"({"hd": {"n": 2, "layers": "full"}})"), 14, 5);
  check_decode_matches_train(make(with_mlp_bias(tiny_nemotron_h()), "{}"), 14, 5);
}

}  // namespace hdlab::executor::testing
