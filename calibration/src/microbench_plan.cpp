// The benchmark plans (full and quick) and samples as JSON. Shapes are powers of two
// (and a few products of them): the bundled validation models use other widths and
// sequence lengths, so no validation op is a calibration shape (validation.hpp checks).
#include <cmath>

#include "hdlab/calibration/microbench.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::calibration {

using executor::AttentionCaseShape;
using model::Layout;
using model::MaskSpec;
using model::OpKind;

namespace {

AttentionCaseShape attention(MaskSpec::Kind kind, std::int64_t tokens, std::int64_t copies, Layout layout,
                             bool decode, std::int64_t window = 0) {
  AttentionCaseShape a;
  a.mask.kind = kind;
  a.mask.tokens = tokens;
  a.mask.copies = copies;
  a.mask.window = window;
  a.layout = layout;
  a.decode = decode;
  a.heads = 8;
  a.kv_heads = 2;
  a.head_dim = 64;
  return a;
}

AttentionCaseShape phd_swa(std::int64_t tokens, bool decode) {
  AttentionCaseShape a = attention(MaskSpec::Kind::phd, tokens, 3, Layout::phd_split, decode);
  a.mask.phd_variant = model::PhdVariant::swa;
  a.mask.phd_W = 32;
  return a;
}

void add_gemm_grid(BenchPlan& p, const std::vector<std::int64_t>& ms,
                   const std::vector<std::pair<std::int64_t, std::int64_t>>& weights) {
  for (auto [n, k] : weights)
    for (std::int64_t m : ms) p.gemm.push_back({m, n, k});
}

void add_vector_grid(BenchPlan& p, const std::vector<std::int64_t>& rows) {
  // Widths: D-like 1024 for norms and adds, F-like 2048 for SwiGLU, 8 heads x 64 for
  // RoPE, D' = 2048 (m = 2, n = 4 slots of 512) for the GHC ops.
  const std::pair<OpKind, std::int64_t> ops[] = {{OpKind::attn_norm, 1024}, {OpKind::residual, 1024},
                                                 {OpKind::ffn_act, 2048},   {OpKind::rope, 512},
                                                 {OpKind::ghc_dynamic, 2048}, {OpKind::ghc_width, 2048},
                                                 {OpKind::ghc_depth, 2048}};
  for (auto [op, width] : ops)
    for (std::int64_t r : rows) p.vector.push_back({op, r, width});
  // Stream bandwidth: the add over 200 MB (arrays of 64 MiB, beyond any cache a run's
  // working set would find them in).
  p.vector.push_back({OpKind::residual, 16384, 1024});
}

}  // namespace

BenchPlan full_plan() {
  BenchPlan p;
  p.name = "full";
  p.rounds = 2;
  add_gemm_grid(p, {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048},
                {{256, 256}, {1024, 1024}, {2048, 512}, {512, 2048}, {4096, 1024}, {8192, 512}});
  p.matrix_rates = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  using K = MaskSpec::Kind;
  for (std::int64_t L : {128, 256, 512, 1024, 2048}) p.attention.push_back(attention(K::causal, L, 1, Layout::interleaved, false));
  for (std::int64_t w : {64, 256}) p.attention.push_back(attention(K::sliding, 2048, 1, Layout::interleaved, false, w));
  for (std::int64_t L : {128, 512}) {
    p.attention.push_back(attention(K::intra, L, 4, Layout::stream_major, false));
    p.attention.push_back(attention(K::intra, L, 4, Layout::interleaved, false));
    p.attention.push_back(attention(K::sliding, L, 4, Layout::interleaved, false, 256));
    p.attention.push_back(phd_swa(L, false));
  }
  for (std::int64_t L : {256, 1024, 4096}) p.attention.push_back(attention(K::causal, L, 1, Layout::interleaved, true));
  for (std::int64_t L : {256, 1024}) {
    p.attention.push_back(attention(K::causal, L, 4, Layout::interleaved, true));
    p.attention.push_back(attention(K::intra, L, 4, Layout::interleaved, true));
    p.attention.push_back(phd_swa(L, true));
  }
  p.attention.push_back(attention(K::sliding, 2048, 1, Layout::interleaved, true, 256));
  add_vector_grid(p, {1, 4, 16, 64, 256, 1024, 4096});
  p.gather_rows = {1, 16, 256, 4096};
  p.runner_prefill = {8, 32, 128, 512, 1024, 2048};  // 2048: 256 rows per expert of the MoE
  p.runner_decode_context = 256;
  p.runner_train = {64, 512};
  return p;
}

BenchPlan quick_plan() {
  BenchPlan p;
  p.name = "quick";
  p.rounds = 2;
  p.min_seconds = 0.01;
  p.min_runs = 5;
  p.max_runs = 200;
  p.rotate_bytes = std::size_t{24} << 20;
  add_gemm_grid(p, {1, 4, 16, 64, 256, 1024}, {{256, 256}, {1024, 1024}, {2048, 512}, {512, 2048}});
  p.matrix_rates = {{4096, 4096, 4096}};
  using K = MaskSpec::Kind;
  for (std::int64_t L : {128, 512, 2048}) p.attention.push_back(attention(K::causal, L, 1, Layout::interleaved, false));
  p.attention.push_back(attention(K::sliding, 2048, 1, Layout::interleaved, false, 256));
  p.attention.push_back(attention(K::intra, 256, 4, Layout::stream_major, false));
  p.attention.push_back(phd_swa(256, false));
  for (std::int64_t L : {256, 2048}) p.attention.push_back(attention(K::causal, L, 1, Layout::interleaved, true));
  p.attention.push_back(attention(K::intra, 512, 4, Layout::interleaved, true));
  add_vector_grid(p, {1, 16, 256, 4096});
  p.gather_rows = {16, 1024};
  p.runner_prefill = {32, 256};
  p.runner_decode_context = 128;
  p.runner_train = {128};
  return p;
}

nlohmann::json to_json(const Sample& s) {
  nlohmann::json j = {{"bench", to_string(s.bench)}, {"name", s.name},   {"op", model::to_string(s.op)},
                      {"shape", s.shape},             {"x", s.x},         {"flops", s.flops},
                      {"bytes", s.bytes},             {"calls", s.calls}, {"seconds", s.seconds},
                      {"spread", s.spread},           {"runs", s.runs}};
  if (!s.mask.empty()) j["mask"] = s.mask;
  return j;
}

Sample sample_from_json(const nlohmann::json& j, const std::string& pointer) {
  model::ObjectReader r(j, pointer);
  Sample s;
  s.bench = r.choice<BenchKind>("bench",
                                {{"gemm", BenchKind::gemm},
                                 {"attention", BenchKind::attention},
                                 {"vector", BenchKind::vector},
                                 {"memory", BenchKind::memory},
                                 {"launch", BenchKind::launch},
                                 {"runner", BenchKind::runner},
                                 {"gemm_bf16", BenchKind::gemm_bf16},
                                 {"gemm_fp16", BenchKind::gemm_fp16}},
                                std::nullopt);
  s.name = r.string("name", std::nullopt);
  const std::string op = r.string("op", std::nullopt);
  const auto kind = model::op_kind_from_string(op);
  if (!kind) model::fail(r.at("op"), "unknown op \"" + op + "\"");
  s.op = *kind;
  const nlohmann::json& shape = r.required("shape");
  if (!shape.is_array()) model::fail(r.at("shape"), "must be a list of integers");
  for (std::size_t i = 0; i < shape.size(); ++i)
    s.shape.push_back(model::read_integer(shape[i], model::pointer_join(r.at("shape"), i), 0));
  s.mask = r.string("mask", std::string());
  s.x = r.number("x", std::nullopt, 0.0);
  s.flops = r.number("flops", std::nullopt, 0.0);
  s.bytes = r.number("bytes", std::nullopt, 0.0);
  s.calls = r.number("calls", 1.0, 0.0);
  s.seconds = r.number("seconds", std::nullopt, 0.0);
  if (!(s.seconds > 0)) model::fail(r.at("seconds"), "must be > 0");
  s.spread = r.number("spread", 0.0, 0.0);
  s.runs = static_cast<int>(r.integer("runs", 0, 0));
  r.finish();
  return s;
}

}  // namespace hdlab::calibration
