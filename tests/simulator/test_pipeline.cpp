// Pipeline schedules: closed forms for uniform stages, looped cases worked out by hand,
// partition optimality against brute force, DAG invariants, errors, JSON and the Gantt.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "hdlab/model/error.hpp"
#include "hdlab/simulator/pipeline.hpp"
#include "hdlab/simulator/pipeline_io.hpp"
#include "pipeline_fixtures.hpp"

using namespace hdlab::simulator;
using hdlab::model::ConfigError;
using Json = nlohmann::json;
using pipeline_fixtures::options;
using pipeline_fixtures::pointer_of;
using pipeline_fixtures::uniform;

namespace {

// (device, micro-batch, step, backward, start) of every task, sorted.
using TaskRow = std::tuple<int, int, int, bool, double>;
std::vector<TaskRow> rows(const PipelineResult& r) {
  std::vector<TaskRow> out;
  for (const auto& t : r.tasks) out.emplace_back(t.device, t.microbatch, t.step, t.backward, t.start_s);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("GPipe and 1F1B on uniform stages meet the closed forms", "[pipeline][closed-form]") {
  // Stage = 2 layers of forward 0.25 s, backward 0.5 s: tf = 0.5, tb = 1 per stage.
  for (auto schedule : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b})
    for (int p : {1, 2, 3, 4, 8})
      for (int m : {1, 2, 3, 4, 7, 8, 16, 32}) {
        const PipelineResult r = simulate_pipeline(uniform(2 * p, 0.25, 0.5), options(schedule, p, m));
        INFO(to_string(schedule) << " p=" << p << " m=" << m);
        CHECK(r.metrics.makespan_s == Approx((m + p - 1) * 1.5).epsilon(1e-12));
        CHECK(r.metrics.bubble_fraction == Approx(double(p - 1) / (m + p - 1)).margin(1e-12));
        CHECK(r.metrics.limit_overrides == 0);
        for (const auto& d : r.devices) CHECK(d.busy_s == Approx(m * 1.5).epsilon(1e-12));
      }
}

TEST_CASE("interleaved 1F1B on uniform stages meets the closed form", "[pipeline][closed-form]") {
  // Chunk = 1 layer; a device's v chunks make one stage of tf = 1, tb = ratio.
  for (double ratio : {1.0, 2.0, 0.5})
    for (int p : {2, 3, 4})
      for (int v : {2, 3})
        for (int m : {p, 2 * p, 4 * p}) {
          PipelineWorkload w = uniform(p * v, 1.0 / v, ratio / v);
          const PipelineResult r = simulate_pipeline(w, options(ScheduleKind::interleaved, p, m, v));
          INFO("p=" << p << " v=" << v << " m=" << m << " tb/tf=" << ratio);
          CHECK(r.metrics.makespan_s == Approx((v * m + p - 1) * (1 + ratio) / v).epsilon(1e-12));
          CHECK(r.metrics.bubble_fraction == Approx(double(p - 1) / (v * m + p - 1)).margin(1e-12));
          CHECK(r.metrics.limit_overrides == 0);
        }
}

TEST_CASE("1F1B holds p - d micro-batches on device d, GPipe all of them", "[pipeline][memory]") {
  const int p = 4, m = 8;
  const PipelineResult one = simulate_pipeline(uniform(p, 1, 2), options(ScheduleKind::one_f_one_b, p, m));
  const PipelineResult gpipe = simulate_pipeline(uniform(p, 1, 2), options(ScheduleKind::gpipe, p, m));
  for (int d = 0; d < p; ++d) {
    CHECK(one.devices[d].warmup_forwards == p - 1 - d);
    CHECK(one.devices[d].peak_inflight_microbatches == p - d);
    CHECK(one.devices[d].peak_activation_bytes == p - d);  // 1 byte per stage pass
    CHECK(gpipe.devices[d].peak_inflight_microbatches == m);
    CHECK(gpipe.devices[d].peak_activation_bytes == m);
  }
  CHECK(one.metrics.peak_activation_bytes == p);
  CHECK(one.metrics.peak_activation_device == 0);
}

TEST_CASE("interleaved holds Megatron's warm-up plus one chunk", "[pipeline][memory]") {
  // Warm-up (v-1)p + 2(p-1-d) chunk forwards, then one more before the first backward.
  const int p = 4, v = 2, m = 8;
  const PipelineResult r = simulate_pipeline(uniform(p * v, 1, 2), options(ScheduleKind::interleaved, p, m, v));
  for (int d = 0; d < p; ++d) {
    const int w = (v - 1) * p + 2 * (p - 1 - d);
    CHECK(r.devices[d].warmup_forwards == w);
    CHECK(r.devices[d].peak_activation_bytes == w + 1);
  }
}

TEST_CASE("transfers add 2(p-1) sends to the GPipe makespan", "[pipeline][transfer]") {
  // A send of 0.25 s (shorter than a stage's forward of 1 s) on every boundary.
  for (int p : {2, 4})
    for (int m : {1, 4, 8}) {
      const PipelineResult r = simulate_pipeline(uniform(p, 1, 2, 0.25), options(ScheduleKind::gpipe, p, m));
      INFO("p=" << p << " m=" << m);
      CHECK(r.metrics.makespan_s == Approx((m + p - 1) * 3.0 + 2 * (p - 1) * 0.25).epsilon(1e-12));
      CHECK(r.metrics.transfers_per_microbatch == 2 * (p - 1));
      CHECK(r.metrics.transfer_s_per_microbatch == Approx(2 * (p - 1) * 0.25));
    }
}

TEST_CASE("blocking sends hold the sender: GPipe's closed form with every send on its sender's task",
          "[pipeline][transfer]") {
  // Forward 1 s, backward 2 s, a send of 0.25 s: every forward but the last stage's and
  // every backward but the first stage's runs 0.25 s longer, and the data is there when
  // it ends. The forwards end at (m + p - 2)(f + t) + f, the backwards (m + p - 2)(b + t)
  // + b later: (m + p - 1)(f + b) + 2 (m + p - 2) t, against async's 2 (p - 1) t.
  for (int p : {2, 4})
    for (int m : {1, 4, 8}) {
      PipelineOptions o = options(ScheduleKind::gpipe, p, m);
      o.p2p = P2pSends::blocking;
      const PipelineResult r = simulate_pipeline(uniform(p, 1, 2, 0.25), o);
      INFO("p=" << p << " m=" << m);
      CHECK(r.metrics.makespan_s == Approx((m + p - 1) * 3.0 + 2 * (m + p - 2) * 0.25).epsilon(1e-12));
      CHECK(r.metrics.transfers_per_microbatch == 2 * (p - 1));
      // one micro-batch alone: blocking or not, the same path
      if (m == 1) CHECK(r.metrics.makespan_s == Approx(p * 3.0 + 2 * (p - 1) * 0.25).epsilon(1e-12));
    }
  // 1F1B too is slower, never faster, with the sends blocking
  PipelineOptions o = options(ScheduleKind::one_f_one_b, 4, 8);
  const double async = simulate_pipeline(uniform(4, 1, 2, 0.25), o).metrics.makespan_s;
  o.p2p = P2pSends::blocking;
  CHECK(simulate_pipeline(uniform(4, 1, 2, 0.25), o).metrics.makespan_s > async);
}

// Two layers, both recurrent, K = 2, on two devices: the path is dev0, dev1, dev0, dev1
// (steps 0-3, layer 0 then 1, iteration 0 then 1); forward 1 s, backward 2 s per pass.
PipelineWorkload two_layer_loop() {
  PipelineWorkload w = uniform(2, 1, 2);
  w.loop = PipelineLoop{0, 2, 2};
  return w;
}

TEST_CASE("looped path: one step per pass, the data returning to the first stage", "[pipeline][looped]") {
  const PipelineResult r = simulate_pipeline(two_layer_loop(), options(ScheduleKind::gpipe, 2, 2));
  REQUIRE(r.path.size() == 4);
  for (int s = 0; s < 4; ++s) {
    CHECK(r.path[s].device == s % 2);
    CHECK(r.path[s].first_layer == s % 2);
    CHECK(r.path[s].first_iteration == s / 2);
  }
  CHECK(r.metrics.transfers_per_microbatch == 6);  // 3 boundaries, forward and backward
  CHECK(r.partition.device_time_s[0] == 6);        // K * (1 + 2)
}

TEST_CASE("looped GPipe worked out by hand", "[pipeline][looped]") {
  // Micro-batches 0 and 1, iteration-major: both take pass 0 before either takes pass 1.
  const PipelineResult r = simulate_pipeline(two_layer_loop(), options(ScheduleKind::gpipe, 2, 2));
  const std::vector<TaskRow> expected = {
      {0, 0, 0, false, 0}, {0, 0, 0, true, 11}, {0, 0, 2, false, 2}, {0, 0, 2, true, 7},
      {0, 1, 0, false, 1}, {0, 1, 0, true, 13}, {0, 1, 2, false, 3}, {0, 1, 2, true, 9},
      {1, 0, 1, false, 1}, {1, 0, 1, true, 9},  {1, 0, 3, false, 3}, {1, 0, 3, true, 5},
      {1, 1, 1, false, 2}, {1, 1, 1, true, 11}, {1, 1, 3, false, 4}, {1, 1, 3, true, 7}};
  CHECK(rows(r) == expected);
  CHECK(r.metrics.makespan_s == 15);
  CHECK(r.metrics.bubble_fraction == Approx(0.2));  // 1 - 2 * 12 / (2 * 15)
  CHECK(r.devices[1].peak_activation_bytes == 4);   // every pass of both micro-batches
}

TEST_CASE("looped 1F1B worked out by hand", "[pipeline][looped]") {
  // Device 1 (visits at steps 1 and 3) warms up 2 * 0 + (2 - 1) * 2 = 2 forwards: at t = 4
  // it holds three and must run B(0, step 3) before F(1, step 3).
  const PipelineResult r = simulate_pipeline(two_layer_loop(), options(ScheduleKind::one_f_one_b, 2, 2));
  CHECK(r.devices[0].warmup_forwards == 4);
  CHECK(r.devices[1].warmup_forwards == 2);
  const std::vector<TaskRow> expected = {
      {0, 0, 0, false, 0}, {0, 0, 0, true, 11}, {0, 0, 2, false, 2}, {0, 0, 2, true, 6},
      {0, 1, 0, false, 1}, {0, 1, 0, true, 13}, {0, 1, 2, false, 3}, {0, 1, 2, true, 9},
      {1, 0, 1, false, 1}, {1, 0, 1, true, 9},  {1, 0, 3, false, 3}, {1, 0, 3, true, 4},
      {1, 1, 1, false, 2}, {1, 1, 1, true, 11}, {1, 1, 3, false, 6}, {1, 1, 3, true, 7}};
  CHECK(rows(r) == expected);
  CHECK(r.metrics.makespan_s == 15);
  CHECK(r.devices[1].peak_activation_bytes == 3);
}

TEST_CASE("looped depth-first order (group 1) stalls the pipeline", "[pipeline][looped]") {
  // One micro-batch takes both passes before the next enters: 21 s against 15 s.
  const PipelineResult r = simulate_pipeline(two_layer_loop(), options(ScheduleKind::gpipe, 2, 2, 1, 1));
  const std::vector<TaskRow> expected = {
      {0, 0, 0, false, 0}, {0, 0, 0, true, 13}, {0, 0, 2, false, 2}, {0, 0, 2, true, 9},
      {0, 1, 0, false, 3}, {0, 1, 0, true, 19}, {0, 1, 2, false, 5}, {0, 1, 2, true, 15},
      {1, 0, 1, false, 1}, {1, 0, 1, true, 11}, {1, 0, 3, false, 3}, {1, 0, 3, true, 7},
      {1, 1, 1, false, 4}, {1, 1, 1, true, 17}, {1, 1, 3, false, 6}, {1, 1, 3, true, 13}};
  CHECK(rows(r) == expected);
  CHECK(r.metrics.makespan_s == 21);
}

TEST_CASE("a recurrent block inside one stage is one task per micro-batch", "[pipeline][looped]") {
  // 4 layers, layers 1-2 recurrent K = 3, weights per micro-batch 3, 9, 9, 3 [s].
  PipelineWorkload w = uniform(4, 1, 2);
  w.loop = PipelineLoop{1, 2, 3};
  PipelineOptions o = options(ScheduleKind::one_f_one_b, 2, 4);
  o.partition = PartitionPolicy::explicit_counts;
  o.layers_per_chunk = {3, 1};
  const PipelineResult r = simulate_pipeline(w, o);
  // Layers 0-2 on device 0: layer 0 and all six recurrent passes are one step.
  REQUIRE(r.path.size() == 2);
  CHECK(r.path[0].layer_passes == 7);
  CHECK(r.path[0].forward_s == 7);
  CHECK(r.path[0].first_iteration == 0);
  CHECK(r.path[0].last_iteration == 2);
  CHECK(r.path[1].layer_passes == 1);
  CHECK(r.partition.imbalance == Approx(21.0 / 12.0));  // 21 s and 3 s per micro-batch
}

TEST_CASE("a balanced partition spreads a recurrent block over stages", "[pipeline][looped][partition]") {
  // Same model, balanced: cut 2 | 2 (12 s each); passes alternate devices: 6 steps.
  PipelineWorkload w = uniform(4, 1, 2);
  w.loop = PipelineLoop{1, 2, 3};
  const PipelineResult r = simulate_pipeline(w, options(ScheduleKind::one_f_one_b, 2, 4));
  CHECK(r.partition.chunks[0].layer_count == 2);
  CHECK(r.partition.imbalance == 1);
  REQUIRE(r.path.size() == 6);
  const std::vector<std::int64_t> devices = {0, 1, 0, 1, 0, 1}, passes = {2, 1, 1, 1, 1, 2};
  for (std::size_t s = 0; s < 6; ++s) {
    CHECK(r.path[s].device == devices[s]);
    CHECK(r.path[s].layer_passes == passes[s]);
  }
}

namespace {

// The best slowest chunk and least sum of squares over every contiguous cut, by brute force.
std::pair<double, double> brute_force_partition(const std::vector<double>& weight, double first, double last,
                                                int chunks) {
  const int n = static_cast<int>(weight.size());
  std::pair<double, double> best{std::numeric_limits<double>::infinity(), 0};
  std::vector<int> cuts(static_cast<std::size_t>(chunks - 1));
  std::function<void(int, int)> place = [&](int k, int from) {
    if (k == chunks - 1) {
      double worst = 0, squares = 0;
      int start = 0;
      for (int c = 0; c < chunks; ++c) {
        const int end = c + 1 < chunks ? cuts[static_cast<std::size_t>(c)] : n;
        double sum = std::accumulate(weight.begin() + start, weight.begin() + end, 0.0);
        if (c == 0) sum += first;
        if (c + 1 == chunks) sum += last;
        worst = std::max(worst, sum);
        squares += sum * sum;
        start = end;
      }
      if (worst < best.first - 1e-12 || (worst < best.first + 1e-12 && squares < best.second)) best = {worst, squares};
      return;
    }
    for (int c = from; c <= n - (chunks - 1 - k); ++c) {
      cuts[static_cast<std::size_t>(k)] = c;
      place(k + 1, c + 1);
    }
  };
  place(0, 1);
  return best;
}

}  // namespace

TEST_CASE("balanced partition: slowest chunk and spread optimal (brute force)", "[pipeline][partition]") {
  unsigned seed = 7;
  auto next = [&seed] { return (seed = seed * 1103515245u + 12345u) / 65536 % 1000 / 100.0 + 0.1; };
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 3 + trial % 7, chunks = 1 + trial % std::min(n, 4);
    PipelineWorkload w;
    std::vector<double> weight;
    for (int l = 0; l < n; ++l) {
      const double f = next();
      w.layers.push_back({f, 2 * f, 1, 0});
      weight.push_back(3 * f);
    }
    w.embedding = {next(), 0, 0};
    w.head = {next(), next(), 0};
    const auto [best, squares] =
        brute_force_partition(weight, w.embedding.forward_s, w.head.forward_s + w.head.backward_s, chunks);
    const PipelinePartition part = partition_stages(w, options(ScheduleKind::one_f_one_b, chunks, 1));
    double worst = 0, sum_squares = 0;
    for (const auto& c : part.chunks) {
      worst = std::max(worst, c.forward_s + c.backward_s);
      sum_squares += (c.forward_s + c.backward_s) * (c.forward_s + c.backward_s);
    }
    INFO("trial " << trial << " layers " << n << " chunks " << chunks);
    CHECK(worst == Approx(best).epsilon(1e-9));
    CHECK(sum_squares == Approx(squares).epsilon(1e-9));
  }
}

TEST_CASE("uniform and balanced partitions of identical layers", "[pipeline][partition]") {
  // 10 layers on 4 stages: the slowest stage holds 3 layers; the spread is 3, 3, 2, 2 in
  // some order. A heavy head moves layers off the last stage.
  PipelineWorkload w = uniform(10, 1, 2);
  PipelinePartition part = partition_stages(w, options(ScheduleKind::gpipe, 4, 1));
  std::vector<std::int64_t> counts;
  for (const auto& c : part.chunks) counts.push_back(c.layer_count);
  std::sort(counts.begin(), counts.end());
  CHECK(counts == std::vector<std::int64_t>{2, 2, 3, 3});
  CHECK(part.imbalance == Approx(9.0 / 7.5));
  w.head = {3, 3, 0};  // two layers' worth
  part = partition_stages(w, options(ScheduleKind::gpipe, 4, 1));
  CHECK(part.chunks.back().layer_count == 1);
  CHECK(part.chunks.back().head);
  CHECK(part.chunks.front().embedding);
  PipelineOptions u = options(ScheduleKind::gpipe, 5, 1);
  u.partition = PartitionPolicy::uniform;
  for (const auto& c : partition_stages(uniform(10, 1, 2), u).chunks) CHECK(c.layer_count == 2);
}

TEST_CASE("interleaved chunks go round the devices", "[pipeline][partition]") {
  const PipelinePartition part = partition_stages(uniform(12, 1, 2), options(ScheduleKind::interleaved, 3, 1, 2));
  REQUIRE(part.chunks.size() == 6);
  for (std::size_t c = 0; c < 6; ++c) {
    CHECK(part.chunks[c].device == static_cast<std::int64_t>(c % 3));
    CHECK(part.chunks[c].layer_count == 2);
  }
  CHECK(part.device_time_s[0] == 12);
}

TEST_CASE("timeline invariants on irregular workloads", "[pipeline][dag]") {
  // Every task starts after its data (plus transfer) and after the device's previous task;
  // the makespan is at least the busiest device and one micro-batch's path. With blocking
  // sends a sending task runs its step's time plus its send, and its data is there at its end.
  PipelineWorkload w;
  for (int l = 0; l < 9; ++l) w.layers.push_back({0.1 + 0.05 * (l % 4), 0.25 + 0.1 * (l % 3), 1.0 + l, 0.01 * l});
  w.embedding = {0.05, 0.05, 0};
  w.head = {0.3, 0.6, 5};
  w.loop = PipelineLoop{2, 4, 3};
  w.link = {2.0, 0.001};
  for (auto p2p : {P2pSends::async, P2pSends::blocking})
  for (auto schedule : {ScheduleKind::gpipe, ScheduleKind::one_f_one_b, ScheduleKind::interleaved})
    for (int p : {2, 3})
      for (int m : {1, 3, 6})
        for (int group : {0, 1, 2}) {
          if (group > m) continue;
          const int v = schedule == ScheduleKind::interleaved ? 3 : 1;
          PipelineOptions o = options(schedule, p, m, v, group);
          o.p2p = p2p;
          const PipelineResult r = simulate_pipeline(w, o);
          const bool blocking = p2p == P2pSends::blocking;
          INFO(to_string(schedule) << " p=" << p << " m=" << m << " group=" << group << " " << to_string(p2p));
          const auto steps = r.path.size();
          std::vector<const PipelineTask*> index(2 * steps * m);
          for (const auto& t : r.tasks) index[(t.microbatch * 2 + t.backward) * steps + t.step] = &t;
          for (int mb = 0; mb < m; ++mb)
            for (std::size_t s = 0; s < steps; ++s) {
              const PipelineTask& f = *index[(mb * 2) * steps + s];
              const PipelineTask& b = *index[(mb * 2 + 1) * steps + s];
              const double in_f = s > 0 && !blocking ? r.path[s - 1].send_s : 0;
              const double in_b = s + 1 < steps && !blocking ? r.path[s].send_s : 0;
              if (s > 0) CHECK(f.start_s >= index[(mb * 2) * steps + s - 1]->end_s + in_f - 1e-12);
              if (s + 1 < steps) CHECK(b.start_s >= index[(mb * 2 + 1) * steps + s + 1]->end_s + in_b - 1e-12);
              else CHECK(b.start_s >= f.end_s - 1e-12);
              const double out_f = blocking && s + 1 < steps ? r.path[s].send_s : 0;
              const double out_b = blocking && s > 0 ? r.path[s - 1].send_s : 0;
              CHECK(f.end_s - f.start_s == Approx(r.path[s].forward_s + out_f).epsilon(1e-12));
              CHECK(b.end_s - b.start_s == Approx(r.path[s].backward_s + out_b).epsilon(1e-12));
            }
          double busiest = 0, path = 0;
          for (std::size_t i = 1; i < r.tasks.size(); ++i)
            if (r.tasks[i].device == r.tasks[i - 1].device) CHECK(r.tasks[i].start_s >= r.tasks[i - 1].end_s - 1e-12);
          for (const auto& d : r.devices) busiest = std::max(busiest, d.busy_s);
          for (const auto& s : r.path) path += s.forward_s + s.backward_s + 2 * s.send_s;
          CHECK(r.metrics.makespan_s >= busiest - 1e-9);
          CHECK(r.metrics.makespan_s >= path - 1e-9);
          CHECK(r.metrics.limit_overrides == 0);
          for (const auto& d : r.devices) CHECK(d.peak_inflight_microbatches <= m);
        }
}

TEST_CASE("bad pipeline options name their place", "[pipeline][errors]") {
  const PipelineWorkload w = uniform(12, 1, 2);
  auto run = [&](PipelineOptions o) { return pointer_of([&] { simulate_pipeline(w, o); }); };
  CHECK(run(options(ScheduleKind::one_f_one_b, 13, 4)) == "/pipeline/pp");
  CHECK(run(options(ScheduleKind::one_f_one_b, 0, 4)) == "/pipeline/pp");
  CHECK(run(options(ScheduleKind::one_f_one_b, 4, 0)) == "/pipeline/microbatches");
  CHECK(run(options(ScheduleKind::interleaved, 2, 4, 5)) == "/pipeline/virtual_stages");  // 5 does not divide 12
  CHECK(run(options(ScheduleKind::interleaved, 4, 4, 4)) == "/pipeline/virtual_stages");  // 16 chunks > 12 layers
  CHECK(run(options(ScheduleKind::gpipe, 4, 4, 2)) == "/pipeline/virtual_stages");
  CHECK(run(options(ScheduleKind::gpipe, 4, 4, 1, 5)) == "/pipeline/group");
  PipelineOptions u = options(ScheduleKind::gpipe, 5, 4);
  u.partition = PartitionPolicy::uniform;
  CHECK(run(u) == "/pipeline/partition");
  PipelineOptions e = options(ScheduleKind::gpipe, 2, 4);
  e.partition = PartitionPolicy::explicit_counts;
  e.layers_per_chunk = {6, 5};
  CHECK(run(e) == "/pipeline/partition");
  e.layers_per_chunk = {12, 0};
  CHECK(run(e) == "/pipeline/partition/1");
  PipelineWorkload bad = w;
  bad.layers[3].backward_s = -1;
  CHECK(pointer_of([&] { simulate_pipeline(bad, options(ScheduleKind::gpipe, 2, 2)); }) ==
        "/workload/layers/3/backward_s");
  bad = w;
  bad.loop = PipelineLoop{10, 4, 2};
  CHECK(pointer_of([&] { simulate_pipeline(bad, options(ScheduleKind::gpipe, 2, 2)); }) == "/workload/loop");
}

TEST_CASE("pipeline options from JSON", "[pipeline][json]") {
  const PipelineOptions o = parse_pipeline_options(
      Json::parse(R"({"pp": 4, "microbatches": 16, "schedule": "interleaved:3", "partition": [3, 3, 3, 3, 3, 3,
                     3, 3, 3, 3, 3, 3]})"));
  CHECK(o.stages == 4);
  CHECK(o.microbatches == 16);
  CHECK(o.schedule == ScheduleKind::interleaved);
  CHECK(o.virtual_stages == 3);
  CHECK(o.partition == PartitionPolicy::explicit_counts);
  CHECK(o.layers_per_chunk.size() == 12);
  CHECK(parse_pipeline_options(to_json(o)) == o);
  CHECK(parse_pipeline_options(Json::parse(R"({"pp": 2, "microbatches": 4, "schedule": "interleaved"})")).virtual_stages == 2);
  CHECK(parse_pipeline_options(Json::parse(R"({"pp": 2, "microbatches": 4})")).schedule == ScheduleKind::one_f_one_b);
  CHECK(parse_pipeline_options(Json::parse(R"({"pp": 2, "microbatches": 4})")).p2p == P2pSends::async);
  const PipelineOptions blocking = parse_pipeline_options(Json::parse(R"({"pp": 2, "microbatches": 4, "p2p": "blocking"})"));
  CHECK(blocking.p2p == P2pSends::blocking);
  CHECK(parse_pipeline_options(to_json(blocking)) == blocking);
  auto error = [](const char* text) { return pointer_of([&] { parse_pipeline_options(Json::parse(text)); }); };
  CHECK(error(R"({"pp": 2, "microbatches": 4, "schedule": "zb-v"})") == "/pipeline/schedule");
  CHECK(error(R"({"pp": 2, "microbatches": 4, "schedule": "interleaved:0"})") == "/pipeline/schedule");
  CHECK(error(R"({"pp": 2, "microbatches": 4, "schedule": "1f1b:2"})") == "/pipeline/schedule");
  CHECK(error(R"({"pp": 2, "microbatches": 4, "schedule": "interleaved:2", "virtual_stages": 3})") ==
        "/pipeline/virtual_stages");
  CHECK(error(R"({"pp": 2, "microbatches": 0})") == "/pipeline/microbatches");
  CHECK(error(R"({"pp": 2})") == "/pipeline/microbatches");
  CHECK(error(R"({"pp": 2, "microbatches": 4, "micro_batches": 4})") == "/pipeline/micro_batches");
  CHECK(error(R"({"pp": 2, "microbatches": 4, "partition": "even"})") == "/pipeline/partition");
  CHECK(error(R"({"pp": 2, "microbatches": 4, "p2p": "sync"})") == "/pipeline/p2p");
  CHECK(error(R"({"pp": 2, "microbatches": 4, "partition": [1, -1]})") == "/pipeline/partition/1");
}

TEST_CASE("result JSON carries the timeline and the sweep row its columns", "[pipeline][json]") {
  const PipelineResult r = simulate_pipeline(uniform(4, 1, 2), options(ScheduleKind::one_f_one_b, 2, 3));
  const Json j = to_json(r, true);
  CHECK(j["timeline"].size() == r.tasks.size());
  CHECK(j["timeline"][0]["pass"] == "forward");
  CHECK(j["metrics"]["makespan_s"].get<double>() == r.metrics.makespan_s);
  CHECK(j["partition"]["chunks"].size() == 2);
  CHECK(to_json(r, false).count("timeline") == 0);
  std::vector<double> row;
  pipeline_metric_row(r.metrics, row);
  REQUIRE(row.size() == pipeline_metric_columns().size());
  CHECK(row[0] == r.metrics.makespan_s);
  CHECK(pipeline_metric_columns()[1] == "pipeline_bubble_fraction");
}

TEST_CASE("text Gantt chart of GPipe on two stages", "[pipeline][gantt]") {
  // Stage forward 1 s, backward 2 s; makespan (2 + 2 - 1) * 3 = 9 s, one column per second.
  const PipelineResult r = simulate_pipeline(uniform(2, 1, 2), options(ScheduleKind::gpipe, 2, 2));
  CHECK(pipeline_gantt(r, 9) ==
        "dev 0 |ab...AABB|\n"
        "dev 1 |.abAABB..|\n"
        "       0 s   9 s\n");
  CHECK(pipeline_gantt(r, 3).empty());  // 4 tasks per device do not fit 3 columns
}
