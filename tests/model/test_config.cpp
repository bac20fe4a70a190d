// Config parsing, validation, normalisation and growth: what a user writes and what they
// get back, including every error path the foundation issue names.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/files.hpp"

using namespace hdlab::model;

namespace {

Json tiny_backbone() {
  return Json::parse(R"({
    "name": "tiny", "num_layers": 4, "hidden_size": 64, "num_heads": 4, "num_kv_heads": 2,
    "intermediate_size": 128, "vocab_size": 100, "qk_norm": true,
    "attention": {"layers": ["sliding", "full", "sliding", "full"], "sliding_window": 8}
  })");
}

Json tiny_moe() {
  return Json::parse(R"({
    "name": "tiny-moe", "num_layers": 4, "hidden_size": 64, "num_heads": 4, "num_kv_heads": 1,
    "intermediate_size": 96, "vocab_size": 100,
    "moe": {"num_experts": 8, "top_k": 2, "expert_intermediate_size": 32, "num_shared_experts": 1,
            "first_dense_layers": 1, "router": "sigmoid"},
    "kv_mirror_layers": 1
  })");
}

Config config_of(Json backbone, Json design) {
  return parse_config(Json{{"backbone", std::move(backbone)}, {"design", std::move(design)}});
}

// The message of the ConfigError that `f` throws.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string design_error(Json backbone, const char* design) {
  return error_of([&] { config_of(std::move(backbone), Json::parse(design)); });
}

std::string backbone_error(const char* patch) {
  Json b = tiny_backbone();
  b.merge_patch(Json::parse(patch));
  return error_of([&] { parse_backbone(b); });
}

}  // namespace

TEST_CASE("a minimal backbone gets documented defaults", "[config]") {
  Json b = Json::parse(R"({"num_layers": 2, "hidden_size": 64, "num_heads": 8, "intermediate_size": 128,
                          "vocab_size": 1000})");
  Backbone bb = parse_backbone(b);
  CHECK(bb.num_kv_heads == 8);
  CHECK(bb.head_dim == 8);
  CHECK(bb.layers.size() == 2);
  CHECK(bb.layers[0].kind == AttentionKind::full);
  CHECK(bb.dtype == DType::bf16);
  CHECK(bb.norms_per_layer == 2);
  CHECK_FALSE(bb.tie_embeddings);
  CHECK(bb.padded_vocab() == 1000);
  bb.vocab_pad_multiple = 128;
  CHECK(bb.padded_vocab() == 1024);
}

TEST_CASE("attention layer rules expand to one kind per layer", "[config]") {
  Json b = tiny_backbone();
  b["num_layers"] = 6;
  b["attention"] = Json::parse(R"({"layers": {"pattern": ["sliding", "sliding", "full"]}, "sliding_window": 16})");
  Backbone bb = parse_backbone(b);
  std::vector<AttentionKind> kinds;
  for (const auto& l : bb.layers) kinds.push_back(l.kind);
  CHECK(kinds == std::vector<AttentionKind>{AttentionKind::sliding, AttentionKind::sliding, AttentionKind::full,
                                            AttentionKind::sliding, AttentionKind::sliding, AttentionKind::full});
  CHECK(bb.layers[0].window == 16);
  CHECK(bb.layers[2].window == 0);
  CHECK(bb.num_sliding_layers() == 4);
}

TEST_CASE("HD layer kinds: names, lists and rules", "[config][hd]") {
  SECTION("rule: sliding layers local, every 2nd full, the rest intra") {
    Config c = config_of(tiny_backbone(), Json::parse(R"({"hd": {"n": 4, "layers": {"full_every": 2}}})"));
    const auto& hd = std::get<HdDesign>(c.design.method);
    // Layers 1 and 3 are 2nd/4th -> full; layers 0 and 2 are sliding -> local.
    CHECK(hd.layer_kinds == std::vector<HdLayerKind>{HdLayerKind::local, HdLayerKind::full, HdLayerKind::local,
                                                     HdLayerKind::full});
    CHECK(hd.window == 8 * 4);  // the backbone's 8-token window over n = 4 streams
    CHECK(hd.rope_theta == c.base.rope_theta);
  }
  SECTION("rule: explicit full layers and intra rest") {
    Config c = config_of(tiny_backbone(),
                         Json::parse(R"({"hd": {"n": 2, "layers": {"full_layers": [0], "sliding": "intra"}}})"));
    const auto& hd = std::get<HdDesign>(c.design.method);
    CHECK(hd.layer_kinds == std::vector<HdLayerKind>{HdLayerKind::full, HdLayerKind::intra, HdLayerKind::intra,
                                                     HdLayerKind::intra});
    CHECK(hd.window == 0);
  }
  SECTION("no layers given: sliding layers local, others full") {
    Config c = config_of(tiny_backbone(), Json::parse(R"({"hd": {"n": 2, "window": 5}})"));
    const auto& hd = std::get<HdDesign>(c.design.method);
    CHECK(hd.layer_kinds == std::vector<HdLayerKind>{HdLayerKind::local, HdLayerKind::full, HdLayerKind::local,
                                                     HdLayerKind::full});
    CHECK(hd.window == 5);
  }
  SECTION("explicit list") {
    Config c = config_of(tiny_backbone(),
                         Json::parse(R"({"hd": {"n": 2, "layers": ["intra", "full", "intra", "full"]}})"));
    CHECK(std::get<HdDesign>(c.design.method).layer_kinds[0] == HdLayerKind::intra);
  }
}

TEST_CASE("the registry's editor and pin questions: derived fields and label detail", "[config][hd]") {
  SECTION("HD: the window and theta its parser derived are reported; given ones are not") {
    const Config derived = config_of(tiny_backbone(), Json::parse(R"({"hd": {"n": 4}})"));
    CHECK(derived_fields(derived.design.method, derived.base) == std::vector<std::string>{"window", "rope_theta"});
    const Config given =
        config_of(tiny_backbone(), Json::parse(R"({"hd": {"n": 4, "window": 5, "rope_theta": 50000}})"));
    CHECK(derived_fields(given.design.method, given.base).empty());
    // A window that happens to equal the derived one (8 tokens x 4) reads as derived.
    const Config same = config_of(tiny_backbone(), Json::parse(R"({"hd": {"n": 4, "window": 32}})"));
    CHECK(derived_fields(same.design.method, same.base) == std::vector<std::string>{"window", "rope_theta"});
  }
  SECTION("HD's pins name the layer mix unless every layer is full") {
    const Config mixed =
        config_of(tiny_backbone(), Json::parse(R"({"hd": {"n": 2, "layers": ["intra", "full", "local", "intra"]}})"));
    CHECK(label_detail(mixed.design.method) == "2 intra, 1 local, 1 full");
    const Config full = config_of(tiny_backbone(), Json::parse(R"({"hd": {"n": 2, "layers": "full"}})"));
    CHECK(label_detail(full.design.method).empty());
  }
  SECTION("other designs derive nothing and their label says it all") {
    for (const char* design : {R"({})", R"({"phd": {"K": 2}})", R"({"vwn": {"m": 2, "n": 4}})",
                               R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 2}})"}) {
      INFO(design);
      const Config c = config_of(tiny_backbone(), Json::parse(design));
      CHECK(derived_fields(c.design.method, c.base).empty());
      CHECK(label_detail(c.design.method).empty());
    }
  }
}

TEST_CASE("every design round-trips through JSON exactly", "[config][roundtrip]") {
  const std::vector<std::pair<Json, const char*>> cases = {
      {tiny_backbone(), R"({})"},
      {tiny_backbone(), R"({"name": "x", "hd": {"n": 4, "layers": {"full_every": 2}, "rope": "token_index"}})"},
      {tiny_backbone(), R"({"phd": {"K": 3, "variant": "cswa", "W": 16, "C": 32}})"},
      {tiny_backbone(), R"({"phd": {"K": 2}})"},
      {tiny_backbone(), R"({"vwn": {"m": 2, "n": 3, "dynamic": false, "embedding": "projected", "mtp": true}})"},
      {tiny_backbone(), R"({"looped": {"prelude": 1, "recurrent": 2, "coda": 1, "iterations": 8,
                             "kv": "shared", "input_injection": true}})"},
      {tiny_moe(), R"({"hd": {"n": 2, "layers": "intra"}, "growth": {"depth_factor": 2, "width_factor": 2,
                      "noise_alpha": 0.01}})"},
      {tiny_moe(), R"({"growth": {"depth_factor": 3}})"},
  };
  for (const auto& [backbone, design] : cases) {
    INFO(design);
    Config c = config_of(backbone, Json::parse(design));
    Json once = to_json(c);
    Config again = parse_config(once);
    CHECK(again == c);
    CHECK(to_json(again) == once);
    // make_config (programmatic construction) agrees with parsing.
    CHECK(make_config(c.base, c.design) == c);
  }
}

TEST_CASE("growth turns a backbone into a bigger one", "[config][growth]") {
  GrowthDesign g;
  g.depth_factor = 2;
  CHECK(grown_layer_sources(3, g) == std::vector<std::int64_t>{0, 0, 1, 1, 2, 2});
  g.depth_mode = DepthMode::stack;
  CHECK(grown_layer_sources(3, g) == std::vector<std::int64_t>{0, 1, 2, 0, 1, 2});

  Config c = config_of(tiny_moe(), Json::parse(R"({"growth": {"depth_factor": 2, "width_factor": 2}})"));
  CHECK(c.effective.num_layers == 8);
  CHECK(c.effective.moe->num_experts == 16);
  CHECK(c.effective.moe->top_k == 4);
  CHECK(c.effective.moe->first_dense_layers == 2);  // interposition keeps the dense block in front
  CHECK(c.effective.kv_mirror_layers == 2);
  CHECK(c.base.num_layers == 4);  // the base stays as the user wrote it
  // Interposed mirror pairs still pair U-shaped: grown layer 7 mirrors 0, layer 6 mirrors 1.
  CHECK(c.effective.mirror_source(7) == 0);
  CHECK(c.effective.mirror_source(6) == 1);
  CHECK(c.effective.mirror_source(5) == -1);
}

TEST_CASE("KV mirror pairs are U-shaped", "[config]") {
  Backbone b = parse_backbone(tiny_moe());
  CHECK(b.mirror_source(3) == 0);
  CHECK(b.mirror_source(2) == -1);
  CHECK(b.is_moe_layer(0) == false);
  CHECK(b.is_moe_layer(1) == true);
}

TEST_CASE("bad backbones name the field and the reason", "[config][errors]") {
  CHECK(backbone_error(R"({"num_heads": 24, "num_kv_heads": 5, "head_dim": 8})") ==
        "/backbone/num_kv_heads: 24 query heads cannot be grouped into 5 KV heads");
  CHECK(backbone_error(R"({"num_layers": 1000000000000})") ==
        "/backbone/num_layers: must be <= 4096, got 1000000000000");
  CHECK(backbone_error(R"({"num_layers": 0})") == "/backbone/num_layers: must be >= 1, got 0");
  CHECK(backbone_error(R"({"hidden_size": "big"})") == "/backbone/hidden_size: must be an integer, got string \"big\"");
  CHECK(backbone_error(R"({"hidden_size": 64.5})") == "/backbone/hidden_size: must be an integer, got 64.5");
  CHECK(backbone_error(R"({"qk_norm": 1})") == "/backbone/qk_norm: must be true or false, got integer 1");
  CHECK(backbone_error(R"({"num_layer": 3})") == "/backbone/num_layer: unknown key (did you mean \"num_layers\"?)");
  CHECK(backbone_error(R"({"colour": 3})") == "/backbone/colour: unknown key");
  CHECK(backbone_error(R"({"dtype": "int4"})") == "/backbone/dtype: must be one of bf16, fp16, fp32, fp8, got \"int4\"");
  CHECK(backbone_error(R"({"attention": {"layers": ["full"]}})") ==
        "/backbone/attention/layers: has 1 entries but the backbone has 4 layers");
  Json null_window = tiny_backbone();
  null_window["attention"]["sliding_window"] = nullptr;
  CHECK(error_of([&] { parse_backbone(null_window); }) ==
        "/backbone/attention/sliding_window: must be an integer, got null");
  CHECK(backbone_error(R"({"attention": {"layers": "sliding", "sliding_window": 0}})") ==
        "/backbone/attention/sliding_window: is required (>= 1) when a layer is sliding");
  CHECK(backbone_error(R"({"attention": {"layers": ["full", "full", "full", "windowed"], "sliding_window": 4}})") ==
        "/backbone/attention/layers/3: must be one of full, sliding, chunked, got \"windowed\"");
  CHECK(backbone_error(R"({"kv_mirror_layers": 3})") == "/backbone/kv_mirror_layers: must be <= 2, got 3");
  CHECK(backbone_error(R"({"vocab_size": -1})") == "/backbone/vocab_size: must be >= 1, got -1");
  CHECK(backbone_error(R"({"rope_theta": -5})") == "/backbone/rope_theta: must be > 0");
  CHECK(backbone_error(R"({"moe": {"num_experts": 4, "top_k": 5, "expert_intermediate_size": 8}})") ==
        "/backbone/moe/top_k: must be <= num_experts (4), got 5");
  CHECK(backbone_error(R"({"moe": {"num_experts": 4, "top_k": 1}})") ==
        "/backbone/moe/expert_intermediate_size: is required");
  Json no_ffn = tiny_backbone();
  no_ffn.erase("intermediate_size");
  CHECK(error_of([&] { parse_backbone(no_ffn); }) == "/backbone/intermediate_size: is required");
  CHECK(error_of([] { parse_backbone(Json::array()); }) == "/backbone: must be an object, got array");
}

TEST_CASE("bad designs name the field and the reason", "[config][errors]") {
  CHECK(design_error(tiny_backbone(), R"({"hd": {"n": 0}})") == "/design/hd/n: must be >= 1, got 0");
  CHECK(design_error(tiny_backbone(), R"({"hd": {"n": 2000}})") == "/design/hd/n: must be <= 1024, got 2000");
  CHECK(design_error(tiny_backbone(), R"({"hd": {"m": 2}})") ==
        "/design/hd/m: unknown key (did you mean \"n\"?)");
  CHECK(design_error(tiny_backbone(), R"({"hd": {"n": 2, "layers": ["full"]}})") ==
        "/design/hd/layers: has 1 entries but the backbone has 4 layers");
  CHECK(design_error(tiny_backbone(), R"({"hd": {"n": 2, "layers": "global"}})") ==
        "/design/hd/layers: must be one of full, local, intra, got \"global\"");
  CHECK(design_error(tiny_backbone(), R"({"hd": {"n": 2, "layers": {"full_every": 9}}})") ==
        "/design/hd/layers/full_every: must be <= 4, got 9");
  CHECK(design_error(tiny_backbone(), R"({"hd": {"n": 2, "layers": "intra", "window": 4}})") ==
        "/design/hd/window: is set but no layer is local");
  Json full_only = tiny_backbone();
  full_only.erase("attention");
  CHECK(design_error(full_only, R"({"hd": {"n": 2, "layers": "local"}})") ==
        "/design/hd/window: is required when a layer is local (the backbone has no sliding window to derive it from)");
  CHECK(design_error(tiny_backbone(), R"({"hd": {"n": 2, "kv_mirror": true}})") ==
        "/design/hd/kv_mirror: the backbone has no KV-mirror layers (kv_mirror_layers = 0)");
  CHECK(design_error(tiny_backbone(), R"({"phd": {"K": 2, "W": 4}})") ==
        "/design/phd/W: is only used by the swa and cswa variants");
  CHECK(design_error(tiny_backbone(), R"({"phd": {"K": 2, "variant": "cswa", "W": 4}})") ==
        "/design/phd/C: is required");
  CHECK(design_error(tiny_backbone(), R"({"vwn": {"m": 3, "n": 6}})") ==
        "/design/vwn/m: hidden size 64 is not divisible by m = 3");
  CHECK(design_error(tiny_backbone(), R"({"vwn": {"m": 4, "n": 2}})") ==
        "/design/vwn/n: must be >= m (4): the virtual width D*n/m cannot be narrower than D");
  CHECK(design_error(tiny_backbone(), R"({"looped": {"prelude": 1, "recurrent": 2, "iterations": 2}})") ==
        "/design/looped: prelude + recurrent + coda = 3 but the backbone has 4 layers");
  CHECK(design_error(tiny_backbone(), R"({"looped": {"recurrent": 4}})") == "/design/looped/iterations: is required");
  CHECK(design_error(tiny_backbone(), R"({"hd": {"n": 2}, "phd": {"K": 2}})") ==
        "/design/phd: a design has one method; \"hd\" is already given");
  CHECK(design_error(tiny_backbone(), R"({"growth": {"width_factor": 2}})") ==
        "/design/growth/width_factor: width growth needs an MoE backbone (this one has a dense FFN)");
  CHECK(design_error(tiny_moe(), R"({"growth": {"depth_factor": 2, "depth_mode": "stack"}})") ==
        "/design/growth/depth_mode: stacking would break the backbone's U-shaped KV-mirror pairs; use interpose");
  CHECK(design_error(tiny_backbone(), R"({"growth": {"depth_factor": 2000}})") ==
        "/design/growth/depth_factor: must be <= 64, got 2000");
  CHECK(design_error(tiny_backbone(), R"({"gorwth": {}})") ==
        "/design/gorwth: unknown key (did you mean \"growth\"?)");
  CHECK(error_of([] { parse_config(Json::object()); }) == "/backbone: is required (or \"hf_config\")");
}

TEST_CASE("design shorthand on the command line", "[config]") {
  CHECK(design_json_from_shorthand("hd:n=4,window=512") == Json::parse(R"({"hd": {"n": 4, "window": 512}})"));
  CHECK(design_json_from_shorthand("phd:K=3,variant=cswa,W=16,C=32") ==
        Json::parse(R"({"phd": {"K": 3, "variant": "cswa", "W": 16, "C": 32}})"));
  CHECK(design_json_from_shorthand("hd:n=2,layers=full/intra/intra/full") ==
        Json::parse(R"({"hd": {"n": 2, "layers": ["full", "intra", "intra", "full"]}})"));
  CHECK(design_json_from_shorthand("baseline") == Json::parse(R"({"baseline": {}})"));
  CHECK(design_json_from_shorthand(R"({"vwn": {"m": 2, "n": 3}})") == Json::parse(R"({"vwn": {"m": 2, "n": 3}})"));
  CHECK(error_of([] { design_json_from_shorthand("hd:n"); }) == "/design/hd: shorthand item \"n\" is not key=value");
  CHECK(error_of([] { design_json_from_shorthand("{oops"); }) ==
        "/design: invalid JSON at line 1, column 2: syntax error while parsing object key - invalid literal; "
        "last read: '{o'; expected string literal");
  // A number past double's range is an error too, not a crash (found by the fuzzer).
  CHECK(error_of([] { design_json_from_shorthand(R"({"hd": {"n": 1e55555}})"); }) ==
        "/design: invalid JSON: number overflow parsing '1e55555'");
  CHECK(design_json_from_shorthand("hd:n=1e55555") == Json::parse(R"({"hd": {"n": "1e55555"}})"));
}

TEST_CASE("files: syntax errors point at line and column - writes are atomic", "[config][files]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "hdlab_test_config";
  fs::create_directories(dir);
  const std::string bad = (dir / "bad.json").string();
  write_file_atomic(bad, "{\n  \"a\": 1,\n  \"b\": ]\n}\n");
  CHECK(error_of([&] { read_json_file(bad); }) ==
        bad + ": invalid JSON at line 3, column 8: syntax error while parsing value - unexpected ']'; expected '[', "
              "'{', or a literal");
  CHECK(error_of([&] { read_json_file((dir / "missing.json").string()); }) ==
        (dir / "missing.json").string() + ": cannot open file: No such file or directory");
  write_file_atomic(bad, "{\"n\": 1e400}");
  CHECK(error_of([&] { read_json_file(bad); }) == bad + ": invalid JSON: number overflow parsing '1e400'");
  // Overwriting leaves no temporary files behind.
  write_file_atomic(bad, "{}");
  CHECK(read_json_file(bad) == Json::object());
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  CHECK(entries == 1);
  CHECK(error_of([&] { write_file_atomic((dir / "no/such/dir/x.json").string(), "{}"); }) ==
        (dir / "no/such/dir/x.json").string() + ": the folder " + (dir / "no/such/dir").string() + " does not exist");
  fs::remove_all(dir);
}
