// Token mixers and sublayers of a backbone: which layers run linear attention (Gated
// DeltaNet or Mamba-2) instead of attention or no mixer at all, which have no FFN, the
// linear layers' sizes, and the gated attention output. JSON in and out for our format:
//
//   "layer_types": ["linear_attention", ..., "attention"]   one per layer, or
//   "layer_types": {"pattern": ["linear_attention", "linear_attention",
//                               "linear_attention", "attention"]}  repeated cyclically
//                  (entries: attention, linear_attention, mamba2, none)
//   "linear_attention": {"kind": "gated_deltanet", "num_key_heads": 16, "num_value_heads": 32,
//                        "key_head_dim": 128, "value_head_dim": 128, "conv_kernel": 4}
//   "mamba2": {"num_heads": 128, "head_dim": 64, "n_groups": 8, "state_size": 128,
//              "conv_kernel": 4, "chunk_size": 128, "conv_bias": true}
//   "ffn_types": ["none", "dense", ...]  or {"pattern": [...]}  (dense, moe, none)
//   "attention_output_gate": true
//
// Every key is optional: a backbone without them is all attention with an FFN in every
// layer, ungated (and writes none of them back, so existing profiles round-trip unchanged).
#include "backbone_mixers.hpp"

#include <utility>

#include "hdlab/model/config_io.hpp"

namespace hdlab::model {

const char* to_string(MixerKind kind) {
  switch (kind) {
    case MixerKind::attention: return "attention";
    case MixerKind::gated_deltanet: return "linear_attention";
    case MixerKind::mamba2: return "mamba2";
    case MixerKind::none: return "none";
  }
  return "?";
}

const char* to_string(FfnKind kind) {
  switch (kind) {
    case FfnKind::dense: return "dense";
    case FfnKind::moe: return "moe";
    case FfnKind::none: return "none";
  }
  return "?";
}

std::int64_t GatedDeltaNetConfig::params(std::int64_t hidden) const {
  const std::int64_t D = hidden, qk = qk_width(), v = v_width(), hv = num_value_heads;
  const std::int64_t in_qkvz = D * (2 * qk + 2 * v), in_ba = D * 2 * hv;
  const std::int64_t conv = conv_channels() * conv_kernel;
  return in_qkvz + in_ba + conv + 2 * hv + value_head_dim + v * D;
}

std::int64_t Mamba2Config::params(std::int64_t hidden) const {
  const std::int64_t D = hidden, I = inner();
  const std::int64_t conv = conv_channels() * (conv_kernel + (conv_bias ? 1 : 0));
  return D * in_proj_width() + conv + 3 * num_heads + I + I * D;
}

MixerKind Backbone::mixer(std::int64_t l) const {
  if (mixers.empty() || l < 0 || l >= static_cast<std::int64_t>(mixers.size())) return MixerKind::attention;
  return mixers[static_cast<std::size_t>(l)];
}

std::int64_t Backbone::num_mixer_layers(MixerKind kind) const {
  std::int64_t n = 0;
  for (std::int64_t l = 0; l < num_layers; ++l) n += mixer(l) == kind ? 1 : 0;
  return n;
}

std::int64_t Backbone::num_linear_layers() const {
  return num_mixer_layers(MixerKind::gated_deltanet) + num_mixer_layers(MixerKind::mamba2);
}

std::int64_t Backbone::num_single_sublayer_layers() const {
  std::int64_t n = 0;
  for (std::int64_t l = 0; l < num_layers; ++l) n += has_mixer(l) != has_ffn(l) ? 1 : 0;
  return n;
}

namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

template <class E>
using Names = std::vector<std::pair<const char*, E>>;

template <class E>
E name_of(const Json& v, const std::string& ptr, const Names<E>& names) {
  const std::string s = read_string(v, ptr);
  std::string all;
  for (const auto& [name, value] : names) {
    if (s == name) return value;
    all += (all.empty() ? "" : ", ") + std::string(name);
  }
  fail(ptr, "must be one of " + all + ", got \"" + s + "\"");
}

// A list of one entry per layer, or {"pattern": [...]} repeated cyclically over the layers.
template <class E>
std::vector<E> parse_per_layer(const Json& lt, const std::string& ptr, std::int64_t num_layers, const Names<E>& names) {
  std::vector<E> kinds;
  if (lt.is_array()) {
    if (static_cast<std::int64_t>(lt.size()) != num_layers)
      fail(ptr, "has " + num(static_cast<std::int64_t>(lt.size())) + " entries but the backbone has " +
                    num(num_layers) + " layers");
    for (std::size_t i = 0; i < lt.size(); ++i) kinds.push_back(name_of(lt[i], pointer_join(ptr, i), names));
  } else if (lt.is_object()) {
    ObjectReader p(lt, ptr);
    const Json& pattern = p.required("pattern");
    p.finish();
    if (!pattern.is_array() || pattern.empty()) fail(p.at("pattern"), "must be a non-empty array of layer kinds");
    std::vector<E> cycle;
    for (std::size_t i = 0; i < pattern.size(); ++i)
      cycle.push_back(name_of(pattern[i], pointer_join(p.at("pattern"), i), names));
    for (std::int64_t l = 0; l < num_layers; ++l) kinds.push_back(cycle[static_cast<std::size_t>(l) % cycle.size()]);
  } else {
    fail(ptr, "must be a list per layer or {\"pattern\": [...]}, got " + json_type_name(lt));
  }
  return kinds;
}

const Names<MixerKind>& mixer_names() {
  static const Names<MixerKind> n{{"attention", MixerKind::attention},
                                  {"linear_attention", MixerKind::gated_deltanet},
                                  {"mamba2", MixerKind::mamba2},
                                  {"none", MixerKind::none}};
  return n;
}

const Names<FfnKind>& ffn_names() {
  static const Names<FfnKind> n{{"dense", FfnKind::dense}, {"moe", FfnKind::moe}, {"none", FfnKind::none}};
  return n;
}

GatedDeltaNetConfig parse_gdn(ObjectReader r) {
  r.choice<MixerKind>("kind", {{"gated_deltanet", MixerKind::gated_deltanet}}, MixerKind::gated_deltanet);
  GatedDeltaNetConfig g;
  g.num_key_heads = r.integer("num_key_heads", std::nullopt, 1, Limits::max_heads);
  g.num_value_heads = r.integer("num_value_heads", std::nullopt, 1, Limits::max_heads);
  g.key_head_dim = r.integer("key_head_dim", std::nullopt, 1, Limits::max_head_dim);
  g.value_head_dim = r.integer("value_head_dim", std::nullopt, 1, Limits::max_head_dim);
  g.conv_kernel = r.integer("conv_kernel", std::nullopt, 1, 64);
  r.finish();
  return g;
}

// Every size is required: a Mamba-2 layer's state and chunking have no safe default.
Mamba2Config parse_mamba(ObjectReader r) {
  Mamba2Config m;
  m.num_heads = r.integer("num_heads", std::nullopt, 1, Limits::max_heads);
  m.head_dim = r.integer("head_dim", std::nullopt, 1, Limits::max_head_dim);
  m.n_groups = r.integer("n_groups", std::nullopt, 1, Limits::max_heads);
  m.state_size = r.integer("state_size", std::nullopt, 1, Limits::max_head_dim);
  m.conv_kernel = r.integer("conv_kernel", std::nullopt, 1, 64);
  m.chunk_size = r.integer("chunk_size", std::nullopt, 1, Limits::max_window);
  m.conv_bias = r.boolean("conv_bias", std::nullopt);
  r.finish();
  return m;
}

std::int64_t first_layer(const std::vector<MixerKind>& kinds, MixerKind kind) {
  for (std::size_t l = 0; l < kinds.size(); ++l)
    if (kinds[l] == kind) return static_cast<std::int64_t>(l);
  return -1;
}

void check_range(const std::string& at, const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi) fail(pointer_join(at, key), "must be in [" + num(lo) + ", " + num(hi) + "], got " + num(v));
}

void validate_gdn(const GatedDeltaNetConfig& g, const std::string& la) {
  check_range(la, "num_key_heads", g.num_key_heads, 1, Limits::max_heads);
  check_range(la, "num_value_heads", g.num_value_heads, 1, Limits::max_heads);
  check_range(la, "key_head_dim", g.key_head_dim, 1, Limits::max_head_dim);
  check_range(la, "value_head_dim", g.value_head_dim, 1, Limits::max_head_dim);
  check_range(la, "conv_kernel", g.conv_kernel, 1, 64);
  if (g.num_value_heads % g.num_key_heads != 0)
    fail(pointer_join(la, "num_value_heads"), num(g.num_value_heads) + " value heads cannot share " +
                                                  num(g.num_key_heads) + " q/k heads evenly");
}

void validate_mamba(const Mamba2Config& m, const std::string& at) {
  check_range(at, "num_heads", m.num_heads, 1, Limits::max_heads);
  check_range(at, "head_dim", m.head_dim, 1, Limits::max_head_dim);
  check_range(at, "n_groups", m.n_groups, 1, Limits::max_heads);
  check_range(at, "state_size", m.state_size, 1, Limits::max_head_dim);
  check_range(at, "conv_kernel", m.conv_kernel, 1, 64);
  check_range(at, "chunk_size", m.chunk_size, 1, Limits::max_window);
  if (m.num_heads % m.n_groups != 0)
    fail(pointer_join(at, "n_groups"), num(m.num_heads) + " heads cannot share " + num(m.n_groups) +
                                           " B/C groups evenly");
}

// The per-layer FFN list against the moe settings it replaces.
void validate_ffns(const Backbone& b, const std::string& p) {
  const std::string ft = pointer_join(p, "ffn_types");
  if (static_cast<std::int64_t>(b.ffns.size()) != b.num_layers)
    fail(ft, "has " + num(static_cast<std::int64_t>(b.ffns.size())) + " entries but the backbone has " +
                 num(b.num_layers) + " layers");
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    const FfnKind k = b.ffns[static_cast<std::size_t>(l)];
    if (k == FfnKind::moe && !b.moe) fail(ft, "layer " + num(l) + " is moe but the backbone has no moe settings");
    if (k == FfnKind::dense && b.intermediate < 1)
      fail(pointer_join(p, "intermediate_size"), "must be >= 1: layer " + num(l) + " has a dense FFN");
  }
  if (b.moe && (b.moe->first_dense_layers > 0 || b.moe->layer_step > 1))
    fail(ft, "and moe/first_dense_layers or moe/layer_step both say which layers are MoE; give one of them");
}

}  // namespace

void parse_mixers(ObjectReader& r, Backbone& b) {
  b.attention_output_gate = r.boolean("attention_output_gate", false);
  if (const Json* lt = r.find("layer_types"))
    b.mixers = parse_per_layer(*lt, r.at("layer_types"), b.num_layers, mixer_names());
  if (auto g = r.optional_object("linear_attention")) b.gdn = parse_gdn(*g);
  if (auto m = r.optional_object("mamba2")) b.mamba = parse_mamba(*m);
  if (const Json* ft = r.find("ffn_types")) b.ffns = parse_per_layer(*ft, r.at("ffn_types"), b.num_layers, ffn_names());
  if (first_layer(b.mixers, MixerKind::gated_deltanet) >= 0 && !b.gdn)
    fail(r.at("linear_attention"), "is required: layer " + num(first_layer(b.mixers, MixerKind::gated_deltanet)) +
                                       " is linear_attention and needs its state sizes (num_key_heads, "
                                       "num_value_heads, key_head_dim, value_head_dim, conv_kernel)");
  if (first_layer(b.mixers, MixerKind::mamba2) >= 0 && !b.mamba)
    fail(r.at("mamba2"), "is required: layer " + num(first_layer(b.mixers, MixerKind::mamba2)) +
                             " is mamba2 and needs its sizes (num_heads, head_dim, n_groups, state_size, "
                             "conv_kernel, chunk_size, conv_bias)");
  if (b.gdn && first_layer(b.mixers, MixerKind::gated_deltanet) < 0)
    fail(r.at("linear_attention"), "is set but no layer in layer_types is linear_attention");
  if (b.mamba && first_layer(b.mixers, MixerKind::mamba2) < 0)
    fail(r.at("mamba2"), "is set but no layer in layer_types is mamba2");
  if (first_layer(b.mixers, MixerKind::gated_deltanet) < 0 && first_layer(b.mixers, MixerKind::mamba2) < 0 &&
      first_layer(b.mixers, MixerKind::none) < 0)
    b.mixers.clear();  // all attention: the canonical empty form
  bool all_ffn = true;
  for (FfnKind k : b.ffns) all_ffn = all_ffn && k != FfnKind::none;
  if (all_ffn && b.ffns.size() == static_cast<std::size_t>(b.num_layers)) {
    // Every layer has its FFN: the list only restates the moe rules when it agrees with them.
    bool same = true;
    for (std::int64_t l = 0; l < b.num_layers; ++l) {
      const bool moe_rule = b.moe && l >= b.moe->first_dense_layers &&
                            (b.moe->layer_step <= 1 || (l + 1) % b.moe->layer_step == 0);
      same = same && (b.ffns[static_cast<std::size_t>(l)] == FfnKind::moe) == moe_rule;
    }
    if (same) b.ffns.clear();  // the canonical empty form
  }
}

void validate_mixers(const Backbone& b, const std::string& p) {
  const std::string lt = pointer_join(p, "layer_types");
  if (!b.mixers.empty() && static_cast<std::int64_t>(b.mixers.size()) != b.num_layers)
    fail(lt, "has " + num(static_cast<std::int64_t>(b.mixers.size())) + " entries but the backbone has " +
                 num(b.num_layers) + " layers");
  if (!b.ffns.empty()) validate_ffns(b, p);
  const std::string la = pointer_join(p, "linear_attention"), mm = pointer_join(p, "mamba2");
  if (b.num_mixer_layers(MixerKind::gated_deltanet) > 0 && !b.gdn)
    fail(la, "is required: a linear_attention layer needs its state sizes");
  if (b.num_mixer_layers(MixerKind::mamba2) > 0 && !b.mamba) fail(mm, "is required: a mamba2 layer needs its sizes");
  if (b.gdn) validate_gdn(*b.gdn, la);
  if (b.mamba) validate_mamba(*b.mamba, mm);
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    if (!b.has_mixer(l) && !b.has_ffn(l))
      fail(lt, "layer " + num(l) + " has neither a token mixer nor an FFN (ffn_types says none)");
    if (!b.is_attention_layer(l) && b.is_mirrored(l))
      fail(pointer_join(p, "kv_mirror_layers"), "makes layer " + num(l) + ", a " + to_string(b.mixer(l)) +
                                                    " layer, take K/V from an early layer: it has no K/V to take");
  }
  if (b.mla && b.num_linear_layers() > 0)
    fail(b.gdn ? la : mm, "with mla is unsupported: hybrid MLA / linear-attention backbones are not modelled");
}

void mixers_to_json(const Backbone& b, Json& j) {
  if (b.attention_output_gate) j["attention_output_gate"] = true;
  if (!b.mixers.empty()) {
    Json list = Json::array();
    for (std::int64_t l = 0; l < b.num_layers; ++l) list.push_back(to_string(b.mixer(l)));
    j["layer_types"] = list;
  }
  if (b.gdn) {
    const GatedDeltaNetConfig& g = *b.gdn;
    j["linear_attention"] = {{"kind", "gated_deltanet"},
                             {"num_key_heads", g.num_key_heads},
                             {"num_value_heads", g.num_value_heads},
                             {"key_head_dim", g.key_head_dim},
                             {"value_head_dim", g.value_head_dim},
                             {"conv_kernel", g.conv_kernel}};
  }
  if (b.mamba) {
    const Mamba2Config& m = *b.mamba;
    j["mamba2"] = {{"num_heads", m.num_heads},   {"head_dim", m.head_dim},       {"n_groups", m.n_groups},
                   {"state_size", m.state_size}, {"conv_kernel", m.conv_kernel}, {"chunk_size", m.chunk_size},
                   {"conv_bias", m.conv_bias}};
  }
  if (!b.ffns.empty()) {
    Json list = Json::array();
    for (FfnKind k : b.ffns) list.push_back(to_string(k));
    j["ffn_types"] = list;
  }
}

}  // namespace hdlab::model
