#include "hdlab/model/schedule.hpp"

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

}  // namespace hdlab::model
