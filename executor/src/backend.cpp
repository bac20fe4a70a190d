// The Backend base class: memory accounting, host transfers and the shape checks every
// op goes through before a backend sees it.
#include "hdlab/executor/backend.hpp"

#include <cmath>
#include <sstream>

#include "backend_checks.hpp"

namespace hdlab::executor {

using namespace checks;

namespace {

constexpr const char* kOpNames[] = {"gemm",         "attention",   "rms_norm",   "group_norm",      "rope",
                                    "swiglu",       "add",         "topk_routing",     "gather_rows",
                                    "scatter_add_rows", "ghc_dynamic", "ghc_width",    "ghc_depth",
                                    "module",           "causal_conv1d",  "gated_delta_rule", "gated_rms_norm",
                                    "sigmoid_gate",     "mamba2_ssd",     "relu2",            "convert",
                                    "gemm_batched",     "copy_strided",     "attention_softmax"};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == backend_op_count, "one name per BackendOp");

}  // namespace

const char* to_string(BackendOp op) { return kOpNames[static_cast<int>(op)]; }

OutOfMemoryError::OutOfMemoryError(std::string what, std::size_t needed, std::size_t available)
    : BackendError(std::move(what)), needed_(needed), available_(available) {}

// ---- memory ------------------------------------------------------------------------

Tensor Backend::allocate(Shape shape, ScalarType type) {
  for (auto d : shape) require(d >= 0, "allocate", "negative extent in " + to_string(shape));
  const std::size_t bytes = static_cast<std::size_t>(element_count(shape)) * scalar_bytes(type);
  void* ptr = bytes ? raw_allocate(bytes) : nullptr;
  const std::size_t now = allocated_.fetch_add(bytes) + bytes;
  std::size_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
  return Tensor(std::make_shared<Storage>(this, ptr, bytes), 0, type, std::move(shape));
}

void Backend::release(void* ptr, std::size_t bytes) noexcept {
  if (ptr) raw_free(ptr, bytes);
  allocated_.fetch_sub(bytes);
}

MemoryStats Backend::memory() const {
  return MemoryStats{allocated_.load(), peak_.load(), available_bytes(), total_bytes()};
}

void Backend::reset_peak() { peak_.store(allocated_.load()); }

void Backend::require_fits(std::size_t bytes) const {
  const std::size_t available = available_bytes();
  if (bytes > available) {
    std::ostringstream o;
    o << name() << ": needs " << bytes << " bytes (" << static_cast<double>(bytes) / (1 << 30) << " GiB), "
      << available << " bytes (" << static_cast<double>(available) / (1 << 30) << " GiB) available";
    throw OutOfMemoryError(o.str(), bytes, available);
  }
}

void Backend::check_owned(const Tensor& t, const char* what) const {
  if (!t.defined()) throw BackendError(std::string(what) + ": undefined tensor");
  if (t.owner() != this) throw BackendError(std::string(what) + ": tensor belongs to another backend");
}

void Backend::check_supported(BackendOp op, ScalarType type) const {
  if (!supports(op, type))
    throw BackendError(name() + " backend does not support " + to_string(op) + " in " + to_string(type));
}

// ---- host transfers ----------------------------------------------------------------

void Backend::upload(const Tensor& dst, std::span<const float> host) {
  check_owned(dst, "upload");
  require(static_cast<std::int64_t>(host.size()) == dst.numel(), "upload",
          std::to_string(host.size()) + " floats into " + shape_of(dst));
  if (host.empty()) return;  // an empty tensor has no storage to copy into
  if (dst.type() == ScalarType::f32) return copy_from_host(dst, host.data());
  require(dst.type() == ScalarType::bf16, "upload", std::string("floats into a tensor of ") + to_string(dst.type()));
  std::vector<std::uint16_t> staged(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) staged[i] = f32_to_bf16(host[i]);
  copy_from_host(dst, staged.data());
}

void Backend::upload(const Tensor& dst, std::span<const std::int32_t> host) {
  check_owned(dst, "upload");
  require_type(dst, ScalarType::i32, "upload", "destination");
  require(static_cast<std::int64_t>(host.size()) == dst.numel(), "upload",
          std::to_string(host.size()) + " ints into " + shape_of(dst));
  if (!host.empty()) copy_from_host(dst, host.data());
}

std::vector<float> Backend::download_f32(const Tensor& src) {
  check_owned(src, "download");
  std::vector<float> out(static_cast<std::size_t>(src.numel()));
  if (src.type() == ScalarType::f32) {
    copy_to_host(src, out.data());
    return out;
  }
  require(src.type() == ScalarType::bf16, "download_f32", std::string("tensor of ") + to_string(src.type()));
  std::vector<std::uint16_t> staged(out.size());
  copy_to_host(src, staged.data());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = bf16_to_f32(staged[i]);
  return out;
}

std::vector<std::int32_t> Backend::download_i32(const Tensor& src) {
  check_owned(src, "download");
  require_type(src, ScalarType::i32, "download_i32", "source");
  std::vector<std::int32_t> out(static_cast<std::size_t>(src.numel()));
  copy_to_host(src, out.data());
  return out;
}

void Backend::copy(const Tensor& src, const Tensor& dst) {
  check_owned(src, "copy");
  check_owned(dst, "copy");
  require(src.type() == dst.type() && src.numel() == dst.numel(), "copy",
          shape_of(src) + " " + to_string(src.type()) + " into " + shape_of(dst) + " " + to_string(dst.type()));
  require(!src.overlaps(dst), "copy", "source and destination overlap");
  if (src.numel()) copy_impl(src, dst);
}

void Backend::fill_zero(const Tensor& t) {
  check_owned(t, "fill_zero");
  if (t.numel()) fill_zero_impl(t);
}

void Backend::convert(const Tensor& src, const Tensor& dst) {
  check_owned(src, "convert");
  check_owned(dst, "convert");
  require_float(src, "convert", "source");
  require_float(dst, "convert", "destination");
  require(src.numel() == dst.numel(), "convert", shape_of(src) + " into " + shape_of(dst));
  check_supported(BackendOp::convert, src.type());
  check_supported(BackendOp::convert, dst.type());
  if (src.numel()) convert_impl(src, dst);
}

// ---- ops ---------------------------------------------------------------------------

void Backend::gemm(const Tensor& a, bool trans_a, const Tensor& b, bool trans_b, const Tensor& c, float alpha,
                   float beta) {
  for (const Tensor* t : {&a, &b, &c}) check_owned(*t, "gemm");
  require(a.type() == b.type() && b.type() == c.type(), "gemm", "a, b and c must share one element type");
  check_supported(BackendOp::gemm, a.type());
  const std::int64_t m = trans_a ? a.matrix_cols() : a.matrix_rows();
  const std::int64_t k = trans_a ? a.matrix_rows() : a.matrix_cols();
  const std::int64_t kb = trans_b ? b.matrix_cols() : b.matrix_rows();
  const std::int64_t n = trans_b ? b.matrix_rows() : b.matrix_cols();
  require(k == kb, "gemm", "inner dimensions differ: a " + shape_of(a) + (trans_a ? "^T" : "") + ", b " +
                               shape_of(b) + (trans_b ? "^T" : ""));
  require(c.matrix_rows() == m && c.matrix_cols() == n, "gemm",
          "c " + shape_of(c) + " must be [" + std::to_string(m) + ", " + std::to_string(n) + "]");
  require(!c.overlaps(a) && !c.overlaps(b), "gemm", "c overlaps an input");
  if (m && n) gemm_impl(a, trans_a, b, trans_b, c, alpha, beta);
}

void Backend::attention(const Tensor& q, const Tensor& k, const Tensor& v, const TilePlan& plan, const Tensor& out,
                        float scale, const Tensor& sinks) {
  for (const Tensor* t : {&q, &k, &v, &out}) check_owned(*t, "attention");
  require(q.type() == k.type() && k.type() == v.type() && v.type() == out.type(), "attention",
          "q, k, v and out must share one element type");
  check_supported(BackendOp::attention, q.type());
  require(q.rank() == 3 && k.rank() == 3 && v.rank() == 3 && out.rank() == 3, "attention",
          "q [Lq, H, dk], k [Lk, G, dk], v [Lk, G, dw] and out [Lq, H, dv] expected, got q " + shape_of(q) + ", k " +
              shape_of(k) + ", v " + shape_of(v) + ", out " + shape_of(out));
  const std::int64_t heads = q.dim(1), kv_heads = k.dim(1), hd = q.dim(2);
  require(kv_heads > 0 && heads % kv_heads == 0, "attention",
          "query heads " + std::to_string(heads) + " not a multiple of kv heads " + std::to_string(kv_heads));
  require(k.dim(2) == hd, "attention", "q and k head dims differ");
  require(v.dim(0) == k.dim(0) && v.dim(1) == kv_heads, "attention",
          "v " + shape_of(v) + " must have k's keys and kv heads, k is " + shape_of(k));
  require(out.dim(0) == q.dim(0) && out.dim(1) == heads && out.dim(2) >= 1 && out.dim(2) <= v.dim(2), "attention",
          "out " + shape_of(out) + " must be [Lq, H, dv] with 1 <= dv <= v's " + std::to_string(v.dim(2)) +
              " for q " + shape_of(q));
  require(q.dim(0) == plan.query_rows() && k.dim(0) == plan.key_rows(), "attention",
          "plan is for " + std::to_string(plan.query_rows()) + " query rows x " + std::to_string(plan.key_rows()) +
              " keys, tensors give " + std::to_string(q.dim(0)) + " x " + std::to_string(k.dim(0)));
  require(!out.overlaps(q) && !out.overlaps(k) && !out.overlaps(v), "attention", "out overlaps an input");
  if (sinks.defined()) {
    check_owned(sinks, "attention");
    require_type(sinks, ScalarType::f32, "attention", "sinks");
    require_shape(sinks, {heads}, "attention", "sinks");
  }
  if (!q.numel()) return;
  if (fused_attention_fits(hd, out.dim(2))) attention_impl(q, k, v, plan, out, scale, sinks);
  else attention_in_parts(q, k, v, plan, out, scale, sinks);
}

void Backend::attention_softmax(const Tensor& scores, const TilePlan& plan, std::int64_t row0, std::int64_t key0,
                                float scale, const Tensor& sinks) {
  const char* op = "attention_softmax";
  check_owned(scores, op);
  require_type(scores, ScalarType::f32, op, "scores");
  check_supported(BackendOp::attention_softmax, ScalarType::f32);
  require(scores.rank() == 3, op, "scores [H, R, K] expected, got " + shape_of(scores));
  require(row0 >= 0 && key0 >= 0 && row0 + scores.dim(1) <= plan.query_rows() && key0 + scores.dim(2) <= plan.key_rows(),
          op, "rows " + std::to_string(row0) + " + " + std::to_string(scores.dim(1)) + " and keys " +
                  std::to_string(key0) + " + " + std::to_string(scores.dim(2)) + " must lie in the plan's " +
                  std::to_string(plan.query_rows()) + " x " + std::to_string(plan.key_rows()));
  if (sinks.defined()) {
    check_owned(sinks, op);
    require_type(sinks, ScalarType::f32, op, "sinks");
    require_shape(sinks, {scores.dim(0)}, op, "sinks");
  }
  if (scores.numel()) attention_softmax_impl(scores, plan, row0, key0, scale, sinks);
}

void Backend::rms_norm(const Tensor& x, const Tensor& weight, float eps, const Tensor& out) {
  for (const Tensor* t : {&x, &weight, &out}) check_owned(*t, "rms_norm");
  require_float(x, "rms_norm", "x");
  check_supported(BackendOp::rms_norm, x.type());
  require_type(weight, ScalarType::f32, "rms_norm", "weight");
  require(out.type() == x.type() && out.shape() == x.shape(), "rms_norm", "out must match x");
  require_shape(weight, {x.matrix_cols()}, "rms_norm", "weight");
  require(out.same_view(x) || !out.overlaps(x), "rms_norm", "out must be x or apart from it");
  if (x.numel()) rms_norm_impl(x, weight, eps, out);
}

void Backend::group_norm(const Tensor& x, std::int64_t group_size, const Tensor& weight, const Tensor& bias,
                         float eps, const Tensor& out) {
  for (const Tensor* t : {&x, &weight, &bias, &out}) check_owned(*t, "group_norm");
  require_float(x, "group_norm", "x");
  check_supported(BackendOp::group_norm, x.type());
  const std::int64_t width = x.matrix_cols();
  require(group_size >= 1 && width % group_size == 0, "group_norm",
          "rows of " + std::to_string(width) + " are not whole groups of " + std::to_string(group_size));
  require(out.type() == x.type() && out.shape() == x.shape(), "group_norm", "out must match x");
  require_type(weight, ScalarType::f32, "group_norm", "weight");
  require_type(bias, ScalarType::f32, "group_norm", "bias");
  require_shape(weight, {width}, "group_norm", "weight");
  require_shape(bias, {width}, "group_norm", "bias");
  require(out.same_view(x) || !out.overlaps(x), "group_norm", "out must be x or apart from it");
  if (x.numel()) group_norm_impl(x, group_size, weight, bias, eps, out);
}

void Backend::rope(const Tensor& x, const Tensor& positions, std::span<const double> inv_freq, double cos_sin_factor) {
  check_owned(x, "rope");
  check_owned(positions, "rope");
  require_float(x, "rope", "x");
  check_supported(BackendOp::rope, x.type());
  require(x.rank() == 3, "rope", "x must be [T, heads, hd], is " + shape_of(x));
  const auto r = 2 * static_cast<std::int64_t>(inv_freq.size());
  require(r > 0 && r <= x.dim(2), "rope",
          "the rotated dims (2 per frequency) must be within the head dim " + std::to_string(x.dim(2)) + ", got " +
              std::to_string(r));
  require_type(positions, ScalarType::i32, "rope", "positions");
  require_shape(positions, {x.dim(0)}, "rope", "positions");
  for (double f : inv_freq) require(std::isfinite(f) && f > 0, "rope", "inverse frequencies must be finite and > 0");
  require(std::isfinite(cos_sin_factor) && cos_sin_factor > 0, "rope", "cos_sin_factor must be finite and > 0");
  if (x.numel()) rope_impl(x, positions, inv_freq, cos_sin_factor);
}

void Backend::relu2(const Tensor& x, const Tensor& out) {
  check_owned(x, "relu2");
  check_owned(out, "relu2");
  require_float(x, "relu2", "x");
  check_supported(BackendOp::relu2, x.type());
  require(out.type() == x.type() && out.shape() == x.shape(), "relu2",
          "out must match x " + shape_of(x) + ", is " + shape_of(out));
  require(out.same_view(x) || !out.overlaps(x), "relu2", "out must be x or apart from it");
  if (x.numel()) relu2_impl(x, out);
}

void Backend::swiglu(const Tensor& gate_up, const Tensor& out, SwigluClamp clamp) {
  check_owned(gate_up, "swiglu");
  check_owned(out, "swiglu");
  require_float(gate_up, "swiglu", "gate_up");
  check_supported(BackendOp::swiglu, gate_up.type());
  require(out.type() == gate_up.type(), "swiglu", "out must have gate_up's type");
  require(gate_up.matrix_cols() % 2 == 0 && out.matrix_rows() == gate_up.matrix_rows() &&
              out.matrix_cols() * 2 == gate_up.matrix_cols(),
          "swiglu", "gate_up [T, 2F] and out [T, F] expected, got " + shape_of(gate_up) + ", " + shape_of(out));
  require(!out.overlaps(gate_up), "swiglu", "out overlaps gate_up");
  require(clamp.limit >= 0 && (clamp.limit == 0 || clamp.alpha > 0), "swiglu",
          "a clamped SwiGLU needs limit >= 0 and alpha > 0");
  if (out.numel()) swiglu_impl(gate_up, out, clamp);
}

void Backend::add(const Tensor& a, const Tensor& b, const Tensor& out) {
  for (const Tensor* t : {&a, &b, &out}) check_owned(*t, "add");
  require_float(a, "add", "a");
  check_supported(BackendOp::add, a.type());
  require(a.type() == b.type() && b.type() == out.type(), "add", "a, b and out must share one element type");
  require(a.shape() == b.shape() && b.shape() == out.shape(), "add", "shapes differ");
  require((out.same_view(a) || !out.overlaps(a)) && (out.same_view(b) || !out.overlaps(b)), "add",
          "out must be a, b or apart from both");
  if (out.numel()) add_impl(a, b, out);
}

void Backend::topk_routing(const Tensor& logits, std::int64_t k, model::RouterKind score, bool normalize,
                           const Tensor& expert_ids, const Tensor& weights) {
  for (const Tensor* t : {&logits, &expert_ids, &weights}) check_owned(*t, "topk_routing");
  require_float(logits, "topk_routing", "logits");
  check_supported(BackendOp::topk_routing, logits.type());
  const std::int64_t tokens = logits.matrix_rows(), experts = logits.matrix_cols();
  require(k >= 1 && k <= experts, "topk_routing", "k = " + std::to_string(k) + " of " + std::to_string(experts));
  require_type(expert_ids, ScalarType::i32, "topk_routing", "expert_ids");
  require_type(weights, ScalarType::f32, "topk_routing", "weights");
  require_shape(expert_ids, {tokens, k}, "topk_routing", "expert_ids");
  require_shape(weights, {tokens, k}, "topk_routing", "weights");
  if (tokens) topk_routing_impl(logits, k, score, normalize, expert_ids, weights);
}

void Backend::gather_rows(const Tensor& table, const Tensor& ids, const Tensor& out, RowMap map) {
  for (const Tensor* t : {&table, &ids, &out}) check_owned(*t, "gather_rows");
  require(table.type() != ScalarType::i32 && table.type() == out.type(), "gather_rows",
          "table and out must share one float type");
  check_supported(BackendOp::gather_rows, table.type());
  require_type(ids, ScalarType::i32, "gather_rows", "ids");
  require(ids.rank() == 1, "gather_rows", "ids must be [n], is " + shape_of(ids));
  require(out.matrix_cols() == table.matrix_cols(), "gather_rows", "out and table rows differ in width");
  const std::int64_t n = ids.dim(0);
  require(map.first >= 0 && map.stride >= 1 && (n == 0 || map.first + (n - 1) * map.stride < out.matrix_rows()),
          "gather_rows", "row map runs past out " + shape_of(out));
  require(!out.overlaps(table), "gather_rows", "out overlaps the table");
  if (n) gather_rows_impl(table, ids, out, map);
}

void Backend::scatter_add_rows(const Tensor& src, const Tensor& ids, const Tensor& weights, const Tensor& out) {
  for (const Tensor* t : {&src, &ids, &weights, &out}) check_owned(*t, "scatter_add_rows");
  require_float(src, "scatter_add_rows", "src");
  check_supported(BackendOp::scatter_add_rows, src.type());
  require(out.type() == src.type(), "scatter_add_rows", "out must have src's type");
  require_type(ids, ScalarType::i32, "scatter_add_rows", "ids");
  require_type(weights, ScalarType::f32, "scatter_add_rows", "weights");
  const std::int64_t n = src.matrix_rows();
  require_shape(ids, {n}, "scatter_add_rows", "ids");
  require_shape(weights, {n}, "scatter_add_rows", "weights");
  require(out.matrix_cols() == src.matrix_cols(), "scatter_add_rows", "out and src rows differ in width");
  require(!out.overlaps(src), "scatter_add_rows", "out overlaps src");
  if (n) scatter_add_rows_impl(src, ids, weights, out);
}

void Backend::ghc_dynamic(const Tensor& hn, const Tensor& w_dyn, const Tensor& scale, const Tensor& static_a,
                          const Tensor& static_b, const Tensor& alpha, const Tensor& beta) {
  for (const Tensor* t : {&hn, &w_dyn, &scale, &static_a, &static_b, &alpha, &beta}) check_owned(*t, "ghc_dynamic");
  require_float(hn, "ghc_dynamic", "hn");
  check_supported(BackendOp::ghc_dynamic, hn.type());
  require(hn.rank() == 3, "ghc_dynamic", "hn must be [T, n, s], is " + shape_of(hn));
  const std::int64_t tokens = hn.dim(0), n = hn.dim(1), s = hn.dim(2);
  require(static_b.rank() == 2 && static_b.dim(1) == n, "ghc_dynamic", "static_b must be [m, n]");
  const std::int64_t m = static_b.dim(0);
  require(m >= 1 && m <= n, "ghc_dynamic", "need 1 <= m <= n");
  require(w_dyn.type() == hn.type(), "ghc_dynamic", "w_dyn must have hn's type");
  require_shape(w_dyn, {s, 2 * m + n}, "ghc_dynamic", "w_dyn");
  for (const Tensor* t : {&scale, &static_a, &static_b, &alpha, &beta})
    require_type(*t, ScalarType::f32, "ghc_dynamic", "coefficients");
  require_shape(scale, {2 * m + n}, "ghc_dynamic", "scale");
  require_shape(static_a, {n, m + n}, "ghc_dynamic", "static_a");
  require_shape(alpha, {tokens, n, m + n}, "ghc_dynamic", "alpha");
  require_shape(beta, {tokens, m, n}, "ghc_dynamic", "beta");
  if (tokens) ghc_dynamic_impl(hn, w_dyn, scale, static_a, static_b, alpha, beta);
}

void Backend::ghc_width(const Tensor& h, const Tensor& alpha, const Tensor& x, const Tensor& carry) {
  for (const Tensor* t : {&h, &alpha, &x, &carry}) check_owned(*t, "ghc_width");
  require_float(h, "ghc_width", "h");
  check_supported(BackendOp::ghc_width, h.type());
  require(h.rank() == 3 && alpha.rank() == 3, "ghc_width", "h [T, n, s] and alpha [T or 1, n, m+n] expected");
  const std::int64_t tokens = h.dim(0), n = h.dim(1), s = h.dim(2);
  const std::int64_t m = alpha.dim(2) - n;
  require_type(alpha, ScalarType::f32, "ghc_width", "alpha");
  require((alpha.dim(0) == tokens || alpha.dim(0) == 1) && alpha.dim(1) == n && m >= 1 && m <= n, "ghc_width",
          "alpha must be [T or 1, n, m+n] with 1 <= m <= n, is " + shape_of(alpha));
  require(x.type() == h.type() && carry.type() == h.type(), "ghc_width", "x and carry must have h's type");
  require_shape(x, {tokens, m, s}, "ghc_width", "x");
  require_shape(carry, {tokens, n, s}, "ghc_width", "carry");
  require(!x.overlaps(h) && !carry.overlaps(h) && !x.overlaps(carry), "ghc_width", "outputs overlap");
  if (tokens) ghc_width_impl(h, alpha, x, carry);
}

void Backend::ghc_depth(const Tensor& z, const Tensor& beta, const Tensor& carry, const Tensor& out) {
  for (const Tensor* t : {&z, &beta, &carry, &out}) check_owned(*t, "ghc_depth");
  require_float(z, "ghc_depth", "z");
  check_supported(BackendOp::ghc_depth, z.type());
  require(z.rank() == 3 && carry.rank() == 3 && beta.rank() == 3, "ghc_depth",
          "z [T, m, s], beta [T or 1, m, n], carry [T, n, s] expected");
  const std::int64_t tokens = z.dim(0), m = z.dim(1), s = z.dim(2), n = carry.dim(1);
  require_type(beta, ScalarType::f32, "ghc_depth", "beta");
  require((beta.dim(0) == tokens || beta.dim(0) == 1) && beta.dim(1) == m && beta.dim(2) == n, "ghc_depth",
          "beta must be [T or 1, m, n], is " + shape_of(beta));
  require(carry.type() == z.type() && out.type() == z.type(), "ghc_depth", "carry and out must have z's type");
  require_shape(carry, {tokens, n, s}, "ghc_depth", "carry");
  require_shape(out, carry.shape(), "ghc_depth", "out");
  require((out.same_view(carry) || !out.overlaps(carry)) && !out.overlaps(z), "ghc_depth",
          "out must be carry or apart from it, and apart from z");
  if (tokens) ghc_depth_impl(z, beta, carry, out);
}

void Backend::run(const ModuleOp& op, const ModuleOpCall& call) {
  for (const Tensor& t : call.tensors) check_owned(t, op.name);
  require(op.typed_operand < call.tensors.size(), op.name, "the call has no operand " + std::to_string(op.typed_operand));
  const ScalarType type = call.tensors[op.typed_operand].type();
  if (!supports(op, type))
    throw BackendError(name() + " backend does not support " + op.name + " in " + to_string(type));
  op.check(call);
  run_impl(op, call);
}

std::vector<float> random_floats(std::size_t count, std::uint64_t seed, float lo, float hi) {
  // splitmix64: the same numbers on every platform (std distributions are not portable).
  std::vector<float> out(count);
  std::uint64_t state = seed;
  for (auto& x : out) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const double unit = static_cast<double>(z >> 11) * 0x1.0p-53;
    x = static_cast<float>(lo + (hi - lo) * unit);
  }
  return out;
}

}  // namespace hdlab::executor
