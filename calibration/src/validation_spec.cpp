// Parsing a validation file into cases (validation.hpp): every key checked, every error
// naming its JSON pointer; models are loaded and scaled, designs validated against them.
#include <filesystem>
#include <set>

#include "hdlab/calibration/validation.hpp"
#include "hdlab/executor/measure.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::calibration {

using model::fail;
using model::ObjectReader;
using nlohmann::json;

namespace {

struct ScaleKey {
  const char* key;
  std::optional<std::int64_t> executor::BackboneScale::*field;
};
constexpr ScaleKey kScaleKeys[] = {
    {"layers", &executor::BackboneScale::layers},     {"hidden", &executor::BackboneScale::hidden},
    {"heads", &executor::BackboneScale::heads},       {"kv_heads", &executor::BackboneScale::kv_heads},
    {"head_dim", &executor::BackboneScale::head_dim}, {"ffn", &executor::BackboneScale::ffn},
    {"vocab", &executor::BackboneScale::vocab},       {"experts", &executor::BackboneScale::experts},
    {"top_k", &executor::BackboneScale::top_k},       {"expert_ffn", &executor::BackboneScale::expert_ffn},
    {"window", &executor::BackboneScale::window},
};

// A model entry: its file (relative to the validation file) scaled as asked.
model::Backbone parse_model(ObjectReader r, const std::string& base_dir, const std::string& backend) {
  const std::string path = r.string("path", std::nullopt);
  const std::filesystem::path full = std::filesystem::path(base_dir) / path;
  executor::BackboneScale scale;
  if (auto s = r.optional_object("scale")) {
    for (const ScaleKey& k : kScaleKeys)
      if (s->has(k.key)) scale.*(k.field) = s->integer(k.key, std::nullopt, 1);
    s->finish();
  }
  r.finish();
  model::Backbone b;
  try {
    b = executor::scale_backbone(model::load_backbone(model::read_json_file(full.string())), scale);
  } catch (const model::ConfigError& e) {
    fail(r.at("path"), "model " + full.string() + ": " + e.what());
  }
  // The CPU executor stores and computes f32: the simulator must count 4 bytes too.
  if (backend == "cpu" && b.dtype != model::DType::fp32)
    fail(r.at("path"), "the cpu backend runs fp32 only; give the model \"dtype\": \"fp32\" so that predicted bytes match");
  return b;
}

struct DesignEntry {
  json design;
  std::optional<model::Layout> layout;
};

DesignEntry parse_design_entry(ObjectReader r) {
  DesignEntry d;
  const json* v = r.find("design");
  if (v && v->is_string()) {
    try {
      d.design = model::design_json_from_shorthand(v->get<std::string>());
    } catch (const model::ConfigError& e) {
      fail(r.at("design"), e.what());
    }
  } else if (v) {
    d.design = *v;
  } else {
    d.design = json::object();  // the baseline
  }
  if (r.has("layout")) {
    const std::string s = r.string("layout", std::nullopt);
    try {
      d.layout = model::layout_from_string(s);
    } catch (const model::ConfigError& e) {
      fail(r.at("layout"), e.reason());
    }
  }
  r.finish();
  return d;
}

std::vector<std::string> names_of(const json& list, const std::string& ptr) {
  if (!list.is_array() || list.empty()) fail(ptr, "must be a non-empty list");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(model::read_string(list[i], model::pointer_join(ptr, i)));
  return out;
}

std::string known(const std::map<std::string, model::Backbone>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k;
  return s;
}
std::string known(const std::map<std::string, DesignEntry>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k;
  return s;
}

void parse_measure(ObjectReader r, ValidationSpec& s) {
  s.warmup = static_cast<int>(r.integer("warmup", 2, 0, 100));
  s.repeats = static_cast<int>(r.integer("repeats", 7, 1, 1000));
  s.seed = static_cast<std::uint64_t>(r.integer("seed", 1, 0));
  s.rounds = static_cast<int>(r.integer("rounds", 1, 1, 10));
  r.finish();
}

void parse_attention(ObjectReader r, ValidationSpec& s) {
  s.tile_q = r.integer("tile_q", executor::kTileQ, 1);
  s.tile_k = r.integer("tile_k", executor::kTileK, 1);
  // The executor's kernels have one tile size; predicting another would count tiles it
  // does not run.
  if (s.tile_q != executor::kTileQ) fail(r.at("tile_q"), "the executor's attention tiles are " + std::to_string(executor::kTileQ) + " query rows");
  if (s.tile_k != executor::kTileK) fail(r.at("tile_k"), "the executor's attention tiles are " + std::to_string(executor::kTileK) + " keys");
  r.finish();
}

void expand_case(ObjectReader r, const std::map<std::string, model::Backbone>& models,
                 const std::map<std::string, DesignEntry>& designs, ValidationSpec& s) {
  const std::string model_name = r.string("model", std::nullopt);
  const auto m = models.find(model_name);
  if (m == models.end()) fail(r.at("model"), "unknown model \"" + model_name + "\" (known: " + known(models) + ")");
  const std::vector<std::string> design_names = names_of(r.required("designs"), r.at("designs"));
  const std::vector<std::string> phase_names = names_of(r.required("phases"), r.at("phases"));
  const json& tokens = r.required("tokens");
  if (!tokens.is_array() || tokens.empty()) fail(r.at("tokens"), "must be a non-empty list of token counts");
  r.finish();
  std::vector<executor::Phase> phases;
  for (std::size_t i = 0; i < phase_names.size(); ++i) {
    const std::string ptr = model::pointer_join(r.at("phases"), i);
    if (phase_names[i] != "prefill" && phase_names[i] != "decode" && phase_names[i] != "train-forward")
      fail(ptr, "must be one of prefill, decode, train-forward, got \"" + phase_names[i] + "\"");
    phases.push_back(executor::phase_from_string(phase_names[i]));
  }
  for (std::size_t d = 0; d < design_names.size(); ++d) {
    const std::string dptr = model::pointer_join(r.at("designs"), d);
    const auto entry = designs.find(design_names[d]);
    if (entry == designs.end())
      fail(dptr, "unknown design \"" + design_names[d] + "\" (known: " + known(designs) + ")");
    model::Config config;
    try {
      config = model::make_config(m->second, model::parse_design(entry->second.design, m->second, "/design"));
    } catch (const model::ConfigError& e) {
      fail(dptr, "design \"" + design_names[d] + "\" on model \"" + model_name + "\": " + e.what());
    }
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      const std::int64_t L = model::read_integer(tokens[t], model::pointer_join(r.at("tokens"), t), 1, 1 << 20);
      for (executor::Phase p : phases) {
        ValidationCase c;
        c.model = model_name;
        c.design = design_names[d];
        c.config = config;
        c.layout = entry->second.layout;
        c.phase = p;
        c.tokens = L;
        c.pointer = r.pointer();
        c.group = model_name + " " + executor::to_string(p) + " L=" + std::to_string(L);
        c.label = model_name + " " + design_names[d] + " " + executor::to_string(p) + " L=" + std::to_string(L);
        s.cases.push_back(std::move(c));
      }
    }
  }
}

}  // namespace

model::Layout ValidationCase::effective_layout() const { return layout.value_or(model::default_layout(config.design)); }

ValidationSpec parse_validation(const json& j, const std::string& base_dir) {
  ObjectReader r(j, "");
  ValidationSpec s;
  s.description = r.string("description", std::string());
  s.hardware = r.string("hardware", std::string());
  s.backend = r.string("backend", std::string("cpu"));
  if (s.backend != "cpu" && s.backend != "cuda") fail(r.at("backend"), "must be cpu or cuda, got \"" + s.backend + "\"");
  s.threads = static_cast<int>(r.integer("threads", 0, 0, 1024));
  if (auto m = r.optional_object("measure")) parse_measure(*m, s);
  if (auto a = r.optional_object("attention")) parse_attention(*a, s);
  std::map<std::string, model::Backbone> models;
  {
    ObjectReader mr = r.object("models");
    const json& all = r.required("models");
    for (const auto& [name, value] : all.items()) models[name] = parse_model(mr.object(name), base_dir, s.backend);
    mr.finish();
    if (models.empty()) fail(r.at("models"), "must name at least one model");
  }
  std::map<std::string, DesignEntry> designs;
  {
    ObjectReader dr = r.object("designs");
    for (const auto& [name, value] : r.required("designs").items()) designs[name] = parse_design_entry(dr.object(name));
    dr.finish();
    if (designs.empty()) fail(r.at("designs"), "must name at least one design");
  }
  const json& cases = r.required("cases");
  if (!cases.is_array()) fail(r.at("cases"), "must be a list of cases");
  if (cases.empty()) fail(r.at("cases"), "must list at least one case");
  for (std::size_t i = 0; i < cases.size(); ++i) expand_case(ObjectReader(cases[i], model::pointer_join(r.at("cases"), i)), models, designs, s);
  r.finish();
  // Two entries producing the same case would be measured twice and counted twice.
  std::set<std::string> labels;
  for (const ValidationCase& c : s.cases)
    if (!labels.insert(c.label).second) fail(c.pointer, "case \"" + c.label + "\" appears twice");
  return s;
}

}  // namespace hdlab::calibration
