// hdlab pipeline MODEL --design D --hw H --pp P --microbatches M --schedule gpipe|1f1b|zb-h1|interleaved[:v]
// One training step of a design under pipeline parallelism: stage partition, per-device
// busy time and activation memory, makespan and bubble, a text Gantt chart for small
// cases; --json prints everything, the timeline (every task's device, start, end) too.
//
// The per-layer costs come from the cost model (simulator/pipeline_cost.hpp) for one
// micro-batch of the training scenario: --scenario FILE and the options below set it.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "hdlab/model/error.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"
#include "hdlab/simulator/pipeline_io.hpp"
#include "hdlab/simulator/resources.hpp"
#include "verbs.hpp"

namespace hdlab::cli {

namespace {

using nlohmann::json;

// Scenario fields the pipeline depends on, settable one by one.
constexpr ScenarioFlag kScenarioFlags[] = {
    {"--seq-len", "/train/seq_len", "training sequence length [tokens]"},
    {"--micro-batch", "/train/micro_batch", "sequences per micro-batch [seqs]"},
    {"--recompute", "/train/recompute", "none | selective | full"},
    {"--grad-accumulation", "/train/grad_accumulation",
     "fused | separate | autocast: micro-steps' weight gradients added in the products, by a pass over "
     "them each, or by PyTorch autocast + autograd (parameters cast every forward)"},
    {"--tp", "/parallel/tp", "tensor-parallel devices per stage"},
    {"--ep", "/parallel/ep", "expert-parallel devices (divides dp)"},
    {"--dp", "/parallel/dp", "data-parallel replicas of the pipeline"},
    {"--cp", "/parallel/cp", "context-parallel devices per stage a sequence splits over"},
    {"--cp-comm", "/parallel/cp_comm", "all_gather | ring: how context-parallel ranks exchange K/V"},
    {"--gpus-per-node", "/parallel/gpus_per_node", "devices sharing NVLink"},
    {"--framework-train-step", "/framework/train_step_s", "framework overhead per optimizer step [s]"},
    {"--weights-dtype", "/precision/weights", "weights' precision: model | bf16 | fp16 | fp32 | fp8"},
    {"--activations-dtype", "/precision/activations", "activations' precision (attention runs in it)"},
    {"--compute-dtype", "/precision/compute", "weight products' matrix precision"},
    {"--comm-dtype", "/precision/communication", "collectives', transfers' and gradients' precision"},
    {"--optimizer-dtype", "/precision/optimizer_state", "Adam state precision (default fp32)"},
};

struct Options {
  ModelOptions model;
  std::string hardware;
  ScenarioOptions scenario;
  std::int64_t pp = 0;
  std::int64_t microbatches = 0;
  std::string schedule = "1f1b";
  std::int64_t group = 0;
  std::string partition = "balanced";
  std::string p2p = "async";
  int gantt_width = 100;
  bool json = false;
  bool no_timeline = false;
  std::map<std::string, CLI::Option*> given;  // the pipeline flags, to tell given from default
  bool session_pipeline = false;               // MODEL is a session file with "pipeline"
};

// The engine names option errors by JSON pointer; on the command line the flag says more.
// A value from a session file (its flag not given) keeps its pointer, prefixed with the file.
[[noreturn]] void rethrow_as_flag(const model::ConfigError& e, const Options& o) {
  static const std::pair<const char*, const char*> flags[] = {
      {"/pipeline/pp", "--pp"}, {"/pipeline/microbatches", "--microbatches"}, {"/pipeline/schedule", "--schedule"},
      {"/pipeline/virtual_stages", "--schedule"}, {"/pipeline/group", "--group"}, {"/pipeline/partition", "--partition"},
      {"/pipeline/p2p", "--p2p"}};
  for (const auto& [pointer, flag] : flags) {
    if (e.pointer().rfind(pointer, 0) != 0) continue;
    const std::string rest = e.pointer().substr(std::strlen(pointer));  // "/3": an entry of a list
    if (o.session_pipeline && o.given.count(flag) > 0 && o.given.at(flag)->count() == 0)
      throw model::ConfigError(o.model.model_path + ":" + e.pointer(), e.reason());
    throw model::ConfigError(flag, rest.empty() ? e.reason() : "entry " + rest.substr(1) + " " + e.reason());
  }
  throw e;
}

// --partition: balanced | uniform | a comma-separated list of layers per chunk.
json partition_json(const std::string& text) {
  if (text == "balanced" || text == "uniform") return text;
  json counts = json::array();
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) counts.push_back(scalar_json(item));
  return counts;
}

// The options from the flags, laid over the session's "pipeline" object when MODEL is a
// session file (a flag given wins); --pp and --microbatches are required without one.
simulator::PipelineOptions pipeline_options(const Options& o, const json* session) {
  json j = session ? *session : json::object();
  auto given = [&](const char* flag) { return o.given.count(flag) > 0 && o.given.at(flag)->count() > 0; };
  for (const char* flag : {"--pp", "--microbatches"})
    if (!given(flag) && !j.contains(flag + 2))
      throw model::ConfigError(flag, "is required (or a session file as the model, with \"pipeline\")");
  if (given("--pp")) j["pp"] = o.pp;
  if (given("--microbatches")) j["microbatches"] = o.microbatches;
  if (given("--schedule")) {
    j["schedule"] = o.schedule;
    j.erase("virtual_stages");  // the flag's ":v" says it
  } else if (!session) {
    j["schedule"] = o.schedule;
  }
  if (given("--group") || !session) j["group"] = o.group;
  if (given("--partition") || !session) j["partition"] = partition_json(o.partition);
  if (given("--p2p") || !session) j["p2p"] = o.p2p;
  try {
    return simulator::parse_pipeline_options(j);
  } catch (const model::ConfigError& e) {
    rethrow_as_flag(e, o);
  }
}

// The JSON timeline holds one object per task: about 970 bytes each measured (nlohmann
// objects of six fields), 1 KiB counted.
constexpr double json_bytes_per_task = 1024;

// Simulates the step; with --json and the timeline, first refuses a step whose timeline
// would not fit in memory (the tasks are counted from the path, before any is built).
simulator::PipelineResult simulate(const Options& o, const model::Config& config, const simulator::HardwareProfile& hw,
                                   const simulator::Scenario& scenario, const simulator::PipelineOptions& options) {
  try {
    if (o.json && !o.no_timeline) {
      const simulator::PipelineWorkload w = simulator::pipeline_workload(config, hw, scenario, options.stages);
      simulator::check_pipeline(w, options);
      const auto steps = static_cast<double>(simulator::microbatch_path(w, simulator::partition_stages(w, options)).size());
      const double per_step = options.schedule == simulator::ScheduleKind::zb_h1 ? 3 : 2;  // F, B (, W)
      const double tasks = per_step * steps * static_cast<double>(options.microbatches);
      simulator::require_memory(tasks * json_bytes_per_task, "--microbatches",
                                fmt::format("{} micro-batches x {:.0f} tasks each, as a JSON timeline,", options.microbatches,
                                            per_step * steps),
                                "leave the timeline out (--no-timeline) or use fewer micro-batches");
    }
    return simulator::simulate_pipeline(config, hw, scenario, options);  // with the optimizer step
  } catch (const model::ConfigError& e) {
    rethrow_as_flag(e, o);
  }
}

std::string layers_label(std::int64_t first, std::int64_t count) {
  return count == 1 ? fmt::format("{}", first) : fmt::format("{}-{}", first, first + count - 1);
}

void print_partition(const simulator::PipelineResult& r) {
  std::cout << fmt::format("{:>5} {:>6} {:>10} {:>6} {:>13} {:>14} {:>9} {:>18}\n", "chunk", "device", "layers", "ends",
                           "forward [ms]", "backward [ms]", "W [ms]", "activations [GB]");
  for (std::size_t c = 0; c < r.partition.chunks.size(); ++c) {
    const auto& ch = r.partition.chunks[c];
    const std::string ends = std::string(ch.embedding ? "E" : "") + (ch.head ? "H" : "");
    std::cout << fmt::format("{:>5} {:>6} {:>10} {:>6} {:>13.3f} {:>14.3f} {:>9.3f} {:>18.3f}\n", c, ch.device,
                             layers_label(ch.first_layer, ch.layer_count), ends, 1e3 * ch.forward_s,
                             1e3 * ch.backward_s, 1e3 * ch.backward_weight_s, ch.activation_bytes / 1e9);
  }
  std::cout << "  per micro-batch, every pass of a recurrent layer counted; E embedding, H final norm + head + loss;\n"
               "  W: the backward's weight-gradient products, and with train.grad_accumulation separate or autocast\n"
               "  the pass adding them into the step's gradients (part of backward; zb-h1 runs them as separate\n"
               "  tasks); with autocast the forward holds the weights' cast, and a fully recomputed backward again\n\n";
}

void print_devices(const simulator::PipelineResult& r) {
  std::cout << fmt::format("{:>6} {:>22} {:>10} {:>9} {:>9} {:>10} {:>22} {:>21}\n", "device", "work/micro-batch [ms]",
                           "busy [ms]", "idle [%]", "warm-up", "W deferred", "peak activations [GB]",
                           "peak in flight [mb]");
  for (std::size_t d = 0; d < r.devices.size(); ++d) {
    const auto& dev = r.devices[d];
    const double idle = r.metrics.makespan_s > 0 ? 100 * (1 - dev.busy_s / r.metrics.makespan_s) : 0;
    std::cout << fmt::format("{:>6} {:>22.3f} {:>10.3f} {:>9.1f} {:>9} {:>10} {:>22.3f} {:>21}\n", d,
                             1e3 * dev.stage_time_s, 1e3 * dev.busy_s, idle, dev.warmup_forwards, dev.deferred_weights,
                             dev.peak_activation_bytes / 1e9, dev.peak_inflight_microbatches);
  }
  std::cout << "  warm-up: forwards a device may hold before a backward must run (GPipe: all); W deferred (zb-h1):\n"
               "  weight-gradient tasks a device may leave waiting when it starts a forward\n\n";
}

// The bubble share uniform stages would leave (one pass per micro-batch): (p-1)/(vm+p-1);
// ZB-H1 (m >= p), with the stages' mean F, B and W: (p-1) X / (m(F+B+W) + (p-1) X),
// X = max(F, B, F+B-W) (pipeline.hpp).
double uniform_bubble(const simulator::PipelineResult& r) {
  const auto& o = r.options;
  const double p = static_cast<double>(o.stages), v = static_cast<double>(o.virtual_stages);
  const double m = static_cast<double>(o.microbatches);
  if (o.schedule != simulator::ScheduleKind::zb_h1) return (p - 1) / (v * m + p - 1);
  double f = 0, b = 0, w = 0;  // per micro-batch, summed over the path
  for (const auto& s : r.path) f += s.forward_s, b += s.backward_s - s.backward_weight_s, w += s.backward_weight_s;
  const double x = std::max({f, b, f + b - w}) / p, work = m * (f + b + w) / p;
  return work + (p - 1) * x > 0 ? (p - 1) * x / (work + (p - 1) * x) : 0;
}

void print_summary(const simulator::PipelineResult& r, const simulator::HardwareProfile& hw) {
  const auto& m = r.metrics;
  const auto& o = r.options;
  const double closed = uniform_bubble(r);
  std::cout << fmt::format("makespan          {:.3f} ms (all work spread evenly, no bubble: {:.3f} ms)\n",
                           1e3 * m.makespan_s, 1e3 * m.ideal_makespan_s)
            << fmt::format("optimizer step    {:.3f} ms = makespan + {:.3f} ms (gradient all-reduce {:.3f} ms, hidden "
                           "behind the last backward as far as it goes; update {:.3f} ms; framework {:.3f} ms)\n",
                           1e3 * m.step_s, 1e3 * m.update_s, 1e3 * m.dp_reduce_s, 1e3 * m.optimizer_s,
                           1e3 * m.framework_s)
            << fmt::format("bubble            {:.1f} % of {} devices x makespan (uniform stages, one pass: {:.1f} %)\n",
                           100 * m.bubble_fraction, o.stages, 100 * closed)
            << fmt::format("imbalance         {:.3f} (slowest device's work / mean)\n", m.imbalance)
            << fmt::format("path              {} steps per micro-batch, {} sends taking {:.3f} ms\n",
                           m.steps_per_microbatch, m.transfers_per_microbatch, 1e3 * m.transfer_s_per_microbatch)
            << fmt::format("peak activations  {:.3f} GB on device {} (of {:.0f} GB; weights, gradients and optimizer "
                           "state come on top)\n",
                           m.peak_activation_bytes / 1e9, m.peak_activation_device, hw.memory_gb)
            << fmt::format("throughput        {:.0f} tokens/s per pipeline replica\n", m.tokens_per_s);
  if (m.limit_overrides > 0)
    std::cout << fmt::format("note: {} forwards ran beyond a device's warm-up limit to avoid a deadlock\n",
                             m.limit_overrides);
}

void print_text(const simulator::PipelineResult& r, const model::Config& c, const simulator::HardwareProfile& hw,
                const simulator::Scenario& s, int gantt_width) {
  const auto& o = r.options;
  std::cout << fmt::format("{}, {}, on {}\n", c.effective.name, model::describe(c.design), hw.name)
            << fmt::format("micro-batch: {} seqs x {} tokens, recompute {}, tp {} x ep {} x cp {} per stage, dp {}\n",
                           s.train.micro_batch, s.train.seq_len, simulator::to_string(s.train.recompute),
                           s.parallel.tp, s.parallel.ep, s.parallel.cp, s.parallel.dp)
            << fmt::format("pipeline: {}, pp {}, {} micro-batches in groups of {}, {} partition, {} sends\n\n",
                           simulator::schedule_label(o), o.stages, o.microbatches, o.group,
                           simulator::to_string(o.partition), simulator::to_string(o.p2p));
  print_partition(r);
  print_devices(r);
  print_summary(r, hw);
  const std::string gantt = simulator::pipeline_gantt(r, gantt_width);
  if (!gantt.empty())
    std::cout << "\nforward of micro-batch i: letter i (a, b, ...; mod 26), its backward: the capital"
              << (o.schedule == simulator::ScheduleKind::zb_h1 ? " (B), its W: the digit i mod 10" : "") << "; idle: .\n"
              << gantt;
  else
    std::cout << fmt::format("\n(no Gantt chart: more tasks per device than {} columns; see --gantt-width or --json)\n",
                             gantt_width);
}

}  // namespace

Verb add_pipeline(CLI::App& app) {
  auto* sub = app.add_subcommand("pipeline", "Pipeline-parallel training step: partition, schedule, bubble, memory");
  auto o = std::make_shared<Options>();
  o->model.add_to(*sub);
  sub->add_option("--hw", o->hardware,
                  "Hardware profile: a JSON file or a bundled name (h100-sxm, h200, ...); required unless MODEL is a "
                  "session file with \"hardware\"")
      ->check(non_empty());
  o->given["--pp"] = sub->add_option(
      "--pp", o->pp, "Pipeline stages (devices); required unless MODEL is a session file with \"pipeline\"");
  o->given["--microbatches"] =
      sub->add_option("--microbatches", o->microbatches, "Micro-batches per optimizer step (as --pp)");
  o->given["--schedule"] = sub->add_option("--schedule", o->schedule,
                  "gpipe | 1f1b | zb-h1 (zero bubble: weight gradients deferred into the bubbles) | interleaved[:v] "
                  "(v virtual stages per device, default 2)");
  o->given["--group"] = sub->add_option(
      "--group", o->group, "Micro-batches per priority group (0: p, GPipe m; 1: one micro-batch's passes at a time)");
  o->given["--partition"] =
      sub->add_option("--partition", o->partition, "balanced | uniform | layers per chunk, e.g. 9,9,9,9");
  o->given["--p2p"] = sub->add_option("--p2p", o->p2p,
                                      "async | blocking: a stage's sends travel while it computes, or hold it until "
                                      "they arrive (Megatron-LM 2021-2022)");
  o->scenario.add_to(*sub, kScenarioFlags);
  sub->add_option("--gantt-width", o->gantt_width, "Columns of the text Gantt chart")->check(CLI::Range(10, 1000));
  auto* json_flag = sub->add_flag("--json", o->json, "Print JSON: options, partition, path, devices, metrics and the timeline");
  sub->add_flag("--no-timeline", o->no_timeline, "With --json: leave the per-task timeline out")->needs(json_flag);
  return {sub, [o] {
            // A session file as MODEL gives what the flags leave open: hardware, scenario, options.
            const LoadedModel model = load_model(o->model);
            o->session_pipeline = model.pipeline() != nullptr;
            const simulator::PipelineOptions options = pipeline_options(*o, model.pipeline());
            const model::Config& config = model.config;
            const simulator::HardwareProfile hw = hardware_of(o->hardware, model);
            const simulator::Scenario scenario = o->scenario.build(config, model.scenario());
            const simulator::PipelineResult r = simulate(*o, config, hw, scenario, options);
            if (o->json)
              print_json({{"model", config.effective.name},
                          {"design", model::describe(config.design)},
                          {"hardware", hw.name},
                          {"scenario", simulator::to_json(scenario)},
                          {"pipeline", simulator::to_json(r, !o->no_timeline)}});
            else
              print_text(r, config, hw, scenario, o->gantt_width);
            return exit_ok;
          }};
}

}  // namespace hdlab::cli
