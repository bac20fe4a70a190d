#pragma once
// Designs that buy extra computation from a fixed backbone (methods.md sections 1-5).
// A Design holds one method (baseline, HD, PHD, VWN, looped) and an optional growth step
// that first turns the backbone into a bigger one.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "hdlab/model/backbone.hpp"

namespace hdlab::model {

struct BaselineDesign {
  bool operator==(const BaselineDesign&) const = default;
};

// Hidden Decoding: token i, stream k sits at expanded position t = i*n + k.
enum class HdLayerKind { full, local, intra };
const char* to_string(HdLayerKind kind);
// Positions RoPE sees in intra layers: the expanded index t, or the token index i.
enum class RopeConvention { expanded, token_index };
const char* to_string(RopeConvention c);

struct HdDesign {
  std::int64_t n = 1;                    // streams per token
  std::vector<HdLayerKind> layer_kinds;  // one per (grown) backbone layer
  std::int64_t window = 0;               // local(w) window over expanded positions
  RopeConvention rope = RopeConvention::expanded;
  bool kv_mirror = false;   // mirrored layers run only the final stream
  double rope_theta = 0.0;  // RoPE base used under HD (0 in JSON means "the backbone's")
  bool operator==(const HdDesign&) const = default;
};

// Parallel Hidden Decoding: token i, copy j at t = i*K + j; copy 0 is the origin.
enum class PhdVariant { plain, swa, cswa };
const char* to_string(PhdVariant v);
struct PhdDesign {
  std::int64_t K = 1;
  PhdVariant variant = PhdVariant::plain;
  std::int64_t W = 0;  // hidden-token window (swa, cswa)
  std::int64_t C = 0;  // chunk in tokens (cswa)
  bool operator==(const PhdDesign&) const = default;
};

// Virtual Width Networks: residual stream D' = (n/m) D as n slots of D/m.
enum class VwnEmbedding { full, projected };
const char* to_string(VwnEmbedding e);
struct VwnDesign {
  std::int64_t m = 1;
  std::int64_t n = 1;
  bool dynamic = true;  // dynamic (input-dependent) GHC coefficients
  VwnEmbedding embedding = VwnEmbedding::full;
  bool mtp = false;
  bool operator==(const VwnDesign&) const = default;
  double ratio() const { return static_cast<double>(n) / static_cast<double>(m); }
};

// Looped: prelude P layers, a recurrent block of R layers run K times, coda C layers.
enum class LoopKv { per_iteration, shared };
const char* to_string(LoopKv k);
struct LoopedDesign {
  std::int64_t prelude = 0;
  std::int64_t recurrent = 0;
  std::int64_t coda = 0;
  std::int64_t iterations = 1;
  LoopKv kv = LoopKv::per_iteration;
  bool input_injection = false;  // 2D -> D adapter re-injects the embedding each iteration
  bool operator==(const LoopedDesign&) const = default;
  // Layer passes per token: P + K*R + C.
  std::int64_t layer_passes() const { return prelude + iterations * recurrent + coda; }
};

// Growth of a trained MoE: depth by depth_factor, experts and top-k by width_factor.
enum class DepthMode { interpose, stack };
const char* to_string(DepthMode m);
struct GrowthDesign {
  std::int64_t depth_factor = 1;
  DepthMode depth_mode = DepthMode::interpose;
  std::int64_t width_factor = 1;
  double noise_alpha = 0.0;  // new experts = copies + N(0, (alpha * std(original))^2)
  bool operator==(const GrowthDesign&) const = default;
};

using Method = std::variant<BaselineDesign, HdDesign, PhdDesign, VwnDesign, LoopedDesign>;
const char* method_name(const Method& m);  // "baseline", "hd", "phd", "vwn", "looped"

struct Design {
  std::string name;  // free label; derived from the method when empty
  Method method = BaselineDesign{};
  std::optional<GrowthDesign> growth;
  // Keys the design's JSON left out and the value taken for each, by JSON pointer
  // ("/design/hd/rope" -> "expanded (hdlab's default)"): `hdlab check` prints them.
  std::map<std::string, std::string> defaults;
  // Designs are equal when they compute the same thing; how they were written (which
  // values came from defaults) does not count.
  bool operator==(const Design& o) const { return name == o.name && method == o.method && growth == o.growth; }
};

// A validated backbone + design. `effective` is the backbone after growth, the one
// the method applies to; everything downstream uses it.
struct Config {
  Backbone base;
  Design design;
  Backbone effective;
  bool operator==(const Config&) const = default;
};

// Applies growth to a backbone's configuration (layer count, experts, top-k).
Backbone grow(const Backbone& base, const GrowthDesign& g);
// For depth growth: which base layer each grown layer copies.
std::vector<std::int64_t> grown_layer_sources(std::int64_t base_layers, const GrowthDesign& g);

// A short human label: "hd n=4 (20 intra, 10 local, 6 full)".
std::string describe(const Design& d);

}  // namespace hdlab::model
