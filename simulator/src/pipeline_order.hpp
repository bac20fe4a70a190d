#pragma once
// Internal to the pipeline engine: task ids and the per-device task orders a schedule
// imposes (pipeline.hpp, "Device order").
#include <cstdint>
#include <optional>
#include <vector>

#include "hdlab/simulator/pipeline.hpp"

namespace hdlab::simulator::pipeline_detail {

// Task ids: micro-batch mb owns 2T consecutive ids (T path steps): the forward of step s
// at mb*2T + s, its backward at mb*2T + T + s.
struct TaskIds {
  std::uint32_t steps = 0;
  std::uint32_t forward(std::int64_t mb, std::int64_t s) const {
    return static_cast<std::uint32_t>(mb * 2 * steps + s);
  }
  std::uint32_t backward(std::int64_t mb, std::int64_t s) const {
    return static_cast<std::uint32_t>(mb * 2 * steps + steps + s);
  }
  std::int64_t microbatch(std::uint32_t id) const { return id / (2 * steps); }
  std::int64_t step(std::uint32_t id) const { return id % steps; }
  bool is_backward(std::uint32_t id) const { return id % (2 * steps) >= steps; }
  // The task this one waits for within its micro-batch (none: the first forward).
  std::optional<std::uint32_t> data_predecessor(std::uint32_t id) const;
  // The task that waits for this one (none: the last backward).
  std::optional<std::uint32_t> data_successor(std::uint32_t id) const;
};

struct DeviceOrders {
  std::vector<std::vector<std::uint32_t>> orders;  // per device, in execution order
  std::vector<std::int64_t> warmup_forwards;       // per device, by the schedule's rule
  std::int64_t limit_overrides = 0;                // forwards run beyond the limit to avoid a deadlock
};

// `o.group` must be resolved (> 0). `path` gives each step's device, durations and sends.
DeviceOrders schedule_device_orders(const PipelineOptions& o, const std::vector<PipelineStep>& path);

}  // namespace hdlab::simulator::pipeline_detail
