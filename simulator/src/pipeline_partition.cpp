// Pipeline stage partition and a micro-batch's path through the chunks (pipeline.hpp).
#include <algorithm>
#include <cmath>
#include <string>

#include "hdlab/model/error.hpp"
#include "hdlab/model/json_reader.hpp"
#include "hdlab/simulator/pipeline.hpp"

namespace hdlab::simulator {

using model::fail;
using model::pointer_join;

const char* to_string(ScheduleKind s) {
  switch (s) {
    case ScheduleKind::gpipe: return "gpipe";
    case ScheduleKind::one_f_one_b: return "1f1b";
    case ScheduleKind::interleaved: return "interleaved";
    case ScheduleKind::zb_h1: return "zb-h1";
  }
  return "?";
}

const char* to_string(P2pSends p) { return p == P2pSends::async ? "async" : "blocking"; }

const char* to_string(PartitionPolicy p) {
  switch (p) {
    case PartitionPolicy::balanced: return "balanced";
    case PartitionPolicy::uniform: return "uniform";
    case PartitionPolicy::explicit_counts: return "explicit";
  }
  return "?";
}

namespace {

// Most stages and micro-batches accepted: far beyond real runs, small enough that a
// schedule's task list fits in memory.
constexpr std::int64_t max_stages = 4096;
constexpr std::int64_t max_microbatches = 1 << 20;

void check_amount(double v, const std::string& pointer) {
  if (!std::isfinite(v) || v < 0) fail(pointer, "must be a finite number >= 0, got " + std::to_string(v));
}

// The weight-gradient part of a backward: an amount no larger than the backward.
void check_weight_part(double weight_s, double backward_s, const std::string& pointer) {
  check_amount(weight_s, pointer);
  if (weight_s > backward_s)
    fail(pointer, "the weight-gradient part " + std::to_string(weight_s) + " s exceeds the backward's " +
                      std::to_string(backward_s) + " s");
}

void check_end(const PipelineEndCost& e, const std::string& pointer) {
  check_amount(e.forward_s, pointer + "/forward_s");
  check_amount(e.backward_s, pointer + "/backward_s");
  check_amount(e.activation_bytes, pointer + "/activation_bytes");
  check_weight_part(e.backward_weight_s, e.backward_s, pointer + "/backward_weight_s");
}

void check_workload(const PipelineWorkload& w) {
  const std::string at = "/workload";
  const auto n = static_cast<std::int64_t>(w.layers.size());
  if (n < 1) fail(at + "/layers", "a pipeline needs at least one layer");
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    const std::string p = pointer_join(at + "/layers", l);
    check_amount(w.layers[l].forward_s, p + "/forward_s");
    check_amount(w.layers[l].backward_s, p + "/backward_s");
    check_amount(w.layers[l].activation_bytes, p + "/activation_bytes");
    check_amount(w.layers[l].boundary_bytes, p + "/boundary_bytes");
    check_weight_part(w.layers[l].backward_weight_s, w.layers[l].backward_s, p + "/backward_weight_s");
  }
  check_end(w.embedding, at + "/embedding");
  check_end(w.head, at + "/head");
  check_amount(w.tokens_per_microbatch, at + "/tokens_per_microbatch");
  check_amount(w.link.latency_s, at + "/link/latency_s");
  if (!(w.link.bandwidth_bytes_per_s > 0)) fail(at + "/link/bandwidth_bytes_per_s", "must be > 0");
  if (w.loop) {
    const PipelineLoop& lp = *w.loop;
    if (lp.iterations < 1) fail(at + "/loop/iterations", "must be >= 1");
    if (lp.layer_count < 1 || lp.first_layer < 0 || lp.first_layer + lp.layer_count > n)
      fail(at + "/loop", "recurrent block [" + std::to_string(lp.first_layer) + ", " +
                             std::to_string(lp.first_layer + lp.layer_count) + ") is not inside the " +
                             std::to_string(n) + " layers");
  }
}

void check_partition(std::int64_t layers, const PipelineOptions& o, const std::string& pointer) {
  const std::int64_t chunks = o.chunks();
  const std::string at = pointer + "/partition";
  if (o.partition == PartitionPolicy::uniform && layers % chunks != 0)
    fail(at, "a uniform partition needs the " + std::to_string(layers) + " layers to split evenly into " +
                 std::to_string(chunks) + " chunks; use \"balanced\" or explicit counts");
  if (o.partition != PartitionPolicy::explicit_counts) return;
  if (static_cast<std::int64_t>(o.layers_per_chunk.size()) != chunks)
    fail(at, "explicit partition has " + std::to_string(o.layers_per_chunk.size()) + " entries; pp * v = " +
                 std::to_string(chunks) + " needed (one per chunk, in model order)");
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < o.layers_per_chunk.size(); ++i) {
    if (o.layers_per_chunk[i] < 1) fail(pointer_join(at, i), "every chunk needs at least one layer");
    sum += o.layers_per_chunk[i];
  }
  if (sum != layers)
    fail(at, "explicit partition covers " + std::to_string(sum) + " layers; the model has " + std::to_string(layers));
}

}  // namespace

void check_pipeline(const PipelineWorkload& w, const PipelineOptions& o, const std::string& pointer) {
  check_workload(w);
  const auto layers = static_cast<std::int64_t>(w.layers.size());
  if (o.stages < 1 || o.stages > max_stages)
    fail(pointer + "/pp", "must be in [1, " + std::to_string(max_stages) + "], got " + std::to_string(o.stages));
  if (o.microbatches < 1 || o.microbatches > max_microbatches)
    fail(pointer + "/microbatches",
         "must be in [1, " + std::to_string(max_microbatches) + "], got " + std::to_string(o.microbatches));
  if (o.schedule == ScheduleKind::zb_h1 && o.virtual_stages != 1)
    fail(pointer + "/virtual_stages", "ZB-H1 runs one chunk per device (v = 1); the zero-bubble schedules over "
                                      "several chunks per device (ZB-V) are not modelled");
  if (o.schedule != ScheduleKind::interleaved && o.virtual_stages != 1)
    fail(pointer + "/virtual_stages", std::string("applies to the interleaved schedule only, not ") +
                                          to_string(o.schedule));
  if (o.virtual_stages < 1 || o.virtual_stages > max_stages)
    fail(pointer + "/virtual_stages", "must be >= 1, got " + std::to_string(o.virtual_stages));
  if (o.stages > layers)
    fail(pointer + "/pp", "pp = " + std::to_string(o.stages) + " stages need at least as many layers; the model has " +
                              std::to_string(layers));
  if (o.schedule == ScheduleKind::interleaved) {
    if (layers % o.virtual_stages != 0)
      fail(pointer + "/virtual_stages", "v = " + std::to_string(o.virtual_stages) + " does not divide the " +
                                            std::to_string(layers) + " layers");
    if (o.chunks() > layers)
      fail(pointer + "/virtual_stages", "pp * v = " + std::to_string(o.chunks()) +
                                            " chunks need at least as many layers; the model has " +
                                            std::to_string(layers));
  }
  if (o.group < 0 || o.group > o.microbatches)
    fail(pointer + "/group", "must be in [0, microbatches = " + std::to_string(o.microbatches) + "] (0: default), got " +
                                 std::to_string(o.group));
  check_partition(layers, o, pointer);
}

namespace {

// Per-layer weights of the partition: forward + backward over every pass of a micro-batch.
struct LayerWeights {
  std::vector<double> prefix;  // prefix[l] = weight of layers [0, l)
  double first_extra = 0;      // embedding, on the first chunk
  double last_extra = 0;       // head, on the last chunk
  std::int64_t layers() const { return static_cast<std::int64_t>(prefix.size()) - 1; }
  // Weight of the chunk holding layers [i, j).
  double chunk(std::int64_t i, std::int64_t j) const {
    return prefix[j] - prefix[i] + (i == 0 ? first_extra : 0) + (j == layers() ? last_extra : 0);
  }
};

double passes_of(const PipelineWorkload& w, std::int64_t l) {
  if (w.loop && l >= w.loop->first_layer && l < w.loop->first_layer + w.loop->layer_count)
    return static_cast<double>(w.loop->iterations);
  return 1.0;
}

LayerWeights layer_weights(const PipelineWorkload& w) {
  LayerWeights lw;
  lw.prefix.assign(w.layers.size() + 1, 0.0);
  for (std::size_t l = 0; l < w.layers.size(); ++l)
    lw.prefix[l + 1] = lw.prefix[l] + (w.layers[l].forward_s + w.layers[l].backward_s) *
                                          passes_of(w, static_cast<std::int64_t>(l));
  lw.first_extra = w.embedding.forward_s + w.embedding.backward_s;
  lw.last_extra = w.head.forward_s + w.head.backward_s;
  return lw;
}

// Greedy cut into chunks of weight <= cap, each as long as it can be: the fewest chunks
// any partition under that cap needs. Returns the chunk ends; empty when one layer alone
// exceeds the cap.
std::vector<std::int64_t> greedy_cut(const LayerWeights& lw, double cap) {
  std::vector<std::int64_t> ends;
  const std::int64_t n = lw.layers();
  std::int64_t i = 0;
  while (i < n) {
    std::int64_t j = i + 1;
    if (lw.chunk(i, j) > cap) return {};
    while (j < n && lw.chunk(i, j + 1) <= cap) ++j;
    ends.push_back(j);
    i = j;
  }
  return ends;
}

// The smallest achievable slowest-chunk weight, by bisection on the cap (greedy is exact
// for a given cap), then read off the partition the final cap gives.
double min_bottleneck(const LayerWeights& lw, std::int64_t chunks) {
  double lo = 0;
  double hi = lw.chunk(0, lw.layers());
  for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    const auto ends = greedy_cut(lw, mid);
    if (!ends.empty() && static_cast<std::int64_t>(ends.size()) <= chunks) hi = mid;
    else lo = mid;
  }
  const auto ends = greedy_cut(lw, hi);
  double worst = 0;
  std::int64_t start = 0;
  for (std::int64_t e : ends) worst = std::max(worst, lw.chunk(start, e)), start = e;
  return worst;
}

// Among partitions whose chunks all stay under `cap`, the one with the least sum of
// squared chunk weights (the most even spread below the bottleneck). Dynamic programme
// over (chunks used, layers covered); returns layer counts per chunk.
std::vector<std::int64_t> even_under_cap(const LayerWeights& lw, std::int64_t chunks, double cap) {
  const std::int64_t n = lw.layers();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> prev(n + 1, inf), cur(n + 1, inf);
  std::vector<std::int32_t> cut(static_cast<std::size_t>(chunks * (n + 1)), -1);
  prev[0] = 0;
  for (std::int64_t k = 1; k <= chunks; ++k) {
    std::fill(cur.begin(), cur.end(), inf);
    std::int64_t lo = k - 1;  // smallest start i with chunk(i, j) <= cap; grows with j
    for (std::int64_t j = k; j <= n - (chunks - k); ++j) {
      while (lo < j - 1 && lw.chunk(lo, j) > cap) ++lo;
      for (std::int64_t i = lo; i < j; ++i) {
        const double c = lw.chunk(i, j);
        if (prev[i] == inf || c > cap) continue;
        const double v = prev[i] + c * c;
        if (v < cur[j]) cur[j] = v, cut[static_cast<std::size_t>((k - 1) * (n + 1) + j)] = static_cast<std::int32_t>(i);
      }
    }
    std::swap(prev, cur);
  }
  std::vector<std::int64_t> counts(static_cast<std::size_t>(chunks));
  std::int64_t j = n;
  for (std::int64_t k = chunks; k >= 1; --k) {
    const std::int64_t i = cut[static_cast<std::size_t>((k - 1) * (n + 1) + j)];
    if (i < 0) return {};
    counts[static_cast<std::size_t>(k - 1)] = j - i;
    j = i;
  }
  return counts;
}

std::vector<std::int64_t> balanced_counts(const LayerWeights& lw, std::int64_t chunks) {
  const double best = min_bottleneck(lw, chunks);
  const double cap = best * (1 + 1e-12);
  // The even-spread programme stores a cut per (chunk, layer); past that size keep the
  // greedy cut, which has the same slowest chunk.
  constexpr std::int64_t max_table = std::int64_t{1} << 23;
  if (chunks * (lw.layers() + 1) <= max_table) {
    auto counts = even_under_cap(lw, chunks, cap);
    if (!counts.empty()) return counts;
  }
  auto ends = greedy_cut(lw, cap);
  // The greedy cut may use fewer chunks than asked: split the longest ones.
  std::vector<std::int64_t> counts;
  std::int64_t start = 0;
  for (std::int64_t e : ends) counts.push_back(e - start), start = e;
  while (static_cast<std::int64_t>(counts.size()) < chunks) {
    auto it = std::max_element(counts.begin(), counts.end());
    const std::int64_t half = *it / 2;
    *it -= half;
    counts.insert(it + 1, half);
  }
  return counts;
}

}  // namespace

PipelinePartition partition_stages(const PipelineWorkload& w, const PipelineOptions& o) {
  const std::int64_t chunks = o.chunks();
  const auto n = static_cast<std::int64_t>(w.layers.size());
  std::vector<std::int64_t> counts;
  switch (o.partition) {
    case PartitionPolicy::explicit_counts: counts = o.layers_per_chunk; break;
    case PartitionPolicy::uniform: counts.assign(static_cast<std::size_t>(chunks), n / chunks); break;
    case PartitionPolicy::balanced: counts = balanced_counts(layer_weights(w), chunks); break;
  }
  PipelinePartition part;
  part.device_time_s.assign(static_cast<std::size_t>(o.stages), 0.0);
  std::int64_t first = 0;
  for (std::int64_t c = 0; c < chunks; ++c) {
    PipelineChunk ch;
    ch.device = c % o.stages;
    ch.first_layer = first;
    ch.layer_count = counts[static_cast<std::size_t>(c)];
    ch.embedding = c == 0;
    ch.head = c == chunks - 1;
    for (std::int64_t l = first; l < first + ch.layer_count; ++l) {
      const double k = passes_of(w, l);
      const PipelineLayer& layer = w.layers[static_cast<std::size_t>(l)];
      ch.forward_s += k * layer.forward_s;
      ch.backward_s += k * layer.backward_s;
      ch.backward_weight_s += k * layer.backward_weight_s;
      ch.activation_bytes += k * layer.activation_bytes;
    }
    for (const auto* end : {ch.embedding ? &w.embedding : nullptr, ch.head ? &w.head : nullptr}) {
      if (!end) continue;
      ch.forward_s += end->forward_s;
      ch.backward_s += end->backward_s;
      ch.backward_weight_s += end->backward_weight_s;
      ch.activation_bytes += end->activation_bytes;
    }
    part.device_time_s[static_cast<std::size_t>(ch.device)] += ch.forward_s + ch.backward_s;
    part.chunks.push_back(ch);
    first += ch.layer_count;
  }
  double total = 0, slowest = 0;
  for (double t : part.device_time_s) total += t, slowest = std::max(slowest, t);
  const double mean = total / static_cast<double>(o.stages);
  part.imbalance = mean > 0 ? slowest / mean : 1.0;
  return part;
}

std::vector<PipelineStep> microbatch_path(const PipelineWorkload& w, const PipelinePartition& p) {
  const auto n = static_cast<std::int64_t>(w.layers.size());
  std::vector<std::int64_t> chunk_of(static_cast<std::size_t>(n));
  for (std::size_t c = 0; c < p.chunks.size(); ++c)
    for (std::int64_t l = 0; l < p.chunks[c].layer_count; ++l)
      chunk_of[static_cast<std::size_t>(p.chunks[c].first_layer + l)] = static_cast<std::int64_t>(c);

  std::vector<PipelineStep> path;
  // Appends one layer pass (iteration -1: not a recurrent pass), opening a step when the
  // chunk changes.
  auto pass = [&](std::int64_t l, std::int64_t iteration) {
    const std::int64_t c = chunk_of[static_cast<std::size_t>(l)];
    if (path.empty() || path.back().chunk != c) {
      PipelineStep s;
      s.chunk = c;
      s.device = p.chunks[static_cast<std::size_t>(c)].device;
      s.first_layer = l;
      path.push_back(s);
    }
    PipelineStep& s = path.back();
    const PipelineLayer& layer = w.layers[static_cast<std::size_t>(l)];
    s.last_layer = l;
    s.layer_passes += 1;
    s.forward_s += layer.forward_s;
    s.backward_s += layer.backward_s;
    s.backward_weight_s += layer.backward_weight_s;
    s.activation_bytes += layer.activation_bytes;
    if (iteration >= 0) {
      if (s.first_iteration < 0) s.first_iteration = iteration;
      s.last_iteration = iteration;
    }
  };
  const std::int64_t loop_first = w.loop ? w.loop->first_layer : n;
  const std::int64_t loop_end = w.loop ? w.loop->first_layer + w.loop->layer_count : n;
  for (std::int64_t l = 0; l < loop_first; ++l) pass(l, -1);
  if (w.loop)
    for (std::int64_t k = 0; k < w.loop->iterations; ++k)
      for (std::int64_t l = loop_first; l < loop_end; ++l) pass(l, k);
  for (std::int64_t l = loop_end; l < n; ++l) pass(l, -1);

  auto add_end = [](PipelineStep& s, const PipelineEndCost& e) {
    s.forward_s += e.forward_s;
    s.backward_s += e.backward_s;
    s.backward_weight_s += e.backward_weight_s;
    s.activation_bytes += e.activation_bytes;
  };
  path.front().embedding = true;
  add_end(path.front(), w.embedding);
  path.back().head = true;
  add_end(path.back(), w.head);
  for (std::size_t s = 0; s + 1 < path.size(); ++s)
    if (path[s].device != path[s + 1].device)
      path[s].send_s = w.link.transfer_s(w.layers[static_cast<std::size_t>(path[s].last_layer)].boundary_bytes);
  return path;
}

}  // namespace hdlab::simulator
