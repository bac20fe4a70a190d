// ZB-H1 (zero-bubble pipeline, backward split into B and W): schedules drawn by hand on
// uniform stages, the closed form against 1F1B, memory held until W, a zero W reducing to
// 1F1B, errors, JSON and the Gantt.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
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

namespace {

// pipeline_fixtures::uniform's layers, whose backward b holds w [s] of weight gradients.
PipelineWorkload uniform(int layers, double f, double b, double w, double send = 0) {
  PipelineWorkload wl = pipeline_fixtures::uniform(layers, f, b, send);
  for (PipelineLayer& l : wl.layers) l.backward_weight_s = w;
  return wl;
}

// One device's tasks in execution order as (pass, micro-batch, start): pass 'F', 'B' or 'W'.
using Slot = std::tuple<char, int, double>;
std::vector<Slot> device_order(const PipelineResult& r, int device) {
  std::vector<Slot> out;
  for (const auto& t : r.tasks)
    if (t.device == device) out.emplace_back(t.weight ? 'W' : t.backward ? 'B' : 'F', t.microbatch, t.start_s);
  return out;
}

// The same with the path step: (pass, micro-batch, step, start).
using StepSlot = std::tuple<char, int, int, double>;
std::vector<StepSlot> device_steps(const PipelineResult& r, int device) {
  std::vector<StepSlot> out;
  for (const auto& t : r.tasks)
    if (t.device == device) out.emplace_back(t.weight ? 'W' : t.backward ? 'B' : 'F', t.microbatch, t.step, t.start_s);
  return out;
}

// (device, micro-batch, step, backward, start, end) of every forward and B task, sorted.
using TaskRow = std::tuple<int, int, int, bool, double, double>;
std::vector<TaskRow> forward_and_b_rows(const PipelineResult& r) {
  std::vector<TaskRow> out;
  for (const auto& t : r.tasks)
    if (!t.weight) out.emplace_back(t.device, t.microbatch, t.step, t.backward, t.start_s, t.end_s);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("ZB-H1 with F = B = W = 1, p = 4, m = 8, drawn by hand", "[pipeline][zb-h1][closed-form]") {
  // One layer per stage: forward 1 s, backward 2 s of which W 1 s; transfers take no time.
  // 1F1B: (m + p - 1)(F + B + W) = 11 x 3 = 33 s. ZB-H1: m(F + B + W) + (p - 1)(F + B - W)
  // = 24 + 3 = 27 s: device d ends its last B at 26 - d s with d + 1 W's left (the d it
  // may defer and the last one), so every device ends at 27 s; the last device starts at
  // 3 s and never idles again.
  const int p = 4, m = 8;
  const PipelineWorkload w = uniform(p, 1, 2, 1);
  const PipelineResult one = simulate_pipeline(w, options(ScheduleKind::one_f_one_b, p, m));
  const PipelineResult zb = simulate_pipeline(w, options(ScheduleKind::zb_h1, p, m));
  CHECK(one.metrics.makespan_s == 33);
  CHECK(zb.metrics.makespan_s == 27);
  CHECK(zb.metrics.bubble_fraction == Approx(1 - 24.0 / 27));  // 4 x 24 s busy of 4 x 27 s
  CHECK(zb.metrics.tasks == 3 * p * m);
  CHECK(zb.metrics.limit_overrides == 0);
  CHECK(zb.metrics.backward_weight_s_per_microbatch == p);  // 1 s on each stage

  // The last device (w = 0, u = 3): one F, then F and B alternately while it defers W0-W2;
  // from B3 on W, F, B per micro-batch; the four W's left fill its cool-down.
  const std::vector<Slot> last = {
      {'F', 0, 3},  {'B', 0, 4},  {'F', 1, 5},  {'B', 1, 6},  {'F', 2, 7},  {'B', 2, 8},  {'F', 3, 9},  {'B', 3, 10},
      {'W', 0, 11}, {'F', 4, 12}, {'B', 4, 13}, {'W', 1, 14}, {'F', 5, 15}, {'B', 5, 16}, {'W', 2, 17}, {'F', 6, 18},
      {'B', 6, 19}, {'W', 3, 20}, {'F', 7, 21}, {'B', 7, 22}, {'W', 4, 23}, {'W', 5, 24}, {'W', 6, 25}, {'W', 7, 26}};
  CHECK(device_order(zb, 3) == last);
  // The first device (w = 3, u = 0): 1F1B's warm-up of four forwards, idle 4-7 s until B0
  // comes back, then B, W, F per micro-batch (a W before the next forward may start), and
  // after its last forward each B as it comes back, then its W.
  const std::vector<Slot> first = {
      {'F', 0, 0},  {'F', 1, 1},  {'F', 2, 2},  {'F', 3, 3},  {'B', 0, 7},  {'W', 0, 8},  {'F', 4, 9},  {'B', 1, 10},
      {'W', 1, 11}, {'F', 5, 12}, {'B', 2, 13}, {'W', 2, 14}, {'F', 6, 15}, {'B', 3, 16}, {'W', 3, 17}, {'F', 7, 18},
      {'B', 4, 19}, {'W', 4, 20}, {'B', 5, 21}, {'W', 5, 22}, {'B', 6, 23}, {'W', 6, 24}, {'B', 7, 25}, {'W', 7, 26}};
  CHECK(device_order(zb, 0) == first);
  for (int d = 0; d < p; ++d) {
    CHECK(zb.devices[d].warmup_forwards == p - 1 - d);  // 1F1B's
    CHECK(zb.devices[d].deferred_weights == d);
    CHECK(zb.devices[d].busy_s == m * 3);
  }
}

TEST_CASE("ZB-H1 on uniform stages meets the closed form", "[pipeline][zb-h1][closed-form]") {
  // m >= p: m(F + B + W) + (p - 1) max(F, B, F + B - W). The paper's (p - 1)(F + B - W)
  // where W <= F, B; a longer W cannot shorten the bubble below (p - 1) F, the last
  // stage's start, nor below (p - 1) B. W = 0 gives 1F1B's (p - 1)(F + B). Two layers per
  // stage.
  for (double b : {0.25, 1.0, 2.0})
    for (double w : {0.0, 0.25, 1.0, 1.5})
      for (int p : {1, 2, 3, 4, 8})
        for (int m : {p, p + 1, 2 * p, 4 * p}) {
          const PipelineResult r = simulate_pipeline(uniform(2 * p, 0.5, (b + w) / 2, w / 2),
                                                     options(ScheduleKind::zb_h1, p, m));
          INFO("B=" << b << " W=" << w << " p=" << p << " m=" << m);
          const double bubble = (p - 1) * std::max({1.0, b, 1 + b - w});
          CHECK(r.metrics.makespan_s == Approx(m * (1 + b + w) + bubble).epsilon(1e-12));
          CHECK(r.metrics.peak_activation_bytes == 2 * p);  // 1F1B's: p micro-batches of a 2-byte stage
          CHECK(r.metrics.limit_overrides == 0);
        }
}

TEST_CASE("ZB-H1 holds 1F1B's peak: p micro-batches, until each one's W", "[pipeline][zb-h1][memory]") {
  // 1F1B holds p - d micro-batches on device d, p = 4 on the first. ZB-H1 counts a step
  // held until its W ends: device d holds its 1F1B share plus the d W's it defers, 4 on
  // every device (the first at F3, 3 s; the last at F3, 9 s, with W0-W2 deferred), never
  // more: the peak over devices is 1F1B's. 1 byte per stage pass.
  const int p = 4, m = 8;
  const PipelineWorkload w = uniform(p, 1, 2, 1);
  const PipelineResult one = simulate_pipeline(w, options(ScheduleKind::one_f_one_b, p, m));
  const PipelineResult zb = simulate_pipeline(w, options(ScheduleKind::zb_h1, p, m));
  CHECK(one.metrics.peak_activation_bytes == p);
  CHECK(zb.metrics.peak_activation_bytes == one.metrics.peak_activation_bytes);
  for (int d = 0; d < p; ++d) {
    CHECK(one.devices[d].peak_inflight_microbatches == p - d);
    CHECK(zb.devices[d].peak_inflight_microbatches == p);
    CHECK(zb.devices[d].peak_activation_bytes == p);
  }
}

TEST_CASE("ZB-H1 with no weight-gradient time is 1F1B", "[pipeline][zb-h1]") {
  // W's of 0 s run as their B ends: every forward and B starts and ends as 1F1B's, on
  // uniform stages with transfers and on an irregular looped workload.
  PipelineWorkload looped;
  for (int l = 0; l < 9; ++l) looped.layers.push_back({0.1 + 0.05 * (l % 4), 0.25 + 0.1 * (l % 3), 1.0 + l, 0.01 * l});
  looped.embedding = {0.05, 0.05, 0};
  looped.head = {0.3, 0.6, 5};
  looped.loop = PipelineLoop{2, 4, 3};
  looped.link = {2.0, 0.001};
  for (const PipelineWorkload& w : {uniform(8, 1, 2, 0, 0.25), looped})
    for (int p : {2, 4})
      for (int m : {1, 3, 8}) {
        INFO("p=" << p << " m=" << m << " loop " << w.loop.has_value());
        const PipelineResult one = simulate_pipeline(w, options(ScheduleKind::one_f_one_b, p, m));
        const PipelineResult zb = simulate_pipeline(w, options(ScheduleKind::zb_h1, p, m));
        CHECK(forward_and_b_rows(zb) == forward_and_b_rows(one));
        CHECK(zb.metrics.makespan_s == one.metrics.makespan_s);
        CHECK(zb.metrics.peak_activation_bytes == one.metrics.peak_activation_bytes);
        CHECK(zb.metrics.limit_overrides == one.metrics.limit_overrides);
        CHECK(zb.tasks.size() == one.tasks.size() / 2 * 3);
      }
}

TEST_CASE("looped ZB-H1 worked out by hand", "[pipeline][zb-h1][looped]") {
  // Two layers, both recurrent, K = 2, on two devices (steps 0-3 alternate dev0, dev1);
  // per pass forward 1 s, B 1 s, W 1 s. Warm-ups as looped 1F1B's, 4 and 2; device 1
  // may defer 4 - 2 = 2 W's. Device 1 holds three forwards at 4 s, runs B(0, step 3) and,
  // with W(0, 3) deferred, F(1, 3) at 5 s; device 0 fills the wait for B(1, step 2) with
  // W(0, 2). Once the last B's are through, each device's deferred W's end at 13 s,
  // against 1F1B's 15 s (the looped 1F1B case in test_pipeline.cpp).
  PipelineWorkload w = uniform(2, 1, 2, 1);
  w.loop = PipelineLoop{0, 2, 2};
  const PipelineResult r = simulate_pipeline(w, options(ScheduleKind::zb_h1, 2, 2));
  CHECK(r.devices[0].deferred_weights == 0);
  CHECK(r.devices[1].deferred_weights == 2);
  const std::vector<StepSlot> dev0 = {{'F', 0, 0, 0},  {'F', 1, 0, 1},  {'F', 0, 2, 2},  {'F', 1, 2, 3},
                                      {'B', 0, 2, 5},  {'W', 0, 2, 6},  {'B', 1, 2, 7},  {'B', 0, 0, 8},
                                      {'B', 1, 0, 9},  {'W', 1, 2, 10}, {'W', 0, 0, 11}, {'W', 1, 0, 12}};
  const std::vector<StepSlot> dev1 = {{'F', 0, 1, 1},  {'F', 1, 1, 2},  {'F', 0, 3, 3},  {'B', 0, 3, 4},
                                      {'F', 1, 3, 5},  {'B', 1, 3, 6},  {'B', 0, 1, 7},  {'B', 1, 1, 8},
                                      {'W', 0, 3, 9},  {'W', 1, 3, 10}, {'W', 0, 1, 11}, {'W', 1, 1, 12}};
  CHECK(device_steps(r, 0) == dev0);
  CHECK(device_steps(r, 1) == dev1);
  CHECK(r.metrics.makespan_s == 13);
  // Device 1 holds F(0, 1), F(1, 1), F(0, 3) and F(1, 3) at 5 s, B(0, 3) done but not its
  // W: 4 passes, as many as device 0 (and 1F1B's peak).
  CHECK(r.devices[1].peak_activation_bytes == 4);
  CHECK(r.metrics.peak_activation_bytes == 4);
}

TEST_CASE("ZB-H1 timelines keep every dependency, looped paths included", "[pipeline][zb-h1][dag]") {
  // Each W after its own B on the same device; forwards and B's as in any schedule; w + u
  // the same on every device, and no device holds more than w + u + 1 steps' activations
  // (1 byte per layer pass: at most the largest step's passes each).
  PipelineWorkload w;
  for (int l = 0; l < 9; ++l) {
    PipelineLayer layer{0.1 + 0.05 * (l % 4), 0.25 + 0.1 * (l % 3), 1.0, 0.01 * l};
    layer.backward_weight_s = 0.4 * layer.backward_s;
    w.layers.push_back(layer);
  }
  w.embedding = {0.05, 0.05, 0};
  w.head = {0.3, 0.6, 0};
  w.head.backward_weight_s = 0.3;
  w.link = {2.0, 0.001};
  for (bool loop : {false, true})
    for (int p : {2, 3})
      for (int m : {1, 3, 6}) {
        if (loop) w.loop = PipelineLoop{2, 4, 3};
        else w.loop.reset();
        const PipelineResult r = simulate_pipeline(w, options(ScheduleKind::zb_h1, p, m));
        INFO("loop " << loop << " p=" << p << " m=" << m);
        const auto steps = r.path.size();
        std::vector<const PipelineTask*> index(3 * steps * m);
        for (const auto& t : r.tasks) index[(t.microbatch * 3 + t.backward + t.weight) * steps + t.step] = &t;
        REQUIRE(std::none_of(index.begin(), index.end(), [](const PipelineTask* t) { return t == nullptr; }));
        for (int mb = 0; mb < m; ++mb)
          for (std::size_t s = 0; s < steps; ++s) {
            const PipelineTask& f = *index[(mb * 3) * steps + s];
            const PipelineTask& b = *index[(mb * 3 + 1) * steps + s];
            const PipelineTask& wt = *index[(mb * 3 + 2) * steps + s];
            CHECK(wt.device == b.device);
            CHECK(wt.start_s >= b.end_s - 1e-12);
            CHECK(b.end_s - b.start_s == Approx(r.path[s].backward_s - r.path[s].backward_weight_s));
            CHECK(wt.end_s - wt.start_s == Approx(r.path[s].backward_weight_s));
            if (s > 0) CHECK(f.start_s >= index[(mb * 3) * steps + s - 1]->end_s + r.path[s - 1].send_s - 1e-12);
            if (s + 1 < steps) CHECK(b.start_s >= index[(mb * 3 + 1) * steps + s + 1]->end_s + r.path[s].send_s - 1e-12);
            else CHECK(b.start_s >= f.end_s - 1e-12);
          }
        double busiest = 0, largest_step = 0;
        for (const auto& s : r.path) largest_step = std::max(largest_step, s.activation_bytes);
        for (std::size_t i = 1; i < r.tasks.size(); ++i)
          if (r.tasks[i].device == r.tasks[i - 1].device) CHECK(r.tasks[i].start_s >= r.tasks[i - 1].end_s - 1e-12);
        for (const auto& d : r.devices) {
          busiest = std::max(busiest, d.busy_s);
          CHECK(d.warmup_forwards + d.deferred_weights == r.devices[0].warmup_forwards + r.devices[0].deferred_weights);
          CHECK(d.peak_activation_bytes <= (d.warmup_forwards + d.deferred_weights + 1) * largest_step);
        }
        CHECK(r.metrics.makespan_s >= busiest - 1e-9);
        CHECK(r.metrics.limit_overrides == 0);
      }
}

TEST_CASE("zb-h1 by name, refused with virtual stages or a W longer than its backward", "[pipeline][zb-h1][errors]") {
  CHECK(std::string(to_string(ScheduleKind::zb_h1)) == "zb-h1");
  const PipelineOptions o = parse_pipeline_options(Json::parse(R"({"pp": 4, "microbatches": 8, "schedule": "zb-h1"})"));
  CHECK(o.schedule == ScheduleKind::zb_h1);
  CHECK(o.virtual_stages == 1);
  CHECK(parse_pipeline_options(to_json(o)) == o);
  CHECK(to_json(o)["schedule"] == "zb-h1");
  auto error = [](const char* text) { return pointer_of([&] { parse_pipeline_options(Json::parse(text)); }); };
  CHECK(error(R"({"pp": 4, "microbatches": 8, "schedule": "zb-h1:2"})") == "/pipeline/schedule");
  CHECK(error(R"({"pp": 4, "microbatches": 8, "schedule": "zb-h1", "virtual_stages": 2})") ==
        "/pipeline/virtual_stages");
  const PipelineWorkload w = uniform(8, 1, 2, 1);
  CHECK(pointer_of([&] { simulate_pipeline(w, options(ScheduleKind::zb_h1, 4, 8, 2)); }) == "/pipeline/virtual_stages");
  PipelineWorkload bad = w;
  bad.layers[5].backward_weight_s = 2.5;
  CHECK(pointer_of([&] { simulate_pipeline(bad, options(ScheduleKind::zb_h1, 4, 8)); }) ==
        "/workload/layers/5/backward_weight_s");
  bad = w;
  bad.head.backward_weight_s = -1;
  CHECK(pointer_of([&] { simulate_pipeline(bad, options(ScheduleKind::zb_h1, 4, 8)); }) ==
        "/workload/head/backward_weight_s");
}

TEST_CASE("ZB-H1 in JSON and the text Gantt chart", "[pipeline][zb-h1][json][gantt]") {
  // p = 2, m = 2, F = B = W = 1 s: device 1 (u = 1) defers W0 behind F1 and B1; device 0
  // (u = 0) runs W0 while B1 is on its way back. 7 s = 2 x 3 + 1 x (1 + 1 - 1), against
  // 1F1B's (2 + 1) x 3 = 9 s.
  const PipelineResult r = simulate_pipeline(uniform(2, 1, 2, 1), options(ScheduleKind::zb_h1, 2, 2));
  CHECK(r.metrics.makespan_s == 7);
  CHECK(pipeline_gantt(r, 7) ==
        "dev 0 |ab.A0B1|\n"
        "dev 1 |.aAbB01|\n"
        "       0 s 7 s\n");
  const Json j = to_json(r, true);
  int weights = 0;
  for (const Json& t : j["timeline"]) weights += t["pass"] == "weight";
  CHECK(weights == 4);
  CHECK(j["options"]["schedule"] == "zb-h1");
  CHECK(j["path"][0]["backward_weight_s"] == 1.0);
  CHECK(j["devices"][1]["deferred_weights"] == 1);
  CHECK(j["metrics"]["backward_weight_s_per_microbatch"] == 2.0);
}
