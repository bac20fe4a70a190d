// Outputs of one forward on given token ids (outputs.hpp): captured through the runner's
// hidden-state observer, reordered to logical row order on the host, written as safetensors.
#include "hdlab/executor/outputs.hpp"

#include <algorithm>
#include <numeric>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/error.hpp"

namespace hdlab::executor {

namespace {

std::vector<float> as_floats(std::span<const std::int64_t> v) {
  return std::vector<float>(v.begin(), v.end());
}

// Rows of `x` ([rows, W] host values in physical order) sorted by logical position:
// the tensor and its positions.
std::pair<CapturedTensor, CapturedTensor> logical_rows(const std::string& name, std::vector<float> x,
                                                       std::span<const std::int64_t> positions, std::int64_t width) {
  const std::size_t rows = positions.size(), w = static_cast<std::size_t>(width);
  std::vector<std::size_t> order(rows);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return positions[a] < positions[b]; });
  CapturedTensor t{name, {static_cast<std::int64_t>(rows), width}, std::vector<float>(x.size()), StDtype::f32};
  CapturedTensor pos{"positions." + name, {static_cast<std::int64_t>(rows)}, {}, StDtype::i64};
  for (std::size_t r = 0; r < rows; ++r) {
    std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(order[r] * w), w, t.values.begin() + static_cast<std::ptrdiff_t>(r * w));
    pos.values.push_back(static_cast<float>(positions[order[r]]));
  }
  return {std::move(t), std::move(pos)};
}

std::string state_name(const HiddenState& s) {
  if (s.layer < 0) return "embeddings";
  std::string name = "hidden." + std::to_string(s.layer);
  if (s.recurrent) name += ".iter." + std::to_string(s.iteration);
  return name;
}

// Clears the observer however the capture ends.
struct ObserverGuard {
  Runner& runner;
  ~ObserverGuard() { runner.set_hidden_observer({}); }
};

std::map<std::string, std::string> describe_outputs(const Runner& runner, Phase phase, std::int64_t tokens) {
  const model::Config& c = runner.config();
  return {{"format", "hdlab-outputs"},
          {"format_version", "1"},
          {"producer", "hdlab"},
          {"model", c.effective.name},
          {"design", model::describe(c.design)},
          {"config", model::to_json(c).dump()},
          {"phase", to_string(phase)},
          {"tokens", std::to_string(tokens)},
          {"copies", std::to_string(runner.copies())},
          {"hidden_width", std::to_string(runner.residual_width())},
          {"vocab_size", std::to_string(c.effective.vocab_size)},
          {"padded_vocab", std::to_string(c.effective.padded_vocab())},
          {"run_dtype", to_string(runner.options().dtype)},
          {"layout", model::to_string(runner.layout())},
          {"row_order", "ascending logical position t = token * copies + copy (positions.<name> per tensor)"}};
}

}  // namespace

const CapturedTensor* ForwardOutputs::find(const std::string& name) const {
  for (const CapturedTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

ForwardOutputs capture_outputs(Runner& runner, Phase phase, std::span<const std::int32_t> ids) {
  const std::int64_t T = static_cast<std::int64_t>(ids.size());
  if (T < 1 || (phase == Phase::decode && T < 2))
    throw model::ConfigError("/input_ids", std::string("a ") + to_string(phase) + " capture needs at least " +
                                               (phase == Phase::decode ? "2 token ids (a prompt and the token decoded)"
                                                                       : "1 token id") +
                                               ", got " + std::to_string(T));
  ForwardOutputs out;
  out.metadata = describe_outputs(runner, phase, T);
  std::vector<std::int64_t> id64(ids.begin(), ids.end());
  out.tensors.push_back({"input_ids", {T}, as_floats(id64), StDtype::i64});
  std::vector<std::int64_t> last_positions;  // of the last state: the logits rows are among them
  auto observer = [&](const HiddenState& s) {
    auto [t, pos] = logical_rows(state_name(s), runner.backend().download_f32(s.x), s.positions, s.x.dim(1));
    last_positions.assign(s.positions.begin(), s.positions.end());
    std::sort(last_positions.begin(), last_positions.end());
    out.tensors.push_back(std::move(t));
    out.tensors.push_back(std::move(pos));
  };
  ObserverGuard guard{runner};
  ForwardResult r;
  switch (phase) {
    case Phase::train_forward:
      runner.set_hidden_observer(observer);
      r = runner.train_forward(ids);
      break;
    case Phase::prefill:
      runner.set_hidden_observer(observer);
      r = runner.prefill(ids, T);
      break;
    case Phase::decode:
      runner.prefill(ids.first(static_cast<std::size_t>(T - 1)), T);
      runner.set_hidden_observer(observer);
      r = runner.decode_step(ids.back());
      break;
  }
  // The loss rows, in token order (Runner: the final copy's rows; prefill and decode:
  // the last token's only).
  const std::int64_t c = runner.copies();
  std::vector<std::int64_t> loss;
  for (auto t : last_positions)
    if (t % c == c - 1) loss.push_back(t);
  if (phase != Phase::train_forward && !loss.empty()) loss = {loss.back()};
  const std::int64_t V = r.logits.dim(1);
  if (static_cast<std::int64_t>(loss.size()) != r.logits.dim(0))
    throw std::logic_error("capture_outputs: " + std::to_string(r.logits.dim(0)) + " logits rows for " +
                           std::to_string(loss.size()) + " final-copy rows");
  out.tensors.push_back({"logits", {r.logits.dim(0), V}, runner.backend().download_f32(r.logits), StDtype::f32});
  out.tensors.push_back({"positions.logits", {static_cast<std::int64_t>(loss.size())}, as_floats(loss), StDtype::i64});
  return out;
}

std::size_t capture_bytes(const Runner& runner, Phase phase, std::int64_t tokens) {
  std::int64_t passes = 1;  // the embeddings
  for (const LayerGroup& g : runner.groups()) passes += g.passes;
  const std::int64_t rows = runner.copies() * (phase == Phase::decode ? 1 : tokens);
  const std::int64_t loss = phase == Phase::train_forward ? tokens : 1;
  const std::int64_t floats = passes * rows * (runner.residual_width() + 2) +  // + the positions as float, then I64
                              loss * (runner.config().effective.padded_vocab() + 2) + 2 * tokens;
  return static_cast<std::size_t>(floats) * sizeof(float);
}

void write_outputs(const std::string& path, const ForwardOutputs& outputs) {
  std::vector<SafetensorsTensorSpec> specs;
  std::map<std::string, const CapturedTensor*> by_name;
  for (const CapturedTensor& t : outputs.tensors) {
    specs.push_back({t.name, t.shape, t.dtype});
    by_name[t.name] = &t;
  }
  write_safetensors(
      path, specs, [&](const SafetensorsTensorSpec& s) { return by_name.at(s.name)->values; }, StDtype::f32,
      outputs.metadata);
}

}  // namespace hdlab::executor
