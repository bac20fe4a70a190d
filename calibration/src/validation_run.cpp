// One validation case measured on a backend and predicted by the simulator, and the
// held-out check against a profile's calibration shapes (validation.hpp).
#include <algorithm>
#include <memory>
#include <set>

#include "hdlab/calibration/validation.hpp"
#include "hdlab/executor/measure.hpp"
#include "hdlab/executor/weights.hpp"
#include "hdlab/model/error.hpp"
#include "hdlab/model/schedule.hpp"
#include "hdlab/simulator/phases.hpp"
#include "hdlab/simulator/roofline.hpp"

namespace hdlab::calibration {

using executor::Phase;

namespace {

// The decode steps measure() runs after its prefill: warm-up, then the measured ones.
std::int64_t decode_steps(const ValidationSpec& s) { return s.warmup + s.repeats; }

}  // namespace

CaseMeasurement measure_case(executor::Backend& backend, const ValidationCase& c, const ValidationSpec& spec) {
  executor::RunOptions ro;
  ro.dtype = executor::ScalarType::f32;
  ro.layout = c.layout;
  const executor::RunShape shape{c.phase, c.tokens, c.phase == Phase::decode ? decode_steps(spec) : 0};
  executor::require_run_fits(backend, c.config, shape, ro);
  executor::RandomWeights random(spec.seed);
  std::unique_ptr<executor::GrownWeights> grown;
  executor::WeightSource* source = &random;
  if (c.config.design.growth) {  // the seed gives the base model; its grown copy runs
    grown = std::make_unique<executor::GrownWeights>(c.config, random, spec.seed + 1, ro.normalize_topk);
    source = grown.get();
  }
  executor::Runner runner(backend, c.config, executor::upload_weights(backend, c.config, *source, ro.dtype), ro);
  executor::MeasureOptions mo;
  mo.phase = c.phase;
  mo.tokens = c.tokens;
  mo.warmup = spec.warmup;
  mo.repeats = spec.repeats;
  const executor::Measurement m = executor::measure(runner, backend, mo);
  CaseMeasurement out;
  out.seconds = m.median_ms * 1e-3;
  out.min_seconds = m.min_ms * 1e-3;
  out.max_seconds = m.max_ms * 1e-3;
  out.setup_seconds = m.median_setup_ms * 1e-3;
  for (int k = 0; k < model::op_kind_count; ++k) out.op_s[static_cast<std::size_t>(k)] = m.op_ms(static_cast<model::OpKind>(k)) * 1e-3;
  out.peak_bytes = static_cast<double>(m.peak_bytes);
  out.weight_bytes = static_cast<double>(m.weight_bytes);
  out.kv_bytes = static_cast<double>(m.kv_bytes);
  out.context = m.context;
  return out;
}

CasePrediction predict_case(const ValidationCase& c, const simulator::HardwareProfile& hw, const ValidationSpec& spec) {
  const simulator::ModelShape shape = simulator::model_shape(c.config.effective, c.config.design.method);
  const simulator::LayerPlan plan = simulator::plan_layers(c.config.effective, c.config.design.method);
  simulator::PassOptions po;
  po.layout = c.effective_layout();
  po.tile_q = spec.tile_q;
  po.tile_k = spec.tile_k;
  po.mirror_final_only_decode = true;  // the executor decodes HD's mirrored layers on the final stream
  po.count_executed = true;  // the kernel runs whole visible tiles
  auto pass = std::make_unique<simulator::PassCost>();
  CasePrediction out;
  switch (c.phase) {
    case Phase::train_forward: simulator::train_forward_pass(c.config, shape, plan, 1, c.tokens, po, *pass); break;
    case Phase::prefill: simulator::prefill_pass(c.config, shape, plan, 1, c.tokens, po, *pass); break;
    case Phase::decode:
      // Step s runs at context tokens + s; the median of the measured steps is the
      // middle one (time grows linearly with context, so the middle is the median).
      out.context = c.tokens + spec.warmup + (spec.repeats - 1) / 2;
      simulator::decode_pass(c.config.design.method, shape, plan, 1, out.context, po, *pass);
      break;
  }
  const simulator::Roofline rl = simulator::make_roofline(hw, shape.precision.compute, simulator::Sharding{});
  simulator::PassTime t;
  simulator::pass_time(*pass, rl, simulator::Timing::forward, t);
  out.seconds = t.total_s;
  out.op_s = t.op_s;
  model::ForwardRun run;
  run.phase = c.phase == Phase::train_forward ? model::ForwardPhase::train_forward
              : c.phase == Phase::prefill     ? model::ForwardPhase::prefill
                                              : model::ForwardPhase::decode;
  run.tokens = c.tokens;
  run.decode_steps = c.phase == Phase::decode ? decode_steps(spec) : 0;
  run.layout = po.layout;
  run.element_bytes = shape.bytes;
  out.memory = model::forward_memory(c.config, run);
  return out;
}

namespace {

using Shape = std::vector<std::int64_t>;

model::ForwardPhase forward_phase(Phase p) {
  return p == Phase::train_forward ? model::ForwardPhase::train_forward
         : p == Phase::prefill     ? model::ForwardPhase::prefill
                                   : model::ForwardPhase::decode;
}

// The products a case runs, as {M, N, K} (y[M, N] = x[M, K] W^T), and its attention
// calls as {query rows, key rows, H, G, hd}. Routed experts are left out: their rows
// depend on the routing.
void case_shapes(const ValidationCase& c, std::set<Shape>& gemm, std::set<Shape>& attention) {
  const model::Backbone& b = c.config.effective;
  const auto rows = model::forward_rows(c.config, forward_phase(c.phase), c.tokens);
  const std::int64_t R = static_cast<std::int64_t>(rows.all), Rf = static_cast<std::int64_t>(rows.final);
  const std::int64_t D = b.hidden, q = b.num_heads * b.head_dim, kv = b.num_kv_heads * b.head_dim;
  const std::int64_t loss = c.phase == Phase::train_forward ? Rf : 1;
  for (std::int64_t r : {R, Rf}) {
    gemm.insert({r, q, D});
    gemm.insert({r, kv, D});
    gemm.insert({r, D, q});
  }
  if (b.intermediate > 0) gemm.insert({R, 2 * b.intermediate, D}), gemm.insert({R, D, b.intermediate});
  if (b.moe) {
    gemm.insert({R, b.moe->num_experts, D});
    if (b.moe->num_shared_experts > 0)
      gemm.insert({R, 2 * b.moe->shared_expert_intermediate, D}), gemm.insert({R, D, b.moe->shared_expert_intermediate});
  }
  gemm.insert({loss, b.padded_vocab(), D});
  const model::Method& method = c.config.design.method;
  if (const model::DesignFeatures f = model::design_features(method); f.wide_residual) {
    const std::int64_t wide = f.residual_width(D);
    gemm.insert({loss, D, wide});
    if (f.projected_embedding) gemm.insert({R, wide, D});
  }
  if (model::recurrent_block(method, b.num_layers)) gemm.insert({R, D, D});  // looped: the injection adapter's halves
  const std::int64_t keys = c.phase == Phase::decode ? (c.tokens + 1) * R : R;
  attention.insert({R, keys, b.num_heads, b.num_kv_heads, b.head_dim});
}

std::string shape_text(const Shape& s) {
  std::string t;
  for (auto v : s) t += (t.empty() ? "" : "x") + std::to_string(v);
  return t;
}

}  // namespace

std::vector<std::string> overlaps(const ValidationCase& c, const std::vector<Sample>& calibration) {
  std::set<Shape> gemm, attention;
  case_shapes(c, gemm, attention);
  std::vector<std::string> out;
  for (const Sample& s : calibration) {
    if (s.bench == BenchKind::gemm && gemm.count(s.shape))
      out.push_back("GEMM " + shape_text(s.shape) + " (M x N x K) is calibration sample \"" + s.name + "\"");
    if (s.bench == BenchKind::attention && attention.count(s.shape))
      out.push_back("attention " + shape_text(s.shape) + " (query rows x key rows x H x G x hd) is calibration sample \"" +
                    s.name + "\"");
  }
  return out;
}

std::vector<Sample> calibration_samples(const simulator::HardwareProfile& hw) {
  std::vector<Sample> out;
  if (!hw.calibration.is_object() || !hw.calibration.contains("samples")) return out;
  const nlohmann::json& list = hw.calibration["samples"];
  if (!list.is_array()) throw model::ConfigError("/calibration/samples", "must be a list of samples");
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(sample_from_json(list[i], "/calibration/samples/" + std::to_string(i)));
  return out;
}

}  // namespace hdlab::calibration
