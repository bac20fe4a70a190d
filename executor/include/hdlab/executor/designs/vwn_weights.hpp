#pragma once
// VWN in the executor (the design: model/src/designs/vwn.cpp): its tensors, how they are
// placed on the device and which of the runner's slots they fill. The runner's wide
// residual (embedding into n slots of D/m, the generalized hyper-connections around each
// sublayer, the GroupNorm readout and the MTP mixing) reads them through ModelWeights
// and LayerWeights::ghc_attn / ghc_ffn. Answers to the executor's design registry.
//
// Tensor names (D' = D n/m, s = D/m):
//   hdlab.vwn.embed_proj.weight                            [D', D]  projected embedding
//   model.layers.{l}.hdlab_ghc.{attn,ffn}.static_a         [n, m+n] the static width coefficients
//   model.layers.{l}.hdlab_ghc.{attn,ffn}.static_b         [m, n]   the static depth coefficients
//   model.layers.{l}.hdlab_ghc.{attn,ffn}.norm.weight      [s]      (dynamic GHC)
//   model.layers.{l}.hdlab_ghc.{attn,ffn}.dynamic.weight   [s, 2m+n] [in, out] = [W_a | W_b]
//   model.layers.{l}.hdlab_ghc.{attn,ffn}.dynamic.scale    [2]      (S_a, S_b)
//   hdlab.vwn.group_norm.weight / .bias                    [D']     output GroupNorm (groups of D)
//   hdlab.vwn.reduce.weight                                [D, D']  D' -> D
//   hdlab.vwn.mtp.weight                                   [s, 2s]  MTP mixing, input [h block | next-token e block]
#include <cstddef>
#include <string>
#include <vector>

#include "hdlab/executor/designs/registry.hpp"

namespace hdlab::executor::designs {

// The layer tensors' group: "ghc" (the name they were first saved under).
const char* layer_tensor_group(const model::VwnDesign& d);
void add_model_weights(const model::VwnDesign& d, const model::Backbone& b, WeightsAt at,
                       std::vector<WeightSpec>& out);
void add_layer_weights(const model::VwnDesign& d, const model::Backbone& b, const std::string& prefix,
                       std::vector<WeightSpec>& out);
// The scale pair spread over the 2m+n coefficient columns; the MTP matrix split into its
// h and e halves ("hdlab.vwn.mtp.weight.h" / ".e"), each one GEMM.
bool place_weight(const model::VwnDesign& d, const WeightSpec& spec, const std::vector<float>& values,
                  const PutTensor& put);
void bind_weights(const model::VwnDesign& d, const GetTensor& get, ModelWeights& w);
void bind_layer_weights(const model::VwnDesign& d, LayerWeights& w);
// The scale pairs' spread: 2 connections x L layers x (2m+n-2) more f32 values.
std::size_t extra_device_bytes(const model::VwnDesign& d, const model::Backbone& b);

}  // namespace hdlab::executor::designs
