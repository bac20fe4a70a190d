#pragma once
// Internal to the pipeline engine: task ids and the per-device task orders a schedule
// imposes (pipeline.hpp, "Device order").
#include <cstdint>
#include <optional>
#include <vector>

#include "hdlab/simulator/pipeline.hpp"

namespace hdlab::simulator::pipeline_detail {

// Task ids: micro-batch mb owns nT consecutive ids (T path steps; n = 2 tasks per step, 3
// with W tasks): the forward of step s at mb*nT + s, its backward (B) at mb*nT + T + s,
// its W at mb*nT + 2T + s.
struct TaskIds {
  std::uint32_t steps = 0;
  bool weight_tasks = false;  // ZB-H1: each backward split into B and W
  // Blocking sends (PipelineOptions::p2p): a task that sends its output to another device
  // holds its device until the transfer is done, and the data is there when it ends.
  bool blocking_sends = false;
  std::uint32_t per_step() const { return weight_tasks ? 3 : 2; }
  std::uint32_t forward(std::int64_t mb, std::int64_t s) const {
    return static_cast<std::uint32_t>(mb * per_step() * steps + s);
  }
  std::uint32_t backward(std::int64_t mb, std::int64_t s) const {
    return static_cast<std::uint32_t>(mb * per_step() * steps + steps + s);
  }
  std::uint32_t weight(std::int64_t mb, std::int64_t s) const {
    return static_cast<std::uint32_t>(mb * per_step() * steps + 2 * steps + s);
  }
  std::int64_t microbatch(std::uint32_t id) const { return id / (per_step() * steps); }
  std::int64_t step(std::uint32_t id) const { return id % steps; }
  // B and W both: every task after the forwards.
  bool is_backward(std::uint32_t id) const { return id % (per_step() * steps) >= steps; }
  bool is_weight(std::uint32_t id) const { return id % (per_step() * steps) >= 2 * steps; }
  // The task whose end frees the step's activations: W where there is one, else the backward.
  bool releases_activations(std::uint32_t id) const { return weight_tasks ? is_weight(id) : is_backward(id); }
  // The F or B task this one's output feeds (none: the last backward; a W feeds nothing).
  std::optional<std::uint32_t> data_successor(std::uint32_t id) const;
  // Seconds the task runs: the step's forward, its backward (less W where W is split off) or W.
  double duration(std::uint32_t id, const std::vector<PipelineStep>& path) const;
  // Seconds between the end of a task that sends across `boundary` (the cut after that
  // step) and its receiver's earliest start: the transfer, or 0 where the send blocked.
  double gap(std::int64_t boundary, const std::vector<PipelineStep>& path) const {
    return blocking_sends ? 0.0 : path[static_cast<std::size_t>(boundary)].send_s;
  }
};

struct DeviceOrders {
  std::vector<std::vector<std::uint32_t>> orders;  // per device, in execution order
  std::vector<std::int64_t> warmup_forwards;       // per device, by the schedule's rule
  std::vector<std::int64_t> deferred_weights;      // per device, u (ZB-H1; 0 otherwise)
  std::int64_t limit_overrides = 0;                // forwards run beyond the limit to avoid a deadlock
};

// `o.group` must be resolved (> 0). `path` gives each step's device, durations and sends.
DeviceOrders schedule_device_orders(const PipelineOptions& o, const std::vector<PipelineStep>& path);

}  // namespace hdlab::simulator::pipeline_detail
