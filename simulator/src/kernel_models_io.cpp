// Kernel models: the JSON form inside a hardware profile ("kernel_models"), every key
// checked and every error naming its JSON pointer (kernel_models.hpp).
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/kernel_models.hpp"

namespace hdlab::simulator {

using nlohmann::json;

namespace {

using model::ObjectReader;

model::DType dtype_key(const std::string& key, const std::string& pointer) {
  for (model::DType d : {model::DType::bf16, model::DType::fp16, model::DType::fp32, model::DType::fp8})
    if (key == model::to_string(d)) return d;
  model::fail(pointer, "unknown precision \"" + key + "\" (bf16, fp16, fp32, fp8)");
}

// A positive number, bounded to what any device could have: a typo must not pass.
double positive(ObjectReader& r, const char* key, double max) {
  const double v = r.number(key, std::nullopt, 0.0, max);
  if (v <= 0) model::fail(r.at(key), "must be > 0");
  return v;
}

GemmKernel parse_gemm(ObjectReader r) {
  GemmKernel g;
  g.tensor_tflop_per_s = positive(r, "tensor_tflop_per_s", 1e5);
  g.operand_tb_per_s = positive(r, "operand_tb_per_s", 1e6);
  g.memory_gb_per_s = positive(r, "memory_gb_per_s", 1e6);
  g.latency_us = r.number("latency_us", std::nullopt, 0.0, 1e4);
  g.k_step_ns = r.number("k_step_ns", std::nullopt, 0.0, 1e4);
  g.split_k_us = r.number("split_k_us", std::nullopt, 0.0, 1e4);
  g.stream_k_us = r.number("stream_k_us", std::nullopt, 0.0, 1e4);
  g.epilogue_share = r.number("epilogue_share", std::nullopt, 0.0, 1.0);
  g.l2_resident_mb = r.number("l2_resident_mb", std::nullopt, 0.0, 1e6);
  g.l2_gb_per_s = positive(r, "l2_gb_per_s", 1e6);
  // Reading A from L2 is never slower than from DRAM: the time stays monotone in the shape.
  if (g.l2_gb_per_s < g.memory_gb_per_s)
    model::fail(r.at("l2_gb_per_s"), "must be at least memory_gb_per_s (L2 serves no slower than DRAM)");
  g.overlap = r.number("overlap", std::nullopt, 1.0, 100.0);
  g.quant_latency_us = r.number("quant_latency_us", 0.0, 0.0, 1e4);
  g.quant_passes = r.number("quant_passes", 0.0, 0.0, 100.0);
  g.element_bytes = r.number("element_bytes", std::nullopt, 0.25, 8.0);
  r.finish();
  return g;
}

json to_json(const GemmKernel& g) {
  return {{"tensor_tflop_per_s", g.tensor_tflop_per_s}, {"operand_tb_per_s", g.operand_tb_per_s},
          {"memory_gb_per_s", g.memory_gb_per_s},       {"latency_us", g.latency_us},
          {"k_step_ns", g.k_step_ns},                   {"split_k_us", g.split_k_us},
          {"stream_k_us", g.stream_k_us},               {"epilogue_share", g.epilogue_share},
          {"l2_resident_mb", g.l2_resident_mb},         {"l2_gb_per_s", g.l2_gb_per_s},
          {"overlap", g.overlap},                       {"quant_latency_us", g.quant_latency_us},
          {"quant_passes", g.quant_passes},             {"element_bytes", g.element_bytes}};
}

PrefillHeadDim parse_head_dim(ObjectReader r) {
  PrefillHeadDim k;
  k.head_dim = positive(r, "head_dim", 1e5);
  k.latency_us = r.number("latency_us", std::nullopt, 0.0, 1e4);
  k.unit_us = r.number("unit_us", std::nullopt, 0.0, 1e4);
  r.finish();
  return k;
}

DecodeHeadDim parse_decode_head_dim(ObjectReader r) {
  DecodeHeadDim k;
  k.head_dim = positive(r, "head_dim", 1e5);
  k.latency_us = r.number("latency_us", std::nullopt, 0.0, 1e4);
  r.finish();
  return k;
}

// A kernel's "head_dims": a non-empty list of per-head-dimension costs, by increasing head_dim.
template <class HeadDim, class Parse>
std::vector<HeadDim> parse_head_dims(ObjectReader& r, const char* fields, Parse parse_one) {
  const std::string ptr = r.at("head_dims");
  const json& list = r.required("head_dims");
  if (!list.is_array() || list.empty())
    model::fail(ptr, std::string("must be a non-empty list of ") + fields + ", by increasing head_dim");
  std::vector<HeadDim> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string p_i = model::pointer_join(ptr, i);
    out.push_back(parse_one(ObjectReader(list[i], p_i)));
    if (i > 0 && out[i].head_dim <= out[i - 1].head_dim)
      model::fail(p_i + "/head_dim", "must be larger than the previous entry's (the list goes by increasing head_dim)");
  }
  return out;
}

PrefillAttentionKernel parse_prefill(ObjectReader r) {
  PrefillAttentionKernel a;
  a.tensor_tflop_per_s = positive(r, "tensor_tflop_per_s", 1e5);
  a.softmax_flops = r.number("softmax_flops", std::nullopt, 0.0, 1e6);
  a.memory_gb_per_s = positive(r, "memory_gb_per_s", 1e6);
  a.kv_gb_per_s = positive(r, "kv_gb_per_s", 1e6);
  a.window_us = r.number("window_us", std::nullopt, 0.0, 1e4);
  a.head_dims = parse_head_dims<PrefillHeadDim>(r, "{head_dim, latency_us, unit_us}", parse_head_dim);
  r.finish();
  return a;
}

json to_json(const PrefillAttentionKernel& a) {
  json dims = json::array();
  for (const PrefillHeadDim& k : a.head_dims)
    dims.push_back({{"head_dim", k.head_dim}, {"latency_us", k.latency_us}, {"unit_us", k.unit_us}});
  return {{"tensor_tflop_per_s", a.tensor_tflop_per_s}, {"softmax_flops", a.softmax_flops},
          {"memory_gb_per_s", a.memory_gb_per_s},       {"kv_gb_per_s", a.kv_gb_per_s},
          {"window_us", a.window_us},                   {"head_dims", dims}};
}

DecodeOneRow parse_one_row(ObjectReader r) {
  DecodeOneRow p;
  p.block_us = r.number("block_us", std::nullopt, 0.0, 1e4);
  p.block_gb_per_s = positive(r, "block_gb_per_s", 1e6);
  p.resident_blocks = positive(r, "resident_blocks", 1e4);
  p.split_blocks_per_sm = positive(r, "split_blocks_per_sm", 1e4);
  p.split_keys_x_head_dim = positive(r, "split_keys_x_head_dim", 1e9);
  p.split_us = r.number("split_us", std::nullopt, 0.0, 1e4);
  p.l2_gb_per_s = positive(r, "l2_gb_per_s", 1e7);
  r.finish();
  return p;
}

DecodeGrouped parse_grouped(ObjectReader r) {
  DecodeGrouped p;
  p.block_us = r.number("block_us", std::nullopt, 0.0, 1e4);
  p.row_us = r.number("row_us", std::nullopt, 0.0, 1e4);
  p.block_gb_per_s = positive(r, "block_gb_per_s", 1e6);
  p.resident_blocks = positive(r, "resident_blocks", 1e4);
  p.min_keys = r.number("min_keys", std::nullopt, 0.0, 1e6);
  p.splits_span_context = r.boolean("splits_span_context", std::nullopt);
  if (r.has("head_dims"))  // optional: without it the grouped kernel takes the decode kernel's latency
    p.head_dims = parse_head_dims<DecodeHeadDim>(r, "{head_dim, latency_us}", parse_decode_head_dim);
  r.finish();
  return p;
}

DecodeAttentionKernel parse_decode(ObjectReader r) {
  DecodeAttentionKernel a;
  a.memory_gb_per_s = positive(r, "memory_gb_per_s", 1e6);
  a.grouped_min_block_factor = r.number("grouped_min_block_factor", std::nullopt, 0.0, 1e3);
  a.one_row = parse_one_row(r.object("one_row"));
  a.grouped = parse_grouped(r.object("grouped"));
  a.tensor_tflop_per_s = positive(r, "tensor_tflop_per_s", 1e5);
  a.latency_us = r.number("latency_us", std::nullopt, 0.0, 1e4);
  a.overlap = r.number("overlap", std::nullopt, 1.0, 100.0);
  r.finish();
  return a;
}

json to_json(const DecodeOneRow& p) {
  return {{"block_us", p.block_us},
          {"block_gb_per_s", p.block_gb_per_s},
          {"resident_blocks", p.resident_blocks},
          {"split_blocks_per_sm", p.split_blocks_per_sm},
          {"split_keys_x_head_dim", p.split_keys_x_head_dim},
          {"split_us", p.split_us},
          {"l2_gb_per_s", p.l2_gb_per_s}};
}

json to_json(const DecodeGrouped& p) {
  json j = {{"block_us", p.block_us},
            {"row_us", p.row_us},
            {"block_gb_per_s", p.block_gb_per_s},
            {"resident_blocks", p.resident_blocks},
            {"min_keys", p.min_keys},
            {"splits_span_context", p.splits_span_context}};
  if (!p.head_dims.empty()) {
    j["head_dims"] = json::array();
    for (const DecodeHeadDim& k : p.head_dims)
      j["head_dims"].push_back({{"head_dim", k.head_dim}, {"latency_us", k.latency_us}});
  }
  return j;
}

json to_json(const DecodeAttentionKernel& a) {
  return {{"memory_gb_per_s", a.memory_gb_per_s},
          {"grouped_min_block_factor", a.grouped_min_block_factor},
          {"one_row", to_json(a.one_row)},
          {"grouped", to_json(a.grouped)},
          {"tensor_tflop_per_s", a.tensor_tflop_per_s},
          {"latency_us", a.latency_us},
          {"overlap", a.overlap}};
}

MoeLayerKernel parse_moe_layer(ObjectReader r) {
  MoeLayerKernel m;
  m.latency_us = r.number("latency_us", std::nullopt, 0.0, 1e4);
  m.token_gb_per_s = positive(r, "token_gb_per_s", 1e6);
  r.finish();
  return m;
}

json to_json(const MoeLayerKernel& m) { return {{"latency_us", m.latency_us}, {"token_gb_per_s", m.token_gb_per_s}}; }

template <class T, class Parse>
std::map<model::DType, T> per_dtype(ObjectReader& parent, const char* key, Parse parse) {
  std::map<model::DType, T> out;
  const json* v = parent.find(key);
  if (!v) return out;
  ObjectReader r(*v, parent.at(key));
  for (const auto& [name, body] : v->items()) {
    const std::string ptr = r.at(name);
    out[dtype_key(name, ptr)] = parse(ObjectReader(body, ptr));
    r.allow({name.c_str()});
  }
  r.finish();
  return out;
}

template <class T>
json per_dtype_json(const std::map<model::DType, T>& m) {
  json out = json::object();
  for (const auto& [d, v] : m) out[model::to_string(d)] = to_json(v);
  return out;
}

// {"2": [[alpha_us, bus_gb_per_s], ...], "4": ...}
std::map<int, std::vector<CollectiveRegime>> parse_regimes(const json& j, const std::string& pointer) {
  ObjectReader r(j, pointer);
  std::map<int, std::vector<CollectiveRegime>> out;
  for (const auto& [count, list] : j.items()) {
    const std::string ptr = r.at(count);
    r.allow({count.c_str()});
    int p = 0;
    try {
      std::size_t used = 0;
      p = std::stoi(count, &used);
      if (used != count.size()) p = 0;
    } catch (const std::exception&) {
      p = 0;
    }
    if (p < 2 || p > 1 << 20) model::fail(ptr, "must be a GPU count >= 2 (the key names the GPUs of the collective)");
    if (!list.is_array() || list.empty()) model::fail(ptr, "must be a non-empty list of [alpha_us, bus_gb_per_s]");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string p_i = model::pointer_join(ptr, i);
      if (!list[i].is_array() || list[i].size() != 2) model::fail(p_i, "must be a pair [alpha_us, bus_gb_per_s]");
      const double alpha = model::read_number(list[i][0], model::pointer_join(p_i, std::size_t{0}), 0.0, 1e6);
      const double beta = model::read_number(list[i][1], model::pointer_join(p_i, std::size_t{1}), 0.0, 1e6);
      if (beta <= 0) model::fail(model::pointer_join(p_i, std::size_t{1}), "must be > 0");
      out[p].push_back({alpha, beta});
    }
  }
  r.finish();
  return out;
}

json regimes_json(const std::map<int, std::vector<CollectiveRegime>>& m) {
  json out = json::object();
  for (const auto& [p, list] : m) {
    json l = json::array();
    for (const CollectiveRegime& r : list) l.push_back({r.alpha_us, r.bus_gb_per_s});
    out[std::to_string(p)] = l;
  }
  return out;
}

}  // namespace

KernelModels parse_kernel_models(const json& j, const std::string& pointer) {
  ObjectReader r(j, pointer);
  KernelModels k;
  k.device = r.string("device", std::nullopt);
  k.sms = positive(r, "sms", 1e5);
  k.gemm = per_dtype<GemmKernel>(r, "gemm", parse_gemm);
  k.prefill_attention = per_dtype<PrefillAttentionKernel>(r, "prefill_attention", parse_prefill);
  k.decode_attention = per_dtype<DecodeAttentionKernel>(r, "decode_attention", parse_decode);
  if (const json* c = r.find("collectives")) {
    ObjectReader cr(*c, r.at("collectives"));
    for (int i = 0; i < collective_count; ++i) {
      const char* name = to_string(static_cast<Collective>(i));
      if (const json* v = cr.find(name)) k.collectives[static_cast<std::size_t>(i)] = parse_regimes(*v, cr.at(name));
    }
    cr.finish();
  }
  if (const json* c = r.find("custom_all_reduce")) k.custom_all_reduce = parse_regimes(*c, r.at("custom_all_reduce"));
  {
    ObjectReader v = r.object("vector");
    k.vector.memory_gb_per_s = positive(v, "memory_gb_per_s", 1e6);
    k.vector.latency_us = v.number("latency_us", std::nullopt, 0.0, 1e4);
    v.finish();
  }
  k.moe_layer = per_dtype<MoeLayerKernel>(r, "moe_layer", parse_moe_layer);
  if (const json* f = r.find("fit")) {
    if (!f->is_object()) model::fail(r.at("fit"), "must be an object");
    k.fit = *f;
  }
  r.finish();
  if (k.gemm.empty()) model::fail(pointer + "/gemm", "must hold at least one precision");
  return k;
}

json to_json(const KernelModels& k) {
  json j = {{"device", k.device},
            {"sms", k.sms},
            {"gemm", per_dtype_json(k.gemm)},
            {"prefill_attention", per_dtype_json(k.prefill_attention)},
            {"decode_attention", per_dtype_json(k.decode_attention)},
            {"vector", {{"memory_gb_per_s", k.vector.memory_gb_per_s}, {"latency_us", k.vector.latency_us}}}};
  json coll = json::object();
  for (int i = 0; i < collective_count; ++i)
    if (!k.collectives[static_cast<std::size_t>(i)].empty())
      coll[to_string(static_cast<Collective>(i))] = regimes_json(k.collectives[static_cast<std::size_t>(i)]);
  j["collectives"] = coll;
  if (!k.custom_all_reduce.empty()) j["custom_all_reduce"] = regimes_json(k.custom_all_reduce);
  if (!k.moe_layer.empty()) j["moe_layer"] = per_dtype_json(k.moe_layer);
  if (!k.fit.is_null()) j["fit"] = k.fit;
  return j;
}

}  // namespace hdlab::simulator
