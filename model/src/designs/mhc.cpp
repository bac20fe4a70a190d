// The manifold-constrained hyper-connections module (mHC; Xie et al., DeepSeek,
// arXiv:2512.24880, eqs. 7-8 and section 4.1; the form DeepSeek-V4 runs).
//
// Semantics (per token; X is the n x D residual state, row i = stream i):
//  - Input: the token's D-wide embedding is copied into each of the n streams.
//  - Around each sublayer F (attention, FFN) one hyper-connection with its own weights:
//    phi [n*D, n + n + n^2], biases b [n + n + n^2], scales a_pre, a_post, a_res.
//      r      = 1 / sqrt(mean(vec(X)^2) + eps)            one scalar over all n*D elements
//      g      = r * (vec(X) phi)                           the RMS-normalised state projected
//      H_pre  = sigmoid(a_pre * g[0:n] + b_pre)            1 x n, the read weights
//      H_post = 2 * sigmoid(a_post * g[n:2n] + b_post)     n x 1, the write weights
//      H_res  = Sinkhorn_t(exp(a_res * g[2n:] + b_res))    n x n (row-major), mixing
//    where Sinkhorn_t runs t iterations, each dividing every row by its sum and then every
//    column by its sum, so H_res is (to t iterations) doubly stochastic: non-negative,
//    rows and columns summing to 1. The RMS normalisation has no weight of its own (one
//    would fold into phi, as in DeepSeek-V4's fused kernels, and the paper normalises
//    after the product for that reason).
//      u = sum_i H_pre[i] X_i          (D wide: the sublayer's input; its own pre-norm follows)
//      X'_j = sum_i H_res[j, i] X_i + H_post[j] F(u)
//  - Output: the n streams summed to one D-wide row (the Hyper-Connections readout),
//    then the backbone's final norm and head. DeepSeek-V4's learned, sigmoid-gated
//    readout is not modelled.
// Attention, masks, caches and the schedule are the backbone's: one position per token,
// one K/V entry per token and layer. The mixing reuses the generalized hyper-connection
// ops of VWN with m = 1 (the sublayer input is one stream-wide slot of D): H_pre and
// H_res^T form the width connection's alpha [n, 1+n], H_post its depth beta [1, n]; only
// the coefficients (mHC's Sinkhorn projection) are an op of their own.
#include <ostream>

#include "../layer_ops_internal.hpp"
#include "common.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"

namespace hdlab::model::designs {

namespace {

using common::num;

// n^2 mixing logits per token: beyond 64 streams the projection [n*D, n^2+2n] dwarfs the
// layer it wraps, a size no published model uses (DeepSeek-V4: 4).
constexpr std::int64_t max_streams = 64;
constexpr std::int64_t max_sinkhorn_iters = 1000;

}  // namespace

std::int64_t mhc_connection_params(const MhcDesign& d, std::int64_t D) {
  const std::int64_t logits = d.n * d.n + 2 * d.n;
  return d.n * D * logits + logits + 3;
}

void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, MhcDesign& d) {
  common::refuse_single_sublayers(b, r, "mHC");
  common::note_default(defaults, r, "n", "4");
  common::note_default(defaults, r, "sinkhorn_iters", "20");
  d.n = r.integer("n", std::int64_t{4}, 1, max_streams);
  d.sinkhorn_iters = r.integer("sinkhorn_iters", std::int64_t{20}, 1, max_sinkhorn_iters);
  r.finish();
}

Json block_json(const MhcDesign& d) { return {{"n", d.n}, {"sinkhorn_iters", d.sinkhorn_iters}}; }

void describe(const MhcDesign& d, std::ostream& s) {
  s << "mhc n=" << d.n << " (" << d.n << " residual streams, Sinkhorn " << d.sinkhorn_iters << " iterations)";
}

std::string short_label(const MhcDesign& d) { return "mHC n=" + num(d.n); }
std::string label_detail(const MhcDesign&) { return ""; }

DesignFeatures features(const MhcDesign& d) {
  DesignFeatures f;
  f.wide_residual = true;  // n streams of D: the wide residual with slots of D (m = 1)
  f.width_m = 1;
  f.width_n = d.n;
  f.copied_embedding = true;
  f.summed_readout = true;
  f.module_mixing = true;  // mixing_ops below; the executor's mhc_coefficients op
  return f;
}

LayerSchedule layer_schedule(const MhcDesign&, std::int64_t) { return {}; }
std::vector<LayerRun> layer_runs(const MhcDesign&, std::int64_t num_layers) { return common::straight_runs(num_layers); }
LayerAttentionRole layer_role(const MhcDesign&, const Backbone& b, std::int64_t layer) {
  return common::backbone_role(b, layer);
}
void shape_mask(const MhcDesign&, const Backbone&, std::int64_t, MaskSpec&) {}
Layout default_layout(const MhcDesign&) { return Layout::interleaved; }

void add_params(const MhcDesign& d, const Backbone& b, ParamCounts& p) {
  // Two hyper-connections per layer; the embedding and head are the backbone's (the
  // copy into the streams and the summing readout have no weights).
  p.ghc += 2 * b.num_layers * mhc_connection_params(d, b.hidden);
}

// Per token, n streams of D, t Sinkhorn iterations, c = n^2 + 2n coefficient logits:
// squares summed over the n*D state (2nD), the projection [nD] x [nD, c] (2nDc), each
// logit times the RMS and its scale plus its bias (3c), the 2n sigmoids (4 each: exp,
// add, divide, the post's doubling), the n^2 exps and t Sinkhorn iterations of a row and
// a column normalisation (4n^2: a sum and a divide per element per pass). Its weights
// are phi, the biases and the 3 scales; it reads the state and writes alpha [n, 1+n]
// and beta [1, n]. Two connections a layer.
void mixing_ops(const MhcDesign& d, const OpDims& s, double rows, OpNode& coefficients) {
  const double n = static_cast<double>(d.n), D = s.D, wide = n * D, c = n * n + 2 * n, t = static_cast<double>(d.sinkhorn_iters);
  const double per_token = 2 * wide + 2 * wide * c + 3 * c + 4 * 2 * n + n * n + 4 * t * n * n;
  const double alpha_beta = n * (1 + n) + n;
  detail::vector_op(coefficients, 2 * rows * per_token, 2 * (wide * c + c + 3), 2 * rows * wide, 2 * rows * alpha_beta,
                    s);
}

std::optional<std::int64_t> prefill_tail(const MhcDesign&, std::int64_t) { return std::nullopt; }
DecodeAttention decode_attention(const MhcDesign&, const LayerAttentionRole& layer, double context, Layout, bool) {
  return common::decode_one_copy(layer, context);
}
double kv_entries(const MhcDesign&, const LayerAttentionRole& layer, double context) {
  return common::kv_entries_one_copy(layer, context);
}

std::optional<SizeKnob> size_knob(const MhcDesign& d) {
  return SizeKnob{"n", "mHC residual streams n", common::with_current({1, 2, 4, 8}, static_cast<double>(d.n)),
                  static_cast<double>(d.n)};
}

void set_size(MhcDesign& d, double x) {
  if (x < 1 || x > static_cast<double>(max_streams) || x != static_cast<double>(static_cast<std::int64_t>(x)))
    throw ConfigError("/design/mhc/n", "needs a whole number of streams in [1, " + num(max_streams) + "], got " +
                                           std::to_string(x));
  d.n = static_cast<std::int64_t>(x);
}

std::vector<std::string> conformance_examples(const MhcDesign&) {
  return {R"({"mhc": {"n": 4, "sinkhorn_iters": 20}})", R"({"mhc": {"n": 3, "sinkhorn_iters": 5}})"};
}

DesignForm form(const MhcDesign&) {
  DesignForm f;
  f.title = "Manifold-constrained hyper-connections (mHC)";
  f.fields = {common::integer_field("n", "streams n", 1, 64, 4, "Residual streams of width D (DeepSeek-V4: 4)"),
              common::integer_field("sinkhorn_iters", "Sinkhorn iterations", 1, 1000, 20,
                                    "Sinkhorn-Knopp iterations projecting the stream mixing onto the doubly-stochastic "
                                    "matrices (the paper: 20)")};
  return f;
}

std::vector<std::string> derived_fields(const MhcDesign&, const Backbone&) { return {}; }

}  // namespace hdlab::model::designs
