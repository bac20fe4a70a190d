// The mHC design module (model/src/designs/mhc.cpp): its JSON block, defaults, shorthand,
// validation by JSON pointer, label, parameter count by hand and the layer program's
// FLOPs of its ops by hand.
#include <catch2/catch.hpp>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/model/layer_program.hpp"
#include "hdlab/model/params.hpp"

using namespace hdlab::model;

namespace {

// 2 layers, D 8 (the backbone of test_params.cpp: 1368 parameters in all).
Json tiny_dense() {
  return Json::parse(R"({"num_layers": 2, "hidden_size": 8, "num_heads": 2, "num_kv_heads": 1, "head_dim": 4,
                        "qk_norm": true, "intermediate_size": 16, "vocab_size": 10})");
}

Config config_of(const char* design) {
  return parse_config(Json{{"backbone", tiny_dense()}, {"design", Json::parse(design)}});
}

std::string pointer_of(const char* design) {
  try {
    config_of(design);
  } catch (const ConfigError& e) {
    return e.pointer();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("mHC: defaults, shorthand, JSON round trip and label", "[mhc]") {
  const Config c = config_of(R"({"mhc": {}})");
  const auto& d = std::get<MhcDesign>(c.design.method);
  CHECK(d.n == 4);  // DeepSeek-V4's hc_mult
  CHECK(d.sinkhorn_iters == 20);  // the paper's t_max
  CHECK(c.design.defaults.count("/design/mhc/n") == 1);
  CHECK(c.design.defaults.count("/design/mhc/sinkhorn_iters") == 1);
  const Json shorthand = design_json_from_shorthand("mhc:n=2,sinkhorn_iters=7");
  CHECK(shorthand == Json::parse(R"({"mhc": {"n": 2, "sinkhorn_iters": 7}})"));
  const Design parsed = parse_design(shorthand, c.base);
  CHECK(parse_design(to_json(parsed), c.base) == parsed);
  CHECK(method_label(parsed.method) == "mHC n=2");
  CHECK(describe(parsed).find("mhc n=2") != std::string::npos);
  const DesignFeatures f = design_features(parsed.method);
  CHECK(f.copies == 1);
  CHECK(f.wide_residual);
  CHECK(f.width_m == 1);
  CHECK(f.width_n == 2);
  CHECK(std::get<MhcDesign>(parsed.method).sinkhorn_iters == 7);
  // mHC's kind of wide residual, in the features' own terms: its embedding copied into
  // the streams, the streams summed for the readout, its coefficients its own op's.
  CHECK(f.copied_embedding);
  CHECK(f.summed_readout);
  CHECK(f.module_mixing);
  CHECK_FALSE(f.dynamic_mixing);
  CHECK(f.residual_width(8) == 16);
}

TEST_CASE("mHC: bad fields are refused by their JSON pointer", "[mhc][bad-input]") {
  CHECK(pointer_of(R"({"mhc": {"n": 0}})") == "/design/mhc/n");
  CHECK(pointer_of(R"({"mhc": {"n": 65}})") == "/design/mhc/n");
  CHECK(pointer_of(R"({"mhc": {"n": 2.5}})") == "/design/mhc/n");
  CHECK(pointer_of(R"({"mhc": {"sinkhorn_iters": 0}})") == "/design/mhc/sinkhorn_iters");
  CHECK(pointer_of(R"({"mhc": {"sinkhorn": 20}})") == "/design/mhc/sinkhorn");
  CHECK(pointer_of(R"({"mhc": {"n": 2}, "vwn": {"m": 1, "n": 2}})").rfind("/design/", 0) == 0);
  CHECK(pointer_of(R"({"mhc": {"n": 64, "sinkhorn_iters": 1000}})") == "(accepted)");
}

TEST_CASE("mHC parameters by hand", "[mhc][params]") {
  // n 3, D 8: one connection phi 24 x 15 = 360, biases 15, scales 3 -> 378; two per layer,
  // 2 layers. Embedding and head stay the backbone's (no adapters, norms or tables added).
  const ParamCounts base = count_params(config_of("{}"));
  const ParamCounts p = count_params(config_of(R"({"mhc": {"n": 3}})"));
  CHECK(p.ghc == 4 * 378);
  CHECK(p.embedding_input == base.embedding_input);
  CHECK(p.adapters == 0);
  CHECK(p.norms == base.norms);
  CHECK(p.total == 1368 + 4 * 378);
  // DeepSeek-V4 scale (n 4, D 4096): 2 * (24 * 16384 + 24 + 3) a layer, aiconfigurator's count.
  CHECK(designs::mhc_connection_params(MhcDesign{4, 20}, 4096) == 24 * 16384 + 27);
}

TEST_CASE("mHC ops in the layer program, FLOPs by hand", "[mhc][layer-program]") {
  const Config c = config_of(R"({"mhc": {"n": 3, "sinkhorn_iters": 5}})");
  const OpDims s = op_dims(c.effective, c.design.method);
  CHECK(s.vwn);
  CHECK(s.vwn_n == 3);
  CHECK(s.module_mixing);
  CHECK(std::get<MhcDesign>(s.method).sinkhorn_iters == 5);  // the coefficients' node is the module's
  LayerWork w;
  w.seqs = 2;
  w.rows_q = 5;
  OpNodes t;
  layer_ops(s, layer_features(c.effective, 0), w, true, t);
  // Per token and connection, n 3, D 8, c 15: 2*24 + 2*24*15 + 3*15 + 8*3 + 9 + 4*5*9 = 1026;
  // 10 tokens, two connections.
  CHECK(node(t, OpKind::ghc_dynamic).cost.flops == 2 * 10 * 1026.0);
  CHECK(node(t, OpKind::ghc_dynamic).params == 2 * 378.0);
  // That node is the module's answer to the registry; a design without its own mixing op
  // answers nothing.
  OpNodes asked{}, none{};
  design_mixing_ops(c.design.method, s, 10, asked);
  CHECK(node(asked, OpKind::ghc_dynamic).cost.flops == node(t, OpKind::ghc_dynamic).cost.flops);
  design_mixing_ops(Method{VwnDesign{}}, s, 10, none);
  CHECK(node(none, OpKind::ghc_dynamic).cost.flops == 0);
  CHECK(node(t, OpKind::ghc_width).cost.flops == 2 * 10 * 2.0 * 4 * 24);  // 2(1+n)nD
  CHECK(node(t, OpKind::ghc_depth).cost.flops == 2 * 10 * 2.0 * 3 * 8);   // 2nD
  CHECK(node(t, OpKind::ghc_width).params == 0);
  CHECK(node(t, OpKind::ghc_norm).cost.flops == 0);  // the RMS is part of the coefficients
  CHECK(node(t, OpKind::residual).cost.flops == 0);
  OutsideWork o;
  o.seqs = 2;
  o.embed_rows = 5;
  o.logit_rows = 5;
  OpNodes out;
  outside_ops(s, o, out);
  CHECK(node(out, OpKind::embedding).params == 10 * 8);  // the backbone's table
  CHECK(node(out, OpKind::embedding).cost.act_bytes_out == 10 * 3 * 8 * s.bytes);  // copied into 3 streams
  CHECK(node(out, OpKind::vwn_reduce).cost.flops == 10 * 2.0 * 3 * 8);             // the streams summed
  CHECK(node(out, OpKind::vwn_reduce).params == 0);
}
