// The decode-attention kernel model (simulator/kernel_models.hpp, "Decode attention"):
// worked out by hand on a small made-up device, monotone across TensorRT-LLM's switch from
// the one-row to the grouped kernel and under sliding windows (made-up and bundled
// kernels), the forced one-row kernel, and the JSON form of the new keys.
//
// Monotonicity is checked up to rounding (1e-12 of the time), as in test_kernel_models.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/kernel_models.hpp"
#include "kernel_test_helpers.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using model::DType;

namespace {

using kernel_test::profile_json;
using kernel_test::Violations;

// sms 10; B 1000 GB/s; latency 5 us; overlap 100 (the larger bound alone, to 1e-30);
// tensor 100 TFLOP/s; TensorRT-LLM's block factor 4. One-row kernel: 2 us a block, 10 GB/s
// a block, 2 resident blocks per SM, splits aimed at 1 block per SM and a pass of 12800 /
// hd keys (100 at hd 128), 1 us more for the split variant, L2 50 TB/s. Grouped kernel:
// 4 us a block + 0.5 us a row, 20 GB/s a block, 2 resident, at least 64 keys a block.
// A K+V row of hd 128 in bf16 is 512 B, a query+output row too.
constexpr double kSms = 10;
DecodeAttentionKernel hand_kernel() {
  DecodeAttentionKernel a;
  a.memory_gb_per_s = 1000;
  a.grouped_min_block_factor = 4;
  a.one_row = {2, 10, 2, 1, 12800, 1, 50000};
  a.grouped = {4, 0.5, 20, 2, 64, true, {}};
  a.tensor_tflop_per_s = 100;
  a.latency_us = 5;
  a.overlap = 100;
  return a;
}

// A decode step at hd 128 (context 0: the keys are the context).
DecodeAttentionShape shape(double seqs, double keys, double heads, double kv_heads, double context = 0) {
  return kernel_test::decode(seqs, keys, heads, kv_heads, 128, context);
}

// Contexts around every 128-key step of the dispatch test and the split count, and seqs
// 0.5 (a sequence shared by two expert-parallel ranks) to 40 in halves.
std::vector<double> contexts() {
  std::vector<double> out;
  for (double c = 1; c <= 1200; ++c) out.push_back(c);
  for (double c = 1536; c <= 300000; c *= 1.5) out.push_back(std::round(c));
  return out;
}

// t never falls from one context to the next, nor from one batch to the next, with
// `window` keys read (0: all of the context).
void check_monotone(const DecodeAttentionKernel& a, double sms, double heads, double kv_heads, double window,
                    const std::string& what, Violations& v) {
  const std::vector<double> ctx = contexts();
  auto t = [&](double seqs, double c) {
    return decode_attention_seconds(a, sms, shape(seqs, window > 0 ? std::min(window, c) : c, heads, kv_heads, c));
  };
  for (double seqs = 0.5; seqs <= 40; seqs += 0.5) {
    for (std::size_t i = 0; i + 1 < ctx.size(); ++i) {
      const std::string at = what + " seqs " + std::to_string(seqs) + " context ";
      v.check(t(seqs, ctx[i]), t(seqs, ctx[i + 1]), at + std::to_string(ctx[i]));
      v.check(t(seqs, ctx[i]), t(seqs + 0.5, ctx[i]), at + std::to_string(ctx[i]) + " (+0.5 seqs)");
    }
  }
}

}  // namespace

TEST_CASE("decode attention by hand: the one-row and grouped kernels, the dispatch and its envelope, windows",
          "[kernel-models][decode]") {
  const DecodeAttentionKernel a = hand_kernel();
  auto us = [&](const DecodeAttentionShape& s) { return decode_attention_seconds(a, kSms, s) * 1e6; };
  // MHA, 1 sequence x 4 heads, 10000 keys: the one-row kernel; 4 blocks split
  // min(10 / 4, 10000 / 100) = 2.5 ways; a block: 2 + 1 (split variant) + (4000 x 512 +
  // 512) / 10e3 us = 207.8512 us; 10 blocks fit the 20 slots; DRAM 20.48 us, L2 0.41 us.
  CHECK(us(shape(1, 10000, 4, 4)) == Approx(5 + 207.8512).epsilon(1e-12));
  // GQA 32/8 (4 rows a block), 64 sequences, 1000 keys: grouped (4 x 64 x 8 x 7 >= 10);
  // 512 blocks, splits min(7.8, 7.9, 8 x 10 / 512) -> 1; a block: 4 + 4 x 0.5 + (1000 +
  // 4) 512 / 20e3 = 31.7024 us; 512 blocks on 20 slots: 25.6 x = 811.58144 us (DRAM 263 us).
  CHECK(us(shape(64, 1000, 32, 8)) == Approx(5 + 811.58144).epsilon(1e-12));
  // The same step on the one-row kernel forced (TensorRT-LLM before XQA): 2048 blocks of
  // 2 + 1 + (1000 + 1) 512 / 10e3 = 54.2512 us, 102.4 waves.
  DecodeAttentionShape forced = shape(64, 1000, 32, 8);
  forced.kernel = DecodeKernel::one_row;
  CHECK(us(forced) == Approx(5 + 102.4 * 54.2512).epsilon(1e-12));
  // 32 query heads on 1 KV head, 10000 keys: grouped; 78.125 splits of 128 keys capped at
  // sqrt(8 x 78.125) = 25 (400 keys each); a block 20 + 432 x 512 / 20e3 = 31.0592 us;
  // all 25 blocks: (25 x 20 + (10000 + 25 x 32) 512 / 20e3) / 20 slots = 38.824 us. The
  // one-row shapes below the switch (1 sequence, context < 384) reach only 41.34 us.
  CHECK(us(shape(1, 10000, 32, 1)) == Approx(5 + 38.824).epsilon(1e-12));
  // GQA 8/2, 1 sequence: the one-row kernel below 256 of context (4 x 1 x 2 x 1 < 10):
  // 8 blocks split 1.25 ways, a block 3 + (255 / 1.25 x 512 + 512) / 10e3 = 13.496 us.
  CHECK(us(shape(1, 255, 8, 2)) == Approx(5 + 13.496).epsilon(1e-12));
  // At 300 the grouped kernel runs (2.34 splits of 128 keys, a block 9.3792 us: 14.3792
  // us in all) but the step is held to the one-row time at the switch's edge (context
  // just under 256: 3 + (256 / 1.25 x 512 + 512) / 10e3 = 13.53696 us), so it never falls.
  CHECK(us(shape(1, 300, 8, 2)) == Approx(5 + 13.53696).epsilon(1e-9));
  // Sliding window: 128 keys of a 65536-position context, GQA 32/8, 1 sequence. The
  // splits follow the context (min(512, 64, 8 x 10 / 8) = 10), each block reads at most
  // the window: 6 + (128 + 4) 512 / 20e3 = 9.3792 us; all 80 blocks: 8 (10 x 6 +
  // (640 x 512 + 10 x 4 x 512) / 20e3) / 20 = 30.9632 us.
  CHECK(us(shape(1, 128, 32, 8, 65536)) == Approx(5 + 30.9632).epsilon(1e-12));
  CHECK(us(shape(1, 128, 32, 8, 65536)) < us(shape(1, 65536, 32, 8)));
  // Splits over the window alone (Blackwell's tables): 1 split of the 128 keys, 8 blocks of
  // 9.3792 us in one wave.
  DecodeAttentionKernel window_only = a;
  window_only.grouped.splits_span_context = false;
  CHECK(decode_attention_seconds(window_only, kSms, shape(1, 128, 32, 8, 65536)) * 1e6 ==
        Approx(5 + 9.3792).epsilon(1e-12));
  // 64 query heads on 1 KV head: past the grouped kernel's 32 rows; 64 one-row blocks of
  // 10000 keys (no split: 10 / 64 < 1): 3 + 10001 x 512 / 10e3 = 515.0512 us, 3.2 waves;
  // with L2 at 100 GB/s the 64 blocks' reads (327.68 MB) bound it instead: 3276.8 us.
  CHECK(us(shape(1, 10000, 64, 1)) == Approx(5 + 3.2 * 515.0512).epsilon(1e-12));
  DecodeAttentionKernel slow_l2 = a;
  slow_l2.one_row.l2_gb_per_s = 100;
  CHECK(decode_attention_seconds(slow_l2, kSms, shape(1, 10000, 64, 1)) * 1e6 == Approx(5 + 3276.8).epsilon(1e-12));
  // MHA forced to the one-row kernel is what it was.
  DecodeAttentionShape mha = shape(1, 10000, 4, 4);
  mha.kernel = DecodeKernel::one_row;
  CHECK(us(mha) == us(shape(1, 10000, 4, 4)));
}

TEST_CASE("decode attention by hand: the grouped kernel's latency per head dimension", "[kernel-models][decode]") {
  // The grouped step of the hand kernel (GQA 32/8, 64 sequences, 1000 keys: 811.58144 us
  // past its latency) with head dims 64 and 128 fitted at 7 and 3 us: hd 128 takes 3 us,
  // hd 64 and anything below 64 takes 7, hd 96 the next one up (128's), hd 256 the largest
  // (128's). The one-row kernel keeps the kernel's 5 us.
  DecodeAttentionKernel a = hand_kernel();
  a.grouped.head_dims = {{64, 7}, {128, 3}};
  auto grouped_us = [&](double hd) {
    DecodeAttentionShape s = shape(64, 1000, 32, 8);
    s.head_dim = hd;
    DecodeAttentionKernel shared = a;
    shared.grouped.head_dims.clear();  // the same step at the kernel's own latency, 5 us
    return (decode_attention_seconds(a, kSms, s) - decode_attention_seconds(shared, kSms, s)) * 1e6 + 5;
  };
  CHECK(decode_attention_seconds(a, kSms, shape(64, 1000, 32, 8)) * 1e6 == Approx(3 + 811.58144).epsilon(1e-12));
  CHECK(grouped_us(128) == Approx(3).epsilon(1e-9));
  CHECK(grouped_us(64) == Approx(7).epsilon(1e-9));
  CHECK(grouped_us(32) == Approx(7).epsilon(1e-9));
  CHECK(grouped_us(96) == Approx(3).epsilon(1e-9));
  CHECK(grouped_us(256) == Approx(3).epsilon(1e-9));
  CHECK(decode_attention_seconds(a, kSms, shape(1, 10000, 4, 4)) * 1e6 == Approx(5 + 207.8512).epsilon(1e-12));
}

TEST_CASE("decode attention: never faster across the dispatch switch, nor with a longer context under a window",
          "[kernel-models][decode][monotonic]") {
  Violations v;
  const DecodeAttentionKernel a = hand_kernel();
  DecodeAttentionKernel window_only = a;
  window_only.grouped.splits_span_context = false;
  for (const DecodeAttentionKernel& k : {a, window_only})
    for (double window : {0.0, 100.0})
      for (auto [h, g] : std::vector<std::pair<double, double>>{{8, 2}, {32, 8}, {16, 1}, {32, 32}})
        check_monotone(k, kSms, h, g, window, "hand " + std::to_string(h) + "/" + std::to_string(g), v);
  // The bundled fitted kernels (those with a switch, and those without) on their devices.
  for (const char* file : {"h100-sxm", "a100-80gb-sxm", "b200"}) {
    const HardwareProfile hw = parse_hardware_profile(profile_json(file));
    REQUIRE(hw.kernel_models);
    for (const auto& [dtype, k] : hw.kernel_models->decode_attention)
      for (double window : {0.0, 128.0})
        for (auto [h, g] : std::vector<std::pair<double, double>>{{32, 8}, {16, 1}})
          check_monotone(k, hw.kernel_models->sms, h, g, window,
                         std::string(file) + " " + model::to_string(dtype) + " " + std::to_string(h) + "/" +
                             std::to_string(g) + " window " + std::to_string(window),
                         v);
  }
  INFO(v.first());
  CHECK(v.cases.empty());
}

TEST_CASE("decode attention: a window never costs more than its whole context", "[kernel-models][decode]") {
  const HardwareProfile hw = parse_hardware_profile(profile_json("h100-sxm"));
  REQUIRE(hw.kernel_models);
  for (const auto& [dtype, k] : hw.kernel_models->decode_attention)
    for (double seqs : {1.0, 8.0, 64.0, 512.0})
      for (double context = 256; context <= 131072; context *= 2) {
        INFO(model::to_string(dtype) << " seqs " << seqs << " context " << context);
        const double windowed = decode_attention_seconds(k, hw.kernel_models->sms, shape(seqs, 128, 64, 8, context));
        CHECK(windowed <= decode_attention_seconds(k, hw.kernel_models->sms, shape(seqs, context, 64, 8)));
      }
}

TEST_CASE("decode attention: the JSON form carries the new keys and refuses unknown and missing ones",
          "[kernel-models][decode][bad-input]") {
  model::Json j = profile_json("h100-sxm");
  const HardwareProfile first = parse_hardware_profile(j);
  REQUIRE(first.kernel_models);
  const DecodeAttentionKernel& bf16 = first.kernel_models->decode_attention.at(DType::bf16);
  CHECK(bf16.grouped_min_block_factor == 4);  // the H100 bf16 tables follow TensorRT-LLM's test
  CHECK(first.kernel_models->decode_attention.at(DType::fp8).grouped_min_block_factor == 0);
  CHECK(parse_hardware_profile(to_json(first)) == first);

  const std::string at = "/kernel_models/decode_attention/bf16";
  auto refused = [&](model::Json bad, const std::string& pointer) {
    try {
      parse_hardware_profile(bad);
      FAIL("accepted: " << pointer);
    } catch (const model::ConfigError& e) {
      CHECK(e.pointer() == pointer);
    }
  };
  model::Json unknown = j;
  unknown["kernel_models"]["decode_attention"]["bf16"]["grouped"]["chunk_tokens"] = 128;
  refused(unknown, at + "/grouped/chunk_tokens");
  model::Json old_key = j;
  old_key["kernel_models"]["decode_attention"]["bf16"]["chunk_tokens"] = 128;  // the previous model's
  refused(old_key, at + "/chunk_tokens");
  model::Json missing = j;
  missing["kernel_models"]["decode_attention"]["bf16"]["one_row"].erase("split_us");
  refused(missing, at + "/one_row/split_us");
  model::Json zero = j;
  zero["kernel_models"]["decode_attention"]["bf16"]["one_row"]["l2_gb_per_s"] = 0;
  refused(zero, at + "/one_row/l2_gb_per_s");
  model::Json not_bool = j;
  not_bool["kernel_models"]["decode_attention"]["bf16"]["grouped"]["splits_span_context"] = 1;
  refused(not_bool, at + "/grouped/splits_span_context");
  model::Json negative = j;
  negative["kernel_models"]["decode_attention"]["bf16"]["grouped_min_block_factor"] = -1;
  refused(negative, at + "/grouped_min_block_factor");
  // The grouped kernel's latencies per head dimension: optional, by increasing head dim.
  REQUIRE(j["kernel_models"]["decode_attention"]["fp8"]["grouped"].contains("head_dims"));
  model::Json no_dims = j;
  no_dims["kernel_models"]["decode_attention"]["fp8"]["grouped"].erase("head_dims");
  CHECK(parse_hardware_profile(no_dims).kernel_models->decode_attention.at(DType::fp8).grouped.head_dims.empty());
  model::Json& dims = j["kernel_models"]["decode_attention"]["fp8"]["grouped"]["head_dims"];
  REQUIRE(dims.size() >= 2);
  const std::string fp8 = "/kernel_models/decode_attention/fp8/grouped/head_dims";
  model::Json swapped = j;
  std::swap(swapped["kernel_models"]["decode_attention"]["fp8"]["grouped"]["head_dims"][0],
            swapped["kernel_models"]["decode_attention"]["fp8"]["grouped"]["head_dims"][1]);
  refused(swapped, fp8 + "/1/head_dim");
  model::Json empty = j;
  empty["kernel_models"]["decode_attention"]["fp8"]["grouped"]["head_dims"] = model::Json::array();
  refused(empty, fp8);
  model::Json below_zero = j;
  below_zero["kernel_models"]["decode_attention"]["fp8"]["grouped"]["head_dims"][0]["latency_us"] = -1;
  refused(below_zero, fp8 + "/0/latency_us");
  model::Json extra = j;
  extra["kernel_models"]["decode_attention"]["fp8"]["grouped"]["head_dims"][0]["unit_us"] = 1;
  refused(extra, fp8 + "/0/unit_us");
}

TEST_CASE("the scenario's attention.decode_kernel forces the one-row kernel on a GQA model", "[decode][scenario]") {
  const HardwareProfile h100 = parse_hardware_profile(profile_json("h100-sxm"));
  auto decode_s = [&](const char* model_file, const char* kernel) {
    const model::Config c = model::parse_config(model::read_json_file(fixtures::source_path(model_file)));
    const Scenario s = parse_scenario(model::Json::parse(std::string(R"({"attention": {"decode_kernel": ")") + kernel +
                                                         R"("}, "decode": {"batch": 64, "context": 2048}})"));
    return evaluate(c, h100, s)[Metric::decode_step_s];
  };
  // Llama-2 70B: 64 query heads share 8 KV heads. One block per query head walks its KV
  // head's keys eight times over: slower than the grouped kernel that reads them once.
  const char* gqa = "profiles/models/llama2-70b-fp16.json";
  CHECK(decode_s(gqa, "one_row") > 1.2 * decode_s(gqa, "auto"));
  // Llama-2 7B has no GQA: the one-row kernel is what runs either way.
  const char* mha = "profiles/models/llama2-7b-fp16.json";
  CHECK(decode_s(mha, "one_row") == decode_s(mha, "auto"));

  const Scenario forced = parse_scenario(model::Json::parse(R"({"attention": {"decode_kernel": "one_row"}})"));
  CHECK(to_json(forced)["attention"]["decode_kernel"] == "one_row");
  CHECK(to_json(Scenario{})["attention"]["decode_kernel"] == "auto");
  try {
    parse_scenario(model::Json::parse(R"({"attention": {"decode_kernel": "xqa"}})"));
    FAIL("no ConfigError");
  } catch (const model::ConfigError& e) {
    CHECK(e.pointer() == "/scenario/attention/decode_kernel");
  }
}
