// Published measurements as validation cases (calibration/published.hpp): the prediction
// of each metric from the cost model, the errors and efficiencies, the statistics per
// source and metric, the bundled TensorRT-LLM set, and bad files named by pointer.
#include <catch2/catch.hpp>

#include <cmath>

#include "../cli/cli_runner.hpp"
#include "hdlab/calibration/published.hpp"
#include "hdlab/simulator/serving.hpp"
#include "hdlab/model/config_io.hpp"
#include "hdlab/model/params.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/pipeline_cost.hpp"

using namespace hdlab;
using namespace hdlab::calibration;
using nlohmann::json;

namespace {

const std::string models_dir = testing::source_path("profiles/models");

simulator::HardwareProfile h100() {
  return simulator::parse_hardware_profile(model::read_json_file(testing::source_path("profiles/hardware/h100-sxm.json")));
}

// A source of two cases on Llama-2-7B fp16: a throughput row and a first-token row.
json two_case_source(double throughput, double latency_s) {
  return {{"source", {{"id", "mini"}, {"title", "two rows"}, {"citation", "made up for the test"}}},
          {"models", {{"l7", "llama2-7b-fp16.json"}}},
          {"devices", {{"H100", "h100-sxm"}}},
          {"assumptions", json::array({{{"setting", "s"}, {"value", "v"}, {"why", "w"}}})},
          {"cases", json::array({{{"id", "tput"}, {"metric", "output_tokens_per_s_per_gpu"}, {"published", throughput},
                                  {"device", "H100"}, {"model", "l7"}, {"tp", 2}, {"batch", 64}, {"input", 512},
                                  {"output", 256}},
                                 {{"id", "ttft"}, {"metric", "first_token_latency_s"}, {"published", latency_s},
                                  {"device", "H100"}, {"model", "l7"}, {"batch", 1}, {"input", 2048}}})}};
}

}  // namespace

TEST_CASE("a published throughput row is predicted as a static batch: a prefill step and a decode step per later token", "[published]") {
  const PublishedSource s = parse_published(two_case_source(1000, 0.05), "mini.json", models_dir);
  const model::Config& c = s.models.at("l7");
  const auto hw = h100();
  // The same run from the serving engine's closed form, whose decode steps are the cost
  // model's decode steps at each context 512 .. 766 (output 256: 255 decode steps).
  simulator::Scenario sc;
  sc.parallel.tp = 2;
  const simulator::StaticBatch run = simulator::static_batch(c, hw, sc, 64, 512, 256);
  double decode_s = 0;
  for (std::int64_t j = 0; j < 255; ++j) {
    sc.decode = {64, 512 + j};
    decode_s += simulator::evaluate(c, hw, sc)[simulator::Metric::decode_step_s];
  }
  CHECK(run.total_s - run.prefill_s == Approx(decode_s).epsilon(1e-9));
  const PublishedPrediction p = predict_published(s.cases[0], c, hw);
  CHECK(p.seconds == Approx(run.total_s).epsilon(1e-12));
  CHECK(p.value == Approx(64.0 * 256 / run.total_s / 2).epsilon(1e-12));  // tokens/s per GPU over tp = 2
  CHECK(p.kv_fitting_requests == 64);
  sc.prefill = {512, 64};
  sc.decode = {64, 512 + 128};  // FLOPs: 255 steps at the mean context (they grow linearly)
  const simulator::Metrics m = simulator::evaluate(c, hw, sc);
  CHECK(p.model_flops ==
        Approx(m[simulator::Metric::prefill_flops] + 255 * m[simulator::Metric::decode_flops]).epsilon(1e-12));

  // First-token latency: one prompt's prefill, as the cost model prices it.
  const PublishedPrediction t = predict_published(s.cases[1], c, hw);
  sc = {};
  sc.prefill = {2048, 1};
  CHECK(t.value == Approx(simulator::evaluate(c, hw, sc)[simulator::Metric::prefill_s]).epsilon(1e-9));
}

TEST_CASE("published errors, efficiencies and statistics per source and metric", "[published]") {
  // Publish exactly 0.8x the predicted throughput and 2x the predicted latency: the
  // errors are then +25% and -50%, whatever the cost model says.
  PublishedSource probe = parse_published(two_case_source(1, 1), "mini.json", models_dir);
  const auto hw = h100();
  const PublishedPrediction tp = predict_published(probe.cases[0], probe.models.at("l7"), hw);
  const PublishedPrediction tt = predict_published(probe.cases[1], probe.models.at("l7"), hw);
  PublishedSource s = parse_published(two_case_source(0.8 * tp.value, 2 * tt.value), "mini.json", models_dir);
  const PublishedReport r = predict_sources({s}, {{{"mini", "H100"}, hw}});
  REQUIRE(r.results.size() == 2);
  CHECK(r.results[0].error() == Approx(0.25));
  CHECK(r.results[1].error() == Approx(-0.5));
  // Same FLOPs, published time 1.25x (throughput) and 2x (latency): MFU in proportion.
  CHECK(r.results[0].published_mfu == Approx(r.results[0].predicted_mfu / 1.25));
  CHECK(r.results[1].published_mfu == Approx(r.results[1].predicted_mfu / 2));
  const double peak = hw.matrix_peak_flop_per_s(model::DType::fp16);
  CHECK(r.results[1].predicted_mfu == Approx(tt.model_flops / (tt.seconds * peak)));
  REQUIRE(r.groups.size() == 2);  // one per metric
  CHECK(r.groups[0].metric == PublishedMetric::output_tokens_per_s_per_gpu);
  CHECK(r.groups[0].error.count == 1);
  CHECK(r.groups[0].error.median_signed == Approx(0.25));
  CHECK(std::isnan(r.groups[0].spearman_value));  // one case: no ranking
  CHECK(r.all.count == 2);
  CHECK(r.all.median_abs == Approx(0.375));  // (0.25 + 0.5) / 2
  CHECK(r.all.max_abs == Approx(0.5));
  const json j = to_json(r);
  CHECK(j["sources"][0]["cases"][1]["error"].get<double>() == Approx(-0.5));
  CHECK(j["sources"][0]["assumptions"][0]["why"] == "w");
  CHECK(to_csv(r).find("mini,tput,output_tokens_per_s_per_gpu,tokens/s/GPU,H100,l7,2,NVIDIA H100") != std::string::npos);
}

TEST_CASE("the bundled Llama 3 set: every row of the table, with the paper's parallel layout", "[published]") {
  const std::string file = testing::source_path("profiles/validation/published/llama3-405b-pretraining.json");
  const PublishedSource s = parse_published(model::read_json_file(file), file,
                                            testing::source_path("profiles/validation/published"));
  REQUIRE(s.cases.size() == 3);
  for (const PublishedCase& c : s.cases) {
    const auto& par = c.scenario.parallel;
    CHECK(par.tp * par.cp * par.dp * c.pipeline->stages == (par.dp == 64 ? 8192 : 16384));
    // 16M tokens per step: 2,048 sequences of 8,192, or 128 of 131,072 (the CP = 16 row)
    CHECK(c.scenario.train.grad_accum * par.dp * c.scenario.train.seq_len == 16'777'216);
  }
  CHECK(s.cases[2].scenario.parallel.cp == 16);
  CHECK(model::count_params(s.models.at("llama3-405b")).total == 405'853'388'800);  // Llama-3.1-405B on HF
}

TEST_CASE("the bundled TensorRT-LLM set: every row of the source, each with its setup", "[published]") {
  const std::string file = testing::source_path("profiles/validation/published/trtllm-llama2.json");
  const PublishedSource s = parse_published(model::read_json_file(file), file,
                                            testing::source_path("profiles/validation/published"));
  CHECK(s.cases.size() == 23);  // 15 throughput rows and 8 first-token rows
  CHECK(s.assumptions.size() >= 5);
  // As the source runs them: H100 with fp8 weights and cache, fp16 activations and
  // communication; A100 in fp16 throughout.
  int h100_fp8 = 0;
  for (const PublishedCase& c : s.cases) {
    CAPTURE(c.id);
    CHECK(s.models.at(c.model).effective.dtype == model::DType::fp16);
    const simulator::PrecisionScenario& p = c.scenario.precision;
    if (c.device == "A100") CHECK(p == simulator::PrecisionScenario{});
    // Built without --use_custom_all_reduce, as the source's build commands are: NCCL's.
    if (c.tp > 1) CHECK(c.scenario.parallel.tp_all_reduce == simulator::TpAllReduce::library);
    if (c.device != "H100") continue;
    h100_fp8 += p.weights == model::DType::fp8 && p.kv_cache == model::DType::fp8;
    CHECK(p.activations == model::DType::fp16);
    CHECK(p.communication == model::DType::fp16);
  }
  CHECK(h100_fp8 == 12);
}

namespace {

// A training row of Llama-2-7B fp16 on 8 H100s: tp 2, dp 2 and, when `pp` > 1, a pipeline.
json training_source(double published, const std::string& metric, int pp) {
  json c = {{"id", "train"},
            {"metric", metric},
            {"published", published},
            {"device", "H100"},
            {"model", "l7"},
            {"scenario",
             {{"train", {{"seq_len", 4096}, {"micro_batch", 1}, {"grad_accum", 8}, {"recompute", "selective"}}},
              {"parallel", {{"tp", 2}, {"dp", 2}}}}}};
  if (pp > 1) c["pipeline"] = {{"pp", pp}, {"microbatches", 8}, {"schedule", "1f1b"}};
  json j = two_case_source(1, 1);
  j["cases"] = json::array({c});
  return j;
}

}  // namespace

TEST_CASE("a published training row: the cost model's step, or the pipeline's with its optimizer step", "[published]") {
  const auto hw = h100();
  PublishedSource s = parse_published(training_source(1, "train_iteration_s", 1), "t.json", models_dir);
  const model::Config c = s.models.at("l7");  // a copy: `s` is parsed again below
  const simulator::Metrics m = simulator::evaluate(c, hw, s.cases[0].scenario);
  const PublishedPrediction step = predict_published(s.cases[0], c, hw);
  CHECK(step.value == m[simulator::Metric::train_step_s]);
  CHECK(step.devices == 4);
  // Model FLOPs of 8 micro-steps x 2 replicas of one 4096-token sequence: 6 x parameters
  // x tokens at least (the attention's products come on top).
  const double tokens = 8.0 * 2 * 4096;
  CHECK(step.model_flops > 6.0 * 6'738'415'616 * tokens * 0.95);
  CHECK(step.model_flops < 6.0 * 6'738'415'616 * tokens * 1.3);
  s = parse_published(training_source(1, "train_tflops_per_gpu", 1), "t.json", models_dir);
  const PublishedPrediction rate = predict_published(s.cases[0], c, hw);
  CHECK(rate.value == Approx(step.model_flops / step.seconds / 4 / 1e12).epsilon(1e-12));
  // Publish exactly the predicted rate: the published MFU is the predicted one.
  s = parse_published(training_source(rate.value, "train_tflops_per_gpu", 1), "t.json", models_dir);
  const PublishedReport r = predict_sources({s}, {{{"mini", "H100"}, hw}});
  CHECK(r.results[0].error() == Approx(0).margin(1e-12));
  CHECK(r.results[0].published_mfu == Approx(r.results[0].predicted_mfu).epsilon(1e-12));
  CHECK(r.results[0].predicted_mfu == Approx(m[simulator::Metric::train_mfu_fraction]).epsilon(1e-12));

  // With 4 pipeline stages: the same pipeline's optimizer step (makespan + update), on 16 devices.
  s = parse_published(training_source(1, "train_iteration_s", 4), "t.json", models_dir);
  const PublishedPrediction piped = predict_published(s.cases[0], c, hw);
  const simulator::PipelineResult pr = simulator::simulate_pipeline(c, hw, s.cases[0].scenario, *s.cases[0].pipeline);
  CHECK(piped.value == pr.metrics.step_s);
  CHECK(pr.metrics.step_s > pr.metrics.makespan_s);
  CHECK(piped.devices == 16);
  CHECK(piped.bubble_fraction == pr.metrics.bubble_fraction);
  CHECK(piped.model_flops == step.model_flops);  // the same step's work, spread wider
}

TEST_CASE("a bad published-source file is refused naming the place", "[published][bad-input]") {
  struct Bad {
    const char* what;
    std::string pointer;
    json value;  // nullptr: remove the key
    std::string message;
  };
  const std::vector<Bad> cases = {
      {"unknown case key", "/cases/0/batches", 8, "/cases/0/batches: unknown key"},
      {"device not listed", "/cases/0/device", "B300", "/cases/0/device: \"B300\" is not one of the file's \"devices\""},
      {"model not listed", "/cases/1/model", "l8", "/cases/1/model: \"l8\" is not one of the file's \"models\""},
      {"zero published", "/cases/0/published", 0, "/cases/0/published: must be > 0 (in tokens/s/GPU)"},
      {"output on a first-token row", "/cases/1/output", 16, "/cases/1/output: unknown key"},
      {"unknown metric", "/cases/0/metric", "tokens", "/cases/0/metric: must be one of"},
      {"repeated id", "/cases/1/id", "tput", "/cases/1/id: \"tput\" is used by an earlier case"},
      {"assumption without why", "/assumptions/0/why", nullptr, "/assumptions/0/why: is required"},
      {"no citation", "/source/citation", nullptr, "/source/citation: is required"},
      {"missing model file", "/models/l7", "nowhere.json", "/models/l7: model "},
      {"batch 0", "/cases/0/batch", 0, "/cases/0/batch"},
      {"a path in the id", "/source/id", "../../etc/x", "/source/id: must be letters, digits, '-', '_' and '.'"},
      {"a hidden id", "/source/id", ".x", "/source/id: must be letters"},
      {"all-reduce kernel at tp 1", "/cases/1/tp_all_reduce", "library", "/cases/1/tp_all_reduce: needs tp > 1"},
      {"unknown all-reduce kernel", "/cases/0/tp_all_reduce", "nvls", "/cases/0/tp_all_reduce: must be one of"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.what);
    json j = two_case_source(1000, 0.05);
    const json::json_pointer p(b.pointer);
    if (b.value.is_null()) j[p.parent_pointer()].erase(p.back());
    else j[p] = b.value;
    try {
      (void)parse_published(j, "mini.json", models_dir);
      FAIL("accepted");
    } catch (const model::ConfigError& e) {
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(b.message) != std::string::npos);
    }
  }
  // Training cases: the pipeline and the scenario must count the same micro-batches, the
  // scenario takes only train and parallel, and inference keys do not apply.
  const std::vector<Bad> training = {
      {"microbatches != grad_accum", "/cases/0/pipeline/microbatches", 4,
       "/cases/0/pipeline/microbatches: is 4 but the scenario's train.grad_accum is 8"},
      {"decode in a training scenario", "/cases/0/scenario/decode", json::object(),
       "/cases/0/scenario/decode: does not apply to a training case"},
      {"tp on a training case", "/cases/0/tp", 2, "/cases/0/tp: unknown key"},
      {"ZeRO stage 4", "/cases/0/scenario/train/optimizer_sharding", "zero4", "/cases/0/scenario/train/optimizer_sharding"},
      {"no scenario", "/cases/0/scenario", nullptr, "/cases/0/scenario: is required"},
  };
  for (const Bad& b : training) {
    CAPTURE(b.what);
    json j = training_source(1, "train_iteration_s", 2);
    const json::json_pointer p(b.pointer);
    if (b.value.is_null()) j[p.parent_pointer()].erase(p.back());
    else j[p] = b.value;
    try {
      (void)parse_published(j, "t.json", models_dir);
      FAIL("accepted");
    } catch (const model::ConfigError& e) {
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(b.message) != std::string::npos);
    }
  }
  // A setup the simulator refuses is named at its case: tp 3 does not divide 32 heads.
  json j = two_case_source(1000, 0.05);
  j["cases"][0]["tp"] = 3;
  const PublishedSource s = parse_published(j, "mini.json", models_dir);
  CHECK_THROWS_WITH(predict_published(s.cases[0], s.models.at("l7"), h100()),
                    Catch::StartsWith("/cases/0: hdlab cannot run this setup: "));
}

TEST_CASE("a published training row carries hdlab's memory need, flagged when the device cannot hold it", "[published]") {
  const auto hw = h100();
  PublishedSource s = parse_published(training_source(1, "train_iteration_s", 1), "t.json", models_dir);
  const model::Config c = s.models.at("l7");
  const PublishedPrediction fits = predict_published(s.cases[0], c, hw);
  CHECK(fits.train_memory_bytes == simulator::evaluate(c, hw, s.cases[0].scenario)[simulator::Metric::train_memory_bytes]);
  CHECK(fits.device_memory_bytes == 80e9);
  CHECK_FALSE(fits.memory_exceeded());

  // Eight 4096-token sequences a micro-step without recomputation: a 7B model's
  // activations alone are far above 80 GB at tp 2.
  json j = training_source(1, "train_iteration_s", 1);
  j["cases"][0]["scenario"]["train"]["micro_batch"] = 8;
  j["cases"][0]["scenario"]["train"]["grad_accum"] = 1;
  j["cases"][0]["scenario"]["train"]["recompute"] = "none";
  s = parse_published(j, "t.json", models_dir);
  const PublishedPrediction over = predict_published(s.cases[0], c, hw);
  CHECK(over.train_memory_bytes > 80e9);
  CHECK(over.memory_exceeded());

  // A pipeline's need is its fullest stage's: the largest device memory the pipeline reports.
  s = parse_published(training_source(1, "train_iteration_s", 4), "t.json", models_dir);
  const PublishedPrediction piped = predict_published(s.cases[0], c, hw);
  const simulator::PipelineResult pr = simulator::simulate_pipeline(c, hw, s.cases[0].scenario, *s.cases[0].pipeline);
  double fullest = 0;
  for (const simulator::PipelineDevice& d : pr.devices) fullest = std::max(fullest, d.memory_bytes());
  CHECK(piped.train_memory_bytes == fullest);
  CHECK(fullest < fits.train_memory_bytes);  // a quarter of the layers on each device
}
