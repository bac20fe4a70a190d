#pragma once
// Timing for the executor benchmarks: warm up once, repeat until a minimum time has
// passed, report the median repetition. Medians rather than means because this machine
// is shared; ratios are taken between medians measured back to back.
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "hdlab/executor/backend.hpp"

namespace hdlab::bench {

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  int reps = 0;
};

// `run` issues the work once; `timer` measures it (backend events, or null for a host clock).
inline Timing measure(const std::function<void()>& run, executor::EventTimer* timer, double min_total_ms,
                      int min_reps = 3, int max_reps = 200) {
  auto time_once = [&] {
    if (timer) {
      timer->start();
      run();
      timer->stop();
      return timer->elapsed_ms();
    }
    const auto t0 = std::chrono::steady_clock::now();
    run();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  time_once();  // warm-up: caches, page faults, lazy workspaces
  std::vector<double> samples;
  double total = 0;
  while (static_cast<int>(samples.size()) < max_reps &&
         (static_cast<int>(samples.size()) < min_reps || total < min_total_ms)) {
    samples.push_back(time_once());
    total += samples.back();
  }
  std::sort(samples.begin(), samples.end());
  return Timing{samples[samples.size() / 2], samples.front(), static_cast<int>(samples.size())};
}

}  // namespace hdlab::bench
