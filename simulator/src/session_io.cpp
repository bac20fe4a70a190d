// Session documents: a config document plus hardware, scenario, pipeline and the GUI's
// view settings (session_io.hpp).
#include "hdlab/simulator/session_io.hpp"

#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/pipeline_io.hpp"

namespace hdlab::simulator {

namespace {

constexpr const char* kSessionParts[] = {"hardware", "scenario", "pipeline", "gui"};

}  // namespace

bool is_session_document(const nlohmann::json& doc) {
  if (!doc.is_object()) return false;
  for (const char* key : kSessionParts)
    if (doc.contains(key)) return true;
  return false;
}

SessionDocument parse_session(const nlohmann::json& doc) {
  model::ObjectReader r(doc, "");
  // All keys first, so that a typo ("scenaro") is reported with the closest session key.
  r.allow({"description", "backbone", "hf_config", "dtype", "design", "hardware", "scenario", "pipeline", "gui"});
  r.finish();
  SessionDocument s;
  nlohmann::json config = doc;
  for (const char* key : kSessionParts) config.erase(key);
  s.config = model::parse_config(config);
  if (const nlohmann::json* h = r.find("hardware")) {
    if (h->is_string()) {
      s.hardware_name = model::read_string(*h, "/hardware");
      if (s.hardware_name.empty())
        model::fail("/hardware", "is empty: give a profile object, a file or a bundled name");
    } else if (h->is_object()) {
      s.hardware = parse_hardware_profile(*h, "/hardware");
    } else {
      model::fail("/hardware",
                  "must be a hardware profile object or a file / bundled name, got " + model::json_type_name(*h));
    }
  }
  if (const nlohmann::json* sc = r.find("scenario")) {
    parse_scenario(*sc, "/scenario");  // checked here; callers may lay flags over the object
    s.scenario = *sc;
  }
  if (const nlohmann::json* p = r.find("pipeline")) {
    parse_pipeline_options(*p, "/pipeline");
    s.pipeline = *p;
  }
  if (const nlohmann::json* g = r.find("gui")) {
    if (!g->is_object())
      model::fail("/gui", "must be an object (the GUI's view settings), got " + model::json_type_name(*g));
    s.gui = *g;
  }
  return s;
}

nlohmann::json to_json(const SessionDocument& s) {
  nlohmann::json j = model::to_json(s.config);
  if (s.hardware)
    j["hardware"] = to_json(*s.hardware);
  else if (!s.hardware_name.empty())
    j["hardware"] = s.hardware_name;
  if (!s.scenario.is_null()) j["scenario"] = s.scenario;
  if (!s.pipeline.is_null()) j["pipeline"] = s.pipeline;
  if (!s.gui.is_null()) j["gui"] = s.gui;
  return j;
}

}  // namespace hdlab::simulator
