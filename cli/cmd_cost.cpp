// hdlab cost MODEL --design D --hw H [scenario options] [--scenario FILE] [--json]
// What a design costs on a device in every phase: a summary table per phase (units in
// every header), memory, where the decode time goes, the serving matrix against the
// baseline and KV bytes against context; --json prints the full op tables.
//
// H is a hardware profile file, or the name of a bundled one (profiles/hardware/H.json,
// see load_hardware in common.hpp). The scenario starts from
// --scenario (a JSON object, simulator/evaluate.hpp) or the defaults; each option below
// overrides one field, named by its JSON pointer in the help and in errors. MODEL may be
// a session file (simulator/session_io.hpp, saved by the GUI): its hardware and scenario
// then stand where --hw and --scenario are not given.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <variant>

#include <fmt/format.h>

#include "hdlab/model/error.hpp"
#include "hdlab/simulator/fit.hpp"
#include "hdlab/simulator/report.hpp"
#include "verbs.hpp"

namespace hdlab::cli {

namespace {

using nlohmann::json;

bool is_vwn(const model::Design& d) { return model::design_features(d.method).wide_residual; }
bool is_hd(const model::Design& d) { return model::design_features(d.method).streams; }

constexpr ScenarioFlag kScenarioFlags[] = {
    {"--seq-len", "/train/seq_len", "training sequence length [tokens]"},
    {"--micro-batch", "/train/micro_batch", "training micro-batch per data-parallel rank [seqs]"},
    {"--grad-accum", "/train/grad_accum", "micro-steps per optimizer step"},
    {"--grad-accumulation", "/train/grad_accumulation",
     "fused | separate | autocast: micro-steps' weight gradients added in the products, by a pass over "
     "them each, or by PyTorch autocast + autograd (parameters cast every forward)"},
    {"--recompute", "/train/recompute", "none | selective | full"},
    {"--optimizer-sharding", "/train/optimizer_sharding", "none | optimizer | gradients | weights (ZeRO 1/2/3)"},
    {"--zero-stage", "/train/zero_stage", "0-3: the same setting as --optimizer-sharding, by ZeRO stage"},
    {"--vwn-eta", "/train/vwn_eta", "VWN: share of width-connection inputs kept, in [0, 1]", false, is_vwn, "VWN designs"},
    {"--prompt", "/prefill/tokens", "prefill prompt length [tokens]"},
    {"--prefill-batch", "/prefill/batch", "prompts prefilled together [seqs]"},
    {"--batch", "/decode/batch", "decode batch [seqs]"},
    {"--context", "/decode/context", "decode context already cached [tokens]"},
    {"--kv-mirror-final-only", "/decode/kv_mirror_final_only",
     "HD KV mirror: decode the mirrored layers on the final stream only (true | false)", false, is_hd, "HD designs"},
    {"--serving-batches", "/serving/batches", "serving matrix batches, e.g. 1,8,32 [seqs]", true},
    {"--serving-inputs", "/serving/input_lengths", "serving matrix input lengths, e.g. 1024,4096 [tokens]", true},
    {"--output-tokens", "/serving/output_tokens", "serving: tokens generated per request"},
    {"--kv-context", "/kv/context", "context for KV bytes per sequence and the largest batch [tokens]"},
    {"--memory-utilization", "/kv/memory_utilization", "share of device memory for weights + KV cache"},
    {"--tp", "/parallel/tp", "tensor-parallel devices"},
    {"--ep", "/parallel/ep", "expert-parallel devices (divides dp)"},
    {"--dp", "/parallel/dp", "data-parallel devices"},
    {"--cp", "/parallel/cp", "context-parallel devices a training sequence splits over"},
    {"--cp-comm", "/parallel/cp_comm", "all_gather | ring: how context-parallel ranks exchange K/V"},
    {"--gpus-per-node", "/parallel/gpus_per_node", "devices sharing NVLink"},
    {"--tp-all-reduce", "/parallel/tp_all_reduce",
     "auto | library: inference all-reduce, the faster of NCCL and an engine's custom kernel, or NCCL only"},
    {"--layout", "/attention/layout", "default | interleaved | stream_major | phd_split"},
    {"--decode-kernel", "/attention/decode_kernel", "auto | one_row (a block per query head even under GQA)"},
    {"--ffn-gate-up", "/ffn/gate_up", "fused | separate: a gated FFN's gate and up as one product or two"},
    {"--tile-q", "/attention/tile_q", "attention kernel tile: query rows"},
    {"--tile-k", "/attention/tile_k", "attention kernel tile: keys"},
    {"--attention-count", "/attention/count", "executed | exact pairs time the attention op"},
    {"--framework-train-step", "/framework/train_step_s", "framework overhead per training step [s]"},
    {"--framework-prefill", "/framework/prefill_s", "framework overhead per prefill [s]"},
    {"--framework-decode-step", "/framework/decode_step_s", "framework overhead per decode step [s]"},
    {"--weights-dtype", "/precision/weights", "weights' precision: model | bf16 | fp16 | fp32 | fp8"},
    {"--activations-dtype", "/precision/activations", "activations' precision (attention runs in it)"},
    {"--kv-cache-dtype", "/precision/kv_cache", "KV cache precision"},
    {"--compute-dtype", "/precision/compute", "weight products' matrix precision"},
    {"--comm-dtype", "/precision/communication", "collectives' and gradients' precision"},
    {"--optimizer-dtype", "/precision/optimizer_state", "Adam state precision (default fp32)"},
};

struct Options {
  ModelOptions model;
  std::string hardware;
  ScenarioOptions scenario;
  bool json = false;
  std::vector<std::int64_t> kv_contexts{1024, 4096, 16384, 32768, 131072};
};

// The table's contexts: each within the scenario's own cap on a context (parse_scenario
// checks it, so the bound is the one /kv/context has), and at most as many as a
// scenario list may hold.
void check_kv_contexts(const std::vector<std::int64_t>& contexts) {
  constexpr std::size_t max_entries = 64;
  if (contexts.size() > max_entries)
    throw model::ConfigError("--kv-contexts", "has " + std::to_string(contexts.size()) + " entries; at most " +
                                                  std::to_string(max_entries));
  for (std::size_t i = 0; i < contexts.size(); ++i) {
    try {
      simulator::parse_scenario(json{{"kv", {{"context", contexts[i]}}}});
    } catch (const model::ConfigError& e) {
      throw model::ConfigError("--kv-contexts", "entry " + std::to_string(i) + " (" + std::to_string(contexts[i]) +
                                                    " tokens): " + e.reason());
    }
  }
}

double num(const json& j, const char* key) { return j.at(key).get<double>(); }

std::string join(const json& list) {
  std::string s;
  for (const auto& v : list) s += (s.empty() ? "" : ",") + v.dump();
  return s;
}

void print_scenario(const json& r) {
  const json& s = r["scenario"];
  const json &t = s["train"], &p = s["parallel"], &a = s["attention"], &f = s["framework"], &pr = s["precision"];
  std::cout << fmt::format("{}, {}, on {} ({})\n", r["model"].get<std::string>(), r["design"].get<std::string>(),
                           r["hardware"].get<std::string>(), r["dtype"].get<std::string>());
  std::cout << "scenario (defaults unless set; --scenario FILE or the options override):\n"
            << fmt::format("  parallel   tp {} x cp {} x dp {} devices, ep {}, {} per node{}\n", p["tp"].dump(),
                           p["cp"].dump(), p["dp"].dump(), p["ep"].dump(), p["gpus_per_node"].dump(),
                           p.contains("cp_comm") ? ", K/V exchanged by " + p["cp_comm"].get<std::string>() : "")
            << fmt::format("  train      seq_len {} tokens, micro_batch {} seqs, grad_accum {} ({}), recompute {}, "
                           "optimizer_sharding {}, vwn_eta {}\n",
                           t["seq_len"].dump(), t["micro_batch"].dump(), t["grad_accum"].dump(),
                           t["grad_accumulation"].get<std::string>(), t["recompute"].get<std::string>(),
                           t["optimizer_sharding"].get<std::string>(), t["vwn_eta"].dump())
            << fmt::format("  overlap    dp gradients {}, ZeRO-3 weight gathers {}, tp {}, ep {} (each hidden behind "
                           "compute as far as that lasts)\n",
                           t["overlap_dp_comm"].dump(), t["overlap_weight_gather"].dump(),
                           t["overlap_tp_comm"].dump(), t["overlap_ep_comm"].dump())
            << fmt::format("  prefill    tokens {}, batch {} seqs\n", s["prefill"]["tokens"].dump(),
                           s["prefill"]["batch"].dump())
            << fmt::format("  decode     batch {} seqs, context {} tokens\n", s["decode"]["batch"].dump(),
                           s["decode"]["context"].dump())
            << fmt::format("  serving    batches {} seqs x input_lengths {} tokens, output_tokens {}\n",
                           join(s["serving"]["batches"]), join(s["serving"]["input_lengths"]),
                           s["serving"]["output_tokens"].dump())
            << fmt::format("  kv         context {} tokens, memory_utilization {}\n", s["kv"]["context"].dump(),
                           s["kv"]["memory_utilization"].dump())
            << fmt::format("  attention  layout {}, tile {}x{} (query rows x keys), timed by {} pairs\n",
                           a["layout"].get<std::string>(), a["tile_q"].dump(), a["tile_k"].dump(),
                           a["count"].get<std::string>())
            << fmt::format("  ffn        gate and up {} (gated FFNs: one product of 2F, or two of F)\n",
                           s["ffn"]["gate_up"].get<std::string>())
            << fmt::format("  precision  weights {}, activations {}, kv_cache {}, compute {}, communication {}, "
                           "optimizer_state {} (model: the model's {})\n",
                           pr["weights"].get<std::string>(), pr["activations"].get<std::string>(),
                           pr["kv_cache"].get<std::string>(), pr["compute"].get<std::string>(),
                           pr["communication"].get<std::string>(), pr["optimizer_state"].get<std::string>(),
                           r["dtype"].get<std::string>())
            << fmt::format("  framework  overhead {} s per train step, {} s per prefill, {} s per decode step\n\n",
                           f["train_step_s"].dump(), f["prefill_s"].dump(), f["decode_step_s"].dump());
}

void print_phases(const json& r) {
  const json& m = r["metrics"];
  const json& ph = r["phases"];
  std::cout << fmt::format("{:<13} {:>12} {:>14} {:>13} {:>14} {:>11} {:>9}\n", "phase", "time [ms]", "FLOPs [TFLOP]",
                           "moved [GB]", "tokens/s", "comm [ms]", "vs base");
  // training bytes are not summed: the backward's traffic is not modelled op by op
  std::cout << fmt::format("{:<13} {:>12.3f} {:>14.3f} {:>13} {:>14.0f} {:>11.3f} {:>9}\n", "train step",
                           1e3 * num(m, "train_step_s"), num(m, "train_flops") / 1e12, "-",
                           num(m, "train_tokens_per_s"), 1e3 * num(m, "train_comm_s"), "");
  const json& pt = ph["prefill"]["totals"];
  const double prefill_bytes = num(pt, "weight_bytes") + num(pt, "act_bytes_in") + num(pt, "act_bytes_out") +
                               num(pt, "kv_bytes_read") + num(pt, "kv_bytes_written");
  std::cout << fmt::format("{:<13} {:>12.3f} {:>14.3f} {:>13.3f} {:>14.0f} {:>11.3f} {:>9}\n", "prefill",
                           1e3 * num(m, "prefill_s"), num(m, "prefill_flops") / 1e12, prefill_bytes / 1e9,
                           num(m, "prefill_tokens_per_s"),
                           1e3 * (num(ph["prefill"], "comm_tp_s") + num(ph["prefill"], "comm_ep_s")), "");
  std::cout << fmt::format("{:<13} {:>12.3f} {:>14.3f} {:>13.3f} {:>14.0f} {:>11.3f} {:>9.3f}\n", "decode step",
                           1e3 * num(m, "decode_step_s"), num(m, "decode_flops") / 1e12, num(m, "decode_bytes") / 1e9,
                           num(m, "decode_tokens_per_s"), 1e3 * num(m, "decode_comm_s"),
                           num(m, "decode_vs_baseline_ratio"));
  std::cout << fmt::format("train: MFU {:.3f}; prefill attention {:.3f} TFLOP executed vs {:.3f} exact; decode reads "
                           "{:.3f} GB of weights and {:.3f} GB of KV cache per step\n\n",
                           num(m, "train_mfu_fraction"), num(m, "prefill_attention_flops_executed") / 1e12,
                           num(m, "prefill_attention_flops_exact") / 1e12, num(m, "decode_weight_bytes") / 1e9,
                           num(m, "decode_kv_read_bytes") / 1e9);
}

void print_memory(const json& r) {
  const json& m = r["metrics"];
  const json& kv = r["scenario"]["kv"];
  std::cout << fmt::format("memory per device [GB]: training {:.2f} (weights {:.2f}, gradients {:.2f}, optimizer {:.2f}, "
                           "activations {:.2f}) {}; inference weights {:.2f}\n",
                           num(m, "train_memory_bytes") / 1e9, num(m, "train_weight_bytes") / 1e9,
                           num(m, "train_grad_bytes") / 1e9, num(m, "train_optimizer_bytes") / 1e9,
                           num(m, "train_activation_bytes") / 1e9,
                           num(m, "train_fits") > 0 ? "fits" : "DOES NOT FIT", num(m, "inference_weight_bytes") / 1e9);
  std::cout << fmt::format("KV cache at {} tokens: {:.4f} GB per sequence; largest batch that fits: {:.0f} seqs\n",
                           kv["context"].dump(), num(m, "kv_bytes_per_seq") / 1e9, num(m, "max_batch_seqs"));
  std::cout << fmt::format("{:>16} {:>22} {:>18}\n", "context [tokens]", "KV per sequence [GB]", "max batch [seqs]");
  for (const json& row : r["kv_vs_context"])
    std::cout << fmt::format("{:>16} {:>22.4f} {:>18.0f}\n", row["context_tokens"].dump(),
                             num(row, "kv_bytes_per_seq") / 1e9, num(row, "max_batch_seqs"));
  std::cout << "\n";
}

void print_decode_ops(const json& r) {
  const json& d = r["phases"]["decode"];
  const double total = num(d, "ops_s");
  std::cout << fmt::format("decode step by op (ops above 1% of {:.3f} ms):\n", 1e3 * total);
  std::cout << fmt::format("  {:<16} {:>10} {:>10} {:>15}\n", "op", "time [us]", "share [%]", "compute-bound [%]");
  for (const json& op : d["by_op"]) {
    const double t = num(op, "time_s");
    if (t < 0.01 * total) continue;
    std::cout << fmt::format("  {:<16} {:>10.1f} {:>10.1f} {:>15.0f}\n", op["op"].get<std::string>(), 1e6 * t,
                             100 * t / total, 100 * num(op, "compute_bound_time_s") / t);
  }
  std::cout << "\n";
}

void print_serving(const json& r) {
  const json& sv = r["scenario"]["serving"];
  std::cout << fmt::format("serving: decode tokens/s (ratio to the baseline) at context = input + {} / 2; "
                           "* = weights + KV cache do not fit\n",
                           sv["output_tokens"].dump());
  std::string header = fmt::format("  {:>12}", "batch [seqs]");
  for (const auto& in : sv["input_lengths"]) header += fmt::format(" {:>22}", "in " + in.dump() + " [tokens]");
  std::cout << header << "\n";
  std::size_t i = 0;
  const json& cells = r["serving"];
  for (const auto& b : sv["batches"]) {
    std::string line = fmt::format("  {:>12}", b.dump());
    for (std::size_t j = 0; j < sv["input_lengths"].size(); ++j, ++i) {
      const json& c = cells[i];
      line += fmt::format(" {:>22}", fmt::format("{:.0f} ({:.3f}){}", num(c, "tokens_per_s"), num(c, "ratio"),
                                                 c["fits"].get<bool>() ? " " : "*"));
    }
    std::cout << line << "\n";
  }
}

// Each phase whose memory does not fit the device, with the smallest change that does: a
// time printed above for it is no plan.
void print_fit(const simulator::MemoryFit& fit) {
  for (const simulator::PhaseFit* p : {&fit.decode, &fit.prefill, &fit.train})
    if (!p->fits()) std::cout << "warning: " << simulator::describe(*p) << "\n";
  if (!fit.fits()) std::cout << "\n";
}

void print_cost_text(const json& r, const simulator::MemoryFit& fit) {
  print_scenario(r);
  print_phases(r);
  print_memory(r);
  print_fit(fit);
  print_decode_ops(r);
  print_serving(r);
}

}  // namespace

Verb add_cost(CLI::App& app) {
  auto* sub = app.add_subcommand("cost", "FLOPs, bytes, memory and predicted times of a design in every phase");
  auto o = std::make_shared<Options>();
  o->model.add_to(*sub);
  sub->add_option("--hw", o->hardware,
                  "Hardware profile: a JSON file or a bundled name (h100-sxm, h200, ...); required unless MODEL is a "
                  "session file with \"hardware\"")
      ->check(non_empty());
  sub->add_flag("--json", o->json, "Print the full report as JSON (op tables per phase and layer group)");
  sub->add_option("--kv-contexts", o->kv_contexts, "Contexts for the KV-bytes table [tokens]")->delimiter(',');
  o->scenario.add_to(*sub, kScenarioFlags);
  return {sub, [o] {
            // A session file as MODEL gives the hardware and the scenario the flags leave open.
            const LoadedModel model = load_model(o->model);
            const model::Config& config = model.config;
            const simulator::HardwareProfile hw = hardware_of(o->hardware, model);
            const simulator::Scenario scenario = o->scenario.build(config, model.scenario());
            check_kv_contexts(o->kv_contexts);
            const json report = simulator::cost_report(config, hw, scenario, o->kv_contexts);
            if (o->json) print_json(report);
            else print_cost_text(report, simulator::memory_fit(config, hw, scenario));
            return exit_ok;
          }};
}

}  // namespace hdlab::cli
