// hdlab run MODEL --design D --phase prefill|decode|train-forward --backend cpu|cuda
// Runs the design for real (seeded random weights, or a safetensors file) and measures
// it: medians over repeats after warm-up, per-op times under the cost model's op names
// with the FLOPs executed, and memory. --json prints everything (every op per layer
// group); the default prints a summary. Bundled backbones are large: --layers,
// --hidden, ... scale one down, or use profiles/models/tiny-*.json. A run that would not
// fit is refused before anything is allocated (exit 2, needed and available bytes).
// --input-ids FILE runs on given tokens; --save-outputs OUT writes one forward's logits
// and hidden states on them (executor/outputs.hpp), to compare with another
// implementation on the weights --save-weights writes.
#include <charconv>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "hdlab/executor/backends.hpp"
#include "hdlab/executor/measure.hpp"
#include "hdlab/executor/outputs.hpp"
#include "hdlab/executor/safetensors.hpp"
#include "hdlab/model/files.hpp"
#include "hdlab/model/hf_import.hpp"
#include "verbs.hpp"

namespace hdlab::cli {

namespace {

using namespace hdlab::executor;

// Measurement bounds: a median over 10,000 repeats is as good as it gets, and a decode
// run's context grows by one token per call.
constexpr int max_repeats = 10000;
constexpr int max_warmup = 1000;

struct RunCli {
  ModelOptions model;
  std::string phase = "prefill", backend = "cpu", dtype = "f32", layout, weights, save_weights, save_dtype = "f32";
  std::string input_ids, save_outputs;
  std::int64_t tokens = 128;
  bool tokens_given = false;  // --tokens on the command line (--input-ids sets the count otherwise)
  int warmup = 1, repeats = 5, threads = 0;
  std::uint64_t seed = 1;
  bool json = false, no_normalize = false, no_op_timing = false, growth_change = false;
  std::map<std::string, std::int64_t> scale;  // flag -> value, only those given
};

// The scale-down flags: name, help, and where the value goes.
struct ScaleFlag {
  const char* flag;
  const char* help;
  std::optional<std::int64_t> BackboneScale::*field;
};
constexpr ScaleFlag kScaleFlags[] = {
    {"--layers", "override the backbone's layer count (attention pattern repeated)", &BackboneScale::layers},
    {"--hidden", "override the hidden size D", &BackboneScale::hidden},
    {"--heads", "override the query heads", &BackboneScale::heads},
    {"--kv-heads", "override the key/value heads", &BackboneScale::kv_heads},
    {"--head-dim", "override the head dim (default: follows hidden / heads)", &BackboneScale::head_dim},
    {"--ffn", "override the dense SwiGLU width", &BackboneScale::ffn},
    {"--vocab", "override the vocabulary", &BackboneScale::vocab},
    {"--experts", "override the routed experts", &BackboneScale::experts},
    {"--top-k", "override the routed experts per token", &BackboneScale::top_k},
    {"--expert-ffn", "override the expert (and shared expert) width", &BackboneScale::expert_ffn},
    {"--window", "override every sliding window [positions]", &BackboneScale::window},
};

// load_config() with the backbone scaled before the design is read against it.
model::Config load_scaled(const RunCli& o) {
  using model::Json;
  const Json doc = model::read_json_file(o.model.model_path);
  BackboneScale scale;
  for (const ScaleFlag& f : kScaleFlags)
    if (auto it = o.scale.find(f.flag); it != o.scale.end()) scale.*(f.field) = it->second;
  const model::Backbone loaded = load_model_backbone(doc, o.model.model_path);
  if (scale.window && loaded.num_sliding_layers() == 0)
    throw model::ConfigError("--window", "applies to backbones with sliding-window layers only; every layer of " +
                                             loaded.name + " attends to the full context");
  const model::Backbone base = scale_backbone(loaded, scale);
  return model::make_config(base, model::parse_design(design_document(o.model.design, doc), base, "/design"));
}

std::string bytes_text(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", b, units[u]);
}

void print_summary(const Measurement& m, const Runner& r, const Backend& b) {
  const model::Config& c = r.config();
  std::cout << fmt::format("hdlab run: {}, {}\n", c.effective.name, model::describe(c.design));
  std::cout << fmt::format("backend {} ({}), {}, layout {}, tiles {}x{}\n", b.name(), b.description(),
                           to_string(r.options().dtype), model::to_string(r.layout()), kTileQ, kTileK);
  std::cout << fmt::format("phase {}: {} tokens -> {} rows per layer pass, {} loss row(s), context {} tokens; "
                           "median of {} after {} warm-up\n",
                           to_string(m.options.phase), m.options.tokens, m.rows, m.loss_rows, m.context,
                           m.options.repeats, m.options.warmup);
  std::cout << fmt::format("time: median {:.3f} ms (min {:.3f}, max {:.3f}); host setup {:.3f} ms\n", m.median_ms,
                           m.min_ms, m.max_ms, m.median_setup_ms);
  std::cout << fmt::format("executed: {:.4g} GFLOP, {:.4g} GFLOP/s\n", m.flops * 1e-9,
                           m.median_ms > 0 ? m.flops * 1e-9 / (m.median_ms * 1e-3) : 0.0);
  std::cout << fmt::format("memory: weights {}, KV cache {}, peak {} (estimated {}, {} available)\n",
                           bytes_text(static_cast<double>(m.weight_bytes)), bytes_text(static_cast<double>(m.kv_bytes)),
                           bytes_text(static_cast<double>(m.peak_bytes)), bytes_text(static_cast<double>(m.estimate_bytes)),
                           bytes_text(static_cast<double>(m.available_bytes)));
  // Per op over all layer groups, slowest first.
  std::map<model::OpKind, OpMeasure> per_op;
  for (const OpStat& s : m.ops) per_op[s.op] += s.median;
  std::vector<std::pair<model::OpKind, OpMeasure>> rows(per_op.begin(), per_op.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b2) { return a.second.ms > b2.second.ms; });
  double op_sum = 0;
  for (const auto& [k, v] : rows) op_sum += v.ms;
  std::cout << fmt::format("{:<16}{:>11}{:>8}{:>12}{:>12}{:>8}\n", "op", "time [ms]", "[%]", "GFLOP", "GFLOP/s", "calls");
  for (const auto& [k, v] : rows)
    std::cout << fmt::format("{:<16}{:>11.4f}{:>8.1f}{:>12.4g}{:>12.4g}{:>8.0f}\n", model::to_string(k), v.ms,
                             op_sum > 0 ? 100 * v.ms / op_sum : 0.0, v.flops * 1e-9,
                             v.ms > 0 ? v.flops * 1e-9 / (v.ms * 1e-3) : 0.0, v.calls);
  if (r.options().profile_ops)
    std::cout << fmt::format("ops sum {:.3f} ms of {:.3f} ms ({} layer groups; --json for every op per group)\n", op_sum,
                             m.median_ms, r.groups().size());
}

std::unique_ptr<WeightSource> weight_source(const RunCli& o, const model::Config& c,
                                            std::vector<std::unique_ptr<WeightSource>>& keep) {
  std::unique_ptr<WeightSource> base;
  if (!o.weights.empty()) base = std::make_unique<SafetensorsWeights>(o.weights, stored_weight_specs(c));
  else base = std::make_unique<RandomWeights>(o.seed);
  if (!c.design.growth) return base;
  // Growth: the file (or the seed) holds the base model; its grown copy is what runs.
  keep.push_back(std::move(base));
  return std::make_unique<GrownWeights>(c, *keep.back(), o.seed + 1, !o.no_normalize);
}

// --input-ids FILE: a JSON array of integers, or integers separated by white space (one
// per line, as numpy.savetxt writes them). Range checks need the vocabulary: check_ids.
std::vector<std::int64_t> read_input_ids(const std::string& path) {
  auto bad = [&](const std::string& why) { return model::ConfigError("--input-ids", path + ": " + why); };
  std::string text;
  try {
    text = model::read_text_file(path);
  } catch (const model::ConfigError& e) {
    throw model::ConfigError("--input-ids", e.what());
  }
  std::vector<std::int64_t> ids;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    model::Json j;
    try {
      j = model::parse_json_text(text, path);
    } catch (const model::ConfigError& e) {
      throw model::ConfigError("--input-ids", e.what());
    }
    if (!j.is_array()) throw bad("a JSON document of token ids must be one array of integers");
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_number_integer() || (j[i].is_number_unsigned() && j[i].get<std::uint64_t>() > INT32_MAX))
        throw bad("element " + std::to_string(i) + " (" + j[i].dump() + ") is not a token id (an integer)");
      ids.push_back(j[i].get<std::int64_t>());
    }
  } else {
    std::istringstream in(text);
    for (std::string word; in >> word;) {
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
      if (ec != std::errc() || end != word.data() + word.size())
        throw bad("entry " + std::to_string(ids.size()) + " (\"" + word + "\") is not a token id (an integer)");
      ids.push_back(v);
    }
  }
  if (ids.empty())
    throw bad("holds no token ids (expected a JSON array of integers, or integers separated by white space)");
  return ids;
}

// The ids against the model: inside the vocabulary, and as many as the phase needs.
std::vector<std::int32_t> check_ids(const RunCli& o, const std::vector<std::int64_t>& ids, const model::Config& c,
                                    Phase phase) {
  const std::int64_t vocab = c.effective.vocab_size;
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab)
      throw model::ConfigError("--input-ids", fmt::format("{}: id {} (entry {}) is outside the vocabulary [0, {}) of {}",
                                                          o.input_ids, ids[i], i, vocab, c.effective.name));
    out.push_back(static_cast<std::int32_t>(ids[i]));
  }
  if (phase == Phase::decode && !o.save_outputs.empty() && out.size() < 2)
    throw model::ConfigError("--input-ids", o.input_ids + ": decode with --save-outputs needs at least 2 ids (the "
                                            "prompt, then the token decoded), got 1");
  return out;
}

// Flags that mean something only for some models: refused, not ignored, elsewhere.
void check_applicable(const RunCli& o, const model::Config& c) {
  if (o.no_normalize && !c.effective.moe)
    throw model::ConfigError("--no-normalize-topk", "applies to MoE backbones only; " + c.effective.name + " is dense");
}

std::unique_ptr<Backend> make_backend(const RunCli& o) {
  if (o.backend == "cpu") return make_cpu_backend(CpuOptions{o.threads, "auto"});
  if (o.backend != "cuda") throw model::ConfigError("--backend", "must be cpu or cuda, got " + o.backend);
  try {
    return make_cuda_backend(0);
  } catch (const BackendError& e) {
    throw model::ConfigError("--backend", std::string("cuda: ") + e.what());
  }
}

RunOptions run_options(const RunCli& o, const model::Config& c, std::int64_t tokens) {
  RunOptions ro;
  if (o.dtype != "f32" && o.dtype != "bf16") throw model::ConfigError("--dtype", "must be f32 or bf16, got " + o.dtype);
  ro.dtype = o.dtype == "bf16" ? ScalarType::bf16 : ScalarType::f32;
  // As the cost model's "auto": the layout with the least attention work at this length.
  ro.layout = o.layout.empty() ? model::best_layout(c, tokens, kTileQ, kTileK) : model::layout_from_string(o.layout);
  ro.normalize_topk = !o.no_normalize;
  ro.profile_ops = !o.no_op_timing;
  return ro;
}

// --input-ids: read before the model so a bad file fails first; the count replaces --tokens.
std::int64_t token_count(const RunCli& o, const std::vector<std::int64_t>& ids) {
  if (o.input_ids.empty()) return o.tokens;
  const auto n = static_cast<std::int64_t>(ids.size());
  if (o.tokens_given && o.tokens != n)
    throw model::ConfigError("--tokens", fmt::format("{} conflicts with --input-ids {}, which holds {} ids (leave "
                                                     "--tokens out: the file sets the count)", o.tokens, o.input_ids, n));
  return n;
}

// --save-outputs: one more forward, unmeasured, on the given ids with the hidden states
// captured (the host copy checked against the memory left on a CPU run first).
void save_outputs(const RunCli& o, Runner& runner, Backend& backend, Phase phase, const MeasureOptions& mo) {
  if (o.backend == "cpu") {
    const MemoryEstimate e = estimate_memory(runner.config(), RunShape{phase, mo.tokens, 0}, runner.options());
    try {
      backend.require_fits(e.kv_cache + e.activations + capture_bytes(runner, phase, mo.tokens));
    } catch (const OutOfMemoryError& m) {
      throw model::ConfigError("--save-outputs", std::string("the captured outputs would not fit in host memory: ") + m.what());
    }
  }
  const ForwardOutputs out = capture_outputs(runner, phase, mo.prompt);
  try {
    write_outputs(o.save_outputs, out);
  } catch (const model::ConfigError& e) {  // the file system's errors (model::AtomicFileWriter)
    throw model::ConfigError("--save-outputs", e.what());
  }
}

void report_growth_change(const RunCli& o, const model::Config& c, Runner& runner, Backend& backend,
                          const RunOptions& ro, std::int64_t tokens, WeightSource& base_weights, nlohmann::json& j) {
  // The base model (growth undone) on the same weights and tokens: how far growth
  // moved the outputs (0 for width growth at alpha = 0; depth growth is not
  // function preserving).
  model::Design undone = c.design;
  undone.growth.reset();
  const model::Config bc = model::make_config(c.base, undone);
  require_run_fits(backend, bc, RunShape{Phase::train_forward, tokens, 0}, ro);
  Runner base(backend, bc, upload_weights(backend, bc, base_weights, ro.dtype), ro);
  std::vector<std::int32_t> t(static_cast<std::size_t>(tokens));
  const auto u = random_floats(t.size(), o.seed + 2, 0.0f, 1.0f);
  for (std::size_t i = 0; i < t.size(); ++i)
    t[i] = static_cast<std::int32_t>(static_cast<double>(u[i]) * static_cast<double>(c.effective.vocab_size - 1));
  const OutputChange d = output_change(runner, base, t);
  if (o.json) j["growth_output_change"] = {{"max_rel", d.max_rel}, {"rms_rel", d.rms_rel}, {"tokens", tokens}};
  else std::cout << fmt::format("growth: logits moved by max {:.3g}, rms {:.3g} of the base model's ({} tokens)\n",
                                d.max_rel, d.rms_rel, tokens);
}

int run(const RunCli& o) {
  // Outputs first: a long run must not fail at its end for a path that could never work.
  if (!o.save_weights.empty()) check_output_file("--save-weights", o.save_weights);
  if (!o.save_outputs.empty()) {
    check_output_file("--save-outputs", o.save_outputs);
    namespace fs = std::filesystem;
    for (const auto& [flag, other] : {std::pair{"--save-weights", o.save_weights}, {"--input-ids", o.input_ids}})
      if (!other.empty() && fs::weakly_canonical(other) == fs::weakly_canonical(o.save_outputs))
        throw model::ConfigError("--save-outputs", o.save_outputs + " is also " + flag + "'s file: one would overwrite the other");
  }
  const std::vector<std::int64_t> ids = o.input_ids.empty() ? std::vector<std::int64_t>{} : read_input_ids(o.input_ids);
  const model::Config c = load_scaled(o);
  check_applicable(o, c);
  const Phase phase = phase_from_string(o.phase);
  MeasureOptions mo;
  mo.phase = phase;
  mo.tokens = token_count(o, ids);
  if (!ids.empty()) mo.prompt = check_ids(o, ids, c, phase);
  mo.warmup = o.warmup;
  mo.repeats = o.repeats;
  const RunOptions ro = run_options(o, c, mo.tokens);
  if (o.save_dtype != "f32" && o.save_dtype != "bf16")
    throw model::ConfigError("--save-dtype", "must be f32 or bf16, got " + o.save_dtype);
  std::unique_ptr<Backend> backend = make_backend(o);
  if (!backend->supports(BackendOp::gemm, ro.dtype))
    throw model::ConfigError("--dtype", o.backend + " backend does not run " + o.dtype + " models (cpu: f32)");
  require_run_fits(*backend, c, RunShape{phase, mo.tokens, phase == Phase::decode ? o.warmup + o.repeats : 0}, ro);
  if (o.growth_change && !c.design.growth)
    throw model::ConfigError("--growth-change", "the design has no growth to compare against");
  std::vector<std::unique_ptr<WeightSource>> keep;
  auto source = weight_source(o, c, keep);
  if (!o.save_weights.empty()) {
    try {
      save_weights(o.save_weights, c, *source, o.save_dtype == "bf16" ? StDtype::bf16 : StDtype::f32);
    } catch (const model::ConfigError& e) {  // the file system's errors (model::AtomicFileWriter)
      throw model::ConfigError("--save-weights", e.what());
    }
    if (!o.json) std::cout << "weights saved to " << o.save_weights << "\n";
  }
  Runner runner(*backend, c, upload_weights(*backend, c, *source, ro.dtype), ro);
  const Measurement m = measure(runner, *backend, mo);
  nlohmann::json j = o.json ? to_json(m, runner, *backend) : nlohmann::json();
  if (!o.json) print_summary(m, runner, *backend);
  if (!o.save_outputs.empty()) {
    save_outputs(o, runner, *backend, phase, mo);
    if (!o.json) std::cout << "outputs saved to " << o.save_outputs << "\n";
  }
  if (o.growth_change) report_growth_change(o, c, runner, *backend, ro, mo.tokens, *keep.back(), j);
  if (o.json) print_json(j);
  return exit_ok;
}

}  // namespace

Verb add_run(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Run a design for real and measure it op by op (cpu, or cuda where a GPU is)");
  auto o = std::make_shared<RunCli>();
  o->model.add_to(*sub);
  sub->add_option("--phase", o->phase, "prefill | decode | train-forward")->capture_default_str();
  sub->add_option("--backend", o->backend, "cpu | cuda")->capture_default_str();
  auto* tokens = sub->add_option("--tokens", o->tokens, "training length, prompt length, or the decode context [tokens]")
                     ->capture_default_str();
  sub->add_option("--repeats", o->repeats, "measured repeats (medians over them)")
      ->capture_default_str()
      ->check(int_range(1, max_repeats, "more add nothing to a median"));
  sub->add_option("--warmup", o->warmup, "unmeasured runs first")
      ->capture_default_str()
      ->check(int_range(0, max_warmup, "the first few runs are what warm-up is for"));
  sub->add_option("--seed", o->seed, "seed of the random weights (and growth noise: seed + 1)")->capture_default_str();
  sub->add_option("--weights", o->weights, "safetensors file with the weights (with growth: the base model's)")
      ->check(non_empty());
  auto* save = sub->add_option("--save-weights", o->save_weights, "write the weights run to this safetensors file")
                   ->check(non_empty());
  sub->add_option("--save-dtype", o->save_dtype, "f32 | bf16 for --save-weights")->capture_default_str()->needs(save);
  auto* ids = sub->add_option("--input-ids", o->input_ids,
                              "run on these token ids: a JSON array of integers, or integers separated by white "
                              "space (sets the token count)")
                  ->check(non_empty());
  sub->add_option("--save-outputs", o->save_outputs,
                  "write one forward's logits and every layer's hidden states on --input-ids (f32 safetensors; "
                  "names and layouts: executor/README.md)")
      ->check(non_empty())
      ->needs(ids);
  sub->add_option("--dtype", o->dtype, "f32 | bf16 (bf16: cuda only)")->capture_default_str();
  sub->add_option("--layout", o->layout, "interleaved | stream_major | phd_split (default: the one with the least attention work)");
  sub->add_option("--threads", o->threads, "cpu threads (0: all)")->capture_default_str()->check(thread_count());
  sub->add_flag("--no-normalize-topk", o->no_normalize, "MoE: keep the top-k router weights unnormalised");
  sub->add_flag("--no-op-timing", o->no_op_timing, "time whole calls only (no timer around each op)");
  sub->add_flag("--json", o->json, "print the full measurement as JSON");
  sub->add_flag("--growth-change", o->growth_change,
                "growth designs: also run the base model and report how far growth moved the logits");
  for (const ScaleFlag& f : kScaleFlags)
    sub->add_option_function<std::int64_t>(f.flag, [o, name = std::string(f.flag)](const std::int64_t& v) {
      o->scale[name] = v;
    }, f.help);
  return {sub, [o, tokens] {
            o->tokens_given = tokens->count() > 0;
            try {
              return run(*o);
            } catch (const OutOfMemoryError& e) {
              std::cerr << "hdlab: error: run refused before allocating: " << e.what() << "\n";
              return exit_bad_input;
            } catch (const SafetensorsError& e) {
              std::cerr << "hdlab: error: " << e.what() << "\n";
              return exit_bad_input;
            }
          }};
}

}  // namespace hdlab::cli
