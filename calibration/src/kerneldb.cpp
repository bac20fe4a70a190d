// Reading kerneldb tables (kerneldb.hpp): each file's text (kernel_table.hpp), then one
// pass over its lines with the columns found by header name. Numbers are parsed with
// std::from_chars, strings stay views into the text until a row keeps them.
#include "hdlab/calibration/kerneldb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "kernel_table.hpp"

namespace hdlab::calibration {

namespace {

namespace fs = std::filesystem;
using detail::CsvTable;
using detail::DeviceCheck;
using model::ConfigError;

struct KnownPrecision {
  std::string_view name;
  PrecisionSize size;
};

// kerneldb.hpp lists these with their reasons; keep the two in step.
constexpr KnownPrecision precisions[] = {
    {"bfloat16", {2, 2}},  {"half", {2, 2}},        {"int8", {1, 1}},          {"fp8", {1, 1}},
    {"fp8_block", {1, 1}}, {"nvfp4", {0.5, 0.5}},  {"sq", {1, 1}},            {"int8_wo", {2, 1}},
    {"int4_wo", {2, 0.5}}, {"w4a16_mxfp4", {2, 0.5}}, {"w4a8_mxfp4_mxfp8", {1, 0.5}},
};

std::vector<GemmRow> read_gemm(CsvTable& t, DeviceCheck& device) {
  device.start(t);
  const std::size_t dtype = t.column("gemm_dtype"), m = t.column("m"), n = t.column("n"), k = t.column("k"),
                    latency = t.column("latency");
  std::vector<GemmRow> rows;
  rows.reserve(t.row_estimate());
  while (t.next()) {
    GemmRow& r = rows.emplace_back();
    r.dtype = t.precision(dtype);
    r.m = t.whole(m, 1);
    r.n = t.whole(n, 1);
    r.k = t.whole(k, 1);
    r.seconds = t.seconds(latency);
    r.line = t.line();
    device.check(t);
  }
  return rows;
}

std::vector<AttentionRow> read_attention(CsvTable& t, DeviceCheck& device) {
  device.start(t);
  const std::size_t batch = t.column("batch_size"), isl = t.column("isl"), step = t.column("step"),
                    heads = t.column("num_heads"), kv_heads = t.column("num_key_value_heads"),
                    head_dim = t.column("head_dim"), window = t.column("window_size"),
                    attn_dtype = t.column("attn_dtype"), kv_dtype = t.column("kv_cache_dtype"),
                    latency = t.column("latency");
  // Beam search would multiply the work per sequence; no row kind models it.
  const bool has_beam = t.has_column("beam_width");
  const std::size_t beam = has_beam ? t.column("beam_width") : 0;
  std::vector<AttentionRow> rows;
  rows.reserve(t.row_estimate());
  while (t.next()) {
    AttentionRow& r = rows.emplace_back();
    r.batch = t.whole(batch, 1);
    r.isl = t.whole(isl, 1);
    r.step = t.whole(step, 0);
    r.heads = t.whole(heads, 1);
    r.kv_heads = t.whole(kv_heads, 1);
    if (std::fmod(r.heads, r.kv_heads) != 0)
      t.fail(kv_heads, "num_heads " + std::to_string(static_cast<long long>(r.heads)) + " is not a multiple of it");
    r.head_dim = t.whole(head_dim, 1);
    r.window = t.whole(window, 0);
    r.attn_dtype = t.precision(attn_dtype);
    r.kv_dtype = t.precision(kv_dtype);
    if (has_beam && t.whole(beam, 1) != 1) t.fail(beam, "beam search (beam_width > 1) is not modelled");
    r.seconds = t.seconds(latency);
    r.line = t.line();
    device.check(t);
  }
  return rows;
}

// nccl_perf (library "nccl", dtype column nccl_dtype) or custom_allreduce_perf ("custom",
// allreduce_dtype, all_reduce only).
void read_collectives(CsvTable& t, DeviceCheck& device, const std::string& library, std::vector<CollectiveRow>& rows) {
  device.start(t);
  const bool nccl = library == "nccl";
  const std::size_t op = t.column("op_name"), dtype = t.column(nccl ? "nccl_dtype" : "allreduce_dtype"),
                    gpus = t.column("num_gpus"), size = t.column("message_size"), latency = t.column("latency");
  rows.reserve(rows.size() + t.row_estimate());
  while (t.next()) {
    CollectiveRow& r = rows.emplace_back();
    r.op = std::string(t.text(op));
    const bool known_op = nccl ? (r.op == "all_reduce" || r.op == "all_gather" || r.op == "reduce_scatter" || r.op == "alltoall")
                               : r.op == "all_reduce";
    if (!known_op)
      t.fail(op, "unknown collective \"" + r.op + "\" (" +
                     (nccl ? "all_reduce, all_gather, reduce_scatter, alltoall" : "all_reduce") + ")");
    r.library = library;
    r.dtype = t.precision(dtype);
    r.gpus = t.whole(gpus, 1);
    r.elements = t.whole(size, 1);
    r.bytes = r.elements * precision_size(r.dtype)->activation_bytes;
    r.seconds = t.seconds(latency);
    r.line = t.line();
    device.check(t);
  }
}

std::vector<MoeRow> read_moe(CsvTable& t, DeviceCheck& device) {
  device.start(t);
  const std::size_t dtype = t.column("moe_dtype"), kernel = t.column("kernel_source"), tokens = t.column("num_tokens"),
                    hidden = t.column("hidden_size"), inter = t.column("inter_size"), topk = t.column("topk"),
                    experts = t.column("num_experts"), tp = t.column("moe_tp_size"), ep = t.column("moe_ep_size"),
                    distribution = t.column("distribution"), latency = t.column("latency");
  std::vector<MoeRow> rows;
  rows.reserve(t.row_estimate());
  while (t.next()) {
    MoeRow& r = rows.emplace_back();
    r.dtype = t.precision(dtype);
    r.kernel = std::string(t.text(kernel));
    r.distribution = std::string(t.text(distribution));
    r.tokens = t.whole(tokens, 1);
    r.hidden = t.whole(hidden, 1);
    r.inter = t.whole(inter, 1);
    r.experts = t.whole(experts, 1);
    // Bounded: the power-law routing draws one load per expert (power_law_rank_load).
    if (r.experts > kMaxExperts) t.fail(experts, fmt::format("{:.0f} is more than {:.0f} experts", r.experts, kMaxExperts));
    r.topk = t.whole(topk, 1);
    if (r.topk > r.experts) t.fail(topk, "more than num_experts");
    r.tp = t.whole(tp, 1);
    r.ep = t.whole(ep, 1);
    // Each expert-parallel rank holds num_experts / ep whole experts.
    if (std::fmod(r.experts, r.ep) != 0)
      t.fail(ep, fmt::format("{:.0f} does not divide num_experts {:.0f}", r.ep, r.experts));
    r.seconds = t.seconds(latency);
    r.line = t.line();
    device.check(t);
  }
  return rows;
}

// The rows of a linear-attention layer table: the columns every such table has, read into
// LinearLayerRow, and the table's own ones by `own` (columns looked up before the rows).
template <class Row, class Own>
std::vector<Row> read_linear_layer_rows(CsvTable& t, DeviceCheck& device, Own own) {
  device.start(t);
  const std::size_t kernel = t.column("kernel_source"), phase = t.column("phase"), model = t.column("model_name"),
                    batch = t.column("batch_size"), seq = t.column("seq_len"), d_model = t.column("d_model"),
                    d_conv = t.column("d_conv"), latency = t.column("latency");
  auto read_own = own(t);
  std::vector<Row> rows;
  while (t.next()) {
    Row& r = rows.emplace_back();
    r.kernel = std::string(t.text(kernel));
    r.phase = std::string(t.text(phase));
    if (r.phase != "context" && r.phase != "generation") t.fail(phase, "must be context or generation");
    r.model = std::string(t.text(model));
    r.batch = t.whole(batch, 1);
    r.seq_len = t.whole(seq, 1);
    r.d_model = t.whole(d_model, 1);
    r.d_conv = t.whole(d_conv, 1);
    read_own(r);
    r.seconds = t.seconds(latency);
    r.line = t.line();
    device.check(t);
  }
  return rows;
}

std::vector<GdnRow> read_gdn(CsvTable& t, DeviceCheck& device) {
  return read_linear_layer_rows<GdnRow>(t, device, [](CsvTable& table) {
    const std::size_t kh = table.column("num_k_heads"), kd = table.column("head_k_dim"),
                      vh = table.column("num_v_heads"), vd = table.column("head_v_dim");
    return [&table, kh, kd, vh, vd](GdnRow& r) {
      r.k_heads = table.whole(kh, 1);
      r.k_dim = table.whole(kd, 1);
      r.v_heads = table.whole(vh, 1);
      r.v_dim = table.whole(vd, 1);
    };
  });
}

std::vector<Mamba2Row> read_mamba2(CsvTable& t, DeviceCheck& device) {
  return read_linear_layer_rows<Mamba2Row>(t, device, [](CsvTable& table) {
    const std::size_t d_state = table.column("d_state"), heads = table.column("nheads"),
                      head_dim = table.column("head_dim"), groups = table.column("n_groups"),
                      chunk = table.column("chunk_size");
    return [&table, d_state, heads, head_dim, groups, chunk](Mamba2Row& r) {
      r.d_state = table.whole(d_state, 1);
      r.heads = table.whole(heads, 1);
      r.head_dim = table.whole(head_dim, 1);
      r.groups = table.whole(groups, 1);
      r.chunk = table.whole(chunk, 1);
    };
  });
}

std::string folder_listing(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// 64-bit FNV-1a over bytes (kerneldb.hpp documents the split built on it).
class ShapeHash {
 public:
  ShapeHash& add(std::string_view s) {
    for (char c : s) byte(static_cast<unsigned char>(c));
    return *this;
  }
  // A shape integer, as 8 bytes of a little-endian int64 whatever the machine's order.
  ShapeHash& add(double v) {
    const auto u = static_cast<std::uint64_t>(static_cast<std::int64_t>(std::llround(v)));
    for (int b = 0; b < 8; ++b) byte(static_cast<unsigned char>(u >> (8 * b)));
    return *this;
  }
  bool held_out() const { return h_ <= std::numeric_limits<std::uint64_t>::max() / 5; }

 private:
  void byte(unsigned char b) {
    h_ ^= b;
    h_ *= 0x100000001b3ULL;
  }
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace

std::optional<PrecisionSize> precision_size(std::string_view name) {
  for (const KnownPrecision& p : precisions)
    if (p.name == name) return p.size;
  return std::nullopt;
}

std::vector<std::string> known_precisions() {
  std::vector<std::string> out;
  for (const KnownPrecision& p : precisions) out.emplace_back(p.name);
  return out;
}

KernelDb read_kerneldb(const std::string& dir, const std::string& device) {
  const fs::path folder = fs::path(dir) / device;
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw ConfigError(folder.string(), "no such kerneldb device folder (devices in " + dir + ": " + folder_listing(dir) + ")");
  KernelDb db;
  db.device = device;
  db.folder = folder.string();
  DeviceCheck check(db.device_name);
  // Opens a table when it is there: the file's text, or nullopt.
  auto open = [&](const std::string& name) -> std::optional<CsvTable> {
    const std::optional<std::string> path = detail::find_table(folder, name);
    if (!path) return std::nullopt;
    db.files[name] = *path;
    return CsvTable(*path, detail::read_table_text(*path));
  };
  std::optional<CsvTable> gemm = open("gemm_perf");
  if (!gemm)
    throw ConfigError((folder / "gemm_perf.csv").string(),
                      "missing (neither gemm_perf.csv nor gemm_perf.csv.gz is in " + folder.string() +
                          "): the GEMM table is required");
  db.gemm = read_gemm(*gemm, check);
  gemm.reset();
  if (auto t = open("context_attention_perf")) db.context_attention = read_attention(*t, check);
  if (auto t = open("generation_attention_perf")) db.generation_attention = read_attention(*t, check);
  if (auto t = open("nccl_perf")) read_collectives(*t, check, "nccl", db.collectives);
  if (auto t = open("custom_allreduce_perf")) read_collectives(*t, check, "custom", db.collectives);
  if (auto t = open("moe_perf")) db.moe = read_moe(*t, check);
  if (auto t = open("gdn_perf")) db.gdn = read_gdn(*t, check);
  if (auto t = open("mamba2_perf")) db.mamba2 = read_mamba2(*t, check);
  return db;
}

bool held_out(const GemmRow& r) { return ShapeHash().add(r.m).add(r.n).add(r.k).held_out(); }

bool held_out(const AttentionRow& r) {
  return ShapeHash().add(r.batch).add(r.isl).add(r.step).add(r.heads).add(r.kv_heads).add(r.head_dim).add(r.window).held_out();
}

bool held_out(const CollectiveRow& r) { return ShapeHash().add(std::string_view(r.op)).add(r.gpus).add(r.elements).held_out(); }

bool held_out(const MoeRow& r) {
  return ShapeHash().add(r.tokens).add(r.hidden).add(r.inter).add(r.topk).add(r.experts).add(r.tp).add(r.ep).held_out();
}

}  // namespace hdlab::calibration
