// Attention op cases: prefill masks of every kind in every layout, decode steps against a
// KV cache, GQA and head dims that do not fill a vector register.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "op_case_support.hpp"

namespace hdlab::executor {

using namespace detail;
using model::Layout;
using model::MaskSpec;
using model::PhdVariant;

std::vector<std::int64_t> decode_key_positions(const MaskSpec& m) {
  const std::int64_t positions = m.positions(), last = m.tokens - 1;
  std::vector<std::int64_t> keys;
  switch (m.kind) {
    case MaskSpec::Kind::causal:  // chunked: the positions of the last token's chunk
      for (std::int64_t t = m.chunk > 0 ? last / m.chunk * m.chunk * m.copies : 0; t < positions; ++t) keys.push_back(t);
      break;
    case MaskSpec::Kind::intra:
      for (std::int64_t t = 0; t < positions; ++t) keys.push_back(t);
      break;
    case MaskSpec::Kind::sliding:  // a window cache: what the first new row can still see
      for (std::int64_t t = std::max<std::int64_t>(0, last * m.copies - m.window + 1); t < positions; ++t)
        keys.push_back(t);
      break;
    case MaskSpec::Kind::phd: {
      const std::int64_t hidden = m.copies - 1, first_rank = last * hidden;
      for (std::int64_t i = 0; i < last; ++i) keys.push_back(i * m.copies);  // origins
      if (m.phd_variant != PhdVariant::plain)  // the last W hidden tokens before this one
        for (std::int64_t r = std::max<std::int64_t>(0, first_rank - m.phd_W); r < first_rank; ++r)
          keys.push_back((r / hidden) * m.copies + r % hidden + 1);
      for (std::int64_t j = 0; j < m.copies; ++j) keys.push_back(last * m.copies + j);
      std::sort(keys.begin(), keys.end());
      break;
    }
  }
  return keys;
}

AttentionMask attention_case_mask(const AttentionCaseShape& shape) {
  if (!shape.decode) return AttentionMask::prefill(shape.mask, shape.layout);
  const MaskSpec& m = shape.mask;
  const std::int64_t last = m.tokens - 1;
  std::vector<std::int64_t> queries;
  for (std::int64_t j = m.final_copy_queries_only ? m.copies - 1 : 0; j < m.copies; ++j)
    queries.push_back(last * m.copies + j);
  return AttentionMask::decode(m, std::move(queries), decode_key_positions(m));
}

namespace {

std::string mask_name(const AttentionCaseShape& s) {
  std::ostringstream o;
  const MaskSpec& m = s.mask;
  o << "attention " << model::to_string(m.kind);
  if (m.kind == MaskSpec::Kind::phd) {
    o << '-' << model::to_string(m.phd_variant);
    if (m.phd_variant != PhdVariant::plain) o << " W=" << m.phd_W;
    if (m.phd_variant == PhdVariant::cswa) o << " C=" << m.phd_C;
  }
  if (m.kind == MaskSpec::Kind::sliding) o << " w=" << m.window;
  if (m.chunk > 0) o << " chunk=" << m.chunk;
  o << " copies=" << m.copies << " L=" << m.tokens << ' ' << (s.decode ? "decode" : model::to_string(s.layout));
  if (m.final_copy_queries_only) o << " final-copy-queries";
  o << " H=" << s.heads << " G=" << s.kv_heads << " hd=" << s.head_dim;
  if (s.v_head_dim > 0) o << " dv=" << s.v_head_dim;
  if (s.v_row_dim > 0) o << " of " << s.v_row_dim;
  if (s.sinks) o << " sinks";
  return o.str();
}

}  // namespace

OpCase attention_case(const AttentionCaseShape& shape, ScalarType type, std::uint64_t seed) {
  auto mask = std::make_shared<const AttentionMask>(attention_case_mask(shape));
  auto plan = std::make_shared<const TilePlan>(*mask);
  const std::int64_t lq = mask->query_rows(), lk = mask->key_rows();
  const std::int64_t heads = shape.heads, kv_heads = shape.kv_heads, hd = shape.head_dim;
  const std::int64_t dv = shape.v_head_dim > 0 ? shape.v_head_dim : hd, dw = shape.v_row_dim > 0 ? shape.v_row_dim : dv;
  OpCase c;
  c.name = mask_name(shape) + ' ' + to_string(type);
  c.op = BackendOp::attention;
  c.kind = model::OpKind::attention;
  c.type = type;
  // QK^T and PV, methods.md section 6: 4 hd H per pair, 2 H (hd + dv) with MLA's value width
  const double per_pair = 2.0 * static_cast<double>((hd + dv) * heads);
  c.cost.flops = per_pair * static_cast<double>(plan->visible_pairs());
  c.executed_flops = per_pair * static_cast<double>(plan->executed_pairs());
  c.cost.act_bytes_in = bytes_of(lq * heads * hd, type);
  c.cost.kv_bytes_read = bytes_of(lk * kv_heads * (hd + dw), type);
  c.cost.act_bytes_out = bytes_of(lq * heads * dv, type);
  // Outputs are convex combinations of values in [-1, 1]: f32 keeps ~1e-6, bf16 rounds
  // the output to 2^-9 relative (and q, k, v are exact bf16 on both sides).
  c.tolerance = type == ScalarType::bf16 ? Tolerance{8e-3, 0} : Tolerance{5e-5, 0};
  auto q = host_floats(static_cast<std::size_t>(lq * heads * hd), seed, type, -2.0f, 2.0f);
  auto k = host_floats(static_cast<std::size_t>(lk * kv_heads * hd), seed + 1, type);
  auto v = host_floats(static_cast<std::size_t>(lk * kv_heads * dw), seed + 2, type);
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  // Sinks near the scores' range (|scale q k| < ~2), so they change every output.
  auto sinks = shape.sinks ? host_floats(static_cast<std::size_t>(heads), seed + 3, ScalarType::f32, -1.0f, 2.0f)
                           : host_floats(0, seed + 3, ScalarType::f32);
  auto ref = lazy<Doubles>([=] {
    return attention_reference(to_doubles(*q), to_doubles(*k), to_doubles(*v), heads, kv_heads, hd, *mask, scale,
                               to_doubles(*sinks), dv, dw);
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor tq = be.allocate({lq, heads, hd}, type), to = be.allocate({lq, heads, dv}, type);
    const Tensor tk = be.allocate({lk, kv_heads, hd}, type), tv = be.allocate({lk, kv_heads, dw}, type);
    p->input(tq, q);
    p->input(tk, k);
    p->input(tv, v);
    Tensor ts;
    if (!sinks->empty()) {
      ts = be.allocate({heads}, ScalarType::f32);
      p->input(ts, sinks);
    }
    be.stage_plan(*plan);  // a backend's copy of the plan is set-up, not part of a timed run
    p->set([bp = &be, tq, tk, tv, to, ts, plan, scale] {
             bp->attention(tq, tk, tv, *plan, to, static_cast<float>(scale), ts);
           },
           [bp = &be, to, ref, tol] { return compare(bp->download_f32(to), ref->get(), tol, "out"); });
    return p;
  };
  return c;
}

OpCase attention_softmax_case(const AttentionSoftmaxCaseShape& shape, std::uint64_t seed) {
  auto mask = std::make_shared<const AttentionMask>(attention_case_mask(shape.attention));
  auto plan = std::make_shared<const TilePlan>(*mask);
  const std::int64_t heads = shape.attention.heads, rows = shape.rows, keys = shape.keys;
  const std::int64_t row0 = shape.row0, key0 = shape.key0;
  OpCase c;
  std::ostringstream name;
  name << "attention_softmax rows " << row0 << "+" << rows << " keys " << key0 << "+" << keys << " of "
       << mask_name(shape.attention);
  c.name = name.str();
  c.op = BackendOp::attention_softmax;
  c.kind = model::OpKind::attention;
  c.type = ScalarType::f32;  // the unfused attention's scores are f32 whatever the run's type
  c.cost.act_bytes_in = c.cost.act_bytes_out = bytes_of(heads * rows * keys, ScalarType::f32);
  c.tolerance = Tolerance{2e-6, 2e-5};  // p in [0, 1]: f32 exp and division
  auto scores = host_floats(static_cast<std::size_t>(heads * rows * keys), seed, ScalarType::f32, -4.0f, 4.0f);
  auto sinks = host_floats(shape.attention.sinks ? static_cast<std::size_t>(heads) : 0, seed + 1, ScalarType::f32,
                           -1.0f, 2.0f);
  constexpr double scale = 0.7;
  auto ref = lazy<Doubles>([=] {
    return attention_softmax_reference(to_doubles(*scores), heads, rows, keys, *mask, row0, key0, scale,
                                       to_doubles(*sinks));
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor ts = be.allocate({heads, rows, keys}, ScalarType::f32);
    p->input(ts, scores);
    Tensor tsink;
    if (!sinks->empty()) {
      tsink = be.allocate({heads}, ScalarType::f32);
      p->input(tsink, sinks);
    }
    be.stage_plan(*plan);
    p->set([bp = &be, ts, tsink, plan, row0, key0] { bp->attention_softmax(ts, *plan, row0, key0, scale, tsink); },
           [bp = &be, ts, ref, tol] { return compare(bp->download_f32(ts), ref->get(), tol, "p"); });
    return p;
  };
  return c;
}

namespace {

MaskSpec mask_of(MaskSpec::Kind kind, std::int64_t tokens, std::int64_t copies) {
  MaskSpec m;
  m.kind = kind;
  m.tokens = tokens;
  m.copies = copies;
  return m;
}

MaskSpec sliding(std::int64_t tokens, std::int64_t copies, std::int64_t window) {
  MaskSpec m = mask_of(MaskSpec::Kind::sliding, tokens, copies);
  m.window = window;
  return m;
}

MaskSpec phd(PhdVariant variant, std::int64_t tokens, std::int64_t K, std::int64_t W = 0, std::int64_t C = 0) {
  MaskSpec m = mask_of(MaskSpec::Kind::phd, tokens, K);
  m.phd_variant = variant;
  m.phd_W = W;
  m.phd_C = C;
  return m;
}

MaskSpec chunked(std::int64_t tokens, std::int64_t copies, std::int64_t chunk) {
  MaskSpec m = mask_of(MaskSpec::Kind::causal, tokens, copies);
  m.chunk = chunk;
  return m;
}

MaskSpec final_copy(MaskSpec m) {
  m.final_copy_queries_only = true;
  return m;
}

}  // namespace

std::vector<OpCase> attention_correctness_cases(ScalarType type) {
  using K = MaskSpec::Kind;
  const Layout inter = Layout::interleaved, stream = Layout::stream_major, split = Layout::phd_split;
  struct Row {
    MaskSpec mask;
    Layout layout;
    std::int64_t heads, kv_heads, hd;
    bool decode;
    bool sinks = false;
  };
  const std::vector<Row> rows = {
      // Prefill: lengths off tile multiples, every kind, every layout.
      {mask_of(K::causal, 200, 1), inter, 4, 2, 64, false},
      {mask_of(K::causal, 50, 3), inter, 4, 4, 32, false},
      {mask_of(K::causal, 50, 3), stream, 4, 4, 32, false},
      {sliding(100, 2, 37), inter, 4, 2, 64, false},
      {sliding(100, 2, 37), stream, 4, 2, 64, false},
      {sliding(300, 1, 70), inter, 2, 1, 64, false},
      {mask_of(K::intra, 40, 4), inter, 4, 2, 64, false},
      {mask_of(K::intra, 40, 4), stream, 4, 2, 64, false},
      {mask_of(K::intra, 70, 3), stream, 2, 2, 48, false},
      {phd(PhdVariant::plain, 60, 3), inter, 4, 2, 32, false},
      {phd(PhdVariant::plain, 60, 3), split, 4, 2, 32, false},
      {phd(PhdVariant::swa, 90, 2, 16), inter, 2, 1, 64, false},
      {phd(PhdVariant::swa, 90, 2, 16), split, 2, 1, 64, false},
      {phd(PhdVariant::cswa, 50, 3, 5, 8), split, 2, 2, 32, false},
      {phd(PhdVariant::cswa, 50, 3, 5, 8), stream, 2, 2, 32, false},
      // GQA shapes and head dims that are not a multiple of the vector width.
      {mask_of(K::causal, 130, 1), inter, 8, 1, 32, false},
      {mask_of(K::intra, 80, 2), stream, 6, 3, 72, false},
      {mask_of(K::causal, 64, 1), inter, 2, 2, 40, false},
      {mask_of(K::causal, 1, 1), inter, 2, 1, 16, false},
      // KV mirror: only the final copy queries.
      {final_copy(mask_of(K::causal, 50, 4)), inter, 4, 2, 32, false},
      {final_copy(mask_of(K::intra, 40, 4)), stream, 4, 2, 32, false},
      // Decode steps: the last token's rows against the cache.
      {mask_of(K::causal, 100, 4), inter, 4, 2, 64, true},
      {mask_of(K::intra, 100, 4), inter, 4, 2, 64, true},
      {sliding(150, 2, 64), inter, 4, 1, 64, true},
      {phd(PhdVariant::plain, 80, 4), inter, 4, 2, 32, true},
      {phd(PhdVariant::swa, 100, 3, 16), inter, 4, 2, 64, true},
      {phd(PhdVariant::cswa, 70, 2, 8, 16), inter, 2, 1, 64, true},
      {final_copy(mask_of(K::causal, 100, 4)), inter, 4, 2, 64, true},
      // Attention sinks (gpt-oss): prefill and decode, full and sliding, GQA.
      {mask_of(K::causal, 200, 1), inter, 4, 2, 64, false, true},
      {sliding(300, 1, 70), inter, 8, 2, 64, false, true},
      {mask_of(K::causal, 50, 2), stream, 4, 4, 32, false, true},
      {sliding(150, 1, 64), inter, 4, 1, 64, true, true},
      {mask_of(K::causal, 100, 1), inter, 8, 1, 64, true, true},
      // Chunked local attention (Llama 4): chunks off tile multiples, HD streams, decode.
      {chunked(200, 1, 50), inter, 4, 2, 64, false},
      {chunked(300, 1, 64), inter, 4, 1, 64, false},
      {chunked(60, 3, 17), inter, 4, 2, 32, false},
      {chunked(170, 1, 32), inter, 4, 2, 64, true},
      {chunked(90, 2, 20), inter, 4, 2, 64, true, true},
  };
  std::vector<OpCase> out;
  std::uint64_t seed = 1000;
  for (const Row& r : rows) {
    AttentionCaseShape s{r.mask, r.layout, r.heads, r.kv_heads, r.hd, r.decode, r.sinks};
    out.push_back(attention_case(s, type, seed += 10));
  }
  return out;
}

std::vector<OpCase> attention_softmax_cases() {
  using K = MaskSpec::Kind;
  const Layout inter = Layout::interleaved;
  std::vector<OpCase> out;
  AttentionCaseShape causal{mask_of(K::causal, 150, 1), inter, 3, 1, 8};
  causal.sinks = true;
  out.push_back(attention_softmax_case({causal, 64, 86, 0, 150}, 990));  // partial and full tiles, sinks
  AttentionCaseShape cswa{phd(PhdVariant::cswa, 70, 2, 8, 16), inter, 2, 1, 8, true};
  out.push_back(attention_softmax_case({cswa, 0, 2, 10, 69}, 991));  // a PHD decode step (79 keys), keys from 10
  AttentionCaseShape window{sliding(200, 1, 8), inter, 2, 1, 8};
  out.push_back(attention_softmax_case({window, 150, 50, 0, 64}, 992));  // rows that see no key: zeros
  return out;
}

}  // namespace hdlab::executor
