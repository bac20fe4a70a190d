#pragma once
// What layer_ops.cpp and outside_ops.cpp share: the cost shapes of element-wise ops,
// norms and matrix products.
#include "hdlab/model/layer_program.hpp"

namespace hdlab::model::detail {

// An element-wise or reduction op over `elements_in` -> `elements_out` elements.
// Weights in the weights' precision, the elements in the activations'.
inline void vector_op(OpNode& r, double flops, double params, double elements_in, double elements_out,
                      const OpDims& s) {
  r.cost.flops = flops;
  r.cost.weight_bytes = params * s.weight_el_bytes;
  r.cost.act_bytes_in = elements_in * s.bytes;
  r.cost.act_bytes_out = elements_out * s.bytes;
  r.params = params;
  r.calls = flops > 0 ? 1 : 0;
  r.rows = 0;
  r.weight_dim_min = 0;
}

// `norms` norms of D running over `rows` rows in all: RMSNorm 4 FLOPs per element (square,
// sum, scale, weight) and a weight of D each; LayerNorm 7 (mean and variance, centre,
// scale, weight, bias) and a weight and a bias of D each.
inline void norm_op(OpNode& r, const OpDims& s, double rows, double norms) {
  const double elements = rows * s.D;
  vector_op(r, (s.layernorm ? 7 : 4) * elements, norms * s.D * (s.layernorm ? 2 : 1), elements, elements, s);
}

// A matrix product [N, in] x [in, out] -> [N, out] (+ bias), split by tensor parallelism
// as `split` says.
inline void gemm_op(OpNode& r, double N, double in, double out, double bias, const OpDims& s,
                    GemmSplit split = GemmSplit::column) {
  r.cost.flops = 2 * N * in * out + N * bias;
  r.cost.weight_bytes = (in * out + bias) * s.weight_el_bytes;
  r.cost.act_bytes_in = N * in * s.bytes;
  r.cost.act_bytes_out = N * out * s.bytes;
  r.params = in * out + bias;
  r.calls = 1;
  r.rows = N;
  r.weight_dim_min = in < out ? in : out;
  r.gemms = {OpGemm{N, out, in, 1, split}, OpGemm{}};
}

}  // namespace hdlab::model::detail
