// Sweeps, the serve part: trace files read at load, and one point's serving simulation.
#include <algorithm>
#include <filesystem>

#include "hdlab/model/files.hpp"
#include "hdlab/model/json_reader.hpp"
#include "sweep_internal.hpp"

namespace hdlab::simulator::sweep_detail {

namespace {

// Where a workload's trace path sits in the base document.
const std::vector<std::string> kTraceTokens = {"serve", "workload", "trace"};

// Records the trace named by `j` (if it is a path) once, read relative to `base_dir`;
// `where` is its place in the sweep file.
void add_trace(SweepSpec& spec, const json* j, const std::string& base_dir, const std::string& where) {
  if (!j || !j->is_string() || j->get<std::string>().empty()) return;  // the serve parser names what is wrong
  const std::string path = j->get<std::string>();
  for (const SweepServeTrace& t : spec.serve_traces)
    if (t.path == path) return;
  namespace fs = std::filesystem;
  const fs::path p = fs::path(path).is_absolute() ? fs::path(path) : fs::path(base_dir) / path;
  SweepServeTrace t{path, p.lexically_normal().string(), ""};
  try {
    t.text = model::read_text_file(t.file);
  } catch (const model::ConfigError& e) {
    model::fail(where, e.what());
  }
  spec.serve_traces.push_back(std::move(t));
}

}  // namespace

void load_serve_traces(SweepSpec& spec, const std::string& base_dir) {
  if (!spec.base.contains("serve")) return;
  add_trace(spec, resolve(spec.base, kTraceTokens, 0, kTraceTokens.size()), base_dir, join_pointer(kTraceTokens, 3));
  for (std::size_t i = 0; i < spec.axes.size(); ++i) {
    const SweepAxis& a = spec.axes[i];
    // An axis at /serve/workload/trace or enclosing it (whole /serve or /serve/workload values).
    const std::size_t depth = a.tokens.size();
    if (depth > kTraceTokens.size() || !std::equal(a.tokens.begin(), a.tokens.end(), kTraceTokens.begin())) continue;
    for (std::size_t k = 0; k < a.size(); ++k) {
      std::string where = model::pointer_join("/axes/" + std::to_string(i) + "/values", k);
      for (std::size_t t = depth; t < kTraceTokens.size(); ++t) where = model::pointer_join(where, kTraceTokens[t]);
      add_trace(spec, resolve(a.values[k], kTraceTokens, depth, kTraceTokens.size()), base_dir, where);
    }
  }
}

namespace {

// A static batch (static arrivals, static batching) the KV cache cannot hold whole runs
// in waves of fewer requests: "" when it ran whole, else why the row fails.
std::string static_batch_split(const ServeSpec& s, const ServeResult& r) {
  if (s.engine.batching != Batching::static_batch || s.workload.arrivals != ArrivalKind::static_batch) return "";
  const std::int64_t batch = std::min(s.workload.requests, s.engine.max_running);
  if (r.max_running_seen >= batch) return "";
  return "/serve/workload/requests: the static batch of " + std::to_string(batch) +
         " requests does not fit the KV cache at once (at most " + std::to_string(r.max_running_seen) + " ran together in " +
         format_significant(r.kv_capacity_bytes / 1e9, 3) +
         " GB of cache per K/V-head shard): the engine would run it in waves; exclude this point or lower the batch";
}

}  // namespace

bool serve_point(const SweepSpec& spec, const model::Config& config, const HardwareProfile& hw, const Scenario& scenario,
                 const ServeSpec& serve, std::vector<double>& row, std::string& error) {
  const SweepServeTrace* trace = nullptr;
  if (serve.workload.arrivals == ArrivalKind::trace) {
    for (const SweepServeTrace& t : spec.serve_traces)
      if (t.path == serve.workload.trace) trace = &t;
    if (!trace) return error = "internal error: trace " + serve.workload.trace + " was not read at load", false;
  }
  try {
    const ServeResult r = simulate_serving(config, hw, scenario, serve, {}, trace ? trace->text : "", trace ? trace->file : "");
    error = static_batch_split(serve, r);
    if (!error.empty()) return false;
    serve_metric_row(r, row);
  } catch (const model::ConfigError& e) {
    return error = e.what(), false;
  } catch (const std::exception& e) {
    return error = std::string("internal error: ") + e.what(), false;
  }
  return true;
}

}  // namespace hdlab::simulator::sweep_detail
