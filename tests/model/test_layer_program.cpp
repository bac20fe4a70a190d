// The layer program (model/layer_program.hpp): op nodes of a layer counted by hand, the
// dims each design adds, and a pass's program in execution order with its caches.
#include <catch2/catch.hpp>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/layer_program.hpp"

using namespace hdlab::model;

namespace {

// 4 layers, D 64, 4 query heads and 2 KV heads of 16, SwiGLU 128, bf16.
Config tiny_with(const char* design) {
  const Json backbone = Json::parse(R"({"name": "tiny", "num_layers": 4, "hidden_size": 64, "num_heads": 4,
    "num_kv_heads": 2, "intermediate_size": 128, "vocab_size": 100})");
  return parse_config(Json{{"backbone", backbone}, {"design", Json::parse(design)}});
}

double flops(const OpNodes& t, OpKind k) { return node(t, k).cost.flops; }

}  // namespace

TEST_CASE("a dense layer's op nodes, counted by hand", "[layer_program]") {
  const Config c = tiny_with(R"({"baseline": {}})");
  const OpDims s = op_dims(c.effective, c.design.method);
  // 2 sequences of 10 rows: N = 20 rows; 55 visible pairs, 100 in executed tiles each.
  LayerWork w;
  w.seqs = 2;
  w.rows_q = w.rows_kv = 10;
  w.pairs_exact = 55;
  w.pairs_executed = 100;
  w.kv_written = 10;
  OpNodes t{};
  layer_ops(s, layer_features(c.effective, 0), w, true, t);
  const double N = 20, D = 64, q = 4 * 16, kv = 2 * 16, F = 128;
  CHECK(flops(t, OpKind::attn_norm) == 4 * N * D);
  CHECK(flops(t, OpKind::qkv_proj) == 2 * N * D * (q + 2 * kv));
  CHECK(node(t, OpKind::qkv_proj).params == D * (q + 2 * kv));
  CHECK(flops(t, OpKind::rope) == 3 * N * (q + kv));
  CHECK(flops(t, OpKind::attention) == 4 * 16 * 4 * 2 * 100);  // 4 hd H per executed pair
  CHECK(flops(t, OpKind::o_proj) == 2 * N * q * D);
  CHECK(flops(t, OpKind::ffn_norm) == 4 * N * D);
  CHECK(flops(t, OpKind::ffn_gate_up) == 2 * N * D * 2 * F);
  CHECK(flops(t, OpKind::ffn_act) == 5 * N * F);
  CHECK(flops(t, OpKind::ffn_down) == 2 * N * F * D);
  CHECK(flops(t, OpKind::residual) == 2 * N * D);
  // K and V of 10 rows per sequence written to the cache, bf16
  CHECK(node(t, OpKind::attention).cost.kv_bytes_written == 2 * 10 * 2 * kv * 2);
  CHECK(flops(t, OpKind::router) == 0);
  CHECK(flops(t, OpKind::ghc_width) == 0);
  // the exact pairs when asked
  layer_ops(s, layer_features(c.effective, 0), w, false, t);
  CHECK(flops(t, OpKind::attention) == 4 * 16 * 4 * 2 * 55);
}

TEST_CASE("what each design adds to the op dims", "[layer_program]") {
  const Config base = tiny_with(R"({"baseline": {}})");
  const OpDims b = op_dims(base.effective, base.design.method);
  CHECK(b.hd_n == 1);
  CHECK(b.phd_K == 1);
  CHECK_FALSE(b.vwn);
  CHECK(b.loop_iterations == 1);
  CHECK(b.bytes == 2);
  CHECK(b.V == 100);
  const Config hd = tiny_with(R"({"hd": {"n": 4}})");
  CHECK(op_dims(hd.effective, hd.design.method).hd_n == 4);
  const Config phd = tiny_with(R"({"phd": {"K": 3}})");
  CHECK(op_dims(phd.effective, phd.design.method).phd_K == 3);
  const Config vwn = tiny_with(R"({"vwn": {"m": 2, "n": 3, "dynamic": false, "embedding": "projected", "mtp": true}})");
  const OpDims v = op_dims(vwn.effective, vwn.design.method);
  CHECK(v.vwn);
  CHECK(v.vwn_m == 2);
  CHECK(v.vwn_n == 3);
  CHECK_FALSE(v.vwn_dynamic);
  CHECK(v.vwn_projected);
  CHECK(v.vwn_mtp);
  const Config loop =
      tiny_with(R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 3, "input_injection": true}})");
  const OpDims l = op_dims(loop.effective, loop.design.method);
  CHECK(l.loop_iterations == 3);
  CHECK(l.injection);
}

TEST_CASE("a looped pass's program: every run in order, its cache slot, the injection per iteration",
          "[layer_program][looped]") {
  const Config c =
      tiny_with(R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 3, "input_injection": true}})");
  const OpDims s = op_dims(c.effective, c.design.method);
  const std::vector<LayerRun> runs = layer_runs(c.design.method, c.effective.num_layers);
  LayerWork w;
  w.seqs = 1;
  w.rows_q = w.rows_kv = 8;
  w.pairs_exact = w.pairs_executed = 36;
  const std::vector<LayerWork> work(runs.size(), w);
  const PassProgram p = pass_program(c, s, runs, work, OutsideWork{1, 8, 8, 8, 0});
  REQUIRE(p.runs.size() == 8);  // prelude, 3 x 2 recurrent, coda
  const std::int64_t layers[] = {0, 1, 2, 1, 2, 1, 2, 3}, iterations[] = {0, 0, 0, 1, 1, 2, 2, 0},
                     slots[] = {0, 1, 2, 3, 4, 5, 6, 7};
  for (std::size_t i = 0; i < p.runs.size(); ++i) {
    INFO("run " << i);
    CHECK(p.runs[i].run.layer == layers[i]);
    CHECK(p.runs[i].run.iteration == iterations[i]);
    CHECK(p.runs[i].run.cache_slot == slots[i]);
    CHECK(flops(p.runs[i].ops, OpKind::qkv_proj) == 2 * 8 * 64 * (64 + 64));
  }
  // [h; e] (2D) -> D per row, once per iteration
  CHECK(p.op_total(OpKind::injection).flops == 3 * 2 * 8 * 128 * 64);
  CHECK(p.op_total(OpKind::qkv_proj).flops == 8 * 2 * 8 * 64 * 128);
  double sum = 0;
  for (int k = 0; k < op_kind_count; ++k) sum += p.op_total(static_cast<OpKind>(k)).flops;
  CHECK(p.total().flops == sum);
  CHECK_THROWS_WITH(pass_program(c, s, runs, std::vector<LayerWork>(3, w), OutsideWork{}),
                    Catch::Contains("3 works for 8 layer runs"));
}
