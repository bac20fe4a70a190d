#pragma once
// Chart specs for the serving tab (no Qt here), from gui_core::ServingRun: latency
// distributions of one run, throughput and time to first token against offered load,
// and the KV cache over the run. Every point is a ServeResult number as the core gives it.
#include "hdlab/charts/chart_data.hpp"
#include "hdlab/gui_core/serving_run.hpp"

namespace hdlab::charts {

// TTFT, TPOT and E2E empirical CDFs (Percentiles::cdf: value in s, fraction of requests
// <= value); x logarithmic, so a distribution with values <= 0 (TPOT of one-token
// outputs) loses those points.
LineChart latency_cdf_chart(const simulator::ServeResult& r);

// Output tokens/s served against offered load (requests/s), with the output rate the
// offered load asks for (rate x mean output tokens) dashed beside it.
LineChart throughput_vs_load_chart(const std::vector<gui_core::LoadPoint>& load);

// p50 and p90 time to first token (s, logarithmic) against offered load (requests/s).
LineChart ttft_vs_load_chart(const std::vector<gui_core::LoadPoint>& load);

// Share of the KV cache used and reserved after each engine step (ServeResult::timeline).
LineChart kv_over_time_chart(const simulator::ServeResult& r);

}  // namespace hdlab::charts
