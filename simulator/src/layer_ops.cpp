// The simulator's op tables are the model's op nodes (model/layer_program.hpp): the FLOPs
// and bytes of every op are written there, once, for the simulator and the executor.
#include "hdlab/simulator/op_table.hpp"

namespace hdlab::simulator {

void layer_ops(const ModelShape& s, const LayerSignature& sig, const LayerWork& w, bool count_executed, OpTable& out) {
  model::LayerFeatures f{sig.moe, sig.kv_from_source, sig.mixer};
  f.nope = sig.nope;
  f.ffn = sig.ffn;
  model::layer_ops(s, f, w, count_executed, out);
}

void outside_ops(const ModelShape& s, const OutsideWork& w, OpTable& out) { model::outside_ops(s, w, out); }

}  // namespace hdlab::simulator
