#pragma once
// Kernel models: the time of one GPU kernel as a function of its shape, with a few
// physical parameters per device and precision, fitted to measured kernels
// (`hdlab calibrate --from-kerneldb`, calibration/kernel_fit.hpp). A hardware profile that
// has them ("kernel_models") is timed by them instead of the roofline's flat efficiencies.
//
// GEMM C[m,n] = A[m,k] B[k,n] (A the activation, B the weight; e bytes per element of A
//   and B, 2-byte C):
//   The product is cut into tiles a x b of C (kGemmTiles: the threadblock tiles of the
//   CUTLASS/cuBLAS kernels, 128x256 down to 64x64) and its k steps are shared out one of
//   two ways. Data-parallel: each tile's k cut into s split-K slices (s = 1, 2, 4, 8, 16;
//   a slice keeps at least 128 of k), ctas = ceil(m/a) ceil(n/b) s blocks in waves of
//   `sms`; stream-K: one persistent block per SM, the tiles' k-iterations of 64 dealt out
//   evenly (no wave tail), partial tiles fixed up at the end. One step of k costs
//       step = k_step + 2 a b sms / F + (a + b) e sms / L
//   (a fixed per-step cost of the software pipeline, the tensor-core work at the
//   achievable peak F shared by the SMs, and the operand loads at the on-chip rate L):
//       data-parallel  compute = ceil(ctas / sms) max(k / s, 128) step     (s = 1: k)
//       stream-K       compute = ceil(ceil(m/a) ceil(n/b) ceil(k / 64) / sms) 64 step
//   Memory. The activation stays in L2 between calls while the call's footprint fits the
//   resident capacity l2 (the previous kernel wrote it; kerneldb reruns the same A), and is
//   read from there at B_l2 >= B; what does not fit comes from DRAM:
//       A = m k e, W = k n e, C = 2 m n;   A_dram = min(A, max(0, A + W + C - l2))
//       memory = (A_dram + W + (1 - eps) C + [s > 1] 4 m n s) / B + (A - A_dram) / B_l2
//   eps is the share of the output write that follows the main loop instead of
//   overlapping it (an epilogue after the last step of k): it is paid on its own,
//       t = latency + eps C / B
//           + min over tiles and schedules of [ (compute^q + memory^q)^(1/q) + fixed ]
//   fixed: split_k (the reduction kernel) for s > 1, stream_k (the fixup) for stream-K.
//   q > 1 blends the two bounds (q -> infinity: the plain roofline max). A precision whose
//   inputs are quantised on the fly (fp8 per-tensor: an amax pass and a cast of A) adds
//       quant_latency + quant_passes (2 m k) / B.
//   Monotone: every option's time grows with m, n and k (A_dram and A - A_dram weighted by
//   1/B >= 1/B_l2 never shrink), so their minimum does; far outside the tables a product
//   is compute-bound at the tiles' rate (never above F) or streams its operands from DRAM.
// Prefill attention (causal or windowed; TensorRT-LLM's context FMHA, FlashAttention-style):
//   two passes in sequence. A memory pass (RoPE and the KV-cache write) streams the rows:
//       memory = seqs (rows H hd 2 e / B  +  kv_positions G hd 2 kv_e / B_kv)
//   (queries in and outputs out at B, e = min(element, cache bytes): an fp8 cache's kernel
//   quantises its queries; K and V written to the cache and read back, in the cache's
//   precision kv_e, at B_kv; additive: the measured cost of more KV heads does not shrink
//   under a compute-bound kernel). Then the attention kernel: the units of work are
//   query blocks of T = kAttentionTileQ rows per (sequence, head), one at a time per SM,
//   handed out in launch order (each head's blocks shortest first). A unit costs its
//   kernel's fixed cost and the pairs it executes at one SM's share of the tensor rate:
//       pair   = (4 hd + softmax) sms / F                 (one SM's time for one pair)
//       edge   = 1 - longest_row_keys / kv_positions      (share of blocks at a window's edge)
//       mean   = unit + edge window + pairs / blocks pair  (blocks = ceil(rows / T))
//       long   = unit + [edge > 0] window + min(T, rows) min(kv_positions, longest_row_keys
//                + min(T, rows)) pair                     (the last block: its tiles' keys)
//       units  = seqs H blocks
//   The units run in waves over the SMs. With no more units than SMs the kernel takes the
//   longest; otherwise list scheduling: the SMs stay busy until the last unit starts, when
//   the others have on average R = E[d^2] / (2 E[d]) of theirs left (the mean residual),
//   durations taken as spread evenly about the mean up to the longest:
//       R      = min(long / 2, (mean^2 + (long - mean)^2 / 3) / (2 mean))
//       attend = units <= sms ? long : max(long, units mean / sms + long - R)
//   (uniform units: attend averages the whole-wave quantisation ceil(units / sms) long;
//   causal blocks: the last starts late, about 0.63 of it past the fluid finish).
//       t = latency + memory + attend
//   Each head dimension is its own compiled kernel: `latency` and `unit` are fitted per
//   head dimension; another head dimension takes the fixed costs of the next fitted one up
//   (the kernel it would be padded to; the largest beyond), its pairs at its own hd.
//   `window` is what a block at a window's edge costs more (its kernel's extra masking and
//   loop start). Precision: the kernel of the KV cache's precision when the cache is fp8
//   (TensorRT-LLM runs FP8 context attention then, Q quantised on the fly;
//   prefill_kernel_dtype), else the activations'.
//   Extrapolation: every term grows with seqs, heads, KV heads, rows and pairs (more units,
//   more bytes, longer units), so a larger shape is never faster (test_kernel_prefill
//   steps through every block and wave edge); far beyond the tables the time approaches
//   the pairs' work at F plus the bytes at B and B_kv, linear in each; the fixed costs
//   stay as fitted.
// Decode attention (one new row per sequence, KV cache read; TensorRT-LLM's two kernels,
//   decode_attention.cpp). Shape: seqs b, query heads H, KV heads G, head dim hd, rows
//   r = query_rows H / G sharing a KV head, `keys` cache entries read per sequence and KV
//   head, out of `context` positions (a sliding window reads fewer than it holds).
//   kv_row = 2 hd kv_bytes (a K and a V row), q_row = 2 hd element bytes (query and output).
//   Which kernel (TensorRT-LLM's dispatch, shape.kernel = automatic):
//     grouped (XQA) when 1 < r <= kGroupedQueryMaxRows, unless
//       grouped_min_block_factor f > 0 and f ceil(b) G max(1, floor(context / 128)) < sms
//       (TensorRT-LLM's "no gain" test: too few blocks even split); otherwise the one-row
//       kernel (masked MHA). f is fitted per cache precision from {0, 4}: the H100 bf16
//       tables follow TensorRT-LLM's 4, its fp8 (Hopper) kernel runs whatever the grid.
//     (Hopper's XQA stops at hd 256, where TensorRT-LLM falls back to masked MHA; Blackwell's
//     kernels take hd 512, the only tables that hold it: the head dim does not choose here.)
//     shape.kernel = one_row forces the one-row kernel (TensorRT-LLM before 0.8: no XQA).
//   One-row kernel: a block per (sequence, query row, split), each walking its KV head's keys
//       units  = b query_rows H;  loop = split_keys_x_head_dim / hd  (keys of one pass of a block)
//       splits = max(1, min(split_blocks_per_sm sms / units, keys / loop))
//       walk   = block_us + [context >= loop] split_us + (keys / splits kv_row + q_row) / block_gb_per_s
//       issue  = max(walk, units splits walk / (resident_blocks sms),     (waves of resident blocks)
//                    units keys kv_row / l2_gb_per_s)      (the group's blocks share a KV head via L2)
//   Grouped kernel: a block per (sequence, KV head, split) serving the r rows; TensorRT-LLM
//     sets the splits from the span (kXqaKeysPerSplit 128 keys a split, at most sqrt(8 x
//     that) splits, at most kXqaTargetWaves waves), counted continuously here:
//       span   = context (splits_span_context: Hopper's XQA) or keys (the window alone:
//                Blackwell's tables; the fit chooses)
//       units  = b G;  m = span / 128;  splits = max(1, min(m, sqrt(8 m), 8 sms / units))
//       walk   = block_us + r row_us + (max(min(span / splits, keys), min_keys) kv_row
//                + r q_row) / block_gb_per_s
//       issue  = max(walk, units (splits (block_us + r row_us) + (max(keys, min_keys splits)
//                kv_row + splits r q_row) / block_gb_per_s) / (resident_blocks sms))
//     When the splits span a windowed layer's whole context, the blocks past the window cost
//     their fixed part only and the longest block reads at most the window.
//   Both: bytes = b (G keys kv_row + query_rows H q_row); compute = 4 b query_rows H hd keys / F
//       t = latency + (dram^q + max(issue, compute)^q)^(1/q),  dram = bytes / B
//   The grouped kernel is compiled per head dimension, with its own fixed cost: where
//   `grouped.head_dims` is fitted, its latency is that of the next fitted head dimension up
//   (the largest beyond), as for prefill; the one-row kernel's is `latency`. (H100 fp8: the
//   smallest grouped calls take 6 us at hd 128 and 256 but 8 us at hd 64.)
//   Extrapolation: every term grows with b, keys and context (splits never fall with the
//   context, never rise with b; a block's keys never fall), so within a kernel more
//   sequences or a longer context never take less time. Where the dispatch switches from
//   the one-row to the grouped kernel (a larger b or context) the grouped time is raised to
//   the largest one-row time of any smaller shape the one-row kernel would run (the
//   integer batches 1 .. ceil(b), each at the longest context the test leaves it), so the
//   whole model is monotone too; the measured switch is faster. Beyond the tables (b 2048,
//   131072 keys) the splits stay capped and the time grows linearly with the bytes.
// Collectives (one node; p GPUs; S bytes per GPU): NCCL picks the fastest of its
//   protocols, each a latency plus a bus bandwidth, so
//       t = min over regimes r of (alpha_r + busbytes(S) / beta_r)
//   busbytes = 2 (p-1)/p S for an all-reduce, (p-1)/p S for all-gather, reduce-scatter
//   and all-to-all. One regime list per op and GPU count; another p extrapolates from
//   the nearest fitted count (latencies scaled by (p-1)/(p0-1), bandwidths kept).
// Grouped GEMM (the routed experts: one launch over every expert's product): the blocks
//   and bytes of all groups together, one latency.
// An MoE block on one device (moe_seconds): the routed tokens permuted to their experts,
//   the gate/up and the down projections as two grouped GEMMs over the experts hit, the
//   activation, and the weighted un-permute; every element-wise step a streaming kernel.
//   Plus the layer's own costs where fitted (MoeLayerKernel, per precision of the
//   products): the routing's top-k, the sort of the token copies by expert and the final
//   combine run as a chain of short kernels over every token the device routes,
//       t_layer = latency + tokens D e / token_gb_per_s
//   (tokens: the layer's tokens before top-k; an expert-parallel rank routes all of its
//   own). Fitted on moe_perf against the composition above (calibration's fit_moe_layer:
//   balanced-routing rows, else power-law ones with their skew modelled), so it
//   extrapolates as a constant plus a stream.
// Element-wise and normalisation kernels: bytes / stream bandwidth + a latency.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/model/backbone.hpp"

namespace hdlab::simulator {

struct GemmTile {
  double a = 0, b = 0;  // rows of A (m) and columns of B (n) one threadblock computes
};
// The threadblock tiles of the CUTLASS/cuBLAS kernel families (software, not device data);
// the model takes the fastest, as cuBLAS's heuristic aims to.
extern const std::array<GemmTile, 6> kGemmTiles;
inline constexpr double kAttentionTileQ = 128;  // query rows per FlashAttention block
// Query rows sharing one KV head that TensorRT-LLM's grouped-query decode kernel (XQA) takes
// in one block; a larger group falls back to the one-row kernel (kerneldb: H/G = 64 costs
// what MHA with 64 heads costs, H/G = 32 a tenth of it).
inline constexpr double kGroupedQueryMaxRows = 32;
// TensorRT-LLM's XQA split heuristic (decoderXQAConstants.h: kMinHistoryTokensPerBlock,
// kTargetWaveFactor; software constants, not device data).
inline constexpr double kXqaKeysPerSplit = 128;
inline constexpr double kXqaTargetWaves = 8;

struct GemmKernel {
  double tensor_tflop_per_s = 0;  // F
  double operand_tb_per_s = 0;    // L
  double memory_gb_per_s = 0;     // B
  double latency_us = 0;
  double k_step_ns = 0;
  double split_k_us = 0;
  double stream_k_us = 0;         // the fixup of a stream-K schedule
  double epilogue_share = 0;      // eps, 0..1
  double l2_resident_mb = 0;      // l2: the footprint under which A stays in L2 between calls
  double l2_gb_per_s = 0;         // B_l2 (>= B)
  double overlap = 4;             // q
  double quant_latency_us = 0;    // 0 for precisions read as stored
  double quant_passes = 0;
  double element_bytes = 2;       // of A and B
  bool operator==(const GemmKernel&) const = default;
};

// The fixed costs of the prefill kernel compiled for one head dimension.
struct PrefillHeadDim {
  double head_dim = 0;
  double latency_us = 0;  // per call (both passes' launches)
  double unit_us = 0;     // per query block (its prologue and epilogue)
  bool operator==(const PrefillHeadDim&) const = default;
};

struct PrefillAttentionKernel {
  double tensor_tflop_per_s = 0;  // F
  double softmax_flops = 0;       // per (pair, head), in tensor-FLOP units: the non-matrix work
  double memory_gb_per_s = 0;     // B: queries read, outputs written
  double kv_gb_per_s = 0;         // B_kv: K and V written to the cache and read back
  double window_us = 0;           // more per query block at a window's edge
  std::vector<PrefillHeadDim> head_dims;  // by increasing head_dim, at least one
  bool operator==(const PrefillAttentionKernel&) const = default;
};
// The fixed costs of head dimension `hd`: the next fitted one up, else the largest.
const PrefillHeadDim& prefill_head_dim(const PrefillAttentionKernel& a, double hd);
// The precision of the prefill kernel: fp8 when either the activations or the KV cache
// are fp8 (an fp8 cache makes TensorRT-LLM run FP8 context attention), else the activations'.
model::DType prefill_kernel_dtype(model::DType activations, model::DType kv_cache);

// The one-row decode kernel (masked MHA): a block per query row and split.
struct DecodeOneRow {
  double block_us = 0;               // fixed cost of one block
  double block_gb_per_s = 0;         // what one block streams as it walks its keys
  double resident_blocks = 0;        // blocks one SM runs at once
  double split_blocks_per_sm = 0;    // the grid the split-KV heuristic aims for, blocks per SM
  double split_keys_x_head_dim = 0;  // keys one pass of a block takes, times hd (no split below)
  double split_us = 0;               // the split-KV variant's extra fixed cost (its reduction)
  double l2_gb_per_s = 0;            // what all blocks read from L2 (a KV head shared by a group)
  bool operator==(const DecodeOneRow&) const = default;
};
// The fixed cost per call of the grouped decode kernel compiled for one head dimension.
struct DecodeHeadDim {
  double head_dim = 0;
  double latency_us = 0;
  bool operator==(const DecodeHeadDim&) const = default;
};
// The grouped-query decode kernel (XQA): a block per KV head and split for all its rows.
struct DecodeGrouped {
  double block_us = 0;        // fixed cost of one block
  double row_us = 0;          // and of each query row it serves
  double block_gb_per_s = 0;  // what one block streams
  double resident_blocks = 0;
  double min_keys = 0;        // keys a block costs at least (its first tile)
  bool splits_span_context = true;  // the splits cover the whole context (Hopper's XQA), or the keys read
  std::vector<DecodeHeadDim> head_dims;  // by increasing head_dim; none: the kernel's latency
  bool operator==(const DecodeGrouped&) const = default;
};

struct DecodeAttentionKernel {
  double memory_gb_per_s = 0;           // B
  double grouped_min_block_factor = 0;  // f: the dispatch's test (0: grouped whatever the grid)
  DecodeOneRow one_row;
  DecodeGrouped grouped;
  double tensor_tflop_per_s = 0;        // F (datasheet: the tables time one query row)
  double latency_us = 0;
  double overlap = 4;
  bool operator==(const DecodeAttentionKernel&) const = default;
};

struct CollectiveRegime {
  double alpha_us = 0;
  double bus_gb_per_s = 0;
  bool operator==(const CollectiveRegime&) const = default;
};
enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all };
inline constexpr int collective_count = 4;
const char* to_string(Collective c);

struct VectorKernel {
  double memory_gb_per_s = 0;
  double latency_us = 0;
  bool operator==(const VectorKernel&) const = default;
};

// An MoE layer's costs beyond its products and element-wise steps (see above).
struct MoeLayerKernel {
  double latency_us = 0;      // the routing, sort and combine kernels' fixed cost, per layer call
  double token_gb_per_s = 0;  // the rate they stream the routed tokens' rows [tokens, D] at
  bool operator==(const MoeLayerKernel&) const = default;
};

// Shapes the models time (per device, after sharding).
struct GemmShape {
  double m = 0, n = 0, k = 0;
};
struct PrefillAttentionShape {
  double seqs = 0, heads = 0, kv_heads = 0, head_dim = 0;
  double rows = 0;         // query rows per sequence
  double pairs = 0;        // executed (query, key) pairs per sequence and head
  double longest_row_keys = 0;  // keys the last query row sees (the longest unit's walk)
  double kv_positions = 0; // K/V rows per sequence (read once, and written to the cache)
  double element_bytes = 2, kv_bytes = 2;
};
// Which decode kernel times a step: TensorRT-LLM's dispatch, or the one-row kernel forced
// (TensorRT-LLM before v0.8 had no XQA: a GQA model decoded with masked MHA, one block per
// query head).
enum class DecodeKernel { automatic, one_row };
struct DecodeAttentionShape {
  double seqs = 0, heads = 0, kv_heads = 0, head_dim = 0;
  double query_rows = 1;   // rows per sequence in the step (HD: n; PHD: K)
  double keys = 0;         // cache entries read per sequence and KV head
  double context = 0;      // positions the cache holds per sequence (0: = keys; more under a window)
  double kv_bytes = 2, element_bytes = 2;
  DecodeKernel kernel = DecodeKernel::automatic;
};

struct KernelModels {
  std::string device;    // the kerneldb folder fitted on ("h100_sxm"), or the derivation
  double sms = 0;        // streaming multiprocessors (datasheet)
  std::map<model::DType, GemmKernel> gemm;
  std::map<model::DType, PrefillAttentionKernel> prefill_attention;  // by prefill_kernel_dtype
  std::map<model::DType, DecodeAttentionKernel> decode_attention;    // by KV-cache dtype
  // op -> GPU count -> regimes (one node)
  std::array<std::map<int, std::vector<CollectiveRegime>>, collective_count> collectives;
  std::map<int, std::vector<CollectiveRegime>> custom_all_reduce;  // TensorRT-LLM's, inference
  VectorKernel vector;
  std::map<model::DType, MoeLayerKernel> moe_layer;  // by the products' precision; where fitted
  nlohmann::json fit;    // provenance and per-class error figures, kept as written
  bool operator==(const KernelModels&) const = default;
};

double gemm_seconds(const GemmKernel& g, double sms, const GemmShape& s);
// `groups` products of one shape in one launch.
double grouped_gemm_seconds(const GemmKernel& g, double sms, const GemmShape& s, double groups);
double prefill_attention_seconds(const PrefillAttentionKernel& a, double sms, const PrefillAttentionShape& s);
double decode_attention_seconds(const DecodeAttentionKernel& a, double sms, const DecodeAttentionShape& s);
// Bus bytes of a collective of S bytes per GPU over p GPUs.
double bus_bytes(Collective c, double bytes, double gpus);
double collective_seconds(const std::vector<CollectiveRegime>& regimes, Collective c, double bytes, double gpus);
// Regimes for p GPUs: the fitted list of that count, else the nearest count's with
// latencies scaled by (p-1)/(p0-1). Empty when the op has no fitted count at all.
std::vector<CollectiveRegime> regimes_for(const std::map<int, std::vector<CollectiveRegime>>& by_gpus, double gpus);
double vector_seconds(const VectorKernel& v, double bytes);
// The MoE layer's own cost for `token_bytes` = tokens x D x element bytes routed on a device.
double moe_layer_seconds(const MoeLayerKernel& m, double token_bytes);

// Routed experts on one device (after tensor and expert parallel sharding).
struct MoeShape {
  double tokens = 0;          // token copies routed to this device's experts (tokens x top-k / ep)
  double layer_tokens = 0;    // tokens the device routes (before top-k)
  double experts_hit = 0;     // this device's experts that receive at least one token
  double hidden = 0;          // D
  double inter = 0;           // expert width on this device (Fe / tp)
  bool gated = true;          // SwiGLU (gate and up) or a plain up projection
  double element_bytes = 2;
};
// ConfigError-free: the caller picks the GEMM kernel of the model's precision and, where
// fitted, the layer kernel of it (null: the composition alone).
double moe_seconds(const GemmKernel& g, const VectorKernel& v, double sms, const MoeShape& s,
                   const MoeLayerKernel* layer = nullptr);

// The models' JSON form inside a hardware profile ("kernel_models"); every key checked,
// errors name the JSON pointer.
KernelModels parse_kernel_models(const nlohmann::json& j, const std::string& pointer);
nlohmann::json to_json(const KernelModels& k);

}  // namespace hdlab::simulator
