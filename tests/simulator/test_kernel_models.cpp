// Fitted kernel models (simulator/kernel_models.hpp) on the bundled profiles: the JSON
// round trip, the GEMM by hand and its memo, the fitted L2, kernel_op_time's forward and
// backward products, and Qwen3-8B evaluated on the fitted H100. Monotonicity and
// extrapolation are checked in test_kernel_models_monotonic.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernel_test_helpers.hpp"

using namespace kernel_test;

TEST_CASE("kernel models: the bundled H100 profile survives a JSON round trip", "[kernel-models]") {
  const model::Json file = profile_json("h100-sxm");
  const HardwareProfile first = parse_hardware_profile(file);
  REQUIRE(first.kernel_models);
  const KernelModels& km = *first.kernel_models;
  // What the round trip must carry: both GEMM precisions, both attention models, every
  // collective at 2, 4 and 8 GPUs, and the fit's provenance.
  CHECK(km.gemm.count(DType::bf16) == 1);
  CHECK(km.gemm.count(DType::fp8) == 1);
  CHECK(km.prefill_attention.count(DType::bf16) == 1);
  CHECK(km.decode_attention.count(DType::bf16) == 1);
  for (const auto& by_gpus : km.collectives) CHECK(by_gpus.size() == 3);
  CHECK(km.fit.contains("held_out_errors"));

  const model::Json written = to_json(first);
  const HardwareProfile second = parse_hardware_profile(written);
  REQUIRE(second.kernel_models);
  CHECK(*second.kernel_models == km);
  CHECK(second == first);
  CHECK(to_json(second) == written);
  // The bundled file is what to_json writes (calibrate writes it so): every number as read.
  CHECK(written["kernel_models"] == file["kernel_models"]);
  // The models alone, through their own JSON form.
  CHECK(parse_kernel_models(to_json(km), "/kernel_models") == km);
  // The comparison sees the parameters (a change in the 7th digit is a difference).
  KernelModels changed = km;
  changed.gemm.at(DType::bf16).latency_us *= 1 + 1e-7;
  CHECK_FALSE(changed == km);
  CHECK_FALSE(to_json(changed) == to_json(km));
}

TEST_CASE("kernel models: the GEMM's keys are read and written, checked, and unknown ones refused",
          "[kernel-models][bad-input]") {
  const model::Json file = profile_json("h100-sxm");
  const model::Json& bf16 = file["kernel_models"]["gemm"]["bf16"];
  for (const char* key : {"stream_k_us", "epilogue_share", "l2_resident_mb", "l2_gb_per_s"}) {
    INFO(key);
    CHECK(bf16.contains(key));
  }
  const KernelModels km = parse_kernel_models(file["kernel_models"], "/kernel_models");
  const GemmKernel& g = km.gemm.at(DType::bf16);
  CHECK(g.stream_k_us == bf16["stream_k_us"].get<double>());
  CHECK(g.epilogue_share == bf16["epilogue_share"].get<double>());
  CHECK(g.l2_resident_mb == bf16["l2_resident_mb"].get<double>());
  CHECK(g.l2_gb_per_s == bf16["l2_gb_per_s"].get<double>());
  CHECK(to_json(km)["gemm"]["bf16"] == bf16);

  // Each bad GEMM entry is refused naming its JSON pointer.
  auto error_of = [&](const std::function<void(model::Json&)>& edit) -> std::string {
    model::Json k = file["kernel_models"];
    edit(k["gemm"]["bf16"]);
    try {
      parse_kernel_models(k, "/kernel_models");
    } catch (const model::ConfigError& e) {
      return e.pointer() + ": " + e.reason();
    }
    return "accepted";
  };
  const std::string at = "/kernel_models/gemm/bf16/";
  CHECK(error_of([](model::Json& j) { j["l2_reused_mb"] = 1; }).rfind(at + "l2_reused_mb: unknown key", 0) == 0);
  CHECK(error_of([](model::Json& j) { j.erase("epilogue_share"); }).rfind(at + "epilogue_share", 0) == 0);
  CHECK(error_of([](model::Json& j) { j.erase("stream_k_us"); }).rfind(at + "stream_k_us", 0) == 0);
  CHECK(error_of([](model::Json& j) { j["epilogue_share"] = 1.5; }).rfind(at + "epilogue_share", 0) == 0);
  CHECK(error_of([](model::Json& j) { j["l2_resident_mb"] = -1; }).rfind(at + "l2_resident_mb", 0) == 0);
  CHECK(error_of([](model::Json& j) { j["l2_gb_per_s"] = 0; }) == at + "l2_gb_per_s: must be > 0");
  // An L2 slower than the DRAM would make a larger footprint (more of A from DRAM) faster.
  CHECK(error_of([](model::Json& j) { j["l2_gb_per_s"] = j["memory_gb_per_s"].get<double>() * 0.99; }) ==
        at + "l2_gb_per_s: must be at least memory_gb_per_s (L2 serves no slower than DRAM)");
  CHECK(error_of([](model::Json& j) { j["l2_gb_per_s"] = j["memory_gb_per_s"]; }) == "accepted");
}

TEST_CASE("kernel models: a GEMM by hand (L2-resident activation, serial epilogue, stream-K)", "[kernel-models]") {
  // Memory-bound: the tensor and operand rates so high that the compute time vanishes
  // next to the traffic (and q = 100: the blend is the larger bound), so
  //   t = latency + eps C / B + (A_dram + W + (1 - eps) C) / B + (A - A_dram) / B_l2.
  GemmKernel g;
  g.tensor_tflop_per_s = 1e9;
  g.operand_tb_per_s = 1e9;
  g.memory_gb_per_s = 2000;
  g.latency_us = 2;
  g.split_k_us = 5;
  g.stream_k_us = 4;
  g.epilogue_share = 0.25;
  g.l2_resident_mb = 20;
  g.l2_gb_per_s = 4000;
  g.overlap = 100;
  const double sms = 100, B = 2000e9, Bl2 = 4000e9;
  {
    // m 1024, n 64, k 4096: A 8 MiB, W 0.5 MiB, C 128 KiB; 9 MB of footprint, all of A in L2.
    const double A = 1024.0 * 4096 * 2, W = 4096.0 * 64 * 2, C = 2.0 * 1024 * 64;
    const double expected = 2e-6 + 0.25 * C / B + (W + 0.75 * C) / B + A / Bl2;
    CHECK(gemm_seconds(g, sms, {1024, 64, 4096}) == Approx(expected).epsilon(1e-12));
  }
  {
    // m 4096: A 32 MiB, footprint 35.1 MB: 15.1 MB of A over the resident 20 MB from DRAM.
    const double A = 4096.0 * 4096 * 2, W = 4096.0 * 64 * 2, C = 2.0 * 4096 * 64;
    const double dram = A + W + C - 20e6;
    const double expected = 2e-6 + 0.25 * C / B + (dram + W + 0.75 * C) / B + (A - dram) / Bl2;
    CHECK(gemm_seconds(g, sms, {4096, 64, 4096}) == Approx(expected).epsilon(1e-12));
    // No L2 residency: all of A from DRAM.
    GemmKernel cold = g;
    cold.l2_resident_mb = 0;
    CHECK(gemm_seconds(cold, sms, {4096, 64, 4096}) == Approx(2e-6 + (A + W + C) / B).epsilon(1e-12));
  }
  // Compute-bound: DRAM, L2 and operand paths so fast their time vanishes, no per-step
  // overhead, F 100 TFLOP/s, so one step of k of a tile a x b costs 2 a b sms / F.
  // m 1280, n 3328, k 6400:
  // 130 tiles of 128 x 256 on 100 SMs. Stream-K deals 130 x 100 k-iterations of 64 over 100
  // SMs, 130 each: 130 x 64 steps of the large tile, 545.3 us, plus its 4 us fixup. The
  // best data-parallel option (64 x 64 tiles, split-K 16: 167 waves of 400 steps) takes
  // 547.2 us plus the 5 us reduction; without split-K, 11 waves of 64 x 64 over all of k.
  GemmKernel c = g;
  c.tensor_tflop_per_s = 100;
  c.operand_tb_per_s = 1e15;
  c.memory_gb_per_s = c.l2_gb_per_s = 1e9;
  c.epilogue_share = 0;
  const double big_step = 2 * 128 * 256 * sms / 100e12, small_step = 2 * 64 * 64 * sms / 100e12;
  const double stream_k = 130 * 64 * big_step, split16 = 167 * 400 * small_step;
  CHECK(gemm_seconds(c, sms, {1280, 3328, 6400}) == Approx(2e-6 + stream_k + 4e-6).epsilon(1e-9));
  GemmKernel no_stream_k = c;
  no_stream_k.stream_k_us = 1e4;  // a fixup dearer than any product here: never chosen
  CHECK(gemm_seconds(no_stream_k, sms, {1280, 3328, 6400}) == Approx(2e-6 + split16 + 5e-6).epsilon(1e-9));
  GemmKernel no_split = no_stream_k;
  no_split.split_k_us = 1e4;
  CHECK(gemm_seconds(no_split, sms, {1280, 3328, 6400}) == Approx(2e-6 + 11 * 6400 * small_step).epsilon(1e-9));
}

TEST_CASE("kernel models: the GEMM memo answers only what it was asked", "[kernel-models]") {
  // grouped_gemm_seconds remembers recent answers keyed by the shape and every kernel
  // parameter (compared as bytes): a changed parameter, even one of the new terms, must
  // be searched again, and asking the first question again returns the first answer.
  const HardwareProfile hw = profile("h100-sxm");
  REQUIRE(hw.kernel_models);
  const KernelModels& km = *hw.kernel_models;
  const GemmKernel g = km.gemm.at(DType::bf16);
  const GemmShape resident{1024, 64, 4096};  // 9 MB of footprint: A read from L2
  const double first = gemm_seconds(g, km.sms, resident);
  GemmKernel faster_l2 = g;
  faster_l2.l2_gb_per_s *= 2;
  CHECK(gemm_seconds(faster_l2, km.sms, resident) < first);
  GemmKernel more_serial = g;
  more_serial.epilogue_share = std::min(1.0, g.epilogue_share + 0.25);
  CHECK(gemm_seconds(more_serial, km.sms, {4096, 4096, 256}) > gemm_seconds(g, km.sms, {4096, 4096, 256}));
  CHECK(gemm_seconds(g, km.sms, resident) == first);
  // A parameter equal in value but not in bits (-0 for +0) is a miss that finds the same time.
  GemmKernel zero = g, negative_zero = g;
  zero.quant_passes = 0.0;
  negative_zero.quant_passes = -0.0;
  CHECK(gemm_seconds(negative_zero, km.sms, resident) == gemm_seconds(zero, km.sms, resident));
}

TEST_CASE("kernel models: a fitted GEMM's L2 is within its datasheet's, and never slower than DRAM",
          "[kernel-models]") {
  const std::map<std::string, double> l2_mb = {{"h100-sxm", 50}, {"a100-80gb-sxm", 40}, {"b200", 126}};
  for (const char* file : fitted_files) {
    const HardwareProfile hw = profile(file);
    REQUIRE(hw.kernel_models);
    REQUIRE(hw.l2_cache_mb);
    CHECK(*hw.l2_cache_mb == l2_mb.at(file));
    for (const auto& [dtype, g] : hw.kernel_models->gemm) {
      INFO(file << " " << model::to_string(dtype));
      CHECK(g.l2_resident_mb >= 1);
      CHECK(g.l2_resident_mb <= *hw.l2_cache_mb);
      CHECK(g.l2_gb_per_s >= g.memory_gb_per_s);
      CHECK(g.l2_gb_per_s <= 4 * hw.memory_bandwidth_gb_per_s);
      CHECK(g.epilogue_share > 0);
      CHECK(g.epilogue_share <= 1);
    }
  }
}

TEST_CASE("kernel models: an op's products time its forward and its transposed backward products",
          "[kernel-models][kernel-op-time]") {
  const HardwareProfile hw = profile("h100-sxm");
  REQUIRE(hw.kernel_models);
  const KernelModels& km = *hw.kernel_models;
  ModelShape shape;  // attention is not timed here: only the products' sizes matter
  shape.D = 4096;
  shape.H = 32;
  shape.G = 8;
  shape.qk_head_dim = shape.v_head_dim = 128;
  struct Case {
    double m, n, k;
  };
  // n != k everywhere, so dX = [m,n] x [n,k] (shape m, k, n) and the forward differ.
  for (const Case& c : {Case{2048, 6144, 4096}, Case{16, 14336, 4096}, Case{8192, 4096, 14336}, Case{1, 128, 4096}}) {
    INFO("m " << c.m << " n " << c.n << " k " << c.k);
    OpRow r;
    r.calls = 1;
    r.gemms[0] = OpGemm{c.m, c.n, c.k, 1, GemmSplit::column};
    r.inner_vector_bytes = 0;
    {
      const Roofline rl = make_roofline(hw, DType::bf16, Sharding{}, &shape);
      REQUIRE(rl.kernels == &km);
      REQUIRE(rl.gemm == &km.gemm.at(DType::bf16));
      const GemmKernel& g = *rl.gemm;
      const OpTime t = kernel_op_time(model::OpKind::qkv_proj, r, rl, nullptr);
      const double forward = grouped_gemm_seconds(g, km.sms, {c.m, c.n, c.k}, 1);
      const double dx = grouped_gemm_seconds(g, km.sms, {c.m, c.k, c.n}, 1);  // dY [m,n] x W^T [n,k]
      const double dw = grouped_gemm_seconds(g, km.sms, {c.k, c.n, c.m}, 1);  // X^T [k,m] x dY [m,n]
      CHECK(t.seconds == forward);
      CHECK(t.backward_s == dx + dw);
      CHECK(t.compute_bound);
      // op_time hands a profile with kernel models to kernel_op_time.
      const OpTime via = op_time(model::OpKind::qkv_proj, r, rl, nullptr);
      CHECK(via.seconds == t.seconds);
      CHECK(via.backward_s == t.backward_s);

      // An element-wise step inside the op: a streaming kernel forward, twice that backward.
      OpRow with_inner = r;
      with_inner.inner_vector_bytes = 3e7;
      with_inner.inner_vector_calls = 2;
      const double inner = 2 * km.vector.latency_us * 1e-6 + 3e7 / (km.vector.memory_gb_per_s * 1e9);
      const OpTime ti = kernel_op_time(model::OpKind::ffn_gate_up, with_inner, rl, nullptr);
      CHECK(ti.seconds == Approx(forward + inner).epsilon(1e-12));
      CHECK(ti.backward_s == Approx(dx + dw + 2 * inner).epsilon(1e-12));

      // fp8 takes the fp8 GEMM model.
      const Roofline rl8 = make_roofline(hw, DType::fp8, Sharding{}, &shape);
      REQUIRE(rl8.gemm == &km.gemm.at(DType::fp8));
      const OpTime t8 = kernel_op_time(model::OpKind::qkv_proj, r, rl8, nullptr);
      CHECK(t8.seconds == grouped_gemm_seconds(km.gemm.at(DType::fp8), km.sms, {c.m, c.n, c.k}, 1));
    }
    {
      // Tensor parallel 2: a column-parallel weight splits n, a row-parallel one k.
      const Roofline rl = make_roofline(hw, DType::bf16, Sharding{2, 1, 2}, &shape);
      const GemmKernel& g = *rl.gemm;
      const OpTime col = kernel_op_time(model::OpKind::qkv_proj, r, rl, nullptr);
      CHECK(col.seconds == grouped_gemm_seconds(g, km.sms, {c.m, c.n / 2, c.k}, 1));
      CHECK(col.backward_s == grouped_gemm_seconds(g, km.sms, {c.m, c.k, c.n / 2}, 1) +
                                  grouped_gemm_seconds(g, km.sms, {c.k, c.n / 2, c.m}, 1));
      OpRow row_split = r;
      row_split.gemms[0].split = GemmSplit::row;
      const OpTime row = kernel_op_time(model::OpKind::o_proj, row_split, rl, nullptr);
      CHECK(row.seconds == grouped_gemm_seconds(g, km.sms, {c.m, c.n, c.k / 2}, 1));
      CHECK(row.backward_s == grouped_gemm_seconds(g, km.sms, {c.m, c.k / 2, c.n}, 1) +
                                  grouped_gemm_seconds(g, km.sms, {c.k / 2, c.n, c.m}, 1));
    }
  }
}

TEST_CASE("kernel models: a backward's weight-gradient part is its weight products' dW", "[kernel-models][kernel-op-time]") {
  // dW = X^T dY ([k,m] x [m,n]: shape k, n, m) for a product with a weight; unfused
  // attention's per-head products multiply activations and have none, nor have
  // element-wise ops (pipeline.hpp's W, deferred by ZB-H1).
  const HardwareProfile hw = profile("h100-sxm");
  REQUIRE(hw.kernel_models);
  const KernelModels& km = *hw.kernel_models;
  ModelShape shape;
  shape.D = 4096;
  shape.H = 32;
  shape.G = 8;
  shape.qk_head_dim = shape.v_head_dim = 128;
  const Roofline rl = make_roofline(hw, DType::bf16, Sharding{2, 1, 2}, &shape);
  OpRow r;
  r.calls = 1;
  r.gemms[0] = OpGemm{2048, 6144, 4096, 1, GemmSplit::column};
  r.inner_vector_bytes = 3e7;
  r.inner_vector_calls = 1;
  const OpTime t = kernel_op_time(model::OpKind::ffn_gate_up, r, rl, nullptr);
  CHECK(t.backward_weight_s == grouped_gemm_seconds(*rl.gemm, km.sms, {4096, 6144 / 2, 2048}, 1));
  CHECK(t.backward_weight_s < t.backward_s);
  OpRow heads = r;
  heads.gemms[0] = OpGemm{512, 512, 128, 64, GemmSplit::heads};
  CHECK(kernel_op_time(model::OpKind::o_proj, heads, rl, nullptr).backward_weight_s == 0);
  OpRow vector;
  vector.calls = 1;
  vector.cost.act_bytes_in = 1e6;
  const OpTime v = kernel_op_time(model::OpKind::residual, vector, rl, nullptr);
  CHECK(v.backward_s > 0);
  CHECK(v.backward_weight_s == 0);
}

TEST_CASE("kernel models: a fused attention's backward is 2.5 times its FLOPs at 63/73 of its forward rate",
          "[kernel-models][kernel-op-time]") {
  // FlashAttention-2 (arXiv:2307.08691, section 4, A100): up to 73% of the tensor-core peak
  // forward, 63% backward; the backward has 5 products per tile to the forward's 2.
  const HardwareProfile hw = profile("a100-80gb-sxm");
  REQUIRE(hw.kernel_models);
  ModelShape shape;
  shape.D = 2048;
  shape.H = 16;
  shape.G = 16;
  shape.qk_head_dim = shape.v_head_dim = 128;
  shape.kv_out = 2 * 16 * 128;
  const Roofline rl = make_roofline(hw, DType::bf16, Sharding{}, &shape);
  model::LayerWork w;  // 8 sequences of 2048 causal rows
  w.seqs = 8;
  w.rows_q = w.rows_kv = w.longest_keys = 2048;
  w.pairs_exact = w.pairs_executed = 2048.0 * 2049 / 2;
  OpRow r;
  r.calls = 1;
  r.cost.flops = 8 * w.pairs_exact * 2 * shape.H * (shape.qk_head_dim + shape.v_head_dim);
  const OpTime forward = kernel_op_time(model::OpKind::attention, r, rl, &w, Timing::forward);
  const OpTime training = kernel_op_time(model::OpKind::attention, r, rl, &w, Timing::training);
  REQUIRE(forward.seconds > 0);
  CHECK(forward.backward_s == 0);
  CHECK(training.seconds == forward.seconds);
  CHECK(training.backward_s == Approx(2.5 * 73 / 63 * forward.seconds).epsilon(1e-12));
  CHECK(training.backward_weight_s == 0);  // activations by activations: no weight gradient
}

TEST_CASE("kernel models: Qwen3-8B on the fitted H100 costs more with more work", "[kernel-models][evaluate]") {
  const HardwareProfile hw = profile("h100-sxm");
  const HardwareProfile datasheet =
      parse_hardware_profile(model::read_json_file(fixtures::source_path("profiles/hardware/datasheet/h100-sxm.json")));
  REQUIRE(hw.kernel_models);
  REQUIRE_FALSE(datasheet.kernel_models);
  const model::Config c = qwen3();
  // The fitted models time the evaluation (the roofline's flat efficiencies would give
  // the datasheet profile's numbers).
  CHECK(evaluate(c, hw, Scenario{})[Metric::train_step_s] != evaluate(c, datasheet, Scenario{})[Metric::train_step_s]);
  double prev = 0;
  for (std::int64_t mb : {1, 2, 4}) {
    Scenario s;
    s.train.micro_batch = mb;
    const double step = evaluate(c, hw, s)[Metric::train_step_s];
    INFO("micro_batch " << mb << ": " << step << " s");
    CHECK(step > prev);
    // Twice the sequences are not more than twice the time plus the fixed optimizer update
    // (the GEMMs only get fuller): bound the growth loosely from above as well.
    if (prev > 0) CHECK(step < 2.05 * prev);
    prev = step;
  }
  prev = 0;
  for (std::int64_t context : {512, 2048, 8192, 32768}) {
    Scenario s;
    s.decode.context = context;
    const double step = evaluate(c, hw, s)[Metric::decode_step_s];
    INFO("decode context " << context << ": " << step << " s");
    CHECK(step > prev);
    prev = step;
  }
}
