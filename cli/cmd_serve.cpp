// hdlab serve MODEL --design D --hw H [--workload FILE] [workload and engine options]
// One serving instance (tp x ep devices) running an engine over a stream of requests
// (simulator/serving.hpp): throughput, TTFT, TPOT and inter-token latency percentiles,
// queueing, KV-cache use over time and goodput under an SLO. --json prints the result;
// --requests-csv writes one row per request as it finishes; --plots DIR writes the latency
// CDFs and the KV cache over time as PNG.
#include <filesystem>
#include <variant>
#include <iostream>

#include <fmt/format.h>

#include "hdlab/model/error.hpp"
#include "hdlab/model/files.hpp"
#include "hdlab/simulator/serving.hpp"
#include "verbs.hpp"

#ifdef HDLAB_HAVE_CHARTS
#include "hdlab/charts/export.hpp"
#endif

namespace hdlab::cli {

namespace {

using nlohmann::json;

bool is_hd(const model::Design& d) { return model::design_features(d.method).streams; }

constexpr ScenarioFlag kScenarioFlags[] = {
    {"--tp", "/parallel/tp", "tensor-parallel devices of the instance"},
    {"--ep", "/parallel/ep", "expert-parallel devices of the instance"},
    {"--gpus-per-node", "/parallel/gpus_per_node", "devices sharing NVLink"},
    {"--tp-all-reduce", "/parallel/tp_all_reduce",
     "auto | library: inference all-reduce, the faster of NCCL and an engine's custom kernel, or NCCL only"},
    {"--weights-dtype", "/precision/weights", "weights' precision: model | bf16 | fp16 | fp32 | fp8"},
    {"--activations-dtype", "/precision/activations", "activations' precision (attention runs in it)"},
    {"--kv-cache-dtype", "/precision/kv_cache", "KV cache precision"},
    {"--compute-dtype", "/precision/compute", "weight products' matrix precision"},
    {"--comm-dtype", "/precision/communication", "collectives' precision"},
    {"--layout", "/attention/layout", "default | interleaved | stream_major | phd_split"},
    {"--decode-kernel", "/attention/decode_kernel", "auto | one_row (a block per query head even under GQA)"},
    {"--ffn-gate-up", "/ffn/gate_up", "fused | separate: a gated FFN's gate and up as one product or two"},
    {"--kv-mirror-final-only", "/decode/kv_mirror_final_only",
     "HD KV mirror: decode the mirrored layers on the final stream only (an engine kernel for it; true | false)", false,
     is_hd, "HD designs"},
};

constexpr ScenarioFlag kServeFlags[] = {
    {"--arrivals", "/workload/arrivals", "static | closed | poisson | trace"},
    {"--requests", "/workload/requests", "requests in all"},
    {"--rate", "/workload/rate_per_s", "poisson arrival rate [requests/s]"},
    {"--users", "/workload/users", "closed loop: concurrent users"},
    {"--think", "/workload/think_s", "closed loop: pause between a user's requests [s]"},
    {"--trace", "/workload/trace", "trace CSV (arrival_s,input_tokens,output_tokens)"},
    {"--input-tokens", "/workload/input_tokens", "prompt length [tokens]"},
    {"--output-tokens", "/workload/output_tokens", "output length [tokens]"},
    {"--seed", "/workload/seed", "random seed of arrivals and lengths"},
    {"--batching", "/engine/batching", "continuous | static"},
    {"--max-running", "/engine/max_running", "requests in the engine at once"},
    {"--max-batched-tokens", "/engine/max_batched_tokens", "tokens per engine step"},
    {"--chunked-prefill", "/engine/chunked_prefill", "true | false"},
    {"--kv-block-tokens", "/engine/kv_block_tokens", "KV cache page size [tokens]"},
    {"--memory-utilization", "/engine/memory_utilization", "share of device memory for weights + KV cache"},
    {"--step-overhead", "/engine/step_overhead_s", "engine time per step outside the kernels [s]"},
    {"--request-overhead", "/engine/request_overhead_s", "engine time per admitted request [s]"},
    {"--slo-ttft", "/slo/ttft_s", "goodput: time to first token bound [s]"},
    {"--slo-tpot", "/slo/tpot_s", "goodput: time per output token bound [s]"},
};

struct Options {
  ModelOptions model;
  std::string hardware;
  ScenarioOptions scenario;
  ScenarioOptions serve;
  bool json = false;
  std::string requests_csv;
  std::string plots;
};

// The workload, engine and SLO; errors at a flag's field name the flag.
simulator::ServeSpec serve_spec(const Options& o) {
  const json doc = o.serve.document(nullptr);
  try {
    return simulator::parse_serve_spec(doc);
  } catch (const model::ConfigError& e) {
    if (const char* flag = o.serve.given_flag(e.pointer())) throw model::ConfigError(flag, e.reason());
    throw model::ConfigError(o.serve.file().empty() ? e.pointer() : o.serve.file() + ": " + e.pointer(), e.reason());
  }
}

// A trace named in the workload file is relative to that file; one given by --trace to
// the working folder.
std::string trace_path(const Options& o, const simulator::ServeSpec& spec) {
  const std::filesystem::path p = spec.workload.trace;
  if (p.is_absolute() || o.serve.given_flag("/workload/trace") || o.serve.file().empty()) return p.string();
  return (std::filesystem::path(o.serve.file()).parent_path() / p).string();
}

std::string ms(double s) { return fmt::format("{:.2f}", 1e3 * s); }

void print_text(const simulator::ServeSpec& spec, const simulator::ServeResult& r) {
  const auto& w = spec.workload;
  std::cout << fmt::format("workload: {} arrivals, {} requests finished in {:.3f} s ({} steps)\n",
                           simulator::to_string(w.arrivals), r.requests, r.duration_s(), r.steps);
  std::cout << fmt::format("KV cache: {:.2f} GB a shard; used mean {:.1f}%, max {:.1f}%; running requests mean {:.1f}, "
                           "max {}; waiting mean {:.1f}\n",
                           r.kv_capacity_bytes / 1e9, 100 * r.kv_used_mean, 100 * r.kv_used_max, r.mean_running,
                           r.max_running_seen, r.mean_waiting);
  std::cout << fmt::format("throughput: {:.3f} requests/s, {:.1f} output tokens/s ({:.1f} per GPU, {} GPUs), "
                           "{:.1f} input tokens/s\n",
                           r.requests_per_s, r.output_tokens_per_s, r.output_tokens_per_s_per_gpu, r.devices,
                           r.input_tokens_per_s);
  std::cout << fmt::format("steps: mean {} ms, {:.1f} decode rows and {:.1f} prompt tokens each; decode-only steps "
                           "{:.1f} tokens/s\n",
                           ms(r.mean_step_s), r.mean_decode_rows, r.mean_prefill_tokens, r.decode_tokens_per_s);
  std::cout << fmt::format("\n{:<8} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "[ms]", "mean", "p50", "p90", "p99", "max");
  const std::pair<const char*, const simulator::Percentiles*> rows[] = {
      {"TTFT", &r.ttft_s}, {"TPOT", &r.tpot_s}, {"ITL", &r.itl_s}, {"queue", &r.queue_s}, {"E2E", &r.e2e_s}};
  for (const auto& [name, p] : rows)
    std::cout << fmt::format("{:<8} {:>10} {:>10} {:>10} {:>10} {:>10}\n", name, ms(p->mean), ms(p->p50), ms(p->p90),
                             ms(p->p99), ms(p->max));
  if (std::isfinite(r.slo.ttft_s) || std::isfinite(r.slo.tpot_s))
    std::cout << fmt::format("\nSLO (TTFT <= {} ms, TPOT <= {} ms): {} of {} requests met it; goodput {:.3f} requests/s\n",
                             ms(r.slo.ttft_s), ms(r.slo.tpot_s), r.slo_met, r.requests, r.goodput_requests_per_s);
}

// Streams each finished request to the CSV, made visible only when the run completes.
class RequestCsv {
 public:
  explicit RequestCsv(const std::string& path) {
    if (path.empty()) return;
    writer_ = std::make_unique<model::AtomicFileWriter>(path);
    writer_->write("id,arrival_s,input_tokens,output_tokens,admitted_s,first_token_s,finish_s,queue_s,ttft_s,tpot_s,e2e_s\n");
  }
  std::function<void(const simulator::RequestRecord&)> callback() {
    if (!writer_) return {};
    return [this](const simulator::RequestRecord& q) {
      writer_->write(fmt::format("{},{:.9g},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n", q.id, q.arrival_s,
                                 q.input_tokens, q.output_tokens, q.admitted_s, q.first_token_s, q.finish_s, q.queue_s(),
                                 q.ttft_s(), q.tpot_s(), q.e2e_s()));
    };
  }
  void commit() {
    if (writer_) writer_->commit();
  }

 private:
  std::unique_ptr<model::AtomicFileWriter> writer_;
};

#ifdef HDLAB_HAVE_CHARTS
// `note`: where to say what was written (stderr under --json, whose stdout is JSON only).
void write_plots(const std::string& dir, const simulator::ServeResult& r, std::ostream& note) {
  std::filesystem::create_directories(dir);
  hdlab::charts::OffscreenApplication app;
  hdlab::charts::LineChart cdf;
  cdf.title = "Latency distributions";
  cdf.x = {"latency (s)", 10};
  cdf.y = {"fraction of requests (ITL: of tokens)", 0};
  const std::pair<const char*, const simulator::Percentiles*> series[] = {
      {"TTFT", &r.ttft_s}, {"TPOT", &r.tpot_s}, {"ITL", &r.itl_s}, {"E2E", &r.e2e_s}};
  for (const auto& [name, p] : series) {
    hdlab::charts::LineSeries s{name, {}, hdlab::charts::LineStyle::solid, false, -1};
    for (const auto& [v, f] : p->cdf) s.points.push_back({v, f});
    if (!s.points.empty()) cdf.series.push_back(std::move(s));
  }
  hdlab::charts::write_chart(cdf, dir + "/latency_cdf.png", 1200, 800);
  hdlab::charts::LineChart kv;
  kv.title = "KV cache over time";
  kv.x = {"time (s)", 0};
  kv.y = {"share of the KV cache (fraction)", 0};
  hdlab::charts::LineSeries used{"used", {}, hdlab::charts::LineStyle::solid, false, -1};
  hdlab::charts::LineSeries reserved{"reserved", {}, hdlab::charts::LineStyle::dashed, false, -1};
  for (const auto& s : r.timeline) {
    used.points.push_back({s.time_s, s.kv_used_fraction});
    reserved.points.push_back({s.time_s, s.kv_reserved_fraction});
  }
  kv.series = {used, reserved};
  hdlab::charts::write_chart(kv, dir + "/kv_cache.png", 1200, 800);
  note << "wrote " << dir << "/{latency_cdf.png, kv_cache.png}\n";
}
#endif

int run_serve(const Options& o) {
  // A session file as MODEL gives the hardware and the scenario the flags leave open.
  const LoadedModel model = load_model(o.model);
  const model::Config& config = model.config;
  const simulator::HardwareProfile hw = hardware_of(o.hardware, model);
  const simulator::Scenario scenario = o.scenario.build(config, model.scenario());
  const simulator::ServeSpec spec = serve_spec(o);
  if (!o.requests_csv.empty()) check_output_file("--requests-csv", o.requests_csv);
  if (!o.plots.empty()) {
#ifndef HDLAB_HAVE_CHARTS
    throw model::ConfigError("--plots", "this hdlab was built without Qt Charts (HDLAB_GUI=OFF), which draws the PNGs");
#endif
    check_output_folder("--plots", o.plots);
  }
  std::string trace_text, trace_name;
  if (spec.workload.arrivals == simulator::ArrivalKind::trace) {
    trace_name = trace_path(o, spec);
    trace_text = model::read_text_file(trace_name);
  }
  RequestCsv csv(o.requests_csv);
  const simulator::ServeResult r =
      simulator::simulate_serving(config, hw, scenario, spec, csv.callback(), trace_text, trace_name);
  csv.commit();
  if (o.json) {
    print_json({{"spec", simulator::to_json(spec)}, {"result", simulator::to_json(r)}});
  } else {
    std::cout << fmt::format("hdlab serve: {} on {} ({} devices)\n", model::describe(config.design), hw.name, r.devices);
    print_text(spec, r);
  }
#ifdef HDLAB_HAVE_CHARTS
  if (!o.plots.empty()) write_plots(o.plots, r, o.json ? std::cerr : std::cout);
#endif
  return exit_ok;
}

}  // namespace

Verb add_serve(CLI::App& app) {
  auto* sub = app.add_subcommand("serve", "Simulate a serving engine over a stream of requests: throughput, latency "
                                          "percentiles, KV cache use");
  auto o = std::make_shared<Options>();
  o->model.add_to(*sub);
  sub->add_option("--hw", o->hardware,
                  "Hardware profile: a JSON file or a bundled name (h100-sxm, h200, ...); required unless MODEL is a "
                  "session file with \"hardware\"")
      ->check(non_empty());
  sub->add_flag("--json", o->json, "Print the workload, engine and result as JSON");
  sub->add_option("--requests-csv", o->requests_csv, "Write one CSV row per finished request")->check(non_empty());
  sub->add_option("--plots", o->plots, "Write latency_cdf.png and kv_cache.png into this folder")->check(non_empty());
  o->scenario.add_to(*sub, kScenarioFlags);
  o->serve.add_to(*sub, kServeFlags, "--workload", "",
                  "Workload JSON: {\"workload\", \"engine\", \"slo\"} (simulator/serving.hpp)");
  return {sub, [o] { return run_serve(*o); }};
}

}  // namespace hdlab::cli
