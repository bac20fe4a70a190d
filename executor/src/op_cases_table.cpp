// The correctness table: fixed edge shapes plus a few seeded random ones per op.
#include <algorithm>

#include "hdlab/executor/designs/registry.hpp"
#include "op_case_support.hpp"

namespace hdlab::executor {

using model::OpKind;

namespace {

// Seeded random extents in [lo, hi].
class ShapeDice {
 public:
  explicit ShapeDice(std::uint64_t seed) : values_(random_floats(256, seed, 0.0f, 1.0f)) {}
  std::int64_t roll(std::int64_t lo, std::int64_t hi) {
    const float u = values_[next_++ % values_.size()];
    return std::min(hi, lo + static_cast<std::int64_t>(u * static_cast<float>(hi - lo + 1)));
  }

 private:
  std::vector<float> values_;
  std::size_t next_ = 0;
};

// A scaled RoPE's frequencies for `head_dim` rotated dims (model::rotary_frequencies).
model::RotaryFrequencies scaled_rope(const model::RopeScaling& s, std::int64_t head_dim, double theta,
                                     std::int64_t sequence_positions) {
  model::Backbone b;
  b.head_dim = head_dim;
  b.rope_theta = theta;
  b.max_context = 4096;
  b.rope_scaling = s;
  return model::rotary_frequencies(b, theta, sequence_positions);
}

// RoPE under scaling: YaRN as DeepSeek-V2 sets it (64 dims, factor 40 over 4096 positions;
// without mscale keys cos/sin x (0.1 ln 40 + 1)) at positions far past the original
// context, Llama 3.1's bands, and LongRoPE's long factors on a partial head.
void add_scaled_rope_cases(std::vector<OpCase>& out, ScalarType t) {
  using K = model::RopeScalingKind;
  auto scaling = [](K kind, double factor, std::int64_t original) {
    model::RopeScaling s;
    s.kind = kind;
    s.factor = factor;
    s.original_context = original;
    return s;
  };
  const model::RopeScaling yarn = scaling(K::yarn, 40, 4096);
  out.push_back(rope_case(13, 3, 64, 100000, 37, t, 35, scaled_rope(yarn, 64, 1e4, 0), "yarn"));
  model::RopeScaling llama3 = scaling(K::llama3, 8, 8192);
  llama3.low_freq_factor = 1;
  llama3.high_freq_factor = 4;
  out.push_back(rope_case(9, 2, 128, 60000, 1001, t, 36, scaled_rope(llama3, 128, 5e5, 0), "llama3"));
  model::RopeScaling longrope = scaling(K::longrope, 32, 4096);
  for (int j = 0; j < 8; ++j) {
    longrope.short_factor.push_back(1.0 + 0.1 * j);
    longrope.long_factor.push_back(1.0 + 3.0 * j);
  }
  out.push_back(rope_case(6, 2, 64, 5000, 3, t, 37, scaled_rope(longrope, 16, 1e4, 8192), "longrope"));
}

void add_gemm_cases(std::vector<OpCase>& out, ScalarType t) {
  out.push_back(gemm_case(OpKind::qkv_proj, 37, 48, 64, t, 1));
  out.push_back(gemm_case(OpKind::ffn_down, 65, 33, 129, t, 2));
  out.push_back(gemm_case(OpKind::lm_head, 5, 300, 96, t, 3));
  out.push_back(gemm_case(OpKind::ffn_gate_up, 20, 24, 40, t, 4, false, false));
  out.push_back(gemm_case(OpKind::ghc_dynamic, 17, 19, 23, t, 5, true, false));
  out.push_back(gemm_case(OpKind::o_proj, 16, 16, 16, t, 6, false, true, 0.5f, 1.5f));
  out.push_back(gemm_case(OpKind::router, 19, 64, 128, t, 7));  // router logits [T, D] x [E, D]^T
  ShapeDice dice(77);
  for (int i = 0; i < 3; ++i)
    out.push_back(gemm_case(OpKind::qkv_proj, dice.roll(1, 150), dice.roll(1, 150), dice.roll(1, 200), t,
                            10 + static_cast<std::uint64_t>(i)));
}

void add_vector_cases(std::vector<OpCase>& out, ScalarType t) {
  out.push_back(rms_norm_case(OpKind::attn_norm, 33, 256, t, 20));
  out.push_back(rms_norm_case(OpKind::qk_norm, 33 * 4, 64, t, 21));
  out.push_back(rms_norm_case(OpKind::ghc_norm, 20 * 3, 48, t, 22));
  out.push_back(rms_norm_case(OpKind::final_norm, 1, 1000, t, 23));
  ShapeDice dice(78);
  out.push_back(rms_norm_case(OpKind::ffn_norm, dice.roll(1, 64), dice.roll(1, 700), t, 24));
  out.push_back(group_norm_case(7, 3, 64, t, 25));  // VWN n/m = 3: D' = 3 groups of D
  out.push_back(group_norm_case(2, 4, 300, t, 26));
  out.push_back(rope_case(37, 4, 64, 0, 1, t, 30));
  out.push_back(rope_case(9, 2, 128, 500000, 4, t, 31));  // expanded positions of a long HD context
  out.push_back(rope_case(5, 3, 2, 7, 3, t, 32));
  out.push_back(rope_case(11, 4, 64, 3, 2, t, 33, 16));  // partial RoPE (Qwen3-Next's quarter)
  out.push_back(rope_case(7, 2, 30, 100, 1, t, 34, 2));  // one rotated pair, an odd-pair head dim
  out.push_back(swiglu_case(21, 300, t, 40));
  out.push_back(swiglu_case(1, 17, t, 41));
  out.push_back(swiglu_case(dice.roll(1, 40), dice.roll(1, 500), t, 42));
  out.push_back(add_case(13, 257, t, 50));
  out.push_back(relu2_case(21, 300, t, 51));
  out.push_back(relu2_case(1, 17, t, 52));
}

void add_routing_and_gather_cases(std::vector<OpCase>& out, ScalarType t) {
  using model::RouterKind;
  out.push_back(topk_routing_case(19, 64, 4, RouterKind::softmax, true, t, 60));
  out.push_back(topk_routing_case(7, 8, 2, RouterKind::softmax, false, t, 61));
  out.push_back(topk_routing_case(11, 32, 6, RouterKind::sigmoid, true, t, 62));
  out.push_back(topk_routing_case(3, 5, 5, RouterKind::softmax, true, t, 63));
  out.push_back(gather_rows_case(23, 100, 64, 1, 0, t, 70));
  out.push_back(gather_rows_case(17, 50, 40, 4, 2, t, 71));
  out.push_back(scatter_add_rows_case(9, 30, 64, t, 80));
  out.push_back(scatter_add_rows_case(30, 30, 7, t, 81));
}

void add_ghc_cases(std::vector<OpCase>& out, ScalarType t) {
  out.push_back(ghc_dynamic_case(9, 2, 3, 32, t, 90));
  out.push_back(ghc_dynamic_case(5, 4, 8, 16, t, 91));
  out.push_back(ghc_dynamic_case(3, 2, 2, 8, t, 92));
  out.push_back(ghc_width_case(9, 2, 3, 32, false, t, 93));
  out.push_back(ghc_width_case(9, 2, 3, 32, true, t, 94));
  out.push_back(ghc_width_case(4, 8, 16, 8, false, t, 95));
  out.push_back(ghc_depth_case(9, 2, 3, 32, false, t, 96));
  out.push_back(ghc_depth_case(9, 2, 3, 32, true, t, 97));
  out.push_back(ghc_depth_case(4, 8, 16, 8, false, t, 98));
}

// Gated DeltaNet's ops at shapes with odd row counts, chunks that do not divide them,
// value heads sharing q/k heads, readers (rows that write nothing), a decode step;
// Mamba-2's scan (heads sharing B/C groups, partial chunks, decode) and grouped gate-first
// norm; the clamped SwiGLU of gpt-oss's experts and the sigmoid gates.
void add_linear_cases(std::vector<OpCase>& out, ScalarType t) {
  out.push_back(causal_conv1d_case(GdnCaseShape{37, 2, 4, 8, 6, 4}, t, 110));
  out.push_back(causal_conv1d_case(GdnCaseShape{1, 1, 2, 8, 8, 4, 0}, t, 111));  // a decode step
  out.push_back(causal_conv1d_case(GdnCaseShape{20, 1, 1, 4, 4, 3, 64, true, true}, t, 112));
  out.push_back(causal_conv1d_case(GdnCaseShape{9, 1, 1, 4, 4, 1}, t, 113));  // one tap: no history
  out.push_back(gated_delta_rule_case(GdnCaseShape{150, 2, 4, 16, 8}, t, 120));
  out.push_back(gated_delta_rule_case(GdnCaseShape{41, 1, 3, 8, 8, 4, 7}, t, 121));
  out.push_back(gated_delta_rule_case(GdnCaseShape{23, 2, 2, 8, 16, 4, 8, true}, t, 122));
  out.push_back(gated_delta_rule_case(GdnCaseShape{1, 1, 2, 16, 16, 4, 0}, t, 123));  // a decode step
  out.push_back(gated_delta_rule_case(GdnCaseShape{5, 1, 2, 8, 8, 4, 0, true}, t, 124));  // an HD/PHD step
  out.push_back(gated_rms_norm_case(37 * 4, 16, t, 130));
  out.push_back(gated_rms_norm_case(3, 128, t, 131));
  out.push_back(gated_rms_norm_case(17, 96, t, 132, GatedNormForm{24, true}));  // Mamba-2: 4 groups, gate first
  out.push_back(gated_rms_norm_case(2, 40, t, 133, GatedNormForm{0, true}));
  out.push_back(gated_rms_norm_case(5, 64, t, 134, GatedNormForm{16, false}));
  out.push_back(mamba2_ssd_case(Mamba2CaseShape{150, 4, 8, 2, 8, 64}, t, 160));  // partial last chunk
  out.push_back(mamba2_ssd_case(Mamba2CaseShape{41, 3, 5, 1, 6, 7}, t, 161));
  out.push_back(mamba2_ssd_case(Mamba2CaseShape{1, 4, 16, 4, 16, 0}, t, 162));  // a decode step
  out.push_back(mamba2_ssd_case(Mamba2CaseShape{6, 2, 8, 1, 4, 0}, t, 163));    // an HD step, row by row
  out.push_back(sigmoid_gate_case(19, 64, false, t, 140));
  out.push_back(sigmoid_gate_case(19, 48, true, t, 141));
  out.push_back(swiglu_case(21, 300, t, 150, SwigluClamp{7.0f, 1.702f}));
  out.push_back(swiglu_case(5, 33, t, 151, SwigluClamp{0.5f, 1.702f}));  // most elements clamped
}

void add_random_attention_cases(std::vector<OpCase>& out, ScalarType t) {
  using K = model::MaskSpec::Kind;
  ShapeDice dice(79);
  const K kinds[] = {K::causal, K::sliding, K::intra, K::phd};
  const model::Layout layouts[] = {model::Layout::interleaved, model::Layout::stream_major, model::Layout::phd_split};
  for (int i = 0; i < 3; ++i) {
    AttentionCaseShape s;
    s.mask.kind = kinds[dice.roll(0, 3)];
    s.mask.tokens = dice.roll(1, 90);
    s.mask.copies = dice.roll(1, 4);
    s.mask.window = dice.roll(1, 100);
    s.mask.phd_variant = static_cast<model::PhdVariant>(dice.roll(0, 2));
    s.mask.phd_W = dice.roll(1, 20);
    s.mask.phd_C = dice.roll(1, 20);
    s.layout = layouts[dice.roll(0, 2)];
    s.kv_heads = dice.roll(1, 3);
    s.heads = s.kv_heads * dice.roll(1, 3);
    s.head_dim = 8 * dice.roll(1, 12);
    s.decode = dice.roll(0, 3) == 0;
    out.push_back(attention_case(s, t, 2000 + static_cast<std::uint64_t>(i)));
  }
}

}  // namespace

std::vector<OpCase> correctness_cases(ScalarType type) {
  std::vector<OpCase> out;
  add_gemm_cases(out, type);
  add_vector_cases(out, type);
  add_scaled_rope_cases(out, type);
  add_routing_and_gather_cases(out, type);
  add_ghc_cases(out, type);
  add_linear_cases(out, type);
  auto attention = attention_correctness_cases(type);
  std::move(attention.begin(), attention.end(), std::back_inserter(out));
  add_random_attention_cases(out, type);
  if (type == ScalarType::f32) {  // scores are f32 whatever the run's type
    auto softmax = attention_softmax_cases();
    std::move(softmax.begin(), softmax.end(), std::back_inserter(out));
  }
  auto mla = mla_correctness_cases(type);  // op_cases_strided.cpp
  std::move(mla.begin(), mla.end(), std::back_inserter(out));
  auto designs = design_op_cases(type);  // the design modules' own ops (designs/registry.cpp)
  std::move(designs.begin(), designs.end(), std::back_inserter(out));
  return out;
}

bool runs_on(const Backend& backend, const OpCase& c) {
  return c.module ? backend.supports(*c.module, c.type) : backend.supports(c.op, c.type);
}

std::vector<OpCase> supported_cases(const Backend& backend, std::vector<OpCase> cases) {
  std::erase_if(cases, [&](const OpCase& c) { return !runs_on(backend, c); });
  return cases;
}

}  // namespace hdlab::executor
