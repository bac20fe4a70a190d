// JSON in and out for designs: each method's block, growth, and their checks against
// the (grown) backbone.
#include "hdlab/model/config_io.hpp"

#include "hdlab/model/json_reader.hpp"
#include <map>
#include <optional>

namespace hdlab::model {

namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

// Keys a design leaves out: pointer -> the value taken (Design::defaults).
using Defaults = std::map<std::string, std::string>;

void note_default(Defaults& defaults, const ObjectReader& r, const char* key, const std::string& value) {
  if (!r.has(key)) defaults[r.at(key)] = value + " (hdlab's default)";
}

// ---- design --------------------------------------------------------------------------

HdLayerKind hd_kind_of(const Json& v, const std::string& ptr) {
  std::string s = read_string(v, ptr);
  if (s == "full") return HdLayerKind::full;
  if (s == "local") return HdLayerKind::local;
  if (s == "intra") return HdLayerKind::intra;
  fail(ptr, "must be one of full, local, intra, got \"" + s + "\"");
}

// Per-layer kinds: one name for all layers, a list per layer, or a rule
// {"sliding": kind for the backbone's sliding layers, "full_every": k (layers with
//  (l+1) % k == 0), "full_layers": [indices], "rest": kind}. Explicit full choices win
// over the sliding mapping, which wins over "rest".
std::vector<HdLayerKind> parse_hd_layers(const Json* layers, const std::string& ptr, const Backbone& b,
                                         Defaults& defaults) {
  const auto L = static_cast<std::size_t>(b.num_layers);
  std::vector<HdLayerKind> kinds;
  if (layers && layers->is_string()) return std::vector<HdLayerKind>(L, hd_kind_of(*layers, ptr));
  if (layers && layers->is_array()) {
    if (layers->size() != L)
      fail(ptr, "has " + num(static_cast<std::int64_t>(layers->size())) + " entries but the backbone has " +
                    num(b.num_layers) + " layers");
    for (std::size_t i = 0; i < L; ++i) kinds.push_back(hd_kind_of((*layers)[i], pointer_join(ptr, i)));
    return kinds;
  }
  if (layers && !layers->is_object())
    fail(ptr, "must be a kind name, a list per layer or a rule object, got " + json_type_name(*layers));
  if (!layers)
    defaults[ptr] = std::string(b.num_sliding_layers() > 0 ? "local in the backbone's sliding layers, full in the others"
                                                            : "full in every layer") +
                    " (hdlab's default)";
  const Json empty = Json::object();
  ObjectReader r(layers ? *layers : empty, ptr);
  if (layers) {
    if (b.num_sliding_layers() > 0) note_default(defaults, r, "sliding", "local for the backbone's sliding layers");
    note_default(defaults, r, "rest", "intra");
  }
  auto kind_at = [&](const char* key, HdLayerKind dflt) {
    const Json* v = r.find(key);
    return v ? hd_kind_of(*v, r.at(key)) : dflt;
  };
  const HdLayerKind sliding = kind_at("sliding", HdLayerKind::local);
  const HdLayerKind rest = kind_at("rest", layers ? HdLayerKind::intra : HdLayerKind::full);
  const std::int64_t every = r.integer("full_every", 0, 0, b.num_layers);
  std::vector<bool> full(L, false);
  if (const Json* fl = r.find("full_layers")) {
    if (!fl->is_array()) fail(r.at("full_layers"), "must be a list of layer indices");
    for (std::size_t i = 0; i < fl->size(); ++i) {
      const std::string at = pointer_join(r.at("full_layers"), i);
      const auto l = static_cast<std::size_t>(read_integer((*fl)[i], at, 0, b.num_layers - 1));
      // A repeated index is a slip (another layer was probably meant).
      if (full[l]) fail(at, "layer " + num(static_cast<std::int64_t>(l)) + " is already listed");
      full[l] = true;
    }
  }
  r.finish();
  for (std::size_t l = 0; l < L; ++l) {
    if (full[l] || (every > 0 && (l + 1) % static_cast<std::size_t>(every) == 0)) kinds.push_back(HdLayerKind::full);
    else if (b.layers[l].kind == AttentionKind::sliding) kinds.push_back(sliding);
    else kinds.push_back(rest);
  }
  return kinds;
}

HdDesign parse_hd(ObjectReader r, const Backbone& b, Defaults& defaults) {
  HdDesign hd;
  hd.n = r.integer("n", std::nullopt, 1, Limits::max_streams);
  hd.layer_kinds = parse_hd_layers(r.find("layers"), r.at("layers"), b, defaults);
  bool any_local = false;
  for (auto k : hd.layer_kinds) any_local = any_local || k == HdLayerKind::local;
  std::int64_t backbone_window = 0;
  for (const auto& l : b.layers)
    if (l.kind == AttentionKind::sliding) backbone_window = l.window;
  if (const Json* w = r.find("window")) {
    hd.window = read_integer(*w, r.at("window"), 1, Limits::max_window);
    if (!any_local) fail(r.at("window"), "is set but no layer is local");
  } else if (any_local) {
    if (backbone_window == 0)
      fail(r.at("window"), "is required when a layer is local (the backbone has no sliding window to derive it from)");
    // The backbone's window in tokens covers n times as many expanded positions.
    hd.window = backbone_window * hd.n;
    defaults[r.at("window")] = num(hd.window) + " expanded positions = the backbone's sliding window (" +
                               num(backbone_window) + " tokens) x n (" + num(hd.n) + ")";
  }
  hd.rope = r.choice<RopeConvention>(
      "rope", {{"expanded", RopeConvention::expanded}, {"token_index", RopeConvention::token_index}},
      RopeConvention::expanded);
  note_default(defaults, r, "rope", "expanded");
  hd.kv_mirror = r.boolean("kv_mirror", b.kv_mirror_layers > 0);
  note_default(defaults, r, "kv_mirror",
               b.kv_mirror_layers > 0 ? "true (the backbone has KV-mirror layers)" : "false (the backbone has none)");
  if (hd.kv_mirror && b.kv_mirror_layers == 0)
    fail(r.at("kv_mirror"), "the backbone has no KV-mirror layers (kv_mirror_layers = 0)");
  hd.rope_theta = r.number("rope_theta", 0.0, 0.0, 1e30);
  if (hd.rope_theta == 0.0) hd.rope_theta = b.rope_theta;
  note_default(defaults, r, "rope_theta", "the backbone's " + Json(b.rope_theta).dump());
  r.finish();
  return hd;
}

PhdDesign parse_phd(ObjectReader r, Defaults& defaults) {
  note_default(defaults, r, "variant", "plain");
  PhdDesign p;
  p.K = r.integer("K", std::nullopt, 1, Limits::max_copies);
  p.variant = r.choice<PhdVariant>(
      "variant", {{"plain", PhdVariant::plain}, {"swa", PhdVariant::swa}, {"cswa", PhdVariant::cswa}}, PhdVariant::plain);
  const bool windowed = p.variant != PhdVariant::plain;
  if (windowed) p.W = r.integer("W", std::nullopt, 1, Limits::max_window);
  else if (r.find("W")) fail(r.at("W"), "is only used by the swa and cswa variants");
  if (p.variant == PhdVariant::cswa) p.C = r.integer("C", std::nullopt, 1, Limits::max_window);
  else if (r.find("C")) fail(r.at("C"), "is only used by the cswa variant");
  r.finish();
  return p;
}

VwnDesign parse_vwn(ObjectReader r, const Backbone& b, Defaults& defaults) {
  note_default(defaults, r, "dynamic", "true");
  note_default(defaults, r, "embedding", "full");
  note_default(defaults, r, "mtp", "false");
  VwnDesign v;
  v.m = r.integer("m", std::nullopt, 1, Limits::max_width_slots);
  v.n = r.integer("n", std::nullopt, 1, Limits::max_width_slots);
  if (v.n < v.m) fail(r.at("n"), "must be >= m (" + num(v.m) + "): the virtual width D*n/m cannot be narrower than D");
  if (b.hidden % v.m != 0)
    fail(r.at("m"), "hidden size " + num(b.hidden) + " is not divisible by m = " + num(v.m));
  v.dynamic = r.boolean("dynamic", true);
  v.embedding = r.choice<VwnEmbedding>("embedding", {{"full", VwnEmbedding::full}, {"projected", VwnEmbedding::projected}},
                                       VwnEmbedding::full);
  v.mtp = r.boolean("mtp", false);
  if (v.embedding == VwnEmbedding::full && b.positions == PositionKind::learned)
    fail(r.at("embedding"), "\"full\" (an over-width table) has no place for the backbone's learned D-wide position "
                            "table; use \"projected\"");
  r.finish();
  return v;
}

LoopedDesign parse_looped(ObjectReader r, const Backbone& b, Defaults& defaults) {
  note_default(defaults, r, "prelude", "0");
  note_default(defaults, r, "coda", "0");
  note_default(defaults, r, "kv", "per_iteration");
  note_default(defaults, r, "input_injection", "false");
  LoopedDesign l;
  l.prelude = r.integer("prelude", 0, 0, b.num_layers);
  l.coda = r.integer("coda", 0, 0, b.num_layers);
  l.recurrent = r.integer("recurrent", b.num_layers - l.prelude - l.coda, 1, b.num_layers);
  note_default(defaults, r, "recurrent", num(l.recurrent) + ": the layers between prelude and coda");
  if (l.prelude + l.recurrent + l.coda != b.num_layers)
    fail(r.pointer(), "prelude + recurrent + coda = " + num(l.prelude + l.recurrent + l.coda) +
                          " but the backbone has " + num(b.num_layers) + " layers");
  l.iterations = r.integer("iterations", std::nullopt, 1, Limits::max_iterations);
  l.kv = r.choice<LoopKv>("kv", {{"per_iteration", LoopKv::per_iteration}, {"shared", LoopKv::shared}},
                          LoopKv::per_iteration);
  l.input_injection = r.boolean("input_injection", false);
  if (b.kv_mirror_layers > 0)
    fail(r.pointer(), "looping a backbone with KV-mirror layers is not modelled (kv_mirror_layers = " +
                          num(b.kv_mirror_layers) + ")");
  r.finish();
  return l;
}

GrowthDesign parse_growth(ObjectReader r, const Backbone& base, Defaults& defaults) {
  note_default(defaults, r, "depth_factor", "1");
  note_default(defaults, r, "depth_mode", "interpose");
  note_default(defaults, r, "width_factor", "1");
  note_default(defaults, r, "noise_alpha", "0");
  GrowthDesign g;
  g.depth_factor = r.integer("depth_factor", 1, 1, Limits::max_growth_factor);
  g.depth_mode = r.choice<DepthMode>("depth_mode", {{"interpose", DepthMode::interpose}, {"stack", DepthMode::stack}},
                                     DepthMode::interpose);
  g.width_factor = r.integer("width_factor", 1, 1, Limits::max_growth_factor);
  g.noise_alpha = r.number("noise_alpha", 0.0, 0.0, 10.0);
  r.finish();
  if (base.num_layers * g.depth_factor > Limits::max_layers)
    fail(r.at("depth_factor"), "grows " + num(base.num_layers) + " layers past the limit of " + num(Limits::max_layers));
  if (g.depth_factor > 1 && g.depth_mode == DepthMode::stack) {
    if (base.kv_mirror_layers > 0)
      fail(r.at("depth_mode"), "stacking would break the backbone's U-shaped KV-mirror pairs; use interpose");
    if (base.moe && base.moe->first_dense_layers > 0)
      fail(r.at("depth_mode"), "stacking would put the leading dense layers mid-stack; use interpose");
  }
  if (g.width_factor > 1) {
    if (!base.moe) fail(r.at("width_factor"), "width growth needs an MoE backbone (this one has a dense FFN)");
    if (base.moe->num_experts * g.width_factor > Limits::max_experts)
      fail(r.at("width_factor"), "grows " + num(base.moe->num_experts) + " experts past the limit of " +
                                     num(Limits::max_experts));
  }
  return g;
}

}  // namespace

Design parse_design(const Json& j, const Backbone& base, const std::string& pointer) {
  ObjectReader r(j, pointer);
  Design d;
  d.name = r.string("name", "");
  if (auto g = r.optional_object("growth")) d.growth = parse_growth(*g, base, d.defaults);
  const Backbone b = d.growth ? grow(base, *d.growth) : base;
  int methods = 0;
  std::string first;
  auto take = [&](const char* key) {
    if (!r.has(key)) return std::optional<ObjectReader>();
    if (++methods > 1) fail(r.at(key), std::string("a design has one method; \"") + first + "\" is already given");
    first = key;
    return r.optional_object(key);
  };
  if (auto o = take("baseline")) o->finish();
  if (auto o = take("hd")) d.method = parse_hd(*o, b, d.defaults);
  if (auto o = take("phd")) d.method = parse_phd(*o, d.defaults);
  if (auto o = take("vwn")) d.method = parse_vwn(*o, b, d.defaults);
  if (auto o = take("looped")) d.method = parse_looped(*o, b, d.defaults);
  if (methods == 0) d.defaults[r.pointer().empty() ? "/" : r.pointer()] = "no method given: baseline (hdlab's default)";
  r.allow({"baseline", "hd", "phd", "vwn", "looped"});
  r.finish();
  return d;
}

Json to_json(const Design& d) {
  Json j = Json::object();
  if (!d.name.empty()) j["name"] = d.name;
  if (std::holds_alternative<BaselineDesign>(d.method)) {
    j["baseline"] = Json::object();
  } else if (const auto* hd = std::get_if<HdDesign>(&d.method)) {
    Json kinds = Json::array();
    for (auto k : hd->layer_kinds) kinds.push_back(to_string(k));
    Json o = {{"n", hd->n}, {"layers", kinds}, {"rope", to_string(hd->rope)}, {"kv_mirror", hd->kv_mirror},
              {"rope_theta", hd->rope_theta}};
    if (hd->window > 0) o["window"] = hd->window;
    j["hd"] = o;
  } else if (const auto* p = std::get_if<PhdDesign>(&d.method)) {
    Json o = {{"K", p->K}, {"variant", to_string(p->variant)}};
    if (p->variant != PhdVariant::plain) o["W"] = p->W;
    if (p->variant == PhdVariant::cswa) o["C"] = p->C;
    j["phd"] = o;
  } else if (const auto* v = std::get_if<VwnDesign>(&d.method)) {
    j["vwn"] = {{"m", v->m}, {"n", v->n}, {"dynamic", v->dynamic}, {"embedding", to_string(v->embedding)},
                {"mtp", v->mtp}};
  } else if (const auto* l = std::get_if<LoopedDesign>(&d.method)) {
    j["looped"] = {{"prelude", l->prelude}, {"recurrent", l->recurrent}, {"coda", l->coda},
                   {"iterations", l->iterations}, {"kv", to_string(l->kv)}, {"input_injection", l->input_injection}};
  }
  if (d.growth) {
    const auto& g = *d.growth;
    j["growth"] = {{"depth_factor", g.depth_factor}, {"depth_mode", to_string(g.depth_mode)},
                   {"width_factor", g.width_factor}, {"noise_alpha", g.noise_alpha}};
  }
  return j;
}

}  // namespace hdlab::model
