// Op cases of the strided-batch ops (Backend::gemm_batched, copy_strided) and of the
// attention shapes multi-head latent attention uses (runner_mla.cpp): values narrower
// than the keys, and the absorbed decode's [latent | rope key] entries read as keys and
// (their first kv_lora_rank) as values.
#include "hdlab/executor/op_cases.hpp"

#include "op_case_support.hpp"

namespace hdlab::executor {

using namespace detail;

OpCase gemm_batched_case(model::OpKind kind, const StridedGemmCaseShape& s, ScalarType type, std::uint64_t seed) {
  OpCase c;
  c.name = shape_name("gemm_batched", {{"batch", s.batch}, {"M", s.m}, {"N", s.n}, {"K", s.k}}, type) +
           (s.trans_a ? " At" : "") + (s.trans_b ? " Bt" : "") + " (" + model::to_string(kind) + ")";
  c.op = BackendOp::gemm_batched;
  c.kind = kind;
  c.type = type;
  const double products = static_cast<double>(s.batch * s.m * s.n);
  c.cost.flops = 2.0 * products * static_cast<double>(s.k);
  c.cost.act_bytes_in = bytes_of(s.batch * s.m * s.k, type);
  c.cost.weight_bytes = bytes_of(s.batch * s.n * s.k, type);
  c.cost.act_bytes_out = bytes_of(s.batch * s.m * s.n, type);
  c.executed_flops = c.cost.flops;
  // as gemm_case: error about K u in f32; bf16 rounds the output
  c.tolerance = type == ScalarType::bf16 ? Tolerance{2e-5 * static_cast<double>(s.k), 8e-3}
                                         : Tolerance{1e-6 * static_cast<double>(s.k), 1e-5};
  auto a = host_floats(static_cast<std::size_t>(s.a_size), seed, type);
  auto b = host_floats(static_cast<std::size_t>(s.b_size), seed + 1, type);
  auto c0 = host_floats(static_cast<std::size_t>(s.c_size), seed + 2, type);
  auto ref = lazy<Doubles>([=] {
    return gemm_batched_reference(to_doubles(*a), s.a, s.trans_a, to_doubles(*b), s.b, s.trans_b, to_doubles(*c0), s.c,
                                  s.batch, s.m, s.n, s.k);
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor ta = be.allocate({s.a_size}, type), tb = be.allocate({s.b_size}, type);
    const Tensor tc = be.allocate({s.c_size}, type);
    p->input(ta, a);
    p->input(tb, b);
    p->input(tc, c0);  // elements outside the products must stay as they are
    p->set([bp = &be, ta, tb, tc, s] {
             bp->gemm_batched(ta, s.a, s.trans_a, tb, s.b, s.trans_b, tc, s.c, s.batch, s.m, s.n, s.k);
           },
           [bp = &be, tc, ref, tol] { return compare(bp->download_f32(tc), ref->get(), tol, "c"); });
    return p;
  };
  return c;
}

OpCase copy_strided_case(const StridedCopyCaseShape& s, ScalarType type, std::uint64_t seed) {
  OpCase c;
  c.name = shape_name("copy_strided", {{"batch", s.batch}, {"rows", s.rows}, {"cols", s.cols}}, type) +
           (s.src.batch_stride == 0 && s.batch > 1 ? " broadcast" : "");
  c.op = BackendOp::copy_strided;
  c.kind = model::OpKind::qkv_proj;
  c.type = type;
  c.cost.act_bytes_in = bytes_of(s.batch * s.rows * s.cols, type);
  c.cost.act_bytes_out = c.cost.act_bytes_in;
  c.tolerance = Tolerance{0, 0};  // a copy is exact
  auto src = host_floats(static_cast<std::size_t>(s.src_size), seed, type);
  auto dst0 = host_floats(static_cast<std::size_t>(s.dst_size), seed + 1, type);
  auto ref = lazy<Doubles>([=] {
    return copy_strided_reference(to_doubles(*src), s.src, to_doubles(*dst0), s.dst, s.batch, s.rows, s.cols);
  });
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor ts = be.allocate({s.src_size}, type), td = be.allocate({s.dst_size}, type);
    p->input(ts, src);
    p->input(td, dst0);
    p->set([bp = &be, ts, td, s] { bp->copy_strided(ts, s.src, td, s.dst, s.batch, s.rows, s.cols); },
           [bp = &be, td, ref] { return compare(bp->download_f32(td), ref->get(), Tolerance{0, 0}, "dst"); });
    return p;
  };
  return c;
}

// An MLA layer of H = 3 heads at R = 5 rows, nope 16, rope 8, v 12, kv_lora 24 (the layouts
// of runner_mla.cpp), plus an odd shape; its attention shapes, prefill and absorbed decode.
std::vector<OpCase> mla_correctness_cases(ScalarType t) {
  const std::int64_t H = 3, R = 5, nope = 16, rope = 8, dv = 12, kvl = 24, qk = nope + rope, row = dv + nope;
  const std::int64_t width = kvl + rope;
  std::vector<OpCase> out;
  // absorbed query: q_nope of each head [R, nope] x W_UK,h [nope, kvl] from kv_b
  out.push_back(gemm_batched_case(model::OpKind::qkv_proj,
                                  {H, R, kvl, nope, false, false, {rope, H * qk, qk}, {dv * kvl, kvl, row * kvl},
                                   {0, H * width, width}, R * H * qk, H * row * kvl, R * H * width},
                                  t, 3000));
  // W_UV per head: [R, kvl] x W_UV,h^T
  out.push_back(gemm_batched_case(model::OpKind::o_proj,
                                  {H, R, dv, kvl, false, true, {0, H * kvl, kvl}, {0, kvl, row * kvl}, {0, H * dv, dv},
                                   R * H * kvl, H * row * kvl, R * H * dv},
                                  t, 3001));
  // odd sizes, A transposed, one matrix of B broadcast (batch stride 0)
  out.push_back(gemm_batched_case(model::OpKind::qkv_proj,
                                  {4, 7, 9, 11, true, false, {3, 7, 80}, {1, 9, 0}, {2, 10, 75}, 3 + 3 * 80 + 10 * 7 + 7,
                                   1 + 11 * 9, 2 + 3 * 75 + 6 * 10 + 9 + 5},
                                  t, 3002));
  // key assembly: the shared rope key to every head, each head's k nope; the query's rope part
  out.push_back(copy_strided_case({H, R, rope, {0, rope, 0}, {0, H * qk, qk}, R * rope, R * H * qk}, t, 3010));
  out.push_back(
      copy_strided_case({H, R, nope, {dv, H * row, row}, {rope, H * qk, qk}, R * H * row, R * H * qk}, t, 3011));
  out.push_back(copy_strided_case({H, R, rope, {0, H * qk, qk}, {kvl, H * width, width}, R * H * qk, R * H * width}, t,
                                  3012));
  AttentionCaseShape prefill;
  prefill.mask.kind = model::MaskSpec::Kind::causal;
  prefill.mask.tokens = 37;
  prefill.heads = prefill.kv_heads = H;
  prefill.head_dim = qk;
  prefill.v_head_dim = dv;
  prefill.v_row_dim = row;
  out.push_back(attention_case(prefill, t, 3020));
  AttentionCaseShape decode = prefill;  // one KV head: the entries; values their first kvl
  decode.decode = true;
  decode.kv_heads = 1;
  decode.head_dim = width;
  decode.v_head_dim = kvl;
  decode.v_row_dim = width;
  out.push_back(attention_case(decode, t, 3021));
  // DeepSeek-V2's absorbed decode: entries of 512 latent + 64 rope dims, wider than the
  // CUDA kernel holds (so CUDA composes it of other ops: Backend::attention_in_parts)
  AttentionCaseShape wide = decode;
  wide.mask.tokens = 70;
  wide.heads = 2;
  wide.head_dim = wide.v_row_dim = 576;
  wide.v_head_dim = 512;
  out.push_back(attention_case(wide, t, 3022));
  return out;
}

}  // namespace hdlab::executor
