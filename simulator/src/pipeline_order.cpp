// Per-device task orders of GPipe, 1F1B, interleaved 1F1B and ZB-H1 over any path, looped
// passes included, by list scheduling (pipeline.hpp, "Device order").
#include "pipeline_order.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <queue>
#include <stdexcept>
#include <tuple>

namespace hdlab::simulator::pipeline_detail {

std::optional<std::uint32_t> TaskIds::data_successor(std::uint32_t id) const {
  const std::int64_t mb = microbatch(id), s = step(id);
  if (!is_backward(id)) return s + 1 == steps ? backward(mb, s) : forward(mb, s + 1);
  if (is_weight(id)) return std::nullopt;
  return s == 0 ? std::nullopt : std::optional(backward(mb, s - 1));
}

double TaskIds::duration(std::uint32_t id, const std::vector<PipelineStep>& path) const {
  const std::int64_t s = step(id);
  const PipelineStep& p = path[static_cast<std::size_t>(s)];
  // a blocking send: a forward's to the next step, a backward's (B) to the previous one
  const double send = !blocking_sends || is_weight(id) ? 0.0
                      : !is_backward(id)                 ? (s + 1 < steps ? p.send_s : 0.0)
                                                         : (s > 0 ? path[static_cast<std::size_t>(s - 1)].send_s : 0.0);
  if (!is_backward(id)) return p.forward_s + send;
  if (!weight_tasks) return p.backward_s + send;
  return is_weight(id) ? p.backward_weight_s : p.backward_s - p.backward_weight_s + send;
}

namespace {

// A device's tasks in priority order: forwards visit by visit within micro-batch groups,
// backwards mirrored (last visit first).
struct PriorityLists {
  std::vector<std::uint32_t> forwards, backwards;
};
PriorityLists priority_lists(const PipelineOptions& o, const TaskIds& ids, const std::vector<std::int64_t>& visits) {
  PriorityLists l;
  const auto n = static_cast<std::int64_t>(visits.size());
  l.forwards.reserve(static_cast<std::size_t>(o.microbatches * n));
  l.backwards.reserve(static_cast<std::size_t>(o.microbatches * n));
  for (std::int64_t g0 = 0; g0 < o.microbatches; g0 += o.group) {
    const std::int64_t g1 = std::min(o.microbatches, g0 + o.group);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t mb = g0; mb < g1; ++mb) l.forwards.push_back(ids.forward(mb, visits[static_cast<std::size_t>(j)]));
    for (std::int64_t j = n - 1; j >= 0; --j)
      for (std::int64_t mb = g0; mb < g1; ++mb) l.backwards.push_back(ids.backward(mb, visits[static_cast<std::size_t>(j)]));
  }
  return l;
}

// w: forwards a device may hold beyond the one it runs before a backward must come.
std::int64_t warmup_forwards(const PipelineOptions& o, const TaskIds& ids, const std::vector<std::int64_t>& visits,
                             const PriorityLists& lists, bool plain) {
  const auto forwards = static_cast<std::int64_t>(lists.forwards.size());
  if (o.schedule == ScheduleKind::gpipe) return forwards;
  const std::int64_t steps = ids.steps;
  const auto n = static_cast<std::int64_t>(visits.size());
  const std::int64_t after_last = steps - 1 - visits.back();
  // A plain path (every device visited once): 1F1B's p-1-d. Otherwise (interleaved,
  // loops), for every device: Megatron-LM's interleaved 2(p-1-d) + (v-1) * group, read
  // along the path.
  std::int64_t w = plain ? after_last : 2 * after_last + (n - 1) * std::min(o.group, o.microbatches);
  // Never so few that the k-th backward needs a forward beyond the w + k + 1 this device
  // may have started by then.
  std::vector<std::int64_t> forward_rank(static_cast<std::size_t>(o.microbatches), 0);
  for (std::size_t i = 0; i < lists.forwards.size(); ++i)
    if (ids.step(lists.forwards[i]) == visits.back())
      forward_rank[static_cast<std::size_t>(ids.microbatch(lists.forwards[i]))] = static_cast<std::int64_t>(i);
  for (std::size_t k = 0; k < lists.backwards.size(); ++k)
    w = std::max(w, forward_rank[static_cast<std::size_t>(ids.microbatch(lists.backwards[k]))] - static_cast<std::int64_t>(k));
  return std::min(w, forwards);
}

// Event-driven list scheduling over each device's two priority lists. A free device runs
// the next forward of its list once its data has arrived, while it holds at most w
// forwards without their backward (GPipe: always) and at most u W's not started;
// otherwise the next backward (B) of its list once that one's data has arrived (GPipe:
// only after all its forwards); otherwise its oldest W not started (W's exist under ZB-H1
// only; one that takes no time runs first). With every task arriving on time this is
// Megatron-LM's warm-up / one-forward-one-backward / cool-down order; when a forward is
// late and a backward is there, the device does not sit idle. Should every device wait
// forever on its limit, the lowest-numbered one whose next forward has arrived exceeds it
// once (counted).
class ListScheduler {
 public:
  ListScheduler(const PipelineOptions& o, const TaskIds& ids, const std::vector<PipelineStep>& path,
                std::vector<PriorityLists> lists, DeviceOrders& out)
      : o_(o), ids_(ids), path_(path), out_(out), lists_(std::move(lists)),
        arrived_(static_cast<std::size_t>(o.microbatches) * ids.per_step() * ids.steps, 0), devices_(lists_.size()) {
    for (std::size_t d = 0; d < lists_.size(); ++d) out_.orders[d].reserve(ids.per_step() * lists_[d].forwards.size());
  }

  void run() {
    for (std::int64_t mb = 0; mb < o_.microbatches; ++mb) events_.push({0.0, ready_event, ids_.forward(mb, 0)});
    std::vector<std::size_t> touched;
    while (!events_.empty() || override_limit()) {
      const double now = events_.top().time;
      touched.clear();
      // Everything that happens at `now` lands before any free device chooses.
      while (!events_.empty() && events_.top().time == now) {
        const Event e = events_.top();
        events_.pop();
        touched.push_back(apply(e, now));
      }
      std::sort(touched.begin(), touched.end());
      touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
      for (std::size_t d : touched) try_start(d, now, false);
    }
    for (std::size_t d = 0; d < lists_.size(); ++d)
      if (out_.orders[d].size() != ids_.per_step() * lists_[d].forwards.size())
        throw std::logic_error("pipeline: list scheduling left tasks unscheduled");
  }

 private:
  static constexpr int ready_event = 0, finish_event = 1;
  struct Event {
    double time;
    int kind;
    std::uint32_t task;
    bool operator>(const Event& b) const { return std::tie(time, kind, task) > std::tie(b.time, b.kind, b.task); }
  };
  struct Device {
    std::size_t next_forward = 0, next_backward = 0;  // positions in the priority lists
    std::deque<std::uint32_t> weights;                // W's whose B has ended, oldest first
    bool busy = false;
    double free_at = 0;
    double next_forward_arrival = 0;
    std::int64_t held() const { return static_cast<std::int64_t>(next_forward) - static_cast<std::int64_t>(next_backward); }
  };

  std::size_t device_of(std::uint32_t id) const {
    return static_cast<std::size_t>(path_[static_cast<std::size_t>(ids_.step(id))].device);
  }

  // Applies one event; returns the device that may now choose.
  std::size_t apply(const Event& e, double now) {
    const std::size_t d = device_of(e.task);
    if (e.kind == ready_event) {
      arrived_[e.task] = 1;
      return d;
    }
    devices_[d].busy = false;
    devices_[d].free_at = now;
    if (ids_.weight_tasks && ids_.is_backward(e.task) && !ids_.is_weight(e.task))
      devices_[d].weights.push_back(ids_.weight(ids_.microbatch(e.task), ids_.step(e.task)));
    if (const auto next = ids_.data_successor(e.task)) {
      // The send between steps s and s+1 carries the activation forward and its gradient back.
      const std::int64_t s = ids_.step(e.task);
      const std::int64_t boundary = ids_.is_backward(e.task) ? s - 1 : s;
      const double gap = ids_.step(*next) == s ? 0.0 : ids_.gap(boundary, path_);
      events_.push({now + gap, ready_event, *next});
    }
    return d;
  }

  // The device's next forward, if its data has arrived and the rule lets it run.
  bool forward_allowed(std::size_t d, bool beyond_limit) const {
    const Device& dev = devices_[d];
    const auto& fwd = lists_[d].forwards;
    if (dev.next_forward == fwd.size() || !arrived_[fwd[dev.next_forward]]) return false;
    const auto deferred = static_cast<std::int64_t>(dev.weights.size());
    return o_.schedule == ScheduleKind::gpipe || beyond_limit ||
           (dev.held() <= out_.warmup_forwards[d] && deferred <= out_.deferred_weights[d]);
  }
  bool backward_allowed(std::size_t d) const {
    const Device& dev = devices_[d];
    const auto& bwd = lists_[d].backwards;
    if (dev.next_backward == bwd.size() || !arrived_[bwd[dev.next_backward]]) return false;
    return o_.schedule != ScheduleKind::gpipe || dev.next_forward == lists_[d].forwards.size();
  }

  void try_start(std::size_t d, double now, bool beyond_limit) {
    Device& dev = devices_[d];
    if (dev.busy) return;
    std::uint32_t id;
    const bool instant_weight = !dev.weights.empty() && ids_.duration(dev.weights.front(), path_) == 0;
    if (instant_weight) id = next_weight(dev);
    else if (forward_allowed(d, beyond_limit)) id = lists_[d].forwards[dev.next_forward++];
    else if (backward_allowed(d)) id = lists_[d].backwards[dev.next_backward++];
    else if (!dev.weights.empty()) id = next_weight(dev);
    else return;
    dev.busy = true;
    events_.push({now + ids_.duration(id, path_), finish_event, id});
    out_.orders[d].push_back(id);
  }

  static std::uint32_t next_weight(Device& dev) {
    const std::uint32_t id = dev.weights.front();
    dev.weights.pop_front();
    return id;
  }

  // Nothing left to happen but tasks remain, so every free device waits on its limit
  // with its next forward arrived. The lowest-numbered such device runs it.
  bool override_limit() {
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      if (devices_[d].busy || !forward_allowed(d, true)) continue;
      ++out_.limit_overrides;
      try_start(d, devices_[d].free_at, true);
      return true;
    }
    return false;
  }

  const PipelineOptions& o_;
  const TaskIds& ids_;
  const std::vector<PipelineStep>& path_;
  DeviceOrders& out_;
  std::vector<PriorityLists> lists_;
  std::vector<std::uint8_t> arrived_;
  std::vector<Device> devices_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
};

}  // namespace

DeviceOrders schedule_device_orders(const PipelineOptions& o, const std::vector<PipelineStep>& path) {
  const auto steps = static_cast<std::int64_t>(path.size());
  const TaskIds ids{static_cast<std::uint32_t>(steps), o.schedule == ScheduleKind::zb_h1, o.p2p == P2pSends::blocking};
  std::vector<std::vector<std::int64_t>> visits(static_cast<std::size_t>(o.stages));
  for (std::size_t s = 0; s < path.size(); ++s)
    visits[static_cast<std::size_t>(path[s].device)].push_back(static_cast<std::int64_t>(s));
  bool plain = true;
  for (const auto& v : visits) plain = plain && v.size() == 1;
  DeviceOrders d;
  d.orders.resize(visits.size());
  std::vector<PriorityLists> lists;
  for (const auto& v : visits) {
    lists.push_back(priority_lists(o, ids, v));
    d.warmup_forwards.push_back(warmup_forwards(o, ids, v, lists.back(), plain));
  }
  // ZB-H1: a device may defer as many W's as keeps the steps it holds within the largest
  // warm-up's (1F1B's peak); on a plain path device d defers d.
  const std::int64_t widest = *std::max_element(d.warmup_forwards.begin(), d.warmup_forwards.end());
  for (std::int64_t w : d.warmup_forwards) d.deferred_weights.push_back(ids.weight_tasks ? widest - w : 0);
  ListScheduler(o, ids, path, std::move(lists), d).run();
  return d;
}

}  // namespace hdlab::simulator::pipeline_detail
