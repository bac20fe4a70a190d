// The remembered kernel-model answers (simulator/src/kernel_memo.hpp): on the bundled
// fitted kernels, every GEMM and decode step asked through the memo (twice, in two orders,
// so that each is answered once searched and once remembered, and decode attention's
// envelope is reused across contexts) equals the public form's search exactly; memo keys
// name a kernel's parameters and SM count, and are never given to other parameters.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../../simulator/src/kernel_memo.hpp"
#include "fixtures.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/kernel_models.hpp"

using namespace hdlab;
using namespace hdlab::simulator;

namespace {

HardwareProfile bundled(const std::string& file) {
  return parse_hardware_profile(model::read_json_file(fixtures::source_path("profiles/hardware/" + file + ".json")));
}

const char* const kFitted[] = {"h100-sxm", "a100-80gb-sxm", "b200", "h200"};

// Decode shapes across the one-row/grouped switch and every envelope edge (contexts
// 128 (n + 1) of the bundled sms and block factors, and either side of them), with and
// without a window, one and several rows per sequence, MHA and GQA.
std::vector<DecodeAttentionShape> decode_shapes() {
  std::vector<DecodeAttentionShape> out;
  for (double seqs : {1.0, 2.0, 3.0, 5.0, 8.0, 17.0, 64.0})
    for (double kv_heads : {1.0, 2.0, 8.0})
      for (double group : {1.0, 4.0, 8.0, 40.0})
        for (double rows : {1.0, 4.0})
          for (double window : {0.0, 256.0})
            for (double context : {100.0, 127.0, 128.0, 300.0, 511.0, 512.0, 639.0, 640.0, 700.0, 1000.0, 1152.0,
                                   2176.0, 4096.0, 4224.0, 50000.0}) {
              DecodeAttentionShape s;
              s.seqs = seqs;
              s.kv_heads = kv_heads;
              s.heads = kv_heads * group;
              s.head_dim = 128;
              s.query_rows = rows;
              s.context = context;
              s.keys = window > 0 ? std::min(window, context) : context;
              out.push_back(s);
            }
  return out;
}

}  // namespace

TEST_CASE("remembered decode steps equal the searched ones, envelopes reused across contexts", "[kernel-models][memo]") {
  const std::vector<DecodeAttentionShape> shapes = decode_shapes();
  for (const char* file : kFitted) {
    const HardwareProfile hw = bundled(file);
    const KernelModels& km = *hw.kernel_models;
    for (const auto& [dtype, kernel] : km.decode_attention) {
      INFO(file << " " << model::to_string(dtype));
      const std::uint64_t key = memo_key(kernel, km.sms);
      int mismatches = 0;
      // Forward (contexts innermost: each batch's envelope searched once, then found) and
      // backward (every step found).
      for (int pass = 0; pass < 2; ++pass)
        for (std::size_t i = 0; i < shapes.size(); ++i) {
          const DecodeAttentionShape& s = shapes[pass == 0 ? i : shapes.size() - 1 - i];
          const double searched = decode_attention_seconds(kernel, km.sms, s);
          if (decode_attention_seconds(kernel, km.sms, key, s) != searched) ++mismatches;
        }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("remembered GEMMs equal the searched ones", "[kernel-models][memo]") {
  for (const char* file : kFitted) {
    const HardwareProfile hw = bundled(file);
    const KernelModels& km = *hw.kernel_models;
    for (const auto& [dtype, kernel] : km.gemm) {
      INFO(file << " " << model::to_string(dtype));
      const std::uint64_t key = memo_key(kernel, km.sms);
      int mismatches = 0;
      for (int pass = 0; pass < 2; ++pass)
        for (double m : {1.0, 3.0, 16.0, 100.0, 1024.0, 5000.0})
          for (double n : {128.0, 1000.0, 4096.0})
            for (double k : {128.0, 1000.0, 4096.0})
              for (double groups : {1.0, 8.0}) {
                const GemmShape s{m, n, k};
                if (grouped_gemm_seconds(kernel, km.sms, key, s, groups) != grouped_gemm_seconds(kernel, km.sms, s, groups))
                  ++mismatches;
              }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("a memo key names a kernel's parameters and SM count", "[kernel-models][memo]") {
  const HardwareProfile hw = bundled("h100-sxm");
  const KernelModels& km = *hw.kernel_models;
  const GemmKernel g = km.gemm.at(model::DType::bf16);
  const std::uint64_t key = memo_key(g, km.sms);
  CHECK(key != 0);
  const GemmKernel copy = g;
  CHECK(memo_key(copy, km.sms) == key);
  CHECK(memo_key(g, km.sms + 1) != key);
  GemmKernel slower = g;
  slower.latency_us += 1;
  const std::uint64_t other = memo_key(slower, km.sms);
  CHECK(other != key);
  // The memo answers each kernel with its own parameters, whatever it held for the other.
  const GemmShape s{64, 4096, 4096};
  CHECK(grouped_gemm_seconds(g, km.sms, key, s, 1) == gemm_seconds(g, km.sms, s));
  CHECK(grouped_gemm_seconds(slower, km.sms, other, s, 1) == gemm_seconds(slower, km.sms, s));
  CHECK(grouped_gemm_seconds(slower, km.sms, other, s, 1) > grouped_gemm_seconds(g, km.sms, key, s, 1));
  // A key is never reused: crowding the thread's few latest kernels out gives the first
  // one a new key, never another kernel's.
  for (int i = 0; i < 20; ++i) {
    GemmKernel crowd = g;
    crowd.k_step_ns += i + 1;
    CHECK(memo_key(crowd, km.sms) != key);
  }
  const std::uint64_t again = memo_key(g, km.sms);
  CHECK(again != other);
  CHECK(grouped_gemm_seconds(g, km.sms, again, s, 1) == gemm_seconds(g, km.sms, s));
  // Key 0 (a roofline built by hand) is looked up, not used as a key.
  CHECK(grouped_gemm_seconds(slower, km.sms, 0, s, 1) == gemm_seconds(slower, km.sms, s));
  const DecodeAttentionKernel& d = km.decode_attention.at(model::DType::bf16);
  CHECK(memo_key(d, km.sms) != 0);
  CHECK(memo_key(d, km.sms) == memo_key(DecodeAttentionKernel(d), km.sms));
}
