// Kernel models: evaluation; the formulas are in kernel_models.hpp, the JSON form in
// kernel_models_io.cpp.
#include "hdlab/simulator/kernel_models.hpp"

#include "kernel_memo.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace hdlab::simulator {

// The threadblock tiles (rows of C x columns of C, both orientations) of the CUTLASS and
// cuBLAS kernels for Ampere, Hopper and Blackwell. Narrower tiles (32 wide) exist too, but
// adding them makes every device's held-out fit worse: cuBLAS does not pick them where the
// model, free to take any, would (kerneldb, all three devices).
const std::array<GemmTile, 6> kGemmTiles = {{{128, 256}, {256, 128}, {128, 128}, {64, 128}, {128, 64}, {64, 64}}};

namespace {

constexpr double kMinSplitK = 128;  // a split-K slice keeps at least this many steps of k
constexpr double kSplits[] = {1, 2, 4, 8, 16};
constexpr double kStreamKStep = 64;  // the k-iteration a stream-K schedule deals out

// (x^q + y^q)^(1/q) for x, y >= 0: the larger, raised by the smaller's share.
double blend(double x, double y, double q) {
  const double hi = std::max(x, y), lo = std::min(x, y);
  if (hi <= 0) return 0;
  return hi * std::pow(1 + std::pow(lo / hi, q), 1 / q);
}

}  // namespace

const char* to_string(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_to_all: return "all_to_all";
  }
  return "all_reduce";
}

namespace {

double gemm_search(const GemmKernel& g, double sms, const GemmShape& s, double groups) {
  const double F = g.tensor_tflop_per_s * 1e12, L = g.operand_tb_per_s * 1e12, B = g.memory_gb_per_s * 1e9;
  const double e = g.element_bytes;
  // Per tile: the blocks along m and n over every group, and the cost of one step of k.
  std::array<double, kGemmTiles.size()> blocks{}, step{};
  double stream_k = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < kGemmTiles.size(); ++i) {
    const GemmTile& t = kGemmTiles[i];
    blocks[i] = groups * std::ceil(s.m / t.a) * std::ceil(s.n / t.b);
    step[i] = g.k_step_ns * 1e-9 + 2 * t.a * t.b * sms / F + (t.a + t.b) * e * sms / L;
    stream_k = std::min(stream_k, std::ceil(blocks[i] * std::ceil(s.k / kStreamKStep) / sms) * kStreamKStep * step[i]);
  }
  // DRAM and L2 traffic (kernel_models.hpp): the activation A from L2 while the call's
  // footprint fits the resident capacity, the part of it that does not from DRAM.
  const double a_bytes = groups * s.m * s.k * e, w_bytes = groups * s.k * s.n * e, c_bytes = groups * 2 * s.m * s.n;
  const double a_dram = std::min(a_bytes, std::max(0.0, a_bytes + w_bytes + c_bytes - g.l2_resident_mb * 1e6));
  const double traffic = (a_dram + w_bytes + (1 - g.epilogue_share) * c_bytes) / B +
                         (a_bytes > a_dram ? (a_bytes - a_dram) / (g.l2_gb_per_s * 1e9) : 0);
  // The fastest option; one whose larger bound alone cannot beat it is not blended (the
  // blend is never below the larger bound), which skips most of the pow calls.
  double best = std::numeric_limits<double>::infinity();
  auto consider = [&](double compute, double memory, double fixed) {
    if (std::max(compute, memory) + fixed < best) best = std::min(best, blend(compute, memory, g.overlap) + fixed);
  };
  for (double split : kSplits) {
    // Every split is on offer at every k (a slice walks at least kMinSplitK of it), so
    // a longer k never opens a faster option: the time never falls as k grows.
    const double slice = split > 1 ? std::max(s.k / split, kMinSplitK) : s.k;
    double compute = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < kGemmTiles.size(); ++i)
      compute = std::min(compute, std::ceil(blocks[i] * split / sms) * slice * step[i]);
    const double memory = traffic + (split > 1 ? groups * 4 * s.m * s.n * split / B : 0);  // fp32 partials
    consider(compute, memory, split > 1 ? g.split_k_us * 1e-6 : 0);
    if (split == 1) consider(stream_k, traffic, g.stream_k_us * 1e-6);
  }
  double t = g.latency_us * 1e-6 + g.epilogue_share * c_bytes / B + best;
  if (g.quant_passes > 0) t += g.quant_latency_us * 1e-6 + g.quant_passes * 2 * groups * s.m * s.k / B;
  return t;
}

// The few kernel models a thread used last, with their keys (kernel_memo.hpp). An
// evaluation builds its roofline, and so looks a kernel up here, once; the public
// functions, which take no key, once per call. Parameters are compared with ==, so +0 and
// -0 share a key: no formula here tells them apart (they are added or compared, and the
// rates they could divide by are > 0).
std::atomic<std::uint64_t> g_last_key{0};

template <class Kernel>
std::uint64_t intern(const Kernel& k, double sms) {
  struct Known {
    Kernel kernel;
    double sms = 0;
    std::uint64_t key = 0;
  };
  thread_local std::array<Known, 8> known{};
  thread_local std::size_t next = 0;
  for (const Known& e : known)
    if (e.key != 0 && memo_detail::bits(e.sms) == memo_detail::bits(sms) && e.kernel == k) return e.key;
  Known& slot = known[next++ % known.size()];
  slot = Known{k, sms, ++g_last_key};
  return slot.key;
}

// Sizes (entries x bytes per thread): one evaluation of Qwen3-8B (bench_evaluate) asks for
// about 40 distinct products, 26 decode steps and a few envelopes; a hashed table needs
// room to spare for two of them to rarely share a set of two.
memo_detail::Memo<5, 512>& gemm_memo() {  // 1024 x 48 B
  thread_local memo_detail::Memo<5, 512> memo;
  return memo;
}

}  // namespace

std::uint64_t memo_key(const GemmKernel& g, double sms) { return intern(g, sms); }
std::uint64_t memo_key(const DecodeAttentionKernel& a, double sms) { return intern(a, sms); }

double grouped_gemm_seconds(const GemmKernel& g, double sms, std::uint64_t key, const GemmShape& s, double groups) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || groups <= 0) return 0;
  static_assert(sizeof(GemmShape) == 3 * sizeof(double), "a new shape field belongs in the memo's key");
  if (key == 0) key = memo_key(g, sms);  // a roofline built by hand
  using memo_detail::bits;
  return gemm_memo().get({key, bits(s.m), bits(s.n), bits(s.k), bits(groups)},
                         [&] { return gemm_search(g, sms, s, groups); });
}

double grouped_gemm_seconds(const GemmKernel& g, double sms, const GemmShape& s, double groups) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || groups <= 0) return 0;
  return gemm_search(g, sms, s, groups);
}

double gemm_seconds(const GemmKernel& g, double sms, const GemmShape& s) { return grouped_gemm_seconds(g, sms, s, 1); }

const PrefillHeadDim& prefill_head_dim(const PrefillAttentionKernel& a, double hd) {
  if (a.head_dims.empty()) throw std::logic_error("prefill attention kernel without head dimensions");
  for (const PrefillHeadDim& k : a.head_dims)
    if (k.head_dim >= hd) return k;
  return a.head_dims.back();
}

model::DType prefill_kernel_dtype(model::DType activations, model::DType kv_cache) {
  return activations == model::DType::fp8 || kv_cache == model::DType::fp8 ? model::DType::fp8 : activations;
}

double prefill_attention_seconds(const PrefillAttentionKernel& a, double sms, const PrefillAttentionShape& s) {
  if (s.seqs <= 0 || s.rows <= 0) return 0;
  const PrefillHeadDim& k = prefill_head_dim(a, s.head_dim);
  // The memory pass: queries in and outputs out (in fp8 when the cache is: the fp8 kernel
  // quantises them), K and V to the cache and back.
  const double q_bytes = s.rows * s.heads * s.head_dim * 2 * std::min(s.element_bytes, s.kv_bytes);
  const double kv_bytes = s.kv_positions * s.kv_heads * s.head_dim * 2 * s.kv_bytes;
  const double memory = s.seqs * (q_bytes / (a.memory_gb_per_s * 1e9) + kv_bytes / (a.kv_gb_per_s * 1e9));
  // Units: query blocks of one (sequence, head); the durations of one SM's work on them.
  const double blocks = std::ceil(s.rows / kAttentionTileQ), block_rows = std::min(kAttentionTileQ, s.rows);
  const double units = s.seqs * s.heads * blocks;
  const double pair = (4 * s.head_dim + a.softmax_flops) * sms / (a.tensor_tflop_per_s * 1e12);
  const bool windowed = s.kv_positions > s.longest_row_keys;
  const double edge = windowed ? 1 - s.longest_row_keys / s.kv_positions : 0;
  const double unit = k.unit_us * 1e-6, window = a.window_us * 1e-6;
  const double mean = unit + edge * window + s.pairs / blocks * pair;
  // The last block's rows span its tiles' keys: the window's and a block's more.
  const double last_keys = std::min(s.kv_positions, s.longest_row_keys + block_rows);
  const double longest = std::max(mean, unit + (windowed ? window : 0) + block_rows * last_keys * pair);
  double attend = longest;
  if (units > sms && mean > 0) {
    // List scheduling: busy SMs until the last unit starts, with the mean residual R of
    // the others' units left then (durations spread evenly about the mean).
    const double spread = longest - mean;
    const double residual = std::min(longest / 2, (mean * mean + spread * spread / 3) / (2 * mean));
    attend = std::max(longest, units * mean / sms + longest - residual);
  }
  return k.latency_us * 1e-6 + memory + attend;
}

namespace {

// The decode shape's common terms (kernel_models.hpp): bytes of a K and V row and of a
// query row, the DRAM and compute times, the context the dispatch and the splits see.
struct DecodeTerms {
  double kv_row, q_row, rows_per_kv, context, dram, compute;
};

DecodeTerms decode_terms(const DecodeAttentionKernel& a, const DecodeAttentionShape& s) {
  DecodeTerms d;
  const double kv_heads = std::max(1.0, s.kv_heads);
  d.kv_row = s.head_dim * 2 * s.kv_bytes;
  d.q_row = s.head_dim * 2 * s.element_bytes;
  d.rows_per_kv = s.query_rows * s.heads / kv_heads;
  d.context = std::max(s.context, s.keys);
  d.dram = s.seqs * (s.keys * kv_heads * d.kv_row + s.query_rows * s.heads * d.q_row) / (a.memory_gb_per_s * 1e9);
  d.compute = 4 * s.seqs * s.query_rows * s.heads * s.head_dim * s.keys / (a.tensor_tflop_per_s * 1e12);
  return d;
}

// The two bounds a decode kernel's time blends: DRAM, and its blocks' issue (or compute).
struct DecodeBounds {
  double dram, issue;
};

double decode_total(const DecodeAttentionKernel& a, const DecodeBounds& b, double latency_us) {
  return latency_us * 1e-6 + blend(b.dram, b.issue, a.overlap);
}
double decode_total(const DecodeAttentionKernel& a, const DecodeBounds& b) { return decode_total(a, b, a.latency_us); }

// The grouped kernel's fixed cost at head dimension hd: the next fitted one up, else the
// largest; the kernel's own where none is fitted.
double grouped_latency_us(const DecodeAttentionKernel& a, double hd) {
  const std::vector<DecodeHeadDim>& dims = a.grouped.head_dims;
  if (dims.empty()) return a.latency_us;
  for (const DecodeHeadDim& k : dims)
    if (k.head_dim >= hd) return k.latency_us;
  return dims.back().latency_us;
}

// The one-row kernel (masked MHA): a block per query row and split. The splits follow the
// keys read (a window's), the split variant's fixed cost the context.
DecodeBounds one_row_bounds(const DecodeAttentionKernel& a, double sms, const DecodeAttentionShape& s) {
  const DecodeOneRow& p = a.one_row;
  const DecodeTerms d = decode_terms(a, s);
  const double units = s.seqs * s.query_rows * s.heads;
  const double loop = p.split_keys_x_head_dim / s.head_dim;
  const double splits = std::max(1.0, std::min(p.split_blocks_per_sm * sms / units, s.keys / loop));
  const double walk = (p.block_us + (d.context >= loop ? p.split_us : 0)) * 1e-6 +
                      (s.keys / splits * d.kv_row + d.q_row) / (p.block_gb_per_s * 1e9);
  const double waves = units * splits * walk / (p.resident_blocks * sms);
  const double l2 = units * s.keys * d.kv_row / (p.l2_gb_per_s * 1e9);
  return {d.dram, std::max({walk, waves, l2, d.compute})};
}

// The grouped kernel (XQA): a block per (sequence, KV head, split), TensorRT-LLM's split count.
double grouped_seconds(const DecodeAttentionKernel& a, double sms, const DecodeAttentionShape& s) {
  const DecodeGrouped& p = a.grouped;
  const DecodeTerms d = decode_terms(a, s);
  const double units = s.seqs * std::max(1.0, s.kv_heads);
  const double span = p.splits_span_context ? d.context : s.keys;
  const double m = span / kXqaKeysPerSplit;
  const double splits = std::max(1.0, std::min({m, std::sqrt(8 * m), kXqaTargetWaves * sms / units}));
  const double fixed = (p.block_us + d.rows_per_kv * p.row_us) * 1e-6;
  const double rate = p.block_gb_per_s * 1e9;
  const double block_keys = std::max(std::min(span / splits, s.keys), p.min_keys);
  const double walk = fixed + (block_keys * d.kv_row + d.rows_per_kv * d.q_row) / rate;
  const double keys_read = std::max(s.keys, p.min_keys * splits);
  const double all = units * (splits * fixed + (keys_read * d.kv_row + splits * d.rows_per_kv * d.q_row) / rate);
  return decode_total(a, {d.dram, std::max({walk, all / (p.resident_blocks * sms), d.compute})},
                      grouped_latency_us(a, s.head_dim));
}

// TensorRT-LLM's test for the grouped kernel: f ceil(b) G max(1, floor(context / 128)) < sms
// keeps the one-row kernel (too few blocks for XQA to gain).
bool one_row_by_dispatch(double factor, double sms, double seqs, double kv_heads, double context) {
  return factor > 0 &&
         factor * std::ceil(seqs) * kv_heads * std::max(1.0, std::floor(context / kXqaKeysPerSplit)) < sms;
}

// Monotone across the switch: the largest one-row time of the smaller shapes the dispatch
// leaves to the one-row kernel (f > 0). For an integer batch j those are the contexts below
// 128 (n + 1), n = ceil(sms / (f j G)) - 1; batches past ceil(b) are not smaller.
double envelope_search(const DecodeAttentionKernel& a, double sms, const DecodeAttentionShape& s, double kv_heads,
                       double context, double floor) {
  const double f = a.grouped_min_block_factor;
  // (blend(x, y) <= 2^(1/q) max(x, y): a box that cannot raise the envelope is not blended.)
  const double reach = std::pow(2.0, 1 / a.overlap);
  double envelope = floor;
  for (double j = 1; j <= std::ceil(s.seqs) && f * j * kv_heads < sms; ++j) {
    const double n = std::ceil(sms / (f * j * kv_heads)) - 1;
    DecodeAttentionShape box = s;
    box.seqs = std::min(s.seqs, j);
    box.context = std::min(context, std::nextafter(kXqaKeysPerSplit * (n + 1), 0.0));
    box.keys = std::min(s.keys, box.context);
    const DecodeBounds b = one_row_bounds(a, sms, box);
    if (a.latency_us * 1e-6 + reach * std::max(b.dram, b.issue) > envelope)
      envelope = std::max(envelope, decode_total(a, b));
  }
  return envelope;
}

memo_detail::Memo<10, 64>& envelope_memo() {  // 128 x 88 B
  thread_local memo_detail::Memo<10, 64> memo;
  return memo;
}

// The envelope sees the context and the keys only below the first box's edge, 128 (n + 1)
// at j = 1 (every box clamps them there or lower), so they are clamped to it before it is
// remembered: a serving matrix or a sweep over contexts finds it again for every context
// of one batch.
double envelope(const DecodeAttentionKernel& a, double sms, std::uint64_t key, DecodeAttentionShape s,
                double kv_heads, double context) {
  const double f = a.grouped_min_block_factor;
  if (!(f * kv_heads < sms)) return 0;  // no box
  const double edge = kXqaKeysPerSplit * std::ceil(sms / (f * kv_heads));
  context = std::min(context, edge);
  s.keys = std::min(s.keys, edge);
  using memo_detail::bits;
  return envelope_memo().get({key, bits(s.seqs), bits(s.heads), bits(s.kv_heads), bits(s.head_dim),
                              bits(s.query_rows), bits(s.keys), bits(context), bits(s.kv_bytes), bits(s.element_bytes)},
                             [&] { return envelope_search(a, sms, s, kv_heads, context, 0); });
}

// key 0: no memo (the envelope is then searched above the grouped time, its boxes that
// cannot exceed it not blended: a fit asks once per kernel and shape).
double decode_search(const DecodeAttentionKernel& a, double sms, std::uint64_t key, const DecodeAttentionShape& s) {
  const double kv_heads = std::max(1.0, s.kv_heads);
  const double rows = s.query_rows * s.heads / kv_heads, context = std::max(s.context, s.keys);
  const double f = a.grouped_min_block_factor;
  const bool grouped = s.kernel == DecodeKernel::automatic && rows > 1 && rows <= kGroupedQueryMaxRows;
  if (!grouped || one_row_by_dispatch(f, sms, s.seqs, kv_heads, context))
    return decode_total(a, one_row_bounds(a, sms, s));
  const double t = grouped_seconds(a, sms, s);
  if (f <= 0) return t;
  if (key == 0) return envelope_search(a, sms, s, kv_heads, context, t);
  return std::max(t, envelope(a, sms, key, s, kv_heads, context));
}

memo_detail::Memo<11, 256>& decode_memo() {  // 512 x 96 B
  thread_local memo_detail::Memo<11, 256> memo;
  return memo;
}

}  // namespace

double decode_attention_seconds(const DecodeAttentionKernel& a, double sms, std::uint64_t key,
                                const DecodeAttentionShape& s) {
  if (s.seqs <= 0 || s.keys <= 0) return 0;
  static_assert(sizeof(DecodeAttentionShape) == 10 * sizeof(double), "a new shape field belongs in the memo's key");
  if (key == 0) key = memo_key(a, sms);
  using memo_detail::bits;
  return decode_memo().get({key, bits(s.seqs), bits(s.heads), bits(s.kv_heads), bits(s.head_dim), bits(s.query_rows),
                            bits(s.keys), bits(s.context), bits(s.kv_bytes), bits(s.element_bytes),
                            static_cast<std::uint64_t>(s.kernel)},
                           [&] { return decode_search(a, sms, key, s); });
}

double decode_attention_seconds(const DecodeAttentionKernel& a, double sms, const DecodeAttentionShape& s) {
  if (s.seqs <= 0 || s.keys <= 0) return 0;
  return decode_search(a, sms, 0, s);
}

double bus_bytes(Collective c, double bytes, double gpus) {
  if (gpus <= 1) return 0;
  const double share = (gpus - 1) / gpus;
  return c == Collective::all_reduce ? 2 * share * bytes : share * bytes;
}

double collective_seconds(const std::vector<CollectiveRegime>& regimes, Collective c, double bytes, double gpus) {
  if (gpus <= 1 || bytes <= 0 || regimes.empty()) return 0;
  const double moved = bus_bytes(c, bytes, gpus);
  double best = std::numeric_limits<double>::infinity();
  for (const CollectiveRegime& r : regimes) best = std::min(best, r.alpha_us * 1e-6 + moved / (r.bus_gb_per_s * 1e9));
  return best;
}

std::vector<CollectiveRegime> regimes_for(const std::map<int, std::vector<CollectiveRegime>>& by_gpus, double gpus) {
  if (by_gpus.empty()) return {};
  const int p = static_cast<int>(std::lround(gpus));
  if (auto it = by_gpus.find(p); it != by_gpus.end()) return it->second;
  // Nearest fitted count; a ring's step count grows with p - 1, its bus bandwidth does not.
  auto nearest = by_gpus.begin();
  for (auto it = by_gpus.begin(); it != by_gpus.end(); ++it)
    if (std::abs(it->first - p) < std::abs(nearest->first - p)) nearest = it;
  std::vector<CollectiveRegime> out = nearest->second;
  const double scale = nearest->first > 1 ? (gpus - 1) / (nearest->first - 1) : 1;
  for (CollectiveRegime& r : out) r.alpha_us *= scale;
  return out;
}

double vector_seconds(const VectorKernel& v, double bytes) {
  if (bytes <= 0) return 0;
  return v.latency_us * 1e-6 + bytes / (v.memory_gb_per_s * 1e9);
}

double moe_layer_seconds(const MoeLayerKernel& m, double token_bytes) {
  if (token_bytes <= 0 || m.token_gb_per_s <= 0) return 0;
  return m.latency_us * 1e-6 + token_bytes / (m.token_gb_per_s * 1e9);
}

double moe_seconds(const GemmKernel& g, const VectorKernel& v, double sms, const MoeShape& s,
                   const MoeLayerKernel* layer) {
  if (s.tokens <= 0 || s.experts_hit <= 0) return 0;
  const double e = s.element_bytes, per_expert = s.tokens / s.experts_hit;
  const double up = s.gated ? 2 * s.inter : s.inter;
  const double rows = s.tokens * s.hidden * e;  // [tokens, D] once
  return vector_seconds(v, 2 * rows)             // permute: read and write each routed row
         + grouped_gemm_seconds(g, sms, {per_expert, up, s.hidden}, s.experts_hit)
         + vector_seconds(v, s.tokens * (up + s.inter) * e)  // activation: read up, write inter
         + grouped_gemm_seconds(g, sms, {per_expert, s.hidden, s.inter}, s.experts_hit)
         + vector_seconds(v, 2 * rows)           // weighted un-permute
         + (layer ? moe_layer_seconds(*layer, s.layer_tokens * s.hidden * e) : 0);
}

}  // namespace hdlab::simulator
