// Hardware profiles: strict parsing with JSON-pointer errors, round trips, the bundled
// files, efficiency curves and the roofline and collective formulas computed by hand.
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "hdlab/simulator/roofline.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using fixtures::error_of;

TEST_CASE("hardware profile parses and round-trips", "[hardware]") {
  const HardwareProfile h = fixtures::device(3);
  CHECK(h.name == "round device");
  CHECK(h.peak_bf16_tflop_per_s == 100);
  CHECK_FALSE(h.peak_fp8_tflop_per_s.has_value());
  CHECK_FALSE(h.l2_cache_mb.has_value());
  CHECK(h.kernel_launch_overhead_us == 3);
  CHECK(h.scalar_efficiency(EfficiencyClass::attention) == 0.25);
  CHECK(parse_hardware_profile(to_json(h)) == h);
  CHECK(h.matrix_peak_flop_per_s(model::DType::bf16) == 100e12);
  CHECK(h.matrix_peak_flop_per_s(model::DType::fp32) == 10e12);
  CHECK(error_of([&] { h.matrix_peak_flop_per_s(model::DType::fp8); }) ==
        "/peak_fp8_tflop_per_s: is null: round device has no fp8 matrix rate");
}

TEST_CASE("every bundled hardware profile parses and round-trips", "[hardware][profiles]") {
  for (const char* name : {"h100-sxm", "h200", "h20", "a100-80gb-sxm", "b200"}) {
    INFO(name);
    const model::Json j = model::read_json_file(fixtures::source_path(std::string("profiles/hardware/") + name + ".json"));
    const HardwareProfile h = parse_hardware_profile(j);
    CHECK(h.memory_bandwidth_gb_per_s > 0);
    CHECK(parse_hardware_profile(to_json(h)) == h);
  }
}

TEST_CASE("bad hardware profiles name the JSON pointer", "[hardware][errors]") {
  auto with = [](const char* pointer, model::Json value) {
    model::Json j = fixtures::device_json();
    j[model::Json::json_pointer(pointer)] = std::move(value);
    return j;
  };
  auto without = [](const char* key) {
    model::Json j = fixtures::device_json();
    j.erase(key);
    return j;
  };
  CHECK(error_of([&] { parse_hardware_profile(with("/peak_bf16_tflop_per_sec", 1)); }) ==
        "/peak_bf16_tflop_per_sec: unknown key (did you mean \"peak_bf16_tflop_per_s\"?)");
  CHECK(error_of([&] { parse_hardware_profile(with("/hbm_gb", 80)); }) == "/hbm_gb: unknown key");
  CHECK(error_of([&] { parse_hardware_profile(with("/efficiency/gemmm", 0.5)); }) ==
        "/efficiency/gemmm: unknown key (did you mean \"gemm\"?)");
  CHECK(error_of([&] { parse_hardware_profile(without("memory_gb")); }) == "/memory_gb: is required");
  CHECK(error_of([&] { parse_hardware_profile(without("sources")); }) == "/sources: is required");
  CHECK(error_of([&] { parse_hardware_profile(with("/memory_bandwidth_gb_per_s", -5)); }) ==
        "/memory_bandwidth_gb_per_s: must be between 0.001 and 1000000.0 GB/s (a physically sensible device), got -5.0");
  CHECK(error_of([&] { parse_hardware_profile(with("/memory_bandwidth_gb_per_s", 0)); }) ==
        "/memory_bandwidth_gb_per_s: must be between 0.001 and 1000000.0 GB/s (a physically sensible device), got 0.0");
  CHECK(error_of([&] { parse_hardware_profile(with("/nvlink_bandwidth_gb_per_s", -1)); }) ==
        "/nvlink_bandwidth_gb_per_s: must be between 0.001 and 1000000.0 GB/s (a physically sensible device), got -1.0");
  CHECK(error_of([&] { parse_hardware_profile(with("/efficiency/memory", 1.5)); }) ==
        "/efficiency/memory: must be between 1e-06 and 1.0 (fraction of peak) (a physically sensible device), got 1.5");
  CHECK(error_of([&] { parse_hardware_profile(with("/kind", "tpu")); }) ==
        "/kind: must be one of gpu, cpu, got \"tpu\"");
  CHECK(error_of([&] { parse_hardware_profile(with("/sources/x", 3)); }) == "/sources/x: must be a string, got integer 3");
  CHECK(error_of([&] { parse_hardware_profile(with("/measured", 3)); }) == "/measured: must be an object, got integer");
  CHECK(error_of([&] { parse_hardware_profile(with("/efficiency_curves", model::Json{{"gemm", {{1, 0.1}, {1, 0.2}}}})); }) ==
        "/efficiency_curves/gemm/1/0: must be larger than the previous point's x");
  CHECK(error_of([&] {
          parse_hardware_profile(with("/efficiency_curves", model::Json{{"communication", {{1, 0.1}}}}));
        }) == "/efficiency_curves/communication: unknown key");
  CHECK(error_of([&] { parse_hardware_profile(with("/efficiency_curves", model::Json{{"gemm", {{1, 0}}}})); }) ==
        "/efficiency_curves/gemm/0/1: must be between 1e-06 and 1.0 (fraction of peak) (a physically sensible device), "
        "got 0.0");
}

TEST_CASE("hardware numbers outside what a real device can have are refused", "[hardware][bad-input]") {
  // Subnormal or huge rates once turned every prediction into inf or nan with exit 0.
  struct Row {
    const char* pointer;
    double value;
    const char* range;
  };
  const Row rows[] = {
      {"/peak_bf16_tflop_per_s", 1e-310, "between 1e-06 and 1000000.0 TFLOP/s"},
      {"/peak_bf16_tflop_per_s", 1e300, "between 1e-06 and 1000000.0 TFLOP/s"},
      {"/peak_fp16_tflop_per_s", 0, "between 1e-06 and 1000000.0 TFLOP/s"},
      {"/peak_fp8_tflop_per_s", 5e-324, "between 1e-06 and 1000000.0 TFLOP/s"},
      {"/peak_fp32_tflop_per_s", 1e7, "between 1e-06 and 1000000.0 TFLOP/s"},
      {"/memory_gb", 1e-310, "between 0.001 and 1000000.0 GB"},
      {"/memory_gb", 1e300, "between 0.001 and 1000000.0 GB"},
      {"/memory_bandwidth_gb_per_s", 1e-310, "between 0.001 and 1000000.0 GB/s"},
      {"/network_bandwidth_gb_per_s", 1e300, "between 0.001 and 1000000.0 GB/s"},
      {"/nvlink_latency_us", 1e300, "between 0.0 and 1000000.0 us"},
      {"/kernel_launch_overhead_us", -1e-310, "between 0.0 and 1000000.0 us"},
      {"/l2_cache_mb", 1e300, "between 0.0 and 1000000.0 MB"},
      {"/efficiency/gemm", 1e-310, "between 1e-06 and 1.0 (fraction of peak)"},
      {"/efficiency_curves/gemm/0/0", 1e300, "between 1e-06 and 1e+18 (the class's abscissa: a dimension, rows or bytes)"},
      {"/efficiency_curves/gemm/0/1", 1e-310, "between 1e-06 and 1.0 (fraction of peak)"},
  };
  for (const Row& row : rows) {
    INFO(row.pointer << " = " << row.value);
    model::Json j = fixtures::device_json();
    if (std::string(row.pointer).rfind("/efficiency_curves", 0) == 0) j["efficiency_curves"] = {{"gemm", {{64, 0.5}}}};
    j[model::Json::json_pointer(row.pointer)] = row.value;
    CHECK(error_of([&] { parse_hardware_profile(j); }) == std::string(row.pointer) + ": must be " + row.range +
                                                                " (a physically sensible device), got " +
                                                                model::Json(row.value).dump());
  }
  // 0 still means "no such link".
  model::Json no_link = fixtures::device_json();
  no_link["nvlink_bandwidth_gb_per_s"] = 0;
  CHECK(*parse_hardware_profile(no_link).nvlink_bandwidth_gb_per_s == 0.0);
}

TEST_CASE("efficiency curves interpolate in log x and clamp", "[hardware]") {
  model::Json j = fixtures::device_json();
  j["efficiency_curves"] = {{"gemm", {{1, 0.1}, {100, 0.5}, {10000, 0.9}}}};
  const HardwareProfile h = parse_hardware_profile(j);
  CHECK(h.efficiency_at(EfficiencyClass::gemm, 0.5) == 0.1);
  CHECK(h.efficiency_at(EfficiencyClass::gemm, 1e6) == 0.9);
  CHECK(h.efficiency_at(EfficiencyClass::gemm, 10) == Approx(0.3).epsilon(1e-12));    // halfway in log
  CHECK(h.efficiency_at(EfficiencyClass::gemm, 1000) == Approx(0.7).epsilon(1e-12));
  CHECK(h.efficiency_at(EfficiencyClass::attention, 10) == 0.25);  // no curve: the scalar
  CHECK(parse_hardware_profile(to_json(h)) == h);
}

TEST_CASE("op curves replace their class's, class memory curves the memory curve", "[hardware][roofline]") {
  model::Json j = fixtures::device_json();
  j["efficiency_curves"] = {{"vector", {{1, 0.5}}},
                            {"ffn_act", {{1, 0.01}, {1e6, 0.04}}},
                            {"memory", {{1, 0.8}}},
                            {"gemm_memory", {{1e3, 0.1}, {1e9, 0.1}}}};
  const HardwareProfile h = parse_hardware_profile(j);
  CHECK(h.has_curves());
  CHECK(h.compute_efficiency_at(model::OpKind::ffn_act, EfficiencyClass::vector, 1e3) == Approx(0.025).epsilon(1e-12));  // halfway in log x
  CHECK(h.compute_efficiency_at(model::OpKind::rope, EfficiencyClass::vector, 1e3) == 0.5);  // no op curve: the class's
  CHECK(h.memory_efficiency_at(EfficiencyClass::gemm, 1e6) == 0.1);
  CHECK(h.memory_efficiency_at(EfficiencyClass::vector, 1e6) == 0.8);  // no class memory curve: the memory curve
  CHECK(parse_hardware_profile(to_json(h)) == h);
  CHECK(to_json(h)["efficiency_curves"].contains("ffn_act"));
  CHECK(to_json(h)["efficiency_curves"].contains("gemm_memory"));

  const Roofline rl = make_roofline(h, model::DType::bf16, Sharding{});
  OpRow act;  // 1e6 FLOPs moving 1 byte: ffn_act at its own curve (x = 1 byte), rope at the vector curve
  act.calls = 1;
  act.cost.flops = 1e6;
  act.cost.act_bytes_in = 1;
  const double eff = h.op_curves[static_cast<std::size_t>(model::OpKind::ffn_act)].at(1.0);
  CHECK(op_time(model::OpKind::ffn_act, act, rl, nullptr).compute_s == Approx(1e6 / (10e12 * eff)).epsilon(1e-12));
  CHECK(op_time(model::OpKind::rope, act, rl, nullptr).compute_s == Approx(1e6 / (10e12 * 0.5)).epsilon(1e-12));
  OpRow gemv;  // M = 1: memory bound at the GEMM memory curve, 1e8 B / (1000e9 * 0.1)
  gemv.calls = 1;
  gemv.rows = 1;
  gemv.weight_dim_min = 4096;
  gemv.cost.flops = 2e6;
  gemv.cost.weight_bytes = 1e8;
  CHECK(op_time(model::OpKind::o_proj, gemv, rl, nullptr).memory_s == Approx(1e8 / 100e9).epsilon(1e-12));
  CHECK(error_of([&] {
          model::Json bad = fixtures::device_json();
          bad["efficiency_curves"] = {{"ffn_actt", {{1, 0.5}}}};
          parse_hardware_profile(bad);
        }) == "/efficiency_curves/ffn_actt: unknown key (did you mean \"ffn_act\"?)");
}

TEST_CASE("roofline time of single ops, by hand", "[roofline]") {
  const HardwareProfile h = fixtures::device(2);  // 2 us per launch
  const Roofline rl = make_roofline(h, model::DType::bf16, Sharding{});
  OpRow gemm;
  gemm.calls = 1;
  gemm.rows = 4096;
  gemm.weight_dim_min = 4096;
  gemm.cost.flops = 1e12;          // 1e12 / (100e12 * 0.5) = 20 ms
  gemm.cost.weight_bytes = 1e9;    // 1e9 / (1000e9 * 0.8) = 1.25 ms
  OpTime t = op_time(model::OpKind::ffn_down, gemm, rl, nullptr);
  CHECK(t.compute_bound);
  CHECK(t.seconds == Approx(0.020 + 2e-6).epsilon(1e-12));

  OpRow norm;  // vector: 1e9 FLOPs / (10e12 * 0.5) = 0.2 ms; 8e8 B / 800e9 B/s = 1 ms
  norm.calls = 1;
  norm.cost.flops = 1e9;
  norm.cost.act_bytes_in = 4e8;
  norm.cost.act_bytes_out = 4e8;
  t = op_time(model::OpKind::attn_norm, norm, rl, nullptr);
  CHECK_FALSE(t.compute_bound);
  CHECK(t.seconds == Approx(1e-3 + 2e-6).epsilon(1e-12));

  // tp = 2, ep = 2: experts split 4 ways, other weights 2 ways, activations 4 ways.
  const Roofline sharded = make_roofline(h, model::DType::bf16, Sharding{2, 2, 1});
  OpRow experts = gemm;
  experts.cost.flops = 0;
  experts.cost.act_bytes_in = 8e8;
  experts.cost.kv_bytes_read = 0;
  t = op_time(model::OpKind::experts, experts, sharded, nullptr);
  CHECK(t.memory_s == Approx((1e9 / 4 + 8e8 / 4) / 800e9).epsilon(1e-12));
  t = op_time(model::OpKind::shared_experts, experts, sharded, nullptr);
  CHECK(t.memory_s == Approx((1e9 / 2 + 8e8 / 4) / 800e9).epsilon(1e-12));
  OpRow attention;  // KV split over kv_tp * ep = 1 * 2 when tp exceeds the KV heads
  attention.calls = 1;
  attention.cost.kv_bytes_read = 8e8;
  t = op_time(model::OpKind::attention, attention, sharded, nullptr);
  CHECK(t.memory_s == Approx(4e8 / 800e9).epsilon(1e-12));
}

TEST_CASE("collectives follow the ring formulas", "[roofline][comm]") {
  const HardwareProfile h = fixtures::device();
  const Link nv = link_for(h, 8, 8, "/x");  // 100 GB/s * 0.5, 1 us
  CHECK(nv.bytes_per_s == 50e9);
  CHECK(nv.latency_s == Approx(1e-6).epsilon(1e-15));
  const Link net = link_for(h, 16, 8, "/x");
  CHECK(net.bytes_per_s == 5e9);
  CHECK(net.latency_s == Approx(5e-6).epsilon(1e-15));
  // all-reduce of 1 GB over 4 ranks: 2 * 3/4 * 1e9 / 50e9 + 2 * 3 * 1 us
  CHECK(ring_all_reduce_s(1e9, 4, nv) == Approx(0.03 + 6e-6).epsilon(1e-12));
  CHECK(all_gather_s(1e9, 4, nv) == Approx(0.015 + 3e-6).epsilon(1e-12));
  CHECK(all_to_all_s(1e9, 4, nv) == Approx(0.015 + 3e-6).epsilon(1e-12));
  CHECK(ring_all_reduce_s(1e9, 1, nv) == 0);

  model::Json j = fixtures::device_json();
  j["nvlink_bandwidth_gb_per_s"] = nullptr;
  const HardwareProfile no_link = parse_hardware_profile(j);
  CHECK(error_of([&] { link_for(no_link, 2, 8, "/scenario/parallel/tp"); }) ==
        "/scenario/parallel/tp: needs a device-to-device link but round device has no nvlink_bandwidth_gb_per_s");
}
