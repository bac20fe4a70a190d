// Schedules as a task DAG in Boost.Graph, solved by longest path (pipeline.hpp).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/exception.hpp>
#include <boost/graph/topological_sort.hpp>

#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/pipeline.hpp"
#include "hdlab/simulator/resources.hpp"
#include "pipeline_order.hpp"

namespace hdlab::simulator {

namespace {

using pipeline_detail::TaskIds;

// A task list bigger than this is refused before anything is allocated.
constexpr std::int64_t max_tasks = std::int64_t{1} << 24;
// Peak memory per task while the step is simulated: about 90 bytes measured (Qwen3-8B,
// pp 4, 8M tasks: durations, edge list, the CSR graph, start times, the timeline), with
// room for the edge list's growth. A step whose tasks exceed the memory budget is
// refused before anything is allocated.
constexpr double bytes_per_task = 128;

// Nodes are tasks (TaskIds numbering); an edge's property is the gap in seconds between
// its source's end and its target's earliest start (a transfer, or 0).
using TaskGraph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, double,
                                                     boost::no_property, std::uint32_t, std::uint32_t>;

struct EdgeList {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  std::vector<double> gap_s;
  void add(std::uint32_t from, std::uint32_t to, double gap) {
    edges.emplace_back(from, to);
    gap_s.push_back(gap);
  }
};

// Data edges of every micro-batch: forward steps in path order, the loss turning into
// the backward on the last step, backward steps in reverse, each crossing of devices
// carrying its transfer time; a step's W (ZB-H1) after its B, on the same device.
void add_data_edges(EdgeList& e, const std::vector<PipelineStep>& path, const TaskIds& ids, std::int64_t m) {
  const auto steps = static_cast<std::int64_t>(path.size());
  for (std::int64_t mb = 0; mb < m; ++mb) {
    for (std::int64_t s = 0; s + 1 < steps; ++s) {
      const double gap = ids.gap(s, path);
      e.add(ids.forward(mb, s), ids.forward(mb, s + 1), gap);
      e.add(ids.backward(mb, s + 1), ids.backward(mb, s), gap);
    }
    e.add(ids.forward(mb, steps - 1), ids.backward(mb, steps - 1), 0.0);
    if (ids.weight_tasks)
      for (std::int64_t s = 0; s < steps; ++s) e.add(ids.backward(mb, s), ids.weight(mb, s), 0.0);
  }
}

// The order each device runs its tasks in: one edge per consecutive pair.
void add_device_edges(EdgeList& e, const std::vector<std::vector<std::uint32_t>>& orders) {
  for (const auto& order : orders)
    for (std::size_t i = 0; i + 1 < order.size(); ++i) e.add(order[i], order[i + 1], 0.0);
}

// Longest path: every task starts when its last predecessor has ended (plus transfer).
std::vector<double> solve_start_times(const EdgeList& e, const std::vector<double>& duration) {
  const auto n = static_cast<std::uint32_t>(duration.size());
  const TaskGraph g(boost::edges_are_unsorted_multi_pass, e.edges.begin(), e.edges.end(), e.gap_s.begin(), n);
  std::vector<std::uint32_t> reverse_topological;
  reverse_topological.reserve(n);
  try {
    boost::topological_sort(g, std::back_inserter(reverse_topological));
  } catch (const boost::not_a_dag&) {
    throw std::logic_error("pipeline: the schedule's device orders deadlock (the task graph has a cycle)");
  }
  std::vector<double> start(n, 0.0);
  for (auto it = reverse_topological.rbegin(); it != reverse_topological.rend(); ++it) {
    const std::uint32_t u = *it;
    const double end = start[u] + duration[u];
    auto [edge, last] = boost::out_edges(u, g);
    for (; edge != last; ++edge) {
      const std::uint32_t v = boost::target(*edge, g);
      start[v] = std::max(start[v], end + g[*edge]);
    }
  }
  return start;
}

// Walks a device's execution order: activation bytes held from a forward's start to its
// backward's end (ZB-H1: its W's end), and the micro-batches holding any. `held_steps`
// is all zeros on entry and on return.
void account_memory(PipelineDevice& dev, const std::vector<std::uint32_t>& order, const TaskIds& ids,
                    const std::vector<PipelineStep>& path, std::vector<std::int32_t>& held_steps) {
  double held = 0;
  std::int64_t inflight = 0;
  for (std::uint32_t id : order) {
    const double bytes = path[static_cast<std::size_t>(ids.step(id))].activation_bytes;
    std::int32_t& count = held_steps[static_cast<std::size_t>(ids.microbatch(id))];
    if (!ids.is_backward(id)) {
      held += bytes;
      if (count++ == 0) ++inflight;
      dev.peak_activation_bytes = std::max(dev.peak_activation_bytes, held);
      dev.peak_inflight_microbatches = std::max(dev.peak_inflight_microbatches, inflight);
    } else if (ids.releases_activations(id)) {
      held -= bytes;
      if (--count == 0) --inflight;
    }
  }
}

PipelineMetrics summarize(const PipelineResult& r, const PipelineWorkload& w) {
  PipelineMetrics m;
  double busy = 0;
  for (const PipelineTask& t : r.tasks) m.makespan_s = std::max(m.makespan_s, t.end_s);
  for (std::size_t d = 0; d < r.devices.size(); ++d) {
    busy += r.devices[d].busy_s;
    if (r.devices[d].peak_activation_bytes > m.peak_activation_bytes) {
      m.peak_activation_bytes = r.devices[d].peak_activation_bytes;
      m.peak_activation_device = static_cast<std::int64_t>(d);
    }
  }
  const auto p = static_cast<double>(r.devices.size());
  m.bubble_fraction = m.makespan_s > 0 ? 1.0 - busy / (p * m.makespan_s) : 0.0;
  m.imbalance = r.partition.imbalance;
  m.ideal_makespan_s = busy / p;
  m.step_s = m.makespan_s;
  if (m.makespan_s > 0)
    m.tokens_per_s = w.tokens_per_microbatch * static_cast<double>(r.options.microbatches) / m.makespan_s;
  m.steps_per_microbatch = static_cast<std::int64_t>(r.path.size());
  for (std::size_t s = 0; s + 1 < r.path.size(); ++s)
    if (r.path[s].device != r.path[s + 1].device) {
      m.transfers_per_microbatch += 2;
      m.transfer_s_per_microbatch += 2 * r.path[s].send_s;
    }
  for (const PipelineStep& s : r.path) m.backward_weight_s_per_microbatch += s.backward_weight_s;
  m.tasks = static_cast<std::int64_t>(r.tasks.size());
  return m;
}

// Fills the timeline and the per-device figures from the solved start times.
void record_timeline(PipelineResult& r, const pipeline_detail::DeviceOrders& orders, const TaskIds& ids,
                     const std::vector<double>& duration, const std::vector<double>& start) {
  r.tasks.reserve(duration.size());
  r.devices.assign(orders.orders.size(), PipelineDevice{});
  std::vector<std::int32_t> held_steps(static_cast<std::size_t>(r.options.microbatches), 0);
  for (std::size_t d = 0; d < orders.orders.size(); ++d) {
    PipelineDevice& dev = r.devices[d];
    const auto& order = orders.orders[d];
    dev.warmup_forwards = orders.warmup_forwards[d];
    dev.deferred_weights = orders.deferred_weights[d];
    dev.stage_time_s = r.partition.device_time_s[d];
    dev.tasks = static_cast<std::int64_t>(order.size());
    for (std::uint32_t id : order) {
      dev.busy_s += duration[id];
      r.tasks.push_back({static_cast<std::int32_t>(d), static_cast<std::int32_t>(ids.microbatch(id)),
                         static_cast<std::int32_t>(ids.step(id)), ids.is_backward(id), start[id],
                         start[id] + duration[id], ids.is_weight(id)});
    }
    account_memory(dev, order, ids, r.path, held_steps);
  }
}

}  // namespace

PipelineResult simulate_pipeline(const PipelineWorkload& w, const PipelineOptions& options,
                                 const std::string& pointer) {
  check_pipeline(w, options, pointer);
  PipelineResult r;
  r.options = options;
  if (r.options.group == 0)
    r.options.group = options.schedule == ScheduleKind::gpipe ? options.microbatches
                                                               : std::min(options.stages, options.microbatches);
  const PipelineOptions& o = r.options;
  r.partition = partition_stages(w, o);
  r.path = microbatch_path(w, r.partition);
  const auto steps = static_cast<std::int64_t>(r.path.size());
  const TaskIds ids{static_cast<std::uint32_t>(steps), o.schedule == ScheduleKind::zb_h1, o.p2p == P2pSends::blocking};
  const std::int64_t per_microbatch = ids.per_step() * steps;
  const std::int64_t tasks = o.microbatches * per_microbatch;
  if (tasks > max_tasks)
    model::fail(pointer + "/microbatches", std::to_string(o.microbatches) + " micro-batches x " +
                                               std::to_string(per_microbatch) + " tasks each exceed the limit of " +
                                               std::to_string(max_tasks) + " tasks");
  require_memory(static_cast<double>(tasks) * bytes_per_task, pointer + "/microbatches",
                 std::to_string(o.microbatches) + " micro-batches x " + std::to_string(per_microbatch) + " tasks each",
                 "use fewer micro-batches");
  std::vector<double> duration(static_cast<std::size_t>(tasks));
  for (std::uint32_t id = 0; id < duration.size(); ++id) duration[id] = ids.duration(id, r.path);

  const pipeline_detail::DeviceOrders orders = pipeline_detail::schedule_device_orders(o, r.path);
  EdgeList edges;
  edges.edges.reserve(static_cast<std::size_t>(2 * tasks));
  edges.gap_s.reserve(static_cast<std::size_t>(2 * tasks));
  add_data_edges(edges, r.path, ids, o.microbatches);
  add_device_edges(edges, orders.orders);
  const std::vector<double> start = solve_start_times(edges, duration);

  record_timeline(r, orders, ids, duration, start);
  r.metrics = summarize(r, w);
  r.metrics.limit_overrides = orders.limit_overrides;
  return r;
}

}  // namespace hdlab::simulator
