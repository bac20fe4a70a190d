#pragma once
// Device memory of one sequence's forward passes as a reference implementation runs
// them (the executor's runner, executor/README.md): what `hdlab validate` checks a
// measured peak against and what the runner refuses a run by. Derived from the layer
// program's tensors (tensors.hpp): the tensors the nodes of the run's largest call read
// and write, and the cache slots its layer runs keep. Three parts:
//   weights    every parameter, resident (model::count_params) at the run's dtype;
//   KV caches  each cache slot of the schedule (a layer, and a loop iteration with
//              per-iteration KV), allocated once for the whole sequence with the
//              capacity the implementation reserves (schedule.hpp's kv_cache_positions:
//              full and intra layers every position of every token; sliding and HD local
//              layers a ring of twice (window + a step's rows), so that dropping old
//              entries never moves rows onto live ones; PHD the origins plus W hidden
//              tokens plus one step's K copies), and the linear layers' states;
//   workspace  one buffer per tensor kind the nodes use (hidden state, normed input, q,
//              k, v, attention output, sublayer output, FFN gate/up and activation, MoE
//              routing and expert buffers, linear mixers' projections, the hyper-
//              connections', the output path and the logits), reused by every layer and
//              sized by its largest use in the largest call of the run: a buffer is
//              allocated with a quarter of headroom (need + need / 4) so a slowly growing
//              decode does not reallocate every step. A decode run prefills its prompt
//              first, so its workspace is the prefill's. Plus each HD KV-mirror layer's
//              stored source input, and what the nodes do not name: the call's small
//              int32 index tensors (token ids, positions, row ids), the rows a layout
//              gathers or permutes, and the busiest expert's share of the routed tokens.
// Not modelled: host-side memory (tile plans, the CPU attention's per-thread scratch),
// which a device allocator does not see either.
#include <cstdint>
#include <string>
#include <vector>

#include "hdlab/model/design.hpp"
#include "hdlab/model/mask.hpp"
#include "hdlab/model/tensors.hpp"

namespace hdlab::model {

enum class ForwardPhase { train_forward, prefill, decode };

struct ForwardRun {
  ForwardPhase phase = ForwardPhase::prefill;
  std::int64_t tokens = 0;        // training length, prompt length, or the decode run's prompt
  std::int64_t decode_steps = 0;  // decode: steps after the prompt (the caches hold them too)
  Layout layout = Layout::interleaved;
  double element_bytes = 4;       // bytes per stored element (the runner's storage type)
  double headroom = 0.25;         // workspace buffers: allocated need * (1 + headroom)
};

struct ForwardMemory {
  double weight_bytes = 0;
  double kv_bytes = 0;
  double workspace_bytes = 0;
  std::vector<std::pair<std::string, double>> buffers;  // workspace by buffer, bytes
  double total() const { return weight_bytes + kv_bytes + workspace_bytes; }
};

ForwardMemory forward_memory(const Config& c, const ForwardRun& run);

// What one sequence's caches hold at `max_tokens` tokens' capacity, every cache slot of
// the schedule once: a KV slot of kv_cache_positions entries, a linear layer's states
// (layer_cache), at `element_bytes` an element. Bytes.
double cache_capacity_bytes(const Config& c, std::int64_t max_tokens, double element_bytes);

// Rows one call computes per layer pass (`all`) and the final-copy rows among them (the
// loss rows of a training forward; what HD KV-mirror layers keep): a training forward
// copies * L and L; a prefill the same except PHD plain / CSWA (the origins plus the
// last token's / last chunk's hidden copies); a decode step copies and 1.
struct ForwardRows {
  double all = 0, final = 0;
};
ForwardRows forward_rows(const Config& c, ForwardPhase phase, std::int64_t tokens);

}  // namespace hdlab::model
