// The evaluation API: scenario JSON, metric catalogue, hand-computed phase times and
// collectives on tiny configs, invariants between designs, monotonic growth with n, K, r.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "fixtures.hpp"
#include "hdlab/simulator/report.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using fixtures::error_of;

namespace {

Metrics eval(const model::Config& c, const Scenario& s = Scenario{}, const HardwareProfile& hw = fixtures::device()) {
  return evaluate(c, hw, s);
}

model::Config qwen3(const std::string& design) {
  const model::Backbone b = model::load_backbone(model::read_json_file(fixtures::source_path("profiles/models/qwen3-8b.json")));
  return model::make_config(b, model::parse_design(model::Json::parse(design), b));
}

HardwareProfile h100() {
  return parse_hardware_profile(model::read_json_file(fixtures::source_path("profiles/hardware/h100-sxm.json")));
}

void check_all_equal(const Metrics& a, const Metrics& b) {
  for (int i = 0; i < metric_count; ++i) {
    INFO(metric_name(static_cast<Metric>(i)));
    CHECK(fixtures::close(a.values[static_cast<std::size_t>(i)], b.values[static_cast<std::size_t>(i)]));
  }
  REQUIRE(a.serving.size() == b.serving.size());
  for (std::size_t i = 0; i < a.serving.size(); ++i) CHECK(fixtures::close(a.serving[i].tokens_per_s, b.serving[i].tokens_per_s));
}

// 16-token sequences, 2 micro-steps: the gradient-accumulation tests' training setup.
Scenario small_training() {
  Scenario s;
  s.train.seq_len = 16;
  s.train.grad_accum = 2;
  return s;
}

// The cost model's training step of `c` on `hw` under `s`.
TrainResult train_step(const model::Config& c, const HardwareProfile& hw, const Scenario& s) {
  CostContext ctx;
  make_context(c, hw, s, ctx);
  auto pass = std::make_unique<PassCost>();
  TrainResult t;
  cost_train(ctx, *pass, t);
  return t;
}

}  // namespace

TEST_CASE("scenario JSON: defaults, round trip, errors at their pointers", "[evaluate][scenario]") {
  const Scenario d = parse_scenario(model::Json::object());
  CHECK(d == Scenario{});
  CHECK(d.train.recompute == Recompute::selective);
  model::Json j = model::Json::parse(R"({"train": {"seq_len": 2048, "recompute": "full", "optimizer_sharding": "gradients"},
    "decode": {"batch": 4, "context": 100}, "serving": {"batches": [2, 4], "input_lengths": [10]},
    "parallel": {"tp": 2, "ep": 2, "dp": 4}, "attention": {"layout": "stream_major", "tile_q": 64, "count": "exact"}})");
  const Scenario s = parse_scenario(j);
  CHECK(s.train.seq_len == 2048);
  CHECK(s.train.sharding == OptimizerSharding::gradients);
  CHECK(s.attention.layout == model::Layout::stream_major);
  CHECK(s.serving.batches == std::vector<std::int64_t>{2, 4});
  CHECK(parse_scenario(to_json(s)) == s);

  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"decode": {"batchh": 3}})")); }) ==
        "/scenario/decode/batchh: unknown key (did you mean \"batch\"?)");
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"decode": {"batch": 0}})")); }) ==
        "/scenario/decode/batch: must be >= 1, got 0");
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"parallel": {"ep": 3, "dp": 4}})")); }) ==
        "/scenario/parallel/ep: must divide dp (4): expert-parallel ranks are carved out of the data-parallel ones");
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"serving": {"batches": []}})")); }) ==
        "/scenario/serving/batches: must be a list of 1 to 64 positive integers");
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"attention": {"layout": "diagonal"}})")); }) ==
        "/scenario/attention/layout: must be one of auto, interleaved, stream_major, phd_split, got \"diagonal\"");
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"train": {"recompute": "some"}})")); }) ==
        "/scenario/train/recompute: must be one of none, selective, full, got \"some\"");
}

TEST_CASE("a tp that does not divide the KV heads is refused - a multiple of them replicates", "[evaluate][bad-input]") {
  // 12 query heads in 4 KV groups.
  const model::Config c = fixtures::config(
      model::Json::parse(R"({"name": "gqa", "num_layers": 2, "hidden_size": 48, "num_heads": 12, "num_kv_heads": 4,
                      "head_dim": 4, "intermediate_size": 16, "vocab_size": 10})"),
      "{}");
  for (std::int64_t tp : {3, 6}) {
    INFO("tp " << tp);
    Scenario s;
    s.parallel.tp = tp;
    CHECK(error_of([&] { eval(c, s); }) ==
          "/scenario/parallel/tp: must divide the 4 KV heads or be a multiple of them (KV heads are split over the tp "
          "devices, or replicated when tp exceeds them), got " + std::to_string(tp));
  }
  // tp 2 splits the 4 KV heads; tp 12 replicates each on 3 devices, and the report says so.
  Scenario s;
  s.parallel.tp = 2;
  CHECK_NOTHROW(eval(c, s));
  CHECK(cost_report(c, fixtures::device(), s, {}).count("kv_head_replication") == 0);
  s.parallel.tp = 12;
  CHECK_NOTHROW(eval(c, s));
  const model::Json report = cost_report(c, fixtures::device(), s, {});
  CHECK(report.at("kv_head_replication") ==
        "tp 12 exceeds the 4 KV heads: each device holds one KV head, replicated on 3 devices (its KV cache and K/V "
        "projections are not split further)");
}

TEST_CASE("an evaluation refuses to report a non-finite number, naming the metric", "[evaluate][bad-input]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  // A profile built in code skips the parser's ranges: a subnormal matrix rate makes the
  // compute time overflow, and the step time comes out nan.
  HardwareProfile hw = fixtures::device();
  hw.peak_bf16_tflop_per_s = 1e-320;
  CHECK(error_of([&] { evaluate(c, hw, Scenario{}); }) ==
        "train_step_s: the prediction is nan, not a number hdlab can report: the hardware profile's rates and "
        "the scenario's sizes overflow double precision (or a rate is 0)");
  hw = fixtures::device();
  hw.memory_bandwidth_gb_per_s = 0;
  hw.efficiency.fill(0);
  CHECK_FALSE(error_of([&] { evaluate(c, hw, Scenario{}); }).empty());
  CHECK(error_of([&] { evaluate(c, fixtures::device(), Scenario{}); }).empty());
}

TEST_CASE("scenarios the config or device cannot run are refused", "[evaluate][scenario][errors]") {
  const model::Config dense = fixtures::config(fixtures::tiny_dense(), "{}");
  Scenario s;
  s.parallel.tp = 4;  // 2 heads
  CHECK(error_of([&] { eval(dense, s); }) == "/scenario/parallel/tp: must divide the 2 query heads, got 4");
  s = Scenario{};
  s.parallel.ep = 2;
  s.parallel.dp = 2;
  CHECK(error_of([&] { eval(dense, s); }) ==
        "/scenario/parallel/ep: expert parallelism needs an MoE backbone; tiny is dense");
  s = Scenario{};
  s.parallel.dp = 16;  // 16 devices > one node of 8: the network
  model::Json no_net = fixtures::device_json();
  no_net["network_bandwidth_gb_per_s"] = nullptr;
  CHECK(error_of([&] { eval(dense, s, parse_hardware_profile(no_net)); }) ==
        "/scenario/parallel/dp: spans 16 devices (more than one node of 8) but round device has no "
        "network_bandwidth_gb_per_s");
  model::Json fp8 = fixtures::tiny_dense();
  fp8["dtype"] = "fp8";
  CHECK(error_of([&] { eval(fixtures::config(fp8, "{}")); }) ==
        "/peak_fp8_tflop_per_s: is null: round device has no fp8 matrix rate");
}

TEST_CASE("metric catalogue: names with units, columns, values by name", "[evaluate][metrics]") {
  for (int i = 0; i < metric_count; ++i) {
    const auto m = static_cast<Metric>(i);
    CHECK(metric_from_name(metric_name(m)) == m);
    CHECK(std::string(metric_unit(m)).size() > 0);
  }
  CHECK_FALSE(metric_from_name("decode_speed").has_value());
  Scenario s;
  s.serving.batches = {1, 8};
  s.serving.input_lengths = {16, 32, 64};
  const std::vector<std::string> cols = metric_columns(s);
  REQUIRE(cols.size() == static_cast<std::size_t>(metric_count) + 2 * 3 * 3);
  CHECK(cols[static_cast<std::size_t>(metric_count)] == "serving_b1_in16_tokens_per_s");
  CHECK(cols.back() == "serving_b8_in64_fits");
  const Metrics m = eval(fixtures::config(fixtures::tiny_dense(), "{}"), s);
  std::vector<double> row_values;
  metric_row(m, row_values);
  REQUIRE(row_values.size() == cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) CHECK(metric_value(m, cols[i]) == row_values[i]);
  CHECK(metric_value(m, "decode_step_s") == m[Metric::decode_step_s]);
  CHECK(error_of([&] { metric_value(m, "serving_b2_in16_ratio"); }) == "unknown metric \"serving_b2_in16_ratio\"");
}

TEST_CASE("decode time and collectives of a tiny model, by hand", "[evaluate][decode]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  Scenario s;
  s.decode.batch = 1;
  s.decode.context = 5;
  const HardwareProfile hw = fixtures::device();  // the context points at it
  CostContext ctx;
  make_context(c, hw, s, ctx);
  auto pass = std::make_unique<PassCost>();
  InferenceResult r;
  cost_decode(ctx, false, 1, 5, *pass, r);
  // Each op: max(FLOPs / class rate, bytes / (1000 GB/s * 0.8)); rates: gemm and
  // attention 100 TFLOP/s x 0.5 / 0.25, vector 10 TFLOP/s x 0.5; no launch cost.
  double expected = 0;
  auto add = [&](const OpRow& op, model::OpKind k, double passes) {
    if (op.calls <= 0) return;
    const model::OpClass cls = model::op_class(k);
    const double rate = cls == model::OpClass::gemm ? 50e12 : cls == model::OpClass::attention ? 25e12 : 5e12;
    const double compute = cls == model::OpClass::memory ? 0 : op.cost.flops / rate;
    expected += passes * std::max(compute, op.cost.bytes() / 800e9);
  };
  for (int i = 0; i < model::op_kind_count; ++i) {
    const auto k = static_cast<model::OpKind>(i);
    add(pass->groups[0].ops[static_cast<std::size_t>(i)], k, 2);
    add(pass->outside[static_cast<std::size_t>(i)], k, 1);
  }
  CHECK(r.seconds == Approx(expected).epsilon(1e-12));
  CHECK(eval(c, s)[Metric::decode_step_s] == Approx(expected).epsilon(1e-12));

  // tp 2: two all-reduces of [1, 8] x 2 B per layer on NVLink (50 GB/s effective, 1 us):
  // 2 (2-1)/2 * 16 B / 50e9 + 2 (2-1) * 1 us each.
  s.parallel.tp = 2;
  const double one = 16.0 / 50e9 + 2e-6;
  CHECK(eval(c, s)[Metric::decode_comm_s] == Approx(2 * 2 * one).epsilon(1e-12));

  // ep 2 on the MoE model: per MoE layer (3 of 4) dispatch + combine of each device's
  // 1 token x top-2 copies x [8] x 2 B = 32 B: (2-1)/2 * 32 / 50e9 + 1 us each.
  Scenario e;
  e.parallel.ep = 2;
  e.parallel.dp = 2;
  e.decode.batch = 2;
  const double a2a = 16.0 / 50e9 + 1e-6;
  CHECK(eval(fixtures::config(fixtures::tiny_moe(), "{}"), e)[Metric::decode_comm_s] ==
        Approx(3 * 2 * a2a).epsilon(1e-12));
}

TEST_CASE("separate gradient accumulation: one pass over every gradient per micro-step, by hand", "[evaluate][train]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();
  Scenario s = small_training();
  auto step = [&](const Scenario& sc) { return train_step(c, hw, sc); };
  const TrainResult fused = step(s);
  CHECK(fused.grad_accumulation_s == 0);
  s.train.grad_accumulation = GradAccumulation::separate;
  const TrainResult separate = step(s);
  // 1368 parameters: read the bf16 gradient, read and write the bf16 (communication
  // precision) buffer, at 800 GB/s; the fixture's launches cost nothing.
  const double pass = 1368.0 * (2 + 2 * 2) / 800e9;
  CHECK(separate.grad_accumulation_s == Approx(pass).epsilon(1e-12));
  CHECK(separate.micro_step_s == Approx(fused.micro_step_s + pass).epsilon(1e-12));
  CHECK(separate.step_s == Approx(fused.step_s + 2 * pass).epsilon(1e-12));
  // fp32 communication: a 4-byte buffer.
  s.precision.communication = model::DType::fp32;
  CHECK(step(s).grad_accumulation_s == Approx(1368.0 * (2 + 2 * 4) / 800e9).epsilon(1e-12));

  CHECK(to_json(Scenario{})["train"]["grad_accumulation"] == "fused");
  CHECK(parse_scenario(to_json(s)) == s);
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"train": {"grad_accumulation": "deferred"}})")); })
            .rfind("/scenario/train/grad_accumulation:", 0) == 0);
}

TEST_CASE("autocast: parameters cast by every forward, gradients cast back and added into .grad, by hand",
          "[evaluate][train]") {
  // tiny_dense: 1368 parameters, 1200 in its two layers, 168 outside them (embedding 80,
  // final norm 8, untied head 80); bf16 weights, fp32 optimizer state (the master), at
  // 800 GB/s; the fixture's launches cost nothing.
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();
  Scenario s = small_training();
  auto step = [&](const Scenario& sc) { return train_step(c, hw, sc); };
  const TrainResult fused = step(s);
  CHECK(fused.weight_cast_s == 0);
  s.train.grad_accumulation = GradAccumulation::autocast;
  const TrainResult amp = step(s);
  const double cast = 1368.0 * (4 + 2) / 800e9;            // read fp32, write bf16
  const double back = 1368.0 * ((2 + 4) + 3 * 4) / 800e9;  // bf16 -> fp32, then .grad += (two reads, a write)
  CHECK(amp.weight_cast_s == Approx(cast).epsilon(1e-12));
  CHECK(amp.grad_accumulation_s == Approx(back).epsilon(1e-12));
  CHECK(amp.micro_step_s == Approx(fused.micro_step_s + cast + back).epsilon(1e-12));
  CHECK(amp.step_s == Approx(fused.step_s + 2 * (cast + back)).epsilon(1e-12));
  // Full recomputation reruns the layers' forward, which casts their 1200 again.
  s.train.recompute = Recompute::full;
  CHECK(step(s).weight_cast_s == Approx((1368.0 + 1200.0) * 6 / 800e9).epsilon(1e-12));
  // fp32 weights are the master: nothing to cast, .grad += in fp32 alone.
  s.train.recompute = Recompute::selective;
  s.precision.weights = model::DType::fp32;
  const TrainResult fp32 = step(s);
  CHECK(fp32.weight_cast_s == 0);
  CHECK(fp32.grad_accumulation_s == Approx(1368.0 * 3 * 4 / 800e9).epsilon(1e-12));

  CHECK(parse_scenario(to_json(s)) == s);
  CHECK(to_json(s)["train"]["grad_accumulation"] == "autocast");
}

TEST_CASE("training step composition and optimizer update, by hand", "[evaluate][train]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  Scenario s;
  s.train.seq_len = 16;
  s.train.grad_accum = 2;
  const HardwareProfile hw = fixtures::device();  // the context points at it
  CostContext ctx;
  make_context(c, hw, s, ctx);
  auto pass = std::make_unique<PassCost>();
  TrainResult t;
  cost_train(ctx, *pass, t);
  // optimizer: 1368 parameters x (read w, g, 12 B states; write w, 12 B states) / 800 GB/s
  CHECK(t.optimizer_s == Approx(1368.0 * (2 + 2 + 12 + 2 + 12) / 800e9).epsilon(1e-12));
  CHECK(t.recompute_s == t.forward.op_s[static_cast<std::size_t>(model::OpKind::attention)]);
  CHECK(t.step_s == Approx(2 * (3 * t.forward.total_s + t.recompute_s) + t.optimizer_s).epsilon(1e-12));
  CHECK(t.tokens == 2 * 16);
  CHECK(t.flops == Approx(2 * (3 * pass->total().flops + pass->op_total(model::OpKind::attention).flops)).epsilon(1e-12));
  // data parallel 4 on NVLink: gradients (1368 x 2 B) all-reduced once per step; with
  // overlap it hides behind the backward when shorter.
  s.parallel.dp = 4;
  s.train.overlap_dp_comm = false;
  make_context(c, hw, s, ctx);
  cost_train(ctx, *pass, t);
  CHECK(t.dp_comm_s == Approx(2 * 0.75 * 2736 / 50e9 + 2 * 3 * 1e-6).epsilon(1e-12));
  CHECK(t.exposed_dp_s == t.dp_comm_s);
}

TEST_CASE("ZeRO-3 weight gathers hide behind their pass's compute, at most the shorter of the two", "[evaluate][train]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  for (double launch_us : {0.0, 100.0}) {  // compute far shorter, then far longer, than a gather
    const HardwareProfile hw = fixtures::device(launch_us);
    Scenario s;
    s.train.seq_len = 16;
    s.train.grad_accum = 2;
    s.parallel.dp = 4;
    s.train.sharding = OptimizerSharding::weights;
    CostContext ctx;
    make_context(c, hw, s, ctx);
    auto pass = std::make_unique<PassCost>();
    TrainResult hidden, serial;
    cost_train(ctx, *pass, hidden);
    // 1368 x 2 B all-gathered over 4 ranks on NVLink (50 GB/s, 1 us), before the forward
    // and again before the backward
    const double gather = 0.75 * 2736 / 50e9 + 3e-6;
    CHECK(hidden.zero3_gather_s == Approx(2 * gather).epsilon(1e-12));
    const double forward = hidden.forward.total_s, backward = hidden.forward.backward_s + hidden.recompute_s;
    INFO("launch " << launch_us << " us: forward " << forward << " s, backward " << backward << " s");
    const double expected = std::max(0.0, gather - forward) + std::max(0.0, gather - backward);
    CHECK(hidden.exposed_zero3_s == Approx(expected).margin(1e-18));
    if (launch_us == 0) CHECK(hidden.exposed_zero3_s > 0);
    else CHECK(hidden.exposed_zero3_s == 0);
    s.train.overlap_weight_gather = false;
    make_context(c, hw, s, ctx);
    cost_train(ctx, *pass, serial);
    CHECK(serial.exposed_zero3_s == serial.zero3_gather_s);
    CHECK(serial.step_s - hidden.step_s == Approx(2 * (serial.zero3_gather_s - hidden.exposed_zero3_s)).epsilon(1e-9));
  }
}

TEST_CASE("TP and EP collectives overlapped with compute: at most the shorter of the two hidden", "[evaluate][train]") {
  for (double launch_us : {0.0, 100.0}) {  // compute far shorter, then far longer, than the collectives
    const HardwareProfile hw = fixtures::device(launch_us);
    const model::Config c = fixtures::config(fixtures::tiny_moe(), "{}");
    Scenario s;
    s.train.seq_len = 16;
    s.parallel.tp = 2;
    s.parallel.ep = 2;
    s.parallel.dp = 2;
    CostContext ctx;
    make_context(c, hw, s, ctx);
    auto pass = std::make_unique<PassCost>();
    TrainResult serial, hidden;
    cost_train(ctx, *pass, serial);
    s.train.overlap_tp_comm = s.train.overlap_ep_comm = true;
    make_context(c, hw, s, ctx);
    cost_train(ctx, *pass, hidden);
    const PassComm& sc = serial.forward_comm;
    const PassComm& hc = hidden.forward_comm;
    REQUIRE(sc.tp_s > 0);
    REQUIRE(sc.ep_s > 0);
    CHECK(sc.tp_hidden_s == 0);
    CHECK(sc.ep_hidden_s == 0);
    auto op = [&](model::OpKind k) { return hidden.forward.op_s[static_cast<std::size_t>(k)]; };
    using model::OpKind;
    const double projections = op(OpKind::qkv_proj) + op(OpKind::o_proj) + op(OpKind::ffn_gate_up) +
                               op(OpKind::ffn_down) + op(OpKind::shared_experts);
    INFO("launch " << launch_us << " us");
    CHECK(hc.tp_hidden_s == std::min(sc.tp_s, projections));
    // the all-to-alls under the compute the TP collectives left
    CHECK(hc.ep_hidden_s == std::min(sc.ep_s, hidden.forward.layers_s - op(OpKind::experts) - hc.tp_hidden_s));
    if (launch_us > 0) CHECK(hc.total() == Approx(0).margin(1e-18));  // the compute outlasts both
    else CHECK(hc.total() > 0);
    // forward and backward each hide the same share
    CHECK(serial.micro_step_s - hidden.micro_step_s == Approx(2 * (hc.tp_hidden_s + hc.ep_hidden_s)).epsilon(1e-9));
  }
}

TEST_CASE("ZeRO stages by number: 0-3 as the sharding names, 4 and a second spelling refused", "[evaluate][scenario]") {
  const OptimizerSharding expected[] = {OptimizerSharding::none, OptimizerSharding::optimizer,
                                        OptimizerSharding::gradients, OptimizerSharding::weights};
  for (int stage = 0; stage < 4; ++stage) {
    const Scenario s = parse_scenario(model::Json{{"train", {{"zero_stage", stage}}}});
    CHECK(s.train.sharding == expected[stage]);
    CHECK(to_json(s)["train"]["optimizer_sharding"] == to_string(expected[stage]));
  }
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"train": {"zero_stage": 4}})")); }) ==
        "/scenario/train/zero_stage: must be <= 3, got 4");
  CHECK(error_of([] {
          parse_scenario(model::Json::parse(R"({"train": {"zero_stage": 1, "optimizer_sharding": "optimizer"}})"));
        }) == "/scenario/train/zero_stage: gives the same setting as optimizer_sharding: give one of them");
}

TEST_CASE("the framework overhead adds once per training step, prefill and decode step", "[evaluate][framework]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  Scenario s;
  s.train.seq_len = 16;
  s.train.grad_accum = 4;
  const Metrics without = eval(c, s);
  s = parse_scenario(model::Json::parse(R"({"train": {"seq_len": 16, "grad_accum": 4},
      "framework": {"train_step_s": 0.5, "prefill_s": 0.25, "decode_step_s": 0.125}})"));
  const Metrics with = eval(c, s);
  // once per optimizer step, not per micro-step; the baseline decodes on the same framework
  CHECK(with[Metric::train_step_s] == Approx(without[Metric::train_step_s] + 0.5).epsilon(1e-12));
  CHECK(with[Metric::train_comm_s] == without[Metric::train_comm_s]);
  CHECK(with[Metric::prefill_s] == Approx(without[Metric::prefill_s] + 0.25).epsilon(1e-12));
  CHECK(with[Metric::decode_step_s] == Approx(without[Metric::decode_step_s] + 0.125).epsilon(1e-12));
  CHECK(with[Metric::decode_vs_baseline_ratio] == Approx(1).epsilon(1e-12));
  CHECK(parse_scenario(to_json(s)) == s);
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"framework": {"decode_step_s": -1}})")); }) ==
        "/scenario/framework/decode_step_s: must be >= 0.0, got -1.0");
  CHECK(error_of([] { parse_scenario(model::Json::parse(R"({"framework": {"step_s": 1}})")); })
            .rfind("/scenario/framework/step_s:", 0) == 0);
}

TEST_CASE("memory metrics: KV bytes and the largest batch, by hand", "[evaluate][memory]") {
  const Metrics m = eval(fixtures::config(fixtures::tiny_dense(), "{}"));
  // 2 layers x 32768 tokens x (K + V of one head of 4) x 2 B
  const double kv = 2 * 32768.0 * 16;
  CHECK(m[Metric::kv_bytes_per_seq] == kv);
  CHECK(m[Metric::kv_bytes] == 32 * 2 * 4096.0 * 16);  // decode batch 32 at context 4096
  CHECK(m[Metric::inference_weight_bytes] == 1368 * 2);
  CHECK(m[Metric::max_batch_seqs] == std::floor((10e9 * 0.9 - 2736) / kv));
  CHECK(m[Metric::params_total] == 1368);
}

TEST_CASE("designs that reduce to the baseline cost the same", "[evaluate][invariants]") {
  const Metrics base = eval(fixtures::config(fixtures::tiny_sliding(), "{}"));
  check_all_equal(eval(fixtures::config(fixtures::tiny_sliding(), R"({"hd": {"n": 1}})")), base);
  check_all_equal(eval(fixtures::config(fixtures::tiny_sliding(), R"({"looped": {"iterations": 1}})")), base);
  // PHD's rule replaces the backbone's windows (mask.hpp), so compare on full attention.
  check_all_equal(eval(fixtures::config(fixtures::tiny_dense(), R"({"phd": {"K": 1}})")),
                  eval(fixtures::config(fixtures::tiny_dense(), "{}")));
  const Metrics hd = eval(fixtures::config(fixtures::tiny_sliding(), R"({"hd": {"n": 1}})"));
  for (const ServingPoint& p : hd.serving) CHECK(p.ratio == 1);

  // PHD plain keeps the vanilla KV cache.
  const Metrics dense = eval(fixtures::config(fixtures::tiny_dense(), "{}"));
  const Metrics phd = eval(fixtures::config(fixtures::tiny_dense(), R"({"phd": {"K": 4}})"));
  CHECK(phd[Metric::kv_bytes_per_seq] == dense[Metric::kv_bytes_per_seq]);
  CHECK(phd[Metric::kv_bytes] == dense[Metric::kv_bytes]);
  CHECK(phd[Metric::max_batch_seqs] == dense[Metric::max_batch_seqs]);

  // VWN m = n without dynamics starts as the baseline (A, B the residual connection at
  // init) but its static A and B are trained, so the GHC width and depth connections run.
  // Equal to the baseline: every op of a layer but the GHC ops, whose depth connections
  // replace the residual adds; the KV cache and attention; the parameters but the GHC's
  // A and B and the output path's GroupNorm (weight and bias over D' = D) and reduce D x D.
  const model::Config b = fixtures::config(fixtures::tiny_dense(), "{}");
  const model::Config v = fixtures::config(fixtures::tiny_dense(), R"({"vwn": {"m": 2, "n": 2, "dynamic": false}})");
  auto pb = std::make_unique<PassCost>(), pv = std::make_unique<PassCost>();
  for (auto [c, p] : {std::pair{&b, pb.get()}, std::pair{&v, pv.get()}}) {
    const ModelShape shape = model_shape(c->effective, c->design.method);
    train_forward_pass(*c, shape, plan_layers(c->effective, c->design.method), 2, 8, PassOptions{}, *p);
  }
  using model::OpKind;
  const std::set<OpKind> ghc = {OpKind::ghc_norm, OpKind::ghc_dynamic, OpKind::ghc_width, OpKind::ghc_depth,
                                OpKind::residual};
  for (int i = 0; i < model::op_kind_count; ++i) {
    const auto k = static_cast<OpKind>(i);
    if (ghc.count(k)) continue;
    INFO(model::to_string(k));
    const model::OpCost x = pb->groups[0].ops[static_cast<std::size_t>(i)].cost;
    const model::OpCost y = pv->groups[0].ops[static_cast<std::size_t>(i)].cost;
    CHECK(x.flops == y.flops);
    CHECK(x.bytes() == y.bytes());
  }
  // Per layer, 16 rows of D = 8 (two sequences of 8), two GHCs: width 2(m+n) D, depth 2nD
  // FLOPs per row each; no norm or dynamic coefficients without dynamics.
  const OpTable& ops = pv->groups[0].ops;
  CHECK(row(ops, OpKind::ghc_width).cost.flops == 2 * 16 * 2 * 4 * 8);
  CHECK(row(ops, OpKind::ghc_depth).cost.flops == 2 * 16 * 2 * 2 * 8);
  CHECK(row(ops, OpKind::ghc_norm).cost.flops == 0);
  CHECK(row(ops, OpKind::ghc_dynamic).cost.flops == 0);
  CHECK(row(ops, OpKind::residual).cost.flops == 0);
  const double layers = 2;
  const double ghc_flops = layers * (row(ops, OpKind::ghc_width).cost.flops + row(ops, OpKind::ghc_depth).cost.flops) -
                           layers * row(pb->groups[0].ops, OpKind::residual).cost.flops;
  CHECK(pv->total().flops - pb->total().flops == ghc_flops + row(pv->outside, OpKind::vwn_reduce).cost.flops);
  CHECK(row(pv->outside, OpKind::vwn_reduce).cost.flops == 2 * 8 * (2 * 8 * 8 + 4 * 8));
  CHECK(pv->op_total(OpKind::attention).flops == pb->op_total(OpKind::attention).flops);

  const Metrics mb = eval(b), mv = eval(v);
  CHECK(mv[Metric::kv_bytes_per_seq] == mb[Metric::kv_bytes_per_seq]);
  CHECK(mv[Metric::kv_bytes] == mb[Metric::kv_bytes]);
  CHECK(mv[Metric::prefill_attention_flops_executed] == mb[Metric::prefill_attention_flops_executed]);
  // A: n x (m+n) = 8 and B: m x n = 4 per GHC, 2 GHCs x 2 layers; GroupNorm 2 x 8; reduce 8 x 8.
  CHECK(mv[Metric::params_total] - mb[Metric::params_total] == 2 * 2 * (8 + 4) + 2 * 8 + 8 * 8);
}

TEST_CASE("Qwen3-8B with HD n=4 on an H100: consistent headline numbers", "[evaluate][qwen3]") {
  const HardwareProfile hw = h100();
  Scenario s;
  s.decode.batch = 8;
  s.decode.context = 4096 + 512;  // = the serving cell (8, 4096) with 1024 output tokens
  const Metrics base = evaluate(qwen3("{}"), hw, s);
  const Metrics hd = evaluate(qwen3(R"({"hd": {"n": 4}})"), hw, s);
  CHECK(hd[Metric::kv_bytes_per_seq] == 4 * base[Metric::kv_bytes_per_seq]);
  CHECK(hd[Metric::decode_vs_baseline_ratio] < 1);
  CHECK(hd[Metric::decode_vs_baseline_ratio] == Approx(hd[Metric::decode_tokens_per_s] / base[Metric::decode_tokens_per_s]));
  const auto cell = std::find_if(hd.serving.begin(), hd.serving.end(),
                                 [](const ServingPoint& p) { return p.batch == 8 && p.input_tokens == 4096; });
  REQUIRE(cell != hd.serving.end());
  CHECK(cell->tokens_per_s == Approx(hd[Metric::decode_tokens_per_s]).epsilon(1e-12));
  CHECK(cell->baseline_tokens_per_s == Approx(base[Metric::decode_tokens_per_s]).epsilon(1e-12));
  // Training FLOPs of the baseline: about 6 N tokens plus attention (N = 6.95e9 active
  // non-embedding parameters + the head's 0.62e9): within 15% of 6 * 7.57e9 * 4096.
  CHECK(base[Metric::train_flops] / (6 * 7.57e9 * 4096) == Approx(1).margin(0.15));
  CHECK(hd[Metric::train_flops] > 3.5 * base[Metric::train_flops]);  // 4x positions, same logits
  CHECK(hd[Metric::train_mfu_fraction] > 0);
  CHECK(hd[Metric::train_mfu_fraction] < 1);
  CHECK(hd[Metric::params_total] == Approx(8.19e9 + 3 * 0.622e9).epsilon(0.01));
}

TEST_CASE("costs grow with n, K, r and loop iterations", "[evaluate][monotonic]") {
  const HardwareProfile hw = h100();
  const Metric grow[] = {Metric::train_step_s, Metric::train_flops, Metric::prefill_s, Metric::prefill_flops,
                         Metric::decode_step_s, Metric::decode_flops, Metric::train_memory_bytes};
  const std::vector<std::vector<std::string>> families = {
      {R"({"hd": {"n": 1}})", R"({"hd": {"n": 2}})", R"({"hd": {"n": 4}})", R"({"hd": {"n": 8}})"},
      {R"({"phd": {"K": 1}})", R"({"phd": {"K": 2}})", R"({"phd": {"K": 3}})", R"({"phd": {"K": 5}})"},
      {R"({"vwn": {"m": 2, "n": 2}})", R"({"vwn": {"m": 2, "n": 3}})", R"({"vwn": {"m": 2, "n": 4}})",
       R"({"vwn": {"m": 2, "n": 8}})"},
      {R"({"looped": {"iterations": 1}})", R"({"looped": {"iterations": 2}})", R"({"looped": {"iterations": 4}})"}};
  for (const auto& family : families) {
    Metrics prev = evaluate(qwen3(family[0]), hw, Scenario{});
    for (std::size_t i = 1; i < family.size(); ++i) {
      const Metrics next = evaluate(qwen3(family[i]), hw, Scenario{});
      INFO(family[i]);
      for (Metric m : grow) {
        INFO(metric_name(m));
        CHECK(next[m] > prev[m]);
      }
      CHECK(next[Metric::kv_bytes_per_seq] >= prev[Metric::kv_bytes_per_seq]);
      CHECK(next[Metric::max_batch_seqs] <= prev[Metric::max_batch_seqs]);
      prev = next;
    }
  }
}

TEST_CASE("the baseline of a grown design is the model before growth", "[evaluate][growth]") {
  const model::Config base = fixtures::config(fixtures::tiny_moe(), "{}");
  const model::Config grown = fixtures::config(fixtures::tiny_moe(), R"({"growth": {"depth_factor": 2}})");
  const Metrics b = eval(base), g = eval(grown);
  CHECK(g[Metric::decode_vs_baseline_ratio] == Approx(g[Metric::decode_tokens_per_s] / b[Metric::decode_tokens_per_s]));
  CHECK(g[Metric::decode_vs_baseline_ratio] < 1);
  CHECK(g[Metric::params_total] > b[Metric::params_total]);
}

TEST_CASE("sequences too long to count exactly are refused at the scenario", "[evaluate][errors]") {
  Scenario s;
  s.train.seq_len = (std::int64_t{1} << 24);  // x 1024 streams = 2^34 positions
  const model::Config c = fixtures::config(fixtures::tiny_dense(), R"({"hd": {"n": 1024}})");
  CHECK(error_of([&] { eval(c, s); }) ==
        "/scenario/train/seq_len: must be <= 2097152 tokens for 1024 positions per token (attention pairs are "
        "counted exactly)");
}
