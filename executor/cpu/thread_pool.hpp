#pragma once
// A fixed pool of worker threads for the CPU backend's own kernels.
//
// Why our own pool rather than OpenMP: the thread count is a constructor argument of the
// backend (libraries never read OMP_NUM_THREADS or any environment), workers sleep on a
// condition variable between ops instead of spinning (libgomp spins by default, which
// on a small machine steals cycles from OpenBLAS's own threads during the GEMMs that sit
// between our ops), and it needs nothing beyond the standard library, so the sanitizer
// build sees every synchronisation.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hdlab::executor::cpu {

class ThreadPool {
 public:
  // threads >= 1 in total: threads-1 workers plus the calling thread.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs body(begin, end) over [0, n) in chunks of `grain` items, handed out one chunk
  // at a time to whichever thread is free (items of unequal cost balance themselves).
  // Returns when all chunks are done; rethrows the first exception a chunk threw.
  void parallel_for(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& body);

 private:
  struct Job {
    const std::function<void(std::int64_t, std::int64_t)>* body = nullptr;
    std::int64_t n = 0;
    std::int64_t grain = 1;
  };
  void worker_loop();
  void run_chunks();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Job job_;
  std::uint64_t generation_ = 0;  // one per parallel_for
  int finished_ = 0;              // workers done with the current generation
  bool stop_ = false;
  std::int64_t next_chunk_ = 0;   // guarded by mutex_ (chunks are coarse)
  std::exception_ptr error_;
};

}  // namespace hdlab::executor::cpu
