// mHC's coefficients op (hdlab/executor/designs/mhc_op.hpp): its check, its CPU kernel,
// its double-precision reference and its op cases. The CUDA kernel is mhc_op.cu.
#include "hdlab/executor/designs/mhc_op.hpp"

#include <cblas.h>

#include <cmath>
#include <sstream>

#include "../backend_checks.hpp"
#include "../op_case_support.hpp"
#include "hdlab/model/layer_program.hpp"
#include "mhc_coefficients.hpp"

namespace hdlab::executor {

using namespace checks;
using namespace detail;

namespace {

constexpr const char* kName = kMhcCoefficientsOp;

void check_call(const ModuleOpCall& call) {
  require(call.tensors.size() == 6 && call.scalars.size() == 2, kName,
          "takes h, phi, bias, scale, alpha, beta and (iterations, eps)");
  const Tensor &h = call.tensors[0], &phi = call.tensors[1], &bias = call.tensors[2], &scale = call.tensors[3],
               &alpha = call.tensors[4], &beta = call.tensors[5];
  require_float(h, kName, "h");
  require(h.rank() == 3, kName, "h must be [T, n, D], is " + shape_of(h));
  const std::int64_t tokens = h.dim(0), n = h.dim(1), D = h.dim(2), c = n * n + 2 * n;
  require(call.scalars[0] >= 1 && call.scalars[0] == std::floor(call.scalars[0]), kName,
          "needs a whole number of Sinkhorn iterations, at least one");
  require(phi.type() == h.type(), kName, "phi must have h's type");
  require_shape(phi, {n * D, c}, kName, "phi");
  for (const Tensor* t : {&bias, &scale, &alpha, &beta}) require_type(*t, ScalarType::f32, kName, "coefficients");
  require_shape(bias, {c}, kName, "bias");
  require_shape(scale, {3}, kName, "scale");
  require_shape(alpha, {tokens, n, 1 + n}, kName, "alpha");
  require_shape(beta, {tokens, 1, n}, kName, "beta");
}

void run_cpu(const ModuleOpCall& call, CpuWorkers& workers) {
  const Tensor &h = call.tensors[0], &phi = call.tensors[1];
  const auto iters = static_cast<std::int64_t>(call.scalars[0]);
  const auto eps = static_cast<float>(call.scalars[1]);
  const std::int64_t tokens = h.dim(0), n = h.dim(1), wide = n * h.dim(2), c = n * n + 2 * n;
  if (tokens == 0) return;
  // logits [T, c] = h [T, n*D] x phi [n*D, c]: one GEMM for all tokens; the RMS scales
  // each token's row afterwards (the projection is linear), as the paper reorders it.
  std::vector<float> logits(static_cast<std::size_t>(tokens * c));
  const float* hs = h.data_as<const float>();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(tokens), static_cast<blasint>(c),
              static_cast<blasint>(wide), 1.0f, hs, static_cast<blasint>(wide), phi.data_as<const float>(),
              static_cast<blasint>(c), 0.0f, logits.data(), static_cast<blasint>(c));
  const float* b = call.tensors[2].data_as<const float>();
  const float* sc = call.tensors[3].data_as<const float>();
  float* al = call.tensors[4].data_as<float>();
  float* be = call.tensors[5].data_as<float>();
  const double cost = 2.0 * static_cast<double>(wide) + 4.0 * static_cast<double>(iters * n * n);
  workers.parallel_for(tokens, cost, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> res(static_cast<std::size_t>(n * n));
    for (std::int64_t t = begin; t < end; ++t) {
      const float* ht = hs + t * wide;
      double sq = 0;  // in double, as rms_norm: n*D elements
      for (std::int64_t d = 0; d < wide; ++d) sq += static_cast<double>(ht[d]) * ht[d];
      const auto inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(wide) + eps));
      float* g = logits.data() + t * c;
      for (std::int64_t k = 0; k < c; ++k) g[k] *= inv;
      mhc_token_coefficients(g, b, sc, n, iters, res.data(), al + t * n * (1 + n), be + t * n);
    }
  });
}

// t Sinkhorn-Knopp iterations on the positive n x n matrix m (row-major): each divides
// every row by its sum, then every column by its sum.
void sinkhorn_reference(Doubles& m, std::int64_t n, std::int64_t iters) {
  auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  for (std::int64_t it = 0; it < iters; ++it) {
    for (std::int64_t r = 0; r < n; ++r) {
      double sum = 0;
      for (std::int64_t c = 0; c < n; ++c) sum += m[at(r * n + c)];
      for (std::int64_t c = 0; c < n; ++c) m[at(r * n + c)] /= sum;
    }
    for (std::int64_t c = 0; c < n; ++c) {
      double sum = 0;
      for (std::int64_t r = 0; r < n; ++r) sum += m[at(r * n + c)];
      for (std::int64_t r = 0; r < n; ++r) m[at(r * n + c)] /= sum;
    }
  }
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

const ModuleOp& mhc_coefficients_op() {
  static const ModuleOp op{kName, &check_call, &run_cpu, 0};
  return op;
}

void mhc_coefficients(Backend& backend, const Tensor& h, const Tensor& phi, const Tensor& bias, const Tensor& scale,
                      std::int64_t sinkhorn_iters, float eps, const Tensor& alpha, const Tensor& beta) {
  backend.run(mhc_coefficients_op(),
              ModuleOpCall{{h, phi, bias, scale, alpha, beta}, {static_cast<double>(sinkhorn_iters), eps}});
}

GhcCoefficients mhc_coefficients_reference(DoubleSpan h, std::int64_t tokens, std::int64_t n, std::int64_t D,
                                           DoubleSpan phi, DoubleSpan bias, DoubleSpan scale,
                                           std::int64_t sinkhorn_iters, double eps) {
  auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  const std::int64_t wide = n * D, c = n * n + 2 * n;
  GhcCoefficients out{Doubles(at(tokens * n * (1 + n))), Doubles(at(tokens * n))};
  for (std::int64_t t = 0; t < tokens; ++t) {
    double sq = 0;
    for (std::int64_t d = 0; d < wide; ++d) sq += h[at(t * wide + d)] * h[at(t * wide + d)];
    const double inv_rms = 1.0 / std::sqrt(sq / static_cast<double>(wide) + eps);
    Doubles g(at(c), 0.0);  // the RMS-normalised state times phi
    for (std::int64_t k = 0; k < c; ++k) {
      for (std::int64_t d = 0; d < wide; ++d) g[at(k)] += h[at(t * wide + d)] * inv_rms * phi[at(d * c + k)];
    }
    Doubles res(at(n * n));
    for (std::int64_t k = 0; k < n * n; ++k) res[at(k)] = std::exp(scale[2] * g[at(2 * n + k)] + bias[at(2 * n + k)]);
    sinkhorn_reference(res, n, sinkhorn_iters);
    for (std::int64_t i = 0; i < n; ++i) {
      double* a = &out.alpha[at((t * n + i) * (1 + n))];
      a[0] = sigmoid(scale[0] * g[at(i)] + bias[at(i)]);
      for (std::int64_t j = 0; j < n; ++j) a[1 + j] = res[at(j * n + i)];
      out.beta[at(t * n + i)] = 2.0 * sigmoid(scale[1] * g[at(n + i)] + bias[at(n + i)]);
    }
  }
  return out;
}

// The cost is the layer program's (the mHC module's mixing_ops: one node covers a layer's
// two connections, so half of it), in the case's element type.
OpCase mhc_coefficients_case(std::int64_t tokens, std::int64_t n, std::int64_t D, std::int64_t iters, ScalarType type,
                             std::uint64_t seed) {
  OpCase c;
  std::ostringstream name;
  name << "mhc_dynamic T=" << tokens << " n=" << n << " D=" << D << " iters=" << iters << ' ' << to_string(type);
  c.name = name.str();
  c.op = BackendOp::module;
  c.module = &mhc_coefficients_op();
  c.kind = model::OpKind::ghc_dynamic;
  c.type = type;
  model::OpDims dims;
  dims.D = static_cast<double>(D);
  dims.bytes = dims.weight_el_bytes = static_cast<double>(bytes_of(1, type));
  model::OpNode node;
  model::designs::mixing_ops(model::MhcDesign{n, iters}, dims, static_cast<double>(tokens), node);
  const model::OpCost both = node.cost;
  c.cost = model::OpCost{both.flops / 2, both.weight_bytes / 2, both.act_bytes_in / 2, both.act_bytes_out / 2, 0, 0};
  c.executed_flops = c.cost.flops;
  const std::int64_t wide = n * D, cols = n * n + 2 * n;
  // Logits are f32 sums of n*D products of O(1 / sqrt(nD)) terms, then sigmoids and a
  // Sinkhorn projection of an n x n matrix (contractive): f32 rounding of the sums.
  c.tolerance = Tolerance{1e-6 * std::sqrt(static_cast<double>(wide)), 1e-5};
  auto h = host_floats(static_cast<std::size_t>(tokens * wide), seed, type, -2.0f, 2.0f);
  const float bound = static_cast<float>(2.0 / std::sqrt(static_cast<double>(wide)));
  auto phi = host_floats(static_cast<std::size_t>(wide * cols), seed + 1, type, -bound, bound);
  auto bias = host_floats(static_cast<std::size_t>(cols), seed + 2, ScalarType::f32, -1.0f, 1.0f);
  auto scale = host_floats(3, seed + 3, ScalarType::f32, 0.5f, 1.5f);
  const double eps = 1e-6;
  auto ref = lazy<GhcCoefficients>([=] {
    return mhc_coefficients_reference(to_doubles(*h), tokens, n, D, to_doubles(*phi), to_doubles(*bias),
                                      to_doubles(*scale), iters, eps);
  });
  const Tolerance tol = c.tolerance;
  c.prepare = [=](Backend& be) {
    auto p = std::make_unique<PreparedLambda>(be);
    const Tensor th = be.allocate({tokens, n, D}, type), tp = be.allocate({wide, cols}, type);
    const Tensor tb = be.allocate({cols}, ScalarType::f32), ts = be.allocate({3}, ScalarType::f32);
    const Tensor ta = be.allocate({tokens, n, 1 + n}, ScalarType::f32), tbe = be.allocate({tokens, 1, n}, ScalarType::f32);
    p->input(th, h);
    p->input(tp, phi);
    p->input(tb, bias);
    p->input(ts, scale);
    p->set([bp = &be, th, tp, tb, ts, iters, eps, ta, tbe] {
             mhc_coefficients(*bp, th, tp, tb, ts, iters, static_cast<float>(eps), ta, tbe);
           },
           [bp = &be, ta, tbe, ref, tol] {
             return merge(compare(bp->download_f32(ta), ref->get().alpha, tol, "alpha (H_pre, H_res^T)"),
                          compare(bp->download_f32(tbe), ref->get().beta, tol, "beta (H_post)"));
           });
    return p;
  };
  return c;
}

std::vector<OpCase> mhc_op_cases(ScalarType type) {
  std::vector<OpCase> out;
  out.push_back(mhc_coefficients_case(9, 4, 32, 20, type, 99));
  out.push_back(mhc_coefficients_case(5, 3, 16, 1, type, 100));
  out.push_back(mhc_coefficients_case(1, 1, 8, 3, type, 101));
  return out;
}

}  // namespace hdlab::executor

namespace hdlab::executor::designs {

// Init: phi N(0, 1/(nD)) so the coefficients depend on the state from the start; biases
// N(0, 1) so H_res is not the uniform matrix; scales 1.
void add_layer_weights(const model::MhcDesign& d, const model::Backbone& b, const std::string& prefix,
                       std::vector<WeightSpec>& out) {
  const std::int64_t n = d.n, D = b.hidden, c = n * n + 2 * n;
  for (const char* site : {"attn.", "ffn."}) {
    const std::string p = prefix + site;
    out.push_back({p + "phi", {n * D, c}, WeightInit::normal, 1.0 / std::sqrt(static_cast<double>(n * D))});
    out.push_back({p + "bias", {c}, WeightInit::normal, 1.0, true});
    out.push_back({p + "scale", {3}, WeightInit::ones, 0, true});
  }
}

void mixing(const model::MhcDesign& d, Backend& backend, const DesignTensors& layer, bool attention, const Tensor& h,
            float eps, const Tensor& alpha, const Tensor& beta) {
  const std::string site = attention ? "attn." : "ffn.";
  auto tensor = [&](const char* name) {
    const auto it = layer.find(site + name);
    if (it == layer.end()) throw BackendError(std::string("mhc: the layer has no weight ") + site + name);
    return it->second;
  };
  const Tensor phi = tensor("phi"), bias = tensor("bias"), scale = tensor("scale");  // in this order
  mhc_coefficients(backend, h, phi, bias, scale, d.sinkhorn_iters, eps, alpha, beta);
}

}  // namespace hdlab::executor::designs
