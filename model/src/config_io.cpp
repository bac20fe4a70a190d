#include "hdlab/model/config_io.hpp"

#include <sstream>

#include "hdlab/model/files.hpp"
#include "hdlab/model/hf_import.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::model {

namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

void check_range(const std::string& pointer, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo) fail(pointer, "must be >= " + num(lo) + ", got " + num(v));
  if (v > hi) fail(pointer, "must be <= " + num(hi) + ", got " + num(v));
}

// ---- backbone ------------------------------------------------------------------------

std::vector<LayerAttention> parse_layer_attention(ObjectReader& r, std::int64_t num_layers) {
  std::int64_t window = r.integer("sliding_window", 0, 0, Limits::max_window);
  const Json* layers = r.find("layers");
  std::vector<AttentionKind> kinds;
  auto kind_of = [](const Json& v, const std::string& ptr) {
    std::string s = read_string(v, ptr);
    if (s == "full") return AttentionKind::full;
    if (s == "sliding") return AttentionKind::sliding;
    fail(ptr, "must be one of full, sliding, got \"" + s + "\"");
  };
  const std::string ptr = r.at("layers");
  if (!layers) {
    kinds.assign(static_cast<std::size_t>(num_layers), AttentionKind::full);
  } else if (layers->is_string()) {
    kinds.assign(static_cast<std::size_t>(num_layers), kind_of(*layers, ptr));
  } else if (layers->is_array()) {
    if (static_cast<std::int64_t>(layers->size()) != num_layers)
      fail(ptr, "has " + num(static_cast<std::int64_t>(layers->size())) + " entries but the backbone has " +
                    num(num_layers) + " layers");
    for (std::size_t i = 0; i < layers->size(); ++i) kinds.push_back(kind_of((*layers)[i], pointer_join(ptr, i)));
  } else if (layers->is_object()) {
    // {"pattern": ["sliding", "full"]}: repeated cyclically over the layers (Gemma style).
    ObjectReader p(*layers, ptr);
    const Json& pattern = p.required("pattern");
    p.finish();
    if (!pattern.is_array() || pattern.empty()) fail(p.at("pattern"), "must be a non-empty array of full/sliding");
    std::vector<AttentionKind> cycle;
    for (std::size_t i = 0; i < pattern.size(); ++i)
      cycle.push_back(kind_of(pattern[i], pointer_join(p.at("pattern"), i)));
    for (std::int64_t l = 0; l < num_layers; ++l) kinds.push_back(cycle[static_cast<std::size_t>(l) % cycle.size()]);
  } else {
    fail(ptr, "must be \"full\", \"sliding\", a list per layer or {\"pattern\": [...]}, got " +
                  json_type_name(*layers));
  }
  std::vector<LayerAttention> out;
  bool any_sliding = false;
  for (auto k : kinds) {
    out.push_back({k, k == AttentionKind::sliding ? window : 0});
    any_sliding = any_sliding || k == AttentionKind::sliding;
  }
  if (any_sliding && window < 1) fail(r.at("sliding_window"), "is required (>= 1) when a layer is sliding");
  if (!any_sliding && window > 0) fail(r.at("sliding_window"), "is set but no layer is sliding");
  return out;
}

MoeConfig parse_moe(ObjectReader r) {
  MoeConfig m;
  m.num_experts = r.integer("num_experts", std::nullopt, 1, Limits::max_experts);
  m.top_k = r.integer("top_k", std::nullopt, 1, Limits::max_experts);
  m.expert_intermediate = r.integer("expert_intermediate_size", std::nullopt, 1, Limits::max_intermediate);
  m.num_shared_experts = r.integer("num_shared_experts", 0, 0, Limits::max_experts);
  m.shared_expert_intermediate =
      r.integer("shared_expert_intermediate_size", m.expert_intermediate, 0, Limits::max_intermediate);
  m.first_dense_layers = r.integer("first_dense_layers", 0, 0, Limits::max_layers);
  m.router = r.choice<RouterKind>("router", {{"softmax", RouterKind::softmax}, {"sigmoid", RouterKind::sigmoid}},
                                  RouterKind::softmax);
  r.finish();
  return m;
}

MlaConfig parse_mla(ObjectReader r) {
  MlaConfig m;
  m.q_lora_rank = r.integer("q_lora_rank", 0, 0, Limits::max_hidden);
  m.kv_lora_rank = r.integer("kv_lora_rank", std::nullopt, 1, Limits::max_hidden);
  m.qk_nope_head_dim = r.integer("qk_nope_head_dim", std::nullopt, 0, Limits::max_head_dim);
  m.qk_rope_head_dim = r.integer("qk_rope_head_dim", std::nullopt, 1, Limits::max_head_dim);
  m.v_head_dim = r.integer("v_head_dim", std::nullopt, 1, Limits::max_head_dim);
  r.finish();
  return m;
}

DType parse_dtype(ObjectReader& r, const char* key) {
  return r.choice<DType>(key, {{"bf16", DType::bf16}, {"fp16", DType::fp16}, {"fp32", DType::fp32}, {"fp8", DType::fp8}},
                         DType::bf16);
}

Json attention_to_json(const Backbone& b) {
  Json a = Json::object();
  bool all_full = true, all_sliding = true;
  std::int64_t window = 0;
  for (const auto& l : b.layers) {
    all_full = all_full && l.kind == AttentionKind::full;
    all_sliding = all_sliding && l.kind == AttentionKind::sliding;
    if (l.kind == AttentionKind::sliding) window = l.window;
  }
  if (all_full) {
    a["layers"] = "full";
  } else if (all_sliding) {
    a["layers"] = "sliding";
  } else {
    Json list = Json::array();
    for (const auto& l : b.layers) list.push_back(to_string(l.kind));
    a["layers"] = list;
  }
  if (window > 0) a["sliding_window"] = window;
  return a;
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
std::vector<HdLayerKind> parse_hd_layers(const Json* layers, const std::string& ptr, const Backbone& b) {
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
  const Json empty = Json::object();
  ObjectReader r(layers ? *layers : empty, ptr);
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
    for (std::size_t i = 0; i < fl->size(); ++i)
      full[static_cast<std::size_t>(read_integer((*fl)[i], pointer_join(r.at("full_layers"), i), 0, b.num_layers - 1))] =
          true;
  }
  r.finish();
  for (std::size_t l = 0; l < L; ++l) {
    if (full[l] || (every > 0 && (l + 1) % static_cast<std::size_t>(every) == 0)) kinds.push_back(HdLayerKind::full);
    else if (b.layers[l].kind == AttentionKind::sliding) kinds.push_back(sliding);
    else kinds.push_back(rest);
  }
  return kinds;
}

HdDesign parse_hd(ObjectReader r, const Backbone& b) {
  HdDesign hd;
  hd.n = r.integer("n", std::nullopt, 1, Limits::max_streams);
  hd.layer_kinds = parse_hd_layers(r.find("layers"), r.at("layers"), b);
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
  }
  hd.rope = r.choice<RopeConvention>(
      "rope", {{"expanded", RopeConvention::expanded}, {"token_index", RopeConvention::token_index}},
      RopeConvention::expanded);
  hd.kv_mirror = r.boolean("kv_mirror", b.kv_mirror_layers > 0);
  if (hd.kv_mirror && b.kv_mirror_layers == 0)
    fail(r.at("kv_mirror"), "the backbone has no KV-mirror layers (kv_mirror_layers = 0)");
  hd.rope_theta = r.number("rope_theta", 0.0, 0.0, 1e30);
  if (hd.rope_theta == 0.0) hd.rope_theta = b.rope_theta;
  r.finish();
  return hd;
}

PhdDesign parse_phd(ObjectReader r) {
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

VwnDesign parse_vwn(ObjectReader r, const Backbone& b) {
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
  r.finish();
  return v;
}

LoopedDesign parse_looped(ObjectReader r, const Backbone& b) {
  LoopedDesign l;
  l.prelude = r.integer("prelude", 0, 0, b.num_layers);
  l.coda = r.integer("coda", 0, 0, b.num_layers);
  l.recurrent = r.integer("recurrent", b.num_layers - l.prelude - l.coda, 1, b.num_layers);
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

GrowthDesign parse_growth(ObjectReader r, const Backbone& base) {
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

// ---- public --------------------------------------------------------------------------

void validate(const Backbone& b, const std::string& p) {
  auto at = [&](const char* key) { return pointer_join(p, key); };
  auto range = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
    check_range(at(key), v, lo, hi);
  };
  range("num_layers", b.num_layers, 1, Limits::max_layers);
  range("hidden_size", b.hidden, 1, Limits::max_hidden);
  range("num_heads", b.num_heads, 1, Limits::max_heads);
  range("num_kv_heads", b.num_kv_heads, 1, Limits::max_heads);
  if (b.num_heads % b.num_kv_heads != 0)
    fail(at("num_kv_heads"), num(b.num_heads) + " query heads cannot be grouped into " + num(b.num_kv_heads) +
                                 " KV heads");
  range("head_dim", b.head_dim, 1, Limits::max_head_dim);
  const bool any_dense = !b.moe || b.moe->first_dense_layers > 0;
  range("intermediate_size", b.intermediate, any_dense ? 1 : 0, Limits::max_intermediate);
  if (b.moe) {
    const MoeConfig& m = *b.moe;
    const std::string moe = at("moe");
    auto moe_range = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
      check_range(pointer_join(moe, key), v, lo, hi);
    };
    moe_range("num_experts", m.num_experts, 1, Limits::max_experts);
    if (m.top_k > m.num_experts)
      fail(moe + "/top_k", "must be <= num_experts (" + num(m.num_experts) + "), got " + num(m.top_k));
    moe_range("top_k", m.top_k, 1, m.num_experts);
    moe_range("expert_intermediate_size", m.expert_intermediate, 1, Limits::max_intermediate);
    moe_range("num_shared_experts", m.num_shared_experts, 0, Limits::max_experts);
    moe_range("shared_expert_intermediate_size", m.shared_expert_intermediate, m.num_shared_experts > 0 ? 1 : 0,
              Limits::max_intermediate);
    if (m.first_dense_layers > b.num_layers)
      fail(moe + "/first_dense_layers", "must be <= num_layers (" + num(b.num_layers) + ")");
    moe_range("first_dense_layers", m.first_dense_layers, 0, b.num_layers);
  }
  if (b.mla) {
    const MlaConfig& m = *b.mla;
    const std::string mla = at("mla");
    auto mla_range = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
      check_range(pointer_join(mla, key), v, lo, hi);
    };
    mla_range("q_lora_rank", m.q_lora_rank, 0, Limits::max_hidden);
    mla_range("kv_lora_rank", m.kv_lora_rank, 1, Limits::max_hidden);
    mla_range("qk_nope_head_dim", m.qk_nope_head_dim, 0, Limits::max_head_dim);
    mla_range("qk_rope_head_dim", m.qk_rope_head_dim, 1, Limits::max_head_dim);
    mla_range("v_head_dim", m.v_head_dim, 1, Limits::max_head_dim);
  }
  range("vocab_size", b.vocab_size, 1, Limits::max_vocab);
  range("vocab_pad_multiple", b.vocab_pad_multiple, 1, 1 << 16);
  if (static_cast<std::int64_t>(b.layers.size()) != b.num_layers)
    fail(at("attention") + "/layers", "has " + num(static_cast<std::int64_t>(b.layers.size())) +
                                          " entries but the backbone has " + num(b.num_layers) + " layers");
  for (std::size_t i = 0; i < b.layers.size(); ++i)
    if (b.layers[i].kind == AttentionKind::sliding && b.layers[i].window < 1)
      fail(at("attention") + "/sliding_window", "must be >= 1 for sliding layer " + std::to_string(i));
  range("norms_per_layer", b.norms_per_layer, 0, 16);
  range("kv_mirror_layers", b.kv_mirror_layers, 0, b.num_layers / 2);
  if (!(b.rope_theta > 0)) fail(at("rope_theta"), "must be > 0");
  if (!(b.norm_eps > 0)) fail(at("norm_eps"), "must be > 0");
  range("max_context", b.max_context, 0, Limits::max_window);
}

Backbone parse_backbone(const Json& j, const std::string& pointer) {
  ObjectReader r(j, pointer);
  Backbone b;
  b.name = r.string("name", "unnamed");
  b.source = r.string("source", "");
  b.num_layers = r.integer("num_layers", std::nullopt, 1, Limits::max_layers);
  b.hidden = r.integer("hidden_size", std::nullopt, 1, Limits::max_hidden);
  b.num_heads = r.integer("num_heads", std::nullopt, 1, Limits::max_heads);
  b.num_kv_heads = r.integer("num_kv_heads", b.num_heads, 1, Limits::max_heads);
  if (b.hidden % b.num_heads != 0 && !r.has("head_dim"))
    fail(r.at("head_dim"), "is required: hidden_size " + num(b.hidden) + " is not divisible by num_heads " +
                               num(b.num_heads));
  b.head_dim = r.integer("head_dim", b.hidden / b.num_heads, 1, Limits::max_head_dim);
  b.qk_norm = r.boolean("qk_norm", false);
  b.attention_bias = r.boolean("attention_bias", false);
  if (auto m = r.optional_object("moe")) b.moe = parse_moe(*m);
  if (auto m = r.optional_object("mla")) b.mla = parse_mla(*m);
  const bool any_dense = !b.moe || b.moe->first_dense_layers > 0;
  b.intermediate = r.integer("intermediate_size", any_dense ? std::nullopt : std::optional<std::int64_t>(0),
                             0, Limits::max_intermediate);
  b.vocab_size = r.integer("vocab_size", std::nullopt, 1, Limits::max_vocab);
  b.vocab_pad_multiple = r.integer("vocab_pad_multiple", 1, 1, 1 << 16);
  b.tie_embeddings = r.boolean("tie_embeddings", false);
  if (auto a = r.optional_object("attention")) {
    b.layers = parse_layer_attention(*a, b.num_layers);
    a->finish();
  } else {
    b.layers.assign(static_cast<std::size_t>(b.num_layers), LayerAttention{});
  }
  b.norms_per_layer = r.integer("norms_per_layer", 2, 0, 16);
  b.kv_mirror_layers = r.integer("kv_mirror_layers", 0, 0, Limits::max_layers);
  b.rope_theta = r.number("rope_theta", 10000.0);
  b.norm_eps = r.number("norm_eps", 1e-6);
  b.max_context = r.integer("max_context", 0, 0, Limits::max_window);
  b.dtype = parse_dtype(r, "dtype");
  if (const Json* a = r.find("assumptions")) {
    if (!a->is_object()) fail(r.at("assumptions"), "must be an object of field -> note");
    for (const auto& [key, value] : a->items())
      b.assumptions[key] = read_string(value, pointer_join(r.at("assumptions"), key));
  }
  r.finish();
  validate(b, pointer);
  return b;
}

Json to_json(const Backbone& b) {
  Json j;
  j["name"] = b.name;
  if (!b.source.empty()) j["source"] = b.source;
  j["num_layers"] = b.num_layers;
  j["hidden_size"] = b.hidden;
  j["num_heads"] = b.num_heads;
  j["num_kv_heads"] = b.num_kv_heads;
  j["head_dim"] = b.head_dim;
  j["qk_norm"] = b.qk_norm;
  j["attention_bias"] = b.attention_bias;
  j["intermediate_size"] = b.intermediate;
  if (b.moe) {
    const auto& m = *b.moe;
    j["moe"] = {{"num_experts", m.num_experts},
                {"top_k", m.top_k},
                {"expert_intermediate_size", m.expert_intermediate},
                {"num_shared_experts", m.num_shared_experts},
                {"shared_expert_intermediate_size", m.shared_expert_intermediate},
                {"first_dense_layers", m.first_dense_layers},
                {"router", to_string(m.router)}};
  }
  if (b.mla) {
    const auto& m = *b.mla;
    j["mla"] = {{"q_lora_rank", m.q_lora_rank},
                {"kv_lora_rank", m.kv_lora_rank},
                {"qk_nope_head_dim", m.qk_nope_head_dim},
                {"qk_rope_head_dim", m.qk_rope_head_dim},
                {"v_head_dim", m.v_head_dim}};
  }
  j["vocab_size"] = b.vocab_size;
  j["vocab_pad_multiple"] = b.vocab_pad_multiple;
  j["tie_embeddings"] = b.tie_embeddings;
  j["attention"] = attention_to_json(b);
  j["norms_per_layer"] = b.norms_per_layer;
  j["kv_mirror_layers"] = b.kv_mirror_layers;
  j["rope_theta"] = b.rope_theta;
  j["norm_eps"] = b.norm_eps;
  j["max_context"] = b.max_context;
  j["dtype"] = to_string(b.dtype);
  if (!b.assumptions.empty()) j["assumptions"] = b.assumptions;
  return j;
}

Design parse_design(const Json& j, const Backbone& base, const std::string& pointer) {
  ObjectReader r(j, pointer);
  Design d;
  d.name = r.string("name", "");
  if (auto g = r.optional_object("growth")) d.growth = parse_growth(*g, base);
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
  if (auto o = take("hd")) d.method = parse_hd(*o, b);
  if (auto o = take("phd")) d.method = parse_phd(*o);
  if (auto o = take("vwn")) d.method = parse_vwn(*o, b);
  if (auto o = take("looped")) d.method = parse_looped(*o, b);
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

Backbone load_backbone(const Json& doc, const std::string& pointer) {
  if (looks_like_hf_config(doc)) return import_hf_config(doc, pointer);
  if (doc.is_object() && doc.contains("backbone")) return parse_backbone(doc["backbone"], pointer + "/backbone");
  if (doc.is_object() && doc.contains("hf_config")) return import_hf_config(doc["hf_config"], pointer + "/hf_config");
  return parse_backbone(doc, pointer);
}

Config make_config(const Backbone& base, const Design& design) {
  validate(base, "/backbone");
  // The design's JSON form round-trips exactly, so checking it through the parser keeps
  // every design check in one place.
  Design checked = parse_design(to_json(design), base, "/design");
  Backbone effective = checked.growth ? grow(base, *checked.growth) : base;
  return Config{base, std::move(checked), std::move(effective)};
}

Config parse_config(const Json& doc) {
  ObjectReader r(doc, "");
  r.allow({"description"});
  Backbone base;
  if (const Json* b = r.find("backbone")) base = parse_backbone(*b, "/backbone");
  else if (const Json* h = r.find("hf_config")) base = import_hf_config(*h, "/hf_config");
  else fail("/backbone", "is required (or \"hf_config\")");
  Design d;
  if (const Json* dj = r.find("design")) d = parse_design(*dj, base, "/design");
  r.finish();
  return Config{base, d, d.growth ? grow(base, *d.growth) : base};
}

Json to_json(const Config& c) { return Json{{"backbone", to_json(c.base)}, {"design", to_json(c.design)}}; }

Json read_json_file(const std::string& path) {
  const std::string text = read_text_file(path);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.byte is the offset; turn it into line:column.
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw ConfigError(path, "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(col));
  } catch (const Json::exception&) {
    // e.g. a number too large for a double (1e400): nlohmann reports it as out_of_range.
    throw ConfigError(path, "invalid JSON: a number is out of range");
  }
}

Json design_json_from_shorthand(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.front() == '{') {
    try {
      return Json::parse(t);
    } catch (const Json::exception&) {  // syntax errors and numbers out of range
      throw ConfigError("/design", "is not valid JSON: " + text);
    }
  }
  // kind[:key=value,key=value]; a value that parses as JSON is taken as such, otherwise
  // as a string; lists use '/' inside a value: layers=full/intra/intra.
  const auto colon = t.find(':');
  std::string kind = t.substr(0, colon);
  if (kind.empty()) throw ConfigError("/design", "is empty");
  Json body = Json::object();
  if (colon != std::string::npos) {
    std::stringstream items(t.substr(colon + 1));
    std::string item;
    while (std::getline(items, item, ',')) {
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0)
        throw ConfigError("/design/" + kind, "shorthand item \"" + item + "\" is not key=value");
      const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
      auto scalar = [](const std::string& v) {
        try {
          Json p = Json::parse(v);
          if (!p.is_structured()) return p;
        } catch (const Json::exception&) {  // not JSON (or out of range): taken as text
        }
        return Json(v);
      };
      if (value.find('/') != std::string::npos) {
        Json list = Json::array();
        std::stringstream parts(value);
        std::string part;
        while (std::getline(parts, part, '/')) list.push_back(scalar(part));
        body[key] = list;
      } else {
        body[key] = scalar(value);
      }
    }
  }
  return Json{{kind, body}};
}

}  // namespace hdlab::model
