// Precision per tensor class (evaluate.hpp's PrecisionScenario), by hand on tiny_dense
// (1368 parameters, bf16, one K/V head of 4: 8 K/V elements per position and layer) and
// the round device of fixtures.hpp.
#include <catch2/catch.hpp>

#include <memory>

#include "fixtures.hpp"
#include "hdlab/simulator/cost_model.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using fixtures::error_of;

namespace {

Scenario with_precision(const std::string& precision) {
  return parse_scenario(nlohmann::json::parse(R"({"precision": )" + precision + "}"));
}

}  // namespace

TEST_CASE("fp8 weights halve the weight bytes only", "[evaluate][precision]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();
  const Metrics bf16 = evaluate(c, hw, Scenario{});
  const Metrics fp8 = evaluate(c, hw, with_precision(R"({"weights": "fp8"})"));

  CHECK(bf16[Metric::inference_weight_bytes] == 1368 * 2);
  CHECK(fp8[Metric::inference_weight_bytes] == 1368);
  CHECK(fp8[Metric::decode_weight_bytes] == bf16[Metric::decode_weight_bytes] / 2);
  CHECK(fp8[Metric::train_weight_bytes] == 1368);
  // the cache, the activations, the gradients and the fp32 optimizer state keep their bytes
  CHECK(fp8[Metric::kv_bytes_per_seq] == bf16[Metric::kv_bytes_per_seq]);
  CHECK(fp8[Metric::decode_kv_read_bytes] == bf16[Metric::decode_kv_read_bytes]);
  CHECK(fp8[Metric::train_activation_bytes] == bf16[Metric::train_activation_bytes]);
  CHECK(fp8[Metric::train_grad_bytes] == 1368 * 2);
  CHECK(fp8[Metric::train_optimizer_bytes] == 1368 * 12);
  CHECK(fp8[Metric::decode_bytes] - fp8[Metric::decode_weight_bytes] ==
        bf16[Metric::decode_bytes] - bf16[Metric::decode_weight_bytes]);
  CHECK(fp8[Metric::decode_flops] == bf16[Metric::decode_flops]);

  // Op by op in one decode pass: weight bytes halved, activation and cache bytes equal.
  auto pass = [&](const Scenario& s, CostContext& ctx, PassCost& p) {
    make_context(c, hw, s, ctx);
    InferenceResult r;
    cost_decode(ctx, false, s.decode.batch, s.decode.context, p, r);
  };
  const Scenario s8 = with_precision(R"({"weights": "fp8"})");
  auto ctx16 = std::make_unique<CostContext>(), ctx8 = std::make_unique<CostContext>();
  auto p16 = std::make_unique<PassCost>(), p8 = std::make_unique<PassCost>();
  const Scenario s16;
  pass(s16, *ctx16, *p16);
  pass(s8, *ctx8, *p8);
  for (int i = 0; i < model::op_kind_count; ++i) {
    const auto k = static_cast<model::OpKind>(i);
    CAPTURE(model::to_string(k));
    const model::OpCost a = p16->op_total(k), b = p8->op_total(k);
    CHECK(b.weight_bytes == a.weight_bytes / 2);
    CHECK(b.act_bytes_in == a.act_bytes_in);
    CHECK(b.act_bytes_out == a.act_bytes_out);
    CHECK(b.kv_bytes_read == a.kv_bytes_read);
    CHECK(b.kv_bytes_written == a.kv_bytes_written);
  }
}

TEST_CASE("an fp8 KV cache halves the cache bytes only", "[evaluate][precision]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();
  const Metrics bf16 = evaluate(c, hw, Scenario{});
  const Metrics fp8 = evaluate(c, hw, with_precision(R"({"kv_cache": "fp8"})"));
  // 2 layers x 8 elements x 32768 positions (kv.context) x 1 B
  CHECK(fp8[Metric::kv_bytes_per_seq] == 2.0 * 8 * 32768);
  CHECK(bf16[Metric::kv_bytes_per_seq] == 2 * fp8[Metric::kv_bytes_per_seq]);
  CHECK(fp8[Metric::decode_kv_read_bytes] == bf16[Metric::decode_kv_read_bytes] / 2);
  CHECK(fp8[Metric::decode_weight_bytes] == bf16[Metric::decode_weight_bytes]);
  CHECK(fp8[Metric::train_activation_bytes] == bf16[Metric::train_activation_bytes]);
  CHECK(fp8[Metric::max_batch_seqs] >= bf16[Metric::max_batch_seqs]);
}

TEST_CASE("fp32 communication doubles every collective's bytes and the gradients", "[evaluate][precision]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();
  Scenario s16;
  s16.parallel.tp = 2;
  Scenario s32 = s16;
  s32.precision.communication = model::DType::fp32;
  const Metrics a = evaluate(c, hw, s16), b = evaluate(c, hw, s32);
  // Decode: two ring all-reduces of [32 rows, 8] per layer over 2 NVLink ranks (100 GB/s
  // both ways: 50 GB/s a direction, 1 us): 2 x (2 x 1/2 x bytes / 50 GB/s + 2 x 1 us) per
  // layer, 2 layers.
  auto decode_comm = [](double element_bytes) { return 2 * 2 * (32 * 8 * element_bytes / 50e9 + 2e-6); };
  CHECK(a[Metric::decode_comm_s] == Approx(decode_comm(2)).epsilon(1e-12));
  CHECK(b[Metric::decode_comm_s] == Approx(decode_comm(4)).epsilon(1e-12));
  // the gradients are kept in the precision they are reduced in
  CHECK(b[Metric::train_grad_bytes] == 2 * a[Metric::train_grad_bytes]);
  CHECK(b[Metric::train_weight_bytes] == a[Metric::train_weight_bytes]);
  CHECK(b[Metric::kv_bytes_per_seq] == a[Metric::kv_bytes_per_seq]);
}

TEST_CASE("the optimizer state's precision sets its bytes, with a master copy only when it differs from the weights",
          "[evaluate][precision]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();
  // bf16 weights and state: two 2-byte moments, no master copy
  CHECK(evaluate(c, hw, with_precision(R"({"optimizer_state": "bf16"})"))[Metric::train_optimizer_bytes] == 1368 * 4);
  // fp8 weights, bf16 state: moments and a bf16 master copy
  CHECK(evaluate(c, hw, with_precision(R"({"weights": "fp8", "optimizer_state": "bf16"})"))[
            Metric::train_optimizer_bytes] == 1368 * 6);
  // fp32 weights and state: 8 bytes, as for an fp32 model
  CHECK(evaluate(c, hw, with_precision(R"({"weights": "fp32"})"))[Metric::train_optimizer_bytes] == 1368 * 8);
}

TEST_CASE("the compute precision sets the products' matrix rate, attention runs in the activations'",
          "[evaluate][precision]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  fixtures::Json dev = fixtures::device_json();
  dev["peak_fp8_tflop_per_s"] = 200;
  const HardwareProfile hw = parse_hardware_profile(dev);
  auto ctx = std::make_unique<CostContext>();
  const Scenario fp8_compute = with_precision(R"({"compute": "fp8"})");
  make_context(c, hw, fp8_compute, *ctx);
  CHECK(ctx->roofline.matrix_peak == 200e12);
  CHECK(ctx->roofline.attention_peak == 100e12);
  const Scenario fp32_activations = with_precision(R"({"activations": "fp32"})");
  make_context(c, hw, fp32_activations, *ctx);
  CHECK(ctx->roofline.matrix_peak == 100e12);
  CHECK(ctx->roofline.attention_peak == 10e12);
  CHECK(ctx->shape.bytes == 4);
  CHECK(ctx->shape.weight_el_bytes == 2);
}

TEST_CASE("precision: bad classes and dtypes are refused by pointer", "[evaluate][precision][bad-input]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();  // no fp8 matrix rate
  CHECK(error_of([] { with_precision(R"({"weights": "int4"})"); }) ==
        "/scenario/precision/weights: must be one of model, bf16, fp16, fp32, fp8, got \"int4\"");
  CHECK(error_of([] { with_precision(R"({"optimizer_state": "model"})"); }).starts_with("/scenario/precision/optimizer_state:"));
  CHECK(error_of([] { with_precision(R"({"gradients": "fp32"})"); }).starts_with("/scenario/precision/gradients:"));
  CHECK(error_of([&] { evaluate(c, hw, with_precision(R"({"compute": "fp8"})")); }) ==
        "/scenario/precision/compute: is fp8, but round device has no fp8 matrix rate");
  CHECK(error_of([&] { evaluate(c, hw, with_precision(R"({"activations": "fp8"})")); }) ==
        "/scenario/precision/activations: is fp8, but round device has no fp8 matrix rate");
  // fp8 storage needs no fp8 matrix rate
  CHECK_NOTHROW(evaluate(c, hw, with_precision(R"({"weights": "fp8", "kv_cache": "fp8"})")));
  // "model" and the defaults round-trip
  const Scenario s = with_precision(R"({"weights": "fp8", "kv_cache": "model", "optimizer_state": "bf16"})");
  CHECK(parse_scenario(to_json(s)) == s);
  CHECK(to_json(s)["precision"]["kv_cache"] == "model");
}

// Dropout is a training setting as well; its costs are bytes, so it sits with the precision
// tests: one sequence of 16 tokens of tiny_dense (2 layers, 2 heads, D 8, bf16).
TEST_CASE("training dropout writes and keeps its masks, and with unfused attention drops the probabilities",
          "[evaluate][dropout]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  const HardwareProfile hw = fixtures::device();
  struct Run {
    std::unique_ptr<CostContext> ctx = std::make_unique<CostContext>();
    std::unique_ptr<PassCost> pass = std::make_unique<PassCost>();
    TrainResult result;
  };
  auto train = [&](const Scenario& s, Run& r) {
    make_context(c, hw, s, *r.ctx);
    cost_train(*r.ctx, *r.pass, r.result);
  };
  Scenario plain;
  plain.train.seq_len = 16;
  plain.attention.kernel = AttentionKernel::unfused;
  Scenario dropped = plain;
  dropped.train.hidden_dropout = 0.1;
  dropped.train.attention_dropout = 0.1;
  Run a, b;
  train(plain, a);
  train(dropped, b);
  const OpTable &ta = a.pass->groups[0].ops, &tb = b.pass->groups[0].ops;
  // probabilities [1 seq x 2 heads, 16 x 16]: read (2 B), dropped ones written (2 B), mask (1 B)
  CHECK(row(tb, model::OpKind::attention).inner_vector_bytes - row(ta, model::OpKind::attention).inner_vector_bytes ==
        2 * 256 * 5);
  // two masks [16, 8] of a byte an element, written by the residual adds and kept
  CHECK(row(tb, model::OpKind::residual).cost.act_bytes_out - row(ta, model::OpKind::residual).cost.act_bytes_out ==
        2 * 16 * 8);
  CHECK(b.result.memory.activation_bytes - a.result.memory.activation_bytes == 2 * (2 * 16 * 8));
  CHECK(b.result.step_s > a.result.step_s);
  CHECK(b.result.model_flops == a.result.model_flops);

  // Without recomputation the dropped probabilities and their mask are kept too: 2 x 256 x 3 B a layer.
  plain.train.recompute = dropped.train.recompute = Recompute::none;
  train(plain, a);
  train(dropped, b);
  CHECK(b.result.memory.activation_bytes - a.result.memory.activation_bytes == 2 * (2 * 16 * 8 + 2 * 256 * 3));

  // A fused kernel drops inside: only the hidden masks; prefill and decode never drop.
  plain.attention.kernel = dropped.attention.kernel = AttentionKernel::fused;
  train(plain, a);
  train(dropped, b);
  CHECK(row(b.pass->groups[0].ops, model::OpKind::attention).inner_vector_bytes ==
        row(a.pass->groups[0].ops, model::OpKind::attention).inner_vector_bytes);
  const Metrics ma = evaluate(c, hw, plain), mb = evaluate(c, hw, dropped);
  CHECK(mb[Metric::prefill_s] == ma[Metric::prefill_s]);
  CHECK(mb[Metric::decode_step_s] == ma[Metric::decode_step_s]);

  CHECK(error_of([] { parse_scenario(nlohmann::json::parse(R"({"train": {"hidden_dropout": 1}})")); }) ==
        "/scenario/train/hidden_dropout: must be < 1: a dropout probability of 1 drops everything");
  CHECK(error_of([] { parse_scenario(nlohmann::json::parse(R"({"train": {"attention_dropout": -0.1}})")); })
            .starts_with("/scenario/train/attention_dropout:"));
}
