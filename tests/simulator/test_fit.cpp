// Memory fit (fit.hpp): the need per device against the device's memory, by hand from
// the KV and weight formulas, and the smallest change that fits checked against
// independent evaluations one step smaller.
#include <catch2/catch.hpp>

#include <cmath>

#include "fixtures.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/simulator/fit.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"

using namespace hdlab;
using namespace hdlab::simulator;

namespace {

model::Config qwen3(const std::string& design) {
  const model::Backbone b = model::load_backbone(model::read_json_file(fixtures::source_path("profiles/models/qwen3-8b.json")));
  return model::make_config(b, model::parse_design(model::Json::parse(design), b));
}

HardwareProfile h100() {
  return parse_hardware_profile(model::read_json_file(fixtures::source_path("profiles/hardware/h100-sxm.json")));
}

// Qwen3-8B's KV cache per sequence with HD n streams on every layer: 36 layers x n x
// context positions x (K + V) x 8 KV heads x 128 dims x 2 bytes (bf16).
double qwen3_hd_kv_bytes(double n, double context) { return 36 * n * context * 2 * 8 * 128 * 2; }

double train_need(const model::Config& c, const HardwareProfile& hw, Scenario s, std::int64_t micro_batch,
                  std::int64_t tp) {
  s.train.micro_batch = micro_batch;
  s.parallel.tp = tp;
  return evaluate(c, hw, s)[Metric::train_memory_bytes];
}

}  // namespace

TEST_CASE("decode over capacity: Qwen3-8B + HD n=4 on H100 at batch 32 x 16384 tokens, by hand",
          "[fit][decode]") {
  const model::Config c = qwen3(R"({"hd": {"n": 4}})");
  Scenario s;
  s.decode.batch = 32;
  s.decode.context = 16384;
  const MemoryFit fit = memory_fit(c, h100(), s);
  const PhaseFit& f = fit.decode;
  const double weights = static_cast<double>(model::count_params(c).total) * 2;  // bf16, tp 1
  const double kv = qwen3_hd_kv_bytes(4, 16384);                               // 9.66 GB
  const double capacity = 80e9 * 0.9;                                            // memory x utilisation
  CHECK(f.current.need_bytes == weights + 32 * kv);  // 329 GB
  CHECK(f.capacity_bytes == capacity);
  CHECK_FALSE(f.fits());
  CHECK_FALSE(fit.fits());
  REQUIRE(f.parts.size() == 2);
  CHECK(f.parts[0].bytes == weights);
  CHECK(f.parts[1].bytes == 32 * kv);
  // The largest batch whose cache fits beside the weights at tp 1.
  const auto batch = static_cast<std::int64_t>(std::floor((capacity - weights) / kv));
  CHECK(batch == 5);
  REQUIRE(f.smaller_batch);
  CHECK(f.smaller_batch->batch == batch);
  CHECK(f.smaller_batch->tp == 1);
  CHECK(f.smaller_batch->need_bytes == weights + 5 * kv);
  // tp splits the weights and (8 KV heads: up to tp 8) the cache: (weights + 32 kv) / tp
  // fits first at tp 8 (tp 4: 82 GB).
  CHECK((weights + 32 * kv) / 4 > capacity);
  CHECK((weights + 32 * kv) / 8 <= capacity);
  REQUIRE(f.more_devices);
  CHECK(f.more_devices->tp == 8);
  CHECK(f.more_devices->batch == 32);
  CHECK(f.more_devices->need_bytes == (weights + 32 * kv) / 8);
  const std::string text = describe(f);
  CHECK_THAT(text, Catch::Contains("decode at batch 32 x 16384 tokens does not fit: 329.4 GB per device"));
  CHECK_THAT(text, Catch::Contains("> 72.0 GB usable (0.9 x 80.0 GB)"));
  CHECK_THAT(text, Catch::Contains("Fits at batch 5 (68.4 GB), or tp 8 (8 devices, 41.2 GB each)."));
  // Prefill of one 4096-token prompt fits: the weights and one 2.4 GB cache.
  CHECK(fit.prefill.fits());
  CHECK(fit.prefill.current.need_bytes == weights + qwen3_hd_kv_bytes(4, 4096));
  CHECK_FALSE(fit.prefill.smaller_batch);
  CHECK_FALSE(fit.prefill.more_devices);
  CHECK_THAT(describe(fit.prefill), Catch::Contains("fits: 22.5 GB per device of 72.0 GB usable"));
}

TEST_CASE("a KV cache with one KV head does not split over tp: no device count helps", "[fit][decode]") {
  const model::Config c = fixtures::config(fixtures::tiny_dense(), "{}");
  Scenario s;
  s.decode.batch = 100000;
  const PhaseFit f = memory_fit(c, fixtures::device(), s).decode;
  const double kv = 2 * 4096.0 * 16;  // 2 layers x 4096 tokens x (K + V of one 4-dim head) x 2 B
  CHECK(f.current.need_bytes == 1368 * 2 + 100000 * kv);
  CHECK(f.capacity_bytes == 10e9 * 0.9);
  REQUIRE(f.smaller_batch);
  CHECK(f.smaller_batch->batch == static_cast<std::int64_t>(std::floor((9e9 - 1368 * 2) / kv)));
  CHECK_FALSE(f.more_devices);  // tp 2..8 halves only the 2.7 kB of weights
  CHECK(f.max_tp == 8);
}

TEST_CASE("training over capacity: the smallest tp and the largest micro-batch that fit", "[fit][train]") {
  const HardwareProfile hw = h100();
  const model::Config c = qwen3(R"({"hd": {"n": 4}})");
  const Scenario s;  // micro-batch 1 x 4096 tokens, selective recomputation, Adam
  const PhaseFit f = memory_fit(c, hw, s).train;
  CHECK(f.current.need_bytes == evaluate(c, hw, s)[Metric::train_memory_bytes]);
  CHECK(f.capacity_bytes == 80e9);  // training has the whole memory (train_fits)
  CHECK_FALSE(f.fits());
  CHECK_FALSE(f.smaller_batch);  // already one sequence
  REQUIRE(f.more_devices);
  CHECK(f.more_devices->tp == 4);
  CHECK(train_need(c, hw, s, 1, 2) > 80e9);
  CHECK(train_need(c, hw, s, 1, 4) <= 80e9);
  CHECK(f.more_devices->need_bytes == train_need(c, hw, s, 1, 4));
  CHECK_THAT(describe(f), Catch::Contains("training at micro-batch 1 x 4096 tokens does not fit"));
  CHECK_THAT(describe(f), Catch::Contains("weights 20.1 GB + gradients 20.1 GB + optimizer state 120.7 GB"));

  // The baseline at tp 8 and micro-batch 32 (113 GB): the largest micro-batch below that fits.
  const model::Config base = qwen3("{}");
  Scenario big;
  big.parallel.tp = 8;
  big.train.micro_batch = 32;
  const PhaseFit g = memory_fit(base, hw, big).train;
  CHECK_FALSE(g.fits());
  REQUIRE(g.smaller_batch);
  const std::int64_t mb = g.smaller_batch->batch;
  CHECK(train_need(base, hw, big, mb, 8) <= 80e9);
  CHECK(train_need(base, hw, big, mb + 1, 8) > 80e9);
  CHECK_FALSE(g.more_devices);  // tp 8 is gpus_per_node already
  CHECK_THAT(describe(g), Catch::Contains("Fits at micro-batch " + std::to_string(mb)));
}

TEST_CASE("a scenario that fits reports no change", "[fit]") {
  Scenario s;
  s.parallel.tp = 4;
  const MemoryFit fit = memory_fit(qwen3(R"({"hd": {"n": 4}})"), h100(), s);
  CHECK(fit.fits());
  for (const PhaseFit* f : {&fit.decode, &fit.prefill, &fit.train}) {
    CHECK_FALSE(f->smaller_batch);
    CHECK_FALSE(f->more_devices);
    CHECK(describe_changes(*f).empty());
  }
}

TEST_CASE("pipeline over capacity: device state plus peak activations, and the fewest devices that fit",
          "[fit][pipeline]") {
  const HardwareProfile hw = h100();
  const model::Config c = qwen3(R"({"hd": {"n": 4}})");
  const Scenario s;
  PipelineOptions o;
  o.stages = 4;
  o.microbatches = 16;
  const PipelineResult r = simulate_pipeline(c, hw, s, o);
  // The stages hold every parameter once: weights (bf16), gradients (bf16), Adam (12 B).
  double weights = 0, grads = 0, optimizer = 0;
  for (const PipelineDevice& d : r.devices) {
    weights += d.weight_bytes;
    grads += d.grad_bytes;
    optimizer += d.optimizer_bytes;
  }
  const double params = static_cast<double>(model::count_params(c).total);
  CHECK(weights == Approx(params * 2).epsilon(1e-12));
  CHECK(grads == Approx(params * 2).epsilon(1e-12));
  CHECK(optimizer == Approx(params * 12).epsilon(1e-12));

  const PhaseFit f = pipeline_fit(c, hw, s, o, r);
  // 1F1B: the first stage holds p micro-batches, the most activations (92 GB alone).
  CHECK(f.device == 0);
  const PipelineDevice& d0 = r.devices[0];
  CHECK(f.current.need_bytes == d0.memory_bytes());
  CHECK(d0.memory_bytes() == d0.weight_bytes + d0.grad_bytes + d0.optimizer_bytes + d0.peak_activation_bytes);
  CHECK(d0.peak_activation_bytes > 80e9);
  CHECK_FALSE(f.fits());
  CHECK_FALSE(f.smaller_batch);
  REQUIRE(f.more_devices);
  // Fewest devices first (tp x pp), then the smaller tp; every layout before it fails.
  auto need = [&](std::int64_t tp, std::int64_t pp) {
    Scenario t = s;
    t.parallel.tp = tp;
    PipelineOptions p = o;
    p.stages = pp;
    double most = 0;
    for (const PipelineDevice& d : simulate_pipeline(c, hw, t, p).devices) most = std::max(most, d.memory_bytes());
    return most;
  };
  const FitLayout& l = *f.more_devices;
  CHECK(l.need_bytes == need(l.tp, l.pp));
  CHECK(l.need_bytes <= 80e9);
  CHECK(need(1, 8) > 80e9);  // more stages alone: 1F1B's first stage still holds every layer's activations
  CHECK(l.tp == 2);
  CHECK(l.pp == 4);
  CHECK_THAT(describe(f), Catch::Contains("pipeline training on 4 stages at micro-batch 1 x 4096 tokens does not fit"));
  CHECK_THAT(describe(f), Catch::Contains("does not fit: device 0 needs "));
  CHECK_THAT(describe(f), Catch::Contains("tp 2 x pp 4 (8 devices"));
}
