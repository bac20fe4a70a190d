#pragma once
// The executor's design registry: what the design modules of executor/src/designs/ add to
// the executor beside the backbone's ops. Each question dispatches over model::Method;
// a design answers those it has something for (an overload on its design struct, found
// at compile time) and the rest keep the backbone's behaviour.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "hdlab/executor/op_cases.hpp"
#include "hdlab/executor/weights.hpp"

namespace hdlab::executor {

// Cases of the design modules' own ops (module_op.hpp): the correctness table, its tests
// and the op benchmarks run them on every backend.
std::vector<OpCase> design_op_cases(ScalarType type);

// Where a design's model-wide tensors sit in weight_specs' order: after the input table
// (the input side: more tables, an embedding projection) or after the last layer (the
// output side: a readout, a prediction head, an adapter).
enum class WeightsAt { input, output };
// The model-wide weights design `m` adds at `at`, each under its full name ("hdlab.<...>").
void add_design_model_weights(const model::Method& m, const model::Backbone& b, WeightsAt at,
                              std::vector<WeightSpec>& out);
// The weights design `m` adds to one layer, each named `prefix` + its own name (prefix:
// the layer's design_tensor_prefix); a design without weights of its own adds nothing.
void add_design_layer_weights(const model::Method& m, const model::Backbone& b, const std::string& prefix,
                              std::vector<WeightSpec>& out);
// Where design `m`'s own tensors of a layer sit: "model.layers.{l}.hdlab_<group>.", the
// group the method's JSON key unless its module names another (VWN: "ghc").
std::string design_tensor_prefix(const LayerNames& n, const model::Method& m);

// The uploader's two hands, as a design module sees them: store a tensor's device copy
// under a name (keep_f32: stored f32 whatever the backend's type), and find one by name
// (an empty Tensor when there is none).
using PutTensor = std::function<void(const std::string& name, Shape shape, const std::vector<float>& values,
                                     bool keep_f32)>;
using GetTensor = std::function<Tensor(const std::string& name)>;
// Stores a [rows, 2c] matrix as its column halves "<name>.h" and "<name>.e" ([rows, c]
// each, `type` as the backend's), so that x [h | e] W^T is two GEMMs accumulating.
void put_column_halves(const WeightSpec& spec, const std::vector<float>& values, const PutTensor& put);
// Places one of design `m`'s tensors in the layout its ops want, when the module stores
// it otherwise than as given (split into halves, spread over columns): true when placed.
bool place_design_weight(const model::Method& m, const WeightSpec& spec, const std::vector<float>& values,
                         const PutTensor& put);
// Fills the model-wide and per-layer tensors the runner reads for design `m` (the extra
// input tables, the wide residual's projection, readout and connections, the injection
// adapter) from the uploaded ones; a design without tensors of its own leaves them empty.
void bind_design_weights(const model::Method& m, const GetTensor& get, ModelWeights& w);
void bind_design_layer_weights(const model::Method& m, LayerWeights& w);
// Device bytes upload_weights allocates for design `m` beyond its specs' (tensors spread
// out at placement); 0 for most designs.
std::size_t design_extra_device_bytes(const model::Method& m, const model::Backbone& b);

// The coefficients of one of a layer's hyper-connections (around attention, else the
// FFN) for a design that computes them with its own op (DesignFeatures::module_mixing),
// from the layer's design tensors: the wide state h [R, n, D/m] -> alpha [R, n, m+n],
// beta [R, m, n] f32, as Backend::ghc_width / ghc_depth read them. eps: the backbone's
// norm epsilon. Throws std::logic_error for a design without such an op.
void design_mixing(const model::Method& m, Backend& backend, const DesignTensors& layer, bool attention,
                   const Tensor& h, float eps, const Tensor& alpha, const Tensor& beta);

}  // namespace hdlab::executor
