// Attention composed of other ops (Backend::attention_in_parts), for head dims a backend's
// fused kernel cannot hold: CUDA's keeps a query row's dims in registers, at most 256, and
// DeepSeek's absorbed decode scores 512 + 64 dims per row (runner_mla.cpp). Per chunk of
// query tiles and the span of keys their visible tiles cover:
//   S_h = q_h k_g^T        gemm_batched, one call per KV head g over its H/G query heads
//   P = masked softmax(S)  attention_softmax, in place (the plan's mask, the scale, sinks)
//   out_h = P_h v_g        gemm_batched, the first dv of each value row
// in f32: bf16 inputs are widened first and the output narrowed last, as the fused kernels
// also compute in f32. One chunk's scores stay under kScoreBytes (a chunk is at least one
// query tile). Pairs inside the span that a row does not see cost work, not results: the
// path gives up the fused kernel's tile skipping to take any head dim. The CPU backend runs
// it when told to (CpuOptions::fused_attention_max_dims), which is how it is tested without
// a GPU.
#include <algorithm>

#include "backend_checks.hpp"

namespace hdlab::executor {

namespace {

constexpr std::int64_t kScoreBytes = std::int64_t{64} << 20;

struct KeySpan {
  std::int64_t first = 0, count = 0;  // keys; count 0: the rows see none
};

// The keys from the first to the last tile that query tiles [qt0, qt1) see.
KeySpan visible_keys(const TilePlan& plan, std::int64_t qt0, std::int64_t qt1) {
  std::int64_t lo = plan.k_tiles(), hi = -1;
  for (std::int64_t qt = qt0; qt < qt1; ++qt)
    for (std::int64_t kt = 0; kt < plan.k_tiles(); ++kt)
      if (plan.at(qt, kt) != TileClass::skip) {
        lo = std::min(lo, kt);
        hi = std::max(hi, kt);
      }
  if (hi < 0) return {};
  const std::int64_t first = lo * kTileK;
  return {first, std::min(plan.key_rows(), (hi + 1) * kTileK) - first};
}

}  // namespace

void Backend::attention_in_parts(const Tensor& q, const Tensor& k, const Tensor& v, const TilePlan& plan,
                                 const Tensor& out, float scale, const Tensor& sinks) {
  const std::int64_t Lq = q.dim(0), H = q.dim(1), G = k.dim(1), hd = q.dim(2), dw = v.dim(2), dv = out.dim(2);
  const std::int64_t per_group = H / G;
  const bool widen = q.type() != ScalarType::f32;
  auto widened = [&](const Tensor& t) {
    if (!widen) return t;
    const Tensor wide = allocate(t.shape(), ScalarType::f32);
    convert(t, wide);
    return wide;
  };
  const Tensor q32 = widened(q), k32 = widened(k);
  const Tensor v32 = v.same_view(k) ? k32 : widened(v);  // MLA's absorbed decode: values are the keys
  const Tensor o32 = widen ? allocate(out.shape(), ScalarType::f32) : out;

  const std::int64_t key_rows = std::max<std::int64_t>(1, plan.key_rows());
  const std::int64_t tiles = std::max<std::int64_t>(1, kScoreBytes / (H * key_rows * 4 * kTileQ));
  const Tensor scores = allocate({H * std::min(Lq, tiles * kTileQ) * key_rows}, ScalarType::f32);
  for (std::int64_t qt0 = 0; qt0 < plan.q_tiles(); qt0 += tiles) {
    const std::int64_t qt1 = std::min(plan.q_tiles(), qt0 + tiles);
    const std::int64_t row0 = qt0 * kTileQ, R = std::min(Lq, qt1 * kTileQ) - row0;
    const KeySpan keys = visible_keys(plan, qt0, qt1);
    if (keys.count == 0) {
      fill_zero(o32.slice_rows(row0, R));
      continue;
    }
    const std::int64_t K = keys.count;
    const Tensor s = scores.slice_rows(0, H * R * K).reshaped({H, R, K});
    for (std::int64_t g = 0; g < G; ++g)  // S_h = q_h k_g^T, [R, K] per head h of group g
      gemm_batched(q32, {(row0 * H + g * per_group) * hd, H * hd, hd}, false, k32, {(keys.first * G + g) * hd, G * hd, 0},
                   true, s, {g * per_group * R * K, K, R * K}, per_group, R, K, hd);
    attention_softmax(s, plan, row0, keys.first, scale, sinks);
    for (std::int64_t g = 0; g < G; ++g)  // out_h = P_h v_g, [R, dv] per head
      gemm_batched(s, {g * per_group * R * K, K, R * K}, false, v32, {(keys.first * G + g) * dw, G * dw, 0}, false, o32,
                   {(row0 * H + g * per_group) * dv, H * dv, dv}, per_group, R, dv, K);
  }
  if (widen) convert(o32, out);
}

}  // namespace hdlab::executor
