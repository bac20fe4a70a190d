#pragma once
// Hand-built pipeline workloads and options shared by the pipeline engine's tests.
#include <functional>
#include <string>

#include "hdlab/model/error.hpp"
#include "hdlab/simulator/pipeline.hpp"

namespace pipeline_fixtures {

using namespace hdlab::simulator;

// `layers` identical layers: forward f, backward b [s], activations 1 byte per layer pass,
// boundary `send` bytes; a link of 1 B/s and no latency makes a send take `send` seconds.
inline PipelineWorkload uniform(int layers, double f, double b, double send = 0) {
  PipelineWorkload w;
  w.layers.assign(static_cast<std::size_t>(layers), PipelineLayer{f, b, 1.0, send});
  w.link = {1.0, 0.0};
  return w;
}

inline PipelineOptions options(ScheduleKind s, int p, int m, int v = 1, int group = 0) {
  PipelineOptions o;
  o.schedule = s;
  o.stages = p;
  o.microbatches = m;
  o.virtual_stages = v;
  o.group = group;
  return o;
}

// The JSON pointer of the ConfigError `f` throws, or "(no error)".
inline std::string pointer_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const hdlab::model::ConfigError& e) {
    return e.pointer();
  }
  return "(no error)";
}

}  // namespace pipeline_fixtures
