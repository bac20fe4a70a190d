#pragma once
// Chart specs for the trade-off curves of gui_core::compute_tradeoffs (no Qt here):
// cost relative to the baseline against the design's size, decode throughput against
// batch and context, KV cache per sequence against context. Points whose KV cache does
// not fit next to the weights continue the curve dashed ("... (no fit)").
#include <string>

#include "hdlab/charts/chart_data.hpp"
#include "hdlab/gui_core/tradeoffs.hpp"

namespace hdlab::charts {

struct TradeoffCharts {
  LineChart cost_vs_size;       // empty series when the design has no size (baseline)
  LineChart decode_vs_batch;
  LineChart decode_vs_context;
  LineChart kv_vs_context;
};

// `design` and `baseline` label the series; `device_memory_bytes` > 0 adds a reference
// line to the KV chart.
TradeoffCharts tradeoff_charts(const gui_core::Tradeoffs& t, const std::string& design, const std::string& baseline,
                               double device_memory_bytes);

}  // namespace hdlab::charts
