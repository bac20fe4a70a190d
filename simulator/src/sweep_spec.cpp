// Sweep documents, part 1: the base document and the axes. Everything a sweep file can
// get wrong fails here, at load, naming its pointer in the sweep file, rather than as a
// million failed rows later. Columns, exclusions, derived columns and the table: in
// sweep_columns.cpp.
#include <filesystem>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/hf_import.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/sweep.hpp"
#include "sweep_internal.hpp"

namespace hdlab::simulator {

using model::fail;
using model::json_type_name;
using model::ObjectReader;
using model::pointer_join;
using nlohmann::json;
using namespace sweep_detail;

namespace sweep_detail {
// sweep_columns.cpp
void parse_outputs(ObjectReader& r, SweepSpec& spec);
}  // namespace sweep_detail

namespace {

constexpr std::uint64_t max_points = 1'000'000'000;

json read_referenced_file(const std::string& base_dir, const std::string& path, const std::string& where) {
  namespace fs = std::filesystem;
  const fs::path p = fs::path(path).is_absolute() ? fs::path(path) : fs::path(base_dir) / path;
  try {
    return model::read_json_file(p.lexically_normal().string());
  } catch (const model::ConfigError& e) {
    fail(where, e.what());
  }
}

json design_document(const json& j, const std::string& where) {
  if (j.is_object()) return j;
  if (!j.is_string()) fail(where, "must be a design object or a shorthand such as \"hd:n=4\", got " + json_type_name(j));
  try {
    return model::design_json_from_shorthand(j.get<std::string>());
  } catch (const model::ConfigError& e) {
    fail(where, e.what());
  }
}

// {"model" | "backbone", "design", "hardware", "scenario"[, "pipeline"][, "serve"]} with
// files read (a serve trace is read by load_serve_traces, after the axes).
json parse_base(ObjectReader& r, const std::string& base_dir) {
  json base = json::object();
  const json* model_doc = r.find("model");
  const json* backbone = r.find("backbone");
  if (model_doc && backbone) fail(r.at("backbone"), "give \"model\" or \"backbone\", not both");
  if (model_doc) {
    if (model_doc->is_string())
      base["model"] = read_referenced_file(base_dir, model_doc->get<std::string>(), r.at("model"));
    else if (model_doc->is_object())
      base["model"] = *model_doc;
    else
      fail(r.at("model"), "must be a model file path or a model document, got " + json_type_name(*model_doc));
  } else if (backbone) {
    if (!backbone->is_object()) fail(r.at("backbone"), "must be an object, got " + json_type_name(*backbone));
    base["backbone"] = *backbone;
  } else {
    fail(r.at("model"), "is required: a model file (hdlab config, bare backbone or HF config.json) or an inline \"backbone\"");
  }
  if (const json* d = r.find("design")) {
    base["design"] = design_document(*d, r.at("design"));
  } else if (model_doc && base["model"].contains("design") && !model::looks_like_hf_config(base["model"])) {
    base["design"] = design_document(base["model"]["design"], r.at("model") + "/design");  // as `hdlab check` does
  } else {
    base["design"] = json::object();  // baseline
  }
  const json& hw = r.required("hardware");
  if (hw.is_string()) base["hardware"] = read_referenced_file(base_dir, hw.get<std::string>(), r.at("hardware"));
  else if (hw.is_object()) base["hardware"] = hw;
  else fail(r.at("hardware"), "must be a hardware profile path or a profile object, got " + json_type_name(hw));
  const json* scenario = r.find("scenario");
  if (scenario && !scenario->is_object())
    fail(r.at("scenario"), "must be an object, got " + json_type_name(*scenario));
  base["scenario"] = scenario ? *scenario : json::object();
  if (const json* pipeline = r.find("pipeline")) {
    if (!pipeline->is_object()) fail(r.at("pipeline"), "must be an object, got " + json_type_name(*pipeline));
    base["pipeline"] = *pipeline;
  }
  if (const json* serve = r.find("serve")) {
    if (!serve->is_object()) fail(r.at("serve"), "must be an object, got " + json_type_name(*serve));
    base["serve"] = *serve;
  }
  return base;
}

std::string default_axis_name(const std::vector<std::string>& tokens) {
  const std::size_t n = tokens.size();
  return n >= 3 ? tokens[n - 2] + "_" + tokens[n - 1] : tokens.back();
}

// Values as the grid uses them: files read, design shorthands expanded. `label` gets
// the default label: the file path or shorthand as written, an object's "name", or the
// value itself.
json axis_value(const SweepAxis& a, const json& v, const std::string& where, const std::string& base_dir,
                std::string& label) {
  const bool whole_part = a.tokens.size() == 1;
  if (v.is_string()) label = v.get<std::string>();
  else if (v.is_object() && v.contains("name") && v["name"].is_string()) label = v["name"].get<std::string>();
  else label = v.dump();
  if (whole_part && v.is_string() && (a.tokens[0] == "model" || a.tokens[0] == "hardware"))
    return read_referenced_file(base_dir, v.get<std::string>(), where);
  if (whole_part && a.tokens[0] == "design") return design_document(v, where);
  return v;
}

void check_name(const std::string& name, const std::string& where) {
  if (name.empty()) fail(where, "must not be empty");
  for (char c : name)
    if (c == ',' || c == '"' || c == '\n' || c == '\r' || c == '\t')
      fail(where, "\"" + name + "\" holds a character a CSV header cannot (comma, quote, tab, newline)");
}

SweepAxis parse_axis(ObjectReader r, const std::string& base_dir) {
  SweepAxis a;
  a.pointer = r.string("pointer", std::nullopt);
  a.tokens = parse_pointer(a.pointer, r.at("pointer"));
  if (a.tokens.empty()) fail(r.at("pointer"), "must name a field of the base document, not the whole document");
  if (!part_of_key(a.tokens[0], a.part))
    fail(r.at("pointer"), a.pointer +
                              " is outside the base document: pointers start with /model, /backbone, /design, "
                              "/hardware, /scenario, /pipeline or /serve");
  const json& values = r.required("values");
  if (!values.is_array()) fail(r.at("values"), "must be a list of values, got " + json_type_name(values));
  if (values.empty()) fail(r.at("values"), "is empty: an axis needs at least one value");
  std::vector<std::string> default_labels;
  for (std::size_t k = 0; k < values.size(); ++k) {
    std::string label;
    a.values.push_back(axis_value(a, values[k], pointer_join(r.at("values"), k), base_dir, label));
    default_labels.push_back(label);
  }
  if (const json* labels = r.find("labels")) {
    if (!labels->is_array() || labels->size() != values.size())
      fail(r.at("labels"), "must be a list of " + std::to_string(values.size()) + " strings, one per value");
    for (std::size_t k = 0; k < labels->size(); ++k)
      a.labels.push_back(model::read_string((*labels)[k], pointer_join(r.at("labels"), k)));
  } else {
    a.labels = default_labels;
  }
  const std::string where = r.has("labels") ? r.at("labels") : r.at("values");
  for (std::size_t k = 0; k < a.labels.size(); ++k)
    for (std::size_t m = 0; m < k; ++m)
      if (a.labels[k] == a.labels[m])
        fail(pointer_join(where, k), "\"" + a.labels[k] + "\" repeats " + pointer_join(where, m) +
                                         ": each value needs its own label (give \"labels\")");
  a.name = r.string("name", default_axis_name(a.tokens));
  check_name(a.name, r.has("name") ? r.at("name") : r.at("pointer"));
  r.finish();
  return a;
}

bool same_kind(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return true;
  return a.type() == b.type();
}

std::string kind_phrase(const json& j) {
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "true or false";
  if (j.is_object()) return "an object";
  if (j.is_array()) return "a list";
  return json_type_name(j);
}

// Every value has the JSON type of the field it replaces (null on either side: any).
void check_value_types(const SweepAxis& a, const json& existing, const std::string& axis_at, const std::string& seen_in) {
  if (existing.is_null()) return;
  for (std::size_t k = 0; k < a.values.size(); ++k) {
    const json& v = a.values[k];
    if (v.is_null() || same_kind(v, existing)) continue;
    fail(pointer_join(axis_at + "/values", k), "must be " + kind_phrase(existing) + " like " + a.pointer + " in " +
                                                   seen_in + ", got " + json_type_name(v));
  }
}

bool is_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a.size() < b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// Returns true when the axis writes a key that exists nowhere yet (checked by a dry run).
bool check_axis_pointer(SweepSpec& spec, std::size_t i) {
  SweepAxis& a = spec.axes[i];
  const std::string at = "/axes/" + std::to_string(i);
  for (std::size_t j = 0; j < i; ++j) {
    const SweepAxis& e = spec.axes[j];
    const std::string other = "/axes/" + std::to_string(j);
    if (e.tokens == a.tokens) fail(at + "/pointer", a.pointer + " is already swept by " + other);
    if (is_prefix(a.tokens, e.tokens))
      fail(at + "/pointer", a.pointer + " encloses " + e.pointer + " swept by the earlier " + other +
                                " and would overwrite it: list the enclosing axis first");
    if (is_prefix(e.tokens, a.tokens)) a.enclosing_axis = static_cast<int>(j);  // the last one is the closest
  }
  const std::size_t n = a.tokens.size();
  if (a.enclosing_axis < 0) {
    if (!spec.base.contains(a.tokens[0])) {
      std::string keys;
      for (const auto& [k, v] : spec.base.items()) keys += (keys.empty() ? "/" : ", /") + k;
      fail(at + "/pointer", a.pointer + " does not exist in the base document (its parts: " + keys + ")");
    }
    if (const json* leaf = resolve(spec.base, a.tokens, 0, n)) {
      check_value_types(a, *leaf, at, "the base document");
      return false;
    }
    std::size_t d = n - 1;
    while (!resolve(spec.base, a.tokens, 0, d)) --d;
    const json* ancestor = resolve(spec.base, a.tokens, 0, d);
    if (!ancestor->is_object())
      fail(at + "/pointer", a.pointer + " does not exist in the base document, and " + join_pointer(a.tokens, d) +
                                " is " + kind_phrase(*ancestor) + ", which cannot hold it");
    return true;
  }
  const SweepAxis& e = spec.axes[static_cast<std::size_t>(a.enclosing_axis)];
  const std::size_t from = e.tokens.size();
  bool parent_somewhere = false, leaf_everywhere = true;
  for (std::size_t k = 0; k < e.values.size(); ++k) {
    const json* parent = resolve(e.values[k], a.tokens, from, n - 1);
    const json* leaf = resolve(e.values[k], a.tokens, from, n);
    parent_somewhere = parent_somewhere || (parent && (parent->is_object() || leaf));
    leaf_everywhere = leaf_everywhere && leaf;
    if (leaf) check_value_types(a, *leaf, at, e.pointer + " = " + e.labels[k]);
  }
  if (!parent_somewhere)
    fail(at + "/pointer", a.pointer + " does not exist in any value of /axes/" +
                              std::to_string(a.enclosing_axis) + " (" + e.name + "), which sets " + e.pointer);
  return !leaf_everywhere;
}

// Is the pointer `inner` (an error's place) the axis pointer, inside it, or (for a key
// the axis creates) one of its ancestors?
enum class Within { no, at_or_below, above };
Within pointer_within(const std::string& inner, const std::vector<std::string>& axis_tokens) {
  std::vector<std::string> t;
  try {
    t = parse_pointer(inner, "");
  } catch (const model::ConfigError&) {
    return Within::no;
  }
  if (t == axis_tokens || is_prefix(axis_tokens, t)) return Within::at_or_below;
  return is_prefix(t, axis_tokens) ? Within::above : Within::no;
}

// A value that is wrong whatever the other axes say: the wrong JSON type, a name
// outside a fixed set, or a key the parser does not know.
bool value_error(const std::string& reason) {
  for (const char* start : {"must be a ", "must be an ", "must be true or false", "must be one of", "unknown key"})
    if (reason.rfind(start, 0) == 0) return true;
  return false;
}

void parse_part_doc(SweepPart part, const json& doc) {
  if (part == SweepPart::config) parse_config_part(doc);
  else if (part == SweepPart::hardware) parse_hardware_part(doc);
  else if (part == SweepPart::scenario) parse_scenario_part(doc);
  else if (part == SweepPart::pipeline) parse_pipeline_part(doc);
  else parse_serve_part(doc);
}

// The axis a value error at `place` belongs to: of the axes of `part`, the one whose
// pointer is the most specific at or above `place` (an axis setting /design/hd/nn owns
// an error there, not the axis setting the whole /design around it); with `created`,
// also an axis whose created key the error sits above. -1: none.
int owning_axis(const SweepSpec& spec, SweepPart part, const std::string& place, const std::vector<bool>& creates,
                bool created) {
  int owner = -1;
  for (std::size_t j = 0; j < spec.axes.size(); ++j) {
    const SweepAxis& a = spec.axes[j];
    if (a.part != part) continue;
    const Within w = pointer_within(place, a.tokens);
    const bool owns = w == Within::at_or_below || (created && creates[j] && w == Within::above);
    if (owns && (owner < 0 || a.tokens.size() > spec.axes[static_cast<std::size_t>(owner)].tokens.size()))
      owner = static_cast<int>(j);
  }
  return owner;
}

// Parses each axis value once, every other axis at its first value: a value of the wrong
// type or with an unknown key, and a key an axis creates that the part's parser does not
// know ("/design/hd/nn"), are errors of the sweep file, not of every row. Any other
// failure is left to the rows, where it may depend on the other axes.
void dry_run_values(const SweepSpec& spec, const std::vector<bool>& creates) {
  std::vector<std::size_t> values(spec.axes.size(), 0);
  for (std::size_t i = 0; i < spec.axes.size(); ++i) {
    const SweepAxis& a = spec.axes[i];
    for (std::size_t k = 0; k < a.size(); ++k) {
      values[i] = k;
      json doc;
      if (!build_part(spec, a.part, values, doc).empty()) continue;
      try {
        parse_part_doc(a.part, doc);
      } catch (const model::ConfigError& e) {
        if (!value_error(e.reason())) continue;
        const bool unknown_key = e.reason().rfind("unknown key", 0) == 0;
        const int owner = owning_axis(spec, a.part, e.pointer(), creates, unknown_key);
        if (owner < 0) continue;
        const auto j = static_cast<std::size_t>(owner);
        const std::string at = "/axes/" + std::to_string(j);
        if (creates[j] && unknown_key)
          fail(at + "/pointer", spec.axes[j].pointer + " does not exist in the base document and is not a field there (" +
                                    std::string(e.what()) + ")");
        fail(pointer_join(at + "/values", values[j]), e.what());
      } catch (const std::exception&) {
        // Left to the rows.
      }
    }
    values[i] = 0;
  }
}

std::uint64_t count_points(const std::vector<SweepAxis>& axes) {
  std::uint64_t n = 1;
  for (const SweepAxis& a : axes) {
    if (n > max_points / a.size())
      fail("/axes", "the grid has more than " + std::to_string(max_points) + " points; split the sweep");
    n *= a.size();
  }
  return n;
}

}  // namespace

SweepSpec parse_sweep(const json& doc, const std::string& base_dir) {
  ObjectReader r(doc, "");
  SweepSpec spec;
  spec.name = r.string("name", "");
  spec.description = r.string("description", "");
  spec.base = parse_base(r, base_dir);
  if (const json* axes = r.find("axes")) {
    if (!axes->is_array()) fail(r.at("axes"), "must be a list of axes, got " + json_type_name(*axes));
    for (std::size_t i = 0; i < axes->size(); ++i)
      spec.axes.push_back(parse_axis(ObjectReader((*axes)[i], pointer_join(r.at("axes"), i)), base_dir));
  }
  std::vector<bool> creates;
  for (std::size_t i = 0; i < spec.axes.size(); ++i) {
    creates.push_back(check_axis_pointer(spec, i));
    for (std::size_t j = 0; j < i; ++j)
      if (spec.axes[j].name == spec.axes[i].name)
        fail("/axes/" + std::to_string(i) + "/name",
             "\"" + spec.axes[i].name + "\" is already the name of /axes/" + std::to_string(j) + " (give \"name\")");
  }
  spec.point_count = count_points(spec.axes);
  dry_run_values(spec, creates);
  load_serve_traces(spec, base_dir);
  parse_outputs(r, spec);
  r.finish();

  json identity = {{"format", 1}, {"base", spec.base}, {"stored_columns", spec.stored_columns}};
  // Rows depend on what a trace holds, not only on its path.
  for (const SweepServeTrace& t : spec.serve_traces)
    identity["serve_traces"].push_back({{"path", t.path}, {"fnv1a64", hex64(fnv1a64(t.text))}});
  json& axes = identity["axes"] = json::array();
  for (const SweepAxis& a : spec.axes) axes.push_back({{"pointer", a.pointer}, {"values", a.values}});
  spec.identity = fnv1a64(identity.dump());
  return spec;
}

SweepSpec load_sweep(const std::string& path) {
  namespace fs = std::filesystem;
  const json doc = model::read_json_file(path);
  const fs::path p(path);
  SweepSpec spec = parse_sweep(doc, p.has_parent_path() ? p.parent_path().string() : ".");
  if (spec.name.empty()) spec.name = p.stem().string();
  return spec;
}

json SweepAxis::cell(std::size_t value) const {
  const json& v = values[value];
  if ((v.is_number() || v.is_boolean()) && labels[value] == v.dump()) return v;
  return labels[value];
}

void SweepSpec::point_values(std::uint64_t point, std::vector<std::size_t>& out) const {
  out.resize(axes.size());
  for (std::size_t i = axes.size(); i-- > 0;) {
    const std::uint64_t size = axes[i].size();
    out[i] = static_cast<std::size_t>(point % size);
    point /= size;
  }
}

std::uint64_t SweepSpec::point_index(const std::vector<std::size_t>& values) const {
  std::uint64_t p = 0;
  for (std::size_t i = 0; i < axes.size(); ++i) p = p * axes[i].size() + values[i];
  return p;
}

bool SweepSpec::excluded(const std::vector<std::size_t>& values) const {
  for (const SweepCondition& c : exclude) {
    bool all = true;
    for (const auto& [axis, allowed] : c.terms) all = all && allowed[values[static_cast<std::size_t>(axis)]];
    if (all) return true;
  }
  return false;
}

std::string SweepSpec::describe_point(std::uint64_t point) const {
  std::vector<std::size_t> v;
  point_values(point, v);
  std::string s;
  for (std::size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + axes[i].name + "=" + axes[i].labels[v[i]];
  return s.empty() ? "the base document" : s;
}

}  // namespace hdlab::simulator
