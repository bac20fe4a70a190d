#include "hdlab/model/schedule.hpp"

#include <algorithm>
#include <variant>

namespace hdlab::model {

namespace {

// One overload per design and no catch-all, so std::visit fails to compile for a design
// added to Method without its entry here.
struct CopiesPerToken {
  std::int64_t operator()(const BaselineDesign&) const { return 1; }
  std::int64_t operator()(const HdDesign& hd) const { return hd.n; }
  std::int64_t operator()(const PhdDesign& phd) const { return phd.K; }
  std::int64_t operator()(const VwnDesign&) const { return 1; }
  std::int64_t operator()(const LoopedDesign&) const { return 1; }
};

struct ScheduleOfLayer {
  std::int64_t layer;
  LayerSchedule operator()(const BaselineDesign&) const { return {}; }
  LayerSchedule operator()(const HdDesign&) const { return {}; }
  LayerSchedule operator()(const PhdDesign&) const { return {}; }
  LayerSchedule operator()(const VwnDesign&) const { return {}; }
  // Prelude layers [0, P), the recurrent block [P, P+R) run K times, coda after.
  LayerSchedule operator()(const LoopedDesign& loop) const {
    if (layer < loop.prelude) return {LoopRole::prelude, 1, 1};
    if (layer >= loop.prelude + loop.recurrent) return {LoopRole::coda, 1, 1};
    return {LoopRole::recurrent, loop.iterations, loop.kv == LoopKv::per_iteration ? loop.iterations : 1};
  }
};

// Each layer once, its cache the layer's own.
std::vector<LayerRun> straight_runs(std::int64_t num_layers) {
  std::vector<LayerRun> runs;
  for (std::int64_t l = 0; l < num_layers; ++l) runs.push_back(LayerRun{l, 0, l, false, true, false});
  return runs;
}

struct RunsOf {
  std::int64_t num_layers;
  std::vector<LayerRun> operator()(const BaselineDesign&) const { return straight_runs(num_layers); }
  std::vector<LayerRun> operator()(const HdDesign&) const { return straight_runs(num_layers); }
  std::vector<LayerRun> operator()(const PhdDesign&) const { return straight_runs(num_layers); }
  std::vector<LayerRun> operator()(const VwnDesign&) const { return straight_runs(num_layers); }
  std::vector<LayerRun> operator()(const LoopedDesign& loop) const {
    const std::int64_t P = loop.prelude, R = loop.recurrent, K = loop.iterations;
    const bool shared = loop.kv == LoopKv::shared;
    const std::int64_t sets = shared ? 1 : K;
    std::vector<LayerRun> runs;
    for (std::int64_t l = 0; l < P; ++l) runs.push_back(LayerRun{l, 0, l, false, true, false});
    for (std::int64_t it = 0; it < K; ++it)
      for (std::int64_t l = P; l < P + R; ++l)
        runs.push_back(LayerRun{l, it, P + (shared ? 0 : it) * R + (l - P), l == P && loop.input_injection,
                                !shared || it == K - 1, shared && it > 0});
    for (std::int64_t l = P + R; l < num_layers; ++l)
      runs.push_back(LayerRun{l, 0, P + sets * R + (l - P - R), false, true, false});
    return runs;
  }
};

}  // namespace

const char* to_string(LoopRole r) {
  switch (r) {
    case LoopRole::none: return "";
    case LoopRole::prelude: return "prelude";
    case LoopRole::recurrent: return "recurrent";
    case LoopRole::coda: return "coda";
  }
  return "?";
}

std::int64_t copies_per_token(const Method& m) { return std::visit(CopiesPerToken{}, m); }

LayerSchedule layer_schedule(const Method& m, std::int64_t layer) { return std::visit(ScheduleOfLayer{layer}, m); }

std::int64_t kv_cache_positions(const MaskSpec& m, std::int64_t max_tokens) {
  const std::int64_t all = max_tokens * m.copies;
  switch (m.kind) {
    case MaskSpec::Kind::causal:
    case MaskSpec::Kind::intra: return all;
    case MaskSpec::Kind::sliding: return std::min(all, 2 * (m.window + m.copies));
    case MaskSpec::Kind::phd: return max_tokens + m.phd_W + m.copies;
  }
  return all;
}

std::int64_t kv_positions_per_sequence(const Config& c, std::int64_t max_tokens) {
  std::int64_t positions = 0;
  for (std::int64_t l = 0; l < c.effective.num_layers; ++l)
    positions += layer_schedule(c.design.method, l).kv_caches * kv_cache_positions(layer_mask(c, l, 1), max_tokens);
  return positions;
}

std::vector<LayerRun> layer_runs(const Method& m, std::int64_t num_layers) { return std::visit(RunsOf{num_layers}, m); }

}  // namespace hdlab::model
