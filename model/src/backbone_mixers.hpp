#pragma once
// Token mixers of the backbone format (backbone_mixers.cpp): parsed, validated and written
// beside the rest of backbone_io.cpp.
#include <string>

#include "hdlab/model/backbone.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::model {

// Reads layer_types, linear_attention and attention_output_gate (b.num_layers set first).
void parse_mixers(ObjectReader& r, Backbone& b);
// layer_types' length, the linear sizes (by JSON pointer under `p`).
void validate_mixers(const Backbone& b, const std::string& p);
// Writes the keys only when they differ from the all-attention default.
void mixers_to_json(const Backbone& b, Json& j);

}  // namespace hdlab::model
