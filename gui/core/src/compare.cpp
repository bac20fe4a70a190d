#include "hdlab/gui_core/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "hdlab/model/error.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"

namespace hdlab::gui_core {
namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

bool label_taken(const std::vector<PinList::Entry>& entries, const std::string& label) {
  return std::any_of(entries.begin(), entries.end(), [&](const PinList::Entry& e) { return e.pin.label == label; });
}

}  // namespace

std::string pin_label(const std::string& backbone, const model::Design& design, const std::string& hardware) {
  std::string method = short_label(design);
  if (const std::string detail = model::label_detail(design.method); !detail.empty()) method += " (" + detail + ")";
  return backbone + " + " + method + " on " + hardware;
}

std::string pin_key(int id) { return "pin " + std::to_string(id); }

PinResult evaluate_pin(const Pin& pin, const ProgressFn& progress) {
  PinResult r;
  r.tradeoffs = compute_tradeoffs(pin.config, pin.hardware, pin.scenario, pin.grid, progress);
  if (pin.pipeline) r.pipeline = simulator::simulate_pipeline(pin.config, pin.hardware, pin.scenario, *pin.pipeline);
  return r;
}

int PinList::add(Pin pin) {
  if (full())
    throw model::ConfigError("/pins", "at most " + std::to_string(kMaxPins) + " designs can be pinned; remove one first");
  // Legends and columns tell pins apart by label: a repeated one gets a number.
  const std::string base = pin.label;
  for (int k = 2; label_taken(entries_, pin.label); ++k) pin.label = base + " #" + std::to_string(k);
  entries_.push_back({next_id_, std::move(pin), std::nullopt});
  return next_id_++;
}

bool PinList::remove(int id) {
  const auto it = std::find_if(entries_.begin(), entries_.end(), [id](const Entry& e) { return e.id == id; });
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

bool PinList::set_result(int id, PinResult result) {
  for (Entry& e : entries_)
    if (e.id == id) {
      e.result = std::move(result);
      return true;
    }
  return false;
}

std::vector<PinList::Entry> PinList::pending() const {
  std::vector<Entry> out;
  for (const Entry& e : entries_)
    if (!e.result) out.push_back(e);
  return out;
}

double compare_ratio(double pin, double current) {
  if (std::isnan(pin) || std::isnan(current) || current == 0) return kMissing;
  return pin / current;
}

std::vector<CompareRow> compare_rows(const simulator::Metrics& current,
                                     const std::optional<simulator::PipelineResult>& current_pipeline,
                                     const std::vector<PinResult>& pins) {
  std::vector<CompareRow> rows;
  for (int i = 0; i < simulator::metric_count; ++i) {
    const auto m = static_cast<simulator::Metric>(i);
    CompareRow row{simulator::metric_name(m), simulator::metric_unit(m), current[m], {}, {}};
    for (const PinResult& p : pins) {
      row.pins.push_back(p.tradeoffs.design[m]);
      row.ratios.push_back(compare_ratio(row.pins.back(), row.current));
    }
    rows.push_back(std::move(row));
  }
  const bool any_pipeline = current_pipeline || std::any_of(pins.begin(), pins.end(), [](const PinResult& p) {
                              return p.pipeline.has_value();
                            });
  if (any_pipeline) {
    CompareRow row{"pipeline_makespan_s", "s", current_pipeline ? current_pipeline->metrics.makespan_s : kMissing, {}, {}};
    for (const PinResult& p : pins) {
      row.pins.push_back(p.pipeline ? p.pipeline->metrics.makespan_s : kMissing);
      row.ratios.push_back(compare_ratio(row.pins.back(), row.current));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

double shared_time_end(const std::vector<const simulator::PipelineResult*>& runs) {
  double end = 0;
  for (const simulator::PipelineResult* r : runs)
    if (r) end = std::max(end, r->metrics.makespan_s);
  return end;
}

}  // namespace hdlab::gui_core
