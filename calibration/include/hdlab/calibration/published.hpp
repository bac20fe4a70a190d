#pragma once
// Published measurements of real GPU systems as validation cases: what a source measured,
// the setup as it states it, and every setting hdlab had to assume, with the reason,
// written down before any comparison. The simulator predicts each case on a hardware
// profile; nothing runs on the executor.
//
// A published-source file (JSON; every key checked, errors name the JSON pointer):
//   {"source": {"id": "trtllm-perf-v0.6", "title": "...", "citation": "...", "url": "..."},
//    "models": {"llama2-7b-fp16": "../../models/llama2-7b-fp16.json"},  // relative to this file
//    "devices": {"H100": "h100-sxm"},      // the source's device -> hardware profile name
//    "assumptions": [{"setting": "...", "value": "...", "why": "..."}],  // every case
//    "cases": [{"id": "h100-7b-b768-tp1-128-128",
//               "metric": "output_tokens_per_s_per_gpu" | "first_token_latency_s",
//               "published": 19694,      // in the metric's unit
//               "device": "H100", "model": "llama2-7b-fp16",
//               "tp": 1, "gpus_per_node": 8, "batch": 768, "input": 128, "output": 128,
//               "precision": {"weights": "fp8", ...},  // optional: the scenario's, by tensor class
//               "attention": {"decode_kernel": "one_row"},  // optional: the scenario's
//               "ffn": {"gate_up": "separate"},             // optional: the scenario's
//               "tp_all_reduce": "library",  // optional (tp > 1): the scenario's parallel.tp_all_reduce
//               "assumptions": [...]}]}   // this case only (optional)
// A training case instead of tp ... precision: "scenario": the cost model's scenario
// (evaluate.hpp: "train", "parallel" and optionally "attention", "ffn", "framework"
// and "precision") and, with pipeline parallelism, "pipeline":
// the pipeline options (pipeline_io.hpp; its "microbatches" must equal the scenario's
// train.grad_accum, so that both count the same step).
//
// Metrics (how the prediction is made from the cost model, evaluate.hpp):
//   output_tokens_per_s_per_gpu  static batching: `batch` prompts of `input` tokens
//       prefilled together, then `output` decode steps at `batch`; a decode step at the
//       run's mean context input + output/2 (step time grows about linearly with the
//       cached context) stands for every step. batch * output / (prefill + output *
//       step) / tp.
//   first_token_latency_s        the prefill of `batch` prompts of `input` tokens.
//   train_iteration_s            one optimizer step: the cost model's train step, or with
//       "pipeline" the pipeline's step (its makespan, then each stage's data-parallel
//       gradient reduction and optimizer update).
//   train_tflops_per_gpu         the step's model FLOPs (no recomputation) per second per
//       GPU, in TFLOP/s; the published figure is read with hdlab's FLOP count.
// The efficiency of a case (MFU) is the model FLOPs it runs per second per GPU over the
// matrix peak of the compute precision (the case's, else the model's); published and predicted efficiencies share the
// FLOPs and differ only in the time, so their ranking tests whether hdlab orders the
// rows' efficiency as the real system did.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hdlab/calibration/stats.hpp"
#include "hdlab/model/design.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/pipeline.hpp"

namespace hdlab::calibration {

enum class PublishedMetric { output_tokens_per_s_per_gpu, first_token_latency_s, train_iteration_s, train_tflops_per_gpu };
const char* to_string(PublishedMetric m);
const char* unit_of(PublishedMetric m);  // "tokens/s/GPU", "s", "s", "TFLOP/s/GPU"
bool is_training(PublishedMetric m);

struct Assumption {
  std::string setting, value, why;
};

struct PublishedCase {
  std::string id, pointer;  // pointer: "/cases/3" in its file
  PublishedMetric metric = PublishedMetric::output_tokens_per_s_per_gpu;
  double published = 0;  // in unit_of(metric)
  std::string device, model;
  // Inference metrics:
  std::int64_t tp = 1, gpus_per_node = 8, batch = 1, input = 0, output = 0;
  // Training metrics:
  simulator::Scenario scenario;
  std::optional<simulator::PipelineOptions> pipeline;
  std::vector<Assumption> assumptions;  // this case's own
};

struct PublishedSource {
  std::string file;  // as given
  std::string id, title, citation, url;
  std::map<std::string, model::Config> models;
  std::map<std::string, std::string> devices;  // source's device name -> profile name
  std::vector<Assumption> assumptions;         // every case's
  std::vector<PublishedCase> cases;
};

// `base_dir`: the file's folder (model paths are relative to it). ConfigError naming the
// pointer for anything malformed: an unknown key, a case naming a model or device the
// file does not list, a tp that does not divide the heads, two cases with one id.
PublishedSource parse_published(const nlohmann::json& j, const std::string& file, const std::string& base_dir);

struct PublishedPrediction {
  double value = 0;  // in unit_of(metric)
  double prefill_s = 0, decode_step_s = 0;
  std::int64_t decode_context = 0;  // tokens cached at the step that stands for all
  double model_flops = 0;           // FLOPs of the whole run (all its GPUs)
  double seconds = 0;               // the run's predicted time
  std::int64_t devices = 1;         // GPUs the run uses
  double bubble_fraction = 0;       // pipeline cases: idle share of the makespan
  // Inference cases: how many of the batch's requests hdlab's KV cache holds at once (the
  // batch is costed whole, as the source ran it; fewer than the batch flags a setup
  // hdlab's memory model cannot hold).
  std::int64_t kv_fitting_requests = 0;
  // Training cases: the peak memory hdlab predicts on the fullest device (a pipeline's:
  // its most loaded stage) and the device's memory, bytes. A need above the capacity flags
  // a setup that could not have run as assumed (the time is still costed as stated).
  double train_memory_bytes = 0, device_memory_bytes = 0;
  bool memory_exceeded() const { return train_memory_bytes > device_memory_bytes && device_memory_bytes > 0; }
};
// ConfigError (at the case's pointer) when the simulator refuses the setup.
PublishedPrediction predict_published(const PublishedCase& c, const model::Config& config,
                                      const simulator::HardwareProfile& hw);

struct PublishedResult {
  std::string source;  // PublishedSource::id
  PublishedCase spec;
  std::string profile;  // the hardware profile's name
  PublishedPrediction predicted;
  double published_mfu = 0, predicted_mfu = 0;
  double error() const { return relative_error(predicted.value, spec.published); }
};

// The statistics of one metric of one source: errors of the value as published
// (predicted / published - 1: + is too fast for a rate, too slow for a time) and the
// rank correlations of the values and of the efficiencies.
struct PublishedGroup {
  std::string source;
  PublishedMetric metric = PublishedMetric::output_tokens_per_s_per_gpu;
  ErrorStats error;
  double spearman_value = 0, spearman_mfu = 0;  // NaN with fewer than two cases
};

struct PublishedReport {
  std::vector<PublishedSource> sources;
  std::vector<PublishedResult> results;  // every case of every source, in file order
  std::vector<PublishedGroup> groups;    // per source and metric
  ErrorStats all;  // |error| over every case (its signed median mixes rates and times: not reported)
};
// `profiles`: the hardware profile of each (source id, device) pair in use.
using ProfileFor = std::map<std::pair<std::string, std::string>, simulator::HardwareProfile>;
PublishedReport predict_sources(std::vector<PublishedSource> sources, const ProfileFor& profiles);

nlohmann::json to_json(const PublishedReport& r);
std::string to_csv(const PublishedReport& r);  // one row per case

}  // namespace hdlab::calibration
