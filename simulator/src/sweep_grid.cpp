// Grid points: building each point's parts from the base document and the axes, parsing
// each distinct part once, and evaluating the cost model.
//
// Speed: a point's model/design, hardware, scenario, pipeline and serve parts each depend
// only on the axes that touch them, so each is keyed by those axes' value indices and
// parsed once for every point sharing it (PartMemo, shared by all threads). The hot path
// per point is then the key arithmetic, three atomic loads, evaluate() and copying the
// stored columns, with no allocation once every part has been seen (a pipeline or serve
// part adds its simulation, which then dominates).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <mutex>
#include <tuple>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"
#include "hdlab/simulator/pipeline_io.hpp"
#include "sweep_internal.hpp"

namespace hdlab::simulator::sweep_detail {

// ---- JSON pointers -----------------------------------------------------------------

std::vector<std::string> parse_pointer(const std::string& text, const std::string& where) {
  std::vector<std::string> tokens;
  if (text.empty()) return tokens;
  if (text[0] != '/') model::fail(where, "\"" + text + "\" is not a JSON pointer: it must start with \"/\"");
  std::string token;
  for (std::size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '/') {
      tokens.push_back(token);
      token.clear();
    } else if (text[i] == '~') {
      const char next = i + 1 < text.size() ? text[i + 1] : '\0';
      if (next != '0' && next != '1')
        model::fail(where, "\"" + text + "\" is not a JSON pointer: \"~\" must be followed by 0 or 1");
      token += next == '0' ? '~' : '/';
      ++i;
    } else {
      token += text[i];
    }
  }
  return tokens;
}

std::string join_pointer(const std::vector<std::string>& tokens, std::size_t end) {
  std::string p;
  for (std::size_t i = 0; i < end; ++i) p = model::pointer_join(p, tokens[i]);
  return p;
}

namespace {

// An array index token: digits, no leading zero (RFC 6901); -1 otherwise.
long array_index(const std::string& token, std::size_t size) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return -1;
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc() || end != token.data() + token.size() || v >= size) return -1;
  return static_cast<long>(v);
}

template <class J>
J* child(J& node, const std::string& token) {
  if (node.is_object()) {
    auto it = node.find(token);
    return it == node.end() ? nullptr : &*it;
  }
  if (node.is_array()) {
    const long i = array_index(token, node.size());
    return i < 0 ? nullptr : &node[static_cast<std::size_t>(i)];
  }
  return nullptr;
}

}  // namespace

const json* resolve(const json& doc, const std::vector<std::string>& tokens, std::size_t begin, std::size_t end) {
  const json* cur = &doc;
  for (std::size_t i = begin; i < end && cur; ++i) cur = child(*cur, tokens[i]);
  return cur;
}

std::string set_at(json& doc, const std::vector<std::string>& tokens, std::size_t begin, const json& value,
                   bool create_objects) {
  json* cur = &doc;
  for (std::size_t i = begin; i < tokens.size(); ++i) {
    const bool leaf = i + 1 == tokens.size();
    if (cur->is_object() && (leaf || (create_objects && !cur->contains(tokens[i])))) {
      json& slot = (*cur)[tokens[i]];
      if (leaf) {
        slot = value;
        return "";
      }
      slot = json::object();
      cur = &slot;
      continue;
    }
    json* next = child(*cur, tokens[i]);
    if (!next) return join_pointer(tokens, i + 1);
    if (leaf) {
      *next = value;
      return "";
    }
    cur = next;
  }
  doc = value;  // no tokens: the whole document
  return "";
}

bool part_of_key(const std::string& key, SweepPart& part) {
  if (key == "model" || key == "backbone" || key == "design") part = SweepPart::config;
  else if (key == "hardware") part = SweepPart::hardware;
  else if (key == "scenario") part = SweepPart::scenario;
  else if (key == "pipeline") part = SweepPart::pipeline;
  else if (key == "serve") part = SweepPart::serve;
  else return false;
  return true;
}

const char* to_string(SweepPart p) {
  switch (p) {
    case SweepPart::config: return "model and design";
    case SweepPart::hardware: return "hardware";
    case SweepPart::scenario: return "scenario";
    case SweepPart::pipeline: return "pipeline";
    case SweepPart::serve: return "serve";
  }
  return "?";
}

// ---- parts -------------------------------------------------------------------------

std::string build_part(const SweepSpec& spec, SweepPart part, const std::vector<std::size_t>& values, json& out) {
  out = json::object();
  for (const auto& [key, v] : spec.base.items()) {
    SweepPart p;
    if (part_of_key(key, p) && p == part) out[key] = v;
  }
  for (std::size_t i = 0; i < spec.axes.size(); ++i) {
    const SweepAxis& a = spec.axes[i];
    if (a.part != part) continue;
    const std::string missing = set_at(out, a.tokens, 0, a.values[values[i]], a.enclosing_axis < 0);
    if (missing.empty()) continue;
    if (a.enclosing_axis < 0) return "axis " + a.name + ": cannot set " + a.pointer + " (" + missing + " is not an object)";
    const auto e = static_cast<std::size_t>(a.enclosing_axis);
    return "axis " + a.name + " (" + a.pointer + "): " + missing + " does not exist where " + spec.axes[e].name + " = " +
           spec.axes[e].labels[values[e]] + " (exclude these points)";
  }
  return "";
}

model::Config parse_config_part(const json& part) {
  const model::Backbone b = part.contains("model") ? model::load_backbone(part["model"], "/model")
                                                   : model::parse_backbone(part["backbone"], "/backbone");
  static const json baseline = json::object();
  const model::Design d = model::parse_design(part.contains("design") ? part["design"] : baseline, b, "/design");
  return model::make_config(b, d);
}

HardwareProfile parse_hardware_part(const json& part) { return parse_hardware_profile(part["hardware"], "/hardware"); }

Scenario parse_scenario_part(const json& part) { return parse_scenario(part["scenario"], "/scenario"); }

PipelineOptions parse_pipeline_part(const json& part) { return parse_pipeline_options(part["pipeline"], "/pipeline"); }

ServeSpec parse_serve_part(const json& part) { return parse_serve_spec(part["serve"], "/serve"); }

std::vector<std::string> point_columns(const SweepSpec& spec, const Scenario& scenario) {
  std::vector<std::string> cols = metric_columns(scenario);
  if (spec.base.contains("pipeline"))
    for (std::string& c : pipeline_metric_columns()) cols.push_back(std::move(c));
  if (spec.base.contains("serve"))
    for (std::string& c : serve_metric_columns()) cols.push_back(std::move(c));
  return cols;
}

// ---- evaluation ----------------------------------------------------------------------

namespace {

// Largest key spaces memoized (slots are 8 bytes; entries exist only for keys seen).
constexpr std::uint64_t memo_limit[sweep_part_count] = {1u << 16, 1u << 12, 1u << 20, 1u << 16, 1u << 16};

struct PartKey {
  std::vector<std::pair<std::size_t, std::uint64_t>> axes;  // (axis, stride)
  std::uint64_t count = 1;
  std::uint64_t of(const std::vector<std::size_t>& values) const {
    std::uint64_t k = 0;
    for (const auto& [axis, stride] : axes) k += values[axis] * stride;
    return k;
  }
};

template <class T, class Parse>
Parsed<T> parse_part(const SweepSpec& spec, SweepPart part, const std::vector<std::size_t>& values, Parse parse) {
  Parsed<T> p;
  json doc;
  p.error = build_part(spec, part, values, doc);
  if (!p.error.empty()) return p;
  try {
    p.value = parse(doc);
  } catch (const model::ConfigError& e) {
    p.error = e.what();
  } catch (const std::exception& e) {
    p.error = std::string("internal error: ") + e.what();
  }
  return p;
}

}  // namespace

struct PointEvaluator::Impl {
  const SweepSpec& spec;
  PartKey keys[sweep_part_count];
  std::unique_ptr<PartMemo<model::Config>> configs;
  std::unique_ptr<PartMemo<HardwareProfile>> hardware;
  std::unique_ptr<PartMemo<Scenario>> scenarios;
  std::unique_ptr<PartMemo<PipelineOptions>> pipelines;
  std::unique_ptr<PartMemo<ServeSpec>> serves;
  const bool has_pipeline, has_serve;

  explicit Impl(const SweepSpec& s)
      : spec(s), has_pipeline(s.base.contains("pipeline")), has_serve(s.base.contains("serve")) {
    for (std::size_t i = spec.axes.size(); i-- > 0;) {
      PartKey& k = keys[static_cast<int>(spec.axes[i].part)];
      k.axes.emplace_back(i, k.count);
      k.count *= spec.axes[i].size();
    }
    auto memo = [&](SweepPart p) { return keys[static_cast<int>(p)].count <= memo_limit[static_cast<int>(p)]; };
    if (memo(SweepPart::config)) configs = std::make_unique<PartMemo<model::Config>>(keys[0].count);
    if (memo(SweepPart::hardware)) hardware = std::make_unique<PartMemo<HardwareProfile>>(keys[1].count);
    if (memo(SweepPart::scenario)) scenarios = std::make_unique<PartMemo<Scenario>>(keys[2].count);
    if (memo(SweepPart::pipeline)) pipelines = std::make_unique<PartMemo<PipelineOptions>>(keys[3].count);
    if (memo(SweepPart::serve)) serves = std::make_unique<PartMemo<ServeSpec>>(keys[4].count);
  }

  Parsed<Scenario> make_scenario(const std::vector<std::size_t>& values) {
    Parsed<Scenario> p = parse_part<Scenario>(spec, SweepPart::scenario, values, parse_scenario_part);
    if (p.value) p.columns = column_map(p.value->serving);
    return p;
  }

  // Stored column -> index in metric_row() for a serving matrix, then pipeline_metric_row(),
  // then serve_metric_row() (-1: not produced). Only
  // the serving matrix changes the columns, and sweeps have few: map each one once.
  std::vector<int> column_map(const ServingScenario& serving) {
    std::lock_guard<std::mutex> lock(column_maps_mutex);
    for (const auto& [batches, inputs, map] : column_maps)
      if (batches == serving.batches && inputs == serving.input_lengths) return map;
    Scenario s;
    s.serving = serving;
    const std::vector<std::string> cols = point_columns(spec, s);
    std::vector<int> map;
    for (const std::string& name : spec.stored_columns) {
      const auto it = std::find(cols.begin(), cols.end(), name);
      map.push_back(it == cols.end() ? -1 : static_cast<int>(it - cols.begin()));
    }
    column_maps.emplace_back(serving.batches, serving.input_lengths, map);
    return map;
  }
  std::mutex column_maps_mutex;
  std::vector<std::tuple<std::vector<std::int64_t>, std::vector<std::int64_t>, std::vector<int>>> column_maps;

  // The memo when the key space fits, else the worker's one-entry cache.
  template <class T, class Make>
  const Parsed<T>& lookup(PartMemo<T>* memo, Worker& w, std::unique_ptr<const Parsed<T>>& last, SweepPart part,
                          Make make) const {
    const int p = static_cast<int>(part);
    const std::uint64_t key = keys[p].of(w.values);
    if (memo) return memo->get(key, make);
    if (!last || w.last_key[p] != key) {
      last = std::make_unique<const Parsed<T>>(make());
      w.last_key[p] = key;
    }
    return *last;
  }

  // The training step's pipeline schedule at this point, into w.pipeline_row.
  bool run_pipeline(Worker& w, const model::Config& config, const HardwareProfile& hw, const Scenario& scenario,
                    std::string& error) {
    const auto& options = lookup(pipelines.get(), w, w.last_pipeline, SweepPart::pipeline, [&] {
      return parse_part<PipelineOptions>(spec, SweepPart::pipeline, w.values, parse_pipeline_part);
    });
    if (!options.value) return error = options.error, false;
    try {
      pipeline_metric_row(simulate_pipeline(config, hw, scenario, *options.value, "/pipeline").metrics, w.pipeline_row);
    } catch (const model::ConfigError& e) {
      return error = e.what(), false;
    } catch (const std::exception& e) {
      return error = std::string("internal error: ") + e.what(), false;
    }
    return true;
  }

  // The serving simulation at this point, into w.serve_row.
  bool run_serve(Worker& w, const model::Config& config, const HardwareProfile& hw, const Scenario& scenario,
                 std::string& error) {
    const auto& serve = lookup(serves.get(), w, w.last_serve, SweepPart::serve, [&] {
      return parse_part<ServeSpec>(spec, SweepPart::serve, w.values, parse_serve_part);
    });
    if (!serve.value) return error = serve.error, false;
    return serve_point(spec, config, hw, scenario, *serve.value, w.serve_row, error);
  }
};

PointEvaluator::PointEvaluator(const SweepSpec& spec) : impl_(std::make_unique<Impl>(spec)) {}
PointEvaluator::~PointEvaluator() = default;

bool PointEvaluator::evaluate(Worker& w, std::uint64_t point, double* out, std::string& error) {
  Impl& im = *impl_;
  im.spec.point_values(point, w.values);
  const auto& config = im.lookup(im.configs.get(), w, w.last_config, SweepPart::config, [&] {
    return parse_part<model::Config>(im.spec, SweepPart::config, w.values, parse_config_part);
  });
  if (!config.value) return error = config.error, false;
  const auto& hw = im.lookup(im.hardware.get(), w, w.last_hardware, SweepPart::hardware, [&] {
    return parse_part<HardwareProfile>(im.spec, SweepPart::hardware, w.values, parse_hardware_part);
  });
  if (!hw.value) return error = hw.error, false;
  const auto& scenario = im.lookup(im.scenarios.get(), w, w.last_scenario, SweepPart::scenario,
                                   [&] { return im.make_scenario(w.values); });
  if (!scenario.value) return error = scenario.error, false;
  try {
    simulator::evaluate(*config.value, *hw.value, *scenario.value, w.metrics);
  } catch (const model::ConfigError& e) {
    return error = e.what(), false;
  } catch (const std::exception& e) {
    return error = std::string("internal error: ") + e.what(), false;
  }
  metric_row(w.metrics, w.row);
  if (im.has_pipeline && !im.run_pipeline(w, *config.value, *hw.value, *scenario.value, error)) return false;
  if (im.has_serve && !im.run_serve(w, *config.value, *hw.value, *scenario.value, error)) return false;
  // Columns past metric_row() are the pipeline's, then the serve simulation's (see column_map).
  const std::size_t metrics = w.row.size(), pipeline = im.has_pipeline ? w.pipeline_row.size() : 0;
  for (std::size_t i = 0; i < scenario.columns.size(); ++i) {
    const int c = scenario.columns[i];
    const auto at = static_cast<std::size_t>(c);
    out[i] = c < 0                       ? std::numeric_limits<double>::quiet_NaN()
             : at < metrics              ? w.row[at]
             : at < metrics + pipeline   ? w.pipeline_row[at - metrics]
                                         : w.serve_row[at - metrics - pipeline];
  }
  return true;
}

}  // namespace hdlab::simulator::sweep_detail
