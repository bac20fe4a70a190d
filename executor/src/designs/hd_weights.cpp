// HD's tensors in the executor (hdlab/executor/designs/hd_weights.hpp).
#include "hdlab/executor/designs/hd_weights.hpp"

#include <string>

namespace hdlab::executor::designs {

namespace {
std::string table_name(std::int64_t k) { return "hdlab.hd.embed_tokens." + std::to_string(k) + ".weight"; }
}  // namespace

void add_model_weights(const model::HdDesign& d, const model::Backbone& b, WeightsAt at,
                       std::vector<WeightSpec>& out) {
  if (at != WeightsAt::input) return;
  for (std::int64_t k = 1; k < d.n; ++k)
    out.push_back({table_name(k), {b.padded_vocab(), b.hidden}, WeightInit::normal, 1.0});
}

void bind_weights(const model::HdDesign& d, const GetTensor& get, ModelWeights& w) {
  for (std::int64_t k = 1; k < d.n; ++k) w.embed.push_back(get(table_name(k)));
}

}  // namespace hdlab::executor::designs
