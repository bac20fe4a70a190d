// predict_kerneldb: every kerneldb row the profile's kernel models can time, predicted.
// Rows of precisions hdlab does not model (fp8_block, nvfp4, weight-only int8/int4, ...)
// are left out and counted in KernelValidation::skipped by summarize's caller.
#include <cmath>
#include <fmt/format.h>

#include "hdlab/calibration/kernel_validation.hpp"
#include "hdlab/model/error.hpp"
#include "kernel_shapes.hpp"

namespace hdlab::calibration {

using simulator::KernelModels;

namespace {

std::string short_name(model::DType d) { return model::to_string(d); }

std::string source(const KernelDb& db, const char* table, std::int64_t line) {
  auto it = db.files.find(table);
  return (it != db.files.end() ? it->second : std::string(table)) + ":" + std::to_string(line);
}

void predict_gemm(const KernelDb& db, const KernelModels& k, std::vector<KernelCase>& out) {
  for (const GemmRow& r : db.gemm) {
    const auto d = detail::model_dtype(r.dtype);
    if (!d || !k.gemm.count(*d)) continue;
    out.push_back({"gemm", short_name(*d), fmt::format("m={:g} n={:g} k={:g}", r.m, r.n, r.k),
                   source(db, "gemm_perf", r.line), r.seconds,
                   simulator::gemm_seconds(k.gemm.at(*d), k.sms, detail::gemm_shape(r)), held_out(r)});
  }
}

// The decode rows' class: windowed rows apart (their kernels differ), and rows faster than
// a step's read of its cache can be on the profile's device (kernel_shapes.hpp).
std::string decode_class(const AttentionRow& r, const simulator::HardwareProfile& device) {
  if (detail::reads_cache_above_dram(r, device)) return "decode_attention (faster than DRAM)";
  return r.window > 0 ? "decode_attention (sliding window)" : "decode_attention";
}

void predict_attention(const KernelDb& db, const simulator::HardwareProfile& device, std::vector<KernelCase>& out) {
  const KernelModels& k = *device.kernel_models;
  for (const AttentionRow& r : db.context_attention) {
    const auto d = detail::model_dtype(r.attn_dtype), kv = detail::model_dtype(r.kv_dtype);
    if (!d || !kv) continue;
    const model::DType kernel = simulator::prefill_kernel_dtype(*d, *kv);
    if (!k.prefill_attention.count(kernel)) continue;
    const std::string precision = *d == *kv ? short_name(*d) : short_name(*d) + "/kv " + short_name(*kv);
    // Sliding-window rows apart: their kernels differ from the full-attention ones.
    out.push_back({r.window > 0 ? "prefill_attention (sliding window)" : "prefill_attention", precision,
                   fmt::format("b={:g} s={:g} H={:g} G={:g} hd={:g} w={:g}", r.batch, r.isl, r.heads, r.kv_heads,
                               r.head_dim, r.window),
                   source(db, "context_attention_perf", r.line), r.seconds,
                   simulator::prefill_attention_seconds(k.prefill_attention.at(kernel), k.sms,
                                                        detail::prefill_shape(r)),
                   held_out(r)});
  }
  for (const AttentionRow& r : db.generation_attention) {
    const auto kv = detail::model_dtype(r.kv_dtype);
    if (!kv || !k.decode_attention.count(*kv)) continue;
    out.push_back({decode_class(r, device), "kv " + short_name(*kv),
                   fmt::format("b={:g} ctx={:g} H={:g} G={:g} hd={:g} w={:g}", r.batch, r.isl + r.step, r.heads,
                               r.kv_heads, r.head_dim, r.window),
                   source(db, "generation_attention_perf", r.line), r.seconds,
                   simulator::decode_attention_seconds(k.decode_attention.at(*kv), k.sms, detail::decode_shape(r)),
                   held_out(r)});
  }
}

void predict_collectives(const KernelDb& db, const KernelModels& k, std::vector<KernelCase>& out) {
  for (const CollectiveRow& r : db.collectives) {
    const auto op = detail::collective_of(r.op);
    if (!op) continue;
    const bool custom = r.library == "custom";
    const auto& by_gpus = custom ? k.custom_all_reduce : k.collectives[static_cast<std::size_t>(*op)];
    const auto regimes = simulator::regimes_for(by_gpus, r.gpus);
    if (regimes.empty()) continue;
    out.push_back({std::string(simulator::to_string(*op)) + (custom ? " (custom)" : ""), r.dtype,
                   fmt::format("gpus={:g} bytes={:g}", r.gpus, r.bytes),
                   source(db, custom ? "custom_allreduce_perf" : "nccl_perf", r.line), r.seconds,
                   simulator::collective_seconds(regimes, *op, r.bytes, r.gpus), held_out(r)});
  }
}

void predict_moe(const KernelDb& db, const KernelModels& k, std::vector<KernelCase>& out) {
  for (const MoeRow& r : db.moe) {
    const auto d = detail::model_dtype(r.dtype);
    if (!d || !k.gemm.count(*d)) continue;
    const auto layer = k.moe_layer.find(*d);
    // The cost model routes tokens evenly; power-law rows are reported as their own class.
    const std::string cls = r.distribution == "balanced" ? "moe" : "moe (" + r.distribution + " routing)";
    out.push_back({cls, short_name(*d),
                   fmt::format("T={:g} D={:g} F={:g} k={:g} E={:g} tp={:g} ep={:g}", r.tokens, r.hidden, r.inter,
                               r.topk, r.experts, r.tp, r.ep),
                   source(db, "moe_perf", r.line), r.seconds,
                   simulator::moe_seconds(k.gemm.at(*d), k.vector, k.sms, detail::moe_shape(r),
                                          layer == k.moe_layer.end() ? nullptr : &layer->second),
                   held_out(r)});
  }
}

}  // namespace

std::vector<KernelCase> predict_kerneldb(const KernelDb& db, const simulator::HardwareProfile& profile) {
  if (!profile.kernel_models)
    throw model::ConfigError("--hw", profile.name + " has no kernel_models: fit one with `hdlab calibrate --from-kerneldb`");
  const KernelModels& k = *profile.kernel_models;
  std::vector<KernelCase> out;
  predict_gemm(db, k, out);
  predict_attention(db, profile, out);
  predict_collectives(db, k, out);
  predict_moe(db, k, out);
  return out;
}

}  // namespace hdlab::calibration
