#pragma once
// kerneldb rows as the shapes the kernel models time (shared by the fit and the
// validation, so both read a row the same way).
#include <optional>
#include <string>

#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/model/backbone.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/kernel_models.hpp"

namespace hdlab::calibration::detail {

// The precision hdlab models for a kerneldb precision name: bfloat16 -> bf16, float16 /
// half -> fp16, fp8 -> fp8 (per-tensor scaling); nullopt for those it does not model
// (fp8_block, nvfp4, int8 weight-only, ...).
std::optional<model::DType> model_dtype(const std::string& kerneldb_name);
// Bytes per activation element of a kerneldb precision name (kerneldb.hpp's precision_size).
double element_bytes(const std::string& kerneldb_name);

simulator::GemmShape gemm_shape(const GemmRow& r);
// Causal (window 0) or windowed prefill of isl tokens per sequence; executed pairs at
// 128 x 128 tiles, as the cost model counts them (model::visible_tiles).
simulator::PrefillAttentionShape prefill_shape(const AttentionRow& r);
// One decode step: context = isl + step; keys = the context, limited by the window.
simulator::DecodeAttentionShape decode_shape(const AttentionRow& r);
// A decode row that cannot be one step reading its cache: the K and V it must read (every
// sequence's keys, each KV head, K and V) exceed the L2, so no repeat of the timed call
// finds them there, and its time would read them faster than the device's memory
// bandwidth (the datasheet's, GB/s). aiconfigurator's A100 table has 351 such rows, up
// to 1.7x the A100's 2.0 TB/s (profiles/kerneldb/README.md); the H100 and B200 tables
// none. The fit leaves them out and the validation reports them as a class of their own.
bool reads_cache_above_dram(const AttentionRow& r, double memory_gb_per_s, double l2_cache_mb);
// The same test on a hardware profile's datasheet figures (no L2 size given: none).
bool reads_cache_above_dram(const AttentionRow& r, const simulator::HardwareProfile& device);
// all_reduce, all_gather, reduce_scatter, alltoall; nullopt for another name.
std::optional<simulator::Collective> collective_of(const std::string& op);
// One rank's share of a whole MoE layer: num_tokens tokens enter the expert-parallel
// group (the latencies fall as 1/ep at large counts, as that reading implies); this rank
// holds experts / ep experts of width inter / tp. Balanced rows: each token picks top-k
// of the experts evenly. power_law_<alpha> rows: the collector's skewed load on the rank
// it measures (kerneldb.hpp's power_law_rank_load).
simulator::MoeShape moe_shape(const MoeRow& r);



}  // namespace hdlab::calibration::detail
