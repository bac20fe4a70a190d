// Weights of the runner: growth transforms on real weights (width growth at alpha = 0 is
// function preserving for softmax and sigmoid routers, with and without normalisation;
// depth growth reports its output change), safetensors round trips and every bad file a
// user can hand us, and memory refusal before allocation.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "hdlab/executor/measure.hpp"
#include "hdlab/executor/safetensors.hpp"
#include "runner_test_support.hpp"

namespace hdlab::executor::testing {

namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("hdlab_runner_" + std::to_string(::getpid()) + "_" + name);
}

std::vector<float> logits_of(Model& m, const std::vector<std::int32_t>& t) {
  return m.backend->download_f32(m.runner->train_forward(t).logits);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("width growth with alpha = 0 leaves outputs unchanged - alpha > 0 perturbs them", "[runner][growth]") {
  const auto t = tokens(12);
  for (auto router : {model::RouterKind::softmax, model::RouterKind::sigmoid})
    for (bool normalize : {true, false})
      for (std::int64_t factor : {2, 3}) {
        const model::Backbone b = tiny_moe(router);
        RunOptions o;
        o.normalize_topk = normalize;
        Model base = build(make(b, "{}"), 11, o);
        const auto base_logits = logits_of(base, t);
        INFO(model::to_string(router) << " normalize " << normalize << " width x" << factor);
        for (double alpha : {0.0, 0.05}) {
          const model::Config grown =
              make(b, R"({"growth": {"width_factor": )" + std::to_string(factor) + R"(, "noise_alpha": )" +
                          std::to_string(alpha) + "}}");
          REQUIRE(grown.effective.moe->num_experts == 8 * factor);
          REQUIRE(grown.effective.moe->top_k == 2 * factor);
          RandomWeights base_weights(11);
          GrownWeights weights(grown, base_weights, 5, normalize);
          Model g = build(grown, weights, o);
          const double change = rel_diff(logits_of(g, t), base_logits);
          if (alpha == 0.0) {
            CHECK(change < kSameFunction);
          } else {
            CHECK(change > 1e-4);
            CHECK(change < 0.5);
          }
        }
      }
}

TEST_CASE("depth growth copies layers (interpose / stack) and reports its output change", "[runner][growth]") {
  const model::Backbone b = tiny_dense(3);
  const auto t = tokens(12);
  Model base = build(make(b, "{}"), 2);
  const auto base_logits = logits_of(base, t);
  RandomWeights base_weights(2);
  for (const char* mode : {"interpose", "stack"}) {
    const model::Config grown = make(b, std::string(R"({"growth": {"depth_factor": 2, "depth_mode": ")") + mode + "\"}}");
    GrownWeights weights(grown, base_weights, 5, true);
    // Grown layer 3 copies base layer 1 (interpose: 3 / 2) or 0 (stack: 3 % 3).
    const std::int64_t src = std::string(mode) == "interpose" ? 1 : 0;
    const auto specs = weight_specs(grown);
    const auto q3 = std::find_if(specs.begin(), specs.end(),
                                 [](const WeightSpec& s) { return s.name == "model.layers.3.self_attn.q_proj.weight"; });
    REQUIRE(q3 != specs.end());
    WeightSpec base_q = *q3;
    base_q.name = "model.layers." + std::to_string(src) + ".self_attn.q_proj.weight";
    CHECK(weights.values(*q3) == base_weights.values(base_q));
    Model g = build(grown, weights);
    const std::vector<float> grown_logits = logits_of(g, t);
    const double change = rel_diff(grown_logits, base_logits);
    // Not function preserving: every layer now runs twice. Reported, not bounded.
    const OutputChange reported = output_change(*g.runner, *base.runner, t);
    WARN("depth growth x2 (" << mode << "): max |logit change| / max |logit| = " << reported.max_rel
                             << ", rms " << reported.rms_rel);
    CHECK(change > 1e-3);
    CHECK(std::isfinite(change));
    CHECK(reported.max_rel == Approx(change).epsilon(1e-9));
    double sq_change = 0, sq_base = 0;
    for (std::size_t i = 0; i < base_logits.size(); ++i) {
      sq_change += std::pow(static_cast<double>(grown_logits[i]) - base_logits[i], 2);
      sq_base += std::pow(static_cast<double>(base_logits[i]), 2);
    }
    CHECK(reported.rms_rel == Approx(std::sqrt(sq_change / sq_base)).epsilon(1e-9));
  }
}

TEST_CASE("safetensors: weights saved and loaded run the same model", "[runner][safetensors]") {
  for (const char* design : {"{}", R"({"hd": {"n": 2, "layers": "intra"}})", R"({"vwn": {"m": 2, "n": 3, "mtp": true}})",
                             R"({"looped": {"iterations": 2, "input_injection": true}})"}) {
    model::Backbone b = tiny_moe();
    b.attention_bias = true;
    b.qk_norm = true;
    const model::Config c = make(b, design);
    const fs::path file = temp_file("weights.safetensors");
    RandomWeights random(21);
    save_weights(file.string(), c, random, StDtype::f32);
    SafetensorsWeights loaded(file.string(), weight_specs(c));
    CHECK(loaded.reader().entries().size() == weight_specs(c).size());
    CHECK(loaded.reader().metadata().at("producer") == "hdlab");
    Model a = build(c, 21), l = build(c, loaded);
    const auto t = tokens(7);
    INFO(design);
    CHECK(rel_diff(logits_of(l, t), logits_of(a, t)) == 0.0);
    // bf16 storage: every weight read back is its f32 value rounded to bf16, and the
    // model runs close to the f32 one (loosely: rounding compounds through depth and loops).
    save_weights(file.string(), c, random, StDtype::bf16);
    SafetensorsWeights rounded(file.string(), weight_specs(c));
    for (const auto& spec : weight_specs(c)) {
      std::vector<float> want = random.values(spec);
      for (float& x : want) x = round_to_bf16(x);
      REQUIRE(rounded.values(spec) == want);
    }
    Model r = build(c, rounded);
    const double d = rel_diff(logits_of(r, t), logits_of(a, t));
    CHECK(d > 0);
    CHECK(d < 0.25);
    fs::remove(file);
  }
}

TEST_CASE("safetensors: bad files name the tensor and the reason", "[runner][safetensors]") {
  const model::Config c = make(tiny_dense(2), "{}");
  const fs::path file = temp_file("bad.safetensors");
  RandomWeights random(1);
  std::vector<SafetensorsTensorSpec> specs;
  for (const auto& s : weight_specs(c)) specs.push_back({s.name, s.shape});
  auto values = [&](const SafetensorsTensorSpec& t) {
    return std::vector<float>(static_cast<std::size_t>(element_count(t.shape)), 0.5f);
  };

  SECTION("wrong shape") {
    auto wrong = specs;
    wrong[3].shape = {wrong[3].shape[0] - 1, wrong[3].shape[1]};
    write_safetensors(file.string(), wrong, values, StDtype::f32);
    const std::string e = error_of([&] { SafetensorsWeights w(file.string(), weight_specs(c)); });
    CHECK(e.find(specs[3].name) != std::string::npos);
    CHECK(e.find("has shape") != std::string::npos);
    CHECK(e.find(to_string(specs[3].shape)) != std::string::npos);
  }
  SECTION("missing tensor") {
    auto fewer = specs;
    fewer.pop_back();
    write_safetensors(file.string(), fewer, values, StDtype::f32);
    const std::string e = error_of([&] { SafetensorsWeights w(file.string(), weight_specs(c)); });
    CHECK(e.find(specs.back().name + "\" is missing") != std::string::npos);
  }
  SECTION("truncated body") {
    write_safetensors(file.string(), specs, values, StDtype::f32);
    fs::resize_file(file, fs::file_size(file) - 10);
    const std::string e = error_of([&] { SafetensorsReader r(file.string()); });
    // The last tensor written is the one whose data runs past the end.
    CHECK(e.find(specs.back().name) != std::string::npos);
    CHECK(e.find("truncated") != std::string::npos);
  }
  SECTION("header length past the end") {
    std::ofstream(file, std::ios::binary) << std::string("\xff\x00\x00\x00\x00\x00\x00\x00{}", 10);
    CHECK(error_of([&] { SafetensorsReader r(file.string()); }).find("header length") != std::string::npos);
  }
  auto raw_file = [&](const std::string& header, std::size_t data_bytes) {
    std::ofstream out(file, std::ios::binary);
    std::string len(8, '\0');
    for (int i = 0; i < 8; ++i) len[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    out << len << header << std::string(data_bytes, '\0');
  };
  SECTION("offsets out of range and sizes that disagree with the shape") {
    raw_file(R"({"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                 "b": {"dtype": "F32", "shape": [4], "data_offsets": [16, 48]}})", 48);
    CHECK(error_of([&] { SafetensorsReader r(file.string()); }).find("tensor \"b\"") != std::string::npos);
    raw_file(R"({"c": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})", 16);
    const std::string e = error_of([&] { SafetensorsReader r(file.string()); });
    CHECK(e.find("tensor \"c\"") != std::string::npos);
    CHECK(e.find("run past the end") != std::string::npos);
  }
  SECTION("wrong dtype") {
    raw_file(R"({"ids": {"dtype": "I32", "shape": [4], "data_offsets": [0, 16]}})", 16);
    SafetensorsReader r(file.string());
    const std::string e = error_of([&] { r.read_f32("ids", {4}); });
    CHECK(e.find("tensor \"ids\" has dtype I32") != std::string::npos);
    raw_file(R"({"x": {"dtype": "Q4", "shape": [4], "data_offsets": [0, 2]}})", 2);
    CHECK(error_of([&] { SafetensorsReader q(file.string()); }).find("unknown dtype \"Q4\"") != std::string::npos);
  }
  SECTION("not JSON") {
    raw_file("{not json", 0);
    CHECK(error_of([&] { SafetensorsReader r(file.string()); })
              .starts_with(file.string() + ": header: invalid JSON at line 1, column 3: syntax error while parsing "
                                           "object key - invalid literal"));
  }
  SECTION("f16 data reads back") {
    raw_file(R"({"h": {"dtype": "F16", "shape": [3], "data_offsets": [0, 6]}})", 0);
    std::fstream out(file, std::ios::binary | std::ios::in | std::ios::out | std::ios::ate);
    for (float x : {1.5f, -0.25f, 65504.0f}) {
      const std::uint16_t h = f32_to_f16(x);
      out.write(reinterpret_cast<const char*>(&h), 2);
    }
    out.close();
    SafetensorsReader r(file.string());
    CHECK(r.read_f32("h", {3}) == std::vector<float>{1.5f, -0.25f, 65504.0f});
  }
  fs::remove(file);
}

TEST_CASE("safetensors written for another model or design are refused, naming the tensor",
          "[runner][safetensors][bad-input]") {
  const fs::path file = temp_file("other.safetensors");
  RandomWeights random(3);
  struct Row {
    const char* what;
    model::Config saved, loaded;
    std::string message;  // after "<file>: "
  };
  const std::string another = ": the file was written for another model or design (another layer count, method or size)";
  const model::Config grown = make(tiny_dense(2), R"({"growth": {"depth_factor": 2}})");
  const std::vector<Row> rows = {
      {"more layers", make(tiny_dense(3), "{}"), make(tiny_dense(2), "{}"),
       "tensor \"model.layers.2.input_layernorm.weight\" is not a weight of this model (nor are 8 more)" + another +
           "; its metadata says tiny-dense, baseline"},
      {"fewer layers", make(tiny_dense(2), "{}"), make(tiny_dense(3), "{}"),
       "tensor \"model.layers.2.input_layernorm.weight\" is missing (the file has 21 tensors)"},
      {"an HD design's file for the baseline", make(tiny_dense(2), R"({"hd": {"n": 2}})"), make(tiny_dense(2), "{}"),
       "tensor \"hdlab.hd.embed_tokens.1.weight\" is not a weight of this model" + another +
           "; its metadata says tiny-dense, hd n=2 (0 intra, 0 local, 2 full)"},
      {"a VWN design's file for the baseline", make(tiny_dense(2), R"({"vwn": {"m": 2, "n": 2}})"),
       make(tiny_dense(2), "{}"),
       "tensor \"hdlab.vwn.group_norm.bias\" is not a weight of this model (nor are 22 more)" + another +
           "; its metadata says tiny-dense, vwn m=2 n=2 (r=1, dynamic)"},
      {"the grown model's file as the base of a growth design", grown, grown,
       "tensor \"model.layers.2.input_layernorm.weight\" is not a weight of this model (nor are 17 more)" + another +
           "; its metadata says tiny-dense grown depth x2 (interpose), baseline + growth depth x2 interpose"},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    save_weights(file.string(), row.saved, random, StDtype::f32);
    CHECK(error_of([&] { SafetensorsWeights w(file.string(), stored_weight_specs(row.loaded)); }) ==
          file.string() + ": " + row.message);
  }
  // The base model's file is what a growth design loads.
  save_weights(file.string(), make(tiny_dense(2), "{}"), random, StDtype::f32);
  CHECK(error_of([&] { SafetensorsWeights w(file.string(), stored_weight_specs(grown)); }).empty());
  fs::remove(file);
}

TEST_CASE("safetensors data the tensors do not tile exactly is refused", "[runner][safetensors][bad-input]") {
  const fs::path file = temp_file("layout.safetensors");
  auto raw_file = [&](const std::string& header, std::size_t data_bytes) {
    std::ofstream out(file, std::ios::binary);
    std::string len(8, '\0');
    for (int i = 0; i < 8; ++i) len[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    out << len << header << std::string(data_bytes, '\0');
  };
  struct Row {
    const char* what;
    std::string header;
    std::size_t data_bytes;
    std::string message;  // after "<file>: "
  };
  const std::string a = R"("a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]})";
  std::string deep_pointer = "/__metadata__";
  while (deep_pointer.size() < 117) deep_pointer += "/0";
  const std::vector<Row> rows = {
      {"overlapping offsets", "{" + a + R"(, "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})", 24,
       "tensor \"b\": data_offsets [8, 24) overlap tensor \"a\" [0, 16): two tensors cannot share bytes"},
      {"a gap between tensors", "{" + a + R"(, "b": {"dtype": "F32", "shape": [4], "data_offsets": [24, 40]}})", 40,
       "tensor \"b\": data_offsets [24, 40) leave bytes [16, 24) that no tensor owns after tensor \"a\""},
      {"a gap before the first", R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})", 24,
       "tensor \"a\": data_offsets [8, 24) leave bytes [0, 8) that no tensor owns"},
      {"trailing bytes", "{" + a + "}", 20,
       "4 trailing bytes after the last tensor's data (\"a\" ends at 16 of 20 data bytes): the file holds more than "
       "its header describes"},
      {"a tensor named twice", "{" + a + ", " + a + "}", 16,
       "header: the object at the top level repeats the key \"a\" (JSON parsers keep one of the values and silently "
       "drop the other)"},
      {"a header nested 80,000 levels deep",
       R"({"__metadata__": )" + std::string(80000, '[') + std::string(80000, ']') + "}", 0,
       "header: JSON nested deeper than 128 levels (hdlab's limit for input files) at " + deep_pointer.substr(0, 117) +
           "..."},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    raw_file(row.header, row.data_bytes);
    CHECK(error_of([&] { SafetensorsReader r(file.string()); }) == file.string() + ": " + row.message);
  }
  raw_file("{" + a + R"(, "b": {"dtype": "F32", "shape": [0], "data_offsets": [16, 16]}})", 16);
  CHECK(error_of([&] { SafetensorsReader r(file.string()); }).empty());  // an empty tensor owns no bytes
  fs::remove(file);
}

TEST_CASE("NaN or infinite weights are refused, naming the tensor and the element", "[runner][safetensors][bad-input]") {
  const model::Config c = make(tiny_dense(2), "{}");
  const fs::path file = temp_file("nan.safetensors");
  const auto specs = weight_specs(c);
  std::vector<SafetensorsTensorSpec> tensors;
  for (const auto& s : specs) tensors.push_back({s.name, s.shape});
  for (StDtype dtype : {StDtype::f32, StDtype::bf16}) {
    for (float bad : {std::nanf(""), -INFINITY}) {
      INFO(to_string(dtype) << " " << bad);
      write_safetensors(
          file.string(), tensors,
          [&](const SafetensorsTensorSpec& t) {
            std::vector<float> v(static_cast<std::size_t>(element_count(t.shape)), 0.25f);
            if (t.name == specs[2].name) v[5] = bad;
            return v;
          },
          dtype);
      SafetensorsWeights w(file.string(), specs);
      auto backend = make_cpu_backend();
      CHECK(error_of([&] { upload_weights(*backend, c, w, ScalarType::f32); }) ==
            file.string() + ": tensor \"" + specs[2].name + "\": element 5 is " + (std::isnan(bad) ? "NaN" : "infinite") +
                ": not a usable weight (a corrupt or diverged checkpoint)");
    }
  }
  fs::remove(file);
}

TEST_CASE("a write into a missing folder fails and leaves nothing behind", "[runner][safetensors]") {
  const std::string e = error_of([&] {
    write_safetensors("/nonexistent-hdlab-folder/w.safetensors", {{"a", {1}}},
                      [](const SafetensorsTensorSpec&) { return std::vector<float>{1.0f}; }, StDtype::f32);
  });
  CHECK(e.find("does not exist") != std::string::npos);
}

TEST_CASE("memory: the estimate bounds what a run allocates - a run that cannot fit is refused first", "[runner][memory]") {
  for (const char* design : {"{}", R"({"hd": {"n": 3, "layers": "intra"}})", R"({"phd": {"K": 3, "variant": "swa", "W": 4}})",
                             R"({"vwn": {"m": 2, "n": 3, "mtp": true}})", R"({"looped": {"iterations": 3}})"}) {
    check_memory_estimate(make(tiny_moe(), design), design);
  }
  // The 617B MoE in f32 needs terabytes: refused with both numbers, nothing allocated.
  const model::Config huge = model::parse_config(model::read_json_file(std::string(HDLAB_SOURCE_DIR) + "/profiles/models/welm-617b.json"));
  auto backend = make_cpu_backend();
  try {
    require_run_fits(*backend, huge, RunShape{Phase::prefill, 4096, 0}, {});
    FAIL("a 617B model fitted in host memory");
  } catch (const OutOfMemoryError& e) {
    CHECK(e.needed_bytes() > e.available_bytes());
    CHECK(e.needed_bytes() > std::size_t{2} << 40);
    CHECK(std::string(e.what()).find("available") != std::string::npos);
  }
  CHECK(backend->memory().peak_bytes == 0);
  RandomWeights random(1);
  CHECK_THROWS_AS(upload_weights(*backend, huge, random, ScalarType::f32), OutOfMemoryError);
  CHECK(backend->memory().peak_bytes == 0);
}

TEST_CASE("backbone settings the simulator costs but the runner does not execute are refused by field",
          "[runner][bad-input]") {
  CHECK(refused_at(tiny_dense()) == "accepted");
  model::Backbone b = tiny_dense();
  b.input_vocab_size = 1000;
  CHECK(refused_at(b) == "/backbone/input_vocab_size");
  b = tiny_dense();
  b.norm = model::NormKind::layernorm;
  CHECK(refused_at(b) == "/backbone/norm");
  b = tiny_dense();
  b.mlp = model::MlpKind::gelu;
  CHECK(refused_at(b) == "/backbone/mlp");
  b = tiny_dense();
  b.positions = model::PositionKind::alibi;
  CHECK(refused_at(b) == "/backbone/positions");
  b = tiny_dense();
  b.output_bias = true;  // executed since gpt-oss (o_proj.bias)
  CHECK(refused_at(b) == "accepted");
  b = tiny_dense();
  b.mlp_bias = true;  // executed since issue 15 (mlp.{gate,up,down}_proj.bias)
  CHECK(refused_at(b) == "accepted");
  // The 2025 HF families' fields: partial RoPE (GLM-4.5, Qwen3-Next), Nemotron-H's blocks
  // (mamba2 mixers, single sublayers, relu2, no positions) run; OLMo 2's norms are refused.
  b = tiny_dense();
  b.rotary_dim = b.head_dim / 2;
  CHECK(refused_at(b) == "accepted");
  b.rotary_dim = b.head_dim;
  CHECK(refused_at(b) == "accepted");
  CHECK(refused_at(tiny_nemotron_h()) == "accepted");
  b = tiny_nemotron_h();
  b.norms_per_layer = 4;  // a single-sublayer layer runs behind one pre-norm
  CHECK(refused_at(b) == "/backbone/norms_per_layer");
  b = tiny_dense();
  b.positions = model::PositionKind::none;
  b.head_dim = 7;  // no RoPE: any head dim
  b.num_heads = 4;
  CHECK(refused_at(b) == "accepted");
  b = tiny_dense();
  b.qk_norm = true;
  b.qk_norm_whole_projection = true;
  CHECK(refused_at(b) == "/backbone/qk_norm_scope");
  b = tiny_dense();
  b.post_sublayer_norms = true;
  CHECK(refused_at(b) == "/backbone/norm_placement");
}

}  // namespace hdlab::executor::testing
