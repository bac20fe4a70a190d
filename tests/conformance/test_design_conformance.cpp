// The design conformance suite (issue 13, part 3): every design module the registry lists
// passes the same checks on the registry's own examples, so adding a design to
// model::Method adds its cases here without editing this file.
//   - the registry lists an example for every design, parsed back to that design;
//   - JSON round trip: parse -> to_json -> parse gives the same design, and to_json is a
//     fixed point (exact);
//   - parameter counts (model::count_params) equal the elements of the executor's weight
//     specs (exact);
//   - every layer's mask: closed-form pair and tile counts equal the brute-force ones over
//     the materialised mask (exact);
//   - decode: the entries each layer's cache keeps (model::kv_entries) and one decode
//     step's visible pairs (model::decode_attention) equal brute-force counts over the
//     mask (exact);
// Each example runs on a dense backbone, on a hybrid with Gated DeltaNet layers and on the
// bundled Nemotron-H-shaped profile (profiles/models/tiny-nemotron-h.json: Mamba-2 mixers,
// single-sublayer layers, relu2, no positions) and the bundled multi-head latent attention
// profile (profiles/models/tiny-mla.json), where the design applies to them (the others
// refuse them by their pointer).
//   - the executor's prefill + cached decode equals its full forward (kSameFunction, 2e-5
//     of the largest logit) where the design declares its decode exact, and differs by
//     more than 1e-3 where it declares an approximation; its executed FLOPs equal the simulator's op tables per op
//     (1e-9 relative), and the attention pairs its tile plans ran equal the model's work (exact).
#include <map>
#include <set>

#include "executor/runner_test_support.hpp"
#include "hdlab/executor/attention_mask.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/simulator/op_table.hpp"
#include "hdlab/simulator/phases.hpp"

namespace hdlab::executor::testing {

namespace {

// Four layers so a loop has a prelude, a recurrent block and a coda; the second layer
// slides over 6 tokens so designs that keep the backbone's mask meet a sliding layer.
model::Backbone conformance_backbone() {
  model::Backbone b = tiny_dense(4);
  b.layers[1] = {model::AttentionKind::sliding, 6};
  return b;
}

// The hybrid every example also runs on: Gated DeltaNet in layers 0 and 2 (tiny_hybrid),
// layer 1 sliding over 6 tokens, gated attention, MoE with a gated shared expert.
model::Backbone hybrid_backbone() {
  model::Backbone b = tiny_hybrid();
  b.layers[1] = {model::AttentionKind::sliding, 6};
  return b;
}

// A bundled profile, as shipped.
model::Backbone bundled_backbone(const char* file) {
  return model::parse_config(model::read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/models/" + file)).base;
}

struct Example {
  std::string key;   // the design the registry lists it under
  std::string json;  // a design document
  model::Config config;
};

struct Refusal {
  std::string key, json, error, backbone;
};

// Every registry example on the dense backbone, then on the hybrid and the Nemotron-H
// profile where the design applies to them; `refused` collects their refusals.
std::vector<Example> examples(std::vector<Refusal>* refused = nullptr) {
  std::vector<Example> out;
  const model::Backbone b = conformance_backbone();
  for (const auto& [key, json] : model::conformance_examples()) out.push_back({key, json, make(b, json)});
  for (const auto& [name, backbone] : {std::pair{"hybrid", hybrid_backbone()},
                                       {"nemotron-h", bundled_backbone("tiny-nemotron-h.json")},
                                       {"mla", bundled_backbone("tiny-mla.json")}})
    for (const auto& [key, json] : model::conformance_examples()) {
      try {
        out.push_back({key, json + " (" + name + ")", make(backbone, json)});
      } catch (const model::ConfigError& e) {
        if (refused) refused->push_back({key, json, e.what(), name});
      }
    }
  return out;
}

// Keys of earlier tokens (logical positions < context*copies) that some query of the
// token at index `context` sees: what a cache must keep for that token's decode step.
double brute_kept_entries(model::MaskSpec m, std::int64_t context) {
  m.tokens = context + 1;
  m.final_copy_queries_only = false;
  std::set<std::int64_t> kept;
  for (std::int64_t q = context * m.copies; q < m.positions(); ++q)
    for (std::int64_t k = 0; k < context * m.copies; ++k)
      if (model::visible(m, q, k)) kept.insert(k);
  return static_cast<double>(kept.size());
}

// Visible (query, key) pairs of the queries of the token at index `context`.
double brute_step_pairs(model::MaskSpec m, std::int64_t context) {
  m.tokens = context + 1;
  m.final_copy_queries_only = false;
  double pairs = 0;
  for (std::int64_t q = context * m.copies; q < m.positions(); ++q)
    for (std::int64_t k = 0; k < m.positions(); ++k) pairs += model::visible(m, q, k) ? 1 : 0;
  return pairs;
}

// The first op whose executed FLOPs differ from the simulator's (empty: none).
std::string flops_mismatch(const model::Config& c, Phase phase, std::int64_t tokens) {
  Model m = build(c, 1);
  const auto t = testing::tokens(tokens + 2);
  simulator::PassOptions po;
  po.layout = m.runner->layout();
  po.tile_q = kTileQ;
  po.tile_k = kTileK;
  po.mirror_final_only_decode = true;
  const simulator::ModelShape shape = simulator::model_shape(c.effective, c.design.method);
  const simulator::LayerPlan plan = simulator::plan_layers(c.effective, c.design.method);
  auto pass = std::make_unique<simulator::PassCost>();
  const auto prompt = std::span(t.data(), static_cast<std::size_t>(tokens));
  if (phase == Phase::train_forward) {
    m.runner->train_forward(prompt, t[static_cast<std::size_t>(tokens)]);
    simulator::train_forward_pass(c, shape, plan, 1, tokens, po, *pass);
  } else {
    m.runner->prefill(prompt, tokens + 1);
    if (phase == Phase::decode) m.runner->decode_step(t[static_cast<std::size_t>(tokens)]);
    if (phase == Phase::decode) simulator::decode_pass(c.design.method, shape, plan, 1, tokens, po, *pass);
    else simulator::prefill_pass(c, shape, plan, 1, tokens, po, *pass);
  }
  for (int k = 0; k < model::op_kind_count; ++k) {
    const auto kind = static_cast<model::OpKind>(k);
    const double ran = m.runner->last_profile().op_total(kind).flops, predicted = pass->op_total(kind).flops;
    if (std::abs(ran - predicted) > 1e-9 * std::max(1.0, std::abs(predicted)))
      return std::string(model::to_string(kind)) + ": executed " + std::to_string(ran) + ", simulator " +
             std::to_string(predicted);
  }
  // Both charge FLOPs from the model's work (model::layer_work); the pairs the runner's
  // tile plans ran, profiled as it ran them, must be the pairs that work counts.
  const OpMeasure att = m.runner->last_profile().op_total(model::OpKind::attention);
  if (att.pairs_exact != pass->attention_pairs_exact() || att.pairs_executed != pass->attention_pairs_executed())
    return "attention pairs: the plans ran " + std::to_string(att.pairs_exact) + " exact, " +
           std::to_string(att.pairs_executed) + " executed; the work counts " +
           std::to_string(pass->attention_pairs_exact()) + ", " + std::to_string(pass->attention_pairs_executed());
  return "";
}

}  // namespace

TEST_CASE("conformance: the registry offers an example of every design, parsed back to it", "[conformance]") {
  const std::vector<std::string> keys = model::design_keys();
  REQUIRE(keys.size() == std::variant_size_v<model::Method>);
  std::map<std::string, int> per_key;
  for (const Example& e : examples()) {
    INFO(e.json);
    CHECK(model::method_name(e.config.design.method) == e.key);
    ++per_key[e.key];
  }
  for (const std::string& key : keys) {
    INFO("design " << key);
    CHECK(per_key[key] >= 1);
  }
}

TEST_CASE("conformance: every design but looped runs on a hybrid backbone, refusals name the design",
          "[conformance][linear]") {
  std::vector<Refusal> refused;
  const std::vector<Example> all = examples(&refused);
  std::map<std::string, int> hybrid, nemotron, mla;
  for (const Example& e : all) {
    if (e.json.find("(hybrid)") != std::string::npos) ++hybrid[e.key];
    if (e.json.find("(nemotron-h)") != std::string::npos) ++nemotron[e.key];
    if (e.json.find("(mla)") != std::string::npos) ++mla[e.key];
  }
  // On Nemotron-H: PHD and looped designs refuse Mamba-2 layers, VWN and mHC its
  // single-sublayer layers (executor/README.md); the rest run.
  const std::set<std::string> refuse_nemotron = {"looped", "phd", "vwn", "mhc"};
  for (const std::string& key : model::design_keys()) {
    INFO("design " << key);
    if (key == "looped") CHECK(hybrid[key] == 0);  // re-entering a recurrent state is not modelled
    else CHECK(hybrid[key] >= 1);
    CHECK((nemotron[key] == 0) == refuse_nemotron.count(key));
    CHECK(mla[key] >= 1);  // every design runs on multi-head latent attention
  }
  for (const Refusal& r : refused) {
    INFO(r.backbone << " " << r.json << ": " << r.error);
    CHECK(r.error.rfind("/design/" + r.key, 0) == 0);  // by the design's own pointer
  }
}

TEST_CASE("conformance: JSON round trip of every design", "[conformance][json]") {
  for (const Example& e : examples()) {
    INFO(e.json);
    const model::Json once = model::to_json(e.config.design);
    const model::Design back = model::parse_design(once, e.config.base, "/design");
    CHECK(back == e.config.design);
    CHECK(model::to_json(back) == once);
    // The whole config too, through its text.
    const model::Config again = model::parse_config(model::Json::parse(model::to_json(e.config).dump()));
    CHECK(again == e.config);
  }
}

TEST_CASE("conformance: parameter counts equal the executor's weight specs", "[conformance][params]") {
  for (const Example& e : examples()) {
    INFO(e.json);
    std::int64_t elements = 0;
    for (const WeightSpec& s : weight_specs(e.config)) elements += element_count(s.shape);
    CHECK(model::count_params(e.config).total == elements);
  }
}

TEST_CASE("conformance: every layer's mask equals brute force", "[conformance][mask]") {
  for (const Example& e : examples()) {
    const model::Config& c = e.config;
    for (std::int64_t l = 0; l < c.effective.num_layers; ++l) {
      const model::MaskSpec m = model::layer_mask(c, l, 9);
      INFO(e.json << " layer " << l << " " << model::to_string(m.kind));
      CHECK(m.copies == model::copies_per_token(c.design.method));
      CHECK(model::visible_pairs(m) == model::visible_pairs_brute(m));
      for (model::Layout layout : {model::default_layout(c.design), model::Layout::interleaved}) {
        const model::TileCount fast = model::visible_tiles(m, layout, 4, 3), brute = model::visible_tiles_brute(m, layout, 4, 3);
        CHECK(fast.visible == brute.visible);
        CHECK(fast.full == brute.full);
        CHECK(fast.executed_pairs == brute.executed_pairs);
      }
    }
  }
}

TEST_CASE("conformance: decode caches and decode-step pairs equal brute force over the mask", "[conformance][decode]") {
  for (const Example& e : examples()) {
    const model::Config& c = e.config;
    const model::Method& method = c.design.method;
    for (std::int64_t l = 0; l < c.effective.num_layers; ++l) {
      const model::LayerAttentionRole role = model::layer_role(method, c.effective, l);
      for (std::int64_t context : {1, 4, 7, 11}) {
        const model::MaskSpec m = model::layer_mask(c, l, context + 1);
        INFO(e.json << " layer " << l << " context " << context);
        CHECK(model::kv_entries(method, role, static_cast<double>(context)) == brute_kept_entries(m, context));
        const model::DecodeAttention step =
            model::decode_attention(method, role, static_cast<double>(context), model::default_layout(method), false);
        CHECK(step.pairs_exact == brute_step_pairs(m, context));
      }
    }
  }
}

TEST_CASE("conformance: the executor's cached decode equals its full forward where the design says so",
          "[conformance][runner]") {
  for (const Example& e : examples()) {
    const bool exact = model::design_features(e.config.design.method).decode_exact;
    INFO(e.json << (exact ? " (decode exact)" : " (decode an approximation)"));
    Model m = build(e.config, 3);
    const auto t = tokens(12);
    const auto full = m.backend->download_f32(m.runner->train_forward(t).logits);
    Model d = build(e.config, 3);
    const std::int64_t prompt = 5, V = e.config.effective.padded_vocab();
    // (a hybrid's linear layers carry their recurrent states and conv histories)
    const auto dec = decoded_logits(d, t, prompt);
    const double diff = rel_diff(dec, rows_of(full, V, prompt - 1, 12 - prompt + 1));
    if (exact) CHECK(diff < kSameFunction);
    else CHECK(diff > 1e-3);  // an approximation the design declares must show
  }
}

TEST_CASE("conformance: executed FLOPs equal the simulator's op tables", "[conformance][flops]") {
  for (const Example& e : examples())
    for (Phase phase : {Phase::train_forward, Phase::prefill, Phase::decode}) {
      const std::string mismatch = flops_mismatch(e.config, phase, 70);
      INFO(e.json << " " << to_string(phase) << ": " << mismatch);
      CHECK(mismatch.empty());
    }
}

}  // namespace hdlab::executor::testing
