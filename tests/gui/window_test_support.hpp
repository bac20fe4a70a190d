#pragma once
// The main window as the window tests start it: the bundled catalog, the defaults applied,
// shown at `size`, and the first evaluation (and, when asked, the first pipeline run)
// delivered, so a test reads settled views.
#include <memory>
#include <variant>

#include <catch2/catch.hpp>
#include <QSize>

#include "gui_test_support.hpp"
#include "main_window.hpp"
#include "pipeline_view.hpp"
#include "session.hpp"

namespace hdlab::test {

enum class WaitFor { evaluation, pipeline };

inline std::unique_ptr<gui::MainWindow> started_window(QSize size = {1400, 900}, WaitFor wait = WaitFor::evaluation) {
  ensure_app();
  auto w = std::make_unique<gui::MainWindow>(gui_core::read_catalog(profiles()));
  REQUIRE(w->applyDefaults().isEmpty());
  w->resize(size);
  w->show();
  w->waitForEvaluation();
  if (wait == WaitFor::pipeline) w->pipelineView()->waitForRun();
  return w;
}

// The session's HD design (the defaults are Qwen3-8B with HD n=4).
inline const model::HdDesign& hd_of(const gui::Session* s) {
  REQUIRE(std::holds_alternative<model::HdDesign>(s->config().design.method));
  return std::get<model::HdDesign>(s->config().design.method);
}

}  // namespace hdlab::test
