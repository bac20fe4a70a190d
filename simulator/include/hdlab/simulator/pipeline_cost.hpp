#pragma once
// The pipeline engine's workload filled from the cost model: one training micro-batch
// (scenario.train: micro_batch sequences of seq_len tokens per data-parallel rank) on one
// device of each pipeline stage, tensor and expert parallelism inside the stage as the
// scenario says.
//
// Per layer pass, with the cost model's training convention (cost_model.hpp):
//   forward  = roofline time of the layer's ops + its TP/EP collectives
//   backward = 2 x the op time + recomputation (selective: attention and VWN's GHC
//              parts; full: the layer's forward) + the collectives again (twice with
//              full recomputation); of which the weight-gradient part (W, split off by
//              ZB-H1) is the dW products of the layer's GEMM ops (roofline.hpp's
//              OpTime::backward_weight_s), the rest B
//   activations = the saved-activation bytes of memory.hpp for that layer pass, per
//                 device (a looped layer keeps one set per iteration)
// so that, at pp = 1, the sum over the path equals the cost model's micro-step time.
// A looped design's input-injection adapter runs once per iteration with the first
// recurrent layer. Ends: embedding lookup (and VWN's projection) on the first stage;
// VWN's reduction, final norm, LM head and MTP on the last (logits kept for the loss);
// their GEMMs' dW products are W too (the embedding lookup's scatter-add is B).
//
// Stage boundaries carry the hidden states of every position the next layer runs
// ([rows, D], VWN [rows, (n/m) D]; HD n*L rows, PHD K*L, and L after an HD KV-mirror
// layer), split over the tp ranks (sequence parallel), plus what a later stage still
// needs: the input of every KV-mirror source layer whose mirror lies beyond the cut, and
// a looped design's embedding until the first recurrent layer (input injection).
// Point-to-point link: NVLink when tp * dp * pp devices fit in one node of
// gpus_per_node, else the network (link_for), with its efficiency and latency.
//
// The optimizer step (simulate_pipeline below): once a device's last backward task (ZB-H1:
// its last W) ends, it all-reduces the gradients of the parameters it holds over the
// data-parallel ranks (hidden behind that last task when scenario.train.overlap_dp_comm,
// up to its length) and runs the optimizer update on them, both as the cost model's
// training step costs them (cost_model.hpp) for that device's share: its chunks' layers,
// the embedding on the first stage, the final norm and head on the last. step_s is when
// the last device finishes. Left out: the all-reduce that keeps a tied embedding and head on
// the first and last stage in step. ZeRO-3 (optimizer_sharding weights) is refused: its
// weight gathers per micro-batch are not modelled here.
#include <cstdint>
#include <string>

#include "hdlab/model/design.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "hdlab/simulator/hardware.hpp"
#include "hdlab/simulator/pipeline.hpp"

namespace hdlab::simulator {

// ConfigError for a bad scenario (check_scenario) or a missing link, at `pointer`/pp.
PipelineWorkload pipeline_workload(const model::Config& c, const HardwareProfile& hw, const Scenario& s,
                                   std::int64_t pp, const std::string& pointer = "/pipeline");

// pipeline_workload, then simulate_pipeline, then the optimizer step: what a sweep point or
// the CLI calls. ConfigError at /scenario/train/optimizer_sharding for ZeRO-3 (see above).
PipelineResult simulate_pipeline(const model::Config& c, const HardwareProfile& hw, const Scenario& s,
                                 const PipelineOptions& o, const std::string& pointer = "/pipeline");

}  // namespace hdlab::simulator
