// Token mixers of a backbone: which layers run linear attention (Gated DeltaNet) instead of
// attention, their sizes, and the gated attention output. JSON in and out for our format:
//
//   "layer_types": ["linear_attention", ..., "attention"]   one per layer, or
//   "layer_types": {"pattern": ["linear_attention", "linear_attention",
//                               "linear_attention", "attention"]}  repeated cyclically
//   "linear_attention": {"kind": "gated_deltanet", "num_key_heads": 16, "num_value_heads": 32,
//                        "key_head_dim": 128, "value_head_dim": 128, "conv_kernel": 4}
//   "attention_output_gate": true
//
// Every key is optional: a backbone without them is all attention, ungated (and writes none
// of them back, so existing profiles round-trip unchanged).
#include "backbone_mixers.hpp"

#include "hdlab/model/config_io.hpp"

namespace hdlab::model {

const char* to_string(MixerKind kind) {
  return kind == MixerKind::attention ? "attention" : "linear_attention";
}

std::int64_t GatedDeltaNetConfig::params(std::int64_t hidden) const {
  const std::int64_t D = hidden, qk = qk_width(), v = v_width(), hv = num_value_heads;
  const std::int64_t in_qkvz = D * (2 * qk + 2 * v), in_ba = D * 2 * hv;
  const std::int64_t conv = conv_channels() * conv_kernel;
  return in_qkvz + in_ba + conv + 2 * hv + value_head_dim + v * D;
}

MixerKind Backbone::mixer(std::int64_t l) const {
  if (mixers.empty() || l < 0 || l >= static_cast<std::int64_t>(mixers.size())) return MixerKind::attention;
  return mixers[static_cast<std::size_t>(l)];
}

std::int64_t Backbone::num_linear_layers() const {
  std::int64_t n = 0;
  for (MixerKind k : mixers) n += k != MixerKind::attention ? 1 : 0;
  return n;
}

namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

MixerKind mixer_of(const Json& v, const std::string& ptr) {
  const std::string s = read_string(v, ptr);
  if (s == "attention") return MixerKind::attention;
  if (s == "linear_attention") return MixerKind::gated_deltanet;
  fail(ptr, "must be one of attention, linear_attention, got \"" + s + "\"");
}

std::vector<MixerKind> parse_layer_types(const Json& lt, const std::string& ptr, std::int64_t num_layers) {
  std::vector<MixerKind> kinds;
  if (lt.is_array()) {
    if (static_cast<std::int64_t>(lt.size()) != num_layers)
      fail(ptr, "has " + num(static_cast<std::int64_t>(lt.size())) + " entries but the backbone has " +
                    num(num_layers) + " layers");
    for (std::size_t i = 0; i < lt.size(); ++i) kinds.push_back(mixer_of(lt[i], pointer_join(ptr, i)));
  } else if (lt.is_object()) {
    ObjectReader p(lt, ptr);
    const Json& pattern = p.required("pattern");
    p.finish();
    if (!pattern.is_array() || pattern.empty())
      fail(p.at("pattern"), "must be a non-empty array of attention / linear_attention");
    std::vector<MixerKind> cycle;
    for (std::size_t i = 0; i < pattern.size(); ++i) cycle.push_back(mixer_of(pattern[i], pointer_join(p.at("pattern"), i)));
    for (std::int64_t l = 0; l < num_layers; ++l) kinds.push_back(cycle[static_cast<std::size_t>(l) % cycle.size()]);
  } else {
    fail(ptr, "must be a list per layer or {\"pattern\": [...]} of attention / linear_attention, got " +
                  json_type_name(lt));
  }
  return kinds;
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

}  // namespace

void parse_mixers(ObjectReader& r, Backbone& b) {
  b.attention_output_gate = r.boolean("attention_output_gate", false);
  if (const Json* lt = r.find("layer_types")) b.mixers = parse_layer_types(*lt, r.at("layer_types"), b.num_layers);
  if (auto g = r.optional_object("linear_attention")) b.gdn = parse_gdn(*g);
  bool any_linear = false;
  for (MixerKind k : b.mixers) any_linear = any_linear || k != MixerKind::attention;
  if (!any_linear) b.mixers.clear();  // all attention: the canonical empty form
  if (any_linear && !b.gdn) {
    std::size_t first = 0;
    while (b.mixers[first] == MixerKind::attention) ++first;
    fail(r.at("linear_attention"), "is required: layer " + std::to_string(first) +
                                       " is linear_attention and needs its state sizes (num_key_heads, "
                                       "num_value_heads, key_head_dim, value_head_dim, conv_kernel)");
  }
  if (!any_linear && b.gdn) fail(r.at("linear_attention"), "is set but no layer in layer_types is linear_attention");
}

void validate_mixers(const Backbone& b, const std::string& p) {
  if (!b.mixers.empty() && static_cast<std::int64_t>(b.mixers.size()) != b.num_layers)
    fail(pointer_join(p, "layer_types"), "has " + num(static_cast<std::int64_t>(b.mixers.size())) +
                                             " entries but the backbone has " + num(b.num_layers) + " layers");
  const bool any_linear = b.num_linear_layers() > 0;
  const std::string la = pointer_join(p, "linear_attention");
  if (any_linear && !b.gdn) fail(la, "is required: a linear_attention layer needs its state sizes");
  if (!b.gdn) return;
  const GatedDeltaNetConfig& g = *b.gdn;
  auto range = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
    if (v < lo || v > hi)
      fail(pointer_join(la, key), "must be in [" + num(lo) + ", " + num(hi) + "], got " + num(v));
  };
  range("num_key_heads", g.num_key_heads, 1, Limits::max_heads);
  range("num_value_heads", g.num_value_heads, 1, Limits::max_heads);
  range("key_head_dim", g.key_head_dim, 1, Limits::max_head_dim);
  range("value_head_dim", g.value_head_dim, 1, Limits::max_head_dim);
  range("conv_kernel", g.conv_kernel, 1, 64);
  if (g.num_value_heads % g.num_key_heads != 0)
    fail(pointer_join(la, "num_value_heads"), num(g.num_value_heads) + " value heads cannot share " +
                                                  num(g.num_key_heads) + " q/k heads evenly");
  for (std::int64_t l = 0; l < b.num_layers; ++l)
    if (b.is_linear_layer(l) && b.is_mirrored(l))
      fail(pointer_join(p, "kv_mirror_layers"), "makes layer " + num(l) + ", a linear_attention layer, take K/V from an "
                                                "early layer: a recurrent layer has no K/V to take");
  if (b.mla && any_linear) fail(la, "with mla is unsupported: hybrid MLA / linear-attention backbones are not modelled");
}

void mixers_to_json(const Backbone& b, Json& j) {
  if (b.attention_output_gate) j["attention_output_gate"] = true;
  if (b.num_linear_layers() > 0) {
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
}

}  // namespace hdlab::model
