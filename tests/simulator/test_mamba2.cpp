// Mamba-2 layers and single-sublayer blocks (Nemotron-H) in the cost model: the op nodes
// counted by hand (chunked SSD prefill, one recurrent step per decoded token), FFN-only and
// mixer-only layers, the recurrent state in place of the KV cache, and the designs on them.
#include <catch2/catch.hpp>

#include <cmath>

#include "fixtures.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/params.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using fixtures::Json;

namespace {

// 4 single-sublayer layers as Nemotron-H builds them: mamba, mlp, attention, mlp. D 8,
// 2 x 1 attention heads of 4 (no positions), relu2 MLP of 16. Mamba-2: 2 heads of 4, one
// B/C group of state 4, conv 4 with bias, chunks of 16: inner 8, B and C 8, conv channels
// 16, in_proj 2*8 + 8 + 2 = 26 wide; state 2 x 4 x 4 = 32 elements, conv state 16 x 3 = 48.
Json tiny_nemotron() {
  Json j = fixtures::tiny_dense();
  j["num_layers"] = 4;
  j["qk_norm"] = false;
  j["positions"] = "none";
  j["mlp"] = "relu2";
  j["layer_types"] = {"mamba2", "none", "attention", "none"};
  j["ffn_types"] = {"none", "dense", "none", "dense"};
  j["mamba2"] = {{"num_heads", 2}, {"head_dim", 4},     {"n_groups", 1},     {"state_size", 4},
                 {"conv_kernel", 4}, {"chunk_size", 16}, {"conv_bias", true}};
  return j;
}

Metrics eval(const model::Config& c, const Scenario& s = Scenario{}) { return evaluate(c, fixtures::device(), s); }

double node_params(const model::OpNodes& t) {
  double p = 0;
  for (const auto& n : t) p += n.params;
  return p;
}

}  // namespace

TEST_CASE("a Mamba-2 layer's op nodes, counted by hand", "[mamba2]") {
  const model::Config c = fixtures::config(tiny_nemotron(), "{}");
  const model::OpDims s = model::op_dims(c.effective, c.design.method);
  const model::LayerFeatures f = model::layer_features(c.effective, 0);
  REQUIRE(f.mixer == model::MixerKind::mamba2);
  REQUIRE(f.linear());
  CHECK_FALSE(f.ffn);
  // prefill: 2 sequences of 20 tokens: 2 chunks of 16 each (the second padded)
  model::LayerWork w;
  w.seqs = 2;
  w.rows_q = w.rows_kv = 20;
  model::OpNodes t{};
  model::layer_ops(s, f, w, true, t);
  const double N = 40, D = 8, H = 2, P = 4, Ns = 4, G = 1, I = 8, Q = 16, e = 2, chunks = 2 * 2;
  CHECK(model::node(t, model::OpKind::qkv_proj).cost.flops == 2 * N * D * 26);
  CHECK(model::node(t, model::OpKind::rope).cost.flops == 0);
  const double conv = N * 16 * (2 * 4 + 1 + 4);
  const double ssd = chunks * (2 * G * Q * Q * Ns + H * (3 * Q * Q + 2 * Q * Q * P + 4 * Q * Ns * P + 2 * Ns * P)) +
                     N * H * (10 + 2 * P);
  const model::OpNode& mix = model::node(t, model::OpKind::attention);
  CHECK(mix.cost.flops == conv + ssd);
  CHECK(mix.calls == 2);
  // prefill writes each sequence's final recurrent and conv states, reads none
  CHECK(mix.cost.kv_bytes_read == 0);
  CHECK(mix.cost.kv_bytes_written == 2 * (32 + 48) * e);
  // the chunks hand dt and its decay, C B^T and the chunk states on in fp32
  const double handed = 4 * (2 * N * H + chunks * (G * Q * Q + 2 * H * P * Ns));
  CHECK(mix.cost.act_bytes_in == N * 16 * e + handed + N * (I + 8 + H) * e);
  CHECK(model::node(t, model::OpKind::o_proj).cost.flops == 2 * N * I * D + 9 * N * I);
  // no FFN, one norm, one residual add
  CHECK(model::node(t, model::OpKind::ffn_gate_up).cost.flops == 0);
  CHECK(model::node(t, model::OpKind::ffn_norm).cost.flops == 0);
  CHECK(model::node(t, model::OpKind::attn_norm).params == D);
  CHECK(model::node(t, model::OpKind::residual).cost.flops == N * D);
  // the nodes' parameters are the count's: the mixer, one norm
  const model::ParamCounts p = model::count_params(c);
  const double mixer = D * 26 + 16 * (4 + 1) + 3 * H + I + I * D;
  CHECK(p.linear_attention == mixer);
  CHECK(node_params(t) == mixer + D);

  // decode: one recurrent step per sequence, the states read and written, O(1) in context
  w.rows_q = w.rows_kv = 1;
  w.reads_cache = true;
  model::layer_ops(s, f, w, true, t);
  const model::OpNode& step = model::node(t, model::OpKind::attention);
  CHECK(step.cost.flops == 2 * 16 * 13 + 2 * H * (5 * Ns * P + 10 + 2 * P));
  CHECK(step.cost.kv_bytes_read == 2 * (32 + 48) * e);
  CHECK(step.cost.kv_bytes_written == 2 * (32 + 48) * e);
}

TEST_CASE("an FFN-only layer runs the relu2 MLP and nothing else", "[mamba2]") {
  const model::Config c = fixtures::config(tiny_nemotron(), "{}");
  const model::OpDims s = model::op_dims(c.effective, c.design.method);
  const model::LayerFeatures f = model::layer_features(c.effective, 1);
  REQUIRE(f.mixer == model::MixerKind::none);
  model::LayerWork w;
  w.seqs = 1;
  w.rows_q = w.rows_kv = 10;
  model::OpNodes t{};
  model::layer_ops(s, f, w, true, t);
  const double N = 10, D = 8, F = 16;
  for (auto k : {model::OpKind::attn_norm, model::OpKind::qkv_proj, model::OpKind::attention, model::OpKind::o_proj})
    CHECK(model::node(t, k).cost.bytes() == 0);
  CHECK(model::node(t, model::OpKind::ffn_gate_up).cost.flops == 2 * N * D * F);  // up only: no gate
  CHECK(model::node(t, model::OpKind::ffn_act).cost.flops == 2 * N * F);          // relu(x)^2
  CHECK(model::node(t, model::OpKind::ffn_down).cost.flops == 2 * N * F * D);
  CHECK(node_params(t) == 2 * D * F + D);
  CHECK(model::node(t, model::OpKind::residual).cost.flops == N * D);
  const model::ParamCounts p = model::count_params(c);
  CHECK(p.dense_ffn == 2 * (2 * D * F));
  CHECK(p.norms == 4 * D + D);  // one per layer and the final norm
}

TEST_CASE("Mamba-2 hybrid: the cache holds the attention layer's KV and the fixed mamba state", "[mamba2][memory]") {
  const Metrics m = eval(fixtures::config(tiny_nemotron(), "{}"));
  // 1 attention layer x 32768 tokens x (K + V of one head of 4) x 2 B + 1 mamba layer x (32 + 48) x 2 B;
  // the FFN-only layers keep nothing
  CHECK(m[Metric::kv_bytes_per_seq] == 32768.0 * 8 * 2 + 80 * 2);
  Scenario s;
  s.kv.context = 1024;
  CHECK(eval(fixtures::config(tiny_nemotron(), "{}"), s)[Metric::kv_bytes_per_seq] == 1024.0 * 8 * 2 + 80 * 2);
}

TEST_CASE("HD on a Mamba-2 hybrid: n=1 is the baseline, intra-stream mamba layers keep n states", "[mamba2][hd]") {
  const Metrics base = eval(fixtures::config(tiny_nemotron(), "{}"));
  const Metrics one = eval(fixtures::config(tiny_nemotron(), R"({"hd": {"n": 1}})"));
  for (Metric k : {Metric::prefill_s, Metric::prefill_flops, Metric::decode_step_s, Metric::kv_bytes_per_seq})
    CHECK(one[k] == Approx(base[k]).epsilon(1e-12));
  const Metrics intra = eval(fixtures::config(tiny_nemotron(), R"({"hd": {"n": 4, "layers": "intra"}})"));
  CHECK(intra[Metric::kv_bytes_per_seq] == Approx(4 * base[Metric::kv_bytes_per_seq]));
  const Metrics full = eval(fixtures::config(tiny_nemotron(), R"({"hd": {"n": 4, "layers": "full"}})"));
  CHECK(full[Metric::kv_bytes_per_seq] == Approx(4 * 32768.0 * 8 * 2 + 80 * 2));
}

TEST_CASE("designs that do not apply to Mamba-2 or single-sublayer layers are refused by pointer",
          "[mamba2][errors]") {
  for (const char* d : {R"({"phd": {"K": 2}})", R"({"looped": {"iterations": 2}})"}) {
    const std::string e = fixtures::error_of([&] { fixtures::config(tiny_nemotron(), d); });
    CHECK(e.find("mamba2") != std::string::npos);
  }
  CHECK(fixtures::error_of([] { fixtures::config(tiny_nemotron(), R"({"phd": {"K": 2}})"); }).rfind("/design/phd", 0) ==
        0);
  const std::string local = fixtures::error_of(
      [] { fixtures::config(tiny_nemotron(), R"({"hd": {"n": 2, "layers": "local", "window": 8}})"); });
  CHECK(local.find("is mamba2") != std::string::npos);
  for (const char* d : {R"({"vwn": {"m": 2, "n": 4}})", R"({"mhc": {"n": 2}})"}) {
    const std::string e = fixtures::error_of([&] { fixtures::config(tiny_nemotron(), d); });
    INFO(e);
    CHECK(e.rfind("/design/", 0) == 0);
    CHECK(e.find("layer 0 has only a mixer") != std::string::npos);
  }
  Json mirrored = tiny_nemotron();
  mirrored["layer_types"] = {"attention", "mamba2", "attention", "none"};
  mirrored["kv_mirror_layers"] = 1;
  CHECK(fixtures::error_of([&] { fixtures::config(mirrored, "{}"); }).rfind("/backbone/kv_mirror_layers", 0) == 0);
}
