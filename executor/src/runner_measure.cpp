// Measured runs of the runner (medians per op after warm-up) and their JSON, plus the
// scale-down of a backbone for a run on a small machine.
#include <algorithm>
#include <cmath>

#include "hdlab/executor/measure.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::executor {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::int32_t> random_tokens(std::size_t count, std::uint64_t seed, std::int64_t vocab) {
  std::vector<std::int32_t> out(count);
  const std::vector<float> u = random_floats(count, seed, 0.0f, 1.0f);
  for (std::size_t i = 0; i < count; ++i)
    out[i] = static_cast<std::int32_t>(std::min<std::int64_t>(vocab - 1, static_cast<std::int64_t>(u[i] * static_cast<float>(vocab))));
  return out;
}

OpMeasure median_of(const std::vector<StepProfile>& steps, int group, model::OpKind k) {
  std::vector<double> ms, flops, calls, exact, executed;
  for (const StepProfile& s : steps) {
    const OpMeasure& m = (group < 0 ? s.outside : s.groups[static_cast<std::size_t>(group)])[static_cast<std::size_t>(k)];
    ms.push_back(m.ms);
    flops.push_back(m.flops);
    calls.push_back(m.calls);
    exact.push_back(m.pairs_exact);
    executed.push_back(m.pairs_executed);
  }
  return OpMeasure{median(ms), median(flops), median(calls), median(exact), median(executed)};
}

}  // namespace

double Measurement::op_ms(model::OpKind k) const {
  double t = 0;
  for (const OpStat& s : ops)
    if (s.op == k) t += s.median.ms;
  return t;
}

Measurement measure(Runner& runner, Backend& backend, const MeasureOptions& o) {
  if (o.tokens < 1) throw model::ConfigError("/tokens", "must be >= 1, got " + std::to_string(o.tokens));
  if (o.repeats < 1) throw model::ConfigError("/repeats", "must be >= 1, got " + std::to_string(o.repeats));
  if (o.warmup < 0) throw model::ConfigError("/warmup", "must be >= 0, got " + std::to_string(o.warmup));
  const model::Config& c = runner.config();
  const std::int64_t L = o.tokens, steps = o.warmup + o.repeats;
  auto tokens = random_tokens(static_cast<std::size_t>(L + steps + 1), o.token_seed, c.effective.vocab_size);
  if (!o.prompt.empty()) {
    if (static_cast<std::int64_t>(o.prompt.size()) != L)
      throw model::ConfigError("/prompt", std::to_string(o.prompt.size()) + " tokens, but the run is of " +
                                              std::to_string(L));
    std::copy(o.prompt.begin(), o.prompt.end(), tokens.begin());
  }
  const std::span<const std::int32_t> prompt(tokens.data(), static_cast<std::size_t>(L));
  backend.reset_peak();
  std::vector<StepProfile> kept;
  if (o.phase == Phase::decode) runner.prefill(prompt, L + steps);
  for (std::int64_t i = 0; i < steps; ++i) {
    switch (o.phase) {
      case Phase::train_forward: runner.train_forward(prompt, tokens[static_cast<std::size_t>(L)]); break;
      case Phase::prefill: runner.prefill(prompt, L); break;
      case Phase::decode: runner.decode_step(tokens[static_cast<std::size_t>(L + i)]); break;
    }
    backend.synchronize();
    if (i >= o.warmup) kept.push_back(runner.last_profile());
  }
  Measurement m;
  m.options = o;
  std::vector<double> setup, flops;
  for (const StepProfile& s : kept) {
    m.total_ms.push_back(s.total_ms);
    setup.push_back(s.setup_ms);
    flops.push_back(s.flops_total());
  }
  m.median_ms = median(m.total_ms);
  m.min_ms = *std::min_element(m.total_ms.begin(), m.total_ms.end());
  m.max_ms = *std::max_element(m.total_ms.begin(), m.total_ms.end());
  m.median_setup_ms = median(setup);
  m.flops = median(flops);
  const int groups = static_cast<int>(runner.groups().size());
  for (int g = 0; g <= groups; ++g)
    for (int k = 0; k < model::op_kind_count; ++k) {
      const int group = g < groups ? g : -1;
      const OpMeasure med = median_of(kept, group, static_cast<model::OpKind>(k));
      if (med.calls > 0) m.ops.push_back({group, static_cast<model::OpKind>(k), med});
    }
  const StepProfile& last = kept.back();
  m.rows = last.rows;
  m.loss_rows = last.loss_rows;
  m.context = last.context;
  const MemoryStats mem = backend.memory();
  m.weight_bytes = runner.weights().bytes;
  m.kv_bytes = runner.kv_bytes();
  m.peak_bytes = mem.peak_bytes;
  m.available_bytes = mem.available_bytes;
  m.estimate_bytes =
      estimate_memory(c, RunShape{o.phase, L, o.phase == Phase::decode ? steps : 0}, runner.options()).total();
  return m;
}

nlohmann::json to_json(const Measurement& m, const Runner& runner, const Backend& backend) {
  using Json = nlohmann::json;
  const model::Config& c = runner.config();
  Json ops = Json::array();
  Json totals = Json::object();
  for (const OpStat& s : m.ops) {
    const char* name = model::to_string(s.op);
    Json row = {{"op", name}, {"ms", s.median.ms}, {"flops", s.median.flops}, {"calls", s.median.calls}};
    if (s.group >= 0) {
      const LayerGroup& g = runner.groups()[static_cast<std::size_t>(s.group)];
      row["group"] = g.label;
      row["first_layer"] = g.first_layer;
      row["layers"] = g.layers;
      row["passes"] = g.passes;
    } else {
      row["group"] = "outside";
    }
    if (s.op == model::OpKind::attention) {
      row["pairs_exact"] = s.median.pairs_exact;
      row["pairs_executed"] = s.median.pairs_executed;
    }
    ops.push_back(row);
    if (!totals.contains(name)) totals[name] = {{"ms", 0.0}, {"flops", 0.0}};
    Json& t = totals[name];
    t["ms"] = t["ms"].get<double>() + s.median.ms;
    t["flops"] = t["flops"].get<double>() + s.median.flops;
  }
  const RunOptions& o = runner.options();
  return Json{
      {"model", c.effective.name},
      {"design", model::describe(c.design)},
      {"config", model::to_json(c)},
      {"backend", backend.name()},
      {"device", backend.description()},
      {"dtype", to_string(o.dtype)},
      {"layout", model::to_string(runner.layout())},
      {"tile", {kTileQ, kTileK}},
      {"normalize_topk", o.normalize_topk},
      {"phase", to_string(m.options.phase)},
      {"tokens", m.options.tokens},
      {"warmup", m.options.warmup},
      {"repeats", m.options.repeats},
      {"rows", m.rows},
      {"loss_rows", m.loss_rows},
      {"context", m.context},
      {"time_ms", {{"median", m.median_ms}, {"min", m.min_ms}, {"max", m.max_ms}, {"each", m.total_ms}}},
      {"setup_ms_median", m.median_setup_ms},
      {"flops", m.flops},
      {"flop_per_s", m.median_ms > 0 ? m.flops / (m.median_ms * 1e-3) : 0.0},
      {"memory",
       {{"weights_bytes", m.weight_bytes},
        {"kv_cache_bytes", m.kv_bytes},
        {"peak_bytes", m.peak_bytes},
        {"estimate_bytes", m.estimate_bytes},
        {"available_bytes", m.available_bytes}}},
      {"groups", [&] {
         Json g = Json::array();
         for (const LayerGroup& lg : runner.groups())
           g.push_back({{"label", lg.label}, {"first_layer", lg.first_layer}, {"layers", lg.layers}, {"passes", lg.passes}});
         return g;
       }()},
      {"ops", ops},
      {"op_totals", totals},
  };
}

OutputChange output_change(Runner& changed, Runner& reference, std::span<const std::int32_t> tokens) {
  const std::vector<float> a = changed.backend().download_f32(changed.train_forward(tokens).logits);
  const std::vector<float> b = reference.backend().download_f32(reference.train_forward(tokens).logits);
  if (a.size() != b.size()) throw model::ConfigError("", "output change: the two models' logits differ in shape");
  double max_diff = 0, max_ref = 0, sq_diff = 0, sq_ref = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    max_diff = std::max(max_diff, std::abs(d));
    max_ref = std::max(max_ref, std::abs(static_cast<double>(b[i])));
    sq_diff += d * d;
    sq_ref += static_cast<double>(b[i]) * b[i];
  }
  return OutputChange{max_ref > 0 ? max_diff / max_ref : 0, sq_ref > 0 ? std::sqrt(sq_diff / sq_ref) : 0};
}

bool BackboneScale::empty() const {
  return !layers && !hidden && !heads && !kv_heads && !head_dim && !ffn && !vocab && !experts && !top_k && !expert_ffn &&
         !window;
}

namespace {

// `layers` layers whose attention, mixer and FFN patterns cycle the base's; the sizes of
// a mixer kind no layer keeps are dropped, and an all-attention pattern takes its
// canonical empty form.
void scale_layers(const model::Backbone& base, std::int64_t layers, model::Backbone& b) {
  const auto cycle = [&](const auto& pattern) {
    std::remove_cvref_t<decltype(pattern)> out;
    for (std::int64_t l = 0; l < layers && !pattern.empty(); ++l)
      out.push_back(pattern[static_cast<std::size_t>(l) % pattern.size()]);
    return out;
  };
  b.layers = cycle(base.layers);
  b.mixers = cycle(base.mixers);
  b.ffns = cycle(base.ffns);
  b.num_layers = layers;
  if (b.num_mixer_layers(model::MixerKind::gated_deltanet) == 0) b.gdn.reset();
  if (b.num_mixer_layers(model::MixerKind::mamba2) == 0) b.mamba.reset();
  if (b.num_mixer_layers(model::MixerKind::attention) == layers) b.mixers.clear();
  b.kv_mirror_layers = std::min(base.kv_mirror_layers, layers / 2);
  if (b.moe) b.moe->first_dense_layers = std::min(b.moe->first_dense_layers, layers);
}

// LongRoPE keeps one divisor per rotated pair: a scaled head takes the base's divisors at
// evenly spread pairs (a measurement of time, which the divisors do not change).
void resample_longrope(const model::Backbone& base, model::Backbone& b) {
  model::RopeScaling& s = b.rope_scaling;
  const auto pairs = static_cast<std::size_t>(model::rotary_dims(b) / 2);
  if (s.kind != model::RopeScalingKind::longrope || s.short_factor.size() == pairs) return;
  const std::size_t from = base.rope_scaling.short_factor.size();
  for (auto* list : {&s.short_factor, &s.long_factor}) {
    const std::vector<double> was = *list;
    list->resize(pairs);
    for (std::size_t j = 0; j < pairs; ++j) (*list)[j] = was[j * from / pairs];
  }
}

}  // namespace

model::Backbone scale_backbone(const model::Backbone& base, const BackboneScale& s) {
  if (s.empty()) return base;
  model::Backbone b = base;
  if (s.layers) scale_layers(base, *s.layers, b);
  const bool derived_head_dim = base.head_dim * base.num_heads == base.hidden;
  if (s.hidden) b.hidden = *s.hidden;
  if (s.heads) b.num_heads = *s.heads;
  if (s.kv_heads) b.num_kv_heads = *s.kv_heads;
  if (s.head_dim) b.head_dim = *s.head_dim;
  else if (derived_head_dim && (s.hidden || s.heads) && b.num_heads > 0) b.head_dim = b.hidden / b.num_heads;
  // Partial RoPE keeps its share of the head (Qwen3-Next's quarter), in whole pairs.
  if (base.rotary_dim > 0 && b.head_dim != base.head_dim)
    b.rotary_dim = std::max<std::int64_t>(2, b.head_dim * base.rotary_dim / base.head_dim / 2 * 2);
  resample_longrope(base, b);
  if (s.ffn) b.intermediate = *s.ffn;
  if (s.vocab) b.vocab_size = *s.vocab;
  if (b.moe) {
    if (s.experts) b.moe->num_experts = *s.experts;
    if (s.top_k) b.moe->top_k = *s.top_k;
    if (s.expert_ffn) {
      b.moe->expert_intermediate = *s.expert_ffn;
      if (b.moe->num_shared_experts > 0) b.moe->shared_expert_intermediate = *s.expert_ffn;
    }
  } else if (s.experts || s.top_k || s.expert_ffn) {
    throw model::ConfigError("/backbone/moe", "expert overrides need an MoE backbone");
  }
  if (s.window)
    for (auto& l : b.layers)
      if (l.kind == model::AttentionKind::sliding) l.window = *s.window;
  b.name = base.name + " (scaled)";
  model::validate(b, "/backbone");
  return b;
}

}  // namespace hdlab::executor
