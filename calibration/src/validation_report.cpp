// Statistics and outputs of a validation run (validation.hpp).
#include <cmath>
#include <limits>
#include <sstream>

#include "hdlab/calibration/validation.hpp"

namespace hdlab::calibration {

namespace {

const char* kClasses[] = {"gemm", "attention", "vector", "memory"};

double class_time(const std::array<double, model::op_kind_count>& op_s, model::OpClass cls) {
  double t = 0;
  for (int k = 0; k < model::op_kind_count; ++k)
    if (model::op_class(static_cast<model::OpKind>(k)) == cls) t += op_s[static_cast<std::size_t>(k)];
  return t;
}

double ops_total(const std::array<double, model::op_kind_count>& op_s) {
  double t = 0;
  for (double v : op_s) t += v;
  return t;
}

// Spearman across the designs of each (model, phase, tokens) group.
void rank_groups(ValidationReport& r) {
  std::map<std::string, std::vector<const CaseResult*>> groups;
  std::vector<std::string> order;
  for (const CaseResult& c : r.cases) {
    if (!groups.count(c.spec.group)) order.push_back(c.spec.group);
    groups[c.spec.group].push_back(&c);
  }
  std::vector<double> rhos;
  for (const std::string& g : order) {
    GroupRank gr;
    gr.group = g;
    std::vector<double> p, m;
    for (const CaseResult* c : groups[g]) {
      gr.designs.push_back(c->spec.design);
      p.push_back(c->predicted.seconds);
      m.push_back(c->measured.seconds);
    }
    gr.spearman = p.size() >= 3 ? spearman(p, m) : std::numeric_limits<double>::quiet_NaN();
    if (std::isfinite(gr.spearman)) rhos.push_back(gr.spearman);
    r.groups.push_back(std::move(gr));
  }
  r.spearman_designs_mean = std::numeric_limits<double>::quiet_NaN();
  r.spearman_designs_min = std::numeric_limits<double>::quiet_NaN();
  if (!rhos.empty()) {
    double sum = 0;
    for (double v : rhos) sum += v;
    r.spearman_designs_mean = sum / static_cast<double>(rhos.size());
    r.spearman_designs_min = *std::min_element(rhos.begin(), rhos.end());
  }
}

void by_op_class(ValidationReport& r) {
  std::map<std::string, std::vector<double>> errors, shares;
  for (const CaseResult& c : r.cases) {
    const double total = c.measured.seconds;
    for (int i = 0; i < 4; ++i) {
      const auto cls = static_cast<model::OpClass>(i);
      const double measured = class_time(c.measured.op_s, cls), predicted = class_time(c.predicted.op_s, cls);
      shares[kClasses[i]].push_back(measured / total);
      if (measured >= 0.02 * total && measured > 0) errors[kClasses[i]].push_back(relative_error(predicted, measured));
    }
    // The call time no op timer saw: the runner's own work between ops (workspace
    // views, timers, host-side routing). The simulator has no such term.
    shares["glue"].push_back(std::max(0.0, total - ops_total(c.measured.op_s)) / total);
  }
  for (auto& [k, e] : errors) r.by_op_class[k] = error_stats(e);
  for (auto& [k, s] : shares) {
    double sum = 0;
    for (double v : s) sum += v;
    r.measured_share[k] = s.empty() ? 0 : sum / static_cast<double>(s.size());
  }
}

nlohmann::json stats_json(const ErrorStats& s) {
  return {{"cases", s.count}, {"median_abs_error", s.median_abs}, {"max_abs_error", s.max_abs}, {"median_error", s.median_signed}};
}

nlohmann::json finite(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json ops_json(const std::array<double, model::op_kind_count>& op_s) {
  nlohmann::json o = nlohmann::json::object();
  for (int k = 0; k < model::op_kind_count; ++k)
    if (op_s[static_cast<std::size_t>(k)] > 0) o[model::to_string(static_cast<model::OpKind>(k))] = op_s[static_cast<std::size_t>(k)];
  return o;
}

nlohmann::json case_json(const CaseResult& c) {
  nlohmann::json buffers = nlohmann::json::object();
  for (const auto& [name, bytes] : c.predicted.memory.buffers) buffers[name] = buffers.value(name, 0.0) + bytes;
  return {{"label", c.spec.label},
          {"model", c.spec.model},
          {"design", c.spec.design},
          {"design_description", model::describe(c.spec.config.design)},
          {"phase", executor::to_string(c.spec.phase)},
          {"tokens", c.spec.tokens},
          {"layout", model::to_string(c.spec.effective_layout())},
          {"group", c.spec.group},
          {"held_out", c.overlaps.empty()},
          {"overlaps", c.overlaps},
          {"time",
           {{"measured_s", c.measured.seconds},
            {"measured_min_s", c.measured.min_seconds},
            {"measured_max_s", c.measured.max_seconds},
            {"predicted_s", c.predicted.seconds},
            {"error", c.time_error()},
            {"setup_s", c.measured.setup_seconds},
            {"decode_context_tokens", c.predicted.context}}},
          {"memory",
           {{"measured_peak_bytes", c.measured.peak_bytes},
            {"measured_weight_bytes", c.measured.weight_bytes},
            {"measured_kv_bytes", c.measured.kv_bytes},
            {"predicted_bytes", c.predicted.memory.total()},
            {"predicted_weight_bytes", c.predicted.memory.weight_bytes},
            {"predicted_kv_bytes", c.predicted.memory.kv_bytes},
            {"predicted_workspace_bytes", c.predicted.memory.workspace_bytes},
            {"predicted_buffers_bytes", buffers},
            {"error", c.memory_error()}}},
          {"ops_measured_s", ops_json(c.measured.op_s)},
          {"ops_predicted_s", ops_json(c.predicted.op_s)}};
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

}  // namespace

ValidationReport summarize(std::vector<CaseResult> cases) {
  ValidationReport r;
  r.cases = std::move(cases);
  std::vector<double> time, memory, p, m;
  std::map<std::string, std::vector<double>> design, phase;
  for (const CaseResult& c : r.cases) {
    time.push_back(c.time_error());
    memory.push_back(c.memory_error());
    p.push_back(c.predicted.seconds);
    m.push_back(c.measured.seconds);
    design[c.spec.design].push_back(c.time_error());
    phase[executor::to_string(c.spec.phase)].push_back(c.time_error());
  }
  r.time = error_stats(time);
  r.memory = error_stats(memory);
  r.spearman_all = spearman(p, m);
  for (auto& [k, e] : design) r.by_design[k] = error_stats(e);
  for (auto& [k, e] : phase) r.by_phase[k] = error_stats(e);
  rank_groups(r);
  by_op_class(r);
  return r;
}

nlohmann::json to_json(const ValidationReport& r) {
  nlohmann::json cases = nlohmann::json::array(), groups = nlohmann::json::array();
  for (const CaseResult& c : r.cases) cases.push_back(case_json(c));
  for (const GroupRank& g : r.groups) groups.push_back({{"group", g.group}, {"designs", g.designs}, {"spearman", finite(g.spearman)}});
  nlohmann::json by_design = nlohmann::json::object(), by_phase = nlohmann::json::object(), by_class = nlohmann::json::object();
  for (const auto& [k, s] : r.by_design) by_design[k] = stats_json(s);
  for (const auto& [k, s] : r.by_phase) by_phase[k] = stats_json(s);
  for (const auto& [k, s] : r.by_op_class) by_class[k] = stats_json(s);
  int held_out = 0;
  for (const CaseResult& c : r.cases) held_out += c.overlaps.empty() ? 1 : 0;
  return {{"summary",
           {{"cases", r.cases.size()},
            {"held_out_cases", held_out},
            {"time", stats_json(r.time)},
            {"memory", stats_json(r.memory)},
            {"spearman_all_cases", finite(r.spearman_all)},
            {"spearman_across_designs_mean", finite(r.spearman_designs_mean)},
            {"spearman_across_designs_min", finite(r.spearman_designs_min)}}},
          {"time_error_by_design", by_design},
          {"time_error_by_phase", by_phase},
          {"op_class_time_error", by_class},
          {"op_class_measured_share", r.measured_share},
          {"groups", groups},
          {"cases", cases}};
}

std::string to_csv(const ValidationReport& r) {
  std::ostringstream o;
  o.precision(9);
  o << "label,model,design,phase,tokens,layout,held_out,measured_s,predicted_s,time_error,"
       "measured_peak_bytes,predicted_bytes,memory_error\n";
  for (const CaseResult& c : r.cases)
    o << csv_field(c.spec.label) << ',' << csv_field(c.spec.model) << ',' << csv_field(c.spec.design) << ','
      << executor::to_string(c.spec.phase) << ',' << c.spec.tokens << ',' << model::to_string(c.spec.effective_layout())
      << ',' << (c.overlaps.empty() ? 1 : 0) << ',' << c.measured.seconds << ',' << c.predicted.seconds << ','
      << c.time_error() << ',' << c.measured.peak_bytes << ',' << c.predicted.memory.total() << ',' << c.memory_error()
      << '\n';
  return o.str();
}

nlohmann::json points_json(const ValidationReport& r) {
  nlohmann::json list = nlohmann::json::array();
  for (const CaseResult& c : r.cases)
    list.push_back({{"design", c.spec.design},
                    {"label", c.spec.label},
                    {"predicted_s", c.predicted.seconds},
                    {"measured_s", c.measured.seconds}});
  return {{"points", list}};
}

}  // namespace hdlab::calibration
