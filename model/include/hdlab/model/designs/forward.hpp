#pragma once
// Declarations the design module headers share (the module interface's types are in
// designs/interface.hpp; they are only named by reference in the module headers).
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace hdlab::model {

using Json = nlohmann::json;
using DesignDefaults = std::map<std::string, std::string>;
struct Backbone;
class ObjectReader;
struct MaskSpec;
enum class Layout;
struct ParamCounts;
struct LayerSchedule;
struct LayerRun;
struct DesignFeatures;
struct LayerAttentionRole;
struct DecodeAttention;
struct SizeKnob;
struct DesignForm;
struct OpDims;
struct OpNode;

}  // namespace hdlab::model
