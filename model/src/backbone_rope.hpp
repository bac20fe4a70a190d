#pragma once
// The backbone format's "rope_scaling" object (backbone_rope.cpp): parsed, validated and
// written beside the rest of backbone_io.cpp. HF's key names, one type a block.
#include <string>

#include "hdlab/model/backbone.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::model {

// Reads the object at `r` (every key checked for its type and range, unknown keys refused).
RopeScaling parse_rope_scaling(ObjectReader& r);
// What depends on the rest of the backbone (positions, rotary dims, contexts), by JSON
// pointer under the backbone's `p`.
void validate_rope_scaling(const Backbone& b, const std::string& p);
// Written only when a scaling is set, with every default it applies.
void rope_scaling_to_json(const Backbone& b, Json& j);

}  // namespace hdlab::model
