// The Hidden Decoding module (methods.md section 1): n streams per token, a per-layer
// attention kind, optional KV mirroring of the backbone's mirrored layers.
#include <algorithm>
#include <cmath>
#include <ostream>

#include "common.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/params.hpp"

namespace hdlab::model {

const char* to_string(HdLayerKind kind) {
  switch (kind) {
    case HdLayerKind::full: return "full";
    case HdLayerKind::local: return "local";
    case HdLayerKind::intra: return "intra";
  }
  return "?";
}

const char* to_string(RopeConvention c) { return c == RopeConvention::expanded ? "expanded" : "token_index"; }

}  // namespace hdlab::model

namespace hdlab::model::designs {

namespace {

using common::note_default;
using common::num;

HdLayerKind hd_kind_of(const Json& v, const std::string& ptr) {
  std::string s = read_string(v, ptr);
  if (s == "full") return HdLayerKind::full;
  if (s == "local") return HdLayerKind::local;
  if (s == "intra") return HdLayerKind::intra;
  fail(ptr, "must be one of full, local, intra, got \"" + s + "\"");
}

// Which layers a rule object {"full_layers": [...], "full_every": k} makes full.
std::vector<bool> explicit_full_layers(ObjectReader& r, const Backbone& b) {
  const auto L = static_cast<std::size_t>(b.num_layers);
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
  for (std::size_t l = 0; l < L; ++l) full[l] = full[l] || (every > 0 && (l + 1) % static_cast<std::size_t>(every) == 0);
  return full;
}

// Per-layer kinds: one name for all layers, a list per layer, or a rule
// {"sliding": kind for the backbone's sliding layers, "full_every": k (layers with
//  (l+1) % k == 0), "full_layers": [indices], "rest": kind}. Explicit full choices win
// over the sliding mapping, which wins over "rest".
std::vector<HdLayerKind> parse_layers(const Json* layers, const std::string& ptr, const Backbone& b,
                                      DesignDefaults& defaults) {
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
  const std::vector<bool> full = explicit_full_layers(r, b);
  r.finish();
  for (std::size_t l = 0; l < L; ++l) {
    // Chunked layers run full over their chunk (see check_chunked_layers).
    if (full[l] || b.layers[l].kind == AttentionKind::chunked) kinds.push_back(HdLayerKind::full);
    else if (b.layers[l].kind == AttentionKind::sliding) kinds.push_back(sliding);
    else kinds.push_back(rest);
  }
  return kinds;
}

// The backbone's sliding window in tokens (its last sliding layer's); 0 when it has none.
std::int64_t backbone_sliding_window(const Backbone& b) {
  std::int64_t window = 0;
  for (const auto& l : b.layers)
    if (l.kind == AttentionKind::sliding) window = l.window;
  return window;
}

// The local window in expanded positions: given, or the backbone's sliding window x n.
std::int64_t parse_window(ObjectReader& r, const HdDesign& hd, const Backbone& b, DesignDefaults& defaults) {
  bool any_local = false;
  for (auto k : hd.layer_kinds) any_local = any_local || k == HdLayerKind::local;
  const std::int64_t backbone_window = backbone_sliding_window(b);
  if (const Json* w = r.find("window")) {
    const std::int64_t window = read_integer(*w, r.at("window"), 1, Limits::max_window);
    if (!any_local) fail(r.at("window"), "is set but no layer is local");
    return window;
  }
  if (!any_local) return 0;
  if (backbone_window == 0)
    fail(r.at("window"), "is required when a layer is local (the backbone has no sliding window to derive it from)");
  // The backbone's window in tokens covers n times as many expanded positions.
  const std::int64_t window = backbone_window * hd.n;
  defaults[r.at("window")] = num(window) + " expanded positions = the backbone's sliding window (" +
                             num(backbone_window) + " tokens) x n (" + num(hd.n) + ")";
  return window;
}

// HD on the backbone's chunked layers (Llama 4): stream-shared chunking. A chunk is C
// tokens, so C n expanded positions: a query sees every stream of the tokens of its own
// chunk up to itself (the "full" kind cut at chunk boundaries). Intra and local kinds do
// not combine with a chunk, nor do KV-mirror queries; both are refused.
void check_chunked_layers(const HdDesign& hd, const Backbone& b, const std::string& ptr, bool listed) {
  for (std::size_t l = 0; l < hd.layer_kinds.size(); ++l) {
    if (b.layers[l].kind != AttentionKind::chunked) continue;
    if (hd.layer_kinds[l] != HdLayerKind::full)
      fail(listed ? pointer_join(ptr, l) : ptr,
           "layer " + num(static_cast<std::int64_t>(l)) + " is a chunked backbone layer: HD runs it \"full\" within "
           "its chunk (every stream of the chunk's tokens); " + to_string(hd.layer_kinds[l]) + " is not modelled");
    if (hd.kv_mirror && b.is_mirrored(static_cast<std::int64_t>(l)))
      fail(ptr, "KV-mirror queries on chunked layer " + num(static_cast<std::int64_t>(l)) + " are not modelled");
  }
}

}  // namespace

void parse(ObjectReader r, const Backbone& b, DesignDefaults& defaults, HdDesign& hd) {
  hd.n = r.integer("n", std::nullopt, 1, Limits::max_streams);
  hd.layer_kinds = parse_layers(r.find("layers"), r.at("layers"), b, defaults);
  hd.window = parse_window(r, hd, b, defaults);
  // A linear-attention layer has no window: under HD it is cross-stream (full: one recurrent
  // state over the interleaved sequence) or intra-stream (intra: one state per stream).
  for (std::size_t l = 0; l < hd.layer_kinds.size(); ++l)
    if (hd.layer_kinds[l] == HdLayerKind::local && b.is_linear_layer(static_cast<std::int64_t>(l)))
      fail(r.at("layers"), "layer " + std::to_string(l) + " is " + to_string(b.mixer(static_cast<std::int64_t>(l))) +
                               ": HD's local kind (a window) does not "
                           "apply to a recurrent state; use full (one state over the interleaved streams) or intra "
                           "(one state per stream)");
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
  const Json* layers = r.find("layers");
  check_chunked_layers(hd, b, r.at("layers"), layers && (layers->is_array()));
}

Json block_json(const HdDesign& hd) {
  Json kinds = Json::array();
  for (auto k : hd.layer_kinds) kinds.push_back(to_string(k));
  Json o = {{"n", hd.n}, {"layers", kinds}, {"rope", to_string(hd.rope)}, {"kv_mirror", hd.kv_mirror},
            {"rope_theta", hd.rope_theta}};
  if (hd.window > 0) o["window"] = hd.window;
  return o;
}

void describe(const HdDesign& hd, std::ostream& s) {
  std::int64_t counts[3] = {0, 0, 0};
  for (auto k : hd.layer_kinds) counts[static_cast<int>(k)]++;
  s << "hd n=" << hd.n << " (" << counts[2] << " intra, " << counts[1] << " local, " << counts[0] << " full";
  if (counts[1] > 0) s << ", window " << hd.window;
  s << ")";
  if (hd.kv_mirror) s << " kv-mirror";
}

std::string short_label(const HdDesign& hd) { return "HD n=" + num(hd.n); }

// HD designs of one n differ by their layer kinds: the mix, unless every layer is full.
std::string label_detail(const HdDesign& hd) {
  if (std::all_of(hd.layer_kinds.begin(), hd.layer_kinds.end(), [](auto k) { return k == HdLayerKind::full; }))
    return "";
  std::string mix;
  for (HdLayerKind k : {HdLayerKind::intra, HdLayerKind::local, HdLayerKind::full}) {
    const auto count = std::count(hd.layer_kinds.begin(), hd.layer_kinds.end(), k);
    if (count > 0) mix += (mix.empty() ? "" : ", ") + num(count) + " " + to_string(k);
  }
  return mix;
}

DesignFeatures features(const HdDesign& hd) {
  DesignFeatures f;
  f.copies = f.input_tables = hd.n;
  f.streams = true;
  f.final_stream_mirror = hd.kv_mirror;
  f.rope_theta = hd.rope_theta;
  return f;
}

LayerSchedule layer_schedule(const HdDesign&, std::int64_t) { return {}; }
std::vector<LayerRun> layer_runs(const HdDesign&, std::int64_t num_layers) { return common::straight_runs(num_layers); }

LayerAttentionRole layer_role(const HdDesign& hd, const Backbone& b, std::int64_t layer) {
  LayerAttentionRole role = common::backbone_role(b, layer);
  role.stream_kind = hd.layer_kinds[static_cast<std::size_t>(layer)];
  role.final_queries_only = b.is_mirrored(layer) && hd.kv_mirror;
  role.token_index_rope = hd.rope == RopeConvention::token_index && role.stream_kind == HdLayerKind::intra;
  return role;
}

void shape_mask(const HdDesign& hd, const Backbone& b, std::int64_t layer, MaskSpec& m) {
  m.copies = hd.n;
  m.window = 0;
  switch (hd.layer_kinds[static_cast<std::size_t>(layer)]) {
    case HdLayerKind::full: m.kind = MaskSpec::Kind::causal; break;
    case HdLayerKind::local:
      m.kind = MaskSpec::Kind::sliding;
      m.window = hd.window;  // expanded positions
      break;
    case HdLayerKind::intra: m.kind = MaskSpec::Kind::intra; break;
  }
  // Mirrored layers run only the final stream's queries (methods.md section 1).
  m.final_copy_queries_only = hd.kv_mirror && b.is_mirrored(layer);
}

Layout default_layout(const HdDesign&) { return Layout::interleaved; }

void add_params(const HdDesign& hd, const Backbone& b, ParamCounts& p) {
  // One input table per stream; the first is the backbone's own.
  p.embedding_input += (hd.n - 1) * b.padded_input_vocab() * b.hidden;
}

std::optional<std::int64_t> prefill_tail(const HdDesign&, std::int64_t) { return std::nullopt; }

DecodeAttention decode_attention(const HdDesign& hd, const LayerAttentionRole& layer, double c, Layout layout,
                                 bool final_only_decode) {
  const double n = static_cast<double>(hd.n), all = n * c + n;  // entries after appending this step's n
  const double first = layer.final_queries_only && final_only_decode ? n - 1 : 0;  // first stream issuing a query
  DecodeAttention w;
  w.rows_kv = n;
  w.rows_q = n - first;
  w.kv_written = n;
  switch (layer.stream_kind) {
    case HdLayerKind::full: {
      // stream k's query at t = c*n + k sees t + 1 keys (chunked: those of its chunk)
      const double before = layer.base_kind == AttentionKind::chunked ? n * common::chunk_offset(layer, c) : n * c;
      w.pairs_exact = 0;
      for (double k = first; k < n; ++k) w.pairs_exact += before + k + 1;
      w.kv_read = before + n;
      w.pairs_executed = w.rows_q * w.kv_read;
      break;
    }
    case HdLayerKind::intra:
      w.pairs_exact = w.rows_q * (c + 1);
      w.kv_read = w.rows_q * (c + 1);  // each querying stream's own entries
      // Interleaved: every key tile holds every stream, so each row's tiles span all keys.
      w.pairs_executed = layout == Layout::stream_major ? w.pairs_exact : w.rows_q * all;
      break;
    case HdLayerKind::local: {
      const double win = static_cast<double>(hd.window);
      w.pairs_exact = 0;
      for (double k = first; k < n; ++k) w.pairs_exact += std::min(win, n * c + k + 1);
      const double t_min = n * c + first, t_max = n * c + n - 1;
      w.kv_read = t_max - std::max(0.0, t_min - win + 1) + 1;
      w.pairs_executed = w.rows_q * w.kv_read;
      break;
    }
  }
  return w;
}

double kv_entries(const HdDesign& hd, const LayerAttentionRole& layer, double c) {
  const double all = static_cast<double>(hd.n) * c;
  if (layer.base_kind == AttentionKind::chunked) return static_cast<double>(hd.n) * common::chunk_offset(layer, c);
  return layer.stream_kind == HdLayerKind::local ? std::min(all, static_cast<double>(hd.window - 1)) : all;
}

std::optional<SizeKnob> size_knob(const HdDesign& hd) {
  return SizeKnob{"n", "HD streams n", common::with_current({1, 2, 4, 8, 16}, static_cast<double>(hd.n)),
                  static_cast<double>(hd.n)};
}

void set_size(HdDesign& hd, double x) {
  const auto k = static_cast<std::int64_t>(std::llround(x));
  // The window of local layers spans expanded positions; keep its span in tokens.
  if (hd.window > 0 && hd.window % hd.n == 0) hd.window = hd.window / hd.n * k;
  hd.n = k;
}

std::vector<std::string> conformance_examples(const HdDesign&) {
  return {R"({"hd": {"n": 2, "layers": "full"}})", R"({"hd": {"n": 3, "layers": "intra"}})",
          R"({"hd": {"n": 2, "layers": {"full_layers": [0], "rest": "local"}, "window": 5}})",
          R"({"hd": {"n": 2, "layers": "intra", "rope": "token_index"}})"};
}

DesignForm form(const HdDesign&) {
  using common::choice_field, common::flag_field, common::integer_field;
  DesignForm f;
  f.title = "Hidden Decoding (HD)";
  f.layer_kinds = true;
  f.fields.push_back(integer_field("n", "streams n", 1, 1024, 4,
                                   "Streams per token n: each token becomes n positions (t = i*n + k), n embedding "
                                   "tables; loss on the final stream only"));
  f.fields.push_back(integer_field("window", "local window", 0, 2147483647, 0,
                                   "Window of local layers in expanded positions (n positions per token). auto = the "
                                   "backbone's sliding window in tokens x n",
                                   " positions"));
  f.fields.back().min_text = "auto (backbone window x n)";
  f.fields.push_back(choice_field("rope", "RoPE positions",
                                  {{"expanded", "expanded index t"}, {"token_index", "token index i (intra layers)"}},
                                  "expanded",
                                  "RoPE positions of intra-stream layers: the expanded index t = i*n + k, or the "
                                  "token index i (the head-folding implementation)"));
  f.fields.push_back(flag_field("kv_mirror", "KV mirror", false,
                                "Mirrored layers run the final stream only: late layers take K/V from an early "
                                "layer's input; under HD they run only the final stream's queries (needs a backbone "
                                "with KV-mirror layers)", "mirrored layers run the final stream only"));
  f.fields.back().needs_mirror_layers = true;
  FormField theta;
  theta.key = "rope_theta";
  theta.label = "RoPE theta";
  theta.kind = FormField::Kind::real;
  theta.max = 1e12;
  theta.tooltip = "RoPE base under HD; backbone's = the backbone's (raised for larger n in progressive expansion)";
  theta.min_text = "backbone's";
  f.fields.push_back(theta);
  return f;
}

// The window a parser derives is the backbone's in tokens x n, the theta the backbone's:
// shown as "auto" / "backbone's", they follow n and the next backbone.
std::vector<std::string> derived_fields(const HdDesign& hd, const Backbone& b) {
  std::vector<std::string> keys;
  const std::int64_t backbone_window = backbone_sliding_window(b);
  if (backbone_window > 0 && hd.window == backbone_window * hd.n) keys.push_back("window");
  if (hd.rope_theta == b.rope_theta) keys.push_back("rope_theta");
  return keys;
}

}  // namespace hdlab::model::designs
