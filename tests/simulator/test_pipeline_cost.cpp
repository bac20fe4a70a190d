// The pipeline workload from the cost model: at pp = 1 it must add up to the cost
// model's own micro-step and saved activations; boundary sizes worked out by hand.
#include <catch2/catch.hpp>

#include <memory>

#include "fixtures.hpp"
#include "hdlab/simulator/cost_model.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"

using namespace hdlab::simulator;
using fixtures::Json;

namespace {

Scenario scenario(Recompute r, std::int64_t tp = 1) {
  Scenario s;
  s.train.seq_len = 16;
  s.train.micro_batch = 2;
  s.train.recompute = r;
  s.parallel.tp = tp;
  return s;
}

// Two stages, four micro-batches: the smallest pipeline with an optimizer step to test.
PipelineOptions two_stages() {
  PipelineOptions o;
  o.stages = 2;
  o.microbatches = 4;
  return o;
}

// The cost model's micro-step and per-device saved activations for one micro-batch.
std::pair<double, double> cost_model_micro_step(const hdlab::model::Config& c, const HardwareProfile& hw,
                                                const Scenario& s) {
  auto ctx = std::make_unique<CostContext>();
  make_context(c, hw, s, *ctx);
  auto forward = std::make_unique<PassCost>();
  TrainResult t;
  cost_train(*ctx, *forward, t);
  return {t.micro_step_s, t.memory.activation_bytes};
}

}  // namespace

TEST_CASE("at pp = 1 the workload adds up to the cost model's micro-step", "[pipeline][cost]") {
  const HardwareProfile hw = fixtures::device(2);  // 2 us launches: every op counts
  const std::vector<std::pair<Json, const char*>> cases = {
      {fixtures::tiny_dense(), "{}"},
      {fixtures::tiny_moe(), "{}"},
      {fixtures::tiny_moe(), R"({"hd": {"n": 2}})"},
      {fixtures::tiny_sliding(), R"({"hd": {"n": 2, "layers": ["intra", "full", "local", "intra"], "window": 4}})"},
      {fixtures::tiny_dense(), R"({"phd": {"K": 3, "variant": "swa", "W": 2}})"},
      {fixtures::tiny_dense(), R"({"vwn": {"m": 2, "n": 3}})"},
      {fixtures::tiny_sliding(), R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 3,
                                                "input_injection": true}})"}};
  for (const auto& [backbone, design] : cases)
    for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
      for (std::int64_t tp : {1, 2}) {
        const hdlab::model::Config c = fixtures::config(backbone, design);
        const Scenario s = scenario(r, tp);
        PipelineOptions o;
        const PipelineResult p = simulate_pipeline(c, hw, s, o);
        const auto [micro_step_s, activation_bytes] = cost_model_micro_step(c, hw, s);
        INFO(design << " recompute " << to_string(r) << " tp " << tp);
        REQUIRE(p.path.size() == 1);
        CHECK(fixtures::close(p.metrics.makespan_s, micro_step_s, 1e-12));
        // memory.hpp keeps one extra layer set live under full recomputation; the
        // pipeline counts only what is held from a forward to its backward.
        if (r != Recompute::full) CHECK(fixtures::close(p.metrics.peak_activation_bytes, activation_bytes, 1e-12));
        else CHECK(p.metrics.peak_activation_bytes < activation_bytes);
      }
}

TEST_CASE("boundary bytes: hidden states, HD streams, VWN width, mirror sources, injection", "[pipeline][cost]") {
  // tiny_dense, 2 sequences of 16 tokens, D 8, bf16: [32, 8] x 2 B = 512 B per boundary.
  const HardwareProfile hw = fixtures::device();
  const Scenario s = scenario(Recompute::selective);
  auto boundary = [&](const Json& backbone, const char* design, std::size_t layer, std::int64_t tp = 1) {
    return pipeline_workload(fixtures::config(backbone, design), hw, scenario(Recompute::selective, tp), 2)
        .layers[layer]
        .boundary_bytes;
  };
  CHECK(boundary(fixtures::tiny_dense(), "{}", 0) == 512);
  CHECK(boundary(fixtures::tiny_dense(), "{}", 0, 2) == 256);  // sequence parallel over tp
  CHECK(boundary(fixtures::tiny_dense(), R"({"hd": {"n": 4}})", 0) == 4 * 512);
  CHECK(boundary(fixtures::tiny_dense(), R"({"phd": {"K": 3}})", 0) == 3 * 512);
  CHECK(boundary(fixtures::tiny_dense(), R"({"vwn": {"m": 2, "n": 3}})", 0) == 1.5 * 512);
  // tiny_moe: layer 3 mirrors layer 0, so every cut before it also carries layer 0's input.
  for (std::size_t l : {0, 1, 2}) CHECK(boundary(fixtures::tiny_moe(), "{}", l) == 2 * 512);
  // HD n = 4 with the mirror: the cut before layer 3 carries its final-stream queries
  // ([32 tokens, D]) and layer 0's input on all 4 streams.
  CHECK(boundary(fixtures::tiny_moe(), R"({"hd": {"n": 4}})", 2) == 512 + 4 * 512);
  CHECK(boundary(fixtures::tiny_moe(), R"({"hd": {"n": 4}})", 1) == 4 * 512 + 4 * 512);
  // Looped with injection: the embedding rides along until the first recurrent layer.
  const char* looped = R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 2, "input_injection": true}})";
  CHECK(boundary(fixtures::tiny_sliding(), looped, 0) == 2 * 512);
  CHECK(boundary(fixtures::tiny_sliding(), looped, 1) == 512);
  const PipelineWorkload w = pipeline_workload(fixtures::config(fixtures::tiny_sliding(), looped), hw, s, 2);
  REQUIRE(w.loop);
  CHECK(w.loop->first_layer == 1);
  CHECK(w.loop->layer_count == 2);
  CHECK(w.loop->iterations == 2);
  CHECK(w.tokens_per_microbatch == 32);
}

TEST_CASE("pipeline link: NVLink inside a node, the network beyond", "[pipeline][cost]") {
  // The round device: NVLink 100 GB/s, 1 us; network 10 GB/s, 5 us; communication 0.5.
  const HardwareProfile hw = fixtures::device();
  const hdlab::model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  Scenario s = scenario(Recompute::selective);
  s.parallel.gpus_per_node = 2;
  const PipelineWorkload inside = pipeline_workload(c, hw, s, 2);
  CHECK(inside.link.bandwidth_bytes_per_s == 50e9);
  CHECK(inside.link.latency_s == Approx(1e-6));
  s.parallel.dp = 2;  // 2 x 2 devices: two nodes
  const PipelineWorkload across = pipeline_workload(c, hw, s, 2);
  CHECK(across.link.bandwidth_bytes_per_s == 5e9);
  CHECK(across.link.latency_s == Approx(5e-6));
  Json no_network = fixtures::device_json();
  no_network["network_bandwidth_gb_per_s"] = nullptr;
  const HardwareProfile single_node = parse_hardware_profile(no_network);
  const std::string error = fixtures::error_of([&] { pipeline_workload(c, single_node, s, 2); });
  CHECK(error.rfind("/pipeline/pp:", 0) == 0);
  PipelineOptions o;
  o.stages = 0;
  CHECK(fixtures::error_of([&] { simulate_pipeline(c, hw, s, o); }).rfind("/pipeline/pp:", 0) == 0);
}

TEST_CASE("the pipeline's optimizer step: each device's reduction and update after its last backward",
          "[pipeline][cost][optimizer]") {
  const HardwareProfile hw = fixtures::device(2);
  const hdlab::model::Config c = fixtures::config(fixtures::tiny_moe(), "{}");
  Scenario s = scenario(Recompute::selective);
  s.parallel.dp = 2;
  s.train.overlap_dp_comm = false;
  // One stage holds every parameter: the step adds the cost model's own reduction and update.
  auto ctx = std::make_unique<CostContext>();
  make_context(c, hw, s, *ctx);
  auto forward = std::make_unique<PassCost>();
  TrainResult t;
  cost_train(*ctx, *forward, t);
  PipelineOptions o;
  PipelineResult p = simulate_pipeline(c, hw, s, o);
  CHECK(fixtures::close(p.metrics.update_s, t.dp_comm_s + t.optimizer_s, 1e-12));
  CHECK(p.metrics.step_s == p.metrics.makespan_s + p.metrics.update_s);
  CHECK(fixtures::close(p.metrics.optimizer_s, t.optimizer_s, 1e-12));

  // Two stages: each updates only its own parameters, so the slowest device's update is
  // less than the whole model's; the parameters split between them add up to the model's.
  o.stages = 2;
  o.microbatches = 2;
  s.train.grad_accum = 2;
  p = simulate_pipeline(c, hw, s, o);
  CHECK(p.metrics.optimizer_s < t.optimizer_s);
  CHECK(p.metrics.dp_reduce_s < t.dp_comm_s);
  CHECK(p.metrics.step_s > p.metrics.makespan_s);
  const PipelineWorkload w = pipeline_workload(c, hw, s, 2);
  double dense = w.embedding.dense_params + w.head.dense_params, experts = 0;
  for (const PipelineLayer& l : w.layers) {
    dense += l.dense_params;
    experts += l.expert_params;
  }
  const hdlab::model::ParamCounts counts = hdlab::model::count_params(c);
  CHECK(experts == static_cast<double>(counts.routed_experts));
  CHECK(dense + experts == static_cast<double>(counts.total));

  // Overlapped, the reduction hides behind each device's last backward as far as it goes.
  s.train.overlap_dp_comm = true;
  const PipelineResult hidden = simulate_pipeline(c, hw, s, o);
  CHECK(hidden.metrics.step_s < p.metrics.step_s);
  CHECK(hidden.metrics.update_s > 0);  // the update itself is never hidden
}

TEST_CASE("separate gradient accumulation joins each pipeline layer's backward, its weight-gradient part",
          "[pipeline][cost]") {
  const HardwareProfile hw = fixtures::device();
  const hdlab::model::Config c = fixtures::config(fixtures::tiny_moe(), "{}");
  Scenario s = scenario(Recompute::selective);
  const PipelineWorkload fused = pipeline_workload(c, hw, s, 2);
  s.train.grad_accumulation = GradAccumulation::separate;
  const PipelineWorkload separate = pipeline_workload(c, hw, s, 2);
  auto ctx = std::make_unique<CostContext>();
  make_context(c, hw, s, *ctx);
  // Per layer: its own parameters' pass, in B and in W (ZB-H1 defers it with dW).
  double added = 0;
  for (std::size_t i = 0; i < fused.layers.size(); ++i) {
    const PipelineLayer &f = fused.layers[i], &a = separate.layers[i];
    const double pass = grad_accumulation_s(*ctx, a.dense_params, a.expert_params);
    CHECK(pass > 0);
    CHECK(fixtures::close(a.backward_s, f.backward_s + pass, 1e-12));
    CHECK(fixtures::close(a.backward_weight_s, f.backward_weight_s + pass, 1e-12));
    CHECK(a.forward_s == f.forward_s);
    added += pass;
  }
  added += separate.embedding.backward_s - fused.embedding.backward_s + separate.head.backward_s - fused.head.backward_s;
  // The pieces add up to the cost model's one pass over the whole model, but for each
  // piece's launch (the fixture's launches cost nothing).
  auto forward = std::make_unique<PassCost>();
  TrainResult t;
  cost_train(*ctx, *forward, t);
  CHECK(fixtures::close(added, t.grad_accumulation_s, 1e-12));

  // Looped 4 times: a recurrent layer runs four passes a micro-batch, its gradients still
  // join the step's once; the passes' shares add up to one pass over the model.
  const hdlab::model::Config looped =
      fixtures::config(fixtures::tiny_dense(), R"({"looped": {"prelude": 0, "coda": 0, "iterations": 4}})");
  Scenario f = scenario(Recompute::selective);
  const PipelineWorkload lf = pipeline_workload(looped, hw, f, 2);
  f.train.grad_accumulation = GradAccumulation::separate;
  const PipelineWorkload ls = pipeline_workload(looped, hw, f, 2);
  REQUIRE(ls.loop);
  CostContext lctx;
  make_context(looped, hw, f, lctx);
  double looped_added = ls.embedding.backward_s - lf.embedding.backward_s + ls.head.backward_s - lf.head.backward_s;
  for (std::size_t i = 0; i < ls.layers.size(); ++i) {
    const bool recurrent = static_cast<std::int64_t>(i) >= ls.loop->first_layer &&
                           static_cast<std::int64_t>(i) < ls.loop->first_layer + ls.loop->layer_count;
    looped_added += (recurrent ? 4 : 1) * (ls.layers[i].backward_s - lf.layers[i].backward_s);
  }
  auto looped_forward = std::make_unique<PassCost>();
  TrainResult lt;
  cost_train(lctx, *looped_forward, lt);
  CHECK(fixtures::close(looped_added, lt.grad_accumulation_s, 1e-9));
}

TEST_CASE("autocast in the pipeline: each layer's forward casts its weights, its backward adds its gradients",
          "[pipeline][cost]") {
  const HardwareProfile hw = fixtures::device();
  const hdlab::model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  Scenario s = scenario(Recompute::full);
  const PipelineWorkload fused = pipeline_workload(c, hw, s, 2);
  s.train.grad_accumulation = GradAccumulation::autocast;
  const PipelineWorkload amp = pipeline_workload(c, hw, s, 2);
  auto ctx = std::make_unique<CostContext>();
  make_context(c, hw, s, *ctx);
  double cast_sum = 0, back_sum = 0;
  for (std::size_t i = 0; i < fused.layers.size(); ++i) {
    const PipelineLayer &f = fused.layers[i], &a = amp.layers[i];
    const double cast = weight_cast_s(*ctx, a.dense_params, a.expert_params);
    const double back = grad_accumulation_s(*ctx, a.dense_params, a.expert_params);
    CHECK(cast > 0);
    CHECK(fixtures::close(a.forward_s, f.forward_s + cast, 1e-12));
    // B: the recomputed forward casts again; W: the add follows dW
    CHECK(fixtures::close(a.backward_s, f.backward_s + cast + back, 1e-12));
    CHECK(fixtures::close(a.backward_weight_s, f.backward_weight_s + back, 1e-12));
    cast_sum += 2 * cast;
    back_sum += back;
  }
  // the ends cast in their forward (not recomputed) and add in their backward
  cast_sum += amp.embedding.forward_s - fused.embedding.forward_s + amp.head.forward_s - fused.head.forward_s;
  back_sum += amp.embedding.backward_s - fused.embedding.backward_s + amp.head.backward_s - fused.head.backward_s;
  auto forward = std::make_unique<PassCost>();
  TrainResult t;
  cost_train(*ctx, *forward, t);
  CHECK(fixtures::close(cast_sum, t.weight_cast_s, 1e-12));
  CHECK(fixtures::close(back_sum, t.grad_accumulation_s, 1e-12));
}

TEST_CASE("ZeRO-3 under a pipeline is refused by pointer: its weight gathers are not costed there",
          "[pipeline][cost][bad-input]") {
  const HardwareProfile hw = fixtures::device(2);
  const hdlab::model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  Scenario s = scenario(Recompute::selective);
  const PipelineOptions o = two_stages();
  s.train.sharding = OptimizerSharding::gradients;  // ZeRO-2 runs
  CHECK(simulate_pipeline(c, hw, s, o).metrics.step_s > 0);
  s.train.sharding = OptimizerSharding::weights;
  try {
    simulate_pipeline(c, hw, s, o);
    FAIL("ZeRO-3 accepted under a pipeline");
  } catch (const hdlab::model::ConfigError& e) {
    CHECK(e.pointer() == "/scenario/train/optimizer_sharding");
    CHECK(std::string(e.what()).find("weight gathers") != std::string::npos);
  }
}

TEST_CASE("a framework overhead per step is added once to the pipeline's optimizer step", "[pipeline][cost][framework]") {
  const HardwareProfile hw = fixtures::device(2);
  const hdlab::model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  Scenario s = scenario(Recompute::selective);
  const PipelineOptions o = two_stages();
  const PipelineResult without = simulate_pipeline(c, hw, s, o);
  s.framework.train_step_s = 0.125;
  const PipelineResult with = simulate_pipeline(c, hw, s, o);
  CHECK(with.metrics.makespan_s == without.metrics.makespan_s);
  CHECK(with.metrics.framework_s == 0.125);
  CHECK(with.metrics.step_s == Approx(without.metrics.step_s + 0.125).epsilon(1e-12));
  CHECK(with.metrics.step_s == with.metrics.makespan_s + with.metrics.update_s);
}

TEST_CASE("the weight-gradient part of each backward: the GEMMs' dW products, B + W the backward",
          "[pipeline][cost][zb-h1]") {
  // Under the roofline a GEMM op's backward is its dX and dW products, each as long as its
  // forward: over the model W adds up to the forward time of the GEMM ops. Attention,
  // norms, element-wise ops, the embedding lookup, recomputation and the collectives are B.
  const HardwareProfile hw = fixtures::device(2);
  const std::vector<std::pair<Json, const char*>> cases = {
      {fixtures::tiny_dense(), "{}"}, {fixtures::tiny_moe(), "{}"}, {fixtures::tiny_dense(), R"({"vwn": {"m": 2, "n": 3}})"}};
  for (const auto& [backbone, design] : cases)
    for (Recompute r : {Recompute::none, Recompute::full})
      for (std::int64_t tp : {1, 2}) {
        const hdlab::model::Config c = fixtures::config(backbone, design);
        const Scenario s = scenario(r, tp);
        INFO(design << " recompute " << to_string(r) << " tp " << tp);
        auto ctx = std::make_unique<CostContext>();
        make_context(c, hw, s, *ctx);
        auto forward = std::make_unique<PassCost>();
        TrainResult t;
        cost_train(*ctx, *forward, t);
        double gemm_forward = 0;
        for (int k = 0; k < hdlab::model::op_kind_count; ++k)
          if (hdlab::model::op_class(static_cast<hdlab::model::OpKind>(k)) == hdlab::model::OpClass::gemm)
            gemm_forward += t.forward.op_s[static_cast<std::size_t>(k)];
        CHECK(fixtures::close(t.forward.backward_weight_s, gemm_forward, 1e-12));

        const PipelineWorkload w = pipeline_workload(c, hw, s, 1);
        double weight = w.embedding.backward_weight_s + w.head.backward_weight_s;
        for (const PipelineLayer& l : w.layers) {
          CHECK(l.backward_weight_s > 0);
          CHECK(l.backward_weight_s < l.backward_s);
          weight += l.backward_weight_s;
        }
        if (std::string(design) == "{}") CHECK(w.embedding.backward_weight_s == 0);  // a lookup: its scatter-add is B
        CHECK(w.head.backward_weight_s > 0);  // the LM head's dW
        CHECK(fixtures::close(weight, gemm_forward, 1e-12));

        // ZB-H1 at pp = 1: B and W tasks together take the backward; the step is 1F1B's,
        // the cost model's micro-step.
        PipelineOptions o;
        o.schedule = ScheduleKind::zb_h1;
        const PipelineResult zb = simulate_pipeline(c, hw, s, o);
        o.schedule = ScheduleKind::one_f_one_b;
        const PipelineResult one = simulate_pipeline(c, hw, s, o);
        double b = 0, wt = 0;
        for (const PipelineTask& task : zb.tasks)
          if (task.backward) (task.weight ? wt : b) += task.end_s - task.start_s;
        CHECK(fixtures::close(b + wt, zb.path[0].backward_s, 1e-12));
        CHECK(fixtures::close(wt, weight, 1e-12));
        CHECK(fixtures::close(zb.metrics.makespan_s, one.metrics.makespan_s, 1e-12));
        CHECK(fixtures::close(zb.metrics.makespan_s, t.micro_step_s, 1e-12));
      }
}
