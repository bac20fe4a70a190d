// The layer program (model/layer_program.hpp): op nodes of a layer counted by hand, the
// dims each design adds, a pass's program in execution order with its caches, the work
// of each layer run (layer_work.hpp), the tensors the nodes name and the memory derived
// from them (forward_memory.hpp).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/forward_memory.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/layer_work.hpp"
#include "hdlab/model/mask.hpp"

using namespace hdlab::model;

namespace {

// 4 layers, D 64, 4 query heads and 2 KV heads of 16, SwiGLU 128, bf16.
Config tiny_with(const char* design) {
  const Json backbone = Json::parse(R"({"name": "tiny", "num_layers": 4, "hidden_size": 64, "num_heads": 4,
    "num_kv_heads": 2, "intermediate_size": 128, "vocab_size": 100})");
  return parse_config(Json{{"backbone", backbone}, {"design", Json::parse(design)}});
}

double flops(const OpNodes& t, OpKind k) { return node(t, k).cost.flops; }

// 2 sequences of 10 rows: N = 20 rows; 55 visible pairs, 100 in executed tiles each; the
// 10 rows of each kept in the cache.
LayerWork dense_work() {
  LayerWork w;
  w.seqs = 2;
  w.rows_q = w.rows_kv = 10;
  w.pairs_exact = 55;
  w.pairs_executed = 100;
  w.kv_written = 10;
  return w;
}

}  // namespace

TEST_CASE("a dense layer's op nodes, counted by hand", "[layer_program]") {
  const Config c = tiny_with(R"({"baseline": {}})");
  const OpDims s = op_dims(c.effective, c.design.method);
  const LayerWork w = dense_work();
  OpNodes t{};
  layer_ops(s, layer_features(c.effective, 0), w, true, t);
  const double N = 20, D = 64, q = 4 * 16, kv = 2 * 16, F = 128;
  CHECK(flops(t, OpKind::attn_norm) == 4 * N * D);
  CHECK(flops(t, OpKind::qkv_proj) == 2 * N * D * (q + 2 * kv));
  CHECK(node(t, OpKind::qkv_proj).params == D * (q + 2 * kv));
  // q, k and v of the same rows run as one product of the concatenated weights
  const OpNode& qkv = node(t, OpKind::qkv_proj);
  CHECK((qkv.gemms[0].m == N && qkv.gemms[0].n == q + 2 * kv && qkv.gemms[0].k == D && qkv.gemms[0].groups == 1));
  CHECK(qkv.gemms[1].groups == 0);
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

TEST_CASE("gate and up launched apart: two products of F, the same FLOPs, the input read twice", "[layer_program]") {
  const Config c = tiny_with(R"({"baseline": {}})");
  const OpDims s = op_dims(c.effective, c.design.method);
  LayerWork w = dense_work();
  OpNodes fused{}, apart{};
  layer_ops(s, layer_features(c.effective, 0), w, true, fused);
  w.separate_gate_up = true;
  layer_ops(s, layer_features(c.effective, 0), w, true, apart);
  const OpNode &f = node(fused, OpKind::ffn_gate_up), &a = node(apart, OpKind::ffn_gate_up);
  CHECK((f.gemms[0].m == 20 && f.gemms[0].n == 2 * 128 && f.gemms[0].k == 64 && f.gemms[1].groups == 0));
  for (const OpGemm& g : a.gemms) CHECK((g.m == 20 && g.n == 128 && g.k == 64 && g.groups == 1));
  CHECK(a.calls == 2);
  CHECK(a.cost.flops == f.cost.flops);
  CHECK(a.params == f.params);
  CHECK(a.cost.act_bytes_in == 2 * 20 * 64 * 2);
  CHECK(a.cost.act_bytes_out == f.cost.act_bytes_out);
}

TEST_CASE("q and K/V projected from different rows are two products", "[layer_program]") {
  // PHD-like: 10 query rows per sequence, K/V of 4 of them (the origin rows)
  const Config c = tiny_with(R"({"baseline": {}})");
  LayerWork w = dense_work();
  w.rows_kv = 4;
  OpNodes t{};
  layer_ops(op_dims(c.effective, c.design.method), layer_features(c.effective, 0), w, true, t);
  const OpNode& qkv = node(t, OpKind::qkv_proj);
  CHECK((qkv.gemms[0].m == 20 && qkv.gemms[0].n == 4 * 16 && qkv.gemms[0].k == 64));
  CHECK((qkv.gemms[1].m == 8 && qkv.gemms[1].n == 2 * 2 * 16 && qkv.gemms[1].k == 64 && qkv.gemms[1].groups == 1));
  CHECK(qkv.cost.flops == 2 * 64 * (20 * 4 * 16 + 8 * 2 * 2 * 16));
}

// Every field of two nodes, bit for bit where doubles (-0 and +0 differ here).
bool same_node(const OpNode& a, const OpNode& b) {
  auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
  const double fa[] = {a.cost.flops, a.cost.weight_bytes, a.cost.act_bytes_in, a.cost.act_bytes_out,
                       a.cost.kv_bytes_read, a.cost.kv_bytes_written, a.params, a.calls, a.rows, a.weight_dim_min,
                       a.inner_vector_bytes, a.inner_row_bytes, a.inner_vector_calls};
  const double fb[] = {b.cost.flops, b.cost.weight_bytes, b.cost.act_bytes_in, b.cost.act_bytes_out,
                       b.cost.kv_bytes_read, b.cost.kv_bytes_written, b.params, b.calls, b.rows, b.weight_dim_min,
                       b.inner_vector_bytes, b.inner_row_bytes, b.inner_vector_calls};
  for (std::size_t i = 0; i < std::size(fa); ++i)
    if (bits(fa[i]) != bits(fb[i])) return false;
  for (std::size_t g = 0; g < a.gemms.size(); ++g) {
    const OpGemm &x = a.gemms[g], &y = b.gemms[g];
    if (bits(x.m) != bits(y.m) || bits(x.n) != bits(y.n) || bits(x.k) != bits(y.k) || bits(x.groups) != bits(y.groups) ||
        x.split != y.split)
      return false;
  }
  return true;
}

TEST_CASE("a node table rebuilt for another layer keeps nothing of the last one", "[layer_program]") {
  // The simulator reuses one table per layer group and pass: a VWN layer's nodes (its
  // hyper-connection ops, a row-split product) must all be gone when a baseline layer is
  // built into the same table, as in a fresh one.
  const Config vwn = tiny_with(R"({"vwn": {"m": 2, "n": 3, "dynamic": true}})");
  const Config base = tiny_with(R"({"baseline": {}})");
  const LayerWork w = dense_work();
  OpNodes reused{}, fresh{};
  layer_ops(op_dims(vwn.effective, vwn.design.method), layer_features(vwn.effective, 0), w, true, reused);
  REQUIRE(node(reused, OpKind::ghc_width).calls > 0);
  layer_ops(op_dims(base.effective, base.design.method), layer_features(base.effective, 0), w, true, reused);
  layer_ops(op_dims(base.effective, base.design.method), layer_features(base.effective, 0), w, true, fresh);
  for (int k = 0; k < op_kind_count; ++k)
    CHECK(same_node(reused[static_cast<std::size_t>(k)], fresh[static_cast<std::size_t>(k)]));
  // outside the layers too: VWN's reduce and projection, then the baseline's three nodes
  OutsideWork o{2, 10, 1, 10, 0};
  outside_ops(op_dims(vwn.effective, vwn.design.method), o, reused);
  REQUIRE(node(reused, OpKind::vwn_reduce).calls > 0);
  outside_ops(op_dims(base.effective, base.design.method), o, reused);
  outside_ops(op_dims(base.effective, base.design.method), o, fresh);
  for (int k = 0; k < op_kind_count; ++k)
    CHECK(same_node(reused[static_cast<std::size_t>(k)], fresh[static_cast<std::size_t>(k)]));
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

// ---- the work of each layer run (model/layer_work.hpp) ---------------------------------

TEST_CASE("a layer run's work per phase: rows, pairs, KV read and written", "[layer_program][work]") {
  const Config c = tiny_with(R"({"baseline": {}})");
  const LayerView v = layer_view(c.effective, c.design.method, 0);
  WorkOptions o;
  o.tile_q = o.tile_k = 4;
  // a prefill of 10 tokens: 55 causal pairs, the executed ones those of the mask's tiles
  const LayerWork p = layer_work(c, v, PassShape{PassPhase::prefill, 2, 10}, o);
  CHECK(p.seqs == 2);
  CHECK(p.rows_q == 10);
  CHECK(p.rows_kv == 10);
  CHECK(p.pairs_exact == 55);
  const TileCount tiles = visible_tiles(layer_mask(c, 0, 10), Layout::interleaved, 4, 4);
  CHECK(p.pairs_executed == static_cast<double>(tiles.executed_pairs));
  CHECK(p.kv_written == 10);
  CHECK(p.kv_read == 0);
  CHECK_FALSE(p.reads_cache);
  CHECK(p.longest_keys == 10);
  // unfused: every (query, key) pair of the 10 x 10 block
  o.unfused = true;
  CHECK(layer_work(c, v, PassShape{PassPhase::train_forward, 1, 10}, o).pairs_executed == 100);
  // a decode step after 10 cached tokens: one row reading the 10 and its own
  const LayerWork d = layer_work(c, v, PassShape{PassPhase::decode, 3, 10}, o);
  CHECK(d.rows_q == 1);
  CHECK(d.pairs_exact == 11);
  CHECK(d.kv_read == 11);
  CHECK(d.kv_written == 1);
  CHECK(d.reads_cache);
  const OutsideWork out = outside_work(c.design.method, PassShape{PassPhase::prefill, 2, 10});
  CHECK(out.embed_rows == 10);
  CHECK(out.logit_rows == 1);
}

TEST_CASE("a shared loop cache is written once: by the last iteration's run, 1/K per run on average",
          "[layer_program][work][looped]") {
  const Config c =
      tiny_with(R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 3, "kv": "shared"}})");
  const PassShape prefill{PassPhase::prefill, 1, 12};
  const LayerView v = layer_view(c.effective, c.design.method, 1);
  CHECK(v.passes == 3);
  CHECK(v.kv_caches == 1);
  CHECK(layer_work(c, v, prefill, WorkOptions{}).kv_written == 12.0 / 3);
  double written = 0;
  for (const LayerRun& r : layer_runs(c.design.method, c.effective.num_layers)) {
    if (r.layer != 1) continue;
    const double w = run_work(c, r, prefill, WorkOptions{}).kv_written;
    CHECK(w == (r.iteration == 2 ? 12 : 0));
    written += w;
  }
  CHECK(written == 12);
}

// ---- tensors (model/tensors.hpp) ---------------------------------------------------------

namespace {

double tensor_bytes(const TensorUses& uses, OpKind op, bool write) {
  double b = 0;
  for (const TensorUse& u : uses)
    if (u.op == op && u.write == write) b += u.bytes();
  return b;
}

const TensorUse* find_use(const TensorUses& uses, OpKind op, TensorKind t, bool write) {
  for (const TensorUse& u : uses)
    if (u.op == op && u.tensor == t && u.write == write) return &u;
  return nullptr;
}

}  // namespace

TEST_CASE("a dense layer's nodes name the tensors they read and write", "[layer_program][tensors]") {
  const Config c = tiny_with(R"({"baseline": {}})");
  const OpDims s = op_dims(c.effective, c.design.method);
  const LayerWork w = dense_work();
  OpNodes t{};
  TensorUses uses;
  layer_ops(s, layer_features(c.effective, 0), w, true, t, &uses);
  // [20, 64] -> q [20, 64], k and v [20, 32], bf16
  const TensorUse* q = find_use(uses, OpKind::qkv_proj, TensorKind::q, true);
  REQUIRE(q != nullptr);
  CHECK(q->rows == 20);
  CHECK(q->width == 64);
  CHECK(q->el_bytes == 2);
  CHECK(find_use(uses, OpKind::qkv_proj, TensorKind::k, true)->width == 32);
  CHECK(find_use(uses, OpKind::qkv_proj, TensorKind::v, true)->width == 32);
  CHECK(find_use(uses, OpKind::ffn_gate_up, TensorKind::gate_up, true)->width == 2 * 128);
  // the cache slot: 10 entries of both sequences, K and V of 2 heads of 16
  const TensorUse* kv = find_use(uses, OpKind::attention, TensorKind::kv_cache, true);
  REQUIRE(kv != nullptr);
  CHECK(kv->rows == 20);
  CHECK(kv->width == 64);
  CHECK(tensor_life(TensorKind::kv_cache) == TensorLife::cache);
  CHECK(to_string(TensorKind::hidden) == std::string("hidden_a"));
  // The plain ops move exactly their tensors: what they read in, what they write out.
  for (OpKind op : {OpKind::attn_norm, OpKind::qkv_proj, OpKind::o_proj, OpKind::ffn_norm, OpKind::ffn_gate_up,
                    OpKind::ffn_act, OpKind::ffn_down}) {
    INFO(to_string(op));
    CHECK(tensor_bytes(uses, op, false) == node(t, op).cost.act_bytes_in);
    CHECK(tensor_bytes(uses, op, true) == node(t, op).cost.act_bytes_out);
  }
  // without a record asked for, the same nodes
  OpNodes plain{};
  layer_ops(s, layer_features(c.effective, 0), w, true, plain);
  CHECK(nodes_total(plain).bytes() == nodes_total(t).bytes());
}

TEST_CASE("what a layer's cache slot keeps: KV entries or a linear mixer's states", "[layer_program][tensors]") {
  const Config c = tiny_with(R"({"baseline": {}})");
  const OpDims s = op_dims(c.effective, c.design.method);
  // 7 entries of K and V of 2 heads of 16, bf16
  CHECK(layer_cache(s, MixerKind::attention, 7, 0).bytes() == 7 * 64 * 2);
  OpDims g = s;
  g.gdn = GdnDims{2, 4, 16, 24, 4};
  // per state: 4 value heads x 16 x 24 recurrent, (2 x 32 + 96) x 3 conv inputs
  CHECK(layer_cache(g, MixerKind::gated_deltanet, 0, 3).bytes() == 3 * (4 * 16 * 24 + 160 * 3) * 2.0);
  CHECK(layer_cache(s, MixerKind::none, 7, 1).bytes() == 0);
}

TEST_CASE("forward memory from the nodes' tensors, counted by hand", "[layer_program][memory]") {
  const Config c = tiny_with(R"({"baseline": {}})");
  ForwardRun run;
  run.phase = ForwardPhase::prefill;
  run.tokens = 10;
  run.decode_steps = 0;
  run.element_bytes = 4;
  const ForwardMemory m = forward_memory(c, run);
  std::map<std::string, double> b;
  for (const auto& [name, bytes] : m.buffers) b[name] += bytes;
  // reused buffers of the largest use, a quarter of headroom, f32: R = 10 rows
  CHECK(b["hidden_a"] == std::floor(10 * 64 * 1.25) * 4);
  CHECK(b["q"] == std::floor(10 * 64 * 1.25) * 4);
  CHECK(b["k"] == std::floor(10 * 32 * 1.25) * 4);
  CHECK(b["gate_up"] == std::floor(10 * 256 * 1.25) * 4);
  CHECK(b["logits"] == std::floor(1 * 100 * 1.25) * 4);  // the last position only
  CHECK(b.count("kv_cache") == 0);  // caches are not workspace
  // 4 layers' caches of 10 positions, K and V of 2 heads of 16
  CHECK(m.kv_bytes == 4 * 10 * 64 * 4.0);
  CHECK(cache_capacity_bytes(c, 10, 4) == m.kv_bytes);
  double sum = 0;
  for (const auto& [name, bytes] : m.buffers) sum += bytes;
  CHECK(m.workspace_bytes == sum);
}

TEST_CASE("a Nemotron-H pass's memory: Mamba-2 states in their cache slots, KV for attention only",
          "[layer_program][memory][mamba2]") {
  // M - M * M -: 3 Mamba-2 mixers (16 heads of 32, 2 groups of state 32, 4-tap conv), one
  // attention mixer (2 kv heads of 32), 2 FFN-only relu2 MLPs of 512; f32.
  const auto nemotron = [](const char* design) {
    Json doc = read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/models/tiny-nemotron-h.json");
    doc["design"] = Json::parse(design);
    return parse_config(doc);
  };
  // per Mamba-2 state: H P N = 16 x 32 x 32 recurrent, (H P + 2 G N) = 640 channels x 3 taps
  const double mamba_state = 16 * 32 * 32 + 640 * 3, kv_entry = 2 * 2 * 32;
  CHECK(cache_capacity_bytes(nemotron(R"({"baseline": {}})"), 10, 4) == (10 * kv_entry + 3 * mamba_state) * 4);
  // HD n = 2, intra layers: a state per stream, the attention layer's 2 x 10 positions
  CHECK(cache_capacity_bytes(nemotron(R"({"hd": {"n": 2, "layers": "intra"}})"), 10, 4) ==
        (20 * kv_entry + 3 * 2 * mamba_state) * 4);

  ForwardRun run;
  run.phase = ForwardPhase::prefill;
  run.tokens = 10;
  run.element_bytes = 4;
  const auto buffers = [&](const Config& c) {
    std::map<std::string, double> b;
    for (const auto& [name, bytes] : forward_memory(c, run).buffers) b[name] += bytes;
    return b;
  };
  std::map<std::string, double> b = buffers(nemotron(R"({"baseline": {}})"));
  const auto reused = [](double elements) { return std::floor(elements * 1.25) * 4; };
  CHECK(b["lin_qkv"] == reused(10 * 640));   // x B C, the conv's input
  CHECK(b["lin_conv"] == reused(10 * 640));
  CHECK(b["lin_z"] == reused(10 * 512));     // the gate, H P wide
  CHECK(b["lin_ba"] == reused(10 * 16));     // dt, a head each
  CHECK(b["lin_o"] == reused(10 * 512));
  CHECK(b["gate_up"] == reused(10 * 512));   // relu2: the up projection alone
  CHECK(b["q"] == reused(10 * 8 * 32));
  CHECK(b.count("lin_state") == 0);          // a prefill's states are cache slots
  run.phase = ForwardPhase::train_forward;   // a training pass runs from workspace states
  b = buffers(nemotron(R"({"baseline": {}})"));
  CHECK(b["lin_state"] == reused(16 * 32 * 32));
  CHECK(b["lin_conv_state"] == reused(640 * 3));
}
