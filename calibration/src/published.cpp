// Published measurements as validation cases (published.hpp): the file parser, the
// prediction of each case from the cost model, and the statistics per source and metric.
#include "hdlab/calibration/published.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/cost_model.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"
#include "hdlab/simulator/serving.hpp"
#include "hdlab/simulator/pipeline_io.hpp"

namespace hdlab::calibration {

using model::fail;
using model::ObjectReader;
using nlohmann::json;

const char* to_string(PublishedMetric m) {
  switch (m) {
    case PublishedMetric::output_tokens_per_s_per_gpu: return "output_tokens_per_s_per_gpu";
    case PublishedMetric::first_token_latency_s: return "first_token_latency_s";
    case PublishedMetric::train_iteration_s: return "train_iteration_s";
    case PublishedMetric::train_tflops_per_gpu: return "train_tflops_per_gpu";
  }
  return "?";
}

const char* unit_of(PublishedMetric m) {
  switch (m) {
    case PublishedMetric::output_tokens_per_s_per_gpu: return "tokens/s/GPU";
    case PublishedMetric::first_token_latency_s:
    case PublishedMetric::train_iteration_s: return "s";
    case PublishedMetric::train_tflops_per_gpu: return "TFLOP/s/GPU";
  }
  return "?";
}

bool is_training(PublishedMetric m) {
  return m == PublishedMetric::train_iteration_s || m == PublishedMetric::train_tflops_per_gpu;
}

namespace {

// Tokens, batches and devices of real systems: bounded so that no product overflows.
constexpr std::int64_t max_tokens = std::int64_t{1} << 24;
constexpr std::int64_t max_batch = std::int64_t{1} << 20;
constexpr std::int64_t max_devices = std::int64_t{1} << 20;

std::string required_text(ObjectReader& r, const std::string& key) {
  std::string s = r.string(key, std::nullopt);
  if (s.empty()) fail(r.at(key), "must not be empty");
  return s;
}

std::vector<Assumption> parse_assumptions(ObjectReader& parent, const std::string& key) {
  std::vector<Assumption> out;
  const json* list = parent.find(key);
  if (!list) return out;
  const std::string pointer = parent.at(key);
  if (!list->is_array()) fail(pointer, "must be an array of {\"setting\", \"value\", \"why\"}, got " + model::json_type_name(*list));
  for (std::size_t i = 0; i < list->size(); ++i) {
    ObjectReader a((*list)[i], model::pointer_join(pointer, i));
    Assumption x;
    x.setting = required_text(a, "setting");
    x.value = required_text(a, "value");
    x.why = required_text(a, "why");  // an assumption without its reason is not stated
    a.finish();
    out.push_back(std::move(x));
  }
  return out;
}

// A training case's setup: the cost model's train, parallel, attention, ffn, framework
// and precision scenario, and the pipeline.
void parse_training_setup(ObjectReader& r, PublishedCase& c) {
  const json& scenario = r.required("scenario");
  if (!scenario.is_object()) fail(r.at("scenario"), "must be an object with \"train\" and \"parallel\"");
  for (const auto& [key, value] : scenario.items())
    if (key != "train" && key != "parallel" && key != "attention" && key != "ffn" && key != "framework" &&
        key != "precision")
      fail(model::pointer_join(r.at("scenario"), key),
           "does not apply to a training case (give \"train\", \"parallel\" and optionally \"attention\", "
           "\"ffn\", \"framework\" and \"precision\")");
  c.scenario = simulator::parse_scenario(scenario, r.at("scenario"));
  if (const json* p = r.find("pipeline")) {
    c.pipeline = simulator::parse_pipeline_options(*p, r.at("pipeline"));
    if (c.pipeline->microbatches != c.scenario.train.grad_accum)
      fail(model::pointer_join(r.at("pipeline"), "microbatches"),
           fmt::format("is {} but the scenario's train.grad_accum is {}: both count the micro-batches of one step",
                       c.pipeline->microbatches, c.scenario.train.grad_accum));
  }
}

PublishedCase parse_case(ObjectReader r, const PublishedSource& s) {
  PublishedCase c;
  c.pointer = r.pointer();
  c.id = required_text(r, "id");
  c.metric = r.choice<PublishedMetric>("metric",
                                       {{"output_tokens_per_s_per_gpu", PublishedMetric::output_tokens_per_s_per_gpu},
                                        {"first_token_latency_s", PublishedMetric::first_token_latency_s},
                                        {"train_iteration_s", PublishedMetric::train_iteration_s},
                                        {"train_tflops_per_gpu", PublishedMetric::train_tflops_per_gpu}},
                                       std::nullopt);
  c.published = r.number("published", std::nullopt, 0);
  if (!(c.published > 0)) fail(r.at("published"), "must be > 0 (in " + std::string(unit_of(c.metric)) + ")");
  c.device = r.string("device", std::nullopt);
  if (!s.devices.count(c.device)) fail(r.at("device"), "\"" + c.device + "\" is not one of the file's \"devices\"");
  c.model = r.string("model", std::nullopt);
  if (!s.models.count(c.model)) fail(r.at("model"), "\"" + c.model + "\" is not one of the file's \"models\"");
  if (is_training(c.metric)) {
    parse_training_setup(r, c);
  } else {
    c.tp = r.integer("tp", 1, 1, max_devices);
    c.gpus_per_node = r.integer("gpus_per_node", 8, 1, max_devices);
    c.batch = r.integer("batch", std::nullopt, 1, max_batch);
    c.input = r.integer("input", std::nullopt, 1, max_tokens);
    if (c.metric == PublishedMetric::output_tokens_per_s_per_gpu) c.output = r.integer("output", std::nullopt, 1, max_tokens);
    // The scenario's precision (by tensor class), attention (the decode kernel an engine
    // version has) and ffn (how it launches gate and up) sections, where the case gives them.
    json scenario = json::object();
    for (const char* key : {"precision", "attention", "ffn"})
      if (const json* v = r.find(key)) scenario[key] = *v;
    if (!scenario.empty()) c.scenario = simulator::parse_scenario(scenario, r.pointer());
    if (r.has("tp_all_reduce")) {
      if (c.tp == 1) fail(r.at("tp_all_reduce"), "needs tp > 1: with one tensor-parallel rank nothing is all-reduced");
      c.scenario.parallel.tp_all_reduce = r.choice<simulator::TpAllReduce>(
          "tp_all_reduce", {{"auto", simulator::TpAllReduce::automatic}, {"library", simulator::TpAllReduce::library}},
          simulator::TpAllReduce::automatic);
    }
  }
  c.assumptions = parse_assumptions(r, "assumptions");
  r.finish();  // a key of the other kind of case ("output" on a first-token case) is refused here
  return c;
}

}  // namespace

PublishedSource parse_published(const json& j, const std::string& file, const std::string& base_dir) {
  PublishedSource s;
  s.file = file;
  ObjectReader root(j, "");
  {
    ObjectReader src = root.object("source");
    s.id = required_text(src, "id");
    // The id names the report's chart file (OUT/<id>.png): no path may hide in it.
    const bool plain = std::all_of(s.id.begin(), s.id.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.';
    });
    if (!plain || s.id.front() == '.')
      fail(src.at("id"), "must be letters, digits, '-', '_' and '.' and not start with '.' (it names the report's "
                         "chart file), got \"" + s.id + "\"");
    s.title = required_text(src, "title");
    s.citation = required_text(src, "citation");
    s.url = src.string("url", "");
    src.finish();
  }
  {
    const json& models = root.required("models");
    if (!models.is_object() || models.empty())
      fail("/models", "must be an object of model name -> model file (relative to this file)");
    for (const auto& [name, path] : models.items()) {
      const std::string pointer = model::pointer_join("/models", name);
      const std::string rel = model::read_string(path, pointer);
      const std::string full = (std::filesystem::path(base_dir) / rel).string();
      try {
        s.models.emplace(name, model::parse_config(model::read_json_file(full)));
      } catch (const model::ConfigError& e) {
        fail(pointer, "model " + full + ": " + e.what());
      }
    }
  }
  {
    const json& devices = root.required("devices");
    if (!devices.is_object() || devices.empty())
      fail("/devices", "must be an object of the source's device name -> hardware profile name");
    for (const auto& [name, profile] : devices.items()) {
      const std::string pointer = model::pointer_join("/devices", name);
      const std::string p = model::read_string(profile, pointer);
      if (p.empty()) fail(pointer, "must name a hardware profile");
      s.devices.emplace(name, p);
    }
  }
  s.assumptions = parse_assumptions(root, "assumptions");
  const json& cases = root.required("cases");
  if (!cases.is_array() || cases.empty()) fail("/cases", "must be a non-empty array of cases");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    s.cases.push_back(parse_case(ObjectReader(cases[i], model::pointer_join("/cases", i)), s));
    if (!ids.insert(s.cases.back().id).second)
      fail(model::pointer_join(s.cases.back().pointer, "id"), "\"" + s.cases.back().id + "\" is used by an earlier case");
  }
  root.finish();
  return s;
}

namespace {

// Runs the cost model (and the pipeline) on a scenario built from a case; a refusal is
// reported at the case, since the scenario is not what the user wrote.
template <class F>
auto at_case(const PublishedCase& c, F run) {
  try {
    return run();
  } catch (const model::ConfigError& e) {
    fail(c.pointer, std::string("hdlab cannot run this setup: ") + e.what());
  }
}

PublishedPrediction predict_inference(const PublishedCase& c, const model::Config& config,
                                      const simulator::HardwareProfile& hw) {
  simulator::Scenario s;
  s.parallel.tp = c.tp;
  s.parallel.gpus_per_node = c.gpus_per_node;
  s.parallel.tp_all_reduce = c.scenario.parallel.tp_all_reduce;
  s.prefill.tokens = c.input;
  s.prefill.batch = c.batch;
  s.decode.batch = c.batch;
  s.decode.context = c.input + c.output / 2;
  s.kv.context = c.input + c.output;
  s.precision = c.scenario.precision;
  s.attention = c.scenario.attention;
  s.ffn = c.scenario.ffn;
  // The FLOPs (for the efficiency ranking) from the cost model's phases; the times from
  // the serving engine's steps for a static batch, run whole as the source ran it (a
  // first-token case has no output: its requests stop at the first token).
  const simulator::Metrics m = at_case(c, [&] { return simulator::evaluate(config, hw, s); });
  const std::int64_t output = std::max<std::int64_t>(1, c.output);
  const simulator::StaticBatch r =
      at_case(c, [&] { return simulator::static_batch(config, hw, s, c.batch, c.input, output); });
  PublishedPrediction p;
  p.devices = c.tp;
  p.prefill_s = r.prefill_s;
  p.decode_step_s = output > 1 ? (r.total_s - r.prefill_s) / static_cast<double>(output - 1) : 0;
  p.decode_context = s.decode.context;
  p.kv_fitting_requests = r.fitting;
  if (c.metric == PublishedMetric::first_token_latency_s) {
    p.seconds = p.prefill_s;
    p.model_flops = m[simulator::Metric::prefill_flops];
    p.value = p.seconds;
  } else {
    p.seconds = r.total_s;
    p.model_flops = m[simulator::Metric::prefill_flops] + static_cast<double>(c.output - 1) * m[simulator::Metric::decode_flops];
    p.value = static_cast<double>(c.batch * c.output) / p.seconds / static_cast<double>(c.tp);
  }
  return p;
}

PublishedPrediction predict_training(const PublishedCase& c, const model::Config& config,
                                     const simulator::HardwareProfile& hw) {
  const simulator::Metrics m = at_case(c, [&] { return simulator::evaluate(config, hw, c.scenario); });
  const simulator::ParallelScenario& par = c.scenario.parallel;
  const double replicas = static_cast<double>(par.tp * par.cp * par.dp);
  PublishedPrediction p;
  // evaluate reports MFU, not the model FLOPs themselves: MFU x step x peak x devices.
  p.model_flops = m[simulator::Metric::train_mfu_fraction] * m[simulator::Metric::train_step_s] *
                  hw.matrix_peak_flop_per_s(simulator::tensor_precision(config.effective, c.scenario.precision).compute) *
                  replicas;
  p.devices = par.tp * par.cp * par.dp;
  p.seconds = m[simulator::Metric::train_step_s];
  p.train_memory_bytes = m[simulator::Metric::train_memory_bytes];
  p.device_memory_bytes = hw.memory_bytes();
  if (c.pipeline) {
    const simulator::PipelineResult r =
        at_case(c, [&] { return simulator::simulate_pipeline(config, hw, c.scenario, *c.pipeline); });
    p.devices *= c.pipeline->stages;
    p.seconds = r.metrics.step_s;
    p.bubble_fraction = r.metrics.bubble_fraction;
    p.train_memory_bytes = 0;
    for (const simulator::PipelineDevice& d : r.devices) p.train_memory_bytes = std::max(p.train_memory_bytes, d.memory_bytes());
  }
  p.value = c.metric == PublishedMetric::train_iteration_s
                ? p.seconds
                : p.model_flops / p.seconds / static_cast<double>(p.devices) / 1e12;
  return p;
}

}  // namespace

PublishedPrediction predict_published(const PublishedCase& c, const model::Config& config,
                                      const simulator::HardwareProfile& hw) {
  return is_training(c.metric) ? predict_training(c, config, hw) : predict_inference(c, config, hw);
}

namespace {

// The run's time as published: the metric read back into seconds (with the predicted
// run's FLOPs and devices where the metric is a rate of them).
double published_seconds(const PublishedCase& c, const PublishedPrediction& p) {
  switch (c.metric) {
    case PublishedMetric::first_token_latency_s:
    case PublishedMetric::train_iteration_s: return c.published;
    case PublishedMetric::output_tokens_per_s_per_gpu:
      return static_cast<double>(c.batch * c.output) / (c.published * static_cast<double>(c.tp));
    case PublishedMetric::train_tflops_per_gpu:
      return p.model_flops / (c.published * 1e12 * static_cast<double>(p.devices));
  }
  return 0;
}

json assumptions_json(const std::vector<Assumption>& list) {
  json out = json::array();
  for (const Assumption& a : list) out.push_back({{"setting", a.setting}, {"value", a.value}, {"why", a.why}});
  return out;
}

}  // namespace

PublishedReport predict_sources(std::vector<PublishedSource> sources, const ProfileFor& profiles) {
  PublishedReport r;
  for (const PublishedSource& s : sources) {
    std::map<PublishedMetric, std::vector<const PublishedResult*>> by_metric;
    const std::size_t first = r.results.size();
    for (const PublishedCase& c : s.cases) {
      const simulator::HardwareProfile& hw = profiles.at({s.id, c.device});
      PublishedResult x;
      x.source = s.id;
      x.spec = c;
      x.profile = hw.name;
      x.predicted = predict_published(c, s.models.at(c.model), hw);
      const model::DType compute = simulator::tensor_precision(s.models.at(c.model).effective, c.scenario.precision).compute;
      const double peak = hw.matrix_peak_flop_per_s(compute) * static_cast<double>(x.predicted.devices);
      x.predicted_mfu = x.predicted.model_flops / (x.predicted.seconds * peak);
      x.published_mfu = x.predicted.model_flops / (published_seconds(c, x.predicted) * peak);
      r.results.push_back(std::move(x));
    }
    for (std::size_t i = first; i < r.results.size(); ++i) by_metric[r.results[i].spec.metric].push_back(&r.results[i]);
    for (const auto& [metric, list] : by_metric) {
      std::vector<double> errors, pred, publ, pred_mfu, publ_mfu;
      for (const PublishedResult* x : list) {
        errors.push_back(x->error());
        pred.push_back(x->predicted.value);
        publ.push_back(x->spec.published);
        pred_mfu.push_back(x->predicted_mfu);
        publ_mfu.push_back(x->published_mfu);
      }
      r.groups.push_back({s.id, metric, error_stats(errors), spearman(pred, publ), spearman(pred_mfu, publ_mfu)});
    }
  }
  std::vector<double> all;
  for (const PublishedResult& x : r.results) all.push_back(x.error());
  r.all = error_stats(all);
  r.sources = std::move(sources);
  return r;
}

json to_json(const PublishedReport& r) {
  auto number = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  auto stats = [](const ErrorStats& e) {
    return json{{"cases", e.count}, {"median_abs_error", e.median_abs}, {"max_abs_error", e.max_abs},
                {"median_signed_error", e.median_signed}};
  };
  json out = {{"error_convention", "predicted / published - 1 of the value as published (rates: + is too fast; "
                                   "times: + is too slow)"},
              // No signed median over every case: a rate's + and a time's + point opposite ways.
              {"all", {{"cases", r.all.count}, {"median_abs_error", r.all.median_abs}, {"max_abs_error", r.all.max_abs}}},
              {"sources", json::array()}};
  for (const PublishedSource& s : r.sources) {
    json src = {{"id", s.id},           {"title", s.title},   {"citation", s.citation}, {"url", s.url},
                {"file", s.file},       {"assumptions", assumptions_json(s.assumptions)},
                {"metrics", json::array()}, {"cases", json::array()}};
    for (const PublishedGroup& g : r.groups)
      if (g.source == s.id) {
        json m = stats(g.error);
        m["metric"] = to_string(g.metric);
        m["unit"] = unit_of(g.metric);
        m["spearman_value"] = number(g.spearman_value);
        m["spearman_mfu"] = number(g.spearman_mfu);
        src["metrics"].push_back(std::move(m));
      }
    for (const PublishedResult& x : r.results) {
      if (x.source != s.id) continue;
      const PublishedCase& c = x.spec;
      json setup = {{"device", c.device}, {"model", c.model}};
      if (is_training(c.metric)) {
        const json scenario = simulator::to_json(c.scenario);
        setup["scenario"] = {{"train", scenario["train"]},
                             {"parallel", scenario["parallel"]},
                             {"attention", scenario["attention"]},
                             {"ffn", scenario["ffn"]},
                             {"framework", scenario["framework"]},
                             {"precision", scenario["precision"]}};
        if (c.pipeline) setup["pipeline"] = simulator::to_json(*c.pipeline);
      } else {
        setup.update({{"tp", c.tp},
                      {"gpus_per_node", c.gpus_per_node},
                      {"batch", c.batch},
                      {"input", c.input},
                      {"precision", simulator::to_json(c.scenario)["precision"]},
                      {"attention", simulator::to_json(c.scenario)["attention"]},
                      {"ffn", simulator::to_json(c.scenario)["ffn"]}});
        if (c.metric == PublishedMetric::output_tokens_per_s_per_gpu) setup["output"] = c.output;
        if (c.tp > 1) setup["tp_all_reduce"] = simulator::to_string(c.scenario.parallel.tp_all_reduce);
      }
      src["cases"].push_back({{"id", c.id},
                              {"metric", to_string(c.metric)},
                              {"unit", unit_of(c.metric)},
                              {"setup", setup},
                              {"assumptions", assumptions_json(c.assumptions)},
                              {"profile", x.profile},
                              {"published", c.published},
                              {"predicted", x.predicted.value},
                              {"error", x.error()},
                              {"published_mfu", x.published_mfu},
                              {"predicted_mfu", x.predicted_mfu},
                              {"prefill_s", x.predicted.prefill_s},
                              {"decode_step_s", x.predicted.decode_step_s},
                              {"decode_context_tokens", x.predicted.decode_context},
                              {"kv_fitting_requests", x.predicted.kv_fitting_requests},
                              {"train_memory_gb", x.predicted.train_memory_bytes / 1e9},
                              {"device_memory_gb", x.predicted.device_memory_bytes / 1e9},
                              {"predicted_s", x.predicted.seconds},
                              {"devices", x.predicted.devices},
                              {"pipeline_bubble_fraction", x.predicted.bubble_fraction},
                              {"model_flops", x.predicted.model_flops}});
    }
    out["sources"].push_back(std::move(src));
  }
  return out;
}

std::string to_csv(const PublishedReport& r) {
  // The setup of each case is in the JSON report; here what a spreadsheet compares.
  std::ostringstream out;
  out << "source,case,metric,unit,device,model,devices,profile,published,predicted,error,published_mfu,"
         "predicted_mfu,predicted_s\n";
  for (const PublishedResult& x : r.results) {
    const PublishedCase& c = x.spec;
    out << fmt::format("{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6f},{:.6f},{:.6f},{:.6g}\n", x.source, c.id,
                       to_string(c.metric), unit_of(c.metric), c.device, c.model, x.predicted.devices, x.profile,
                       c.published, x.predicted.value, x.error(), x.published_mfu, x.predicted_mfu, x.predicted.seconds);
  }
  return out.str();
}

}  // namespace hdlab::calibration
