#pragma once
// Gated DeltaNet against kerneldb's gdn_perf: every measured kernel (the causal conv and the
// gated delta rule, prefill and decode) predicted from the layer program's costs
// (model::gdn_conv_cost / gdn_rule_cost) timed by the hardware profile's roofline, as the
// simulator times a linear-attention layer's mixer. Nothing is fitted to these rows: every
// row is compared (KernelCase::held_out is true for all).
#include <vector>

#include "hdlab/calibration/kernel_validation.hpp"
#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/simulator/hardware.hpp"

namespace hdlab::calibration {

// Op classes "gdn_conv_prefill", "gdn_rule_prefill", "gdn_conv_decode", "gdn_rule_decode";
// precision "bf16/state fp32": activations in bf16 and the recurrent state in fp32, as the
// Qwen3.5 configs the rows were measured for set it (mamba_ssm_dtype "float32"). ConfigError
// when `db` has no gdn_perf rows.
std::vector<KernelCase> predict_gdn(const KernelDb& db, const simulator::HardwareProfile& profile);

// Mamba-2 against kerneldb's mamba2_perf the same way: each causal conv1d row (prefill:
// causal_conv1d_fn, decode: causal_conv1d_update; the tables time no SSD scan) predicted
// from model::mamba2_conv_cost on the roofline. Op classes "mamba2_conv_prefill" and
// "mamba2_conv_decode", precision "bf16". ConfigError when `db` has no mamba2_perf rows
// or a row names another kernel.
std::vector<KernelCase> predict_mamba2(const KernelDb& db, const simulator::HardwareProfile& profile);

}  // namespace hdlab::calibration
