// Running a sweep: every core evaluates points (std::thread workers taking chunks of
// point indices from one atomic counter), finished rows go to the journal as they come,
// and the outputs are written once, atomically, at the end.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "hdlab/model/error.hpp"
#include "hdlab/simulator/resources.hpp"
#include "hdlab/simulator/sweep.hpp"
#include "sweep_folder.hpp"
#include "sweep_internal.hpp"
#include "sweep_journal.hpp"

namespace hdlab::simulator {

using namespace sweep_detail;
using Clock = std::chrono::steady_clock;

namespace sweep_detail {
// sweep_output.cpp
std::vector<std::string> write_outputs(const SweepSpec& spec, const SweepResults& r, const std::string& dir,
                                       const SweepOptions& o);
void write_summary(const SweepSummary& s, const std::string& dir);
}  // namespace sweep_detail

namespace {

// Journal lines a worker holds before appending them: bounded in bytes and in age, so a
// kill loses at most about this much finished work (it is then recomputed).
constexpr std::size_t flush_bytes = 1 << 18;
constexpr auto flush_age = std::chrono::milliseconds(100);
constexpr auto progress_period = std::chrono::milliseconds(100);

struct SharedRun {
  const SweepSpec& spec;
  SweepResults& results;
  SweepJournal& journal;
  PointEvaluator& evaluator;
  std::chrono::microseconds point_delay;
  std::uint64_t chunk = 1;
  std::atomic<std::uint64_t> next{0};      // first point index not yet handed out
  std::atomic<std::uint64_t> finished{0};  // points evaluated by this run
  std::atomic<bool> stop{false};           // a worker failed (journal write): everyone stops
};

// One worker: evaluates chunks of points until none are left. Failed points are rows
// with an error; only a journal failure (disk full...) ends the run, as an exception.
void work(SharedRun& run, std::vector<std::pair<std::uint64_t, std::string>>& failures) {
  const std::size_t k = run.spec.stored_columns.size();
  const std::uint64_t n = run.spec.point_count;
  PointEvaluator::Worker w;
  std::string lines, error;
  auto last_flush = Clock::now();
  while (!run.stop.load(std::memory_order_relaxed)) {
    const std::uint64_t begin = run.next.fetch_add(run.chunk, std::memory_order_relaxed);
    if (begin >= n) break;
    const std::uint64_t end = std::min(n, begin + run.chunk);
    std::uint64_t evaluated = 0;
    for (std::uint64_t p = begin; p < end; ++p) {
      if (run.results.state[p] != PointState::pending) continue;
      double* row = &run.results.values[p * k];
      if (run.evaluator.evaluate(w, p, row, error)) {
        run.results.state[p] = PointState::done;
        SweepJournal::add_row(lines, p, row, k);
      } else {
        run.results.state[p] = PointState::failed;
        failures.emplace_back(p, error);
        SweepJournal::add_failure(lines, p, error);
      }
      ++evaluated;
      if (run.point_delay.count() > 0) std::this_thread::sleep_for(run.point_delay);
    }
    run.finished.fetch_add(evaluated, std::memory_order_relaxed);
    if (lines.size() >= flush_bytes || Clock::now() - last_flush >= flush_age) {
      run.journal.append(lines);
      lines.clear();
      last_flush = Clock::now();
    }
  }
  run.journal.append(lines);
}

void mark_excluded(const SweepSpec& spec, SweepResults& r, SweepSummary& s) {
  if (spec.exclude.empty()) return;
  std::vector<std::size_t> values;
  for (std::uint64_t p = 0; p < spec.point_count; ++p) {
    spec.point_values(p, values);
    if (spec.excluded(values)) {
      r.state[p] = PointState::excluded;
      ++s.excluded;
    }
  }
}

unsigned thread_count(const SweepOptions& o, std::uint64_t todo) {
  unsigned t = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(t, todo)));
}

// The worker threads of one run. Whatever leaves evaluate_points early (a thread that
// cannot start, a progress callback that throws), the workers are told to stop and
// joined first: a std::thread destroyed while joinable would terminate the process.
class WorkerPool {
 public:
  explicit WorkerPool(SharedRun& run) : run_(run) {}
  ~WorkerPool() {
    run_.stop = true;
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  template <class Body>
  void start(unsigned count, Body body) {
    threads_.reserve(count);
    for (unsigned t = 0; t < count; ++t) {
      try {
        threads_.emplace_back(body, t);
      } catch (const std::system_error& e) {
        throw std::runtime_error("cannot start sweep worker thread " + std::to_string(t + 1) + " of " +
                                 std::to_string(count) + ": " + e.what());
      }
    }
  }
  void join() {
    for (std::thread& t : threads_) t.join();
  }

 private:
  SharedRun& run_;
  std::vector<std::thread> threads_;
};

// Runs the workers; the calling thread reports progress until they are done.
void evaluate_points(SharedRun& run, unsigned threads, SweepSummary& summary, const SweepOptions& o,
                     Clock::time_point start) {
  std::vector<std::vector<std::pair<std::uint64_t, std::string>>> failures(threads);
  std::vector<std::exception_ptr> crashed(threads);
  std::mutex m;
  std::condition_variable cv;
  unsigned exited = 0;
  const std::uint64_t total = run.spec.point_count - summary.excluded;
  auto report = [&] {
    if (o.on_progress)
      o.on_progress({summary.resumed + run.finished.load(), total, summary.resumed,
                     std::chrono::duration<double>(Clock::now() - start).count()});
  };
  {
    WorkerPool pool(run);
    pool.start(threads, [&](unsigned t) {
      try {
        work(run, failures[t]);
      } catch (...) {  // a journal write that failed, or memory: the run stops, the caller rethrows
        crashed[t] = std::current_exception();
        run.stop = true;
      }
      std::lock_guard<std::mutex> lock(m);
      ++exited;
      cv.notify_all();
    });
    {
      std::unique_lock<std::mutex> lock(m);
      while (!cv.wait_for(lock, progress_period, [&] { return exited == threads; })) {
        lock.unlock();
        report();
        lock.lock();
      }
    }
    pool.join();
  }
  for (const std::exception_ptr& e : crashed)
    if (e) std::rethrow_exception(e);
  report();
  summary.evaluated = run.finished.load();
  for (auto& f : failures)
    for (auto& e : f) run.results.errors.push_back(std::move(e));
  std::sort(run.results.errors.begin(), run.results.errors.end());
}

}  // namespace

SweepOutcome run_sweep(const SweepSpec& spec, const std::string& dir, const SweepOptions& o) {
  const auto start = Clock::now();
  const std::size_t k = spec.stored_columns.size();
  // The results are held until the outputs are written: refused up front when they
  // cannot fit, rather than killed half-way.
  require_memory(static_cast<double>(spec.point_count) * (8.0 * static_cast<double>(k) + 1), "/axes",
                 std::to_string(spec.point_count) + " points x " + std::to_string(k) +
                     (k == 1 ? " stored column" : " stored columns"),
                 "split the sweep or keep fewer columns");
  const SweepFolder folder(dir, o.force);

  SweepOutcome out;
  SweepSummary& s = out.summary;
  SweepResults& r = out.results;
  s.name = spec.name;
  s.points = spec.point_count;
  r.state.assign(spec.point_count, PointState::pending);
  r.values.assign(spec.point_count * k, std::numeric_limits<double>::quiet_NaN());
  mark_excluded(spec, r, s);

  SweepJournal journal(spec, dir, o.fresh, o.engine, r);
  s.resumed = journal.resumed();
  s.dropped_journal_lines = journal.dropped();
  const std::uint64_t todo = spec.point_count - s.excluded - s.resumed;
  s.threads = thread_count(o, todo);
  if (todo > 0) {
    PointEvaluator evaluator(spec);
    SharedRun run{spec, r, journal, evaluator, o.point_delay};
    // Small chunks keep the threads' shares even; 256 points amortise the counter.
    run.chunk = std::clamp<std::uint64_t>(spec.point_count / (std::uint64_t{s.threads} * 64), 1, 256);
    evaluate_points(run, s.threads, s, o, start);
  } else if (o.on_progress) {
    o.on_progress({s.resumed, spec.point_count - s.excluded, s.resumed, 0.0});
  }
  s.failed = static_cast<std::uint64_t>(std::count(r.state.begin(), r.state.end(), PointState::failed));
  s.files = write_outputs(spec, r, dir, o);
  s.files.push_back((std::filesystem::path(dir) / "summary.json").string());
  s.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  write_summary(s, dir);
  return out;
}

}  // namespace hdlab::simulator
