// model::forward_memory against the executor's measured peak: the model layer models
// the runner's allocations (weights, KV capacity, reused workspace buffers), so every
// registered design and phase must land within the 2% the validation asks of it (the
// design conformance suite's memory check, issue 13).
#include <catch2/catch.hpp>

#include "executor/runner_test_support.hpp"
#include "hdlab/calibration/validation.hpp"
#include "hdlab/executor/backends.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/design.hpp"
#include "hdlab/model/error.hpp"

using namespace hdlab;
using namespace hdlab::calibration;

namespace {

model::Backbone small(bool moe, std::int64_t mirror = 0) {
  model::Backbone b;
  b.name = "small";
  b.num_layers = 4;
  b.hidden = 96;
  b.num_heads = 3;
  b.num_kv_heads = 1;
  b.head_dim = 32;
  b.intermediate = moe ? 0 : 160;
  b.vocab_size = 300;
  b.vocab_pad_multiple = 16;
  b.layers = {{model::AttentionKind::sliding, 40}, {}, {model::AttentionKind::sliding, 40}, {}};
  b.kv_mirror_layers = mirror;
  b.qk_norm = true;
  b.rope_theta = 10000.0;
  b.norm_eps = 1e-6;
  b.dtype = model::DType::fp32;
  if (moe) {
    model::MoeConfig m;
    m.num_experts = 6;
    m.top_k = 2;
    m.expert_intermediate = 64;
    m.num_shared_experts = 1;
    m.shared_expert_intermediate = 64;
    b.moe = m;
  }
  return b;
}

// `small` with Gated DeltaNet in layers 0 and 2 (2 q/k heads of 16 shared by 4 value heads
// of 24, conv of 4 taps), gated attention outputs and (MoE) a gated shared expert.
model::Backbone small_hybrid(bool moe) {
  model::Backbone b = small(moe);
  using model::MixerKind;
  b.mixers = {MixerKind::gated_deltanet, MixerKind::attention, MixerKind::gated_deltanet, MixerKind::attention};
  b.gdn = model::GatedDeltaNetConfig{2, 4, 16, 24, 4};
  b.attention_output_gate = true;
  if (moe) b.moe->shared_expert_gate = true;
  return b;
}

// `small` shaped like Nemotron-H: single-sublayer layers M - * M (Mamba-2 mixers of 6
// heads of 16 with 2 groups of state 16, chunks of 32), relu2 MLPs, no positions.
model::Backbone small_nemotron_h() {
  model::Backbone b = small(false);
  using model::FfnKind;
  using model::MixerKind;
  b.mixers = {MixerKind::mamba2, MixerKind::none, MixerKind::attention, MixerKind::mamba2};
  b.ffns = {FfnKind::none, FfnKind::dense, FfnKind::none, FfnKind::dense};
  b.mamba = model::Mamba2Config{6, 16, 2, 16, 4, 32, true};
  b.mlp = model::MlpKind::relu2;
  b.positions = model::PositionKind::none;
  b.qk_norm = false;
  return b;
}

// Any valid profile: only the memory half of the prediction is checked here.
simulator::HardwareProfile some_cpu() {
  simulator::HardwareProfile h;
  h.kind = simulator::DeviceKind::cpu;
  h.peak_fp32_tflop_per_s = h.peak_bf16_tflop_per_s = h.peak_fp16_tflop_per_s = 0.1;
  h.memory_bandwidth_gb_per_s = 10;
  h.efficiency.fill(1.0);
  return h;
}

}  // namespace

TEST_CASE("forward_memory predicts the executor's peak within 2% for every design and phase", "[memory]") {
  struct Design {
    model::Backbone b;
    std::string design;
    std::optional<model::Layout> layout;
  };
  // Every example the registry lists (so a design added to it is checked here without this
  // file being edited), on the 4-layer backbone the examples are written for; then the
  // cases they leave out: HD in both layouts with a local window, HD over KV-mirror layers,
  // and an MoE backbone.
  std::vector<Design> designs;
  for (const auto& [key, text] : model::conformance_examples()) designs.push_back({small(false), text, {}});
  const std::string hd_mixed = R"({"hd": {"n": 3, "layers": ["intra", "full", "local", "intra"], "window": 50}})";
  designs.push_back({small(false), hd_mixed, model::Layout::interleaved});
  designs.push_back({small(false), hd_mixed, model::Layout::stream_major});
  designs.push_back({small(false, 1), R"({"hd": {"n": 2, "layers": "full", "kv_mirror": true}})", {}});
  designs.push_back({small(false, 1), "{}", {}});  // a mirror layer's stored source input without HD
  designs.push_back({small(true), "{}", {}});
  // Hybrids: every example the hybrid takes (looped, and HD's local kind on a linear
  // layer, refuse it), in both HD layouts and with PHD's hidden copies writing the
  // states; and gpt-oss's biased experts.
  for (const auto& [key, text] : model::conformance_examples()) {
    try {
      (void)model::parse_design(nlohmann::json::parse(text), small_hybrid(false), "/design");
      designs.push_back({small_hybrid(false), text, {}});
    } catch (const model::ConfigError&) {
    }
  }
  designs.push_back({small_hybrid(true), R"({"hd": {"n": 3, "layers": ["intra", "full", "full", "intra"]}})",
                     model::Layout::interleaved});
  designs.push_back({small_hybrid(true), R"({"hd": {"n": 3, "layers": ["intra", "full", "full", "intra"]}})",
                     model::Layout::stream_major});
  designs.push_back({small_hybrid(false), R"({"phd": {"K": 3, "linear_state": "all_copies"}})", {}});
  designs.push_back({executor::testing::with_gpt_oss_experts(small(true)), "{}", {}});
  // Nemotron-H: every example it takes (PHD, looped, VWN and mHC refuse it), HD in both
  // layouts.
  for (const auto& [key, text] : model::conformance_examples()) {
    try {
      (void)model::parse_design(nlohmann::json::parse(text), small_nemotron_h(), "/design");
      designs.push_back({small_nemotron_h(), text, {}});
    } catch (const model::ConfigError&) {
    }
  }
  for (model::Layout l : {model::Layout::interleaved, model::Layout::stream_major})
    designs.push_back({small_nemotron_h(), R"({"hd": {"n": 3, "layers": ["intra", "full", "full", "intra"]}})", l});
  // MLA (latent cache; expanded keys in training and prefill, absorbed queries in decode),
  // without and with q_lora: every example it takes.
  for (std::int64_t q_lora : {0, 20})
    for (const auto& [key, text] : model::conformance_examples()) {
      const model::Backbone b = executor::testing::tiny_mla(3, q_lora);
      try {
        (void)model::parse_design(nlohmann::json::parse(text), b, "/design");
        designs.push_back({b, text, {}});
      } catch (const model::ConfigError&) {
      }
    }
  auto backend = executor::make_cpu_backend(executor::CpuOptions{1, "auto"});
  ValidationSpec spec;
  spec.warmup = 1;
  spec.repeats = 2;
  for (const Design& d : designs)
    for (executor::Phase phase : {executor::Phase::train_forward, executor::Phase::prefill, executor::Phase::decode}) {
      ValidationCase c;
      c.config = model::make_config(d.b, model::parse_design(nlohmann::json::parse(d.design), d.b, "/design"));
      c.layout = d.layout;
      c.phase = phase;
      c.tokens = 70;
      const CaseMeasurement m = measure_case(*backend, c, spec);
      const CasePrediction p = predict_case(c, some_cpu(), spec);
      INFO(d.design << " " << executor::to_string(phase) << ": measured " << m.peak_bytes << " B, predicted "
                    << p.memory.total() << " B (weights " << p.memory.weight_bytes << " vs " << m.weight_bytes
                    << ", KV " << p.memory.kv_bytes << " vs " << m.kv_bytes << ")");
      CHECK(p.memory.weight_bytes == Approx(m.weight_bytes).epsilon(0.001));
      CHECK(p.memory.kv_bytes == m.kv_bytes);
      CHECK(p.memory.total() == Approx(m.peak_bytes).epsilon(0.02));
    }
}
