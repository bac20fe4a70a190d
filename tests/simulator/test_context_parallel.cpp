// Context parallelism (evaluate.hpp's ParallelScenario::cp): a training sequence split over
// cp ranks, by hand on the tiny model and the round device of fixtures.hpp.
#include <catch2/catch.hpp>

#include <memory>

#include "fixtures.hpp"
#include "hdlab/simulator/memory.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using fixtures::error_of;

namespace {

struct Train {
  std::unique_ptr<CostContext> ctx = std::make_unique<CostContext>();
  std::unique_ptr<PassCost> pass = std::make_unique<PassCost>();
  TrainResult result;
};

// One sequence of 16 tokens of tiny_dense (2 layers, one K/V head: 8 K/V elements per
// position, bf16), one micro-step, selective recomputation.
Scenario scenario(std::int64_t cp, std::int64_t dp = 1) {
  Scenario s;
  s.train.seq_len = 16;
  s.parallel.cp = cp;
  s.parallel.dp = dp;
  return s;
}

void train(const model::Config& c, const HardwareProfile& hw, const Scenario& s, Train& out) {
  make_context(c, hw, s, *out.ctx);
  cost_train(*out.ctx, *out.pass, out.result);
}

}  // namespace

TEST_CASE("context parallelism splits each sequence's work and exchanges its K/V, by hand", "[evaluate][cp]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();  // the contexts point at it
  Train one, two;
  train(c, hw, scenario(1), one);
  const Scenario s2 = scenario(2);
  train(c, hw, s2, two);

  // Each of the 2 ranks runs half of every layer's rows and pairs (the balanced split);
  // all devices together run the same step, on the same tokens.
  const LayerWork& w1 = one.pass->groups[0].work;
  const LayerWork& w2 = two.pass->groups[0].work;
  CHECK(w2.seqs == w1.seqs / 2);
  CHECK(w2.rows_q == w1.rows_q);
  CHECK(two.pass->total().flops == one.pass->total().flops / 2);
  CHECK(two.pass->attention_pairs_exact() == one.pass->attention_pairs_exact() / 2);
  CHECK(two.result.flops == one.result.flops);
  CHECK(two.result.model_flops == one.result.model_flops);
  CHECK(two.result.tokens == one.result.tokens);

  // K/V exchange per layer: the whole sequence's 16 positions x 8 elements x 2 B = 256 B
  // all-gathered over 2 ranks on NVLink (100 GB/s x 0.5, 1 us): (2-1)/2 x 256 / 50e9 + 1 us;
  // two layers. Forward and backward (the gradients reduce-scattered) in the micro-step.
  const double gather = 128 / 50e9 + 1e-6;
  CHECK(two.result.forward_comm.cp_s == Approx(2 * gather).epsilon(1e-12));
  CHECK(two.result.forward_comm.cp_hidden_s == 0);
  CHECK(two.result.micro_step_s ==
        Approx(two.result.forward.total_s + two.result.forward.backward_s + two.result.recompute_s + 2 * 2 * gather)
            .epsilon(1e-12));
  // The two ranks hold the same weights: their gradients (1368 x 2 B) are all-reduced,
  // and the optimizer states shard over them.
  CHECK(one.result.dp_comm_s == 0);
  CHECK(two.result.dp_comm_s == Approx(2 * 0.5 * 2736 / 50e9 + 2 * 1e-6).epsilon(1e-12));
  Scenario zero = s2;
  zero.train.sharding = OptimizerSharding::optimizer;
  Train z;
  train(c, hw, zero, z);
  CHECK(z.result.memory.optimizer_bytes == 1368.0 * 12 / 2);

  // Saved activations: half per rank, plus the other rank's K/V gathered for the layer
  // that attends: (2-1)/2 x 256 B.
  CHECK(two.result.memory.activation_bytes == Approx(one.result.memory.activation_bytes / 2 + 128).epsilon(1e-12));
  CHECK(cp_kv_buffer_bytes(*two.pass, two.ctx->shape, s2.parallel) == 128);

  // MFU counts the cp ranks as devices: twice the devices for the same FLOPs.
  const Metrics m1 = evaluate(c, hw, scenario(1)), m2 = evaluate(c, hw, s2);
  CHECK(m2[Metric::train_mfu_fraction] ==
        Approx(m1[Metric::train_mfu_fraction] * m1[Metric::train_step_s] / m2[Metric::train_step_s] / 2).epsilon(1e-12));
}

TEST_CASE("a ring K/V exchange hides behind the attention as far as it lasts", "[evaluate][cp]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();
  Scenario s = scenario(2);
  s.parallel.cp_comm = CpComm::ring;
  Train ring, gather;
  train(c, hw, s, ring);
  train(c, hw, scenario(2), gather);
  const double attention = ring.result.forward.op_s[static_cast<std::size_t>(model::OpKind::attention)];
  const PassComm& comm = ring.result.forward_comm;
  REQUIRE(attention > 0);
  CHECK(comm.cp_s == gather.result.forward_comm.cp_s);
  CHECK(comm.cp_hidden_s == std::min(comm.cp_s, attention));
  CHECK(comm.total() == Approx(comm.cp_s - std::min(comm.cp_s, attention)).epsilon(1e-12));
  // in flight: the chunk received next to the one in hand, 2/2 of the sequence's 256 B
  CHECK(cp_kv_buffer_bytes(*ring.pass, ring.ctx->shape, s.parallel) == 256);
}

TEST_CASE("context parallelism: bad settings are refused by pointer, the JSON round-trips", "[evaluate][cp][bad-input]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();
  // 16 tokens do not split into 2 x 3 chunks
  CHECK(error_of([&] { evaluate(c, hw, scenario(3)); }) ==
        "/scenario/parallel/cp: must split the training sequence into 2 x cp equal chunks (two per rank, balancing "
        "the causal mask): seq_len 16 is not a multiple of 6");
  Scenario unfused = scenario(2);
  unfused.attention.kernel = AttentionKernel::unfused;
  CHECK(error_of([&] { evaluate(c, hw, unfused); }).rfind("/scenario/parallel/cp: needs the fused attention kernel", 0) ==
        0);
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"parallel": {"cp_comm": "ring"}})")); }) ==
        "/scenario/parallel/cp_comm: needs cp > 1: with one context-parallel rank no K/V is exchanged");
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"parallel": {"cp": 0}})")); }).rfind(
            "/scenario/parallel/cp:", 0) == 0);
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"parallel": {"cp": 2, "cp_comm": "p2p"}})")); })
            .rfind("/scenario/parallel/cp_comm:", 0) == 0);

  const Scenario s = parse_scenario(model::Json::parse(R"({"parallel": {"cp": 4, "cp_comm": "ring"}})"));
  CHECK(s.parallel.cp == 4);
  CHECK(s.parallel.cp_comm == CpComm::ring);
  CHECK(parse_scenario(to_json(s)) == s);
  CHECK(to_json(Scenario{})["parallel"]["cp"] == 1);
  CHECK_FALSE(to_json(Scenario{})["parallel"].contains("cp_comm"));
}

TEST_CASE("the pipeline with context parallelism adds up to the cost model's micro-step at pp = 1", "[pipeline][cp]") {
  const HardwareProfile hw = fixtures::device(2);
  for (const char* ring : {"all_gather", "ring"}) {
    const model::Config c = fixtures::config(fixtures::tiny_moe(), "{}");
    Scenario s = parse_scenario(model::Json::parse(std::string(R"({"train": {"seq_len": 16, "micro_batch": 2},
        "parallel": {"cp": 2, "ep": 2, "dp": 2, "cp_comm": ")") + ring + "\"}}"));
    Train t;
    train(c, hw, s, t);
    const PipelineResult p = simulate_pipeline(c, hw, s, PipelineOptions{});
    INFO(ring);
    CHECK(fixtures::close(p.metrics.makespan_s, t.result.micro_step_s, 1e-12));
    // the pipeline keeps what a forward holds for its backward; the cost model also the
    // gathered K/V of the layer that attends
    CHECK(fixtures::close(p.metrics.peak_activation_bytes + cp_kv_buffer_bytes(*t.pass, t.ctx->shape, s.parallel),
                          t.result.memory.activation_bytes, 1e-12));
  }
}
