#pragma once
// A session document: a whole study in one JSON file, which the GUI saves and opens and
// the CLI reads as its MODEL argument (`hdlab cost SESSION.json`). It is a config
// document (model/config_io.hpp) with optional parts beside the backbone and design:
//
//   {"description": "...",                     free text
//    "backbone": {...}  or  "hf_config": {...} (with an optional "dtype"),
//    "design": {...},                          absent: the baseline
//    "hardware": {...}  or  "h100-sxm",        a profile inline (hardware.hpp), or the text the
//                                              CLI's --hw takes: a profile file or a bundled name
//    "scenario": {...},                        the scenario object (evaluate.hpp)
//    "pipeline": {...},                        the pipeline options object (pipeline_io.hpp)
//    "gui": {...}}                             the GUI's view settings (tab, layer, mask view);
//                                              an object, read by the GUI only
//
// Every key is checked: an unknown one is a ConfigError at its pointer with a "did you
// mean", as in every other document, and each part is parsed here (errors at /hardware/...,
// /scenario/..., /pipeline/...) so that a bad session is refused before anything uses it.
// "gui" is the one part this layer does not read: it is the GUI's, and the CLI leaves it
// alone knowingly (it is not a typo and changes no number).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hdlab/model/config_io.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::simulator {

struct SessionDocument {
  model::Config config;
  std::optional<HardwareProfile> hardware;  // given inline
  std::string hardware_name;                // given as text (a file or a bundled name); the reader resolves it
  nlohmann::json scenario;                  // the object as written (checked), or null when absent
  nlohmann::json pipeline;                  // the object as written (checked), or null when absent
  nlohmann::json gui;                       // object or null; kept as written
};

// Whether a model file's document is a session (a config document with one of the
// session's own parts); a plain config document still reads as one.
bool is_session_document(const nlohmann::json& doc);

SessionDocument parse_session(const nlohmann::json& doc);
// Absent parts stay absent; the config is written normalised (model::to_json).
nlohmann::json to_json(const SessionDocument& s);

}  // namespace hdlab::simulator
