// Linear-attention (Gated DeltaNet) layers in the cost model: the op nodes counted by hand
// (chunked prefill, recurrent decode), the recurrent state in place of the KV cache, and
// HD's states per stream.
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/params.hpp"

using namespace hdlab;
using namespace hdlab::simulator;
using fixtures::Json;

namespace {

// 4 layers (3 linear, 1 attention), D 8, 2 x 1 heads of 4; GDN: 1 q/k head of 4, 2 value
// heads of 4, conv 4. State 2 x 4 x 4 = 32 elements; conv state (2*4 + 8) x 3 = 48.
Json tiny_hybrid() {
  Json j = fixtures::tiny_dense();
  j["num_layers"] = 4;
  j["layer_types"] = {{"pattern", {"linear_attention", "linear_attention", "linear_attention", "attention"}}};
  j["linear_attention"] = {{"num_key_heads", 1}, {"num_value_heads", 2}, {"key_head_dim", 4},
                           {"value_head_dim", 4}, {"conv_kernel", 4}};
  return j;
}

Metrics eval(const model::Config& c, const Scenario& s = Scenario{}) { return evaluate(c, fixtures::device(), s); }

}  // namespace

TEST_CASE("a Gated DeltaNet layer's op nodes, counted by hand", "[linear]") {
  const model::Config c = fixtures::config(tiny_hybrid(), "{}");
  const model::OpDims s = model::op_dims(c.effective, c.design.method);
  const model::LayerFeatures f = model::layer_features(c.effective, 0);
  REQUIRE(f.linear());
  CHECK_FALSE(model::layer_features(c.effective, 3).linear());
  // prefill: 2 sequences of 100 tokens (2 chunks of 64, the second padded)
  model::LayerWork w;
  w.seqs = 2;
  w.rows_q = w.rows_kv = 100;
  model::OpNodes t{};
  model::layer_ops(s, f, w, true, t);
  const double N = 200, D = 8, qk = 4, v = 8, hv = 2, dk = 4, dv = 4, C = 64, e = 2;
  CHECK(model::node(t, model::OpKind::qkv_proj).cost.flops == 2 * N * D * (2 * qk + 2 * v + 2 * hv));
  CHECK(model::node(t, model::OpKind::rope).cost.flops == 0);
  CHECK(model::node(t, model::OpKind::qk_norm).cost.flops == 0);
  const double conv = N * (2 * qk + v) * (2 * 4 + 4);
  const double rule = 2 * 2 * hv * (C * C * (6 * dk + 4 * dv) + 2 * C * C * C / 3 + 6 * C * dk * dv) + 10 * N * hv +
                      3 * N * 2 * qk;
  const model::OpNode& mix = model::node(t, model::OpKind::attention);
  CHECK(mix.cost.flops == Approx(conv + rule).epsilon(1e-12));
  // prefill writes the final recurrent and conv states of each sequence, reads none
  CHECK(mix.cost.kv_bytes_read == 0);
  CHECK(mix.cost.kv_bytes_written == 2 * (32 + 48) * e);
  CHECK(model::node(t, model::OpKind::o_proj).cost.flops == 2 * N * v * D + 9 * N * v);
  // the mixer's parameters add up to the count's
  double params = 0;
  for (const auto& n : t) params += n.params;
  const model::ParamCounts p = model::count_params(c);
  CHECK(params - model::node(t, model::OpKind::ffn_gate_up).params - model::node(t, model::OpKind::ffn_down).params -
            model::node(t, model::OpKind::attn_norm).params - model::node(t, model::OpKind::ffn_norm).params ==
        p.linear_attention / 3);

  // decode: one recurrent step per sequence, the states read and written, O(1) in context
  w.rows_q = w.rows_kv = 1;
  w.reads_cache = true;
  model::layer_ops(s, f, w, true, t);
  const model::OpNode& step = model::node(t, model::OpKind::attention);
  CHECK(step.cost.flops == Approx(2 * (2 * qk + v) * 12 + 2 * hv * 7 * dk * dv + 10 * 2 * hv + 3 * 2 * 2 * qk));
  CHECK(step.cost.kv_bytes_read == 2 * (32 + 48) * e);
  CHECK(step.cost.kv_bytes_written == 2 * (32 + 48) * e);
}

TEST_CASE("hybrid backbone: the cache holds the attention layers' KV and fixed linear states", "[linear][memory]") {
  const Metrics m = eval(fixtures::config(tiny_hybrid(), "{}"));
  // 1 attention layer x 32768 tokens x (K + V of one head of 4) x 2 B + 3 layers x (32 + 48) x 2 B
  CHECK(m[Metric::kv_bytes_per_seq] == 32768.0 * 8 * 2 + 3 * 80 * 2);
  Scenario s;
  s.kv.context = 1024;
  CHECK(eval(fixtures::config(tiny_hybrid(), "{}"), s)[Metric::kv_bytes_per_seq] == 1024.0 * 8 * 2 + 3 * 80 * 2);
  // decode time rises with context only through the one attention layer
  CHECK(m[Metric::decode_step_s] > 0);
}

TEST_CASE("HD on a hybrid backbone: n=1 is the baseline, and intra-stream linear layers keep n states",
          "[linear][hd]") {
  const Metrics base = eval(fixtures::config(tiny_hybrid(), "{}"));
  const Metrics one = eval(fixtures::config(tiny_hybrid(), R"({"hd": {"n": 1}})"));
  for (Metric k : {Metric::prefill_s, Metric::prefill_flops, Metric::decode_step_s, Metric::kv_bytes_per_seq})
    CHECK(one[k] == Approx(base[k]).epsilon(1e-12));
  // every layer intra: n states per linear layer, n KV caches of L each per attention layer
  const Metrics intra = eval(fixtures::config(tiny_hybrid(), R"({"hd": {"n": 4, "layers": "intra"}})"));
  CHECK(intra[Metric::kv_bytes_per_seq] == Approx(4 * base[Metric::kv_bytes_per_seq]));
  // every layer full (cross-stream): one state over the interleaved sequence
  const Metrics full = eval(fixtures::config(tiny_hybrid(), R"({"hd": {"n": 4, "layers": "full"}})"));
  CHECK(full[Metric::kv_bytes_per_seq] == Approx(4 * 32768.0 * 8 * 2 + 3 * 80 * 2));
}

TEST_CASE("PHD on a hybrid: origins keep plain PHD's partial prefill, all_copies compute every copy",
          "[linear][phd]") {
  const model::Config origins = fixtures::config(tiny_hybrid(), R"({"phd": {"K": 3}})");
  const model::Config all = fixtures::config(tiny_hybrid(), R"({"phd": {"K": 3, "linear_state": "all_copies"}})");
  // the default is written down
  REQUIRE(origins.design.defaults.count("/design/phd/linear_state"));
  CHECK(model::to_json(origins.design)["phd"]["linear_state"] == "origins");
  CHECK(model::design_features(origins.design.method).hidden_copies_read_only);
  CHECK_FALSE(model::design_features(all.design.method).hidden_copies_read_only);
  // origins: the L origins plus the last token's K-1 copies; all_copies: K L positions
  CHECK(model::prefill_tail(origins.design.method, 100) == std::optional<std::int64_t>(1));
  CHECK_FALSE(model::prefill_tail(all.design.method, 100).has_value());
  const Metrics o = eval(origins), a = eval(all);
  CHECK(a[Metric::prefill_flops] > 2.5 * o[Metric::prefill_flops]);
  // one state per sequence either way: the cache is the baseline's plus nothing
  CHECK(o[Metric::kv_bytes_per_seq] == a[Metric::kv_bytes_per_seq]);
}

TEST_CASE("designs that do not apply to linear layers are refused by pointer", "[linear][errors]") {
  CHECK(fixtures::error_of([] {
          fixtures::config(fixtures::tiny_dense(), R"({"phd": {"K": 2, "linear_state": "origins"}})");
        }).rfind("/design/phd/linear_state", 0) == 0);
  CHECK(fixtures::error_of([] { fixtures::config(tiny_hybrid(), R"({"phd": {"K": 2, "linear_state": "some"}})"); })
            .rfind("/design/phd/linear_state", 0) == 0);
  CHECK(fixtures::error_of([] { fixtures::config(tiny_hybrid(), R"({"looped": {"iterations": 2}})"); })
            .rfind("/design/looped", 0) == 0);
  CHECK(fixtures::error_of([] { fixtures::config(tiny_hybrid(), R"({"hd": {"n": 2, "layers": "local", "window": 8}})"); })
            .find("linear_attention") != std::string::npos);
  Json mirrored = tiny_hybrid();
  mirrored["layer_types"] = {"attention", "linear_attention", "linear_attention", "linear_attention"};
  mirrored["kv_mirror_layers"] = 1;
  CHECK(fixtures::error_of([&] { fixtures::config(mirrored, "{}"); }).rfind("/backbone/kv_mirror_layers", 0) == 0);
}
