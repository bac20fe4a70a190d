// Layers of today's HF families run by the runner and checked against computations written
// here from the HF layouts alone: a Gated DeltaNet layer (Qwen3-Next's linear_attn.*
// tensors as transformers groups them) and Nemotron-H's mamba and MLP blocks (norm,
// mixer.*) in double precision, and gpt-oss's expert FFN (router and expert biases, the
// clamped SwiGLU), sinks and output bias; DeepSeek-V2's multi-head latent attention.
#include <cmath>
#include <map>

#include "hdlab/executor/gated_delta_rule.hpp"
#include "hdlab/executor/mamba2_ssd.hpp"
#include "hdlab/executor/reference.hpp"
#include "hdlab/executor/attention_mask.hpp"
#include "runner_test_support.hpp"

namespace hdlab::executor::testing {

namespace {

using Vec = std::vector<double>;

// Row-major [rows, in] x W^T with W [out, in].
Vec linear(const Vec& x, std::int64_t rows, std::int64_t in, const std::vector<float>& w, std::int64_t out) {
  Vec y(static_cast<std::size_t>(rows * out), 0.0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t o = 0; o < out; ++o) {
      double s = 0;
      for (std::int64_t i = 0; i < in; ++i)
        s += x[static_cast<std::size_t>(r * in + i)] * w[static_cast<std::size_t>(o * in + i)];
      y[static_cast<std::size_t>(r * out + o)] = s;
    }
  return y;
}

Vec rms(const Vec& x, std::int64_t rows, std::int64_t dim, const std::vector<float>& w, double eps) {
  Vec y(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    double sq = 0;
    for (std::int64_t d = 0; d < dim; ++d)
      sq += x[static_cast<std::size_t>(r * dim + d)] * x[static_cast<std::size_t>(r * dim + d)];
    const double inv = 1 / std::sqrt(sq / static_cast<double>(dim) + eps);
    for (std::int64_t d = 0; d < dim; ++d)
      y[static_cast<std::size_t>(r * dim + d)] =
          x[static_cast<std::size_t>(r * dim + d)] * inv * w[static_cast<std::size_t>(d)];
  }
  return y;
}

double silu(double x) { return x / (1 + std::exp(-x)); }

using Weights = std::map<std::string, std::vector<float>>;

struct Mixed {
  Vec qkv;  // [T, C]: q of every key head, k, v of every value head (the conv's channels)
  Vec z;    // [T, hv dv]
  Vec ba;   // [T, 2 hv] as HF stores it: per key head [b r | a r]
};

// in_proj_qkvz's output grouped per key head [q dk | k dk | v r dv | z r dv] (transformers'
// fix_query_key_value_ordering), split into the conv's input and the gate z.
Mixed hf_projections(const model::GatedDeltaNetConfig& g, Weights& w, const Vec& n, std::int64_t T, std::int64_t D) {
  const std::int64_t hk = g.num_key_heads, hv = g.num_value_heads, dk = g.key_head_dim, dv = g.value_head_dim;
  const std::int64_t r = hv / hk, C = g.conv_channels(), group = 2 * dk + 2 * r * dv;
  const std::string p = "model.layers.0.linear_attn.";
  const Vec qkvz = linear(n, T, D, w[p + "in_proj_qkvz.weight"], hk * group);
  Mixed m{Vec(static_cast<std::size_t>(T * C)), Vec(static_cast<std::size_t>(T * hv * dv)),
          linear(n, T, D, w[p + "in_proj_ba.weight"], 2 * hv)};
  auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t kh = 0; kh < hk; ++kh) {
      const double* row = &qkvz[at(i * hk * group + kh * group)];
      for (std::int64_t d = 0; d < dk; ++d) {
        m.qkv[at(i * C + kh * dk + d)] = row[d];
        m.qkv[at(i * C + hk * dk + kh * dk + d)] = row[dk + d];
      }
      for (std::int64_t d = 0; d < r * dv; ++d) {
        m.qkv[at(i * C + 2 * hk * dk + kh * r * dv + d)] = row[2 * dk + d];
        m.z[at(i * hv * dv + kh * r * dv + d)] = row[2 * dk + r * dv + d];
      }
    }
  return m;
}

// The causal depthwise conv (weight [C, 1, K], bias [C] or none, zero history) and SiLU.
Vec hf_conv(const Vec& mixed, const std::vector<float>& cw, std::int64_t T, std::int64_t C, std::int64_t K,
            const std::vector<float>& bias = {}) {
  Vec conv(mixed.size());
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t c = 0; c < C; ++c) {
      double s = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(c)];
      for (std::int64_t j = 0; j < K; ++j) {
        const std::int64_t src_row = i - (K - 1) + j;
        if (src_row >= 0)
          s += cw[static_cast<std::size_t>(c * K + j)] * mixed[static_cast<std::size_t>(src_row * C + c)];
      }
      conv[static_cast<std::size_t>(i * C + c)] = silu(s);
    }
  return conv;
}

// The mixer's output [T, hv dv] before out_proj: the gates, the recurrence from a zero
// state, RMSNormGated.
Vec hf_rule(const model::Backbone& b, Weights& w, const Vec& conv, const Mixed& m, std::int64_t T) {
  const model::GatedDeltaNetConfig& g = *b.gdn;
  const std::int64_t hk = g.num_key_heads, hv = g.num_value_heads, dk = g.key_head_dim, dv = g.value_head_dim;
  const std::int64_t r = hv / hk, C = g.conv_channels();
  const std::string p = "model.layers.0.linear_attn.";
  auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  Vec q, k, v, gl(at(T * hv)), beta(gl.size());
  for (std::int64_t i = 0; i < T; ++i) {
    const double* row = &conv[at(i * C)];
    q.insert(q.end(), row, row + hk * dk);
    k.insert(k.end(), row + hk * dk, row + 2 * hk * dk);
    v.insert(v.end(), row + 2 * hk * dk, row + C);
    for (std::int64_t kh = 0; kh < hk; ++kh)
      for (std::int64_t j = 0; j < r; ++j) {
        const std::int64_t h = kh * r + j;
        const double bb = m.ba[at(i * 2 * hv + kh * 2 * r + j)], aa = m.ba[at(i * 2 * hv + kh * 2 * r + r + j)];
        const double sp = std::log1p(std::exp(aa + w[p + "dt_bias"][at(h)]));
        gl[at(i * hv + h)] = -std::exp(w[p + "A_log"][at(h)]) * sp;
        beta[at(i * hv + h)] = 1 / (1 + std::exp(-bb));
      }
  }
  Vec state(at(hv * dk * dv), 0.0), o(at(T * hv * dv));
  gated_delta_rule_reference(q, k, v, gl, beta, GdnShape{T, hk, hv, dk, dv}, state, o);
  Vec gated = rms(o, T * hv, dv, w[p + "norm.weight"], b.norm_eps);
  for (std::size_t i = 0; i < gated.size(); ++i) gated[i] *= silu(m.z[i]);
  return gated;
}

Weights all_weights(const model::Backbone& b, WeightSource& src) {
  Weights w;
  for (const WeightSpec& s : weight_specs(b, model::Method{})) w[s.name] = src.values(s);
  return w;
}

// The embeddings of `t`, [T, D].
Vec embed(Weights& w, const std::vector<std::int32_t>& t, std::int64_t D) {
  Vec x;
  for (auto id : t) {
    const auto row = w["model.embed_tokens.weight"].begin() + static_cast<std::ptrdiff_t>(id) * D;
    x.insert(x.end(), row, row + D);
  }
  return x;
}

// Largest |got - want| relative to the largest |want| (at least 1).
double worst_rel(const std::vector<float>& got, const Vec& want) {
  REQUIRE(got.size() == want.size());
  double worst = 0, scale = 1;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return worst / scale;
}

// x += y (the mixer's output), then x += the dense SwiGLU FFN (HF's mlp.* of layer prefix p)
// of post_attention_layernorm(x).
void residual_and_ffn(const model::Backbone& b, Weights& w, const std::string& p, const Vec& y, std::int64_t T, Vec& x) {
  const std::int64_t D = b.hidden, F = b.intermediate;
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
  const Vec h = rms(x, T, D, w[p + "post_attention_layernorm.weight"], b.norm_eps);
  const Vec gate = linear(h, T, D, w[p + "mlp.gate_proj.weight"], F),
            up = linear(h, T, D, w[p + "mlp.up_proj.weight"], F);
  Vec act(gate.size());
  for (std::size_t i = 0; i < act.size(); ++i) act[i] = silu(gate[i]) * up[i];
  const Vec f = linear(act, T, F, w[p + "mlp.down_proj.weight"], D);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += f[i];
}

// One Qwen3-Next linear-attention layer plus its dense FFN on the embeddings of `t`, from
// the tensors as HF names and lays them out (transformers' Qwen3NextGatedDeltaNet).
Vec hf_linear_layer(const model::Backbone& b, WeightSource& src, const std::vector<std::int32_t>& t) {
  Weights w = all_weights(b, src);
  const model::GatedDeltaNetConfig& g = *b.gdn;
  const std::int64_t T = static_cast<std::int64_t>(t.size()), D = b.hidden;
  const std::string p = "model.layers.0.";
  Vec x = embed(w, t, D);
  const Vec n = rms(x, T, D, w[p + "input_layernorm.weight"], b.norm_eps);
  const Mixed m = hf_projections(g, w, n, T, D);
  const Vec conv = hf_conv(m.qkv, w[p + "linear_attn.conv1d.weight"], T, g.conv_channels(), g.conv_kernel);
  const Vec y = linear(hf_rule(b, w, conv, m, T), T, g.v_width(), w[p + "linear_attn.out_proj.weight"], D);
  residual_and_ffn(b, w, p, y, T, x);
  return x;
}

}  // namespace

TEST_CASE("a Gated DeltaNet layer equals its HF definition computed in double", "[runner][linear][hf]") {
  const model::Backbone b = tiny_linear(1);
  const auto t = tokens(23);
  RandomWeights src(12);
  const Vec want = hf_linear_layer(b, src, t);
  Model m = build(make(b, "{}"), 12);
  std::vector<float> got;
  m.runner->set_hidden_observer([&](const HiddenState& h) {
    if (h.layer == 0) got = m.backend->download_f32(h.x);
  });
  (void)m.runner->train_forward(t);
  // f32 against double through one layer: well inside 1e-5 of the largest entry
  CHECK(worst_rel(got, want) < 1e-5);
}

namespace {

// The rows of m [rows, sum of widths] cut into column blocks of `widths`, each [rows, width].
std::vector<Vec> split_columns(const Vec& m, std::int64_t rows, std::initializer_list<std::int64_t> widths) {
  std::int64_t total = 0;
  for (auto w : widths) total += w;
  std::vector<Vec> out(widths.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    auto at = m.begin() + r * total;
    std::size_t k = 0;
    for (auto w : widths) {
      out[k].insert(out[k].end(), at, at + w);
      at += w;
      ++k;
    }
  }
  return out;
}

// Nemotron-H's mamba block (NemotronHMamba2Mixer, torch path without the dt clamp) on the
// residual x [T, D] in place: norm, in_proj split [z | xBC | dt], the conv with its bias
// and SiLU, the SSD recurrence from a zero state, y * silu(z) normed per group of I / G
// (MambaRMSNormGated, norm_before_gate false) times the weight, out_proj, residual.
void hf_mamba_block(const model::Backbone& b, Weights& w, const std::string& p, Vec& x, std::int64_t T) {
  const model::Mamba2Config& m = *b.mamba;
  const std::int64_t D = b.hidden, I = m.inner(), C = m.conv_channels(), H = m.num_heads;
  const std::int64_t GN = m.n_groups * m.state_size, W = m.in_proj_width();
  auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  const Vec proj = linear(rms(x, T, D, w[p + "norm.weight"], b.norm_eps), T, D, w[p + "mixer.in_proj.weight"], W);
  const std::vector<Vec> zxd = split_columns(proj, T, {I, C, H});  // z, xBC, dt
  const Vec conv = hf_conv(zxd[1], w[p + "mixer.conv1d.weight"], T, C, m.conv_kernel, w[p + "mixer.conv1d.bias"]);
  const std::vector<Vec> xbc = split_columns(conv, T, {I, GN, GN});  // x, B, C
  const Vec &z = zxd[0], &dt = zxd[2], &xs = xbc[0], &B = xbc[1], &Cm = xbc[2];
  const std::vector<float>& dtb = w[p + "mixer.dt_bias"], &al = w[p + "mixer.A_log"], &dd = w[p + "mixer.D"];
  const Vec dt_bias(dtb.begin(), dtb.end()), a_log(al.begin(), al.end()), d(dd.begin(), dd.end());
  Vec state(at(H * m.head_dim * m.state_size), 0.0), y(xs.size());
  const Mamba2Shape shape{T, H, m.head_dim, m.n_groups, m.state_size};
  mamba2_ssd_reference(xs, B, Cm, dt, Mamba2Params<double>{dt_bias, a_log, d}, shape, state, y);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] *= silu(z[i]);
  const std::int64_t group = I / m.n_groups;
  Vec normed = rms(y, T * m.n_groups, group, std::vector<float>(at(group), 1.0f), b.norm_eps);
  for (std::size_t i = 0; i < normed.size(); ++i) normed[i] *= w[p + "mixer.norm.weight"][i % at(I)];
  const Vec out = linear(normed, T, I, w[p + "mixer.out_proj.weight"], D);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += out[i];
}

// Nemotron-H's MLP block (NemotronHMLP): norm, up_proj, relu(x)^2, down_proj, residual.
void hf_mlp_block(const model::Backbone& b, Weights& w, const std::string& p, Vec& x, std::int64_t T) {
  const std::int64_t D = b.hidden, F = b.intermediate;
  Vec up = linear(rms(x, T, D, w[p + "norm.weight"], b.norm_eps), T, D, w[p + "mixer.up_proj.weight"], F);
  for (double& v : up) v = v > 0 ? v * v : 0.0;
  const Vec down = linear(up, T, F, w[p + "mixer.down_proj.weight"], D);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += down[i];
}

}  // namespace

TEST_CASE("Nemotron-H's mamba and MLP blocks equal their HF definitions computed in double", "[runner][mamba2][hf]") {
  // Layers 0 (mamba, 23 tokens in chunks of 16) and 1 (MLP) of the tiny Nemotron-H, from
  // the tensors as NemotronH names them (model.layers.{l}.norm, .mixer.*).
  const model::Backbone b = tiny_nemotron_h();
  const auto t = tokens(23);
  RandomWeights src(12);
  Weights w = all_weights(b, src);
  const std::int64_t T = static_cast<std::int64_t>(t.size());
  Vec want = embed(w, t, b.hidden);
  hf_mamba_block(b, w, "model.layers.0.", want, T);
  Model m = build(make(b, "{}"), 12);
  CHECK(worst_rel(hidden_after(m, t, 0), want) < 1e-5);
  hf_mlp_block(b, w, "model.layers.1.", want, T);
  CHECK(worst_rel(hidden_after(m, t, 1), want) < 1e-5);
}

namespace {

// gpt-oss in small: 4 layers alternating sliding (5) and full attention with sinks, q/k/v/o
// biases, 8 experts top-2 with a router bias, expert biases and the clamped SwiGLU.
model::Backbone tiny_gpt_oss(double limit = 7.0) {
  model::Backbone b = with_gpt_oss_experts(tiny_moe(model::RouterKind::softmax, 4), limit);
  b.name = "tiny-gpt-oss";
  for (std::size_t l = 0; l < 4; l += 2) b.layers[l] = {model::AttentionKind::sliding, 5};
  return b;
}

// Zeroes the biases whose names contain `part`.
class WithoutBiases : public WeightSource {
 public:
  WithoutBiases(std::uint64_t seed, std::string part) : random_(seed), part_(std::move(part)) {}
  std::vector<float> values(const WeightSpec& spec) override {
    const std::string& n = spec.name;
    const bool bias = n.size() > 5 && n.compare(n.size() - 5, 5, ".bias") == 0;
    if (bias && n.find(part_) != std::string::npos)
      return std::vector<float>(static_cast<std::size_t>(element_count(spec.shape)), 0.0f);
    return random_.values(spec);
  }

 private:
  RandomWeights random_;
  std::string part_;
};

}  // namespace

TEST_CASE("gpt-oss's experts, sinks and biases: decode equals the full forward, each part counts",
          "[runner][gpt-oss]") {
  const model::Backbone b = tiny_gpt_oss();
  for (const char* design : {"{}", R"({"hd": {"n": 2, "layers": {"rest": "intra"}}})"}) {
    INFO(design);
    Model m = build(make(b, design), 3);
    const auto t = tokens(14);
    const auto full = m.backend->download_f32(m.runner->train_forward(t).logits);
    const auto dec = decoded_logits(m, t, 6);
    CHECK(rel_diff(dec, rows_of(full, b.padded_vocab(), 5, 9)) < kSameFunction);
  }
  const auto t = tokens(14);
  const model::Config c = make(b, "{}");
  auto logits = [&](WeightSource& src, const model::Config& cc) {
    Model m = build(cc, src);
    return m.backend->download_f32(m.runner->train_forward(t).logits);
  };
  RandomWeights all(3);
  const auto ref = logits(all, c);
  // the router bias, the expert biases and the output bias each change the function
  for (const char* part : {"mlp.gate.bias", "mlp.experts", "o_proj.bias"}) {
    INFO(part);
    WithoutBiases without(3, part);
    CHECK(rel_diff(logits(without, c), ref) > 1e-3);
  }
  // a tighter clamp changes it too (7 leaves most of these activations alone)
  RandomWeights same(3);
  CHECK(rel_diff(logits(same, make(tiny_gpt_oss(0.05), "{}")), ref) > 1e-3);
}

}  // namespace hdlab::executor::testing

namespace hdlab::executor::testing {

namespace {

// DeepSeek's RoPE on rows of r dims (its complex form, transformers' DeepSeek-V3
// rope_interleave): pair (2i, 2i+1) turns by position x inv_freq[i], cos and sin times the
// cos/sin factor. x [T, heads, r], position of row t = t.
Vec interleaved_rope(Vec x, std::int64_t T, std::int64_t heads, std::int64_t r, const model::RotaryFrequencies& f) {
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t h = 0; h < heads; ++h)
      for (std::int64_t i = 0; i < r / 2; ++i) {
        const double a = static_cast<double>(t) * f.inv_freq[static_cast<std::size_t>(i)];
        const double c = std::cos(a) * f.cos_sin_factor, s = std::sin(a) * f.cos_sin_factor;
        double* pair = &x[static_cast<std::size_t>((t * heads + h) * r + 2 * i)];
        const double x0 = pair[0], x1 = pair[1];
        pair[0] = x0 * c - x1 * s;
        pair[1] = x1 * c + x0 * s;
      }
  return x;
}

// DeepSeek-V2's attention block (transformers' DeepseekV2Attention, without q_lora or
// with it) and the dense FFN on the embeddings of `t`, from the tensors as HF names and
// lays them out: q per head [nope | rope], kv_a rows [latent | rope key], kv_b per head
// [k nope | v]; DeepSeek's interleaved RoPE pairs on q_pe and k_pe (the runner permutes
// those weight rows at upload); causal softmax at 1/sqrt(nope + rope), times
// (0.1 mscale_all_dim ln(factor) + 1)^2 when the scaling gives mscale_all_dim.
Vec hf_mla_layer(const model::Backbone& b, Weights& w, const std::vector<std::int32_t>& t) {
  const model::MlaConfig& m = *b.mla;
  const std::int64_t T = static_cast<std::int64_t>(t.size()), D = b.hidden, H = b.num_heads;
  const std::int64_t nope = m.qk_nope_head_dim, rope = m.qk_rope_head_dim, dv = m.v_head_dim, kvl = m.kv_lora_rank;
  const std::int64_t qk = nope + rope;
  const std::string p = "model.layers.0.", a = p + "self_attn.";
  auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  Vec x = embed(w, t, D);
  const Vec n = rms(x, T, D, w[p + "input_layernorm.weight"], b.norm_eps);
  Vec q = m.q_lora_rank == 0
              ? linear(n, T, D, w[a + "q_proj.weight"], H * qk)
              : linear(rms(linear(n, T, D, w[a + "q_a_proj.weight"], m.q_lora_rank), T, m.q_lora_rank,
                           w[a + "q_a_layernorm.weight"], b.norm_eps),
                       T, m.q_lora_rank, w[a + "q_b_proj.weight"], H * qk);
  const Vec kva = linear(n, T, D, w[a + "kv_a_proj_with_mqa.weight"], kvl + rope);
  Vec c, q_pe, k_pe;
  for (std::int64_t i = 0; i < T; ++i) {
    c.insert(c.end(), kva.begin() + i * (kvl + rope), kva.begin() + i * (kvl + rope) + kvl);
    k_pe.insert(k_pe.end(), kva.begin() + i * (kvl + rope) + kvl, kva.begin() + (i + 1) * (kvl + rope));
    for (std::int64_t h = 0; h < H; ++h)
      q_pe.insert(q_pe.end(), q.begin() + (i * H + h) * qk + nope, q.begin() + (i * H + h + 1) * qk);
  }
  const model::RotaryFrequencies f = model::rotary_frequencies(b, b.rope_theta, T);
  q_pe = interleaved_rope(q_pe, T, H, rope, f);
  k_pe = interleaved_rope(k_pe, T, 1, rope, f);
  double softmax = 1 / std::sqrt(static_cast<double>(qk));
  if (const model::RopeScaling& s = b.rope_scaling; s.mscale_all_dim > 0) {
    const double mscale = 0.1 * s.mscale_all_dim * std::log(s.factor) + 1;
    softmax *= mscale * mscale;
  }
  const Vec kv = linear(rms(c, T, kvl, w[a + "kv_a_layernorm.weight"], b.norm_eps), T, kvl, w[a + "kv_b_proj.weight"],
                        H * (nope + dv));
  Vec qh(at(T * H * qk)), kh(qh.size()), vh(at(T * H * dv));  // [T, H, nope | rope], values [T, H, v]
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t h = 0; h < H; ++h) {
      for (std::int64_t d = 0; d < nope; ++d) {
        qh[at((i * H + h) * qk + d)] = q[at((i * H + h) * qk + d)];
        kh[at((i * H + h) * qk + d)] = kv[at((i * H + h) * (nope + dv) + d)];
      }
      for (std::int64_t d = 0; d < rope; ++d) {
        qh[at((i * H + h) * qk + nope + d)] = q_pe[at((i * H + h) * rope + d)];
        kh[at((i * H + h) * qk + nope + d)] = k_pe[at(i * rope + d)];
      }
      for (std::int64_t d = 0; d < dv; ++d) vh[at((i * H + h) * dv + d)] = kv[at((i * H + h) * (nope + dv) + nope + d)];
    }
  model::MaskSpec spec;
  spec.kind = model::MaskSpec::Kind::causal;
  spec.tokens = T;
  std::vector<std::int64_t> rows(at(T));
  std::iota(rows.begin(), rows.end(), 0);
  const Vec o = attention_reference(qh, kh, vh, H, H, qk, AttentionMask::decode(spec, rows, rows), softmax, {}, dv);
  const Vec y = linear(o, T, H * dv, w[a + "o_proj.weight"], D);
  residual_and_ffn(b, w, p, y, T, x);
  return x;
}

}  // namespace

TEST_CASE("an MLA layer (DeepSeek-V2, with and without q_lora, with and without YaRN) equals its HF definition "
          "computed in double",
          "[runner][mla][hf]") {
  // YaRN as DeepSeek-V2 sets it (mscale and mscale_all_dim), over an original context of 8
  // positions so that 23 tokens pass it: pair 0 keeps its frequency, pair 1 is divided by
  // 40, cos/sin x (0.1 0.707 ln 40 + 1) / (0.1 ln 40 + 1), softmax scale x (0.1 ln 40 + 1)^2.
  model::RopeScaling yarn;
  yarn.kind = model::RopeScalingKind::yarn;
  yarn.factor = 40;
  yarn.original_context = 8;
  yarn.mscale = 0.707;
  yarn.mscale_all_dim = 1.0;
  for (bool scaled : {false, true})
    for (std::int64_t q_lora : {0, 20}) {
      INFO("q_lora_rank " << q_lora << (scaled ? ", yarn" : ""));
      model::Backbone b = tiny_mla(1, q_lora);
      if (scaled) b.rope_scaling = yarn;
      const auto t = tokens(23);
      RandomWeights src(12);
      Weights w = all_weights(b, src);
      const Vec want = hf_mla_layer(b, w, t);
      Model m = build(make(b, "{}"), 12);
      CHECK(worst_rel(hidden_after(m, t, 0), want) < 1e-5);
    }
}

}  // namespace hdlab::executor::testing
