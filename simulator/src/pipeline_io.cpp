// Pipeline options from JSON, results to JSON, sweep columns, text Gantt (pipeline_io.hpp).
#include "hdlab/simulator/pipeline_io.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "hdlab/model/json_reader.hpp"

namespace hdlab::simulator {

using nlohmann::json;

ScheduleSpec parse_schedule(const std::string& text, const std::string& pointer) {
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  ScheduleSpec spec;
  if (name == "gpipe") spec.kind = ScheduleKind::gpipe;
  else if (name == "1f1b") spec.kind = ScheduleKind::one_f_one_b;
  else if (name == "interleaved") spec.kind = ScheduleKind::interleaved;
  else if (name == "zb-h1") spec.kind = ScheduleKind::zb_h1;
  else model::fail(pointer, "unknown schedule \"" + text + "\"; use gpipe, 1f1b, zb-h1, interleaved or interleaved:<v>");
  if (colon == std::string::npos) return spec;
  const std::string v = text.substr(colon + 1);
  if (spec.kind != ScheduleKind::interleaved)
    model::fail(pointer, "only the interleaved schedule takes virtual stages (\"interleaved:" + v + "\")");
  const bool digits = !v.empty() && v.size() <= 6 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoll(v) < 1)
    model::fail(pointer, "virtual stages in \"" + text + "\" must be a positive integer");
  spec.virtual_stages = std::stoll(v);
  return spec;
}

std::string schedule_label(const PipelineOptions& o) {
  if (o.schedule == ScheduleKind::interleaved) return fmt::format("interleaved:{}", o.virtual_stages);
  return to_string(o.schedule);
}

namespace {

void read_partition(model::ObjectReader& r, PipelineOptions& o) {
  const json* p = r.find("partition");
  if (!p) return;
  const std::string at = r.at("partition");
  if (p->is_string()) {
    const std::string s = p->get<std::string>();
    if (s == "balanced") o.partition = PartitionPolicy::balanced;
    else if (s == "uniform") o.partition = PartitionPolicy::uniform;
    else model::fail(at, "must be \"balanced\", \"uniform\" or a list of layers per chunk, got \"" + s + "\"");
    return;
  }
  if (!p->is_array())
    model::fail(at, "must be \"balanced\", \"uniform\" or a list of layers per chunk, got " + model::json_type_name(*p));
  o.partition = PartitionPolicy::explicit_counts;
  for (std::size_t i = 0; i < p->size(); ++i)
    o.layers_per_chunk.push_back(model::read_integer((*p)[i], model::pointer_join(at, i), 1, 1 << 20));
}

}  // namespace

PipelineOptions parse_pipeline_options(const json& j, const std::string& pointer) {
  model::ObjectReader r(j, pointer);
  PipelineOptions o;
  o.stages = r.integer("pp", std::nullopt, 1, 4096);
  o.microbatches = r.integer("microbatches", std::nullopt, 1, 1 << 20);
  const ScheduleSpec spec = parse_schedule(r.string("schedule", "1f1b"), r.at("schedule"));
  o.schedule = spec.kind;
  const std::int64_t v = r.integer("virtual_stages", 0, 1, 4096);
  if (spec.kind != ScheduleKind::interleaved && v > 1)
    model::fail(r.at("virtual_stages"), "applies to the interleaved schedule only");
  if (spec.virtual_stages > 0 && v > 0 && spec.virtual_stages != v)
    model::fail(r.at("virtual_stages"), fmt::format("is {} but the schedule says interleaved:{}", v, spec.virtual_stages));
  if (spec.kind == ScheduleKind::interleaved) o.virtual_stages = spec.virtual_stages > 0 ? spec.virtual_stages : (v > 0 ? v : 2);
  o.group = r.integer("group", 0, 0, 1 << 20);
  o.p2p = r.choice<P2pSends>("p2p", {{"async", P2pSends::async}, {"blocking", P2pSends::blocking}}, o.p2p);
  read_partition(r, o);
  r.finish();
  return o;
}

json to_json(const PipelineOptions& o) {
  json j = {{"pp", o.stages},           {"microbatches", o.microbatches},
            {"schedule", schedule_label(o)}, {"virtual_stages", o.virtual_stages},
            {"group", o.group},           {"p2p", to_string(o.p2p)}};
  if (o.partition == PartitionPolicy::explicit_counts) j["partition"] = o.layers_per_chunk;
  else j["partition"] = to_string(o.partition);
  return j;
}

json to_json(const PipelineMetrics& m) {
  return {{"makespan_s", m.makespan_s},
          {"bubble_fraction", m.bubble_fraction},
          {"imbalance_ratio", m.imbalance},
          {"ideal_makespan_s", m.ideal_makespan_s},
          {"update_s", m.update_s},
          {"optimizer_s", m.optimizer_s},
          {"dp_reduce_s", m.dp_reduce_s},
          {"framework_s", m.framework_s},
          {"step_s", m.step_s},
          {"peak_activation_bytes", m.peak_activation_bytes},
          {"peak_activation_device", m.peak_activation_device},
          {"tokens_per_s", m.tokens_per_s},
          {"steps_per_microbatch", m.steps_per_microbatch},
          {"transfers_per_microbatch", m.transfers_per_microbatch},
          {"transfer_s_per_microbatch", m.transfer_s_per_microbatch},
          {"backward_weight_s_per_microbatch", m.backward_weight_s_per_microbatch},
          {"tasks", m.tasks},
          {"limit_overrides", m.limit_overrides}};
}

namespace {

json chunk_json(const PipelineChunk& c) {
  return {{"device", c.device},       {"first_layer", c.first_layer}, {"layers", c.layer_count},
          {"embedding", c.embedding}, {"head", c.head},               {"forward_s", c.forward_s},
          {"backward_s", c.backward_s}, {"backward_weight_s", c.backward_weight_s},
          {"activation_bytes", c.activation_bytes}};
}

json step_json(const PipelineStep& s) {
  json j = {{"chunk", s.chunk},           {"device", s.device},       {"first_layer", s.first_layer},
            {"last_layer", s.last_layer}, {"layer_passes", s.layer_passes}, {"forward_s", s.forward_s},
            {"backward_s", s.backward_s}, {"backward_weight_s", s.backward_weight_s},
            {"activation_bytes", s.activation_bytes}, {"send_s", s.send_s}};
  if (s.first_iteration >= 0) j["iterations"] = {s.first_iteration, s.last_iteration};
  return j;
}

json device_json(const PipelineDevice& d) {
  return {{"busy_s", d.busy_s},
          {"stage_time_s", d.stage_time_s},
          {"peak_activation_bytes", d.peak_activation_bytes},
          {"peak_inflight_microbatches", d.peak_inflight_microbatches},
          {"warmup_forwards", d.warmup_forwards},
          {"deferred_weights", d.deferred_weights},
          {"tasks", d.tasks},
          {"weight_bytes", d.weight_bytes},
          {"grad_bytes", d.grad_bytes},
          {"optimizer_bytes", d.optimizer_bytes},
          {"memory_bytes", d.memory_bytes()}};
}

}  // namespace

json to_json(const PipelineResult& r, bool timeline) {
  json j;
  j["options"] = to_json(r.options);
  j["metrics"] = to_json(r.metrics);
  j["partition"] = {{"imbalance_ratio", r.partition.imbalance}, {"chunks", json::array()}};
  for (const auto& c : r.partition.chunks) j["partition"]["chunks"].push_back(chunk_json(c));
  j["path"] = json::array();
  for (const auto& s : r.path) j["path"].push_back(step_json(s));
  j["devices"] = json::array();
  for (const auto& d : r.devices) j["devices"].push_back(device_json(d));
  if (!timeline) return j;
  json& tasks = j["timeline"] = json::array();
  for (const auto& t : r.tasks)
    tasks.push_back({{"device", t.device},
                     {"microbatch", t.microbatch},
                     {"pass", t.weight ? "weight" : t.backward ? "backward" : "forward"},
                     {"step", t.step},
                     {"start_s", t.start_s},
                     {"end_s", t.end_s}});
  return j;
}

std::vector<std::string> pipeline_metric_columns() {
  return {"pipeline_makespan_s",
          "pipeline_bubble_fraction",
          "pipeline_imbalance_ratio",
          "pipeline_ideal_makespan_s",
          "pipeline_step_s",
          "pipeline_peak_activation_bytes",
          "pipeline_tokens_per_s",
          "pipeline_steps_per_microbatch",
          "pipeline_transfer_s_per_microbatch"};
}

void pipeline_metric_row(const PipelineMetrics& m, std::vector<double>& row) {
  row = {m.makespan_s,
         m.bubble_fraction,
         m.imbalance,
         m.ideal_makespan_s,
         m.step_s,
         m.peak_activation_bytes,
         m.tokens_per_s,
         static_cast<double>(m.steps_per_microbatch),
         m.transfer_s_per_microbatch};
}

std::string pipeline_gantt(const PipelineResult& r, int width) {
  if (width < 1 || r.metrics.makespan_s <= 0) return {};
  for (const auto& d : r.devices)
    if (d.tasks > width) return {};
  const double scale = static_cast<double>(width) / r.metrics.makespan_s;  // columns per second
  std::vector<std::string> rows(r.devices.size(), std::string(static_cast<std::size_t>(width), '.'));
  for (const auto& t : r.tasks) {
    // Every task gets at least one column; a later task may share the last one.
    const int c0 = std::min(width - 1, static_cast<int>(std::lround(t.start_s * scale)));
    const int c1 = std::max(c0 + 1, std::min(width, static_cast<int>(std::lround(t.end_s * scale))));
    const char c = t.weight ? static_cast<char>('0' + t.microbatch % 10)
                            : static_cast<char>((t.backward ? 'A' : 'a') + t.microbatch % 26);
    std::fill(rows[static_cast<std::size_t>(t.device)].begin() + c0, rows[static_cast<std::size_t>(t.device)].begin() + c1, c);
  }
  std::string out;
  const int label = static_cast<int>(std::to_string(r.devices.size() - 1).size());
  for (std::size_t d = 0; d < rows.size(); ++d) out += fmt::format("dev {:>{}} |{}|\n", d, label, rows[d]);
  // Time axis: "0 s" under the first column, the makespan ending under the last.
  out += fmt::format("{:>{}}0 s{:>{}}\n", "", label + 6, fmt::format("{:.4g} s", r.metrics.makespan_s), width - 3);
  return out;
}

}  // namespace hdlab::simulator
