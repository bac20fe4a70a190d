#pragma once
// kerneldb: measured GPU kernel timings made elsewhere (NVIDIA's aiconfigurator data,
// Apache-2.0; see profiles/kerneldb/NOTICE), read into plain rows. One folder per device
// (h100_sxm, a100_sxm, b200_sxm), one table per file; a table is NAME.csv or NAME.csv.gz
// (the bundled copy in profiles/kerneldb/ is gzip-compressed). Every latency is converted
// from the files' milliseconds to seconds here, once. Columns are found by their header
// name; columns no row kind uses (framework, version, beam_width = 1, ...) are ignored.
//
// What each table's columns mean (checked against the values; the assumptions are stated
// where the files do not say; profiles/kerneldb/README.md has the checks):
//   gemm_perf           one C[m,n] = A[m,k] B[k,n]; gemm_dtype names the input precision
//   context_attention   causal prefill attention over batch_size sequences of isl tokens
//                       (one layer, all heads); window_size 0 = full causal
//   generation_attention one decode step: batch_size sequences each appending 1 token to
//                       a cache; the keys read per sequence are isl + step (assumed: the
//                       cache holds the isl prompt tokens plus `step` generated ones; isl
//                       is 1 in every bundled row, and the latencies rise with isl + step
//                       as that reading implies)
//   nccl_perf           op_name over num_gpus GPUs of one node; message_size in elements
//                       of nccl_dtype (half: 2 bytes, int8: 1): nccl-tests' size divided
//                       by the element size, i.e. the whole buffer each GPU holds (for
//                       all_gather the gathered output, for reduce_scatter the input)
//   custom_allreduce    TensorRT-LLM's one-node all-reduce; message_size in elements of
//                       allreduce_dtype per GPU (where bandwidth-bound, its times match
//                       nccl all_reduce half at equal message_size)
//   moe_perf            one whole MoE layer (routing, both expert GEMMs, activation) on
//                       num_tokens tokens of one rank's share (moe_tp_size, moe_ep_size)
//
// Reading errors (a missing gemm table, a missing column, a value that is not a number
// or out of its range, an unknown precision, an empty table, a truncated or corrupt gzip
// file, a table over 256 MiB uncompressed) are ConfigErrors whose place is "FILE:LINE"
// (1-based; the header is line 1) and whose reason names the column.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hdlab::calibration {

// Bytes per element of a precision the tables name, for the operand a kernel streams as
// activations (a GEMM's A, attention's Q/K/V, a collective's message) and the one it holds
// as weights (a GEMM's B, the experts) or as cache (kv_cache_dtype). Block-scaled formats
// count their element bits only: the scales (1/16 to 1/32 of a byte per element, or less)
// are left out. The known names are the ones the bundled tables use:
//   bfloat16 2/2, half 2/2, int8 1/1, fp8 1/1, fp8_block 1/1, nvfp4 0.5/0.5,
//   sq (SmoothQuant W8A8) 1/1, int8_wo 2/1 and int4_wo 2/0.5 (weight-only: bf16 activations),
//   w4a16_mxfp4 2/0.5, w4a8_mxfp4_mxfp8 1/0.5 (activation/weight).
// A table naming another precision is refused; add it here when a new file brings one.
struct PrecisionSize {
  double activation_bytes = 0;
  double weight_bytes = 0;
};
std::optional<PrecisionSize> precision_size(std::string_view name);
std::vector<std::string> known_precisions();  // in the order above

struct GemmRow {
  std::string dtype;  // as in the file: "bfloat16", "fp8", ...
  double m = 0, n = 0, k = 0;
  double seconds = 0;
  std::int64_t line = 0;  // 1-based line in its file (the header is line 1)
  bool operator==(const GemmRow&) const = default;
};

struct AttentionRow {
  double batch = 0;
  double isl = 0;         // prompt tokens per sequence
  double step = 0;        // generation: tokens generated so far (context = isl + step)
  double heads = 0, kv_heads = 0, head_dim = 0;
  double window = 0;      // 0: no sliding window
  std::string attn_dtype, kv_dtype;
  double seconds = 0;
  std::int64_t line = 0;
  bool operator==(const AttentionRow&) const = default;
};

struct CollectiveRow {
  std::string op;          // all_reduce, all_gather, reduce_scatter, alltoall
  std::string library;     // "nccl" or "custom" (TensorRT-LLM's one-node all-reduce)
  std::string dtype;       // as in the file: half, int8, bfloat16, ...
  double gpus = 0;
  double elements = 0;     // message size per GPU, in elements of dtype (see nccl_perf above)
  double bytes = 0;        // elements x the dtype's size (precision_size's activation_bytes)
  double seconds = 0;
  std::int64_t line = 0;
  bool operator==(const CollectiveRow&) const = default;
};

// The most experts a moe_perf row may name (the largest bundled: 512); the reader also
// requires moe_ep_size to divide num_experts.
inline constexpr double kMaxExperts = 65536;
struct MoeRow {
  std::string dtype;         // moe_dtype
  std::string kernel;        // kernel_source
  std::string distribution;  // balanced, power_law_1.01, ...
  double tokens = 0, hidden = 0, inter = 0, topk = 0, experts = 0, tp = 1, ep = 1;
  double seconds = 0;
  std::int64_t line = 0;
  bool operator==(const MoeRow&) const = default;
};

// What every linear-attention layer table (gdn_perf, mamba2_perf) gives of a row: which
// kernel in which phase for which model's layer, the batch of sequences and their length,
// the hidden size and the conv's taps, the time.
struct LinearLayerRow {
  std::string kernel, phase, model;
  double batch = 0, seq_len = 0, d_model = 0, d_conv = 0;
  double seconds = 0;
  std::int64_t line = 0;
};

// gdn_perf: one Gated DeltaNet kernel of one layer (kernel_source: causal_conv1d_fn and
// chunk_gated_delta_rule in the context phase over batch_size sequences of seq_len tokens;
// causal_conv1d_update and fused_recurrent_gated_delta_rule in the generation phase, one
// token per sequence), for the head layout of model_name.
struct GdnRow : LinearLayerRow {
  double k_heads = 0, k_dim = 0, v_heads = 0, v_dim = 0;
};

// mamba2_perf: one Mamba-2 kernel of one layer (kernel_source: causal_conv1d_fn in the
// context phase over batch_size sequences of seq_len tokens, causal_conv1d_update in the
// generation phase, one token per sequence; the bundled tables hold only these two conv
// kernels, no SSD scan), for the layer sizes of model_name: d_model the hidden size, nheads
// x head_dim the inner width, n_groups x d_state each of B and C, d_conv taps.
struct Mamba2Row : LinearLayerRow {
  double d_state = 0, heads = 0, head_dim = 0, groups = 0, chunk = 0;
};

// One device's tables. A table absent from the folder is empty (a device may lack some);
// gemm is required.
struct KernelDb {
  std::string device;      // folder name: "h100_sxm"
  std::string device_name; // the files' device column: "NVIDIA H100 80GB HBM3"
  std::string folder;      // where it was read from
  std::map<std::string, std::string> files;  // table ("gemm_perf") -> the file read
  std::vector<GemmRow> gemm;
  std::vector<AttentionRow> context_attention, generation_attention;
  std::vector<CollectiveRow> collectives;  // nccl_perf and custom_allreduce_perf
  std::vector<MoeRow> moe;
  std::vector<GdnRow> gdn;  // gdn_perf (optional table)
  std::vector<Mamba2Row> mamba2;  // mamba2_perf (optional table)
};

// Reads DIR/DEVICE/*.csv[.gz]: gemm_perf (required), context_attention_perf,
// generation_attention_perf, nccl_perf, custom_allreduce_perf, moe_perf, gdn_perf,
// mamba2_perf (a design module reads its own tables: calibration/designs/). Every row of
// every table must name the same device. ConfigError naming the file, line and column on
// bad input; a folder holding both NAME.csv and NAME.csv.gz is refused (which is meant?).
KernelDb read_kerneldb(const std::string& dir, const std::string& device);

// The fixed, documented 80/20 split: a row is held out when a hash of its shape (the
// columns that describe the problem, never the latency, the precision or a repeat) falls
// in the held-out fifth, so every precision and every repeat of a held-out shape is held
// out together. Deterministic across runs and machines.
//
// The hash is 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3) over
// the shape's integers in this order, each as 8 bytes of a little-endian int64:
//   gemm        m, n, k
//   attention   batch, isl, step, heads, kv_heads, head_dim, window (both tables)
//   collective  the bytes of `op` as written ("all_reduce"), then gpus, elements
//               (so nccl and custom all-reduces of one size fall together)
//   moe         tokens, hidden, inter, topk, experts, tp, ep (every distribution and
//               kernel of a shape falls together)
// and the row is held out when the hash is in the lowest fifth of its range
// (h <= 2^64 / 5, i.e. h <= 0x3333333333333333): FNV-1a's high bits depend on every
// input byte, its low bits only on the low bits of the input.
bool held_out(const GemmRow& r);
bool held_out(const AttentionRow& r);
bool held_out(const CollectiveRow& r);
bool held_out(const MoeRow& r);

// The exponent of a moe_perf "power_law_<alpha>" distribution (alpha > 0, not 1); nullopt
// for another name.
std::optional<double> power_law_alpha(const std::string& distribution);

// The load of the rank aiconfigurator's MoE collector times under power-law routing
// (collect_moe.py's power_law_logits_v3, documented in its power-law note): each
// expert's load is drawn from a power law of exponent alpha and scaled to T k copies,
// then the expert-parallel group (E / ep consecutive experts) with the most copies is
// moved to rank 0, the rank timed; the collector averages five draws. Here: the mean over
// kPowerLawDraws draws of that group's copies and of its experts with at least one copy,
// from a generator seeded by the arguments (the same answer every run). Within the rank
// the copies are taken as spread evenly over the experts hit (the grouped GEMM's tiles
// of a skewed split are not modelled).
struct RankLoad {
  double copies = 0, experts_hit = 0;
};
inline constexpr int kPowerLawDraws = 32;
RankLoad power_law_rank_load(double tokens, double experts, double topk, double ep, double alpha);

}  // namespace hdlab::calibration
